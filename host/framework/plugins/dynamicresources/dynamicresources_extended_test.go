package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

const extGPU = "gpu.wasmsched.test/gpu"

// extClass is class gpu mapping extGPU.
func extClass() *resourceapi.DeviceClass {
	c := draClass("gpu")
	c.Spec.ExtendedResourceName = ptr.To(extGPU)
	return c
}

func classLister(t *testing.T, classes ...*resourceapi.DeviceClass) resourcelisters.DeviceClassLister {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, c := range classes {
		if err := idx.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return resourcelisters.NewDeviceClassLister(idx)
}

// TestExtendedRequests pins the special claim's requests and the pod's
// request mappings to upstream's naming: container-<index among init and
// regular containers>-request-<index of the resource among the container's
// sorted request names>; an init container reuses the requests of the
// long-lived containers after it and asks for the rest only; the largest
// such rest serves every init container.
func TestExtendedRequests(t *testing.T) {
	exactly := func(name string, n int64) resourceapi.DeviceRequest {
		return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
			AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: n}}
	}
	m := func(container, request string) v1.ContainerExtendedResourceRequest {
		return v1.ContainerExtendedResourceRequest{ContainerName: container, ResourceName: extGPU, RequestName: request}
	}
	tests := []struct {
		name     string
		pod      *ft.PodBuilder
		want     []resourceapi.DeviceRequest
		mappings []v1.ContainerExtendedResourceRequest
	}{
		{name: "one container", pod: ft.MakePod().Req("cpu", "1", extGPU, "2"),
			want: []resourceapi.DeviceRequest{exactly("container-0-request-1", 2)}, mappings: []v1.ContainerExtendedResourceRequest{m("c0", "container-0-request-1")}},
		{name: "two containers, one without", pod: ft.MakePod().Req("cpu", "1").Req(extGPU, "1", "memory", "1Gi"),
			want: []resourceapi.DeviceRequest{exactly("container-1-request-0", 1)}, mappings: []v1.ContainerExtendedResourceRequest{m("c1", "container-1-request-0")}},
		{name: "init container reuses the regular one's devices", pod: ft.MakePod().InitReq(false, extGPU, "1").Req(extGPU, "2"),
			want:     []resourceapi.DeviceRequest{exactly("container-1-request-0", 2)},
			mappings: []v1.ContainerExtendedResourceRequest{m("c0", "container-1-request-0"), m("i0", "container-1-request-0")}},
		{name: "init containers asking for more: the largest rest serves both",
			pod:      ft.MakePod().InitReq(false, extGPU, "3").InitReq(false, extGPU, "4").Req(extGPU, "1"),
			want:     []resourceapi.DeviceRequest{exactly("container-1-request-0", 3), exactly("container-2-request-0", 1)},
			mappings: []v1.ContainerExtendedResourceRequest{m("c0", "container-2-request-0"), m("i0", "container-2-request-0"), m("i0", "container-1-request-0"), m("i1", "container-2-request-0"), m("i1", "container-1-request-0")}},
		{name: "sidecar is long-lived", pod: ft.MakePod().InitReq(true, extGPU, "1").Req(extGPU, "1"),
			want:     []resourceapi.DeviceRequest{exactly("container-0-request-0", 1), exactly("container-1-request-0", 1)},
			mappings: []v1.ContainerExtendedResourceRequest{m("i0", "container-0-request-0"), m("c0", "container-1-request-0")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, mappings := extendedRequests(tc.pod.P, extGPU, "gpu")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.mappings, mappings); diff != "" {
				t.Errorf("mappings (-want, +got):\n%s", diff)
			}
		})
	}
}

// generatedNames makes the fake API give a claim created with
// generateName the name the API server would (the prefix and a suffix)
// and a UID.
func generatedNames(t *testing.T) k8stesting.ReactionFunc {
	n := 0
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		c := action.(k8stesting.CreateAction).GetObject().(*resourceapi.ResourceClaim)
		if c.Name == "" && c.GenerateName != "" {
			n++
			c.Name = c.GenerateName + strings.Repeat("x", n)
			c.UID = types.UID("uid-" + c.Name)
		}
		return false, nil, nil
	}
}

