package wasmslot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// The fault tests load every module of testdata/faults (see its README) into
// the real runtime and the slot adapters.
//
// Timing: each module gets a 50 ms deadline, but the runtime's watchdog runs
// on a fake clock (faultRuntime) that stands still unless a test makes a
// call through runCall with spins set. So a call that must fail by itself (a
// trap, a bad output) or answer (the slow fixture's fast inputs) can never
// be stopped by its deadline, however loaded the machine, and a call that
// spins is stopped by its deadline and never before it, counted on that
// clock. How soon after its deadline the watchdog stops a call on the real
// clock is host/wasm's business (TestWatchdogScan).
const (
	faultDeadline = 50 * time.Millisecond
	// faultPages is the memory limit, low so that the grow fixtures reach it
	// soon: growing a page at a time is slow in wazero (measured here to the
	// limit: 16 pages 5 ms, 64 pages 21 ms, 256 pages 82 ms; with -race 16,
	// 62 and 311 ms).
	faultPages = 8
	// stopBound bounds the wait for a call that must return: it only catches
	// a call that never stops, not a slow machine.
	stopBound = 2 * time.Minute
)

// faultRuntime returns a runtime, closed when t ends, whose watchdog runs on
// the returned fake clock: no call reaches its deadline unless it is made
// through runCall with spins set.
func faultRuntime(t *testing.T) (*wasm.Runtime, *testingclock.FakeClock) {
	t.Helper()
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, err := wasm.NewRuntime(ctx, wasm.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(ctx); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	})
	return rt, clk
}

// runCall runs f, which calls into a module of a faultRuntime (a decision
// through an adapter, a Set.Load), and returns how far the watchdog's clock
// moved meanwhile. With spins, it steps clk by a watchdog tick every
// millisecond until f returns, about as fast as the real clock runs, so that
// a call that spins reaches its deadline; otherwise the clock stands still
// and no call can. It fails the test if f still runs after stopBound.
func runCall(t *testing.T, clk *testingclock.FakeClock, spins bool, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	start := clk.Now()
	bound := time.After(stopBound)
	for {
		var step <-chan time.Time
		if spins {
			step = time.After(time.Millisecond)
		}
		select {
		case <-done:
			return clk.Since(start)
		case <-step:
			clk.Step(wasm.DefaultWatchdogTick)
		case <-bound:
			t.Fatalf("a call still runs after %v: it never stops", stopBound)
		}
	}
}

// faultRecorder counts what the adapters report. It embeds policy.Discard so
// that it keeps implementing policy.Recorder if the interface grows.
type faultRecorder struct {
	policy.Discard
	mu        sync.Mutex
	called    int
	failures  map[string]int // by reason
	errs      []error
	fallbacks int
	trips     int
}

func newFaultRecorder() *faultRecorder { return &faultRecorder{failures: map[string]int{}} }

func (r *faultRecorder) Called(abi.Slot) { r.mu.Lock(); r.called++; r.mu.Unlock() }
func (r *faultRecorder) Failed(_ abi.Slot, reason string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[reason]++
	r.errs = append(r.errs, err)
}
func (r *faultRecorder) FellBack(_ abi.Slot, n int) { r.mu.Lock(); r.fallbacks += n; r.mu.Unlock() }
func (r *faultRecorder) BreakerTripped(abi.Slot)    { r.mu.Lock(); r.trips++; r.mu.Unlock() }

// counts returns the calls into modules since the last take, and the
// breaker trips so far.
func (r *faultRecorder) counts() (called, trips int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.called, r.trips
}

// take returns what was recorded since the last take and resets it.
func (r *faultRecorder) take() (failures map[string]int, errs []error, fallbacks int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	failures, errs, fallbacks = r.failures, r.errs, r.fallbacks
	r.failures, r.errs, r.fallbacks, r.called = map[string]int{}, nil, 0, 0
	return failures, errs, fallbacks
}

