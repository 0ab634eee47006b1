package logic

import "github.com/wasmsched/wasmsched/abi"

// The PodTopologySpread hints. Upstream's decide with the pending pod's
// DoNotSchedule topology spread constraints (label selectors, topology
// keys, nodeTaintsPolicy), or the plugin's default constraints for a pod
// without any. The ABI's pod record carries no constraints, so each hint
// makes upstream's checks that need none, and queues where the answer
// depends on a constraint (the moves upstream makes for a plugin without
// hints), so no pod upstream would move is left waiting for the flush.

// spreadAfterAssignedPodChange mirrors podtopologyspread's
// isSchedulableAfterAssignedPodChange for a bound pod added, deleted or
// relabelled:
//   - Skip unless the pod is involved in the spreading (upstream's
//     involvedInTopologySpreading): it has a node (upstream: or a nominated
//     node, which the ABI lacks; the host sends these events for bound pods
//     only) and it is in the pending pod's namespace, the only one whose
//     pods any constraint counts;
//   - on an update, Skip when the labels did not change (upstream's
//     isSchedulableAfterPodLabelChange): no selector can match differently;
//   - otherwise Queue: upstream matches the added or deleted pod's labels,
//     or the update's before and after, against the constraints' selectors.
func spreadAfterAssignedPodChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, cur, hasNew, err := podChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if (hasNew && !involvedInSpreading(cur, p)) || (hasOld && !involvedInSpreading(old, p)) {
		return abi.HintSkip, nil
	}
	if hasOld && hasNew {
		return queueIf(!sameLabels(old.Labels(), cur.Labels())), nil
	}
	return abi.HintQueue, nil
}

// involvedInSpreading is upstream's involvedInTopologySpreading: pod q
// counts in p's spreading when it is on a node and in p's namespace.
func involvedInSpreading(q, p abi.PodView) bool {
	return q.NodeName() != "" && q.Namespace() == p.Namespace()
}

// spreadAfterPodChange mirrors podtopologyspread's
// isSchedulableAfterTargetPodChange, for the pod's own toleration or label
// update. Upstream queues when the tolerations changed and a constraint
// honours node taints (nodeTaintsPolicy: Honor), or when the labels changed
// so that some constraint's selector matches the pod differently. Without
// the constraints: Queue when the tolerations or the labels changed, Skip
// when neither did.
func spreadAfterPodChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	updated, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	if !self {
		return abi.HintSkip, nil
	}
	before, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	return queueIf(!sameTolerations(before.Tolerations(), updated.Tolerations()) ||
		!sameLabels(before.Labels(), updated.Labels())), nil
}

// spreadAfterNodeChange mirrors podtopologyspread's
// isSchedulableAfterNodeChange. Upstream queues a node added or deleted
// that has every constraint's topology key, and an update that changed
// whether the node has them all, or, when it has them all, changed one of
// their values or the taints. Without the constraints: Queue every node
// added or deleted, and an update whose labels or taints changed; Skip an
// update with the same labels and taints, after which upstream's every test
// comes out the same as before.
func spreadAfterNodeChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, hasOld, node, hasNew, err := nodeChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !hasOld || !hasNew {
		return abi.HintQueue, nil
	}
	return queueIf(!sameLabels(old.Labels(), node.Labels()) || !sameTaints(old.Taints(), node.Taints())), nil
}
