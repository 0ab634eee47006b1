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
	errNoOldPod   = errors.New("hints: pod event without a readable old pod")
	errNoNewPod   = errors.New("hints: pod event without a readable new pod")
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
