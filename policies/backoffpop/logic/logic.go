// Package logic is KEP-5142 (SchedulerPopFromBackoffQ, beta and on by default
// since Kubernetes 1.33) as two policy slots: the queue sort that activeQ uses,
// and the backoff sort of the heap of pods backing off after an unschedulable
// attempt, with the rule of which backing-off pods may be popped when activeQ
// is empty.
//
// It mirrors kube-scheduler v1.37.1, pkg/scheduler:
//
//   - [QueueLess], [QueueKey]: framework/plugins/queuesort PrioritySort.Less.
//     Higher priority first; at equal priority the pod that entered the queue
//     earlier (QueuedTime, upstream's QueueingParams.Timestamp, which
//     AddUnschedulablePodIfNotPresent refreshes on every requeue).
//   - [BackoffLess], [BackoffKey]: backend/queue/backoff_queue.go
//     backoffQueue.lessBackoffCompletedWithPriority, the less function of
//     entityBackoffQ when the feature is on. getBackoffTime computes the
//     expiry (Timestamp + calculateBackoffDuration) and caches it already
//     aligned by alignToWindow, which is time.Time.Truncate to
//     backoffQOrderingWindowDuration (1s): the expiry is truncated (toward the
//     past), never rounded up. The less compares those aligned expiries and,
//     when they are equal, falls back to activeQLessFn, the profile's queue
//     sort (scheduling_queue.go NewPriorityQueue passes convertLessFn(lessFn);
//     PrioritySort.Less by default). So within a window: priority, then
//     queued time.
//   - [MayPop]: backoffQueue.add, which puts an entity into entityErrorBackoffQ
//     when both its UnschedulablePlugins and its PendingPlugins are empty, and
//     into entityBackoffQ otherwise; activeQueue.unlockedPop pops only from
//     entityBackoffQ (backoffQueue.popBackoff) when activeQ is empty.
//
// # Notes
//
// There is no tie-break on the exact expiry. KEP-5142's pseudocode compares
// the whole expiry after priority, but upstream's code does not: the cached
// BackoffExpiration is already truncated, so the exact expiry is gone, and
// equal windows fall through to PrioritySort. Two pods with the same window,
// priority and queued time are equal (neither is less), as upstream.
//
// Truncating the expiry is idempotent, so the policy orders the same whether
// the host passes the exact expiry or one it already aligned. Times are Unix
// nanoseconds; the window of an expiry before 1970 is floored, as Truncate
// does (it measures from year 1). An unset expiry (0) is Unix time 0, which
// sorts before every real expiry; upstream's unset time.Time sorts before
// them too, and no pod in backoffQ lacks an expiry anyway.
//
// MayPop also checks the plugin lists, not only LastFailureError: upstream
// decides the heap by the lists alone, so a pod that failed without any
// rejecting plugin (no nodes registered, a pod group that was unschedulable,
// an empty diagnosis) backs off in the error heap even though its status was
// Unschedulable rather than Error. A pod rejected only by a Pending plugin
// has a non-empty PendingPlugins and may pop.
//
// Less, Key and MayPop read the record in place and do not allocate.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

// WindowNanos is upstream's backoffQOrderingWindowDuration (1s) in
// nanoseconds.
const WindowNanos = 1_000_000_000

// QueueSort and BackoffSort are what the module registers.
var (
	QueueSort   = queuesort.Policy{Less: QueueLess, Key: QueueKey}
	BackoffSort = backoffsort.Policy{Less: BackoffLess, Key: BackoffKey, MayPop: MayPop}
)

// QueueLess reports whether a is popped from activeQ before b: higher
// priority first, then earlier queued.
func QueueLess(a, b abi.PodView) bool {
	if pa, pb := a.Priority(), b.Priority(); pa != pb {
		return pa > pb
	}
	return a.QueuedTime() < b.QueuedTime()
}

// QueueKey orders pods as QueueLess does.
func QueueKey(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Desc(int64(p.Priority())), abi.Asc(p.QueuedTime()), 0, 0}
}

// Window returns the ordering window of a backoff expiry (Unix nanoseconds):
// the Unix second it falls in, floored, so that the window starts at
// Window(t)*1s and t.Truncate(time.Second) is that start.
func Window(expiry int64) int64 {
	w := expiry / WindowNanos
	if expiry%WindowNanos < 0 {
		w--
	}
	return w
}

// BackoffLess reports whether a leaves the unschedulable backoff heap before
// b: the earlier window first; within a window, as QueueLess.
func BackoffLess(a, b abi.PodView) bool {
	if wa, wb := Window(a.BackoffExpiry()), Window(b.BackoffExpiry()); wa != wb {
		return wa < wb
	}
	return QueueLess(a, b)
}

// BackoffKey orders pods as BackoffLess does.
func BackoffKey(p abi.PodView) abi.SortKey {
	return abi.SortKey{
		abi.Asc(Window(p.BackoffExpiry())),
		abi.Desc(int64(p.Priority())),
		abi.Asc(p.QueuedTime()),
		0,
	}
}

// MayPop reports whether p, backing off, may be popped when activeQ is empty:
// only if it backs off in upstream's entityBackoffQ, that is, its last
// attempt was rejected by at least one plugin (Unschedulable or Pending) and
// did not fail with an error.
func MayPop(p abi.PodView) bool {
	if p.LastFailureError() {
		return false
	}
	return p.UnschedulablePlugins().Len() > 0 || p.PendingPlugins().Len() > 0
}