// TestDynamicResourcesExtended follows a pod requesting two devices of
// class gpu through its extended resource: n2 publishes two devices, n1
// none, n3 advertises the resource (device plugin). PreBind creates the
// claim as upstream's and writes the pod's extendedResourceClaimStatus;
// Unreserve deletes the claim and frees the devices.
func TestDynamicResourcesExtended(t *testing.T) {
	pod := ft.MakePod().Req("cpu", "1", extGPU, "2").P
	l, client, start := draListers(t, extClass(), draSlice("n2", 2), pod)
	client.PrependReactor("create", "resourceclaims", generatedNames(t))
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	ctx := context.Background()

	ps, st := p.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatal(st.Message())
	}
	got := map[string]*framework.Status{}
	for _, n := range []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4"), ft.MakeNode("n2", "cpu", "4"), ft.MakeNode("n3", "cpu", "4", extGPU, "2")} {
		got[n.N.Name] = framework.Filter(ps, n.Label(v1.LabelHostname, n.N.Name).Info())
	}
	if diff := cmp.Diff(map[string]*framework.Status{"n1": draReject(ReasonCannotAllocateAll), "n2": nil, "n3": nil}, got); diff != "" {
		t.Errorf("Filter (-want, +got):\n%s", diff)
	}
	// On n3 the device plugin provides it: nothing to reserve or write.
	if st := p.Reserve(ctx, ps, pod, "n3"); st != nil {
		t.Fatalf("Reserve on n3: %v", st.Message())
	}
	if st := p.PreBind(ctx, ps, pod, "n3"); st != nil {
		t.Fatalf("PreBind on n3: %v", st.Message())
	}
	if list, _ := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{}); len(list.Items) != 0 {
		t.Fatalf("claims created for a node whose device plugin provides the resource: %v", list.Items)
	}

	if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("Reserve on n2: %v", st.Message())
	}
	// In flight: another pod asking for a device finds none.
	other := ft.MakePod().Req(extGPU, "1").P
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(mustPrepareOn(t, p, other), draNode("n2"))); diff != "" {
		t.Errorf("another pod's Filter while the devices are in flight (-want, +got):\n%s", diff)
	}
	if st := p.PreBind(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("PreBind on n2: %v", st.Message())
	}
	list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("claims after PreBind: %v, %v; want one", list, err)
	}
	c := list.Items[0]
	if !strings.HasPrefix(c.Name, pod.Name+"-extended-resources-") {
		t.Errorf("claim name %q, want the prefix %s-extended-resources-", c.Name, pod.Name)
	}
	wantMeta := metav1.ObjectMeta{
		Annotations:     map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}},
		Finalizers:      []string{resourceapi.Finalizer},
	}
	gotMeta := metav1.ObjectMeta{Annotations: c.Annotations, OwnerReferences: c.OwnerReferences, Finalizers: c.Finalizers}
	if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
		t.Errorf("claim metadata (-want, +got):\n%s", diff)
	}
	wantReqs := []resourceapi.DeviceRequest{{Name: "container-0-request-1", Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2}}}
	if diff := cmp.Diff(wantReqs, c.Spec.Devices.Requests); diff != "" {
		t.Errorf("claim requests (-want, +got):\n%s", diff)
	}
	if a := c.Status.Allocation; a == nil || len(a.Devices.Results) != 2 || a.Devices.Results[0].Pool != "n2" ||
		a.Devices.Results[0].Request != "container-0-request-1" {
		t.Errorf("claim allocation %+v, want n2's two devices for container-0-request-1", a)
	}
	wantRes := []resourceapi.ResourceClaimConsumerReference{{APIGroup: "", Resource: "pods", Name: pod.Name, UID: pod.UID}}
	if diff := cmp.Diff(wantRes, c.Status.ReservedFor); diff != "" {
		t.Errorf("reservedFor (-want, +got):\n%s", diff)
	}
	gotPod, err := client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := &v1.PodExtendedResourceClaimStatus{ResourceClaimName: c.Name, RequestMappings: []v1.ContainerExtendedResourceRequest{
		{ContainerName: "c0", ResourceName: extGPU, RequestName: "container-0-request-1"}}}
	if diff := cmp.Diff(wantStatus, gotPod.Status.ExtendedResourceClaimStatus); diff != "" {
		t.Errorf("pod's extendedResourceClaimStatus (-want, +got):\n%s", diff)
	}
	// Written and assumed: the devices stay taken.
	if diff := cmp.Diff(draReject(ReasonCannotAllocateAll), framework.Filter(mustPrepareOn(t, p, other), draNode("n2"))); diff != "" {
		t.Errorf("another pod's Filter after PreBind (-want, +got):\n%s", diff)
	}

	p.Unreserve(ctx, ps, pod, "n2")
	if list, _ := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{}); len(list.Items) != 0 {
		t.Errorf("claims after Unreserve: %v, want none", list.Items)
	}
	if got, err := pl.m.Get("default", c.Name); err == nil {
		t.Errorf("the deleted claim is still seen: %+v", got)
	}
	if _, st := p.Prepare(cache.NewPodInfo(pod), nil); st != nil {
		t.Errorf("the pod's next Prepare: %v, want its deleted claim not found stale", st.Message())
	}
	if st := framework.Filter(mustPrepareOn(t, p, other), draNode("n2")); st != nil {
		t.Errorf("another pod's Filter after Unreserve: %v, want the devices free", st.Message())
	}
}