// faultCall is one decision of a slot, made through the adapter. A slot with
// a native default (the queue's and preemption's) has run; a placement slot,
// whose adapter reports a failure instead of answering for the module (the
// plugin applies the slot's failure policy), has try and untouched.
type faultCall struct {
	name   string
	export string
	// pods is how many decisions the call answers (the fallback count).
	pods int
	// run asks adapter a about inputs whose (first) priority is prio, and
	// returns its answer and the native default's answer to the same inputs.
	run func(a any, prio int32) (got, native any)
	// try asks adapter a about inputs whose pod has priority prio, and
	// returns what the adapter wrote into its output and its error.
	try func(a any, prio int32) (got any, err error)
	// untouched is what try returns as the answer when the adapter wrote
	// nothing into its output.
	untouched any
	// slow is what the slow fixture answers when prio is even.
	slow func(prio int32) any
}

// faultSlot is a slot, how to build its adapter with the native default as
// fallback, and its decisions.
type faultSlot struct {
	slot  abi.Slot
	build func(m *wasm.Module, rec policy.Recorder) (any, error)
	calls []faultCall
}

// adapter returns a as an any that is nil when a is nil.
func adapter[T any](a *T, err error) (any, error) {
	if a == nil {
		return nil, err
	}
	return a, err
}

func faultPod(name string, prio int32) *policytest.PodWrapper {
	return policytest.MakePod().UID("uid-" + name).Namespace("ns").Name(name).Priority(prio)
}

// faultNodes are the two nodes of a placement fault call, under new ids
// (policytest numbers them): every call sends them to the module first.
func faultNodes() []policy.PlacementNode {
	return policytest.PlacementNodes(
		policytest.MakeNode().Name("n1").Allocatable("cpu", 4000),
		policytest.MakeNode().Name("n2").Allocatable("cpu", 2000))
}

// untouchedVerdicts and untouchedScores fill a placement call's output
// before the call, so that a test sees whether the adapter wrote any.
func untouchedVerdicts() []policy.FilterVerdict {
	return []policy.FilterVerdict{{Code: 0xff, Reason: "untouched"}, {Code: 0xff, Reason: "untouched"}}
}

func untouchedScores() []int64 { return []int64{-7, -7} }

