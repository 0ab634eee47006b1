package wasmslot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	fifosort "github.com/wasmsched/wasmsched/guest-sdk/examples/fifosort/logic"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	gpupack "github.com/wasmsched/wasmsched/guest-sdk/examples/gpupack/logic"
	holdlabel "github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	importance "github.com/wasmsched/wasmsched/guest-sdk/examples/importance/logic"
	nodepool "github.com/wasmsched/wasmsched/guest-sdk/examples/nodepool/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/native"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	backoffpop "github.com/wasmsched/wasmsched/policies/backoffpop/logic"
)

// nativeOf is the native build of each of validModules: the logic its module
// registers.
var nativeOf = map[string]any{
	"fifosort":   native.Sort(fifosort.Policy),
	"backoffpop": native.BackoffSort(backoffpop.BackoffSort),
	"holdlabel":  native.PreEnqueue(holdlabel.PreEnqueue),
	"fithint":    native.QueueingHint(fithint.Plugin),
	"importance": native.VictimOrder(importance.MoreImportant),
	"nodepool":   native.Filter(nodepool.Filter, nodepool.Options...),
	"gpupack":    native.Score(gpupack.Score, gpupack.Options...),
}

// TestSetLoadNativeEverySlot: each slot takes the native build of a module's
// logic, installs it as is (no adapter, no breaker, no calls counted), and
// reports it in Current and Breakers.
func TestSetLoadNativeEverySlot(t *testing.T) {
	rec := newCounting()
	in := &installed{}
	now := time.Unix(1000, 0)
	s := newSet(t, rec, in, wasmslot.WithClock(func() time.Time { return now }))
	for _, m := range validModules {
		if err := s.LoadNative(m.slot, m.name, nativeOf[m.name]); err != nil {
			t.Fatalf("%s: %v", m.slot, err)
		}
		if !m.fromModule(in) {
			t.Errorf("%s: the installed policy does not answer as %s", m.slot, m.name)
		}
		want := wasmslot.ModuleInfo{Name: "native:" + m.name, ABI: wasmslot.NativeABI, Since: now}
		info := s.Current()[m.slot]
		if diff := cmp.Diff(want, info); diff != "" {
			t.Errorf("%s: Current (-want, +got):\n%s", m.slot, diff)
		}
		if !info.IsNative() {
			t.Errorf("%s: IsNative() = false", m.slot)
		}
		if diff := cmp.Diff(wasmslot.BreakerState{}, s.Breakers()[m.slot]); diff != "" {
			t.Errorf("%s: breaker (-want, +got):\n%s", m.slot, diff)
		}
	}
	if got := len(s.Current()); got != len(abi.Slots) {
		t.Errorf("Current has %d slots, want %d", got, len(abi.Slots))
	}
	if got := len(s.Breakers()); got != len(abi.Slots) {
		t.Errorf("Breakers has %d slots, want %d", got, len(abi.Slots))
	}
	// Installed as given: the queue's type checks (Keyer) see the policy.
	if k, ok := (*in.sort.Load()).(policy.Keyer); !ok || !k.Keyed() {
		t.Error("the native queue sort was not installed keyed")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range validModules {
		if got := rec.swaps[m.slot.String()+"/success"]; got != 1 {
			t.Errorf("%s: %d successful swaps, want 1", m.slot, got)
		}
	}
	if len(rec.calls)+len(rec.failures)+len(rec.fallbacks) != 0 {
		t.Errorf("a native policy counted calls %v, failures %v, fallbacks %v", rec.calls, rec.failures, rec.fallbacks)
	}
	if got := in.installs.Load(); got != int64(len(validModules)) {
		t.Errorf("%d installs, want %d", got, len(validModules))
	}
}

// TestSetLoadNativeRefused: a value that does not implement the slot's
// interface, an unknown slot, an unwired slot and a closed Set are refused
// with an error saying why; the slot keeps what it had.
func TestSetLoadNativeRefused(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	inst := in.installer()
	inst.VictimOrder = nil
	s := wasmslot.NewSet(newRuntime(t), testLimits(), rec, inst)
	fifo := example(t, "fifosort")
	if err := s.Load(ctx, abi.SlotQueueSort, "fifosort", fifo, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadNative(abi.SlotPreEnqueue, "holdlabel", nativeOf["holdlabel"]); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		slot   abi.Slot
		impl   any
		reason string
		want   []string
	}{
		{"sort as PreEnqueue", abi.SlotPreEnqueue, policy.PrioritySort{}, "slot",
			[]string{`"native:sort as PreEnqueue"`, "policy.PrioritySort cannot serve the preEnqueue slot", "does not implement policy.PreEnqueue",
				`the slot keeps the native policy "native:holdlabel"`}},
		{"sort as backoff sort", abi.SlotBackoffSort, native.Sort(fifosort.Policy), "slot",
			[]string{"cannot serve the backoffSort slot", "does not implement policy.BackoffSort", "the slot keeps its current policy"}},
		{"nil", abi.SlotQueueSort, nil, "slot",
			[]string{"<nil> cannot serve the queueSort slot", `the slot keeps module "fifosort" (sha256 ` + sha(fifo) + ")"}},
		{"string", abi.SlotQueueingHint, "hints", "slot", []string{"string cannot serve the queueingHint slot", "policy.QueueingHint"}},
		{"unknown slot", abi.Slot(9), policy.PrioritySort{}, "slot", []string{"unknown slot 9", "queueSort, backoffSort"}},
		{"unwired", abi.SlotVictimOrder, nativeOf["importance"], "unwired", []string{"no installer for the victimOrder slot"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Current()
			installs := in.installs.Load()
			err := s.LoadNative(c.slot, c.name, c.impl)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if diff := cmp.Diff(before, s.Current()); diff != "" {
				t.Errorf("Current changed (-before, +after):\n%s", diff)
			}
			if in.installs.Load() != installs {
				t.Error("a refused policy was installed")
			}
		})
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadNative(abi.SlotQueueSort, "fifosort", nativeOf["fifosort"]); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed set: err = %v", err)
	}
	// A native policy still installed after Close keeps answering itself.
	if got := (*in.pre.Load()).PreEnqueue(policytest.MakePod().Namespace("ns").Name("held").Label("example.wasmsched.io/hold", "yes").View()); got.Code == abi.GateAdmit {
		t.Error("after Close: the native PreEnqueue admitted a held pod")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{"queueSort/success": 1, "preEnqueue/success": 1, "preEnqueue/slot": 1, "backoffSort/slot": 1,
		"queueSort/slot": 1, "queueingHint/slot": 1, "unknown/slot": 1, "victimOrder/unwired": 1, "queueSort/closed": 1}
	if diff := cmp.Diff(want, rec.swaps); diff != "" {
		t.Errorf("swaps (-want, +got):\n%s", diff)
	}
}

// TestSetLoadNativeSwaps: Wasm -> native -> Wasm in one slot. The Wasm
// module a native policy replaces is closed, and a late call through its
// adapter is answered by the native policy, without a fallback.
func TestSetLoadNativeSwaps(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	s := newSet(t, rec, in)
	prio := example(t, "prioritysort")
	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, ""); err != nil {
		t.Fatal(err)
	}
	wasmSort := *in.sort.Load()
	if err := s.LoadNative(abi.SlotQueueSort, "fifosort", nativeOf["fifosort"]); err != nil {
		t.Fatal(err)
	}
	if got := s.Current()[abi.SlotQueueSort]; got.Name != "native:fifosort" || got.SHA256 != "" {
		t.Errorf("Current after LoadNative = %+v", got)
	}
	if (*in.sort.Load()).Less(hiPod, loPod) {
		t.Error("native fifosort: want the earlier created first")
	}
	if wasmSort.Less(hiPod, loPod) || wasmSort.(policy.Keyer).Key(loPod) != fifosort.Key(loPod) {
		t.Error("the replaced Wasm adapter: want fifosort's answers through its native successor")
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, sha(prio)); err != nil {
		t.Fatal(err)
	}
	if got := s.Current()[abi.SlotQueueSort]; got.Name != "prioritysort" || got.SHA256 != sha(prio) || got.IsNative() {
		t.Errorf("Current after Load = %+v", got)
	}
	if !(*in.sort.Load()).Less(hiPod, loPod) {
		t.Error("prioritysort after native: want the higher priority first")
	}
	if (wasmslot.BreakerState{Enabled: true, Threshold: wasmslot.DefaultBreakerFailures, Window: wasmslot.DefaultBreakerWindow}) != s.Breakers()[abi.SlotQueueSort] {
		t.Errorf("breaker after native -> Wasm: %+v", s.Breakers()[abi.SlotQueueSort])
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.failures)+len(rec.fallbacks) != 0 {
		t.Errorf("failures %v, fallbacks %v", rec.failures, rec.fallbacks)
	}
	if got := rec.swaps["queueSort/success"]; got != 3 {
		t.Errorf("%d successful swaps, want 3", got)
	}
}

// TestSetSwapNativeHammer: goroutines compute sort keys and compare pods
// through whatever is installed while another goroutine alternates the Wasm
// prioritysort and the native fifosort 100 times. Every call completes
// without a failure or a fallback, and the slot ends on the last one loaded.
func TestSetSwapNativeHammer(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second // see TestSetSwapHammer
	s := wasmslot.NewSet(newRuntime(t), limits, rec, in.installer())
	defer s.Close(ctx)
	prio := example(t, "prioritysort")
	if err := s.LoadNative(abi.SlotQueueSort, "fifosort", nativeOf["fifosort"]); err != nil {
		t.Fatal(err)
	}
	const swaps = 100
	hammerSortSwaps(t, s, in, rec, swaps, func(i int) error {
		if i%2 == 0 {
			return s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, "")
		}
		return s.LoadNative(abi.SlotQueueSort, "fifosort", nativeOf["fifosort"])
	})
	if got := s.Current()[abi.SlotQueueSort]; got.Name != "native:fifosort" || !got.IsNative() {
		t.Errorf("after %d swaps the slot holds %+v, want native:fifosort", swaps, got)
	}
}
