package queue

import (
	"github.com/wasmsched/wasmsched/abi"
)

// otherPlugins is the mask bit of every plugin name past the first 63 the
// queue has seen. A pod with that bit is a candidate for any event someone
// registered: the slot decides by name anyway, so over-including costs
// only a larger batch.
const otherPlugins = uint64(1) << 63

// pluginIndex gives plugin names bits, so that choosing the candidates of
// an event is one AND per pod instead of string compares. Names are never
// forgotten: the index holds at most 63 of them plus the shared bit.
// Guarded by Queue.mu.
type pluginIndex struct {
	bits map[string]uint64
	all  uint64 // every bit handed out
}

func (x *pluginIndex) bit(name string) uint64 {
	if b, ok := x.bits[name]; ok {
		return b
	}
	if x.bits == nil {
		x.bits = map[string]uint64{}
	}
	b := otherPlugins
	if n := len(x.bits); n < 63 {
		b = 1 << n
	}
	x.bits[name] = b
	x.all |= b
	return b
}

func (x *pluginIndex) mask(r rejectors) uint64 {
	var m uint64
	for _, n := range r.Unschedulable {
		m |= x.bit(n)
	}
	for _, n := range r.Pending {
		m |= x.bit(n)
	}
	return m
}

// registration is an abi.Registration with its plugin's bit.
type registration struct {
	res      abi.EventResource
	act      abi.ActionType
	bit      uint64
	wildcard bool // abi.PluginWildcard: every rejected pod
}

// interest is what the registrations say about one event.
type interest struct {
	mask     uint64 // plugins that registered it
	wildcard bool   // a PluginWildcard registration matched
	any      bool   // some registration matched
}

// interestIn matches an event against the registrations: the resource
// matches (or was registered as abi.ResourceWildcard) and the actions
// overlap, as the guest SDK matches them.
func interestIn(regs []registration, res abi.EventResource, act abi.ActionType) interest {
	var in interest
	for i := range regs {
		r := &regs[i]
		if !r.res.Matches(res) || r.act&act == 0 {
			continue
		}
		in.any = true
		if r.wildcard {
			in.wildcard = true
		} else {
			in.mask |= r.bit
		}
	}
	return in
}

// covers reports whether a pod rejected by the plugins of mask is a
// candidate (none for an empty mask).
func (in interest) covers(mask uint64) bool {
	return mask != 0 && in.any && (in.wildcard || mask&in.mask != 0 || mask&otherPlugins != 0)
}

// eventLabel is the label of an event in the metrics, after upstream's
// ClusterEvent.Label: "NodeAdd", "AssignedPodDelete",
// "NodeUpdateNodeLabel", "UnscheduledPodUpdate" (the general update).
// Several action bits are joined with "|".
func eventLabel(res abi.EventResource, act abi.ActionType) string {
	var r string
	switch res {
	case abi.ResourcePod:
		r = "AssignedPod"
	case abi.ResourceUnscheduledPod:
		r = "UnscheduledPod"
	case abi.ResourceNode:
		r = "Node"
	case abi.ResourcePodGroup:
		r = "scheduling.k8s.io/PodGroup"
	case abi.ResourceStorageClass, abi.ResourceCSINode, abi.ResourceCSIDriver,
		abi.ResourceCSIStorageCapacity, abi.ResourceVolumeAttachment:
		r = "storage.k8s.io/" + res.String()
	case abi.ResourceResourceClaim, abi.ResourceResourceSlice, abi.ResourceDeviceClass, abi.ResourceDeviceTaintRule:
		r = "resource.k8s.io/" + res.String()
	default:
		r = res.String()
	}
	switch act {
	case abi.ActionUpdateOther:
		return r + "Update"
	case abi.ActionAll:
		return r + "All"
	}
	return r + act.String()
}

type labelKey struct {
	res abi.EventResource
	act abi.ActionType
}
