package podview

import (
	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
)

// The event builders below take the informer's old and new objects: old is
// nil on Add, new is nil on Delete, and a nil object's record is absent from
// the event. action is abi.ActionAdd, abi.ActionDelete, or for an update the
// result of the matching *UpdateActions function (the caller sends no event
// when that is 0).

// NodeEvent builds the event of a node change. requested and pods describe
// the pods the cache holds on the node (see [Node]); both records carry them,
// since a node update does not change them.
func NodeEvent(action abi.ActionType, old, new *v1.Node, requested v1.ResourceList, pods int) abi.Event {
	e := abi.Event{Resource: abi.ResourceNode, Action: action}
	if old != nil {
		n := Node(old, requested, pods)
		e.Old = abi.AppendNode(nil, &n)
	}
	if new != nil {
		n := Node(new, requested, pods)
		e.New = abi.AppendNode(nil, &n)
	}
	return e
}

// PodEvent builds the event of a pod change. The resource is
// abi.ResourcePod when the pod is bound (new has spec.nodeName; on Delete,
// old has) and abi.ResourceUnscheduledPod otherwise, as upstream tells
// AssignedPod from UnscheduledPod. group describes the pod's PodGroup as for
// [Pod]; the records carry no queue state and no plugin names (a queue that
// holds a pending pod's record with its queue state may put that in the
// event instead).
func PodEvent(action abi.ActionType, old, new *v1.Pod, group *GroupInfo) abi.Event {
	e := abi.Event{Resource: PodEventResource(old, new), Action: action}
	if old != nil {
		p := Pod(old, group, abi.PodQueueState{}, Plugins{})
		e.Old = abi.AppendPod(nil, &p)
	}
	if new != nil {
		p := Pod(new, group, abi.PodQueueState{}, Plugins{})
		e.New = abi.AppendPod(nil, &p)
	}
	return e
}

// PodEventResource is the resource of PodEvent(_, old, new, _): an
// assigned pod's (abi.ResourcePod) when the pod, new or else old, has a
// node, an unscheduled pod's otherwise.
func PodEventResource(old, new *v1.Pod) abi.EventResource {
	cur := new
	if cur == nil {
		cur = old
	}
	if cur != nil && cur.Spec.NodeName != "" {
		return abi.ResourcePod
	}
	return abi.ResourceUnscheduledPod
}

// PodGroupEvent builds the event of a pod group change; members is the
// number of the group's pods the scheduler knows about (see [PodGroup]).
func PodGroupEvent(action abi.ActionType, old, new *schedv1beta1.PodGroup, members int32) abi.Event {
	e := abi.Event{Resource: abi.ResourcePodGroup, Action: action}
	if old != nil {
		g := PodGroup(old, members)
		e.Old = abi.AppendPodGroup(nil, &g)
	}
	if new != nil {
		g := PodGroup(new, members)
		e.New = abi.AppendPodGroup(nil, &g)
	}
	return e
}
