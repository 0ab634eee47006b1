// Package logic is the fifosort policy: earlier created first, then the
// earlier queued, then by namespace and name, so that the order is total.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

// Policy is the registered queue-sort policy.
var Policy = queuesort.Policy{Less: Less, Key: Key}

// Less reports whether a was created (then queued) before b.
func Less(a, b abi.PodView) bool {
	if ca, cb := a.CreationTime(), b.CreationTime(); ca != cb {
		return ca < cb
	}
	return a.QueuedTime() < b.QueuedTime()
}

// Key orders pods as Less does.
func Key(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Asc(p.CreationTime()), abi.Asc(p.QueuedTime()), 0, 0}
}
