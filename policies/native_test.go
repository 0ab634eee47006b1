package policies_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
	hints "github.com/wasmsched/wasmsched/policies/hints/logic"
)

// TestNativeEverySlot: every slot has a native policy named as its built-in
// module, implementing the slot's interface (the sorts keyed, as their
// modules are).
func TestNativeEverySlot(t *testing.T) {
	for _, s := range abi.Slots {
		if s.Placement() {
			continue // no built-in placement policy: the slots start empty
		}
		p, ok := policies.Native(s)
		if !ok {
			t.Fatalf("slot %s: no native policy", s)
		}
		if want := policies.Builtin(s).Name; p.Name != want {
			t.Errorf("slot %s: native policy %q, built-in module %q", s, p.Name, want)
		}
		var impl bool
		switch s {
		case abi.SlotQueueSort:
			k, keyed := p.Impl.(policy.Keyer)
			_, impl = p.Impl.(policy.Sort)
			impl = impl && keyed && k.Keyed()
		case abi.SlotBackoffSort:
			k, keyed := p.Impl.(policy.Keyer)
			_, impl = p.Impl.(policy.BackoffSort)
			impl = impl && keyed && k.Keyed()
		case abi.SlotPreEnqueue:
			_, impl = p.Impl.(policy.PreEnqueue)
		case abi.SlotQueueingHint:
			_, impl = p.Impl.(policy.QueueingHint)
		case abi.SlotVictimOrder:
			_, impl = p.Impl.(policy.VictimOrder)
		}
		if !impl {
			t.Errorf("slot %s: %T does not implement the slot's interface", s, p.Impl)
		}
	}
	if p, ok := policies.Native(abi.Slot(200)); ok || p != (policies.NativePolicy{}) {
		t.Errorf("Native(200) = %+v, %v; want the zero NativePolicy, false", p, ok)
	}
}

// strict fails the test on a failed call or a fallback, so that every Wasm
// answer below comes from the module.
type strict struct {
	policy.Discard
	t *testing.T
}

func (r strict) Failed(s abi.Slot, why string, err error) { r.t.Errorf("slot %s: %s: %v", s, why, err) }
func (r strict) FellBack(s abi.Slot, n int)               { r.t.Errorf("slot %s: %d fallbacks", s, n) }

