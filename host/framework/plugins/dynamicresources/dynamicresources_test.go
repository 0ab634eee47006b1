package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/dra"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

const draDriver = "gpu.example.com"

// draClass is a DeviceClass selecting every device.
func draClass(name string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}}
}

// draSlice publishes devices named d0, d1... on node.
func draSlice(node string, devices int, mod ...func(*resourceapi.Device)) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "slice-" + node, ResourceVersion: "1"},
		Spec: resourceapi.ResourceSliceSpec{Driver: draDriver, NodeName: ptr.To(node),
			Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	for i := range devices {
		d := resourceapi.Device{Name: fmt.Sprintf("d%d", i)}
		for _, m := range mod {
			m(&d)
		}
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	return s
}

// draClaim asks for one device of class gpu.
func draClaim(name string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "req", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}}}
}

// draAllocated is c allocated device on node's pool, available on node.
func draAllocated(c *resourceapi.ResourceClaim, node, device string) *resourceapi.ResourceClaim {
	c.Status.Allocation = &resourceapi.AllocationResult{
		Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "req", Driver: draDriver, Pool: node, Device: device}}},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{ft.NameTerm(node)}}}
	return c
}

// draPod uses the claims by name.
func draPod(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
	for i, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: fmt.Sprintf("c%d", i), ResourceClaimName: ptr.To(c)})
	}
	return p
}

// draListers are Listers over a fake API holding objs, whose claim updates
// carry and bump resourceVersions as the API server's, and the clientset.
// start starts the informers and waits until the plugin's caches synced.
func draListers(t *testing.T, objs ...runtime.Object) (l framework.Listers, client *fake.Clientset, start func(*dynamicResources)) {
	t.Helper()
	client = fake.NewClientset(objs...)
	client.PrependReactor("update", "resourceclaims", versionedClaimUpdate(client))
	f := informers.NewSharedInformerFactory(client, 0)
	r := f.Resource().V1()
	l = framework.Listers{DeviceClasses: r.DeviceClasses().Lister(), ResourceClaims: r.ResourceClaims().Lister(),
		ClaimInformer: r.ResourceClaims().Informer(), ResourceSlices: r.ResourceSlices(), DeviceTaintRules: r.DeviceTaintRules(),
		Client: client}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	return l, client, func(pl *dynamicResources) {
		f.Start(stop)
		f.WaitForCacheSync(stop)
		for deadline := time.Now().Add(30 * time.Second); !pl.m.Synced(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the DRA caches did not sync")
			}
		}
	}
}

// versionedClaimUpdate makes claim updates (and status updates) conflict
// unless they carry the stored resourceVersion, and bump it.
func versionedClaimUpdate(client *fake.Clientset) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		u := action.(k8stesting.UpdateAction)
		obj := u.GetObject().DeepCopyObject()
		m, _ := meta.Accessor(obj)
		cur, err := client.Tracker().Get(u.GetResource(), u.GetNamespace(), m.GetName())
		if err != nil {
			return true, nil, err
		}
		cm, _ := meta.Accessor(cur)
		if cm.GetResourceVersion() != m.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(u.GetResource().GroupResource(), m.GetName(),
				fmt.Errorf("stored version %s, update of %s", cm.GetResourceVersion(), m.GetResourceVersion()))
		}
		n, _ := strconv.Atoi(cm.GetResourceVersion())
		m.SetResourceVersion(strconv.Itoa(n + 1))
		if err := client.Tracker().Update(u.GetResource(), obj, u.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}

// draProfile is a profile of DynamicResources alone (weight 2) over l.
func draProfile(t *testing.T, l framework.Listers, a dynamicResourcesArgs) (*framework.Profile, *dynamicResources) {
	t.Helper()
	pl, err := newDynamicResources(ft.HandleFor(l), a)
	if err != nil {
		t.Fatal(err)
	}
	return ft.MustProfile(framework.Entry{Plugin: pl, Weight: weightDynamicResources}), pl
}

func draReject(reason string) *framework.Status {
	return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginDynamicResources, Reasons: []string{reason}}
}