var faultSlots = []faultSlot{
	{
		slot: abi.SlotQueueSort,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewSort(m, abi.SlotQueueSort, policy.PrioritySort{}, rec))
		},
		calls: []faultCall{
			{
				name: "less", export: abi.ExportQueueSortLess, pods: 1,
				run: func(a any, prio int32) (any, any) {
					x, y := faultPod("a", prio).Queued(time.Unix(1, 0)).View(), faultPod("b", 10).Queued(time.Unix(2, 0)).View()
					return a.(*wasmslot.Sort).Less(x, y), policy.PrioritySort{}.Less(x, y)
				},
				slow: func(prio int32) any { return prio < 10 },
			},
			{
				name: "key", export: abi.ExportQueueSortKey, pods: 1,
				run: func(a any, prio int32) (any, any) {
					x := faultPod("a", prio).Queued(time.Unix(1, 0)).View()
					return a.(*wasmslot.Sort).Key(x), policy.PrioritySort{}.Key(x)
				},
				slow: func(prio int32) any { return abi.SortKey{abi.Asc(int64(prio))} },
			},
		},
	},
	{
		slot: abi.SlotBackoffSort,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewBackoffSort(m, policy.BackoffExpiry{}, rec))
		},
		calls: []faultCall{
			{
				name: "less", export: abi.ExportBackoffSortLess, pods: 1,
				run: func(a any, prio int32) (any, any) {
					x, y := faultPod("a", prio).BackoffExpiry(time.Unix(9, 0)).View(), faultPod("b", 10).BackoffExpiry(time.Unix(5, 0)).View()
					return a.(*wasmslot.BackoffSort).Less(x, y), policy.BackoffExpiry{}.Less(x, y)
				},
				slow: func(prio int32) any { return prio < 10 },
			},
			{
				name: "key", export: abi.ExportBackoffSortKey, pods: 1,
				run: func(a any, prio int32) (any, any) {
					x := faultPod("a", prio).BackoffExpiry(time.Unix(9, 0)).View()
					return a.(*wasmslot.BackoffSort).Key(x), policy.BackoffExpiry{}.Key(x)
				},
				slow: func(prio int32) any { return abi.SortKey{abi.Asc(int64(prio))} },
			},
			{
				name: "mayPop", export: abi.ExportBackoffMayPop, pods: 1,
				run: func(a any, prio int32) (any, any) {
					x := faultPod("a", prio).BackoffExpiry(time.Unix(9, 0)).View() // no rejecting plugin: native says no
					return a.(*wasmslot.BackoffSort).MayPop(x), policy.BackoffExpiry{}.MayPop(x)
				},
				slow: func(int32) any { return true },
			},
		},
	},
	{
		slot: abi.SlotPreEnqueue,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewPreEnqueue(m, policy.Admit{}, rec))
		},
		calls: []faultCall{{
			name: "preEnqueue", export: abi.ExportPreEnqueue, pods: 1,
			run: func(a any, prio int32) (any, any) {
				x := faultPod("a", prio).View()
				return a.(*wasmslot.PreEnqueue).PreEnqueue(x), policy.Admit{}.PreEnqueue(x)
			},
			slow: func(int32) any { return abi.Gate{Code: abi.GateWait, Plugin: "Slow", Reason: "even priority"} },
		}},
	},
	{
		slot: abi.SlotQueueingHint,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, rec))
		},
		calls: []faultCall{{
			name: "hints", export: abi.ExportQueueingHint, pods: 2,
			run: func(a any, prio int32) (any, any) {
				ev := policytest.NodeAdd(policytest.MakeNode().Name("n").Allocatable("cpu", 4000).Obj())
				pods := []abi.PodView{faultPod("a", prio).View(), faultPod("b", 4).View()}
				got, native := make([]abi.Hint, len(pods)), make([]abi.Hint, len(pods))
				a.(*wasmslot.QueueingHint).Hints(ev, pods, got)
				policy.AlwaysQueue{}.Hints(ev, pods, native)
				return got, native
			},
			slow: func(int32) any { return []abi.Hint{abi.HintSkip, abi.HintSkip} },
		}},
	},
	{
		slot: abi.SlotVictimOrder,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewVictimOrder(m, policy.Importance{}, rec))
		},
		calls: []faultCall{{
			// One call orders the whole batch: one decision.
			name: "order", export: abi.ExportVictimOrder, pods: 1,
			run: func(a any, prio int32) (any, any) {
				vs := []abi.Victim{
					policytest.MakeVictim().UID("a").Name("a").Priority(prio).Obj(),
					policytest.MakeVictim().UID("b").Name("b").Priority(9).Obj(),
					policytest.MakeVictim().UID("c").Name("c").Priority(5).Obj(),
				}
				got, native := make([]uint32, len(vs)), make([]uint32, len(vs))
				a.(*wasmslot.VictimOrder).Order(abi.PodView{}, vs, got)
				policy.Importance{}.Order(abi.PodView{}, vs, native)
				return got, native
			},
			slow: func(int32) any { return []uint32{2, 1, 0} },
		}},
	},
	{
		slot: abi.SlotFilter,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewFilter(m, rec))
		},
		calls: []faultCall{{
			// One call judges every node: one decision.
			name: "filter", export: abi.ExportFilter, pods: 1,
			try: func(a any, prio int32) (any, error) {
				out := untouchedVerdicts()
				err := a.(policy.Filter).Filter(faultPod("a", prio).View(), faultNodes(), out)
				return out, err
			},
			untouched: untouchedVerdicts(),
			slow: func(int32) any {
				reject := policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: "even priority"}
				return []policy.FilterVerdict{reject, reject}
			},
		}},
	},
	{
		slot: abi.SlotScore,
		build: func(m *wasm.Module, rec policy.Recorder) (any, error) {
			return adapter(wasmslot.NewScore(m, rec))
		},
		calls: []faultCall{{
			name: "score", export: abi.ExportScore, pods: 1,
			try: func(a any, prio int32) (any, error) {
				out := untouchedScores()
				err := a.(policy.Score).Score(faultPod("a", prio).View(), faultNodes(), out)
				return out, err
			},
			untouched: untouchedScores(),
			slow:      func(int32) any { return []int64{2, 1} },
		}},
	},
}

