// Package queuesort implements the queue-sort slot (the order of activeQ) in
// a policy module. Importing it makes the module export
// [abi.ExportQueueSortLess] and [abi.ExportQueueSortKey]; [Register] says
// what they answer:
//
//	func init() { queuesort.Register(logic.QueueSort) }
//
// # Notes
//
// Prefer giving a Key: the host then computes each pod's key once per change
// and its heap compares keys natively, instead of calling into the module on
// every comparison. Key must order pods exactly as Less does.
package queuesort

import "github.com/wasmsched/wasmsched/abi"

// Policy is a queue-sort policy.
type Policy struct {
	// Less reports whether a is popped before b. Required.
	Less func(a, b abi.PodView) bool
	// Key returns p's sort key, which must order pods as Less does (a pod
	// sorts before another iff its key is smaller). Optional: when nil the
	// key export answers -abi.ErrUnsupported and the host compares with Less.
	Key func(p abi.PodView) abi.SortKey
}

var registered Policy

// Register makes p the module's queue-sort policy, replacing any earlier
// one. Call it from an init function. It panics if p.Less is nil.
func Register(p Policy) {
	if p.Less == nil {
		panic("queuesort.Register: Policy.Less is nil")
	}
	registered = p
}
