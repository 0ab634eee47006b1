package logic

import "github.com/wasmsched/wasmsched/abi"

// The InterPodAffinity hints. Upstream's decide with the pending pod's
// required pod affinity and anti-affinity terms (label selectors,
// namespaces, topology keys) and, for a deleted pod, with that pod's
// anti-affinity terms. The ABI's pod record carries none of them, so each
// hint makes upstream's checks that need no term, and queues where the
// answer depends on a term: a pod is never left waiting for the flush when
// upstream would have moved it, at the cost of moves upstream would skip
// (the same moves upstream makes for a plugin without hints).

// interPodAffinityAfterAssignedPodChange mirrors interpodaffinity's
// isSchedulableAfterAssignedPodChange for a bound pod added, deleted or
// relabelled:
//   - Skip a pod without a node (upstream: without a node and without a
//     nominated node; the ABI has no nominatedNodeName, and the host sends
//     these events for bound pods only);
//   - on an update, Skip when the labels did not change: whether a pod
//     matches a term depends on its labels and namespace alone, so neither
//     "now matches all affinity terms" nor "no longer matches an
//     anti-affinity term" can have happened;
//   - otherwise Queue: upstream matches the added pod against the affinity
//     terms, the updated one against both kinds, the deleted one against the
//     anti-affinity terms (and the pod against the deleted pod's).
func interPodAffinityAfterAssignedPodChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, hasOld, cur, hasNew, err := podChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if (hasNew && cur.NodeName() == "") || (hasOld && old.NodeName() == "") {
		return abi.HintSkip, nil
	}
	if hasOld && hasNew {
		return queueIf(!sameLabels(old.Labels(), cur.Labels())), nil
	}
	return abi.HintQueue, nil
}

// interPodAffinityAfterPodLabelChange mirrors interpodaffinity's
// isSchedulableAfterTargetPodUpdateLabel: the pod's own labels changed, and
// a bound pod's anti-affinity may no longer select it, so Queue.
func interPodAffinityAfterPodLabelChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self), nil
}

// interPodAffinityAfterNodeChange mirrors interpodaffinity's
// isSchedulableAfterNodeChange. Upstream queues a node added with an
// affinity term's topology key (or any node added, for a pod with an
// anti-affinity term), and a label update that added an affinity term's
// topology key, removed an anti-affinity term's, or changed the value of
// either. Without the terms: Queue an added node, and an update whose labels
// changed; Skip an update with the same labels, in which no topology key can
// have appeared, gone or changed.
func interPodAffinityAfterNodeChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !hasOld {
		return abi.HintQueue, nil
	}
	return queueIf(!sameLabels(old.Labels(), node.Labels())), nil
}
