package logic

import "github.com/wasmsched/wasmsched/abi"

// MoreImportant reports whether victim a is more important than b, i.e. is
// preempted later and reprieved earlier. It is upstream's
// MoreImportantVictim (pkg/scheduler/framework/preemption/util.go, used by
// podgrouppreemption.go's selectVictimsOnDomain), rule by rule:
//
//  1. higher priority first;
//  2. at equal priority a pod group (victimRank: a group outranks a pod)
//     before a single pod; a kind other than abi.VictimGroup is a pod;
//  3. between groups, more members first (upstream compares len(Pods()),
//     which is 1 for every pod, so members do not order pods);
//  4. the earlier start first; a victim that has not started (StartTime 0)
//     is the least important, as upstream's GetPodStartTime makes it;
//  5. then the lower UID, newer upstream's podIdentityLess, so that the
//     order does not depend on the batch order.
//
// It is a strict weak order; victims equal on every rule (same UID) keep
// their batch order. It decides exactly as the host's native default
// (host/policy.MoreImportant).
func MoreImportant(a, b abi.Victim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if ag, bg := a.Kind == abi.VictimGroup, b.Kind == abi.VictimGroup; ag != bg {
		return ag
	} else if ag && a.Members != b.Members {
		return a.Members > b.Members
	}
	if as, bs := a.StartTime != 0, b.StartTime != 0; as != bs {
		return as
	}
	if a.StartTime != b.StartTime {
		return a.StartTime < b.StartTime
	}
	return a.UID < b.UID
}
