package wasmslot_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// installed holds what a Set installed, as the queue and preemption would.
type installed struct {
	sort     atomic.Pointer[policy.Sort]
	backoff  atomic.Pointer[policy.BackoffSort]
	pre      atomic.Pointer[policy.PreEnqueue]
	hint     atomic.Pointer[policy.QueueingHint]
	victims  atomic.Pointer[policy.VictimOrder]
	filter   atomic.Pointer[policy.Filter]
	score    atomic.Pointer[policy.Score]
	installs atomic.Int64
}

func (in *installed) installer() policy.Installer {
	return policy.Installer{
		Sort:         func(s policy.Sort) { in.sort.Store(&s); in.installs.Add(1) },
		BackoffSort:  func(s policy.BackoffSort) { in.backoff.Store(&s); in.installs.Add(1) },
		PreEnqueue:   func(p policy.PreEnqueue) { in.pre.Store(&p); in.installs.Add(1) },
		QueueingHint: func(h policy.QueueingHint) { in.hint.Store(&h); in.installs.Add(1) },
		VictimOrder:  func(v policy.VictimOrder) { in.victims.Store(&v); in.installs.Add(1) },
		Filter:       func(f policy.Filter) { in.filter.Store(&f); in.installs.Add(1) },
		Score:        func(sc policy.Score) { in.score.Store(&sc); in.installs.Add(1) },
	}
}

// readWasm reads a module binary; path is relative to the repository root.
func readWasm(tb testing.TB, path string) []byte {
	tb.Helper()
	bin, err := os.ReadFile(filepath.Join("..", "..", "..", path))
	if err != nil {
		tb.Fatalf("%v (run make policies fixtures)", err)
	}
	return bin
}

// example reads the module of a guest SDK example or of a built-in policy.
func example(tb testing.TB, name string) []byte {
	if name == "backoffpop" {
		return readWasm(tb, filepath.Join("policies", name, name+".wasm"))
	}
	return readWasm(tb, filepath.Join("guest-sdk", "examples", name, name+".wasm"))
}

func sha(bin []byte) string {
	s := sha256.Sum256(bin)
	return hex.EncodeToString(s[:])
}

