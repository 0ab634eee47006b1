package logic

import "github.com/wasmsched/wasmsched/abi"

// The PodTopologySpread hints. Upstream's decide with the pending pod's
// DoNotSchedule topology spread constraints (label selectors, topology
// keys, nodeTaintsPolicy), or the plugin's default constraints for a pod
// without any. The pod record carries the pod's own constraints from ABI
// minor 4 (abi.PodView.TermsKnown), not the profile's defaults (they
// depend on the Services and controllers selecting the pod). For a pod with
// constraints of its own the hints decide as upstream's do, with two
// additions where upstream's would leave a pod the native filter now
// accepts waiting for the flush:
//   - a node update after which the node, still in the constraints'
//     domains, matches the pod's node affinity and did not, or the other
//     way round, queues a pod with a constraint whose nodeAffinityPolicy
//     is Honor: the domains that count changed;
//   - the pod's own label update that changed its value of a
//     matchLabelKeys key queues: the constraint's selector changed.
//
// For a pod without constraints of its own, or from an older host, each
// hint makes upstream's checks that need none and queues where the answer
// depends on a constraint (the moves upstream makes for a plugin without
// hints).

// spreadKnown reports whether p's record carries constraints of its own to
// decide with.
func spreadKnown(p abi.PodView) bool { return p.TermsKnown() && p.SpreadConstraints().Len() > 0 }

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
//     else Queue when some DoNotSchedule constraint's selector matches the
//     labels before and after differently;
//   - an add or a delete queues when some DoNotSchedule constraint's
//     selector matches the pod's labels.
func spreadAfterAssignedPodChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, cur, hasNew, err := podChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if (hasNew && !involvedInSpreading(cur, p)) || (hasOld && !involvedInSpreading(old, p)) {
		return abi.HintSkip, nil
	}
	if hasOld && hasNew && sameLabels(old.Labels(), cur.Labels()) {
		return abi.HintSkip, nil
	}
	if !spreadKnown(p) {
		return abi.HintQueue, nil
	}
	cs := p.SpreadConstraints()
	if !spreadWellFormed(cs) {
		return abi.HintQueue, errPodTermSyntax
	}
	switch {
	case hasOld && hasNew:
		return queueIf(selectorsDiffer(cs, old.Labels(), cur.Labels())), nil
	case hasNew:
		return queueIf(anySelects(cs, cur.Labels())), nil
	}
	return queueIf(anySelects(cs, old.Labels())), nil
}

// involvedInSpreading is upstream's involvedInTopologySpreading: pod q
// counts in p's spreading when it is on a node and in p's namespace.
func involvedInSpreading(q, p abi.PodView) bool {
	return q.NodeName() != "" && q.Namespace() == p.Namespace()
}

// spreadAfterPodChange mirrors podtopologyspread's
// isSchedulableAfterTargetPodChange, for the pod's own toleration or label
// update: Queue when the tolerations changed and a DoNotSchedule constraint
// honours node taints (nodeTaintsPolicy: Honor), or when the labels changed
// so that some constraint's selector matches the pod differently or
// changed (a matchLabelKeys value). Without the constraints: Queue when the
// tolerations or the labels changed, Skip when neither did.
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
	tolerations := !sameTolerations(before.Tolerations(), updated.Tolerations())
	labels := !sameLabels(before.Labels(), updated.Labels())
	// The constraints are the updated pod's, as upstream's queue hands the
	// hint the pod after the update.
	if !spreadKnown(updated) || !tolerations && !labels {
		return queueIf(tolerations || labels), nil
	}
	cs := updated.SpreadConstraints()
	if !spreadWellFormed(cs) {
		return abi.HintQueue, errPodTermSyntax
	}
	if tolerations {
		for i := range cs.Len() {
			if cs.WhenUnsatisfiable(i) == abi.SpreadDoNotSchedule && cs.NodeTaintsPolicy(i) == abi.InclusionHonor {
				return abi.HintQueue, nil
			}
		}
	}
	if !labels {
		return abi.HintSkip, nil
	}
	bl, ul := before.Labels(), updated.Labels()
	if selectorsDiffer(cs, bl, ul) {
		return abi.HintQueue, nil
	}
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) != abi.SpreadDoNotSchedule {
			continue
		}
		keys := cs.MatchLabelKeys(i)
		for j := range keys.Len() {
			b, hb := bl.Get(keys.At(j))
			u, hu := ul.Get(keys.At(j))
			if hb != hu || b != u {
				return abi.HintQueue, nil
			}
		}
	}
	return abi.HintSkip, nil
}

