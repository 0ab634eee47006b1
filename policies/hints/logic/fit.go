package logic

import "github.com/wasmsched/wasmsched/abi"

// resourcePods is the pseudo-resource counting pods: a node's allocatable
// "pods" is how many it takes, its requested "pods" how many it has, and a
// pod's record requests 1.
const resourcePods = "pods"

// fitAfterNodeChange mirrors noderesources' isSchedulableAfterNodeChange:
// Queue when the pod fits the added or updated node and, for an update, the
// node's room grew for the pod count or for a resource the pod requests.
//
// Upstream checks the fit against an empty node built from the Node object
// alone; the node record also carries what its pods request, so the fit here
// is allocatable minus requested, which is what the filter will check. A
// resource held by the node's pods is released by an assigned pod's delete
// or scale-down, both registered, so the tighter check loses no wake-up.
func fitAfterNodeChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !fits(p, node) {
		return abi.HintSkip, nil
	}
	if !hasOld {
		return abi.HintQueue, nil
	}
	return queueIf(roomGrew(p, old, node)), nil
}

// fits is upstream's fitsRequest: one more pod within the node's pod count,
// and every resource the pod requests (amount > 0) within allocatable minus
// requested; a resource the node does not list has 0 of both.
func fits(p abi.PodView, n abi.NodeView) bool {
	alloc, used := n.Allocatable(), n.Requested()
	if used.Get(resourcePods)+1 > alloc.Get(resourcePods) {
		return false
	}
	reqs := p.Requests()
	for i := range reqs.Len() {
		name, v := reqs.At(i)
		if v <= 0 || name == resourcePods {
			continue
		}
		if v > alloc.Get(name)-used.Get(name) {
			return false
		}
	}
	return true
}

// roomGrew is upstream's haveAnyRequestedResourcesIncreased with room
// (allocatable minus requested) for allocatable. The host sends a node
// update with the same requested amounts in both records, so this is
// upstream's comparison of allocatable; room rather than allocatable keeps it
// right for a sender that does not.
func roomGrew(p abi.PodView, old, new abi.NodeView) bool {
	if room(new, resourcePods) > room(old, resourcePods) {
		return true
	}
	reqs := p.Requests()
	for i := range reqs.Len() {
		name, v := reqs.At(i)
		if v <= 0 || name == resourcePods {
			continue
		}
		if room(new, name) > room(old, name) {
			return true
		}
	}
	return false
}

func room(n abi.NodeView, name string) int64 {
	return n.Allocatable().Get(name) - n.Requested().Get(name)
}

// fitAfterAssignedPodDelete mirrors noderesources'
// isSchedulableAfterAssignedPodDelete: the deletion of any pod bound to a
// node may make room, so Queue; a deleted pod without a node frees nothing.
// (Every pod takes one of its node's "pods", which every pod requests, so a
// bound pod's deletion always frees something the pod requests.)
func fitAfterAssignedPodDelete(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	deleted, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	return queueIf(deleted.NodeName() != ""), nil
}

// fitAfterAssignedPodScaleDown mirrors noderesources'
// isSchedulableAfterAssignedPodScaleDown (haveEnoughRelevantResourcesDecreased):
// Queue when a bound pod's request went down for a resource the pod requests.
func fitAfterAssignedPodScaleDown(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	before, after, err := podPair(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if after.NodeName() == "" {
		return abi.HintSkip, nil
	}
	reqs, was, is := p.Requests(), before.Requests(), after.Requests()
	for i := range reqs.Len() {
		name, v := reqs.At(i)
		if v == 0 || name == resourcePods {
			continue
		}
		if was.Get(name) > is.Get(name) {
			return abi.HintQueue, nil
		}
	}
	return abi.HintSkip, nil
}

// fitAfterPodScaleDown mirrors noderesources'
// isSchedulableAfterTargetPodScaleDown: the pod's own requests went down, so
// Queue.
func fitAfterPodScaleDown(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self), nil
}