// faultReasons are the fixtures that load and fail at run time, with the
// reason every call into them is counted under.
var faultReasons = map[string]string{
	"loop":     "deadline",
	"trap":     "trap",
	"grow":     "trap",
	"oversize": "bad_output",
	"garbage":  "bad_output",
}

// refusedFaults are the fixtures that must not get into a slot, with what the
// refusal says. atLoad: the runtime's Load refuses the module; otherwise
// Load accepts it and the slot adapter refuses it.
var refusedFaults = []struct {
	fault  string
	atLoad bool
	want   func(slot abi.Slot) []string
}{
	{"abi2", true, func(abi.Slot) []string { return []string{"speaks ABI 2.0, this host speaks 1.x", "rebuild it"} }},
	{"nobuffer", true, func(abi.Slot) []string { return []string{"missing required export wasmsched_buffer"} }},
	{"fs", true, func(abi.Slot) []string {
		return []string{"forbidden imports wasi_snapshot_preview1.path_open, wasi_snapshot_preview1.fd_read", "no filesystem"}
	}},
	{"sock", true, func(abi.Slot) []string {
		return []string{"forbidden imports wasi_snapshot_preview1.sock_accept, wasi_snapshot_preview1.sock_send", "network"}
	}},
	{"env", true, func(abi.Slot) []string { return []string{"forbidden import env.getenv:", "environment"} }},
	{"noexport", false, func(s abi.Slot) []string {
		missing := map[abi.Slot]string{
			abi.SlotQueueSort:    abi.ExportQueueSortLess,
			abi.SlotBackoffSort:  abi.ExportBackoffMayPop,
			abi.SlotPreEnqueue:   abi.ExportPreEnqueue,
			abi.SlotQueueingHint: abi.ExportHintEvents,
			abi.SlotVictimOrder:  abi.ExportVictimOrder,
			abi.SlotFilter:       abi.ExportNodes,
			abi.SlotScore:        abi.ExportScore,
		}[s]
		return []string{"cannot serve the " + s.String() + " slot: it does not export " + missing}
	}},
}

func faultLimits() wasm.Limits {
	l := wasm.DefaultLimits()
	l.Deadline, l.MemoryPages = faultDeadline, faultPages
	return l
}

func readFault(t *testing.T, name string) []byte {
	t.Helper()
	bin, err := os.ReadFile(filepath.Join("testdata", "faults", name+".wasm"))
	if err != nil {
		t.Fatalf("%v (run make fixtures)", err)
	}
	return bin
}

// loadFault loads a fixture that must load, and builds its slot adapter.
func loadFault(t *testing.T, rt *wasm.Runtime, fs faultSlot, fault string, rec policy.Recorder) (*wasm.Module, any) {
	t.Helper()
	name := fs.slot.String() + "-" + fault
	m, err := rt.Load(context.Background(), name+".wasm", readFault(t, name), faultLimits())
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	a, err := fs.build(m, rec)
	if err != nil {
		t.Fatalf("adapter for %s: %v", name, err)
	}
	return m, a
}

