package policy

import (
	"github.com/wasmsched/wasmsched/abi"
)

// Installer says where a slot's policy goes when it changes: the queue's
// setters for the four queue slots (queue.SetSort and so on), and whatever
// holds preemption's victim order (cycle.Scheduler.SetVictimOrder). Each
// function receives a new policy on every successful load; policies are never
// changed after they are installed.
type Installer struct {
	Sort         func(Sort)
	BackoffSort  func(BackoffSort)
	PreEnqueue   func(PreEnqueue)
	QueueingHint func(QueueingHint)
	VictimOrder  func(VictimOrder)
	// Filter and Score are the placement slots' (Placement.SetFilter and
	// SetScore); they also receive nil when a slot is emptied.
	Filter func(Filter)
	Score  func(Score)
}

// Spec is one row of the slot table: what the host knows about one slot
// apart from running it in Wasm (package host/policy/wasmslot adds that, one
// adapter constructor per row).
type Spec struct {
	// Slot is the slot the row describes.
	Slot abi.Slot
	// Interface names the interface of this package that a policy of the
	// slot implements ("Sort", "BackoffSort", ...).
	Interface string
	// SDK names the guest SDK package that exports the slot from a module
	// (guest-sdk/<SDK>: "queuesort", "backoffsort", ...).
	SDK string
	// Default is the slot's native default, which behaves like upstream
	// kube-scheduler: what a Wasm adapter of the slot answers with when its
	// module fails. The placement slots' default, [None], is what an empty
	// slot does (nothing); their adapters report failures instead, and the
	// slot's FailurePolicy decides.
	Default any

	implements func(impl any) bool
	installs   func(in Installer) bool
	install    func(in Installer, impl any)
	empty      func(in Installer)
}

// Clear installs nothing (nil) in the slot: it turns a placement slot's
// plugin off, and ends a shadow (wasmslot.Set.Empty decides which slots may
// be emptied). It reports false, and does nothing, when in has no function
// for the slot.
func (s *Spec) Clear(in Installer) bool {
	if !s.installs(in) {
		return false
	}
	s.empty(in)
	return true
}

// Implements reports whether impl implements the slot's interface.
func (s *Spec) Implements(impl any) bool { return s.implements(impl) }

// Wired reports whether in has a function for the slot.
func (s *Spec) Wired(in Installer) bool { return s.installs(in) }

// Install hands impl to in's function of the slot. It reports false, and
// installs nothing, when impl does not implement the slot's interface or in
// has no function for the slot.
func (s *Spec) Install(in Installer, impl any) bool {
	if !s.implements(impl) || !s.installs(in) {
		return false
	}
	s.install(in, impl)
	return true
}

// row builds a table row for a slot whose policies implement P and which the
// Installer function returned by field installs.
func row[P any](slot abi.Slot, iface, sdk string, def P, field func(Installer) func(P)) Spec {
	return Spec{
		Slot: slot, Interface: iface, SDK: sdk, Default: def,
		implements: func(impl any) bool { _, ok := impl.(P); return ok },
		installs:   func(in Installer) bool { return field(in) != nil },
		install:    func(in Installer, impl any) { field(in)(impl.(P)) },
		empty:      func(in Installer) { var zero P; field(in)(zero) },
	}
}

// table is the slot table, indexed by abi.Slot: every slot-aware place of
// the host (the Wasm adapters and the Set, native loading, the built-in
// policies, policytest, the CLI, the admin endpoint) reads it instead of
// switching on the slot. A new slot is a row here, a row of abi's export
// lists, and its adapter constructor in wasmslot.
var table = [...]Spec{
	abi.SlotQueueSort: row(abi.SlotQueueSort, "Sort", "queuesort", Sort(PrioritySort{}),
		func(in Installer) func(Sort) { return in.Sort }),
	abi.SlotBackoffSort: row(abi.SlotBackoffSort, "BackoffSort", "backoffsort", BackoffSort(BackoffExpiry{}),
		func(in Installer) func(BackoffSort) { return in.BackoffSort }),
	abi.SlotPreEnqueue: row(abi.SlotPreEnqueue, "PreEnqueue", "preenqueue", PreEnqueue(Admit{}),
		func(in Installer) func(PreEnqueue) { return in.PreEnqueue }),
	abi.SlotQueueingHint: row(abi.SlotQueueingHint, "QueueingHint", "hint", QueueingHint(AlwaysQueue{}),
		func(in Installer) func(QueueingHint) { return in.QueueingHint }),
	abi.SlotVictimOrder: row(abi.SlotVictimOrder, "VictimOrder", "victim", VictimOrder(Importance{}),
		func(in Installer) func(VictimOrder) { return in.VictimOrder }),
	abi.SlotFilter: row(abi.SlotFilter, "Filter", "filter", Filter(None{}),
		func(in Installer) func(Filter) { return in.Filter }),
	abi.SlotScore: row(abi.SlotScore, "Score", "score", Score(None{}),
		func(in Installer) func(Score) { return in.Score }),
}

// Every slot has a row (TestTable checks that each row is its slot's).
var _ [len(abi.Slots)]Spec = table

// SpecOf returns the slot's row of the slot table, and false for a value
// that is not a slot.
func SpecOf(slot abi.Slot) (*Spec, bool) {
	if int(slot) >= len(table) {
		return nil, false
	}
	return &table[slot], true
}
