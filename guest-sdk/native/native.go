// Package native runs SDK policy values in the host's process, as the host's
// slot interfaces (package host/policy), without Wasm: the same Go logic a
// module registers, called through the same SDK decision functions as the
// module's exports (backoffsort.MayPop, preenqueue.Decide, hint.DecidePods,
// victim.OrderVictims, filter.Policy.Judge, score.Policy.Score), so a native slot and the module built from the same
// logic answer alike input for input.
//
// The scheduler's native policy mode (policies.<slot>.module: native, see
// package policies) and the host's native-versus-Wasm benchmarks use it;
// policytest's NativeX functions forward here.
//
// # Notes
//
// A native policy runs without the sandbox: no memory limit, no deadline, no
// fallback on failure. A panic in the logic is a panic of the caller.
package native

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/host/policy"
)

// KeyedSort is a queue-sort slot that may compute sort keys: what the host's
// heaps take.
type KeyedSort interface {
	policy.Sort
	policy.Keyer
}

// KeyedBackoffSort is a backoff-sort slot that may compute sort keys.
type KeyedBackoffSort interface {
	policy.BackoffSort
	policy.Keyer
}

var (
	_ KeyedSort           = sortSlot{}
	_ KeyedBackoffSort    = backoffSortSlot{}
	_ policy.PreEnqueue   = preEnqueueSlot{}
	_ policy.QueueingHint = queueingHintSlot{}
	_ policy.VictimOrder  = victimOrderSlot{}
	_ policy.Filter       = filterSlot{}
	_ policy.Score        = scoreSlot{}
)

// Sort runs p as the queue-sort slot. It is keyed when p.Key is set. It
// panics if p.Less is nil, as queuesort.Register does.
func Sort(p queuesort.Policy) KeyedSort {
	if p.Less == nil {
		panic("native.Sort: Policy.Less is nil")
	}
	return sortSlot{p}
}

type sortSlot struct{ p queuesort.Policy }

func (s sortSlot) Less(a, b abi.PodView) bool    { return s.p.Less(a, b) }
func (s sortSlot) Keyed() bool                   { return s.p.Key != nil }
func (s sortSlot) Key(p abi.PodView) abi.SortKey { return s.p.Key(p) }

// BackoffSort runs p as the backoff-sort slot. It is keyed when p.Key is
// set. It panics if p.Less is nil, as backoffsort.Register does.
func BackoffSort(p backoffsort.Policy) KeyedBackoffSort {
	if p.Less == nil {
		panic("native.BackoffSort: Policy.Less is nil")
	}
	return backoffSortSlot{p}
}

type backoffSortSlot struct{ p backoffsort.Policy }

func (s backoffSortSlot) Less(a, b abi.PodView) bool    { return s.p.Less(a, b) }
func (s backoffSortSlot) Keyed() bool                   { return s.p.Key != nil }
func (s backoffSortSlot) Key(p abi.PodView) abi.SortKey { return s.p.Key(p) }
func (s backoffSortSlot) MayPop(p abi.PodView) bool     { return backoffsort.MayPop(s.p, p) }

// PreEnqueue runs f as the PreEnqueue slot. It panics if f is nil.
func PreEnqueue(f preenqueue.Func) policy.PreEnqueue {
	if f == nil {
		panic("native.PreEnqueue: nil func")
	}
	return preEnqueueSlot{f}
}

type preEnqueueSlot struct{ f preenqueue.Func }

func (s preEnqueueSlot) PreEnqueue(p abi.PodView) abi.Gate { return preenqueue.Decide(s.f, p) }

// QueueingHint runs plugins as the QueueingHint slot, deciding with
// hint.DecidePods (the per-pod dispatch of hint.Decide). It panics if the
// plugins' registrations are invalid, as hint.Register does.
func QueueingHint(plugins ...hint.Plugin) policy.QueueingHint {
	regs, err := hint.Registrations(plugins)
	if err != nil {
		panic("native.QueueingHint: " + err.Error())
	}
	return queueingHintSlot{plugins: plugins, regs: regs}
}

type queueingHintSlot struct {
	plugins []hint.Plugin
	regs    []abi.Registration
}

func (s queueingHintSlot) Registrations() []abi.Registration {
	return append([]abi.Registration(nil), s.regs...)
}

func (s queueingHintSlot) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	hint.DecidePods(s.plugins, ev, pods, out)
}

// VictimOrder runs more as the victim-order slot, sorting with
// victim.OrderVictims. It panics if more is nil.
func VictimOrder(more victim.More) policy.VictimOrder {
	if more == nil {
		panic("native.VictimOrder: nil func")
	}
	return victimOrderSlot{more}
}

type victimOrderSlot struct{ more victim.More }

func (s victimOrderSlot) Order(_ abi.PodView, victims []abi.Victim, order []uint32) {
	victim.OrderVictims(s.more, victims, order)
}

// Filter runs f with opts as the filter slot, judging each node with
// filter.Policy.Judge. It never fails. Its Options are what the module
// built from the same registration declares, with abi.DefaultFilterEvents
// when it declares none (as the host's Wasm adapter reports them). It
// panics as filter.Register does.
func Filter(f filter.Func, opts ...filter.Option) policy.Filter {
	return filterSlot{filter.New(f, opts...)}
}

type filterSlot struct{ p *filter.Policy }

func (s filterSlot) Options() abi.PlacementOptions {
	events := s.p.Events()
	if len(events) == 0 {
		events = abi.DefaultFilterEvents()
	}
	return abi.PlacementOptions{FilterEvents: events}
}

func (s filterSlot) PreFilter(pod abi.PodView) (bool, error) { return s.p.Concerns(pod), nil }

func (s filterSlot) Filter(pod abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	for i := range nodes {
		v := s.p.Judge(pod, nodes[i].Rec)
		out[i] = policy.FilterVerdict{Code: v.Code(), Reason: v.Reason()}
	}
	return nil
}

// Score runs f with opts as the score slot, scoring each node with
// score.Policy.Score. It never fails. Its Options are what the module built
// from the same registration declares (and, as the host's Wasm adapter
// reports them, abi.DefaultFilterEvents). It panics as score.Register does.
func Score(f score.Func, opts ...score.Option) policy.Score {
	return scoreSlot{score.New(f, opts...)}
}

type scoreSlot struct{ p *score.Policy }

func (s scoreSlot) Options() abi.PlacementOptions {
	return abi.PlacementOptions{ScoreNormalized: s.p.Normalized(), FilterEvents: abi.DefaultFilterEvents()}
}

func (s scoreSlot) PreScore(pod abi.PodView) (bool, error) { return s.p.Concerns(pod), nil }

func (s scoreSlot) Score(pod abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	for i := range nodes {
		out[i] = s.p.Score(pod, nodes[i].Rec)
	}
	return nil
}
