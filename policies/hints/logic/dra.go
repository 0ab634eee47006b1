package logic

import "github.com/wasmsched/wasmsched/abi"

// The hints of DynamicResources, ports of upstream's isSchedulableAfter*
// functions (dynamicresources.go, v1.37.1) on the records of ABI minor 2.
// Upstream's claim hint first checks that every claim of the pod exists
// (the claim lister); a record cannot tell, so the hint queues where that
// check could have skipped. The host drops claim updates that leave the
// status unchanged, which upstream's hint skips for every pod.

// draAfterClaimChange mirrors isSchedulableAfterClaimChange: a claim
// deallocated, or deleted while allocated (or with an unknown final state,
// which the host sends as allocated), may free devices for any pod; else
// the event queues the pods that use the claim.
func draAfterClaimChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, c, hasNew, err := storageChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !hasNew {
		return queueIf(old.Allocated()), nil
	}
	if hasOld && old.Allocated() && !c.Allocated() {
		return abi.HintQueue, nil
	}
	return queueIf(p.UsesResourceClaim(c.Namespace(), c.Name())), nil
}

// draAfterPodUpdate mirrors isSchedulableAfterTargetPodUpdate: the pod's
// own update that names its generated claims queues it once none is
// missing (upstream also wants the claims to exist; the claim's Add event
// queues it if they do not yet).
func draAfterPodUpdate(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	updated, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self && updated.ResourceClaimsGenerated()), nil
}
