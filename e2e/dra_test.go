package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// Dynamic Resource Allocation (issue 16), against upstream and wasmsched.
// No DRA driver runs: the scenarios publish devices of a made-up driver in
// ResourceSlices themselves, one node-local pool per node, as a driver's
// kubelet plugin would. The resource claim controller of
// kube-controller-manager runs (claims from templates, reservedFor cleanup,
// deallocation of deleted claims), as on a real cluster.

const (
	draDriver = "gpu.wasmsched.test"
	draClass  = "gpu"
	// draExtended is the extended resource name the class of the
	// extended-resource scenario maps (DRAExtendedResource, GA in 1.37).
	draExtended = "gpu.wasmsched.test/gpu"
)

// Upstream's PodScheduled messages, as observed with kube-scheduler v1.37.1
// (the scenarios' node counts are part of them).
const (
	// msgDeviceTaken: two nodes, the only device allocated to another claim.
	msgDeviceTaken = "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	// msgGangQuorum and msgGangNoDevice: a gang of four claiming one device
	// each, three devices on three nodes; three members report the first,
	// the one the group's cycle could not place the second.
	msgGangQuorum   = "pod group is unschedulable, minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
	msgGangNoDevice = "0/3 nodes are available: 3 cannot allocate all claims."
	// msgNoClass: the claim's request names a DeviceClass that does not
	// exist (PreFilter: every node is rejected alike).
	msgNoClass = "0/2 nodes are available: request gpu: device class gpu-later does not exist. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)

// draControllers are the kube-controller-manager controllers the DRA
// scenarios rely on (names of cmd/kube-controller-manager/names in v1.37.1).
var draControllers = []string{"resourceclaim-controller"}

// draSetup creates one fake node per entry of devices, publishes that many
// devices of draDriver on it (none when 0), creates the DeviceClass draClass
// (selecting the driver by CEL; mapping draExtended when extended), and
// starts kube-controller-manager with draControllers. It returns the node
// names; the scheduler is not started.
func draSetup(t *testing.T, s *scheduler, extended bool, devices ...int) []string {
	t.Helper()
	nodes := fakeNodes(t, s, len(devices), "8", nil)
	slices.Sort(nodes)
	for i, n := range devices {
		if n > 0 {
			publishDevices(t, s, nodes[i], n)
		}
	}
	createDeviceClass(t, s, draClass, extended)
	cm, err := s.env.StartControllerManager(context.Background(), testenv.ControllerManagerOptions{Controllers: draControllers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager log (tail of %s):\n%s", cm.LogPath(), cm.Tail(60))
			t.Logf("[%s] claims at the end of the failed test:\n%s", s.name, dumpClaims(s))
		}
	})
	return nodes
}

// createDeviceClass creates a DeviceClass selecting draDriver's devices by
// CEL and, when extended, mapping the extended resource draExtended.
func createDeviceClass(t *testing.T, s *scheduler, name string, extended bool) {
	t.Helper()
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", draDriver)},
		}}},
	}
	if extended {
		class.Spec.ExtendedResourceName = ptr.To(draExtended)
	}
	if _, err := s.c.ResourceV1().DeviceClasses().Create(context.Background(), class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create DeviceClass %s: %v", name, err)
	}
}

// publishDevices creates the ResourceSlice of node's pool (named after the
// node): devices gpu-0 ... gpu-<n-1>.
func publishDevices(t *testing.T, s *scheduler, node string, n int) {
	t.Helper()
	devs := make([]resourcev1.Device, n)
	for i := range devs {
		devs[i] = resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)}
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(draDriver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   draDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  devs,
		},
	}
	if _, err := s.c.ResourceV1().ResourceSlices().Create(context.Background(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("publish %d devices on %s: %v", n, node, err)
	}
}

// gpuClaimSpec asks for exactly one device of class.
func gpuClaimSpec(class string) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu",
		Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: class,
			AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
			Count:           1,
		},
	}}}}
}

func createDeviceClaim(t *testing.T, s *scheduler, name, class string) {
	t.Helper()
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec:       gpuClaimSpec(class),
	}
	if _, err := s.c.ResourceV1().ResourceClaims(s.ns).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ResourceClaim %s: %v", name, err)
	}
}

