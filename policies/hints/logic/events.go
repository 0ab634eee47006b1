package logic

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
)

// The errors a hint returns for an event that lacks the object it needs
// (upstream's util.As failing). A hint error becomes abi.HintError, which
// the host treats as Queue, as upstream treats a hint's error.
var (
	errNoNewNode  = errors.New("hints: node event without a readable new node")
	errNoOldNode  = errors.New("hints: node update whose old node is unreadable")
	errNoNode     = errors.New("hints: node event without a node")
	errNoOldPod   = errors.New("hints: pod event without a readable old pod")
	errNoNewPod   = errors.New("hints: pod event without a readable new pod")
	errNoPod      = errors.New("hints: pod event without a pod")
	errNoNewGroup = errors.New("hints: pod group event without a readable new pod group")
	errNoOldGroup = errors.New("hints: pod group update without a readable old pod group")
)

func queueIf(v bool) abi.Hint {
	if v {
		return abi.HintQueue
	}
	return abi.HintSkip
}

// nodes returns the node of a node event, and the node before the change;
// hasOld is false when the event carries none (an Add), as upstream tells an
// add by a nil old object.
func nodes(ev abi.EventView) (old abi.NodeView, hasOld bool, node abi.NodeView, err error) {
	node, ok := ev.NewNode()
	if !ok {
		return old, false, node, errNoNewNode
	}
	if ev.OldBytes() == nil {
		return old, false, node, nil
	}
	if old, ok = ev.OldNode(); !ok {
		return old, false, node, errNoOldNode
	}
	return old, true, node, nil
}

// nodeChange returns the nodes of a node event that may be an Add (no old
// node), an update (both) or a Delete (no new node), as upstream tells them
// by nil objects (abi.EventView.NodeChange). An object that is there but
// unreadable, or an event with neither, is an error.
func nodeChange(ev abi.EventView) (old abi.NodeView, hasOld bool, node abi.NodeView, hasNew bool, err error) {
	old, hasOld, node, hasNew, f := ev.NodeChange()
	return old, hasOld, node, hasNew, changeErr(f, errNoNewNode, errNoOldNode, errNoNode)
}

// podChange is nodeChange for a pod event: the pod before (absent on Add)
// and after (absent on Delete).
func podChange(ev abi.EventView) (old abi.PodView, hasOld bool, pod abi.PodView, hasNew bool, err error) {
	old, hasOld, pod, hasNew, f := ev.PodChange()
	return old, hasOld, pod, hasNew, changeErr(f, errNoNewPod, errNoOldPod, errNoPod)
}

// changeErr is the hint's error for a fault of an event's objects: the
// unreadable new object, the unreadable old one, or neither there.
func changeErr(f abi.ChangeFault, noNew, noOld, none error) error {
	switch f {
	case abi.ChangeBadNew:
		return noNew
	case abi.ChangeBadOld:
		return noOld
	case abi.ChangeEmpty:
		return none
	}
	return nil
}

// podPair returns the pod of an update event before and after it.
func podPair(ev abi.EventView) (before, after abi.PodView, err error) {
	before, ok := ev.OldPod()
	if !ok {
		return before, after, errNoOldPod
	}
	if after, ok = ev.NewPod(); !ok {
		return before, after, errNoNewPod
	}
	return before, after, nil
}

// targetPod returns the updated pod of an unscheduled pod's update event and
// whether it is p itself. Upstream delivers an update of a pending pod to
// that pod's hints only (resource TargetPod); the ABI has no such resource,
// so the hints that mirror TargetPod ones check that the event is about p
// and skip updates of other pods.
func targetPod(ev abi.EventView, p abi.PodView) (updated abi.PodView, self bool, err error) {
	updated, ok := ev.NewPod()
	if !ok {
		return updated, false, errNoNewPod
	}
	return updated, samePod(updated, p), nil
}

// samePod compares UIDs when both pods have one, else namespaced names.
func samePod(a, b abi.PodView) bool {
	if ua, ub := a.UID(), b.UID(); ua != "" && ub != "" {
		return ua == ub
	}
	return a.Namespace() == b.Namespace() && a.Name() == b.Name()
}

// sameLabels reports whether two label lists hold the same key/value pairs,
// in any order (upstream compares maps; an absent list is an empty map).
func sameLabels(a, b abi.KVList) bool {
	return a.Len() == b.Len() && kvsWithin(a, b) && kvsWithin(b, a)
}

// kvsWithin reports whether every pair of a is in b.
func kvsWithin(a, b abi.KVList) bool {
	for i := range a.Len() {
		k, v := a.At(i)
		if w, ok := b.Get(k); !ok || w != v {
			return false
		}
	}
	return true
}

// sameTaints compares two nodes' taints in order, as upstream's
// equality.Semantic.DeepEqual of spec.taints does, on what the record holds
// (key, value, effect; not timeAdded).
func sameTaints(a, b abi.TaintList) bool { return sameList(a, b) }

// sameTolerations compares two pods' tolerations in order, as upstream's
// equality.Semantic.DeepEqual of spec.tolerations does, on what the record
// holds (key, value, operator, effect; not tolerationSeconds).
func sameTolerations(a, b abi.TolerationList) bool { return sameList(a, b) }

// sameList compares two record lists element by element, in order.
func sameList[T comparable, L interface {
	Len() int
	At(int) T
}](a, b L) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if a.At(i) != b.At(i) {
			return false
		}
	}
	return true
}