func draNode(name string) *cache.NodeInfo {
	return ft.MakeNode(name).Label(v1.LabelHostname, name).Info()
}

// TestDynamicResourcesPreFilter pins PreFilter's rejections to upstream's
// texts (PreFilter and PreEnqueue's).
func TestDynamicResourcesPreFilter(t *testing.T) {
	fromTemplate := func(status bool) *v1.Pod {
		p := draPod("pod-a")
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("tmpl")}}
		if status {
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("pod-a-gpu")}}
		}
		return p
	}
	deleting := draClaim("c1")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	deleting.Finalizers = []string{resourceapi.Finalizer}
	noClass := draClaim("c1")
	noClass.Spec.Devices.Requests[0].Exactly.DeviceClassName = "missing"
	tests := []struct {
		name string
		pod  *v1.Pod
		objs []runtime.Object
		want *framework.Status
		skip bool
	}{
		{name: "no claims: skipped", pod: draPod("pod-a"), skip: true},
		{name: "claim missing", pod: draPod("pod-a", "c1"), want: draReject(`could not find ResourceClaim "default/c1"`)},
		{name: "claim from a template not created yet", pod: fromTemplate(false),
			want: draReject(`pod "default/pod-a": ResourceClaim not created yet`)},
		{name: "claim from a template not owned by the pod", pod: fromTemplate(true), objs: []runtime.Object{func() runtime.Object {
			c := draClaim("pod-a-gpu")
			return c
		}()}, want: draReject("ResourceClaim default/pod-a-gpu was not created for Pod default/pod-a (Pod is not owner)")},
		{name: "claim being deleted", pod: draPod("pod-a", "c1"), objs: []runtime.Object{deleting},
			want: draReject(`resourceclaim "c1" is being deleted`)},
		{name: "device class missing", pod: draPod("pod-a", "c1"), objs: []runtime.Object{noClass},
			want: draReject("request req: device class missing does not exist")},
		{name: "claim to allocate", pod: draPod("pod-a", "c1"), objs: []runtime.Object{draClaim("c1")}},
		{name: "claim allocated to another pod: shared, as upstream", pod: draPod("pod-a", "c1"), objs: []runtime.Object{func() runtime.Object {
			c := draAllocated(draClaim("c1"), "n2", "d0")
			c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "other", UID: "uid-other"}}
			return c
		}()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _, start := draListers(t, append([]runtime.Object{draClass("gpu"), draSlice("n2", 1)}, tc.objs...)...)
			p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
			start(pl)
			ps, st := p.Prepare(cache.NewPodInfo(tc.pod), nil)
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Fatalf("Prepare status (-want, +got):\n%s", diff)
			}
			if st == nil && (draFilterOf(ps) == nil) != tc.skip {
				t.Errorf("filter %v, want skipped %v", draFilterOf(ps), tc.skip)
			}
			// PreEnqueue holds the pod back for its claims, as upstream's;
			// the device class is PreFilter's alone.
			want := tc.want
			if tc.pod.Spec.ResourceClaims != nil && tc.objs != nil && tc.objs[0] == runtime.Object(noClass) {
				want = nil
			}
			if diff := cmp.Diff(want, p.PreEnqueue(tc.pod)); diff != "" {
				t.Errorf("PreEnqueue (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestDynamicResourcesPreEnqueueStore: a claim the plugin's cache has not
// seen yet, but the informer's store has (the queue hears of the claim from
// its own handler, in no order with the cache's), admits the pod; before
// the caches have synced every pod is admitted, for PreFilter to answer.
func TestDynamicResourcesPreEnqueueStore(t *testing.T) {
	l, _, start := draListers(t, draClass("gpu"))
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	if st := p.PreEnqueue(draPod("pod-a", "c1")); st != nil {
		t.Errorf("PreEnqueue before the caches synced = %v, want nil", st)
	}
	start(pl)
	if diff := cmp.Diff(draReject(`could not find ResourceClaim "default/c1"`), p.PreEnqueue(draPod("pod-a", "c1"))); diff != "" {
		t.Errorf("PreEnqueue without the claim (-want, +got):\n%s", diff)
	}
	if err := l.ClaimInformer.GetStore().Add(draClaim("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := pl.m.Get("default", "c1"); err == nil {
		t.Fatal("the plugin's cache has the claim already: the test needs it not to")
	}
	if st := p.PreEnqueue(draPod("pod-a", "c1")); st != nil {
		t.Errorf("PreEnqueue with the claim in the informer's store = %v, want nil", st)
	}
}

// TestDynamicResourcesFilter checks each node's status: devices published
// on n2 only; an allocated claim is available where its node selector says.
func TestDynamicResourcesFilter(t *testing.T) {
	tests := []struct {
		name   string
		claims []runtime.Object
		want   map[string]*framework.Status
	}{
		{name: "allocated where the devices are", claims: []runtime.Object{draClaim("c1")},
			want: map[string]*framework.Status{"n1": draReject(ReasonCannotAllocateAll), "n2": nil}},
		{name: "already allocated: its node selector", claims: []runtime.Object{draAllocated(draClaim("c1"), "n2", "d0")},
			want: map[string]*framework.Status{"n1": draReject(ReasonClaimNotAvailable), "n2": nil}},
		{name: "more devices than there are", claims: []runtime.Object{func() runtime.Object {
			c := draClaim("c1")
			c.Spec.Devices.Requests[0].Exactly.Count = 2
			return c
		}()}, want: map[string]*framework.Status{"n1": draReject(ReasonCannotAllocateAll), "n2": draReject(ReasonCannotAllocateAll)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _, start := draListers(t, append([]runtime.Object{draClass("gpu"), draSlice("n2", 1)}, tc.claims...)...)
			p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
			start(pl)
			ps, st := p.Prepare(cache.NewPodInfo(draPod("pod-a", "c1")), nil)
			if st != nil {
				t.Fatal(st.Message())
			}
			got := map[string]*framework.Status{}
			for _, n := range []string{"n1", "n2"} {
				got[n] = framework.Filter(ps, draNode(n))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

// draCycle prepares pod on p and filters node; it fails the test unless
// both pass.
func draCycle(t *testing.T, p *framework.Profile, pod *v1.Pod, node string) *framework.PodState {
	t.Helper()
	ps, st := p.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatalf("Prepare %s: %v", pod.Name, st.Message())
	}
	if st := framework.Filter(ps, draNode(node)); st != nil {
		t.Fatalf("Filter %s on %s: %v", pod.Name, node, st.Message())
	}
	return ps
}

// TestDynamicResourcesInFlight follows two pods competing for n2's only
// device: while the first is reserved, the second finds none (also in
// another profile); Unreserve frees it; two pods filtered before either
// reserved cannot both reserve it.
func TestDynamicResourcesInFlight(t *testing.T) {
	l, _, start := draListers(t, draClass("gpu"), draSlice("n2", 1), draClaim("c1"), draClaim("c2"))
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	other, _ := draProfile(t, l, defaultDynamicResourcesArgs) // shares the DRA state
	start(pl)
	ctx := context.Background()
	podA, podB := draPod("pod-a", "c1"), draPod("pod-b", "c2")

	psA := draCycle(t, p, podA, "n2")
	if st := p.Reserve(ctx, psA, podA, "n2"); st != nil {
		t.Fatalf("Reserve pod-a: %v", st.Message())
	}
	psB, st := other.Prepare(cache.NewPodInfo(podB), nil)
	if st != nil {
		t.Fatal(st.Message())
	}
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(psB, draNode("n2"))); diff != "" {
		t.Errorf("pod-b's Filter while pod-a holds the device (-want, +got):\n%s", diff)
	}
	p.Unreserve(ctx, psA, podA, "n2")
	p.Unreserve(ctx, psA, podA, "n2") // idempotent
	psB = draCycle(t, other, podB, "n2")

	// Both filtered while the device was free: the second Reserve fails.
	psA = draCycle(t, p, podA, "n2")
	if st := other.Reserve(ctx, psB, podB, "n2"); st != nil {
		t.Fatalf("Reserve pod-b: %v", st.Message())
	}
	st = p.Reserve(ctx, psA, podA, "n2")
	if st == nil || st.Code != framework.Error || !errors.Is(st.Err, dra.ErrConflict) {
		t.Fatalf("Reserve pod-a after pod-b took the device = %v, want an Error wrapping ErrConflict", st)
	}
	p.Unreserve(ctx, psA, podA, "n2") // the cycle's cleanup: must not free pod-b's device
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(mustPrepareOn(t, p, podA), draNode("n2"))); diff != "" {
		t.Errorf("pod-a's Filter after its failed Reserve (-want, +got):\n%s", diff)
	}
}

func mustPrepareOn(t *testing.T, p *framework.Profile, pod *v1.Pod) *framework.PodState {
	t.Helper()
	ps, st := p.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatalf("Prepare %s: %v", pod.Name, st.Message())
	}
	return ps
}

// TestDynamicResourcesPreBind checks what PreBind writes (the finalizer,
// the allocation with its timestamp, the pod in reservedFor), that the
// written claim keeps the device taken, and that Unreserve afterwards takes
// the pod out of reservedFor.
func TestDynamicResourcesPreBind(t *testing.T) {
	l, client, start := draListers(t, draClass("gpu"), draSlice("n2", 1), draClaim("c1"), draClaim("c2"))
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pl.now = func() time.Time { return t0 }
	start(pl)
	ctx := context.Background()
	pod := draPod("pod-a", "c1")
	ps := draCycle(t, p, pod, "n2")
	if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("Reserve: %v", st.Message())
	}
	if st := p.PreBindPreFlight(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("PreBindPreFlight for a pod with a claim = %v, want work", st.Message())
	}
	none := draPod("pod-none")
	if st := p.PreBindPreFlight(ctx, mustPrepareOn(t, p, none), none, "n2"); st == nil || st.Code != framework.Skip {
		t.Errorf("PreBindPreFlight for a pod without claims = %v, want Skip", st)
	}
	if st := p.PreBind(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("PreBind: %v", st.Message())
	}
	got, err := client.ResourceV1().ResourceClaims("default").Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := draAllocated(draClaim("c1"), "n2", "d0").Status
	want.Allocation.AllocationTimestamp = &metav1.Time{Time: t0}
	want.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod-a", UID: "uid-pod-a"}}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("c1 status (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{resourceapi.Finalizer}, got.Finalizers); diff != "" {
		t.Errorf("c1 finalizers (-want, +got):\n%s", diff)
	}
	if pl.m.InFlight("uid-c1") != nil {
		t.Error("c1 still in flight after PreBind")
	}
	psB, _ := p.Prepare(cache.NewPodInfo(draPod("pod-b", "c2")), nil)
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(psB, draNode("n2"))); diff != "" {
		t.Errorf("pod-b's Filter after c1 was written (-want, +got):\n%s", diff)
	}

	// Binding failed after PreBind: the pod leaves reservedFor.
	p.Unreserve(ctx, ps, pod, "n2")
	got, err = client.ResourceV1().ResourceClaims("default").Get(ctx, "c1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.ReservedFor) != 0 || got.Status.Allocation == nil {
		t.Errorf("c1 after Unreserve: reservedFor %v, allocation %v; want no reservation, the allocation kept", got.Status.ReservedFor, got.Status.Allocation)
	}
}

// TestDynamicResourcesTimeouts checks the filter timeout (an Error: the pod
// is retried with backoff) and the binding timeout of a device with
// binding conditions never met (PreBind fails with ErrDeviceBindingTimeout).
func TestDynamicResourcesTimeouts(t *testing.T) {
	t.Run("filter", func(t *testing.T) {
		l, _, start := draListers(t, draClass("gpu"), draSlice("n2", 1), draClaim("c1"))
		p, pl := draProfile(t, l, dynamicResourcesArgs{filterTimeout: time.Nanosecond, bindingTimeout: time.Minute})
		start(pl)
		ps := mustPrepareOn(t, p, draPod("pod-a", "c1"))
		st := framework.Filter(ps, draNode("n2"))
		if st == nil || st.Code != framework.Error || st.Err.Error() != "node n2: timed out trying to allocate devices" {
			t.Errorf("Filter = %v, want an Error: node n2: timed out trying to allocate devices", st)
		}
	})
	t.Run("binding conditions", func(t *testing.T) {
		withConditions := func(d *resourceapi.Device) {
			d.BindingConditions, d.BindingFailureConditions = []string{"attached"}, []string{"failed"}
		}
		l, _, start := draListers(t, draClass("gpu"), draSlice("n2", 1, withConditions), draClaim("c1"))
		p, pl := draProfile(t, l, dynamicResourcesArgs{filterTimeout: 10 * time.Second, bindingTimeout: 10 * time.Minute})
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		var mu sync.Mutex
		calls := 0
		// The allocation is stamped t0; every later look is 11 minutes on.
		pl.now = func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return t0
			}
			return t0.Add(11 * time.Minute)
		}
		pl.pollGap = time.Millisecond
		start(pl)
		ctx := context.Background()
		pod := draPod("pod-a", "c1")
		ps := draCycle(t, p, pod, "n2")
		if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
			t.Fatalf("Reserve: %v", st.Message())
		}
		st := p.PreBind(ctx, ps, pod, "n2")
		if st == nil || st.Code != framework.Error || !errors.Is(st.Err, ErrDeviceBindingTimeout) {
			t.Fatalf("PreBind = %v, want an Error wrapping ErrDeviceBindingTimeout", st)
		}
	})
}

