package policytest

import (
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/native"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/host/policy"
)

// The native adapters are package native's; the functions below forward to
// it, so that tests written against policytest keep one import.

// Sort is a queue-sort slot that may compute sort keys: what the host's
// heaps take.
type Sort = native.KeyedSort

// BackoffSort is a backoff-sort slot that may compute sort keys.
type BackoffSort = native.KeyedBackoffSort

// NativeSort is [native.Sort].
func NativeSort(p queuesort.Policy) Sort { return native.Sort(p) }

// NativeBackoffSort is [native.BackoffSort].
func NativeBackoffSort(p backoffsort.Policy) BackoffSort { return native.BackoffSort(p) }

// NativePreEnqueue is [native.PreEnqueue].
func NativePreEnqueue(f preenqueue.Func) policy.PreEnqueue { return native.PreEnqueue(f) }

// NativeQueueingHint is [native.QueueingHint].
func NativeQueueingHint(plugins ...hint.Plugin) policy.QueueingHint {
	return native.QueueingHint(plugins...)
}

// NativeVictimOrder is [native.VictimOrder].
func NativeVictimOrder(more victim.More) policy.VictimOrder { return native.VictimOrder(more) }

// NativeFilter is [native.Filter].
func NativeFilter(f filter.Func, opts ...filter.Option) policy.Filter {
	return native.Filter(f, opts...)
}

// NativeScore is [native.Score].
func NativeScore(f score.Func, opts ...score.Option) policy.Score { return native.Score(f, opts...) }
