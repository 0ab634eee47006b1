package policy

import (
	"slices"

	"github.com/wasmsched/wasmsched/abi"
)

// The native defaults. Each behaves like upstream kube-scheduler and serves as
// the fallback of the matching Wasm slot.
var (
	_ Sort         = PrioritySort{}
	_ Keyer        = PrioritySort{}
	_ BackoffSort  = BackoffExpiry{}
	_ Keyer        = BackoffExpiry{}
	_ PreEnqueue   = Admit{}
	_ QueueingHint = AlwaysQueue{}
	_ VictimOrder  = Importance{}
	_ Filter       = None{}
	_ Score        = None{}
)

// None is an empty placement slot: it concerns no pod, so the filter passes
// every node and the score adds nothing.
type None struct{}

func (None) Options() abi.PlacementOptions       { return abi.PlacementOptions{} }
func (None) PreFilter(abi.PodView) (bool, error) { return false, nil }
func (None) PreScore(abi.PodView) (bool, error)  { return false, nil }
func (None) Filter(_ abi.PodView, _ []PlacementNode, out []FilterVerdict) error {
	clear(out)
	return nil
}
func (None) Score(_ abi.PodView, _ []PlacementNode, out []int64) error { clear(out); return nil }

// PrioritySort is upstream's PrioritySort: higher priority first, then the
// pod that entered the queue earlier.
type PrioritySort struct{}

func (PrioritySort) Less(a, b abi.PodView) bool {
	pa, pb := a.Priority(), b.Priority()
	if pa != pb {
		return pa > pb
	}
	return a.QueuedTime() < b.QueuedTime()
}

func (PrioritySort) Keyed() bool { return true }

func (PrioritySort) Key(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Desc(int64(p.Priority())), abi.Asc(p.QueuedTime())}
}

// BackoffExpiry orders backoffQ by backoff expiry, as upstream does without
// KEP-5142's ordering window, and lets a pod pop early only if it backed off
// after an unschedulable attempt, never after an error (KEP-5142). As
// upstream's backoffQueue.add, an attempt counts as unschedulable when some
// plugin rejected the pod (unschedulable or pending plugins recorded); one
// that failed without a rejecting plugin backs off in the error heap.
type BackoffExpiry struct{}

func (BackoffExpiry) Less(a, b abi.PodView) bool { return a.BackoffExpiry() < b.BackoffExpiry() }

func (BackoffExpiry) Keyed() bool { return true }

func (BackoffExpiry) Key(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Asc(p.BackoffExpiry())}
}

func (BackoffExpiry) MayPop(p abi.PodView) bool {
	return !p.LastFailureError() && (p.UnschedulablePlugins().Len() > 0 || p.PendingPlugins().Len() > 0)
}

// Admit lets every pod in. (Scheduling gates are API semantics, not policy:
// the queue honours spec.schedulingGates before it asks the slot.)
type Admit struct{}

func (Admit) PreEnqueue(abi.PodView) abi.Gate { return abi.Gate{Code: abi.GateAdmit} }

// AlwaysQueue requeues every unschedulable pod on every event, which is what
// upstream does for a plugin without QueueingHints.
type AlwaysQueue struct{}

var alwaysQueueRegistrations = []abi.Registration{{Plugin: abi.PluginWildcard, Resource: abi.ResourceWildcard, Actions: abi.ActionAll}}

func (AlwaysQueue) Registrations() []abi.Registration { return slices.Clone(alwaysQueueRegistrations) }

func (AlwaysQueue) Hints(_ abi.EventView, _ []abi.PodView, out []abi.Hint) {
	for i := range out {
		out[i] = abi.HintQueue
	}
}

// Importance orders victims like upstream's moreImportantVictim (KEP-5710):
// higher priority first; at equal priority a pod group before a single pod;
// between pods, the one that started earlier (a pod that has not started is
// the least important); between groups, the larger, then the one that
// started earlier. Ties break on UID so the order is deterministic.
type Importance struct{}

func (Importance) Order(_ abi.PodView, victims []abi.Victim, order []uint32) {
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortStableFunc(order, func(i, j uint32) int {
		switch a, b := &victims[i], &victims[j]; {
		case MoreImportant(a, b):
			return -1
		case MoreImportant(b, a):
			return 1
		}
		return 0
	})
}

// MoreImportant reports whether victim a is more important than b, i.e.
// should be preempted later and reprieved first. It is
// [abi.MoreImportantVictim], the rule the reference guests call too.
func MoreImportant(a, b *abi.Victim) bool { return abi.MoreImportantVictim(a, b) }