// TestDynamicResourcesBindingConditions checks that PreBind waits until
// the allocated device's binding condition holds (a driver sets it in the
// claim's status.devices), and fails at once on a failure condition.
func TestDynamicResourcesBindingConditions(t *testing.T) {
	for _, tc := range []struct {
		cond    string
		wantErr error
	}{{"attached", nil}, {"failed", ErrDeviceBindingFailed}} {
		t.Run(tc.cond, func(t *testing.T) {
			withConditions := func(d *resourceapi.Device) {
				d.BindingConditions, d.BindingFailureConditions = []string{"attached"}, []string{"failed"}
			}
			l, client, start := draListers(t, draClass("gpu"), draSlice("n2", 1, withConditions), draClaim("c1"))
			p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
			pl.pollGap = time.Millisecond
			start(pl)
			ctx := context.Background()
			pod := draPod("pod-a", "c1")
			ps := draCycle(t, p, pod, "n2")
			if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
				t.Fatalf("Reserve: %v", st.Message())
			}
			done := make(chan *framework.Status)
			go func() { done <- p.PreBind(ctx, ps, pod, "n2") }()
			// The driver's part: once the allocation is written, report the
			// device's condition.
			var claim *resourceapi.ResourceClaim
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
				var err error
				if claim, err = client.ResourceV1().ResourceClaims("default").Get(ctx, "c1", metav1.GetOptions{}); err == nil && len(claim.Status.ReservedFor) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("PreBind did not write c1")
				}
			}
			select {
			case st := <-done:
				t.Fatalf("PreBind returned %v before the binding condition was met", st)
			default:
			}
			claim = claim.DeepCopy()
			claim.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: draDriver, Pool: "n2", Device: "d0",
				Conditions: []metav1.Condition{{Type: tc.cond, Status: metav1.ConditionTrue, Reason: "Driver", LastTransitionTime: metav1.Now()}}}}
			if _, err := client.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case st := <-done:
				if tc.wantErr == nil && st != nil {
					t.Errorf("PreBind: %v, want nil", st.Message())
				}
				if tc.wantErr != nil && (st == nil || !errors.Is(st.Err, tc.wantErr)) {
					t.Errorf("PreBind = %v, want an Error wrapping %v", st, tc.wantErr)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("PreBind did not return after the driver's condition")
			}
		})
	}
}