// TestNativeAgreesWithBuiltin: the native policies answer like the embedded
// Wasm modules on a few inputs per slot (the logic packages' diff_test.go
// files compare the logic with its modules at length).
func TestNativeAgreesWithBuiltin(t *testing.T) {
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	var w struct {
		sort    policy.Sort
		backoff policy.BackoffSort
		pre     policy.PreEnqueue
		hint    policy.QueueingHint
		victims policy.VictimOrder
	}
	// A deadline no call reaches: the default 100 ms is wall-clock, and a
	// call descheduled that long on a loaded machine would fall back.
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	set := wasmslot.NewSet(rt, limits, strict{t: t}, policy.Installer{
		Sort:         func(s policy.Sort) { w.sort = s },
		BackoffSort:  func(s policy.BackoffSort) { w.backoff = s },
		PreEnqueue:   func(p policy.PreEnqueue) { w.pre = p },
		QueueingHint: func(h policy.QueueingHint) { w.hint = h },
		VictimOrder:  func(v policy.VictimOrder) { w.victims = v },
	})
	defer set.Close(ctx)
	nat := map[abi.Slot]any{}
	for _, s := range abi.Slots {
		if s.Placement() {
			continue // no built-in placement policy: the slots start empty
		}
		b := policies.Builtin(s)
		if err := set.Load(ctx, s, "builtin:"+b.Name, b.Wasm, ""); err != nil {
			t.Fatal(err)
		}
		p, _ := policies.Native(s)
		nat[s] = p.Impl
	}

	t0 := time.Unix(1_700_000_000, 0)
	pods := []abi.PodView{
		policytest.MakePod().Name("a").Priority(10).Queued(t0).BackoffExpiry(t0.Add(300 * time.Millisecond)).UnschedulablePlugins("NodeResourcesFit").View(),
		policytest.MakePod().Name("b").Priority(1).Queued(t0.Add(-time.Second)).BackoffExpiry(t0.Add(100 * time.Millisecond)).View(),
		policytest.MakePod().Name("c").Priority(10).Queued(t0.Add(time.Second)).BackoffExpiry(t0.Add(1500 * time.Millisecond)).LastFailureError().View(),
		policytest.MakePod().Namespace("ns").Name("g").Priority(5).Group("gang", 3).GroupMembers(2).GroupPriority(5).
			PendingPlugins("GangScheduling").Request("cpu", 500).UnschedulablePlugins("NodeResourcesFit").View(),
		policytest.MakePod().Namespace("ns").Name("h").Group("gang", 2).GroupMembers(2).Request("cpu", 100000).
			UnschedulablePlugins("NodeResourcesFit", "TaintToleration").View(),
	}
	natSort, natBackoff := nat[abi.SlotQueueSort].(policy.Sort), nat[abi.SlotBackoffSort].(policy.BackoffSort)
	for _, a := range pods {
		if got, want := natSort.(policy.Keyer).Key(a), w.sort.(policy.Keyer).Key(a); got != want {
			t.Errorf("queueSort key of %s: native %v, Wasm %v", a.Name(), got, want)
		}
		if got, want := natBackoff.(policy.Keyer).Key(a), w.backoff.(policy.Keyer).Key(a); got != want {
			t.Errorf("backoffSort key of %s: native %v, Wasm %v", a.Name(), got, want)
		}
		if got, want := natBackoff.MayPop(a), w.backoff.MayPop(a); got != want {
			t.Errorf("MayPop(%s): native %v, Wasm %v", a.Name(), got, want)
		}
		if got, want := nat[abi.SlotPreEnqueue].(policy.PreEnqueue).PreEnqueue(a), w.pre.PreEnqueue(a); got != want {
			t.Errorf("PreEnqueue(%s): native %+v, Wasm %+v", a.Name(), got, want)
		}
		for _, b := range pods {
			if got, want := natSort.Less(a, b), w.sort.Less(a, b); got != want {
				t.Errorf("queueSort Less(%s, %s): native %v, Wasm %v", a.Name(), b.Name(), got, want)
			}
			if got, want := natBackoff.Less(a, b), w.backoff.Less(a, b); got != want {
				t.Errorf("backoffSort Less(%s, %s): native %v, Wasm %v", a.Name(), b.Name(), got, want)
			}
		}
	}

	natHint := nat[abi.SlotQueueingHint].(policy.QueueingHint)
	if diff := cmp.Diff(w.hint.Registrations(), natHint.Registrations()); diff != "" {
		t.Errorf("Registrations (-Wasm, +native):\n%s", diff)
	}
	if len(natHint.Registrations()) == 0 || len(hints.Plugins) == 0 {
		t.Error("the hints policy registers nothing")
	}
	node := policytest.MakeNode().Name("n").Allocatable("cpu", 4000).Allocatable("pods", 110)
	events := []abi.EventView{
		policytest.NodeAdd(node.Obj()),
		policytest.NodeDelete(node.Obj()),
		policytest.PodDelete(policytest.MakePod().Name("gone").Node("n").Request("cpu", 1000).Obj()),
	}
	for i, ev := range events {
		got, want := make([]abi.Hint, len(pods)), make([]abi.Hint, len(pods))
		natHint.Hints(ev, pods, got)
		w.hint.Hints(ev, pods, want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event %d: hints (-Wasm, +native):\n%s", i, diff)
		}
	}

	victims := []abi.Victim{
		policytest.MakeVictim().Name("v0").UID("v0").Priority(1).Started(t0).Obj(),
		policytest.MakeVictim().Name("v1").UID("v1").Priority(9).Started(t0.Add(time.Second)).Obj(),
		policytest.MakeVictim().Name("v2").UID("v2").Priority(9).Started(t0).Group(3).Obj(),
		policytest.MakeVictim().Name("v3").UID("v3").Priority(5).Started(t0).PDBViolating().Obj(),
	}
	got, want := make([]uint32, len(victims)), make([]uint32, len(victims))
	nat[abi.SlotVictimOrder].(policy.VictimOrder).Order(pods[0], victims, got)
	w.victims.Order(pods[0], victims, want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victim order (-Wasm, +native):\n%s", diff)
	}
}
