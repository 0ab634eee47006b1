package policytest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// wasmDeadline is the deadline of the Wasm runs: the default limits' 100 ms
// is wall-clock, so a call descheduled that long on a loaded machine (-race,
// every CPU busy) would fail and fall back, and the test with it, however
// fast the policy. A test asserts what the policy answers; how fast it
// answers is for benchmarks. 10 s only stops a policy that never returns.
const wasmDeadline = 10 * time.Second

// wasm loads p.WasmPath into a fresh host runtime (closed when t ends) and
// returns the host's Wasm adapters of the slots p implements. It fails t if
// the module's slots differ from p's, and whenever an adapter falls back to
// a native answer. The sandbox has its default limits but wasmDeadline.
func (p Policy) wasm(t *testing.T) Slots {
	t.Helper()
	limits := wasm.DefaultLimits()
	limits.Deadline = wasmDeadline
	m := LoadModule(t, p.WasmPath, limits)

	// An export that several slots require (the placement slots' node
	// sync) does not say which of them the module implements.
	required := map[string]int{}
	for _, s := range abi.Slots {
		for _, name := range s.RequiredExports() {
			required[name]++
		}
	}
	for _, s := range abi.Slots {
		exported := 0
		for _, name := range s.RequiredExports() {
			if required[name] == 1 && m.HasExport(name) {
				exported++
			}
		}
		switch {
		case p.implements(s) && exported == 0:
			t.Errorf("%s does not implement the %s slot, but the policytest.Policy has it: does its main.go register it?", p.WasmPath, s)
		case !p.implements(s) && exported > 0:
			t.Errorf("%s implements the %s slot, but the policytest.Policy lacks it: add it so that both runs test it", p.WasmPath, s)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	rec := Strict(t)
	var s Slots
	for _, slot := range abi.Slots {
		if p.implements(slot) {
			if err := s.AddWasm(m, slot, zeroFallback{}, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.QueueSort != nil {
		checkKeyed(t, abi.SlotQueueSort, s.QueueSort.Keyed(), p.QueueSort.Key != nil)
	}
	if s.BackoffSort != nil {
		checkKeyed(t, abi.SlotBackoffSort, s.BackoffSort.Keyed(), p.BackoffSort.Key != nil)
	}
	if s.Filter != nil {
		want := NativeFilter(p.Filter, p.FilterOptions...).Options().FilterEvents
		if diff := cmp.Diff(want, s.Filter.Options().FilterEvents); diff != "" {
			t.Errorf("%s declares other filter events than the policytest.Policy's FilterOptions (is the module stale? run `make policies`) (-want, +got):\n%s", p.WasmPath, diff)
		}
	}
	if s.Score != nil {
		if want, got := NativeScore(p.Score, p.ScoreOptions...).Options().ScoreNormalized, s.Score.Options().ScoreNormalized; got != want {
			t.Errorf("the module's scores are normalised: %v; the policytest.Policy's ScoreOptions say %v (is the module stale? run `make policies`)", got, want)
		}
	}
	if s.QueueingHint != nil {
		want, err := hint.Registrations(p.QueueingHint)
		if err != nil {
			t.Fatalf("policytest.Policy.QueueingHint: %v", err)
		}
		if diff := cmp.Diff(want, s.QueueingHint.Registrations()); diff != "" {
			t.Errorf("%s registers other events than the policytest.Policy's plugins (is the module stale? run `make policies`) (-want, +got):\n%s", p.WasmPath, diff)
		}
	}
	return s
}

// AddWasm puts the host's Wasm adapter of slot around m in its field of s,
// built as the scheduler builds it (package host/policy/wasmslot, by the slot
// table); fallback answers a failed call, nil meaning the slot's native
// default. `wasmsched policy test` uses it.
func (s *Slots) AddWasm(m *wasm.Module, slot abi.Slot, fallback any, rec policy.Recorder) error {
	a, err := wasmslot.New(m, slot, fallback, rec)
	if err != nil {
		return err
	}
	spec, _ := policy.SpecOf(slot) // New checked the slot
	spec.Install(s.installer(), a)
	return nil
}

func checkKeyed(t *testing.T, slot abi.Slot, module, policy bool) {
	t.Helper()
	if module != policy {
		t.Errorf("the module's %s slot computes sort keys: %v; the policytest.Policy has a Key: %v (is the module stale? run `make policies`)", slot, module, policy)
	}
}

// LoadModule loads the policy module at path into a fresh host runtime, closed
// when tb ends, under limits; the runtime logs to tb. Host tests and
// benchmarks use it to run a policy through the real sandbox.
func LoadModule(tb testing.TB, path string, limits wasm.Limits) *wasm.Module {
	tb.Helper()
	bin, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading the policy module: %v (build it with `make policies`)", err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.WithLogger(slog.New(slog.NewTextHandler(logWriter{tb}, nil))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := rt.Close(ctx); err != nil {
			tb.Errorf("closing the runtime: %v", err)
		}
	})
	m, err := rt.Load(ctx, filepath.Base(path), bin, limits)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// Strict returns a Recorder that fails tb on every failed call and every
// fallback: a wasm run must be answered by the module, or it would pass (or
// measure) the host's native defaults.
func Strict(tb testing.TB) policy.Recorder { return strictRecorder{tb} }

type strictRecorder struct{ t testing.TB }

func (r strictRecorder) Called(abi.Slot) {}

func (r strictRecorder) Failed(slot abi.Slot, reason string, err error) {
	r.t.Errorf("a call into the module's %s slot failed (%s): %v", slot, reason, err)
}

func (r strictRecorder) FellBack(slot abi.Slot, n int) {
	r.t.Errorf("the %s slot answered %d decisions with the native fallback instead of the module", slot, n)
}

func (r strictRecorder) Observe(abi.Slot, time.Duration) {}

func (r strictRecorder) Swapped(abi.Slot, string) {}

func (r strictRecorder) BreakerTripped(slot abi.Slot) {
	r.t.Errorf("the %s slot's circuit breaker opened", slot)
}

// zeroFallback is every slot's fallback in a wasm run. The recorder already
// fails the test on a fallback; answering zero values rather than a real
// native policy makes sure a fallback cannot also make the answers right.
type zeroFallback struct{}

var (
	_ policy.BackoffSort  = zeroFallback{}
	_ policy.Keyer        = zeroFallback{}
	_ policy.PreEnqueue   = zeroFallback{}
	_ policy.QueueingHint = zeroFallback{}
	_ policy.VictimOrder  = zeroFallback{}
	_ policy.Filter       = zeroFallback{}
	_ policy.Score        = zeroFallback{}
)

func (zeroFallback) Less(a, b abi.PodView) bool                     { return false }
func (zeroFallback) MayPop(abi.PodView) bool                        { return false }
func (zeroFallback) Keyed() bool                                    { return true } // lets keyed modules load
func (zeroFallback) Key(abi.PodView) abi.SortKey                    { return abi.SortKey{} }
func (zeroFallback) PreEnqueue(abi.PodView) abi.Gate                { return abi.Gate{} }
func (zeroFallback) Registrations() []abi.Registration              { return nil }
func (zeroFallback) Hints(abi.EventView, []abi.PodView, []abi.Hint) {}
func (zeroFallback) Order(_ abi.PodView, _ []abi.Victim, order []uint32) {
	clear(order)
}
func (zeroFallback) Options() abi.PlacementOptions       { return abi.PlacementOptions{} }
func (zeroFallback) PreFilter(abi.PodView) (bool, error) { return false, nil }
func (zeroFallback) PreScore(abi.PodView) (bool, error)  { return false, nil }
func (zeroFallback) Filter(_ abi.PodView, _ []policy.PlacementNode, out []policy.FilterVerdict) error {
	clear(out)
	return nil
}
func (zeroFallback) Score(_ abi.PodView, _ []policy.PlacementNode, out []int64) error {
	clear(out)
	return nil
}

// logWriter sends the runtime's log lines (load warnings, guest output) to
// the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