// TestDynamicResourcesHammer runs pods competing for three devices on
// concurrent goroutines through Prepare, Filter, Reserve and then either
// Unreserve (a failed binding, retried) or PreBind: no device is allocated
// twice, every device ends allocated, and no pod is lost: each pod ends
// bound, or found every device taken.
func TestDynamicResourcesHammer(t *testing.T) {
	const pods, devices = 8, 3
	objs := []runtime.Object{draClass("gpu"), draSlice("n1", 1), draSlice("n2", devices-1)}
	for i := range pods {
		objs = append(objs, draClaim(fmt.Sprintf("c%d", i)))
	}
	l, client, start := draListers(t, objs...)
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	ctx := context.Background()
	var wg sync.WaitGroup
	bound := make([]bool, pods)
	errs := make(chan error, pods)
	for i := range pods {
		wg.Go(func() {
			pod := draPod(fmt.Sprintf("pod-%d", i), fmt.Sprintf("c%d", i))
			for attempt := 0; ; attempt++ {
				if attempt > 10000 {
					errs <- fmt.Errorf("%s: no outcome after %d attempts", pod.Name, attempt)
					return
				}
				ps, st := p.Prepare(cache.NewPodInfo(pod), nil)
				if st != nil {
					errs <- fmt.Errorf("%s: Prepare: %v", pod.Name, st.Message())
					return
				}
				node := ""
				for _, n := range []string{"n1", "n2"} {
					if framework.Filter(ps, draNode(n)) == nil {
						node = n
						break
					}
				}
				if node == "" {
					if len(pl.m.AllocatedState().AllocatedDevices) == devices && noneInFlight(pl, pods) {
						return // every device is written to another pod's claim
					}
					continue
				}
				if st := p.Reserve(ctx, ps, pod, node); st != nil {
					p.Unreserve(ctx, ps, pod, node)
					if !errors.Is(st.Err, dra.ErrConflict) {
						errs <- fmt.Errorf("%s: Reserve: %v", pod.Name, st.Message())
						return
					}
					continue
				}
				if attempt%3 == 0 { // the binding failed: retried
					p.Unreserve(ctx, ps, pod, node)
					continue
				}
				if st := p.PreBind(ctx, ps, pod, node); st != nil {
					errs <- fmt.Errorf("%s: PreBind: %v", pod.Name, st.Message())
					return
				}
				bound[i] = true
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	nBound := 0
	for _, c := range list.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			id := r.Pool + "/" + r.Device
			if o, dup := owner[id]; dup {
				t.Errorf("device %s allocated to %s and %s", id, o, c.Name)
			}
			owner[id] = c.Name
		}
		if len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].Name != "pod-"+c.Name[1:] {
			t.Errorf("claim %s reservedFor %v, want its pod alone", c.Name, c.Status.ReservedFor)
		}
	}
	for i, b := range bound {
		if b {
			nBound++
			continue
		}
		if _, err := client.ResourceV1().ResourceClaims("default").Get(ctx, fmt.Sprintf("c%d", i), metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	}
	if len(owner) != devices || nBound != devices {
		t.Errorf("%d devices allocated, %d pods bound; want %d each", len(owner), nBound, devices)
	}
}

// noneInFlight reports whether no claim c0..c<pods-1> is in flight.
func noneInFlight(pl *dynamicResources, pods int) bool {
	for i := range pods {
		if pl.m.InFlight(types.UID(fmt.Sprintf("uid-c%d", i))) != nil {
			return false
		}
	}
	return true
}

// TestDynamicResourcesScore is upstream's firstAvailable score: the node
// where the claim gets its first choice scores highest (8 minus the
// subrequest's index, normalised), weight 2.
func TestDynamicResourcesScore(t *testing.T) {
	sized := func(size string) func(*resourceapi.Device) {
		return func(d *resourceapi.Device) {
			d.Attributes = map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"size": {StringValue: ptr.To(size)}}
		}
	}
	class := func(size string) *resourceapi.DeviceClass {
		c := draClass(size)
		c.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: fmt.Sprintf(`device.attributes[%q].size == %q`, draDriver, size)}}}
		return c
	}
	claim := draClaim("c1")
	claim.Spec.Devices.Requests[0] = resourceapi.DeviceRequest{Name: "req", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "big", DeviceClassName: "big", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
		{Name: "small", DeviceClassName: "small", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}
	l, _, start := draListers(t, class("big"), class("small"), draSlice("n1", 1, sized("small")), draSlice("n2", 1, sized("big")),
		draSlice("n3", 1, sized("medium")), claim)
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	ps := mustPrepareOn(t, p, draPod("pod-a", "c1"))
	statuses := map[string]*framework.Status{}
	var feasible []*cache.NodeInfo
	for _, n := range []string{"n1", "n2", "n3"} {
		ni := draNode(n)
		if statuses[n] = framework.Filter(ps, ni); statuses[n] == nil {
			feasible = append(feasible, ni)
		}
	}
	if diff := cmp.Diff(map[string]*framework.Status{"n1": nil, "n2": nil, "n3": draReject(ReasonCannotAllocateAll)}, statuses); diff != "" {
		t.Fatalf("Filter (-want, +got):\n%s", diff)
	}
	scores, st := framework.Score(ps, feasible, nil)
	if st != nil {
		t.Fatal(st.Message())
	}
	// n1: the second choice, 7 of 8 normalised to 87; n2: the first, 100.
	if diff := cmp.Diff([]int64{87 * 2, 100 * 2}, scores); diff != "" {
		t.Errorf("scores of n1, n2 (-want, +got):\n%s", diff)
	}
}