// withDeviceClaim makes the pod use the ResourceClaim claim (or, with
// template set, a claim made from the ResourceClaimTemplate of that name)
// as its claim "gpu", in its container.
func withDeviceClaim(claim string, template bool) podOpt {
	return func(p *v1.Pod) {
		pc := v1.PodResourceClaim{Name: "gpu"}
		if template {
			pc.ResourceClaimTemplateName = ptr.To(claim)
		} else {
			pc.ResourceClaimName = ptr.To(claim)
		}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
		p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: "gpu"})
	}
}

func getClaim(t *testing.T, s *scheduler, name string) *resourcev1.ResourceClaim {
	t.Helper()
	c, err := s.c.ResourceV1().ResourceClaims(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ResourceClaim %s: %v", name, err)
	}
	return c
}

// allocatedDevice returns "<pool>/<device>" of a one-device allocation, and
// the node its allocation's node selector names ("" when there is none).
func allocatedDevice(c *resourcev1.ResourceClaim) (device, node string) {
	a := c.Status.Allocation
	if a == nil {
		return "", ""
	}
	var devs []string
	for _, r := range a.Devices.Results {
		devs = append(devs, r.Pool+"/"+r.Device)
	}
	if ns := a.NodeSelector; ns != nil && len(ns.NodeSelectorTerms) == 1 {
		for _, f := range ns.NodeSelectorTerms[0].MatchFields {
			if f.Key == "metadata.name" && f.Operator == v1.NodeSelectorOpIn && len(f.Values) == 1 {
				node = f.Values[0]
			}
		}
	}
	return strings.Join(devs, ","), node
}

// checkAllocatedFor asserts the claim is allocated one device of draDriver
// on node (pool named after it; any device when device is empty), with the
// delete-protection finalizer, and reserved for the pod alone.
func checkAllocatedFor(t *testing.T, s *scheduler, claim *resourcev1.ResourceClaim, node, device string, pod *v1.Pod) {
	t.Helper()
	a := claim.Status.Allocation
	if a == nil {
		t.Errorf("claim %s: no status.allocation", claim.Name)
		return
	}
	dev, selNode := allocatedDevice(claim)
	s.logf(t, "claim %s: allocated %s (node selector %q), reservedFor %v, finalizers %v", claim.Name, dev, selNode, claim.Status.ReservedFor, claim.Finalizers)
	if selNode != node {
		t.Errorf("claim %s: allocation node selector %+v, want metadata.name In [%s]", claim.Name, a.NodeSelector, node)
	}
	if len(a.Devices.Results) != 1 {
		t.Errorf("claim %s: %d devices allocated, want 1", claim.Name, len(a.Devices.Results))
	} else if r := a.Devices.Results[0]; r.Driver != draDriver || r.Pool != node || (device != "" && r.Device != device) {
		t.Errorf("claim %s: allocated %s/%s/%s, want %s/%s/%s", claim.Name, r.Driver, r.Pool, r.Device, draDriver, node, device)
	}
	want := resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID}
	if len(claim.Status.ReservedFor) != 1 || claim.Status.ReservedFor[0] != want {
		t.Errorf("claim %s: reservedFor %+v, want only %+v", claim.Name, claim.Status.ReservedFor, want)
	}
	if !slices.Contains(claim.Finalizers, resourcev1.Finalizer) {
		t.Errorf("claim %s: finalizers %v, want %s (added before the allocation is written)", claim.Name, claim.Finalizers, resourcev1.Finalizer)
	}
}

// waitPending waits until the pod reports PodScheduled=False reason
// Unschedulable and checks its message is want.
func waitPending(t *testing.T, s *scheduler, pod, want string) {
	t.Helper()
	p := waitCondition(t, s, pod, v1.PodReasonUnschedulable, 60*time.Second)
	c := scheduledCondition(p)
	s.logf(t, "%s pending: %s", pod, conditionText(c))
	if c.Message != want {
		t.Errorf("pod %s: PodScheduled message\n  %q\nwant (upstream's)\n  %q", pod, c.Message, want)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("pod %s bound to %s while Unschedulable", pod, p.Spec.NodeName)
	}
}

// noAllocation asserts, for a few seconds, that none of the pods is bound and
// none of the claims is allocated or reserved.
func noAllocation(t *testing.T, s *scheduler, pods, claims []string) {
	t.Helper()
	if !testenv.Consistently(t, 3*time.Second, 200*time.Millisecond, func() error {
		if b := bound(t, s, pods...); len(b) > 0 {
			return fmt.Errorf("pods %v bound", b)
		}
		for _, n := range claims {
			c := getClaim(t, s, n)
			if c.Status.Allocation != nil || len(c.Status.ReservedFor) > 0 {
				dev, node := allocatedDevice(c)
				return fmt.Errorf("claim %s allocated %q on %q, reservedFor %v", n, dev, node, c.Status.ReservedFor)
			}
		}
		return nil
	}) {
		t.FailNow()
	}
}

