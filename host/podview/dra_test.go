package podview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
)

func TestDRARecords(t *testing.T) {
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gpu"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}},
			{Name: "b", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "big", DeviceClassName: "big.example.com"},
				{Name: "small", DeviceClassName: "gpu.example.com"}}},
		}}},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{},
			ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}},
	}
	for _, tc := range []struct {
		name string
		obj  any
		res  abi.EventResource
		want abi.StorageObject
	}{
		{"allocated, reserved claim; classes once each, in order", claim, abi.ResourceResourceClaim,
			abi.StorageObject{Namespace: "ns", Name: "gpu", Allocated: true, ReservedFor: 1,
				DeviceClasses: []string{"gpu.example.com", "big.example.com"}}},
		{"pending claim", &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}},
			abi.ResourceResourceClaim, abi.StorageObject{Namespace: "ns", Name: "c"}},
		{"node-local slice", &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"},
			Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.example.com", Pool: resourceapi.ResourcePool{Name: "n1"}, NodeName: ptr.To("n1")}},
			abi.ResourceResourceSlice, abi.StorageObject{Name: "s", Driver: "gpu.example.com", Pool: "n1", NodeName: "n1"}},
		{"network slice", &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"},
			Spec: resourceapi.ResourceSliceSpec{Driver: "nic", Pool: resourceapi.ResourcePool{Name: "fabric"}, AllNodes: ptr.To(true)}},
			abi.ResourceResourceSlice, abi.StorageObject{Name: "s", Driver: "nic", Pool: "fabric"}},
		{"class", &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}},
			abi.ResourceDeviceClass, abi.StorageObject{Name: "gpu.example.com"}},
		{"taint rule", &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"},
			Spec: resourceapi.DeviceTaintRuleSpec{DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: ptr.To("gpu.example.com"), Pool: ptr.To("n1")}}},
			abi.ResourceDeviceTaintRule, abi.StorageObject{Name: "r", Driver: "gpu.example.com", Pool: "n1"}},
		{"taint rule without selector", &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "all"}},
			abi.ResourceDeviceTaintRule, abi.StorageObject{Name: "all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := StorageEvent(abi.ActionAdd, nil, tc.obj)
			if !ok || ev.Resource != tc.res || ev.Old != nil {
				t.Fatalf("StorageEvent: %v %v, old %d bytes, ok %v", ev.Resource, ev.Action, len(ev.Old), ok)
			}
			v, err := abi.ReadStorage(ev.New)
			if err != nil {
				t.Fatal(err)
			}
			var got abi.StorageObject
			if err := v.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("event record (-want, +got):\n%s", diff)
			}
		})
	}

	// A tombstone's claim is sent as allocated, whatever it last showed.
	pending := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	ev := ClaimTombstoneEvent(pending)
	v, err := abi.ReadStorage(ev.Old)
	if err != nil || ev.New != nil || ev.Resource != abi.ResourceResourceClaim || ev.Action != abi.ActionDelete || !v.Allocated() || v.Name() != "c" {
		t.Errorf("tombstone event: %v %v, allocated %v, name %q, err %v", ev.Resource, ev.Action, v.Allocated(), v.Name(), err)
	}
	if pending.Status.Allocation != nil {
		t.Error("ClaimTombstoneEvent changed the informer's claim")
	}
}

func TestDRAUpdateActions(t *testing.T) {
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1"}}
	finalizer := claim.DeepCopy()
	finalizer.ResourceVersion, finalizer.Finalizers = "2", []string{"resource.kubernetes.io/delete-protection"}
	allocated := finalizer.DeepCopy()
	allocated.Status.Allocation = &resourceapi.AllocationResult{}
	reserved := allocated.DeepCopy()
	reserved.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
	slice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "1"},
		Spec: resourceapi.ResourceSliceSpec{Driver: "d", Pool: resourceapi.ResourcePool{Name: "p", Generation: 1}}}
	resync := slice.DeepCopy()
	resync.ResourceVersion = "2"
	grown := resync.DeepCopy()
	grown.Spec.Devices = []resourceapi.Device{{Name: "gpu-1"}}
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}}
	class2 := class.DeepCopy()
	class2.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: "true"}}}
	for _, tc := range []struct {
		name     string
		old, new any
		want     abi.ActionType
	}{
		{"claim: finalizer added, status unchanged (upstream's hint skips)", claim, finalizer, 0},
		{"claim allocated", finalizer, allocated, abi.ActionUpdateOther},
		{"claim reserved", allocated, reserved, abi.ActionUpdateOther},
		{"claim deallocated", reserved, finalizer, abi.ActionUpdateOther},
		{"slice resync", slice, resync, 0},
		{"slice devices added", slice, grown, abi.ActionUpdateOther},
		{"class selector changed", class, class2, abi.ActionUpdateOther},
		{"class resync", class, class.DeepCopy(), 0},
	} {
		if got := StorageUpdateActions(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPodResourceClaims(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{
			{Name: "shared", ResourceClaimName: ptr.To("gpu-shared")},
			{Name: "own", ResourceClaimTemplateName: ptr.To("gpu-template")},
			{Name: "skipped", ResourceClaimTemplateName: ptr.To("optional")},
		}},
		Status: v1.PodStatus{ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "skipped"}}},
	}
	if got, want := podResourceClaims(pod), []string{"gpu-shared", ""}; !cmp.Equal(got, want) {
		t.Errorf("before generation: %q, want %q", got, want)
	}
	if rec := Pod(pod, nil, abi.PodQueueState{}, Plugins{}); !cmp.Equal(rec.ResourceClaims, []string{"gpu-shared", ""}) {
		t.Errorf("Pod record's resource claims %q", rec.ResourceClaims)
	}
	pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: "own", ResourceClaimName: ptr.To("p-own-x7k2p")})
	if got, want := podResourceClaims(pod), []string{"gpu-shared", "p-own-x7k2p"}; !cmp.Equal(got, want) {
		t.Errorf("after generation: %q, want %q", got, want)
	}
	rec := Pod(pod, nil, abi.PodQueueState{}, Plugins{})
	v, err := abi.ReadPod(abi.AppendPod(nil, &rec))
	if err != nil {
		t.Fatal(err)
	}
	if !v.UsesResourceClaim("ns", "p-own-x7k2p") || !v.ResourceClaimsGenerated() {
		t.Errorf("pod record: resource claims %d, generated %v", v.ResourceClaims().Len(), v.ResourceClaimsGenerated())
	}
	pod.Spec.ResourceClaims = append(pod.Spec.ResourceClaims, v1.PodResourceClaim{Name: "neither"})
	if got, want := podResourceClaims(pod), []string{"gpu-shared", "p-own-x7k2p", ""}; !cmp.Equal(got, want) {
		t.Errorf("a claim with neither name nor template (newer API): %q, want %q", got, want)
	}
	if podResourceClaims(&v1.Pod{}) != nil {
		t.Error("a pod without resource claims has some")
	}
}
