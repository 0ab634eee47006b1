// Package testenv runs a real Kubernetes control plane for wasmsched's tests
// and demo: etcd v3.6.16 and kube-apiserver v1.37.1 (serving
// scheduling.k8s.io/v1beta1 Workload and PodGroup), and KWOK v0.8.0 fake
// kubelets on demand, all built from the Go module proxy by
// hack/cluster.sh and listening on 127.0.0.1 only.
//
// # From a test
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Shared(t)  // one apiserver per test binary
//		ns := env.Namespace(t)    // isolation: deleted with its content at cleanup
//		...
//	}
//
//	func TestWithNodes(t *testing.T) {
//		env := testenv.Start(t)   // an apiserver of its own: Nodes are private
//		env.StartKWOK(ctx, testenv.KWOKOptions{})
//		env.CreateFakeNodes(ctx, 100, testenv.NodeSpec{CPU: "8", Memory: "32Gi"})
//		...
//	}
//
// # From a program (the demo)
//
//	env, err := testenv.New(ctx, testenv.Options{})
//	defer env.Stop()
//	// env.Kubeconfig() is an admin kubeconfig for the scheduler and kubectl.
//
// # Sharing and isolation
//
// A kube-apiserver takes seconds to start (on 2 cores about 2-4 s, most of
// it its post-start hooks: RBAC bootstrap, priority classes, OpenAPI), while
// a namespace costs milliseconds. So there are three levels:
//
//   - Shared: one kube-apiserver for the test binary, started by the first
//     test that asks and stopped by Main. Tests isolate with Namespace.
//     Cluster-scoped objects (Nodes, ClusterRoles) are seen by every test,
//     and a scheduler under test watches every namespace: tests that create
//     Nodes or run a scheduler want Start.
//   - Start: a kube-apiserver of the test's own on the binary's one etcd,
//     under its own --etcd-prefix, so everything, Nodes included, is private.
//     It costs a kube-apiserver start and stop per test; sharing etcd saves
//     etcd's start and memory.
//   - New: the non-testing entry point, with a private etcd unless
//     Options.Etcd shares one.
//
// # What does not run
//
// No kubelet or kube-scheduler, and no kube-controller-manager unless a
// test starts one (StartControllerManager: PV binder, ephemeral volumes,
// resource claims, garbage collector, PodGroup protection...). Without it the
// ServiceAccount and TaintNodesByCondition admission plugins are off (they
// stay off with it too), DeleteNamespace does the namespace controller's
// work, pods bound to non-KWOK nodes need grace period 0 to go away, and
// PodGroups keep PodGroupProtectionFinalizer until ClearPodGroupFinalizers
// (or DeleteNamespace) removes it. No storage driver runs either:
// StartProvisioner runs, in the test process, a provisioner of local
// volumes for StorageClasses of provisioner ProvisionerName, standing in
// for a CSI external-provisioner.
//
// # Notes
//
// Every child starts through StartProcess: etcd, kube-apiserver, KWOK and
// kube-controller-manager here, upstream kube-scheduler
// (StartKubeScheduler) and wasmsched (StartWasmsched) for the e2e tests,
// the demo and e2e/perf alike.
// Children run in their own process group with Pdeathsig=SIGKILL (forked
// from one locked OS thread), so they die with the test binary even when it
// panics or times out before any cleanup runs. Their logs are files in
// Env.Dir; a failing test gets their tails in its output. The binaries are
// built, never skipped, when missing (also under CI=true); a cold build
// takes about 10 minutes on 2 cores and happens once per machine. Main builds
// before the -timeout clock starts; a package without Main builds inside
// its first test, so on a cold machine run hack/cluster.sh build first.
// kube-controller-manager is the exception: `make cluster` builds it, and
// outside CI StartControllerManager builds it when missing, while under
// CI=true its absence is an error (ControllerManagerBinary).
package testenv
