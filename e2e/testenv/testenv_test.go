package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func makePod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			SchedulerName: "wasmsched",
			Containers: []corev1.Container{{
				Name:  "c",
				Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"),
				}},
			}},
		},
	}
}

func bind(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, pod, node string) {
	t.Helper()
	err := c.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bind %s/%s to %s: %v", ns, pod, node, err)
	}
}

// TestBindAndPodGroup: a Node, a Pod bound through pods/binding, and a
// PodGroup (scheduling.k8s.io/v1beta1) with minCount, on a control
// plane of its own (the test creates a Node).
func TestBindAndPodGroup(t *testing.T) {
	env := testenv.Start(t)
	ctx := ctxFor(t)
	c := env.Client
	ns := env.Namespace(t)

	nodes, err := env.CreateFakeNodes(ctx, 1, testenv.NodeSpec{CPU: "4", Memory: "8Gi"})
	if err != nil {
		t.Fatal(err)
	}
	node := nodes[0].Name
	if got := nodes[0].Status.Allocatable.Cpu().String(); got != "4" {
		t.Errorf("node allocatable cpu = %s, want 4 (status is kept on create)", got)
	}

	pg, err := env.CreatePodGroup(ctx, ns, "gang", 3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.SchedulingV1beta1().PodGroups(ns).Get(ctx, "gang", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Spec.SchedulingPolicy.Gang; g == nil || g.MinCount != 3 {
		t.Errorf("PodGroup read back: gang policy = %+v, want minCount 3", g)
	}
	if !slices.Contains(pg.Finalizers, testenv.PodGroupProtectionFinalizer) {
		t.Errorf("PodGroup finalizers = %v; v1.37.1's PodGroupProtection admission adds %s",
			pg.Finalizers, testenv.PodGroupProtectionFinalizer)
	}

	pod := makePod(ns, "p")
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &pg.Name}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(ctx, t, c, ns, "p", node)
	p, err := c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != node {
		t.Errorf("spec.nodeName = %q after binding, want %q", p.Spec.NodeName, node)
	}
	if sg := p.Spec.SchedulingGroup; sg == nil || sg.PodGroupName == nil || *sg.PodGroupName != "gang" {
		t.Errorf("spec.schedulingGroup = %+v, want podGroupName gang", sg)
	}

	// Deleting a PodGroup hangs on its finalizer until it is cleared.
	if err := c.SchedulingV1beta1().PodGroups(ns).Delete(ctx, "gang", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SchedulingV1beta1().PodGroups(ns).Get(ctx, "gang", metav1.GetOptions{}); err != nil {
		t.Fatalf("PodGroup gone before its finalizer was cleared: %v", err)
	}
	if err := env.ClearPodGroupFinalizers(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SchedulingV1beta1().PodGroups(ns).Get(ctx, "gang", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("PodGroup after clearing finalizers: err = %v, want NotFound", err)
	}
	// Workloads are served too.
	if _, err := c.SchedulingV1beta1().Workloads(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list Workloads: %v", err)
	}
}

// TestKWOK: KWOK marks fake nodes Ready and moves a bound pod to Running,
// then removes it when deleted. A control plane of its own.
func TestKWOK(t *testing.T) {
	env := testenv.Start(t)
	ctx := ctxFor(t)
	c := env.Client
	ns := env.Namespace(t)

	t0 := time.Now()
	if _, err := env.StartKWOK(ctx, testenv.KWOKOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("kwok started in %v", time.Since(t0).Round(time.Millisecond))
	nodes, err := env.CreateFakeNodes(ctx, 3, testenv.NodeSpec{
		Labels: map[string]string{"zone": "a"},
		Taints: []corev1.Taint{{Key: "dedicated", Value: "test", Effect: corev1.TaintEffectNoSchedule}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	t1 := time.Now()
	if err := env.WaitNodesReady(ctx, names...); err != nil {
		t.Fatal(err)
	}
	t.Logf("3 fake nodes Ready after %v", time.Since(t1).Round(time.Millisecond))
	n, err := c.CoreV1().Nodes().Get(ctx, names[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["zone"] != "a" || len(n.Spec.Taints) != 1 || n.Status.Allocatable.Cpu().String() != "32" {
		t.Errorf("node %s: labels %v, taints %v, allocatable %v", n.Name, n.Labels, n.Spec.Taints, n.Status.Allocatable)
	}

	if _, err := c.CoreV1().Pods(ns).Create(ctx, makePod(ns, "p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(ctx, t, c, ns, "p", names[1])
	t2 := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("bound pod not Running: %v", err)
	}
	t.Logf("bound pod Running after %v", time.Since(t2).Round(time.Millisecond))

	// A graceful delete completes: KWOK plays the kubelet.
	if err := c.CoreV1().Pods(ns).Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("deleted pod not removed by KWOK: %v", err)
	}
}

// TestNewStop: the non-testing entry point with its own etcd; Stop kills
// every process and removes the directory.
func TestNewStop(t *testing.T) {
	ctx := ctxFor(t)
	before := childPIDs(t)
	t0 := time.Now()
	env, err := testenv.New(ctx, testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("New with a private etcd: ready after %v", env.ReadyAfter().Round(time.Millisecond))
	stopped := false
	defer func() {
		if !stopped {
			env.Stop()
		}
	}()
	if time.Since(t0) < env.ReadyAfter() {
		t.Errorf("ReadyAfter %v longer than the call", env.ReadyAfter())
	}
	kc, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubernetes.NewForConfigOrDie(kc).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	if v.GitVersion != "v1.37.1" {
		t.Errorf("server version %s, want v1.37.1", v.GitVersion)
	}
	if _, err := env.Client.SchedulingV1beta1().PodGroups("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("scheduling.k8s.io/v1beta1 not served: %v", err)
	}
	var started []int
	for pid := range childPIDs(t) {
		if !before[pid] {
			started = append(started, pid)
		}
	}
	if len(started) != 2 {
		t.Errorf("New started %d processes (%v), want 2: etcd and kube-apiserver", len(started), started)
	}
	// ControlPlanePIDs names exactly those two, the live processes whose
	// CPU e2e/perf reads.
	pids := env.ControlPlanePIDs()
	if !slices.Equal(slices.Sorted(slices.Values(pids)), slices.Sorted(slices.Values(started))) {
		t.Errorf("ControlPlanePIDs = %v, want the processes New started, %v", pids, started)
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "stat")); pid <= 0 || err != nil {
			t.Errorf("ControlPlanePIDs: %d is not a live process (%v)", pid, err)
		}
	}
	dir := env.Dir()

	t1 := time.Now()
	env.Stop()
	stopped = true
	t.Logf("Stop took %v", time.Since(t1).Round(time.Millisecond))
	for _, pid := range started {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d still alive after Stop", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (err %v)", dir, err)
	}
	if pids := env.ControlPlanePIDs(); len(pids) != 0 {
		t.Errorf("ControlPlanePIDs after Stop = %v, want none", pids)
	}
	env.Stop() // idempotent
}

// childPIDs returns the test binary's child processes.
func childPIDs(t *testing.T) map[int]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("no /proc: %v", err)
	}
	pids := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			pids[pid] = true
		}
	}
	return pids
}

// TestNewFailure: a kube-apiserver that exits at once gives an error naming
// it and quoting its log, quickly.
func TestNewFailure(t *testing.T) {
	ctx := ctxFor(t)
	t0 := time.Now()
	env, err := testenv.New(ctx, testenv.Options{APIServerFlags: []string{"--no-such-flag"}})
	if err == nil {
		env.Stop()
		t.Fatal("New succeeded with a bad flag")
	}
	for _, want := range []string{"kube-apiserver", "exited", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("failing New took %v", d)
	}
}

// TestNewReadyTimeout: a kube-apiserver that never gets ready (its etcd is
// gone) gives an error at the deadline, quoting the failed checks and log.
func TestNewReadyTimeout(t *testing.T) {
	ctx := ctxFor(t)
	etcd, err := testenv.StartEtcd(ctx, testenv.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	etcd.Stop()
	env, err := testenv.New(ctx, testenv.Options{Etcd: etcd, ReadyTimeout: 3 * time.Second})
	if err == nil {
		env.Stop()
		t.Fatal("New succeeded without etcd")
	}
	for _, want := range []string{"not ready after 3s", "tail of", "kube-apiserver.log", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

// BenchmarkStart measures what testenv.Start costs a test: a kube-apiserver
// on an etcd that already runs (Start's shared one), start to /readyz, and
// its stop. ready-s/op is the start alone (Env.ReadyAfter).
//
//	go test -run '^$' -bench Start -benchtime 3x ./e2e/testenv/
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	etcd, err := testenv.StartEtcd(ctx, testenv.EtcdOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(etcd.Stop)
	b.ReportAllocs()
	var ready time.Duration
	n := 0
	for b.Loop() {
		env, err := testenv.New(ctx, testenv.Options{Etcd: etcd})
		if err != nil {
			b.Fatal(err)
		}
		ready += env.ReadyAfter()
		n++
		env.Stop()
	}
	b.ReportMetric(ready.Seconds()/float64(n), "ready-s/op")
}

// The tests below use the shared control plane, which stays up until the
// end: they come last so that at most one idle kube-apiserver runs beside
// the one under test.

const nodeReaderRBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: NAME
rules:
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list", "watch"]
---
# a comment-only document and an empty one are skipped
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: NAME
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: NAME
subjects:
- kind: ServiceAccount
  name: sched
  namespace: NS
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: NS
data:
  k: v
`

// TestServiceAccountRBAC: a ServiceAccount kubeconfig is forbidden to list
// nodes until RBAC applied with Env.Apply grants it. Shared control plane.
func TestServiceAccountRBAC(t *testing.T) {
	env := testenv.Shared(t)
	ctx := ctxFor(t)
	ns := env.Namespace(t)

	path, err := env.ServiceAccountKubeconfig(ctx, ns, "sched")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	sa := kubernetes.NewForConfigOrDie(cfg)
	_, err = sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list nodes as the ServiceAccount before RBAC: err = %v, want Forbidden", err)
	}
	if !strings.Contains(err.Error(), "system:serviceaccount:"+ns+":sched") {
		t.Errorf("Forbidden error does not name the ServiceAccount: %v", err)
	}

	manifest := filepath.Join(t.TempDir(), "rbac.yaml")
	role := ns + "-node-reader" // cluster-scoped: unique on the shared apiserver
	yaml := strings.NewReplacer("NAME", role, "NS", ns).Replace(nodeReaderRBAC)
	if err := os.WriteFile(manifest, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := env.Apply(ctx, manifest); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := env.Client.RbacV1()
		_ = c.ClusterRoleBindings().Delete(context.Background(), role, metav1.DeleteOptions{})
		_ = c.ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	// Applying again is a no-op, not a conflict.
	if err := env.Apply(ctx, manifest); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("applied ConfigMap: %v, %v", cm, err)
	}

	// The RBAC authorizer reads roles through informers: allow it a moment.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("list nodes as the ServiceAccount after RBAC: %v", err)
	}
	// Still nothing beyond the grant.
	if _, err := sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list pods as the ServiceAccount: err = %v, want Forbidden", err)
	}
}

// TestDeleteNamespace: a namespace holding a bound pod, a PodGroup with its
// protection finalizer and an object with a custom finalizer is gone after
// DeleteNamespace, without kube-controller-manager. Shared control plane.
func TestDeleteNamespace(t *testing.T) {
	env := testenv.Shared(t)
	ctx := ctxFor(t)
	c := env.Client
	ns, err := env.CreateNamespace(ctx, "Delete Me!")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ns, "delete-me-") {
		t.Errorf("namespace %q does not start with delete-me-", ns)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, makePod(ns, "p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(ctx, t, c, ns, "p", "no-such-node") // nothing would ever finish its graceful deletion
	if _, err := env.CreatePodGroup(ctx, ns, "g", 2); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	if err := env.DeleteNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Logf("DeleteNamespace took %v", time.Since(t0).Round(time.Millisecond))
	if _, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace after DeleteNamespace: err = %v, want NotFound", err)
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left: %d (%v)", len(pods.Items), err)
	}
	pgs, err := c.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pgs.Items) != 0 {
		t.Errorf("PodGroups left: %d (%v)", len(pgs.Items), err)
	}
	if err := env.DeleteNamespace(ctx, ns); err != nil {
		t.Errorf("deleting a missing namespace: %v", err)
	}
}

// BenchmarkNamespace measures a test namespace on the shared control plane
// (what Env.Namespace does): created, then deleted with DeleteNamespace.
func BenchmarkNamespace(b *testing.B) {
	env := testenv.Shared(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ns, err := env.CreateNamespace(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := env.DeleteNamespace(ctx, ns); err != nil {
			b.Fatal(err)
		}
	}
}
