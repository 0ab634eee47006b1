// Package logic orders preemption victims like upstream's
// moreImportantVictim (KEP-5710): the most important victim is preempted
// last and reprieved first.
package logic

import "github.com/wasmsched/wasmsched/abi"

// MoreImportant reports whether victim a is more important than b: higher
// priority first; at equal priority a pod group before a single pod; between
// pods, the one that started earlier (one that has not started is the least
// important); between groups, the one with more members, then the one that
// started earlier. Ties break on UID, so the order is deterministic.
func MoreImportant(a, b abi.Victim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if ag, bg := a.Kind == abi.VictimGroup, b.Kind == abi.VictimGroup; ag != bg {
		return ag
	}
	if a.Kind == abi.VictimGroup && a.Members != b.Members {
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
