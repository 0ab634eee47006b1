package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/placement"
)

// taintNodeUnschedulable is the taint NodeUnschedulable stands for
// (v1.TaintNodeUnschedulable): a pod that tolerates it with effect
// NoSchedule tolerates spec.unschedulable.
const taintNodeUnschedulable = "node.kubernetes.io/unschedulable"

// taintTolerationAfterNodeChange mirrors tainttoleration's
// isSchedulableAfterNodeChange: Queue when the node had (or, being new, is
// taken to have had) a NoSchedule or NoExecute taint the pod does not
// tolerate, and now has none.
func taintTolerationAfterNodeChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	tols := p.Tolerations()
	was := true
	if hasOld {
		was = hasUntoleratedTaint(old.Taints(), tols)
	}
	return queueIf(was && !hasUntoleratedTaint(node.Taints(), tols)), nil
}

// taintTolerationAfterPodTolerationChange mirrors tainttoleration's
// isSchedulableAfterTargetPodTolerationChange: the pod's own new toleration
// may make it schedulable, so Queue.
func taintTolerationAfterPodTolerationChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self), nil
}

// nodeUnschedulableAfterNodeChange mirrors nodeunschedulable's
// isSchedulableAfterNodeChange: Queue for a node added schedulable or one
// whose spec.unschedulable went from true to false.
func nodeUnschedulableAfterNodeChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if hasOld {
		return queueIf(old.Unschedulable() && !node.Unschedulable()), nil
	}
	return queueIf(!node.Unschedulable()), nil
}

// nodeUnschedulableAfterPodTolerationChange mirrors nodeunschedulable's
// isSchedulableAfterTargetPodTolerationChange: Queue when the pod's updated
// tolerations tolerate node.kubernetes.io/unschedulable:NoSchedule.
func nodeUnschedulableAfterPodTolerationChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	updated, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	if !self {
		return abi.HintSkip, nil
	}
	unsched := abi.Taint{Key: taintNodeUnschedulable, Effect: abi.EffectNoSchedule}
	return queueIf(toleratesTaint(updated.Tolerations(), unsched)), nil
}

// hasUntoleratedTaint is upstream's FindMatchingUntoleratedTaint with
// DoNotScheduleTaintsFilterFunc: some NoSchedule or NoExecute taint is
// tolerated by none of tols. Other effects (PreferNoSchedule, and
// abi.EffectUnknown) never block.
func hasUntoleratedTaint(taints abi.TaintList, tols abi.TolerationList) bool {
	for i := range taints.Len() {
		t := taints.At(i)
		if t.Effect != abi.EffectNoSchedule && t.Effect != abi.EffectNoExecute {
			continue
		}
		if !toleratesTaint(tols, t) {
			return true
		}
	}
	return false
}

// toleratesTaint is upstream's TolerationsTolerateTaint, with the guest
// SDK's toleration rule (placement.Tolerates: Lt and Gt on canonical
// decimal integers, unknown operators and effects tolerate nothing).
func toleratesTaint(tols abi.TolerationList, t abi.Taint) bool { return placement.Tolerated(tols, t) }