// TestDynamicResourcesDeviceTaintRule checks that a DeviceTaintRule's
// NoSchedule taint (applied by the ResourceSlice tracker) keeps a claim
// without the toleration off the device, and with it on.
func TestDynamicResourcesDeviceTaintRule(t *testing.T) {
	rule := &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "maintenance", ResourceVersion: "1"},
		Spec: resourceapi.DeviceTaintRuleSpec{
			DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To(draDriver), Pool: ptr.To("n2"), Device: ptr.To("d0")},
			Taint:          resourceapi.DeviceTaint{Key: "example.com/maintenance", Effect: resourceapi.DeviceTaintEffectNoSchedule}}}
	tolerant := draClaim("c2")
	tolerant.Spec.Devices.Requests[0].Exactly.Tolerations = []resourceapi.DeviceToleration{
		{Key: "example.com/maintenance", Operator: resourceapi.DeviceTolerationOpExists}}
	l, _, start := draListers(t, draClass("gpu"), draSlice("n2", 1), rule, draClaim("c1"), tolerant)
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(mustPrepareOn(t, p, draPod("pod-a", "c1")), draNode("n2"))); diff != "" {
		t.Errorf("Filter of a claim not tolerating the taint (-want, +got):\n%s", diff)
	}
	if st := framework.Filter(mustPrepareOn(t, p, draPod("pod-b", "c2")), draNode("n2")); st != nil {
		t.Errorf("Filter of a claim tolerating the taint = %v, want nil", st.Message())
	}
}

