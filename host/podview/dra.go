package podview

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/wasmsched/wasmsched/abi"
)

// podResourceClaims resolves the pod's spec.resourceClaims to claim names as
// upstream's DynamicResources does (resourceclaim.Name): resourceClaimName,
// or the claim status.resourceClaimStatuses names for a template; "" for a
// template claim not generated yet, so that a QueueingHint sees the pod
// still waits for it. A claim the controller chose not to create (a status
// without a name) is left out, as the plugin ignores it.
func podResourceClaims(pod *v1.Pod) []string {
	var names []string
	for i := range pod.Spec.ResourceClaims {
		n, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		switch {
		case err != nil:
			names = append(names, "")
		case n != nil:
			names = append(names, *n)
		}
	}
	return names
}

// draObject returns the resource and the record of a DRA object; res is 0
// for a typed nil, ok false for an object of another type.
func draObject(obj any) (res abi.EventResource, o abi.StorageObject, ok bool) {
	switch x := obj.(type) {
	case *resourceapi.ResourceClaim:
		if x != nil {
			o, res = ResourceClaim(x), abi.ResourceResourceClaim
		}
	case *resourceapi.ResourceSlice:
		if x != nil {
			o = abi.StorageObject{Name: x.Name, Driver: x.Spec.Driver, Pool: x.Spec.Pool.Name}
			if x.Spec.NodeName != nil {
				o.NodeName = *x.Spec.NodeName
			}
			res = abi.ResourceResourceSlice
		}
	case *resourceapi.DeviceClass:
		if x != nil {
			o, res = abi.StorageObject{Name: x.Name}, abi.ResourceDeviceClass
		}
	case *resourceapi.DeviceTaintRule:
		if x != nil {
			o = abi.StorageObject{Name: x.Name}
			if s := x.Spec.DeviceSelector; s != nil {
				o.Driver, o.Pool = deref(s.Driver), deref(s.Pool)
			}
			res = abi.ResourceDeviceTaintRule
		}
	default:
		return 0, o, false
	}
	return res, o, true
}

// ResourceClaim is the record of a claim: whether it is allocated, how many
// consumers it is reserved for, and the device classes its requests name.
func ResourceClaim(c *resourceapi.ResourceClaim) abi.StorageObject {
	o := abi.StorageObject{
		Namespace: c.Namespace, Name: c.Name,
		Allocated: c.Status.Allocation != nil, ReservedFor: int32(len(c.Status.ReservedFor)),
	}
	add := func(class string) {
		for _, have := range o.DeviceClasses {
			if have == class {
				return
			}
		}
		o.DeviceClasses = append(o.DeviceClasses, class)
	}
	for i := range c.Spec.Devices.Requests {
		r := &c.Spec.Devices.Requests[i]
		if r.Exactly != nil {
			add(r.Exactly.DeviceClassName)
		}
		for j := range r.FirstAvailable {
			add(r.FirstAvailable[j].DeviceClassName)
		}
	}
	return o
}

// ClaimTombstoneEvent is the event of a claim whose delete the watch missed
// (a tombstone, c its last known state): the record is marked allocated,
// since an allocation may have come and gone unseen, so that hints queue
// the pods as upstream's does for an unknown final state.
func ClaimTombstoneEvent(c *resourceapi.ResourceClaim) abi.Event {
	o := ResourceClaim(c)
	o.Allocated = true
	return abi.Event{Resource: abi.ResourceResourceClaim, Action: abi.ActionDelete, Old: abi.AppendStorage(nil, &o)}
}

// sameDRA reports an update of a DRA object that no hint can act on: for a
// claim, an unchanged status (its spec is immutable; upstream's hint skips
// such updates for every pod); for the others, a change of nothing but the
// resourceVersion, managedFields and the type meta. handled is false for
// objects of other types.
func sameDRA(old, new any) (unchanged, handled bool) {
	strip := func(m *metav1.ObjectMeta, t *metav1.TypeMeta) {
		*t, m.ResourceVersion, m.ManagedFields = metav1.TypeMeta{}, "", nil
	}
	switch o := old.(type) {
	case *resourceapi.ResourceClaim:
		n, ok := new.(*resourceapi.ResourceClaim)
		return ok && o != nil && n != nil && equality.Semantic.DeepEqual(&o.Status, &n.Status), true
	case *resourceapi.ResourceSlice:
		n, ok := new.(*resourceapi.ResourceSlice)
		return ok && same(o, n, func(x *resourceapi.ResourceSlice) { strip(&x.ObjectMeta, &x.TypeMeta) }), true
	case *resourceapi.DeviceClass:
		n, ok := new.(*resourceapi.DeviceClass)
		return ok && same(o, n, func(x *resourceapi.DeviceClass) { strip(&x.ObjectMeta, &x.TypeMeta) }), true
	case *resourceapi.DeviceTaintRule:
		n, ok := new.(*resourceapi.DeviceTaintRule)
		return ok && same(o, n, func(x *resourceapi.DeviceTaintRule) { strip(&x.ObjectMeta, &x.TypeMeta) }), true
	}
	return false, false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