func newRuntime(tb testing.TB) *wasm.Runtime {
	tb.Helper()
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// testLimits are DefaultLimits with a deadline no call reaches (as
// TestSetSwapHammer's): deadlines are wall-clock, a call descheduled past a
// short one on a loaded machine (-race, every CPU busy) would fail and fall
// back however fast it is, and no test that uses these limits is about
// deadlines. The tests that are load faultLimits into a faultRuntime.
func testLimits() wasm.Limits {
	l := wasm.DefaultLimits()
	l.Deadline = 10 * time.Second
	return l
}

// newSet returns a Set whose Close runs at the end of the test.
func newSet(tb testing.TB, rec policy.Recorder, in *installed, opts ...wasmslot.SetOption) *wasmslot.Set {
	tb.Helper()
	s := wasmslot.NewSet(newRuntime(tb), testLimits(), rec, in.installer(), opts...)
	tb.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

var (
	hiPod = policytest.MakePod().Name("hi").Priority(10).Created(time.Unix(20, 0)).Queued(time.Unix(20, 0)).View()
	loPod = policytest.MakePod().Name("lo").Priority(1).Created(time.Unix(10, 0)).Queued(time.Unix(10, 0)).View()
)

// TestSetLoadSwaps: a call after Load answers from the new module.
func TestSetLoadSwaps(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	s := newSet(t, rec, in)
	prio, fifo := example(t, "prioritysort"), example(t, "fifosort")

	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, sha(prio)); err != nil {
		t.Fatal(err)
	}
	sort := *in.sort.Load()
	if !sort.Less(hiPod, loPod) {
		t.Error("prioritysort: want the higher priority first")
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "fifosort", fifo, ""); err != nil {
		t.Fatal(err)
	}
	sort2 := *in.sort.Load()
	if sort2.Less(hiPod, loPod) || !sort2.Less(loPod, hiPod) {
		t.Error("fifosort: want the earlier created first")
	}
	if k, ok := sort2.(policy.Keyer); !ok || !k.Keyed() {
		t.Error("fifosort's adapter is not keyed")
	}
	// The previous adapter was not changed by the swap, but its module is
	// closed: a late call through it is handed to the adapter that replaced
	// it, and counts no failure.
	if sort == sort2 || sort.Less(hiPod, loPod) {
		t.Error("old adapter after the swap: want fifosort's answer through the new adapter")
	}
	info := s.Current()[abi.SlotQueueSort]
	if info.Name != "fifosort" || info.SHA256 != sha(fifo) || info.ABI != "1.0" && info.ABI[:2] != "1." {
		t.Errorf("Current = %+v", info)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.swaps["queueSort/success"]; got != 2 {
		t.Errorf("successful swaps = %d, want 2 (%v)", got, rec.swaps)
	}
	if len(rec.failures) != 0 {
		t.Errorf("failures: %v", rec.failures)
	}
}

// validModules are a module serving each slot and an input on which the
// installed adapter answers differently from the native default, so that a
// test can tell that the module answered.
var validModules = []struct {
	slot abi.Slot
	name string
	// fromModule calls the installed adapter and reports whether the module
	// (not the native default) answered.
	fromModule func(in *installed) bool
}{
	{abi.SlotQueueSort, "fifosort", func(in *installed) bool {
		return (*in.sort.Load()).Less(loPod, hiPod) // native: hi first
	}},
	{abi.SlotBackoffSort, "backoffpop", func(in *installed) bool {
		// backoffpop keys by KEP-5142's 1-second window, then priority; the
		// native default by expiry alone.
		p := policytest.MakePod().Name("e").Priority(5).BackoffExpiry(time.Unix(5, 300)).View()
		return (*in.backoff.Load()).(policy.Keyer).Key(p) != (policy.BackoffExpiry{}).Key(p)
	}},
	{abi.SlotPreEnqueue, "holdlabel", func(in *installed) bool {
		p := policytest.MakePod().Namespace("ns").Name("held").Label("example.wasmsched.io/hold", "yes").View()
		return (*in.pre.Load()).PreEnqueue(p).Code != abi.GateAdmit
	}},
	{abi.SlotQueueingHint, "fithint", func(in *installed) bool {
		// A pod that does not fit the new node: fithint skips it, the native
		// default requeues every pod.
		p := policytest.MakePod().Name("big").Request("cpu", 100000).UnschedulablePlugins(fithint.Name).View()
		out := []abi.Hint{abi.HintQueue}
		(*in.hint.Load()).Hints(hintEvent(), []abi.PodView{p}, out)
		return out[0] == abi.HintSkip
	}},
	{abi.SlotVictimOrder, "importance", func(in *installed) bool {
		vs := []abi.Victim{{UID: "a", Priority: 1}, {UID: "b", Priority: 9}}
		order := make([]uint32, 2)
		(*in.victims.Load()).Order(abi.PodView{}, vs, order)
		return order[0] == 1 // the native default agrees; the module is checked by the recorder's calls
	}},
	{abi.SlotFilter, "nodepool", func(in *installed) bool {
		// A pod in no pool on a node of pool gpu: nodepool rejects it; an
		// empty slot would pass it.
		out := make([]policy.FilterVerdict, 1)
		err := (*in.filter.Load()).Filter(policytest.MakePod().Name("p").View(),
			policytest.PlacementNodes(policytest.MakeNode().Name("n").Label("wasmsched.io/pool", "gpu")), out)
		return err == nil && out[0].Code == abi.FilterUnresolvable
	}},
	{abi.SlotScore, "gpupack", func(in *installed) bool {
		// gpupack prefers the node with fewer GPUs left after the pod.
		out := make([]int64, 2)
		err := (*in.score.Load()).Score(policytest.MakePod().Name("p").Request("nvidia.com/gpu", 1).View(),
			policytest.PlacementNodes(
				policytest.MakeNode().Name("a").Allocatable("nvidia.com/gpu", 8).Allocatable("cpu", 8000),
				policytest.MakeNode().Name("b").Allocatable("nvidia.com/gpu", 2).Allocatable("cpu", 8000)), out)
		return err == nil && out[1] > out[0]
	}},
}

// TestSetLoadEverySlot: each slot takes a module built for it, installs an
// adapter answering from the module, and reports it in Current and Breakers.
func TestSetLoadEverySlot(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	now := time.Unix(1000, 0)
	s := newSet(t, rec, in, wasmslot.WithClock(func() time.Time { return now }))
	for _, m := range validModules {
		bin := example(t, m.name)
		if err := s.Load(ctx, m.slot, m.name, bin, sha(bin)); err != nil {
			t.Fatalf("%s: %v", m.slot, err)
		}
		if !m.fromModule(in) {
			t.Errorf("%s: the installed adapter did not answer from %s", m.slot, m.name)
		}
		if info := s.Current()[m.slot]; info.Name != m.name || info.SHA256 != sha(bin) || !info.Since.Equal(now) || info.ABI == "" {
			t.Errorf("%s: Current = %+v", m.slot, info)
		}
		want := wasmslot.BreakerState{Enabled: true, Threshold: wasmslot.DefaultBreakerFailures, Window: wasmslot.DefaultBreakerWindow}
		if diff := cmp.Diff(want, s.Breakers()[m.slot]); diff != "" {
			t.Errorf("%s: breaker (-want, +got):\n%s", m.slot, diff)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range validModules {
		if rec.calls[m.slot] == 0 {
			t.Errorf("%s: no call reached the module", m.slot)
		}
		if got := rec.swaps[m.slot.String()+"/success"]; got != 1 {
			t.Errorf("%s: %d successful swaps, want 1", m.slot, got)
		}
	}
	if len(rec.failures)+len(rec.fallbacks) != 0 {
		t.Errorf("failures %v, fallbacks %v", rec.failures, rec.fallbacks)
	}
	if got := in.installs.Load(); got != int64(len(validModules)) {
		t.Errorf("%d installs, want %d", got, len(validModules))
	}
}

// TestSetLoadRefused: a refused module leaves the previous one installed and
// working; the error says what was wrong, and the attempt is counted with
// its reason.
func TestSetLoadRefused(t *testing.T) {
	ctx := context.Background()
	prio := example(t, "prioritysort")
	flaky := readWasm(t, "host/policy/wasmslot/testdata/flaky.wasm")
	cases := []struct {
		name   string
		slot   abi.Slot
		bin    []byte
		sha    string
		reason string
		want   []string // substrings of the error
	}{
		{"garbage", abi.SlotQueueSort, []byte("not wasm at all"), "", "invalid", []string{`"garbage"`, "guest SDK"}},
		{"empty", abi.SlotQueueSort, nil, "", "invalid", []string{`"empty"`}},
		{"wrong ABI", abi.SlotQueueSort, readFault(t, "queueSort-abi2"), "", "invalid", []string{"speaks ABI 2.0"}},
		{"forbidden import", abi.SlotQueueSort, readFault(t, "queueSort-fs"), "", "invalid", []string{"forbidden imports"}},
		{"wrong slot", abi.SlotPreEnqueue, prio, "", "slot", []string{"cannot serve the preEnqueue slot", abi.ExportPreEnqueue}},
		{"missing export", abi.SlotQueueSort, readFault(t, "queueSort-noexport"), "", "slot", []string{"does not export " + abi.ExportQueueSortLess}},
		{"sha mismatch", abi.SlotQueueSort, prio, sha(flaky), "sha256", []string{sha(prio), sha(flaky), "update the pin"}},
		{"sha not hex", abi.SlotQueueSort, prio, strings.ToUpper(sha(prio)), "sha256", []string{"64 lowercase hex digits"}},
		{"smoke trap", abi.SlotPreEnqueue, flaky, "", "smoke", []string{"smoke test", "trap"}},
		{"smoke deadline", abi.SlotQueueSort, readFault(t, "queueSort-loop"), "", "smoke", []string{"smoke test", "deadline"}},
		{"smoke bad output", abi.SlotVictimOrder, readFault(t, "victimOrder-garbage"), "", "smoke", []string{"smoke test", "bad_output"}},
		{"smoke guest error", abi.SlotQueueingHint, readFault(t, "queueingHint-trap"), "", "smoke", []string{"smoke test"}},
		{"probe fails", abi.SlotBackoffSort, readFault(t, "backoffSort-garbage"), "", "smoke", []string{"bad_output"}},
	}
	rec := newCounting()
	in := &installed{}
	rt, clk := faultRuntime(t)
	s := wasmslot.NewSet(rt, faultLimits(), rec, in.installer())
	defer s.Close(ctx)
	// The slot's working module before each refusal.
	good := map[abi.Slot]string{}
	for _, m := range validModules {
		bin := example(t, m.name)
		if err := s.Load(ctx, m.slot, m.name, bin, ""); err != nil {
			t.Fatal(err)
		}
		good[m.slot] = m.name
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.Current()[c.slot]
			installs := in.installs.Load()
			// Only the smoke call refused with "deadline" spins.
			spins := slices.Contains(c.want, "deadline")
			var err error
			runCall(t, clk, spins, func() { err = s.Load(ctx, c.slot, c.name, c.bin, c.sha) })
			if err == nil {
				t.Fatal("want an error")
			}
			if got := wasmslot.Refusal(err); got != c.reason {
				t.Errorf("Refusal = %q, want %q", got, c.reason)
			}
			for _, w := range append(c.want, "the slot keeps module \""+good[c.slot]+"\"") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := s.Current()[c.slot]; got != before {
				t.Errorf("Current changed: %+v, was %+v", got, before)
			}
			if in.installs.Load() != installs {
				t.Error("a refused module was installed")
			}
			for _, m := range validModules {
				if m.slot == c.slot && !m.fromModule(in) {
					t.Errorf("the previous module %s no longer answers", m.name)
				}
			}
		})
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{}
	for _, m := range validModules {
		want[m.slot.String()+"/success"]++
	}
	for _, c := range cases {
		want[c.slot.String()+"/"+c.reason]++
	}
	if diff := cmp.Diff(want, rec.swaps); diff != "" {
		t.Errorf("swaps (-want, +got):\n%s", diff)
	}
	if len(rec.failures)+len(rec.fallbacks) != 0 {
		t.Errorf("the installed modules failed: failures %v, fallbacks %v", rec.failures, rec.fallbacks)
	}
}

// TestSetLoadWithLimits: a module loaded with limits of its own is held to
// them (a memory limit below its initial memory refuses it, as too large),
// and loads under limits that fit; the Set's limits are not changed.
func TestSetLoadWithLimits(t *testing.T) {
	ctx := context.Background()
	in := &installed{}
	s := newSet(t, nil, in)
	prio := example(t, "prioritysort")
	tight := testLimits()
	tight.MemoryPages = 1
	err := s.LoadWithLimits(ctx, abi.SlotQueueSort, "tight", prio, "", tight)
	if err == nil || !errors.Is(err, wasm.ErrTooLarge) || wasmslot.Refusal(err) != "invalid" {
		t.Fatalf("LoadWithLimits with 1 page: %v (refusal %q), want a refusal as too large", err, wasmslot.Refusal(err))
	}
	if _, ok := s.Current()[abi.SlotQueueSort]; ok {
		t.Fatal("a refused module fills the slot")
	}
	roomy := testLimits()
	roomy.MemoryPages = 64
	if err := s.LoadWithLimits(ctx, abi.SlotQueueSort, "roomy", prio, sha(prio), roomy); err != nil {
		t.Fatal(err)
	}
	if got := s.Current()[abi.SlotQueueSort]; got.Name != "roomy" || got.SHA256 != sha(prio) {
		t.Errorf("Current = %+v, want roomy", got)
	}
	if !(*in.sort.Load()).Less(hiPod, loPod) {
		t.Error("the module loaded with its own limits does not answer (prioritysort: want the higher priority first)")
	}
}

// TestSetLoadFaultFixtures: every fixture that misbehaves on every input is
// refused by the smoke call, in every slot.
func TestSetLoadFaultFixtures(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	rt, clk := faultRuntime(t)
	s := wasmslot.NewSet(rt, faultLimits(), rec, (&installed{}).installer())
	defer s.Close(ctx)
	n := 0
	for _, slot := range abi.Slots {
		if slot.Placement() {
			continue // their fixtures answer the smoke call on purpose: TestFaultPlacementFails loads them
		}
		for _, fault := range []string{"loop", "trap", "grow", "oversize", "garbage"} {
			name := slot.String() + "-" + fault
			bin := readFault(t, name)
			var err error
			runCall(t, clk, fault == "loop", func() { err = s.Load(ctx, slot, name, bin, "") })
			if err == nil {
				t.Errorf("%s: loaded", name)
			}
			n++
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	total := 0
	for k, v := range rec.swaps {
		if !strings.HasSuffix(k, "/smoke") {
			t.Errorf("swaps %s: %d, want only smoke refusals", k, v)
		}
		total += v
	}
	if total != n {
		t.Errorf("%d refusals counted, want %d", total, n)
	}
	if len(s.Current()) != 0 {
		t.Errorf("Current = %v, want nothing loaded", s.Current())
	}
}

// TestSetUnwiredAndClosed: a slot without an installer and a closed Set
// refuse modules.
func TestSetUnwiredAndClosed(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	inst := in.installer()
	inst.VictimOrder = nil
	s := wasmslot.NewSet(newRuntime(t), testLimits(), rec, inst)
	imp, prio := example(t, "importance"), example(t, "prioritysort")
	if err := s.Load(ctx, abi.SlotVictimOrder, "importance", imp, ""); err == nil || !strings.Contains(err.Error(), "no installer") {
		t.Errorf("unwired slot: err = %v", err)
	}
	if err := s.Load(ctx, abi.Slot(9), "x", imp, ""); err == nil || !strings.Contains(err.Error(), "unknown slot") {
		t.Errorf("unknown slot: err = %v", err)
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, ""); err != nil {
		t.Fatal(err)
	}
	sort := *in.sort.Load()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, ""); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed set: err = %v", err)
	}
	// The adapter still installed answers natively, without counting a
	// failure of its module.
	if !sort.Less(hiPod, loPod) {
		t.Error("after Close: want the native answer")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{"victimOrder/unwired": 1, "unknown/slot": 1, "queueSort/success": 1, "queueSort/closed": 1}
	if diff := cmp.Diff(want, rec.swaps); diff != "" {
		t.Errorf("swaps (-want, +got):\n%s", diff)
	}
	if len(rec.failures) != 0 || rec.fallbacks[abi.SlotQueueSort] != 1 {
		t.Errorf("failures %v (want none), fallbacks %v (want 1 queueSort)", rec.failures, rec.fallbacks)
	}
}

// TestSetSwapHammer: goroutines compute sort keys through whatever adapter is
// installed while another goroutine swaps prioritysort and fifosort 100
// times. Every call completes without a failure or a fallback: calls in
// flight finish on the old module's instances, and a call that picked the old
// adapter just before its module was closed is answered by the new one.
func TestSetSwapHammer(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	// A generous deadline: under -race with every P busy, a call can be
	// descheduled past 50 ms, and this test is about swaps, not deadlines.
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	s := wasmslot.NewSet(newRuntime(t), limits, rec, in.installer())
	defer s.Close(ctx)
	prio, fifo := example(t, "prioritysort"), example(t, "fifosort")
	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, ""); err != nil {
		t.Fatal(err)
	}
	const swaps = 100
	hammerSortSwaps(t, s, in, rec, swaps, func(i int) error {
		name, bin := "fifosort", fifo
		if i%2 == 1 {
			name, bin = "prioritysort", prio
		}
		return s.Load(ctx, abi.SlotQueueSort, name, bin, "")
	})
	if got := s.Current()[abi.SlotQueueSort].Name; got != "prioritysort" {
		t.Errorf("after %d swaps the slot holds %s, want prioritysort", swaps, got)
	}
}

// hammerSortSwaps runs goroutines that compute sort keys and compare pods
// through whatever queue sort is installed (and read the Set's state) while
// swap(i) changes it swaps times, alternating between prioritysort and
// fifosort. It fails the test on any answer that is
// neither policy's, any failure, fallback or breaker trip, a swap count
// other than swaps plus the one load before, or a policy never observed.
func hammerSortSwaps(t *testing.T, s *wasmslot.Set, in *installed, rec *counting, swaps int, swap func(i int) error) {
	t.Helper()
	pod := policytest.MakePod().Name("p").Priority(7).Created(time.Unix(3, 0)).Queued(time.Unix(4, 0)).View()
	keyPrio := (policy.PrioritySort{}).Key(pod)
	keyFIFO := abi.SortKey{abi.Asc(pod.CreationTime()), abi.Asc(pod.QueuedTime())}
	workers := max(2, runtime.GOMAXPROCS(0))
	var stop atomic.Bool
	var answers [2]atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for !stop.Load() {
				sort := *in.sort.Load()
				switch k := sort.(policy.Keyer).Key(pod); k {
				case keyPrio:
					answers[0].Add(1)
				case keyFIFO:
					answers[1].Add(1)
				default:
					t.Errorf("key %v is neither prioritysort's %v nor fifosort's %v", k, keyPrio, keyFIFO)
					return
				}
				if sort.Less(pod, pod) {
					t.Error("Less(p, p) = true")
					return
				}
				_ = s.Current()
				_ = s.Breakers()
			}
		})
	}
	for i := range swaps {
		if err := swap(i); err != nil {
			t.Errorf("swap %d: %v", i, err)
		}
		// Let the workers call the new policy before the next swap (bounded,
		// in case a worker has stopped on an error).
		n := answers[0].Load() + answers[1].Load()
		for j := 0; j < 10000 && answers[0].Load()+answers[1].Load() < n+int64(workers); j++ {
			runtime.Gosched()
		}
	}
	stop.Store(true)
	wg.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.failures)+len(rec.fallbacks)+len(rec.trips) != 0 {
		t.Errorf("failures %v, fallbacks %v, trips %v", rec.failures, rec.fallbacks, rec.trips)
	}
	if got := rec.swaps["queueSort/success"]; got != swaps+1 {
		t.Errorf("%d successful swaps, want %d", got, swaps+1)
	}
	if answers[0].Load() == 0 || answers[1].Load() == 0 {
		t.Errorf("answers: prioritysort %d, fifosort %d: want both", answers[0].Load(), answers[1].Load())
	}
}

