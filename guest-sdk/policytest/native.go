package policytest

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/host/policy"
)

// The native adapters: SDK policy values run in-process as the host's slot
// interfaces, through the same SDK decision functions as the exports of a
// module. The host's benchmarks use them as the native side of native-versus-
// Wasm comparisons.

// Sort is a queue-sort slot that may compute sort keys: what the host's
// heaps take.
type Sort interface {
	policy.Sort
	policy.Keyer
}

// BackoffSort is a backoff-sort slot that may compute sort keys.
type BackoffSort interface {
	policy.BackoffSort
	policy.Keyer
}

var (
	_ Sort                = nativeSort{}
	_ BackoffSort         = nativeBackoffSort{}
	_ policy.PreEnqueue   = nativePreEnqueue{}
	_ policy.QueueingHint = nativeQueueingHint{}
	_ policy.VictimOrder  = nativeVictimOrder{}
)

// NativeSort runs p as the queue-sort slot. It is keyed when p.Key is set.
// It panics if p.Less is nil, as queuesort.Register does.
func NativeSort(p queuesort.Policy) Sort {
	if p.Less == nil {
		panic("policytest.NativeSort: Policy.Less is nil")
	}
	return nativeSort{p}
}

type nativeSort struct{ p queuesort.Policy }

func (s nativeSort) Less(a, b abi.PodView) bool    { return s.p.Less(a, b) }
func (s nativeSort) Keyed() bool                   { return s.p.Key != nil }
func (s nativeSort) Key(p abi.PodView) abi.SortKey { return s.p.Key(p) }

// NativeBackoffSort runs p as the backoff-sort slot. It is keyed when p.Key
// is set. It panics if p.Less is nil, as backoffsort.Register does.
func NativeBackoffSort(p backoffsort.Policy) BackoffSort {
	if p.Less == nil {
		panic("policytest.NativeBackoffSort: Policy.Less is nil")
	}
	return nativeBackoffSort{p}
}

type nativeBackoffSort struct{ p backoffsort.Policy }

func (s nativeBackoffSort) Less(a, b abi.PodView) bool    { return s.p.Less(a, b) }
func (s nativeBackoffSort) Keyed() bool                   { return s.p.Key != nil }
func (s nativeBackoffSort) Key(p abi.PodView) abi.SortKey { return s.p.Key(p) }
func (s nativeBackoffSort) MayPop(p abi.PodView) bool     { return backoffsort.MayPop(s.p, p) }

// NativePreEnqueue runs f as the PreEnqueue slot. It panics if f is nil.
func NativePreEnqueue(f preenqueue.Func) policy.PreEnqueue {
	if f == nil {
		panic("policytest.NativePreEnqueue: nil func")
	}
	return nativePreEnqueue{f}
}

type nativePreEnqueue struct{ f preenqueue.Func }

func (s nativePreEnqueue) PreEnqueue(p abi.PodView) abi.Gate { return preenqueue.Decide(s.f, p) }

// NativeQueueingHint runs plugins as the QueueingHint slot, deciding with
// hint.DecidePods (the per-pod dispatch of hint.Decide). It panics if the
// plugins' registrations are invalid, as hint.Register does.
func NativeQueueingHint(plugins ...hint.Plugin) policy.QueueingHint {
	regs, err := hint.Registrations(plugins)
	if err != nil {
		panic("policytest.NativeQueueingHint: " + err.Error())
	}
	return nativeQueueingHint{plugins: plugins, regs: regs}
}

type nativeQueueingHint struct {
	plugins []hint.Plugin
	regs    []abi.Registration
}

func (s nativeQueueingHint) Registrations() []abi.Registration {
	return append([]abi.Registration(nil), s.regs...)
}

func (s nativeQueueingHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	hint.DecidePods(s.plugins, ev, pods, out)
}

// NativeVictimOrder runs more as the victim-order slot, sorting with
// victim.OrderVictims. It panics if more is nil.
func NativeVictimOrder(more victim.More) policy.VictimOrder {
	if more == nil {
		panic("policytest.NativeVictimOrder: nil func")
	}
	return nativeVictimOrder{more}
}

type nativeVictimOrder struct{ more victim.More }

func (s nativeVictimOrder) Order(_ abi.PodView, victims []abi.Victim, order []uint32) {
	victim.OrderVictims(s.more, victims, order)
}