// dumpClaims renders every claim of the namespace, for failure reports.
func dumpClaims(s *scheduler) string {
	list, err := s.c.ResourceV1().ResourceClaims(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range list.Items {
		dev, node := allocatedDevice(&c)
		fmt.Fprintf(&b, "  %s: allocated %q on %q reservedFor %v finalizers %v deleting %v\n",
			c.Name, dev, node, c.Status.ReservedFor, c.Finalizers, c.DeletionTimestamp != nil)
	}
	return b.String()
}

// TestDRA: issue 16's reference scenarios, one subtest each, every one run
// against upstream and wasmsched on a control plane of its own
// (WASMSCHED_E2E_ONLY=upstream|wasmsched restricts it to one). Waits are
// deadlines, not timings: a pod "bound soon after" an event is bound well
// within the 5 min after which both schedulers retry unschedulable pods
// anyway, so it was requeued by the event.
func TestDRA(t *testing.T) {
	// (a) A pod claiming the only device is bound to the device's node; the
	// claim shows the allocation (that node's pool and device) and the pod
	// in reservedFor. Before its PreBind wrote the claim, the pod was
	// nominated to that node (NominatedNodeNameForExpectation), which the
	// binding cleared.
	t.Run("only-device", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, false, 0, 1, 0)
			createDeviceClaim(t, s, "c-0", draClass)
			s.start(t)
			w := watchPods(t, s.c, s.ns)
			pod := submit(t, s.c, newPod(s.ns, "p-0", "1", withDeviceClaim("c-0", false)))
			if got := waitBound(t, s.c, s.ns, pod.Name, 60*time.Second); got != nodes[1] {
				t.Fatalf("p-0 bound to %s, want %s (the only node with a device)", got, nodes[1])
			}
			checkAllocatedFor(t, s, getClaim(t, s, "c-0"), nodes[1], "gpu-0", pod)
			waitFor(t, 10*time.Second, "the watch to see p-0 bound", func() (bool, error) {
				v := w.versions("p-0")
				return len(v) > 0 && v[len(v)-1].Spec.NodeName != "", nil
			})
			if nn := w.firstNominated("p-0"); nn != nodes[1] {
				t.Errorf("p-0 nominated to %q before its binding, want %s", nn, nodes[1])
			}
			if nn := getPod(t, s.c, s.ns, "p-0").Status.NominatedNodeName; nn != "" {
				t.Errorf("bound p-0 still nominated to %q, want the nomination cleared at the binding", nn)
			}
		})
	})

	// (b) A second claim for the same class waits while the only device
	// is taken, with upstream's message, and its pod is bound once the
	// first pod and its claim are gone (the claim's deletion requeues it).
	t.Run("device-taken", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, false, 1, 0)
			createDeviceClaim(t, s, "c-0", draClass)
			createDeviceClaim(t, s, "c-1", draClass)
			s.start(t)
			first := submit(t, s.c, newPod(s.ns, "p-0", "1", withDeviceClaim("c-0", false)))
			if got := waitBound(t, s.c, s.ns, "p-0", 60*time.Second); got != nodes[0] {
				t.Fatalf("p-0 bound to %s, want %s", got, nodes[0])
			}
			waitFor(t, 30*time.Second, "claim c-0 reserved for p-0", func() (bool, error) {
				return len(getClaim(t, s, "c-0").Status.ReservedFor) == 1, nil
			})
			checkAllocatedFor(t, s, getClaim(t, s, "c-0"), nodes[0], "gpu-0", first)
			second := submit(t, s.c, newPod(s.ns, "p-1", "1", withDeviceClaim("c-1", false)))
			waitPending(t, s, "p-1", msgDeviceTaken)
			noAllocation(t, s, []string{"p-1"}, []string{"c-1"})

			ctx := context.Background()
			if err := s.c.CoreV1().Pods(s.ns).Delete(ctx, "p-0", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.c.ResourceV1().ResourceClaims(s.ns).Delete(ctx, "c-0", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := waitBound(t, s.c, s.ns, "p-1", 60*time.Second); got != nodes[0] {
				t.Fatalf("p-1 bound to %s, want %s", got, nodes[0])
			}
			s.logf(t, "p-1 bound after p-0 and c-0 were deleted")
			// The controller deallocated c-0 and lifted its finalizer
			// before the device could be given again.
			if _, err := s.c.ResourceV1().ResourceClaims(s.ns).Get(ctx, "c-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("claim c-0 still there (err %v) after p-1 got its device", err)
			}
			checkAllocatedFor(t, s, getClaim(t, s, "c-1"), nodes[0], "gpu-0", second)
		})
	})

	// (c) A claim template: the resource claim controller creates the
	// pod's own claim, owned by the pod and named in its status; the
	// scheduler allocates it and binds the pod.
	t.Run("claim-template", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, false, 0, 2)
			_, err := s.c.ResourceV1().ResourceClaimTemplates(s.ns).Create(context.Background(), &resourcev1.ResourceClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gpu-template"},
				Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: gpuClaimSpec(draClass)},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.start(t)
			submit(t, s.c, newPod(s.ns, "p-0", "1", withDeviceClaim("gpu-template", true)))
			if got := waitBound(t, s.c, s.ns, "p-0", 60*time.Second); got != nodes[1] {
				t.Fatalf("p-0 bound to %s, want %s", got, nodes[1])
			}
			pod := getPod(t, s.c, s.ns, "p-0")
			st := pod.Status.ResourceClaimStatuses
			if len(st) != 1 || st[0].Name != "gpu" || st[0].ResourceClaimName == nil {
				t.Fatalf("p-0 status.resourceClaimStatuses %+v, want one for claim gpu with a name", st)
			}
			claim := getClaim(t, s, *st[0].ResourceClaimName)
			if owner := metav1.GetControllerOf(claim); owner == nil || owner.Kind != "Pod" || owner.UID != pod.UID {
				t.Errorf("claim %s: controller %+v, want pod p-0", claim.Name, owner)
			}
			checkAllocatedFor(t, s, claim, nodes[1], "", pod)
		})
	})

	// (d) An extended resource that a DeviceClass maps and no node
	// advertises: the pod is scheduled on the node with a device, and the
	// scheduler creates the pod's special claim (owned by the pod,
	// annotated, allocated, reserved) and records it in the pod's status.
	t.Run("extended-resource", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, true, 0, 1)
			s.start(t)
			p := newPod(s.ns, "p-0", "1")
			one := resource.MustParse("1")
			p.Spec.Containers[0].Resources.Requests[draExtended] = one
			p.Spec.Containers[0].Resources.Limits = v1.ResourceList{draExtended: one}
			submit(t, s.c, p)
			if got := waitBound(t, s.c, s.ns, "p-0", 60*time.Second); got != nodes[1] {
				t.Fatalf("p-0 bound to %s, want %s (the node whose device backs %s)", got, nodes[1], draExtended)
			}
			pod := getPod(t, s.c, s.ns, "p-0")
			for _, n := range nodes {
				nd, err := s.c.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if q, ok := nd.Status.Allocatable[draExtended]; ok {
					t.Errorf("node %s advertises %s=%s; the scenario wants none to", n, draExtended, q.String())
				}
			}
			list, err := s.c.ResourceV1().ResourceClaims(s.ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 {
				t.Fatalf("%d claims, want the one special claim:\n%s", len(list.Items), dumpClaims(s))
			}
			claim := &list.Items[0]
			s.logf(t, "special claim %s: annotations %v, generateName %q, requests %+v", claim.Name, claim.Annotations, claim.GenerateName, claim.Spec.Devices.Requests)
			if !strings.HasPrefix(claim.Name, "p-0-extended-resources-") {
				t.Errorf("special claim named %s, want prefix p-0-extended-resources-", claim.Name)
			}
			if claim.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" {
				t.Errorf("claim %s: annotations %v, want %s=true", claim.Name, claim.Annotations, resourcev1.ExtendedResourceClaimAnnotation)
			}
			if owner := metav1.GetControllerOf(claim); owner == nil || owner.Kind != "Pod" || owner.UID != pod.UID {
				t.Errorf("claim %s: controller %+v, want pod p-0", claim.Name, owner)
			}
			// Upstream names the request after the container's index and the
			// resource's index among the container's sorted request names
			// (cpu, gpu.wasmsched.test/gpu, memory).
			const reqName = "container-0-request-1"
			if rs := claim.Spec.Devices.Requests; len(rs) != 1 || rs[0].Name != reqName || rs[0].Exactly == nil ||
				rs[0].Exactly.DeviceClassName != draClass || rs[0].Exactly.Count != 1 {
				t.Errorf("claim %s: requests %+v, want %s: exactly one device of class %s", claim.Name, rs, reqName, draClass)
			}
			checkAllocatedFor(t, s, claim, nodes[1], "gpu-0", pod)
			es := pod.Status.ExtendedResourceClaimStatus
			s.logf(t, "p-0 status.extendedResourceClaimStatus %+v", es)
			if es == nil || es.ResourceClaimName != claim.Name || len(es.RequestMappings) != 1 {
				t.Fatalf("p-0 status.extendedResourceClaimStatus %+v, want claim %s with one request mapping", es, claim.Name)
			}
			m := es.RequestMappings[0]
			want := v1.ContainerExtendedResourceRequest{ContainerName: "c", ResourceName: draExtended, RequestName: reqName}
			if m != want {
				t.Errorf("request mapping %+v, want %+v", m, want)
			}
		})
	})

	// (e) A gang of four, each member with a claim for one device: with
	// three devices in the cluster none binds and no claim keeps an
	// allocation; once a fourth device is published all four bind, each
	// with a device of its own.
	t.Run("gang", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, false, 2, 1, 0)
			createGroup(t, s, groupSpec{name: "train", minCount: 4})
			var pods, claims []string
			for i := range 4 {
				claims = append(claims, fmt.Sprintf("c-%d", i))
				pods = append(pods, fmt.Sprintf("p-%d", i))
				createDeviceClaim(t, s, claims[i], draClass)
			}
			s.start(t)
			for i := range pods {
				submit(t, s.c, newPod(s.ns, pods[i], "1", inGroup("train"), withDeviceClaim(claims[i], false)))
			}
			// As upstream: the member the group's cycle could not place
			// reports its filters' reason, the others the unmet quorum.
			var quorum, own int
			for _, p := range pods {
				c := scheduledCondition(waitCondition(t, s, p, v1.PodReasonUnschedulable, 60*time.Second))
				s.logf(t, "%s with three devices: %s", p, conditionText(c))
				switch c.Message {
				case msgGangQuorum:
					quorum++
				case msgGangNoDevice:
					own++
				default:
					t.Errorf("member %s: message %q, want upstream's %q or %q", p, c.Message, msgGangQuorum, msgGangNoDevice)
				}
			}
			if quorum != 3 || own != 1 {
				t.Errorf("%d members report the quorum and %d the devices, want 3 and 1 (as upstream)", quorum, own)
			}
			noAllocation(t, s, pods, claims)

			publishDevices(t, s, nodes[2], 1)
			devs := map[string]string{}
			for i, p := range pods {
				node := waitBound(t, s.c, s.ns, p, 60*time.Second)
				pod := getPod(t, s.c, s.ns, p)
				waitFor(t, 30*time.Second, "claim "+claims[i]+" reserved", func() (bool, error) {
					return len(getClaim(t, s, claims[i]).Status.ReservedFor) == 1, nil
				})
				claim := getClaim(t, s, claims[i])
				checkAllocatedFor(t, s, claim, node, "", pod)
				dev, _ := allocatedDevice(claim)
				if other, dup := devs[dev]; dup {
					t.Errorf("device %s allocated to both %s and %s", dev, other, claims[i])
				}
				devs[dev] = claims[i]
			}
		})
	})

	// (f) A claim whose request names a DeviceClass that does not exist:
	// the pod waits with upstream's message, and is bound once the class
	// is created.
	t.Run("missing-class", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			nodes := draSetup(t, s, false, 0, 1)
			createDeviceClaim(t, s, "c-0", "gpu-later")
			s.start(t)
			pod := submit(t, s.c, newPod(s.ns, "p-0", "1", withDeviceClaim("c-0", false)))
			waitPending(t, s, "p-0", msgNoClass)
			noAllocation(t, s, []string{"p-0"}, []string{"c-0"})
			createDeviceClass(t, s, "gpu-later", false)
			if got := waitBound(t, s.c, s.ns, "p-0", 60*time.Second); got != nodes[1] {
				t.Fatalf("p-0 bound to %s, want %s", got, nodes[1])
			}
			checkAllocatedFor(t, s, getClaim(t, s, "c-0"), nodes[1], "gpu-0", pod)
		})
	})
}