// TestFaultFixturesListed keeps the tables and the folder in step.
func TestFaultFixturesListed(t *testing.T) {
	wats, err := filepath.Glob(filepath.Join("testdata", "faults", "*.wat"))
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, w := range wats {
		got = append(got, strings.TrimSuffix(filepath.Base(w), ".wat"))
		if _, err := os.Stat(strings.TrimSuffix(w, ".wat") + ".wasm"); err != nil {
			t.Errorf("%v (run make fixtures)", err)
		}
	}
	for _, fs := range faultSlots {
		for f := range faultReasons {
			want = append(want, fs.slot.String()+"-"+f)
		}
		want = append(want, fs.slot.String()+"-slow")
		for _, r := range refusedFaults {
			want = append(want, fs.slot.String()+"-"+r.fault)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fixtures in testdata/faults vs. the tests' tables (-want, +got):\n%s", diff)
	}
	var slots []abi.Slot
	for _, fs := range faultSlots {
		slots = append(slots, fs.slot)
	}
	if diff := cmp.Diff(abi.Slots[:], slots); diff != "" {
		t.Errorf("the slots the fault tests cover vs. the ABI's (-want, +got):\n%s", diff)
	}
}

// TestFaultRefused: a module that must not serve its slot is refused with a
// message that names it and says what is wrong, and nothing of it is kept;
// a Set refuses it the same way, and counts why.
func TestFaultRefused(t *testing.T) {
	rt, _ := faultRuntime(t)
	ctx := context.Background()
	set := wasmslot.NewSet(rt, faultLimits(), nil, (&installed{}).installer())
	defer set.Close(ctx)
	for _, fs := range faultSlots {
		for _, r := range refusedFaults {
			name := fs.slot.String() + "-" + r.fault
			t.Run(name, func(t *testing.T) {
				bin := readFault(t, name)
				file := name + ".wasm"
				m, err := rt.Load(ctx, file, bin, faultLimits())
				if r.atLoad {
					if err == nil {
						m.Close(ctx)
						t.Fatal("Load accepted the module")
					}
					if m != nil {
						t.Error("Load returned a module with its error")
					}
					// Refused again, the same way: nothing was cached.
					m2, err2 := rt.Load(ctx, file, bin, faultLimits())
					if m2 != nil || err2 == nil || err2.Error() != err.Error() {
						t.Errorf("second Load: %v, %v; want the same refusal %q", m2, err2, err)
					}
				} else {
					if err != nil {
						t.Fatalf("Load: %v; the slot adapter, not the runtime, should refuse it", err)
					}
					defer m.Close(ctx)
					rec := newFaultRecorder()
					var a any
					a, err = fs.build(m, rec)
					if a != nil {
						t.Errorf("the adapter constructor returned an adapter (%T) with its error", a)
					}
					if err == nil {
						t.Fatal("the adapter accepted the module")
					}
					if st := m.Stats(); st.Live != st.Free {
						t.Errorf("the refused adapter kept an instance: %d live, %d free", st.Live, st.Free)
					}
					if _, _, n := rec.take(); n != 0 {
						t.Errorf("%d fallbacks counted for a refused module", n)
					}
				}
				msg := err.Error()
				for _, want := range append(r.want(fs.slot), `"`+file+`"`) {
					if !strings.Contains(msg, want) {
						t.Errorf("refusal %q\ndoes not contain %q", msg, want)
					}
				}

				err = set.Load(ctx, fs.slot, file, bin, "")
				if err == nil {
					t.Fatal("Set.Load accepted the module")
				}
				reason := "slot"
				if r.atLoad {
					reason = "invalid"
				}
				if got := wasmslot.Refusal(err); got != reason {
					t.Errorf("Set.Load refused it as %q, want %q: %v", got, reason, err)
				}
				msg = err.Error()
				for _, want := range append(r.want(fs.slot), `"`+file+`"`) {
					if !strings.Contains(msg, want) {
						t.Errorf("Set.Load's refusal %q\ndoes not contain %q", msg, want)
					}
				}
				if info, ok := set.Current()[fs.slot]; ok {
					t.Errorf("Set.Load refused the module, but Current reports %+v", info)
				}
			})
		}
	}
}

// TestFaultFallback: every decision made through a module that loops, traps,
// exhausts its memory or returns too much or garbage gets the native
// default's answer; the call is stopped (a loop by its deadline, never
// before it), counted with its reason and as a fallback, and its instance
// is discarded. The placement slots, which have no native default, are
// TestFaultPlacementFails's.
func TestFaultFallback(t *testing.T) {
	rt, clk := faultRuntime(t)
	for _, fs := range faultSlots {
		if fs.slot.Placement() {
			continue
		}
		for _, fault := range []string{"loop", "trap", "grow", "oversize", "garbage"} {
			reason := faultReasons[fault]
			name := fs.slot.String() + "-" + fault
			t.Run(name, func(t *testing.T) {
				rec := newFaultRecorder()
				m, a := loadFault(t, rt, fs, fault, rec)
				before := m.Stats().Discarded
				for _, c := range fs.calls {
					var got, native any
					ran := runCall(t, clk, reason == "deadline", func() { got, native = c.run(a, 3) })
					if diff := cmp.Diff(native, got); diff != "" {
						t.Errorf("%s: answer (-native default, +got):\n%s", c.name, diff)
					}
					if reason == "deadline" && ran <= faultDeadline {
						t.Errorf("%s: interrupted after %v of the watchdog's clock, not past its %v deadline", c.name, ran, faultDeadline)
					}
					failures, errs, fallbacks := rec.take()
					if diff := cmp.Diff(map[string]int{reason: 1}, failures); diff != "" {
						t.Errorf("%s: failures by reason (-want, +got):\n%s", c.name, diff)
					}
					if fallbacks != c.pods {
						t.Errorf("%s: %d decisions counted as fallbacks, want %d", c.name, fallbacks, c.pods)
					}
					for _, err := range errs {
						if msg := err.Error(); !strings.Contains(msg, `"`+name+`.wasm"`) || !strings.Contains(msg, c.export) {
							t.Errorf("%s: failure %q does not name the module and %s", c.name, msg, c.export)
						}
						if reason == "deadline" && !errors.Is(err, wasm.ErrDeadline) {
							t.Errorf("%s: failure %v is not a wasm.ErrDeadline", c.name, err)
						}
					}
				}
				// Every failure discards its instance, including the outputs
				// only the adapters can tell are wrong (a gate, hints, a
				// permutation, a key's length).
				if got, want := m.Stats().Discarded-before, uint64(len(fs.calls)); got != want {
					t.Errorf("%d broken instances discarded, want %d (one per failed call)", got, want)
				}
			})
		}
	}
}

// TestFaultSlowInputs: a module that is slow only for some inputs answers
// the fast ones itself and the slow ones, after the deadline, natively (a
// placement slot: with an error, see slowPlacement). The watchdog's clock stands still during the fast calls, so none of them can
// be stopped however loaded the machine, and moves during the slow ones.
func TestFaultSlowInputs(t *testing.T) {
	rt, clk := faultRuntime(t)
	for _, fs := range faultSlots {
		t.Run(fs.slot.String()+"-slow", func(t *testing.T) {
			rec := newFaultRecorder()
			_, a := loadFault(t, rt, fs, "slow", rec)
			for _, c := range fs.calls {
				if c.try != nil {
					slowPlacement(t, clk, rec, a, c)
					continue
				}
				for _, prio := range []int32{2, 3, 4, 7} {
					slow := prio%2 == 1
					var got, native any
					ran := runCall(t, clk, slow, func() { got, native = c.run(a, prio) })
					failures, _, fallbacks := rec.take()
					if !slow {
						if diff := cmp.Diff(c.slow(prio), got); diff != "" {
							t.Errorf("%s, priority %d (fast): answer (-module's, +got):\n%s", c.name, prio, diff)
						}
						if cmp.Equal(native, got) {
							t.Errorf("%s, priority %d: the module's answer equals the native default's, so the test cannot tell them apart", c.name, prio)
						}
						if len(failures) != 0 || fallbacks != 0 {
							t.Errorf("%s, priority %d (fast): failures %v, %d fallbacks; want none", c.name, prio, failures, fallbacks)
						}
						continue
					}
					if diff := cmp.Diff(native, got); diff != "" {
						t.Errorf("%s, priority %d (slow): answer (-native default, +got):\n%s", c.name, prio, diff)
					}
					if diff := cmp.Diff(map[string]int{"deadline": 1}, failures); diff != "" {
						t.Errorf("%s, priority %d (slow): failures by reason (-want, +got):\n%s", c.name, prio, diff)
					}
					if fallbacks != c.pods {
						t.Errorf("%s, priority %d (slow): %d fallbacks, want %d", c.name, prio, fallbacks, c.pods)
					}
					if ran <= faultDeadline {
						t.Errorf("%s, priority %d (slow): interrupted after %v of the watchdog's clock, not past its %v deadline", c.name, prio, ran, faultDeadline)
					}
				}
			}
		})
	}
}

// slowPlacement is TestFaultSlowInputs for a placement call: the fast
// inputs get the module's answer, the slow ones an error after the deadline
// (the plugin applies the failure policy), counted as a failure and a
// fallback, and nothing written into the output.
func slowPlacement(t *testing.T, clk *testingclock.FakeClock, rec *faultRecorder, a any, c faultCall) {
	t.Helper()
	for _, prio := range []int32{2, 3, 4, 7} {
		slow := prio%2 == 1
		var got any
		var err error
		ran := runCall(t, clk, slow, func() { got, err = c.try(a, prio) })
		failures, _, fallbacks := rec.take()
		if !slow {
			if err != nil {
				t.Errorf("%s, priority %d (fast): %v", c.name, prio, err)
			}
			if diff := cmp.Diff(c.slow(prio), got); diff != "" {
				t.Errorf("%s, priority %d (fast): answer (-module's, +got):\n%s", c.name, prio, diff)
			}
			if len(failures) != 0 || fallbacks != 0 {
				t.Errorf("%s, priority %d (fast): failures %v, %d fallbacks; want none", c.name, prio, failures, fallbacks)
			}
			continue
		}
		if !errors.Is(err, wasm.ErrDeadline) {
			t.Errorf("%s, priority %d (slow): error %v, want a wasm.ErrDeadline", c.name, prio, err)
		}
		if diff := cmp.Diff(c.untouched, got); diff != "" {
			t.Errorf("%s, priority %d (slow): the adapter wrote an answer (-untouched, +got):\n%s", c.name, prio, diff)
		}
		if diff := cmp.Diff(map[string]int{"deadline": 1}, failures); diff != "" {
			t.Errorf("%s, priority %d (slow): failures by reason (-want, +got):\n%s", c.name, prio, diff)
		}
		if fallbacks != c.pods {
			t.Errorf("%s, priority %d (slow): %d fallbacks, want %d", c.name, prio, fallbacks, c.pods)
		}
		if ran <= faultDeadline {
			t.Errorf("%s, priority %d (slow): interrupted after %v of the watchdog's clock, not past its %v deadline", c.name, prio, ran, faultDeadline)
		}
	}
}

// faultBreakAfter is the breaker threshold of TestFaultPlacementFails: that
// many failed calls open it.
const faultBreakAfter = 3

// TestFaultPlacementFails: a placement module that loops, traps, exhausts
// its memory or returns too much or garbage passes the Set's smoke test
// (each fixture answers it) and then fails every call. The adapter has no
// native default: each call returns the failure, of the kind it is counted
// under, and writes nothing into its output; it is counted as a failure and
// a fallback (the plugin applies the slot's failure policy), and its
// instance is discarded. After faultBreakAfter failures the breaker opens:
// calls return an error that names it, without calling the module.
func TestFaultPlacementFails(t *testing.T) {
	ctx := context.Background()
	rt, clk := faultRuntime(t)
	for _, fs := range faultSlots {
		if !fs.slot.Placement() {
			continue
		}
		for _, fault := range []string{"loop", "trap", "grow", "oversize", "garbage"} {
			reason := faultReasons[fault]
			name := fs.slot.String() + "-" + fault
			t.Run(name, func(t *testing.T) {
				rec := newFaultRecorder()
				in := &installed{}
				// The breaker's window is far wider than the watchdog's clock
				// moves: only the count of failures opens it.
				set := wasmslot.NewSet(rt, faultLimits(), rec, in.installer(),
					wasmslot.WithBreaker(faultBreakAfter, time.Hour), wasmslot.WithClock(clk.Now))
				defer set.Close(ctx)
				file := name + ".wasm"
				var err error
				runCall(t, clk, false, func() { err = set.Load(ctx, fs.slot, file, readFault(t, name), "") })
				if err != nil {
					t.Fatalf("Set.Load: %v; the fixture should pass the smoke test", err)
				}
				var a any
				if fs.slot == abi.SlotFilter {
					a = *in.filter.Load()
				} else {
					a = *in.score.Load()
				}
				m := a.(interface{ Module() *wasm.Module }).Module()
				before := m.Stats().Discarded
				rec.take()
				for _, c := range fs.calls {
					for i := range faultBreakAfter {
						var got any
						ran := runCall(t, clk, reason == "deadline", func() { got, err = c.try(a, 4) })
						if err == nil {
							t.Fatalf("%s #%d: no error", c.name, i)
						}
						if kind := wasm.KindOf(err).String(); kind != reason {
							t.Errorf("%s #%d: error of kind %s, want %s: %v", c.name, i, kind, reason, err)
						}
						if msg := err.Error(); !strings.Contains(msg, `"`+file+`"`) || !strings.Contains(msg, c.export) {
							t.Errorf("%s #%d: error %q does not name the module and %s", c.name, i, msg, c.export)
						}
						if reason == "deadline" && ran <= faultDeadline {
							t.Errorf("%s #%d: interrupted after %v of the watchdog's clock, not past its %v deadline", c.name, i, ran, faultDeadline)
						}
						if diff := cmp.Diff(c.untouched, got); diff != "" {
							t.Errorf("%s #%d: the adapter wrote an answer (-untouched, +got):\n%s", c.name, i, diff)
						}
						failures, errs, fallbacks := rec.take()
						if diff := cmp.Diff(map[string]int{reason: 1}, failures); diff != "" {
							t.Errorf("%s #%d: failures by reason (-want, +got):\n%s", c.name, i, diff)
						}
						if len(errs) == 1 && errs[0] != err {
							t.Errorf("%s #%d: counted the failure %v, returned %v", c.name, i, errs[0], err)
						}
						if fallbacks != c.pods {
							t.Errorf("%s #%d: %d decisions counted as fallbacks, want %d", c.name, i, fallbacks, c.pods)
						}
						if open := set.Breakers()[fs.slot].Open; open != (i == faultBreakAfter-1) {
							t.Errorf("%s #%d: breaker open %v after %d failures (threshold %d)", c.name, i, open, i+1, faultBreakAfter)
						}
					}
					if got, want := m.Stats().Discarded-before, uint64(faultBreakAfter); got != want {
						t.Errorf("%s: %d broken instances discarded, want %d (one per failed call)", c.name, got, want)
					}
					if _, trips := rec.counts(); trips != 1 {
						t.Errorf("%s: %d breaker trips, want 1", c.name, trips)
					}

					// Open: an error that names the breaker, and the module is
					// not called.
					instantiated := m.Stats().Instantiated
					for i := range 3 {
						var got any
						runCall(t, clk, false, func() { got, err = c.try(a, 4) })
						if err == nil || !strings.Contains(err.Error(), "circuit breaker") || !strings.Contains(err.Error(), `"`+file+`"`) {
							t.Errorf("%s, open breaker #%d: error %v, want one naming the module's open circuit breaker", c.name, i, err)
						}
						if kind := wasm.KindOf(err); kind != 0 {
							t.Errorf("%s, open breaker #%d: a call error of kind %v: the module was called", c.name, i, kind)
						}
						if diff := cmp.Diff(c.untouched, got); diff != "" {
							t.Errorf("%s, open breaker #%d: the adapter wrote an answer (-untouched, +got):\n%s", c.name, i, diff)
						}
					}
					called, trips := rec.counts()
					failures, _, fallbacks := rec.take()
					if called != 0 || len(failures) != 0 || trips != 1 {
						t.Errorf("%s, open breaker: %d calls, failures %v, %d trips; want no call, no failure, the one trip", c.name, called, failures, trips)
					}
					if fallbacks != 3*c.pods {
						t.Errorf("%s, open breaker: %d fallbacks, want %d (each decision falls to the failure policy)", c.name, fallbacks, 3*c.pods)
					}
					if st := m.Stats(); st.Instantiated != instantiated || st.Discarded-before != faultBreakAfter {
						t.Errorf("%s, open breaker: the module was instantiated or discarded (%+v)", c.name, st)
					}
				}
			})
		}
	}
}
