package queue

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
)

// TestDRAHintsMoveWhatFits is a differential test of the built-in hints
// module's DRA events (ABI minor 2) against the native DynamicResources
// filter of the default profile over fake informers, as
// TestVolumeHintsMoveWhatFits is for the storage events.
//
// Each trial generates nodes, maybe the DeviceClass, ResourceSlices with one
// or two devices on some nodes, claims of other pods allocated to some of
// those devices, and a pending pod with one or two claims: named ones
// (existing or not, maybe allocated already) and template ones (generated or
// not yet). If the profile rejects the pod everywhere, one change is applied
// (the pod's claim created, another claim deallocated or deleted, a slice
// added or given a device, the class created, the pod's generated claim
// named in its status), built into an abi.Event as host/cluster and
// host/queue build it, and the hints module is asked about the pod with the
// plugins that rejected it. A Skip for a pod the profile then accepts
// somewhere is a false negative and fails the test.
func TestDRAHintsMoveWhatFits(t *testing.T) {
	trials := 400
	if raceEnabled {
		trials = 100
	}
	hintsDiff(t, trials, trials/20, [2]uint64{16, 4381}, func(rng *rand.Rand, i int) diffWorld {
		return newDRAWorld(rng, i)
	})
}

const (
	draNS     = "default"
	draDriver = "gpu.example.com"
	draClass  = "gpu"
)

// draWorld is one trial's cluster: nodes, the DRA objects, the pending pod.
type draWorld struct {
	rng     *rand.Rand
	nodes   []*v1.Node
	class   bool
	slices  map[string]*resourceapi.ResourceSlice // by node
	claims  map[string]*resourceapi.ResourceClaim // by name
	pod     *v1.Pod
	trialID int
}

func (w *draWorld) chance(p float64) bool { return w.rng.Float64() < p }
func (w *draWorld) pick(n int) int        { return w.rng.IntN(n) }

func draTestNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"),
			v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}}}
}

func (w *draWorld) slice(node string, devices int) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "slice-" + node},
		Spec: resourceapi.ResourceSliceSpec{Driver: draDriver, NodeName: new(node),
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	for i := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("d%d", i)})
	}
	return s
}

func draTestClaim(name string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: draNS, UID: types.UID("uid-" + name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "req", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: draClass,
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}}}
}

// allocate gives c device d of node's pool, reserved for a pod called user.
func allocate(c *resourceapi.ResourceClaim, node, device, user string) {
	c.Status.Allocation = &resourceapi.AllocationResult{
		Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "req", Driver: draDriver, Pool: node, Device: device}}},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: user, UID: types.UID("uid-" + user)}}
}

func newDRAWorld(rng *rand.Rand, trial int) *draWorld {
	w := &draWorld{rng: rng, trialID: trial, slices: map[string]*resourceapi.ResourceSlice{},
		claims: map[string]*resourceapi.ResourceClaim{}, class: rng.Float64() < 0.85}
	for i := range 1 + w.pick(3) {
		w.nodes = append(w.nodes, draTestNode(fmt.Sprintf("n%d", i)))
	}
	for _, n := range w.nodes {
		if w.chance(0.6) {
			w.slices[n.Name] = w.slice(n.Name, 1+w.pick(2))
		}
	}
	// Other pods' claims take some devices.
	for node, s := range w.slices {
		for _, d := range s.Spec.Devices {
			if w.chance(0.6) {
				c := draTestClaim("busy-" + node + "-" + d.Name)
				allocate(c, node, d.Name, "user-"+node+"-"+d.Name)
				w.claims[c.Name] = c
			}
		}
	}
	if w.chance(0.3) {
		w.claims["idle"] = draTestClaim("idle")
	}
	w.pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: draNS, Name: "p", UID: "uid-p"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	for i := range 1 + w.pick(2) {
		pc := v1.PodResourceClaim{Name: fmt.Sprintf("c%d", i)}
		if w.chance(0.6) {
			name := fmt.Sprintf("named-%d", i)
			pc.ResourceClaimName = new(name)
			if w.chance(0.6) {
				w.claims[name] = draTestClaim(name)
			}
		} else {
			pc.ResourceClaimTemplateName = new("tmpl")
			if w.chance(0.5) {
				w.generate(pc.Name)
			}
		}
		w.pod.Spec.ResourceClaims = append(w.pod.Spec.ResourceClaims, pc)
	}
	return w
}

// generate does what the resourceclaim controller does for the pod's
// template claim pc: the claim, owned by the pod, and its name in the pod's
// status.
func (w *draWorld) generate(pc string) {
	name := "p-" + pc + "-x7k2p"
	c := draTestClaim(name)
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "uid-p", Controller: new(true)}}
	w.claims[name] = c
	w.pod.Status.ResourceClaimStatuses = append(w.pod.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: pc, ResourceClaimName: new(name)})
}

