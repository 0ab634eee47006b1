package policy

import "github.com/wasmsched/wasmsched/abi"

// Sort orders a heap of pods: activeQ (queue-sort slot) or the heap of pods
// backing off after an unschedulable attempt (backoff-sort slot).
type Sort interface {
	// Less reports whether a is popped before b.
	Less(a, b abi.PodView) bool
}

// Keyer is implemented by a Sort that also computes sort keys. A heap whose
// Sort is a Keyer with Keyed() true computes each pod's key once per change
// and compares keys natively instead of calling Less per comparison.
type Keyer interface {
	Keyed() bool
	Key(p abi.PodView) abi.SortKey
}

// BackoffSort is the backoff-sort slot.
type BackoffSort interface {
	Sort
	// MayPop reports whether p may be popped from backoffQ before its backoff
	// ends when activeQ is empty (KEP-5142).
	MayPop(p abi.PodView) bool
}

// PreEnqueue is the PreEnqueue slot: it runs before a pod enters activeQ or
// backoffQ and may hold it back.
type PreEnqueue interface {
	PreEnqueue(p abi.PodView) abi.Gate
}

// QueueingHint is the QueueingHint slot (KEP-4247).
type QueueingHint interface {
	// Registrations are the events the slot wants; the queue asks it only
	// about those, and only for pods rejected by a registered plugin.
	Registrations() []abi.Registration
	// Hints decides, for one event, whether each pod may now be schedulable.
	// out has one entry per pod.
	Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint)
}

// VictimOrder is the victim-ordering slot of preemption.
type VictimOrder interface {
	// Order writes into order (len(victims) long) the victim indices, most
	// important first. preemptor may be the zero view.
	Order(preemptor abi.PodView, victims []abi.Victim, order []uint32)
}
