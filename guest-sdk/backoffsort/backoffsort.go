// Package backoffsort implements the backoff-sort slot in a policy module:
// the order of the heap of pods backing off after an unschedulable attempt,
// and whether such a pod may be popped early when activeQ is empty
// (KEP-5142). Importing it makes the module export
// [abi.ExportBackoffSortLess], [abi.ExportBackoffSortKey] and
// [abi.ExportBackoffMayPop]; [Register] says what they answer.
package backoffsort

import "github.com/wasmsched/wasmsched/abi"

// Policy is a backoff-sort policy.
type Policy struct {
	// Less reports whether a leaves backoff before b. Required.
	Less func(a, b abi.PodView) bool
	// Key returns p's sort key, which must order pods as Less does.
	// Optional: when nil the host compares with Less.
	Key func(p abi.PodView) abi.SortKey
	// MayPop reports whether p may be popped before its backoff ends when
	// activeQ is empty. Optional: nil means upstream's rule, [UpstreamMayPop].
	MayPop func(p abi.PodView) bool
}

var registered Policy

// Register makes p the module's backoff-sort policy, replacing any earlier
// one. Call it from an init function. It panics if p.Less is nil.
func Register(p Policy) {
	if p.Less == nil {
		panic("backoffsort.Register: Policy.Less is nil")
	}
	registered = p
}

// MayPop answers the may-pop question for p: p.MayPop(pod), or
// [UpstreamMayPop] when p.MayPop is nil. The export and policytest's native
// adapter both decide through it.
func MayPop(p Policy, pod abi.PodView) bool {
	if p.MayPop == nil {
		return UpstreamMayPop(pod)
	}
	return p.MayPop(pod)
}

// UpstreamMayPop is KEP-5142's rule: a pod backing off after an
// unschedulable attempt may be popped early, one backing off after an error
// may not. As upstream's backoffQueue.add, an attempt is unschedulable when a
// plugin rejected the pod (unschedulable or pending plugins recorded).
func UpstreamMayPop(p abi.PodView) bool {
	return !p.LastFailureError() && (p.UnschedulablePlugins().Len() > 0 || p.PendingPlugins().Len() > 0)
}