// spreadAfterNodeChange mirrors podtopologyspread's
// isSchedulableAfterNodeChange: a node added or deleted queues when it has
// every DoNotSchedule constraint's topology key; an update when it changed
// whether the node has them all, or, when it has them all, changed one of
// their values or the taints (or, for a constraint honouring node
// affinity, whether the node matches the pod's; see above). Without the
// constraints: Queue every node added or deleted, and an update whose
// labels or taints changed.
func spreadAfterNodeChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, node, hasNew, err := nodeChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !spreadKnown(p) {
		if !hasOld || !hasNew {
			return abi.HintQueue, nil
		}
		return queueIf(!sameLabels(old.Labels(), node.Labels()) || !sameTaints(old.Taints(), node.Taints())), nil
	}
	cs := p.SpreadConstraints()
	if !spreadWellFormed(cs) {
		return abi.HintQueue, errPodTermSyntax
	}
	if !hasOld {
		return queueIf(hasTopologyKeys(cs, node.Labels())), nil
	}
	if !hasNew {
		return queueIf(hasTopologyKeys(cs, old.Labels())), nil
	}
	was, is := hasTopologyKeys(cs, old.Labels()), hasTopologyKeys(cs, node.Labels())
	switch {
	case was != is:
		return abi.HintQueue, nil
	case !is:
		return abi.HintSkip, nil
	case topologyValuesChanged(cs, old.Labels(), node.Labels()) || !sameTaints(old.Taints(), node.Taints()):
		return abi.HintQueue, nil
	}
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) != abi.SpreadDoNotSchedule || cs.NodeAffinityPolicy(i) != abi.InclusionHonor {
			continue
		}
		before, err1 := requiredAffinityMatches(p, old)
		after, err2 := requiredAffinityMatches(p, node)
		if err1 != nil || err2 != nil {
			return abi.HintQueue, errAffinitySyntax
		}
		return queueIf(before != after), nil
	}
	return abi.HintSkip, nil
}

// spreadWellFormed applies metav1.LabelSelectorAsSelector's checks to the
// DoNotSchedule constraints' selectors, as upstream's getConstraints does.
func spreadWellFormed(cs abi.SpreadList) bool {
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) == abi.SpreadDoNotSchedule && !wellFormedExpressions(cs.Selector(i)) {
			return false
		}
	}
	return true
}

// constraintSelects reports whether DoNotSchedule constraint i's selector
// matches labels (a nil selector matches nothing).
func constraintSelects(cs abi.SpreadList, i int, labels abi.KVList) bool {
	return !cs.NoSelector(i) && expressionsMatch(cs.Selector(i), labels)
}

// anySelects is upstream's podLabelsMatchSpreadConstraints over the
// DoNotSchedule constraints.
func anySelects(cs abi.SpreadList, labels abi.KVList) bool {
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) == abi.SpreadDoNotSchedule && constraintSelects(cs, i, labels) {
			return true
		}
	}
	return false
}

// selectorsDiffer reports whether some DoNotSchedule constraint's selector
// matches a and b differently.
func selectorsDiffer(cs abi.SpreadList, a, b abi.KVList) bool {
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) == abi.SpreadDoNotSchedule && constraintSelects(cs, i, a) != constraintSelects(cs, i, b) {
			return true
		}
	}
	return false
}

// hasTopologyKeys is upstream's nodeLabelsMatchSpreadConstraints over the
// DoNotSchedule constraints.
func hasTopologyKeys(cs abi.SpreadList, labels abi.KVList) bool {
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) != abi.SpreadDoNotSchedule {
			continue
		}
		if _, ok := labels.Get(cs.TopologyKey(i)); !ok {
			return false
		}
	}
	return true
}

// topologyValuesChanged is upstream's checkTopologyKeyLabelsChanged.
func topologyValuesChanged(cs abi.SpreadList, a, b abi.KVList) bool {
	for i := range cs.Len() {
		if cs.WhenUnsatisfiable(i) != abi.SpreadDoNotSchedule {
			continue
		}
		k := cs.TopologyKey(i)
		va, _ := a.Get(k)
		vb, _ := b.Get(k)
		if va != vb {
			return true
		}
	}
	return false
}