// filter runs the default profile over every node with the world's DRA
// objects behind fake informers.
func (w *draWorld) filter(t *testing.T) (fits bool, rejectors podview.Plugins, message string) {
	t.Helper()
	c := cache.New()
	for _, n := range w.nodes {
		c.AddNode(n)
	}
	snap := cache.NewSnapshot()
	if err := c.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	if w.class {
		objs = append(objs, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: draClass}})
	}
	for _, s := range w.slices {
		objs = append(objs, s.DeepCopy())
	}
	for _, cl := range w.claims {
		objs = append(objs, cl.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	r := f.Resource().V1()
	l := framework.Listers{DeviceClasses: r.DeviceClasses().Lister(), ResourceClaims: r.ResourceClaims().Lister(),
		ClaimInformer: r.ResourceClaims().Informer(), ResourceSlices: r.ResourceSlices(), DeviceTaintRules: r.DeviceTaintRules(),
		Client: client}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	h := framework.NewHandle(framework.HandleOptions{Listers: l})
	prof := defaultProfileOver(t, h)
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	mgr, err := h.DRA()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !mgr.Synced(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the DRA caches did not sync")
		}
	}
	var d framework.Diagnosis
	ps, st := prof.Prepare(cache.NewPodInfo(w.pod), snap)
	if st != nil {
		if st.Code == framework.Error {
			t.Fatalf("Prepare: %v", st.Err)
		}
		d.RecordPreFilter(st)
	} else {
		feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d)
		if err := d.Err(); err != nil {
			t.Fatalf("FindFeasible: %v", err)
		}
		if len(feasible) > 0 {
			return true, podview.Plugins{}, ""
		}
	}
	return false, podview.Plugins{Unschedulable: d.UnschedulablePlugins(), Pending: d.PendingPlugins()}, d.Message(len(w.nodes))
}

// event applies one random change and returns its event as host/cluster
// (or, for the pod's own update, host/queue) builds it; ok is false when
// the change drawn has nothing to change.
func (w *draWorld) event() (ev abi.Event, label string, ok bool) {
	claimEvent := func(act abi.ActionType, old, new *resourceapi.ResourceClaim, label string) (abi.Event, string, bool) {
		var o, n any
		if old != nil {
			o = old
		}
		if new != nil {
			n = new
			w.claims[new.Name] = new
		} else {
			delete(w.claims, old.Name)
		}
		if act&abi.ActionUpdate != 0 {
			if act = podview.StorageUpdateActions(o, n); act == 0 {
				return abi.Event{}, "", false
			}
		}
		e, ok := podview.StorageEvent(act, o, n)
		return e, label, ok
	}
	var busy []string
	for _, name := range slices.Sorted(maps.Keys(w.claims)) {
		if w.claims[name].Status.Allocation != nil && w.claims[name].Name[:4] == "busy" {
			busy = append(busy, name)
		}
	}
	switch w.pick(8) {
	case 0: // the pod's named claim created
		for _, pc := range w.pod.Spec.ResourceClaims {
			if pc.ResourceClaimName != nil && w.claims[*pc.ResourceClaimName] == nil {
				return claimEvent(abi.ActionAdd, nil, draTestClaim(*pc.ResourceClaimName), "ResourceClaim Add (the pod's)")
			}
		}
	case 1: // another claim deallocated
		if len(busy) > 0 {
			old := w.claims[busy[w.pick(len(busy))]]
			n := old.DeepCopy()
			n.Status = resourceapi.ResourceClaimStatus{}
			return claimEvent(abi.ActionUpdateOther, old, n, "ResourceClaim Update (deallocated)")
		}
	case 2: // another claim deleted with its allocation
		if len(busy) > 0 {
			return claimEvent(abi.ActionDelete, w.claims[busy[w.pick(len(busy))]], nil, "ResourceClaim Delete (allocated)")
		}
	case 3: // an unrelated claim updated or created
		if old := w.claims["idle"]; old != nil {
			n := old.DeepCopy()
			n.Finalizers = []string{"x"}
			return claimEvent(abi.ActionUpdateOther, old, n, "ResourceClaim Update (metadata)")
		}
		return claimEvent(abi.ActionAdd, nil, draTestClaim("idle"), "ResourceClaim Add (unrelated)")
	case 4: // a slice published on a node without one
		for _, n := range w.nodes {
			if w.slices[n.Name] == nil {
				s := w.slice(n.Name, 1)
				w.slices[n.Name] = s
				e, ok := podview.StorageEvent(abi.ActionAdd, nil, s)
				return e, "ResourceSlice Add", ok
			}
		}
	case 5: // a slice given one more device
		for _, n := range w.nodes {
			if old := w.slices[n.Name]; old != nil {
				s := w.slice(n.Name, len(old.Spec.Devices)+1)
				s.Spec.Pool.Generation = old.Spec.Pool.Generation + 1
				w.slices[n.Name] = s
				e, ok := podview.StorageEvent(podview.StorageUpdateActions(old, s), old, s)
				return e, "ResourceSlice Update (device added)", ok
			}
		}
	case 6: // the class created
		if !w.class {
			w.class = true
			e, ok := podview.StorageEvent(abi.ActionAdd, nil, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: draClass}})
			return e, "DeviceClass Add", ok
		}
	case 7: // the pod's template claim generated and named
		for _, pc := range w.pod.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil || slices.ContainsFunc(w.pod.Status.ResourceClaimStatuses,
				func(s v1.PodResourceClaimStatus) bool { return s.Name == pc.Name }) {
				continue
			}
			old := w.pod.DeepCopy()
			w.generate(pc.Name)
			act := podview.PodUpdateActions(old, w.pod)
			if act&abi.ActionUpdatePodGeneratedResourceClaim == 0 {
				panic("a generated claim named in the status is not UpdatePodGeneratedResourceClaim")
			}
			return podview.PodEvent(act, old, w.pod.DeepCopy(), nil), "UnscheduledPod UpdatePodGeneratedResourceClaim", true
		}
	}
	return abi.Event{}, "", false
}

func (w *draWorld) pending() *v1.Pod { return w.pod }

func (w *draWorld) describe() string {
	return fmt.Sprintf("pod claims: %+v, status %+v", w.pod.Spec.ResourceClaims, w.pod.Status.ResourceClaimStatuses)
}
