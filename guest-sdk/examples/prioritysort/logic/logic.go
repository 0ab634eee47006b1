// Package logic is upstream kube-scheduler's PrioritySort as a queue-sort
// policy: the pod with the higher priority is popped first and, at equal
// priority, the one that entered the queue earlier.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

// Policy is what the module registers.
var Policy = queuesort.Policy{Less: Less, Key: Key}

// Less reports whether a is popped before b.
func Less(a, b abi.PodView) bool {
	if pa, pb := a.Priority(), b.Priority(); pa != pb {
		return pa > pb
	}
	return a.QueuedTime() < b.QueuedTime()
}

// Key orders pods as Less does: priority descending, then queued time
// ascending.
func Key(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Desc(int64(p.Priority())), abi.Asc(p.QueuedTime()), 0, 0}
}
