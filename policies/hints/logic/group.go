package logic

import "github.com/wasmsched/wasmsched/abi"

// gangAfterPodAdd mirrors gangscheduling's isSchedulableAfterPodAdded, for
// unscheduled and assigned pods alike: Queue when the added pod belongs to
// the pod's PodGroup (same namespace and name), which may complete its
// minCount. Composite pod groups (an alpha feature, off by default) are not
// in the ABI, so groups are compared by key as upstream does without them.
func gangAfterPodAdd(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	added, ok := ev.NewPod()
	if !ok {
		return abi.HintQueue, errNoNewPod
	}
	group := p.GroupName()
	if group == "" || added.GroupName() == "" {
		return abi.HintSkip, nil
	}
	return queueIf(added.Namespace() == p.Namespace() && added.GroupName() == group), nil
}

// gangAfterPodGroupAdd mirrors gangscheduling's
// isSchedulableAfterPodGroupAdded: Queue the members of the added group.
func gangAfterPodGroupAdd(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	g, ok := ev.NewPodGroup()
	if !ok {
		return abi.HintQueue, errNoNewGroup
	}
	return queueIf(memberOf(p, g)), nil
}

// gangAfterPodGroupUpdate mirrors gangscheduling's
// isSchedulableAfterPodGroupUpdated: Queue the members of a gang whose
// minCount went down. A group without a gang policy has minCount 0 in its
// record; an update from or to such a group changes nothing for the gang.
func gangAfterPodGroupUpdate(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, okOld := ev.OldPodGroup()
	g, okNew := ev.NewPodGroup()
	switch {
	case !okNew:
		return abi.HintQueue, errNoNewGroup
	case !okOld:
		return abi.HintQueue, errNoOldGroup
	}
	if !memberOf(p, g) || old.MinCount() == 0 || g.MinCount() == 0 {
		return abi.HintSkip, nil
	}
	return queueIf(g.MinCount() < old.MinCount()), nil
}

// memberOf reports whether p belongs to group g.
func memberOf(p abi.PodView, g abi.PodGroupView) bool {
	name := p.GroupName()
	return name != "" && name == g.Name() && p.Namespace() == g.Namespace()
}

// schedulingGatesAfterGatesEliminated mirrors schedulinggates'
// isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated: the pod's own
// last gate went away, so Queue.
func schedulingGatesAfterGatesEliminated(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self), nil
}