// TestDynamicResourcesExtendedStale checks that a claim for the pod's
// extended resources left by an earlier attempt makes PreFilter reject the
// pod, naming the claim, and gets deleted.
func TestDynamicResourcesExtendedStale(t *testing.T) {
	pod := ft.MakePod().Req(extGPU, "1").P
	stale := draAllocated(draClaim(pod.Name+"-extended-resources-abcde"), "n2", "d0")
	stale.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
	stale.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	stale.Finalizers = []string{resourceapi.Finalizer}
	l, client, start := draListers(t, extClass(), draSlice("n2", 1), pod, stale)
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	ctx := context.Background()

	_, st := p.Prepare(cache.NewPodInfo(pod), nil)
	want := draReject("resourceclaim default/" + stale.Name + " for the pod's extended resources is left from an earlier attempt and is being deleted")
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("Prepare (-want, +got):\n%s", diff)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := client.ResourceV1().ResourceClaims("default").Get(ctx, stale.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stale claim was not deleted: %v", err)
		}
	}
}

// TestDynamicResourcesExtendedWithClaims checks that the pod's own claim
// and its extended resources are allocated together on each node: n2's
// two devices fit both, n3's one device fits either but not both.
func TestDynamicResourcesExtendedWithClaims(t *testing.T) {
	pod := ft.MakePod().Req(extGPU, "1").P
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "c0", ResourceClaimName: ptr.To("c1")}}
	class := extClass()
	l, _, start := draListers(t, class, draSlice("n2", 2), draSlice("n3", 1), draClaim("c1"), pod)
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	start(pl)
	ps := mustPrepareOn(t, p, pod)
	got := map[string]*framework.Status{}
	for _, n := range []string{"n2", "n3"} {
		got[n] = framework.Filter(ps, draNode(n))
	}
	if diff := cmp.Diff(map[string]*framework.Status{"n2": nil, "n3": draReject(ReasonCannotAllocateAll)}, got); diff != "" {
		t.Errorf("Filter (-want, +got):\n%s", diff)
	}
}

// TestDynamicResourcesExtendedBindingConditions checks that PreBind waits
// for the binding conditions of the devices allocated for the extended
// resources too, as upstream's: the driver reports a failure condition, so
// PreBind fails (it would succeed had it not waited).
func TestDynamicResourcesExtendedBindingConditions(t *testing.T) {
	withConditions := func(d *resourceapi.Device) {
		d.BindingConditions, d.BindingFailureConditions = []string{"attached"}, []string{"failed"}
	}
	pod := ft.MakePod().Req(extGPU, "1").P
	l, client, start := draListers(t, extClass(), draSlice("n2", 1, withConditions), pod)
	client.PrependReactor("create", "resourceclaims", generatedNames(t))
	p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
	pl.pollGap = time.Millisecond
	start(pl)
	ctx := context.Background()
	ps := draCycle(t, p, pod, "n2")
	if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
		t.Fatalf("Reserve: %v", st.Message())
	}
	done := make(chan *framework.Status, 1)
	go func() { done <- p.PreBind(ctx, ps, pod, "n2") }()
	var claim *resourceapi.ResourceClaim
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		list, err := client.ResourceV1().ResourceClaims("default").List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 1 && len(list.Items[0].Status.ReservedFor) > 0 {
			claim = &list.Items[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("PreBind did not write the claim")
		}
	}
	claim.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: draDriver, Pool: "n2", Device: "d0",
		Conditions: []metav1.Condition{{Type: "failed", Status: metav1.ConditionTrue, Reason: "Driver", LastTransitionTime: metav1.Now()}}}}
	if _, err := client.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if st == nil || !errors.Is(st.Err, ErrDeviceBindingFailed) {
			t.Errorf("PreBind = %v, want an Error wrapping %v", st, ErrDeviceBindingFailed)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("PreBind did not return after the driver's condition")
	}
}

// claimCounter is a ClaimRecorder counting creations by outcome.
type claimCounter struct {
	mu      sync.Mutex
	counted map[bool]int
}

func (c *claimCounter) ClaimCreated(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counted[ok]++
}

// TestDynamicResourcesExtendedCountsCreates checks that PreBind counts the
// creation of the claim for the pod's extended resources, and its failure.
func TestDynamicResourcesExtendedCountsCreates(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			pod := ft.MakePod().Req("cpu", "1", extGPU, "1").P
			l, client, start := draListers(t, extClass(), draSlice("n2", 1), pod)
			client.PrependReactor("create", "resourceclaims", generatedNames(t))
			if fail {
				client.PrependReactor("create", "resourceclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("injected")
				})
			}
			counter := &claimCounter{counted: map[bool]int{}}
			p, pl := draProfile(t, l, defaultDynamicResourcesArgs)
			pl.claims = counter
			start(pl)
			ctx := context.Background()
			ps := draCycle(t, p, pod, "n2")
			if st := p.Reserve(ctx, ps, pod, "n2"); st != nil {
				t.Fatalf("Reserve: %v", st.Message())
			}
			if st := p.PreBind(ctx, ps, pod, "n2"); (st != nil) != fail {
				t.Fatalf("PreBind: %v, want failed %v", st, fail)
			}
			if diff := cmp.Diff(map[bool]int{!fail: 1}, counter.counted); diff != "" {
				t.Errorf("creations counted by success (-want, +got):\n%s", diff)
			}
		})
	}
}