// TestSetConcurrentLoads: Loads of one slot from many goroutines are
// serialised; each installs once and the slot ends with one of them.
func TestSetConcurrentLoads(t *testing.T) {
	ctx := context.Background()
	in := &installed{}
	rec := newCounting()
	s := newSet(t, rec, in)
	prio, fifo := example(t, "prioritysort"), example(t, "fifosort")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name, bin := "prioritysort", prio
			if i%2 == 1 {
				name, bin = "fifosort", fifo
			}
			if err := s.Load(ctx, abi.SlotQueueSort, name, bin, sha(bin)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := in.installs.Load(); got != 8 {
		t.Errorf("%d installs, want 8", got)
	}
	cur := s.Current()[abi.SlotQueueSort]
	sort := (*in.sort.Load()).(policy.Keyer)
	wantFIFO := cur.Name == "fifosort"
	if gotFIFO := sort.Key(loPod) != (policy.PrioritySort{}).Key(loPod); gotFIFO != wantFIFO {
		t.Errorf("Current says %s, but the installed adapter disagrees", cur.Name)
	}
}

// fakeClock is a settable clock for the breakers.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSetBreaker: flaky traps on pods of negative priority. Three failures
// within the window open the breaker; then every decision is native and the
// module is not called; a Load closes it again.
func TestSetBreaker(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rec := newCounting()
	in := &installed{}
	s := newSet(t, rec, in, wasmslot.WithBreaker(3, 10*time.Second), wasmslot.WithClock(clock.Now))
	flaky := readWasm(t, "host/policy/wasmslot/testdata/flaky.wasm")
	if err := s.Load(ctx, abi.SlotQueueSort, "flaky", flaky, ""); err != nil {
		t.Fatal(err)
	}
	bad := policytest.MakePod().Name("bad").Priority(-1).View()
	calls := func() int { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.calls[abi.SlotQueueSort] }
	trips := func() int { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.trips[abi.SlotQueueSort] }
	sort := func() policy.Sort { return *in.sort.Load() }
	fromModule := func() bool { return sort().Less(loPod, hiPod) } // flaky: lower priority first

	if !fromModule() {
		t.Fatal("flaky does not answer")
	}
	// Failures spread wider than the window do not open it.
	for range 3 {
		if got, want := sort().(policy.Keyer).Key(bad), (policy.PrioritySort{}).Key(bad); got != want {
			t.Errorf("key of a trapping pod = %v, want the native %v", got, want)
		}
		clock.Step(6 * time.Second)
	}
	if st := s.Breakers()[abi.SlotQueueSort]; st.Open || trips() != 0 {
		t.Fatalf("3 failures over 12s opened a breaker of 3 in 10s: %+v", st)
	}
	// Two more within the window (with the last of those three) open it.
	sort().Less(bad, hiPod)
	clock.Step(time.Second)
	sort().Less(bad, hiPod)
	st := s.Breakers()[abi.SlotQueueSort]
	if !st.Open || !st.Since.Equal(clock.Now()) || trips() != 1 {
		t.Fatalf("breaker after 3 failures in 7s: %+v, trips %d", st, trips())
	}
	// Open: native answers, no calls into the module, no further trips.
	before := calls()
	for range 100 {
		if fromModule() {
			t.Fatal("open breaker: the module answered")
		}
		sort().(policy.Keyer).Key(loPod)
	}
	if got := calls(); got != before {
		t.Errorf("open breaker: %d calls reached the module", got-before)
	}
	rec.mu.Lock()
	if rec.trips[abi.SlotQueueSort] != 1 || rec.failures["queueSort/trap"] != 5 {
		t.Errorf("trips %v, failures %v; want 1 trip after 5 traps", rec.trips, rec.failures)
	}
	rec.mu.Unlock()
	// Still open much later: only a Load closes it.
	clock.Step(time.Hour)
	if !s.Breakers()[abi.SlotQueueSort].Open {
		t.Error("the breaker closed by itself")
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "flaky", flaky, ""); err != nil {
		t.Fatal(err)
	}
	if st := s.Breakers()[abi.SlotQueueSort]; st.Open || st.RecentFailures != 0 {
		t.Errorf("after Load: %+v, want a closed breaker", st)
	}
	if !fromModule() {
		t.Error("after Load: the module does not answer")
	}
}

// TestSetBreakerDisabled: with WithBreaker(0, ...) a failing module is called
// for every decision, and falls back for each.
func TestSetBreakerDisabled(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	s := newSet(t, rec, in, wasmslot.WithBreaker(0, time.Second))
	flaky := readWasm(t, "host/policy/wasmslot/testdata/flaky.wasm")
	if err := s.Load(ctx, abi.SlotQueueSort, "flaky", flaky, ""); err != nil {
		t.Fatal(err)
	}
	bad := policytest.MakePod().Name("bad").Priority(-1).View()
	for range 50 {
		(*in.sort.Load()).Less(bad, hiPod)
	}
	if !(*in.sort.Load()).Less(loPod, hiPod) {
		t.Error("the module no longer answers")
	}
	if diff := cmp.Diff(wasmslot.BreakerState{}, s.Breakers()[abi.SlotQueueSort]); diff != "" {
		t.Errorf("disabled breaker (-want, +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.failures["queueSort/trap"] != 50 || len(rec.trips) != 0 {
		t.Errorf("failures %v, trips %v; want 50 traps and no trip", rec.failures, rec.trips)
	}
}

// BenchmarkSwap: one Load of a queue-sort module into a Set whose installer
// does nothing, so the figure is the swap's own cost: validation,
// instrumentation, compilation, the key probe, the smoke call, install and
// closing the old module. "compile" alternates two modules: closing a module
// drops its compiled code, so every Load compiles, as for a new policy
// version. "reload" loads the bytes already installed, whose compiled code
// the runtime still holds (a reload of an unchanged file).
func BenchmarkSwap(b *testing.B) {
	ctx := context.Background()
	prio, fifo := example(b, "prioritysort"), example(b, "fifosort")
	noop := policy.Installer{Sort: func(policy.Sort) {}}
	run := func(b *testing.B, bins [2][]byte) {
		s := wasmslot.NewSet(newRuntime(b), wasm.DefaultLimits(), nil, noop)
		defer s.Close(ctx)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := s.Load(ctx, abi.SlotQueueSort, "sort", bins[i&1], ""); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.Run("compile", func(b *testing.B) { run(b, [2][]byte{prio, fifo}) })
	b.Run("reload", func(b *testing.B) { run(b, [2][]byte{prio, prio}) })
}

// BenchmarkSetSortKey: a sort key through an adapter built by NewWasmSort
// (no breaker) and through one installed by a Set (a breaker check per call).
func BenchmarkSetSortKey(b *testing.B) {
	ctx := context.Background()
	pod := policytest.MakePod().Name("p").Priority(7).Queued(time.Unix(4, 0)).View()
	run := func(b *testing.B, k policy.Keyer) {
		b.ReportAllocs()
		for b.Loop() {
			k.Key(pod)
		}
	}
	b.Run("adapter", func(b *testing.B) {
		a, err := wasmslot.NewSort(loadBenchExample(b, "prioritysort"), abi.SlotQueueSort, policy.PrioritySort{}, strict(b))
		if err != nil {
			b.Fatal(err)
		}
		run(b, a)
	})
	b.Run("set", func(b *testing.B) {
		var got policy.Sort
		limits := wasm.DefaultLimits()
		limits.Deadline = 10 * time.Second
		s := wasmslot.NewSet(newRuntime(b), limits, strict(b), policy.Installer{Sort: func(s policy.Sort) { got = s }})
		defer s.Close(ctx)
		if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", example(b, "prioritysort"), ""); err != nil {
			b.Fatal(err)
		}
		run(b, got.(policy.Keyer))
	})
}