// TestDynamicResourcesPostFilter checks upstream's deallocation: a claim
// allocated for a node the pod cannot use, and used by no other pod, is
// deallocated in the API and at once in the plugin's view; otherwise
// PostFilter changes nothing and lets preemption run.
func TestDynamicResourcesPostFilter(t *testing.T) {
	reserved := func(uids ...types.UID) runtime.Object {
		c := draAllocated(draClaim("c1"), "n2", "d0")
		for _, u := range uids {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: string(u), UID: u})
		}
		return c
	}
	unschedulable := &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginDynamicResources}
	tests := []struct {
		name        string
		pod         *v1.Pod
		claim       runtime.Object
		failUpdate  bool
		want        *framework.Status
		deallocated bool
	}{
		{name: "allocated elsewhere, unreserved: deallocated", pod: draPod("pod-a", "c1"), claim: reserved(),
			want:        &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginDynamicResources, Reasons: []string{ReasonClaimDeallocated}},
			deallocated: true},
		{name: "allocated elsewhere, reserved for the pod alone: deallocated", pod: draPod("pod-a", "c1"), claim: reserved("uid-pod-a"),
			want:        &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginDynamicResources, Reasons: []string{ReasonClaimDeallocated}},
			deallocated: true},
		{name: "allocated elsewhere, reserved for another pod: kept", pod: draPod("pod-a", "c1"), claim: reserved("uid-other"),
			want: unschedulable},
		{name: "not allocated: nothing to deallocate", pod: draPod("pod-a", "c1"), claim: draClaim("c1"), want: unschedulable},
		{name: "no claims: nothing to do", pod: draPod("pod-a"), claim: reserved(), want: unschedulable},
		{name: "the status update fails: an Error", pod: draPod("pod-a", "c1"), claim: reserved(), failUpdate: true,
			want: &framework.Status{Code: framework.Error, Plugin: abi.PluginDynamicResources}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// n2's only device may be taken by c1: the pod is filtered on n1.
			l, client, start := draListers(t, draClass("gpu"), draSlice("n2", 1), tc.claim)
			if tc.failUpdate {
				client.PrependReactor("update", "resourceclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("injected")
				})
			}
			p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
			start(pl)
			ps, st := p.Prepare(cache.NewPodInfo(tc.pod), nil)
			if st != nil {
				t.Fatal(st.Message())
			}
			if st := framework.Filter(ps, draNode("n1")); st == nil && len(tc.pod.Spec.ResourceClaims) > 0 {
				t.Fatal("Filter passed n1")
			}
			got := p.PostFilter(context.Background(), ps, tc.pod)
			if got != nil && got.Code == framework.Error {
				got = &framework.Status{Code: framework.Error, Plugin: got.Plugin} // the error's text aside
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PostFilter (-want, +got):\n%s", diff)
			}
			stored, err := client.ResourceV1().ResourceClaims("default").Get(context.Background(), "c1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			seen, err := pl.m.Get("default", "c1")
			if err != nil {
				t.Fatal(err)
			}
			was := tc.claim.(*resourceapi.ResourceClaim).Status.Allocation != nil
			for what, c := range map[string]*resourceapi.ResourceClaim{"API": stored, "plugin": seen} {
				if allocated := c.Status.Allocation != nil; allocated != (was && !tc.deallocated) {
					t.Errorf("%s: claim allocated %v, want %v", what, allocated, was && !tc.deallocated)
				}
				if tc.deallocated && len(c.Status.ReservedFor) != 0 {
					t.Errorf("%s: claim reserved for %v after deallocation", what, c.Status.ReservedFor)
				}
			}
		})
	}
}

// TestBuildDynamicResourcesArgs checks that DynamicResources' args reach
// the plugin, and upstream's defaults when left out.
func TestBuildDynamicResourcesArgs(t *testing.T) {
	for _, tc := range []struct {
		args string
		want dynamicResourcesArgs
	}{
		{`{}`, dynamicResourcesArgs{filterTimeout: 10 * time.Second, bindingTimeout: 10 * time.Minute}},
		{`{"filterTimeout": "0s", "bindingTimeout": "30s"}`, dynamicResourcesArgs{bindingTimeout: 30 * time.Second}},
	} {
		a, err := Row().Args(&kschedv1.PluginConfig{Name: abi.PluginDynamicResources, Args: runtime.RawExtension{Raw: []byte(tc.args)}},
			field.NewPath("args"))
		if err != nil {
			t.Fatal(err)
		}
		pl, err := Row().New(framework.NewHandle(framework.HandleOptions{}), a)
		if err != nil {
			t.Fatal(err)
		}
		got := pl.(*dynamicResources)
		if a := (dynamicResourcesArgs{got.filterTimeout, got.bindingTimeout}); a != tc.want {
			t.Errorf("%s: args %+v, want %+v", tc.args, a, tc.want)
		}
	}
}
