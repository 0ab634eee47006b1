package wasmslot_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// The placement tests run the adapters against testdata/placement.wasm, a
// hand-written module that reports what the host sent it (its opening
// comment says how), and the fault fixtures' well-behaved paths. They use a
// faultRuntime, whose watchdog's clock stands still: no call can reach its
// deadline, however loaded the machine.

// loadTestdata loads testdata/<name>.wasm into rt.
func loadTestdata(t *testing.T, rt *wasm.Runtime, name string) *wasm.Module {
	t.Helper()
	bin, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatalf("%v (run make fixtures)", err)
	}
	m, err := rt.Load(context.Background(), name+".wasm", bin, faultLimits())
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// placementNode is a node of a placement call under id at generation gen.
func placementNode(id uint32, gen int64, name string) policy.PlacementNode {
	return policy.PlacementNode{ID: id, Gen: gen, Rec: policytest.MakeNode().Name(name).Allocatable("cpu", 4000).View()}
}

// inline is n sent whole, as preemption's dry run sends its copies.
func inline(n policy.PlacementNode) policy.PlacementNode {
	n.Inline = true
	return n
}

// probe is what testdata/placement.wasm's score says of a node: for one
// named by id, the instance's node syncs and score calls so far, how many
// syncs sent the id, and the id; for one sent inline, the length of its
// name.
type probe struct {
	Syncs, Calls, Upserts, ID int64
	InlineName                int64
}

func probes(scores []int64) []probe {
	out := make([]probe, len(scores))
	for i, s := range scores {
		if s < 0 {
			out[i] = probe{InlineName: -s}
			continue
		}
		out[i] = probe{Syncs: s / 1e9, Calls: s / 1e6 % 1e3, Upserts: s / 1e3 % 1e3, ID: s % 1e3}
	}
	return out
}

// TestPlacementNodeSync: an instance is sent each node once per generation
// (a node whose generation moves, in either direction, is sent again), a
// node sent inline is never taken as held, and an instance that replaces
// one a trap discarded is sent everything again.
func TestPlacementNodeSync(t *testing.T) {
	rt, _ := faultRuntime(t)
	m := loadTestdata(t, rt, "placement")
	s, err := wasmslot.NewScore(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := policytest.MakePod().Name("p").Priority(1).View()
	a, b, c := placementNode(0, 1, "a"), placementNode(1, 1, "b"), placementNode(2, 1, "c")
	b2 := placementNode(1, 2, "b")
	d := placementNode(7, 0, "d") // generation 0 is a generation like any other
	e, f := placementNode(3, 1, "node-e"), placementNode(4, 1, "f")
	score := func(nodes ...policy.PlacementNode) ([]probe, error) {
		out := make([]int64, len(nodes))
		err := s.Score(pod, nodes, out)
		return probes(out), err
	}
	for _, step := range []struct {
		name  string
		nodes []policy.PlacementNode
		want  []probe
	}{
		{"the first call sends every node, in one sync", []policy.PlacementNode{a, b, c},
			[]probe{{1, 1, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 2, 0}}},
		{"the same generations, in another order: nothing sent", []policy.PlacementNode{c, a, b},
			[]probe{{1, 2, 1, 2, 0}, {1, 2, 1, 0, 0}, {1, 2, 1, 1, 0}}},
		{"b's generation moved: b alone is sent", []policy.PlacementNode{a, b2, c},
			[]probe{{2, 3, 1, 0, 0}, {2, 3, 2, 1, 0}, {2, 3, 1, 2, 0}}},
		{"b again at its new generation: nothing sent", []policy.PlacementNode{b2},
			[]probe{{2, 4, 2, 1, 0}}},
		{"b back at generation 1: sent", []policy.PlacementNode{b},
			[]probe{{3, 5, 3, 1, 0}}},
		{"a new node at generation 0: sent", []policy.PlacementNode{d, a},
			[]probe{{4, 6, 1, 7, 0}, {4, 6, 1, 0, 0}}},
		{"a node sent inline is not synced, nor kept by the sync of another", []policy.PlacementNode{f, inline(e)},
			[]probe{{5, 7, 1, 4, 0}, {InlineName: int64(len("node-e"))}}},
		{"the same node by id after it was inline: sent", []policy.PlacementNode{e},
			[]probe{{6, 8, 1, 3, 0}}},
	} {
		got, err := score(step.nodes...)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: what the module saw (-want, +got):\n%s", step.name, diff)
		}
	}

	// Inline nodes follow the snapshot's: the other order is a host bug,
	// refused before the module is called.
	if _, err := score(inline(e), a); err == nil || !strings.Contains(err.Error(), "inline nodes must follow") {
		t.Errorf("an inline node first: error %v, want the host bug refused", err)
	}

	// A trap discards the instance; its replacement starts empty and is
	// sent every node it is asked about.
	st := m.Stats()
	out := make([]int64, 3)
	if err := s.Score(policytest.MakePod().Name("trap").Priority(-1).View(), []policy.PlacementNode{a, b2, c}, out); wasm.KindOf(err) != wasm.KindTrap {
		t.Fatalf("a pod of priority -1: error %v, want a trap", err)
	}
	got, err := score(a, b2, c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]probe{{1, 1, 1, 0, 0}, {1, 1, 1, 1, 0}, {1, 1, 1, 2, 0}}, got); diff != "" {
		t.Errorf("after the trap, what the new instance saw (-want, +got):\n%s", diff)
	}
	if st2 := m.Stats(); st2.Discarded != st.Discarded+1 || st2.Instantiated != st.Instantiated+1 {
		t.Errorf("after the trap: %d discarded and %d instantiated, want %d and %d",
			st2.Discarded, st2.Instantiated, st.Discarded+1, st.Instantiated+1)
	}
}

// TestPlacementFilterVerdicts: the verdicts map to the nodes in order, the
// ids' then the inline ones', a pass with no reason and a rejection with
// its reason's text, which is copied out of guest memory: the module's next
// call, which writes other reasons in its place, does not change it. A call
// over no node does not reach the module.
func TestPlacementFilterVerdicts(t *testing.T) {
	rt, _ := faultRuntime(t)
	m := loadTestdata(t, rt, "placement")
	rec := newCounting()
	f, err := wasmslot.NewFilter(m, rec)
	if err != nil {
		t.Fatal(err)
	}
	pod := policytest.MakePod().Name("p").Priority(1).View()
	nodes := []policy.PlacementNode{
		placementNode(0, 1, "a"), placementNode(1, 1, "b"), placementNode(2, 1, "c"),
		placementNode(3, 1, "d"), inline(placementNode(4, 1, "e")), inline(placementNode(5, 1, "f")),
	}
	want := func(call int) []policy.FilterVerdict {
		unsched := policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: fmt.Sprintf("unschedulable #%d", call)}
		unres := policy.FilterVerdict{Code: abi.FilterUnresolvable, Reason: fmt.Sprintf("unresolvable #%d", call)}
		return []policy.FilterVerdict{{}, unsched, unres, {}, unsched, unres}
	}
	judge := func() []policy.FilterVerdict {
		t.Helper()
		out := make([]policy.FilterVerdict, len(nodes))
		for i := range out {
			out[i] = policy.FilterVerdict{Code: 0xff, Reason: "stale"} // a pass must clear it
		}
		if err := f.Filter(pod, nodes, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := judge()
	if diff := cmp.Diff(want(1), first); diff != "" {
		t.Errorf("verdicts (-want, +got):\n%s", diff)
	}
	second := judge()
	if diff := cmp.Diff(want(2), second); diff != "" {
		t.Errorf("verdicts of the second call (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(want(1), first); diff != "" {
		t.Errorf("the first call's verdicts after the second call (-want, +got):\n%s", diff)
	}

	rec.mu.Lock()
	calls := rec.calls[abi.SlotFilter]
	rec.mu.Unlock()
	if err := f.Filter(pod, nil, nil); err != nil {
		t.Errorf("no node: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.calls[abi.SlotFilter]; got != calls {
		t.Errorf("a call over no node reached the module")
	}
	if len(rec.failures) != 0 || len(rec.fallbacks) != 0 {
		t.Errorf("failures %v, fallbacks %v; want none", rec.failures, rec.fallbacks)
	}
}

// TestPlacementOptions: the options a module declares are read once, when
// the adapter is built, and handed out as copies; a module that declares
// none gets the default filter events and unnormalised scores.
func TestPlacementOptions(t *testing.T) {
	rt, _ := faultRuntime(t)
	declared := abi.PlacementOptions{
		ScoreNormalized: true,
		FilterEvents:    []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel}},
	}
	defaults := abi.PlacementOptions{FilterEvents: abi.DefaultFilterEvents()}
	for _, tc := range []struct {
		module string
		want   abi.PlacementOptions
	}{
		{"placement", declared},
		{"faults/filter-slow", defaults},
		{"faults/score-slow", defaults},
	} {
		m := loadTestdata(t, rt, tc.module)
		opts := map[string]func() abi.PlacementOptions{}
		if m.HasExport(abi.ExportFilter) {
			f, err := wasmslot.NewFilter(m, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts["filter"] = f.Options
		}
		if m.HasExport(abi.ExportScore) {
			s, err := wasmslot.NewScore(m, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts["score"] = s.Options
		}
		for slot, options := range opts {
			got := options()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s as %s: options (-want, +got):\n%s", tc.module, slot, diff)
			}
			got.FilterEvents[0].Actions = abi.ActionDelete
			if diff := cmp.Diff(tc.want, options()); diff != "" {
				t.Errorf("%s as %s: options after the caller changed its copy (-want, +got):\n%s", tc.module, slot, diff)
			}
		}
	}
}

// TestPlacementPreSteps: a module's pre-step says which pods it concerns;
// a failed pre-step returns its error, counted; without a pre-step every
// pod is concerned and the module is not called.
func TestPlacementPreSteps(t *testing.T) {
	rt, _ := faultRuntime(t)
	rec := newCounting()
	m := loadTestdata(t, rt, "placement")
	f, err := wasmslot.NewFilter(m, rec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wasmslot.NewScore(m, rec)
	if err != nil {
		t.Fatal(err)
	}
	pre := map[abi.Slot]func(abi.PodView) (bool, error){abi.SlotFilter: f.PreFilter, abi.SlotScore: s.PreScore}
	for _, slot := range []abi.Slot{abi.SlotFilter, abi.SlotScore} {
		for _, tc := range []struct {
			prio int32
			want bool
		}{{5, true}, {0, true}, {-5, false}} {
			got, err := pre[slot](policytest.MakePod().Name("p").Priority(tc.prio).View())
			if err != nil || got != tc.want {
				t.Errorf("%s, pre-step on priority %d: %v, %v; want %v", slot, tc.prio, got, err, tc.want)
			}
		}
		_, err := pre[slot](policytest.MakePod().Name("p").Priority(-1).View())
		if wasm.KindOf(err) != wasm.KindTrap {
			t.Errorf("%s, pre-step on priority -1: error %v, want a trap", slot, err)
		}
	}
	rec.mu.Lock()
	want := counts{
		calls:     map[abi.Slot]int{abi.SlotFilter: 4, abi.SlotScore: 4},
		failures:  map[string]int{"filter/trap": 1, "score/trap": 1},
		fallbacks: map[abi.Slot]int{abi.SlotFilter: 1, abi.SlotScore: 1},
	}
	got := counts{calls: rec.calls, failures: rec.failures, fallbacks: rec.fallbacks}
	rec.mu.Unlock()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(counts{})); diff != "" {
		t.Errorf("counted (-want, +got):\n%s", diff)
	}

	// The slow fixtures have no pre-step.
	rec = newCounting()
	slowF, err := wasmslot.NewFilter(loadTestdata(t, rt, "faults/filter-slow"), rec)
	if err != nil {
		t.Fatal(err)
	}
	slowS, err := wasmslot.NewScore(loadTestdata(t, rt, "faults/score-slow"), rec)
	if err != nil {
		t.Fatal(err)
	}
	for name, pre := range map[string]func(abi.PodView) (bool, error){"filter": slowF.PreFilter, "score": slowS.PreScore} {
		if ok, err := pre(policytest.MakePod().Name("p").Priority(-5).View()); !ok || err != nil {
			t.Errorf("%s without a pre-step: %v, %v; want true", name, ok, err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 0 {
		t.Errorf("without a pre-step the module was called: %v", rec.calls)
	}
}

// counts is what a counting recorder holds, for comparisons.
type counts struct {
	calls     map[abi.Slot]int
	failures  map[string]int
	fallbacks map[abi.Slot]int
}

// TestPlacementOlderMinor: a module built for a minor before the placement
// slots cannot serve them, whatever it exports: the adapters and a Set
// refuse it with a message that says what to do.
func TestPlacementOlderMinor(t *testing.T) {
	ctx := context.Background()
	rt, _ := faultRuntime(t)
	m := loadTestdata(t, rt, "placement-abi1.2")
	set := wasmslot.NewSet(rt, faultLimits(), nil, (&installed{}).installer())
	defer set.Close(ctx)
	bin, err := os.ReadFile(filepath.Join("testdata", "placement-abi1.2.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range []abi.Slot{abi.SlotFilter, abi.SlotScore} {
		var a any
		if slot == abi.SlotFilter {
			a, err = adapter(wasmslot.NewFilter(m, nil))
		} else {
			a, err = adapter(wasmslot.NewScore(m, nil))
		}
		if a != nil || err == nil {
			t.Fatalf("%s: the adapter accepted a module of ABI 1.2", slot)
		}
		wants := []string{`module "placement-abi1.2.wasm" speaks ABI 1.2, and the ` + slot.String() + ` slot needs 1.3 or later`, "rebuild it"}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q\ndoes not contain %q", slot, err, want)
			}
		}
		err = set.Load(ctx, slot, "placement-abi1.2.wasm", bin, "")
		if err == nil {
			t.Fatalf("%s: Set.Load accepted a module of ABI 1.2", slot)
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: Set.Load's refusal %q\ndoes not contain %q", slot, err, want)
			}
		}
	}
	if got := set.Current(); len(got) != 0 {
		t.Errorf("Current = %v, want nothing loaded", got)
	}
}

// TestPlacementSetEmpty: Empty empties a placement slot (its plugin does
// nothing; a call that still reaches the retired adapter says there is no
// module) and only a placement slot; emptying an empty slot does nothing.
func TestPlacementSetEmpty(t *testing.T) {
	ctx := context.Background()
	rt, _ := faultRuntime(t)
	rec := newCounting()
	in := &installed{}
	set := wasmslot.NewSet(rt, faultLimits(), rec, in.installer())
	defer set.Close(ctx)
	placement := readWasm(t, "host/policy/wasmslot/testdata/placement.wasm")
	for _, l := range []struct {
		slot abi.Slot
		bin  []byte
	}{
		{abi.SlotFilter, placement},
		{abi.SlotScore, placement},
		{abi.SlotQueueSort, readWasm(t, "host/policy/wasmslot/testdata/flaky.wasm")},
	} {
		if err := set.Load(ctx, l.slot, l.slot.String(), l.bin, ""); err != nil {
			t.Fatal(err)
		}
	}
	pod := policytest.MakePod().Name("p").Priority(1).View()
	nodes := []policy.PlacementNode{placementNode(0, 1, "a")}
	f := *in.filter.Load()
	fm := f.(interface{ Module() *wasm.Module }).Module()

	if err := set.Empty(abi.SlotFilter); err != nil {
		t.Fatal(err)
	}
	if got := *in.filter.Load(); got != nil {
		t.Errorf("after Empty the filter slot holds %T, want nil", got)
	}
	if _, ok := set.Current()[abi.SlotFilter]; ok {
		t.Error("Current still reports the emptied filter slot")
	}
	if err := f.Filter(pod, nodes, make([]policy.FilterVerdict, 1)); !errors.Is(err, policy.ErrNoModule) {
		t.Errorf("the emptied filter's Filter: %v, want policy.ErrNoModule", err)
	}
	if _, err := f.PreFilter(pod); !errors.Is(err, policy.ErrNoModule) {
		t.Errorf("the emptied filter's PreFilter: %v, want policy.ErrNoModule", err)
	}
	if st := fm.Stats(); st.Live != 0 {
		t.Errorf("the emptied filter's module has %d live instances, want it closed", st.Live)
	}
	if err := set.Empty(abi.SlotFilter); err != nil {
		t.Errorf("emptying the empty slot: %v", err)
	}

	err := set.Empty(abi.SlotQueueSort)
	if err == nil || !strings.Contains(err.Error(), "only the placement slots") {
		t.Errorf("Empty(queueSort): %v, want a refusal", err)
	}
	if _, ok := set.Current()[abi.SlotQueueSort]; !ok {
		t.Error("Empty(queueSort) emptied it")
	}
	if err := (*in.score.Load()).Score(pod, nodes, make([]int64, 1)); err != nil {
		t.Errorf("the score after the filter was emptied: %v", err)
	}
	if err := set.Empty(abi.SlotScore); err != nil {
		t.Fatal(err)
	}
	if got := *in.score.Load(); got != nil {
		t.Errorf("after Empty the score slot holds %T, want nil", got)
	}
	if diff := cmp.Diff([]abi.Slot{abi.SlotQueueSort}, keys(set.Current())); diff != "" {
		t.Errorf("slots loaded after emptying filter and score (-want, +got):\n%s", diff)
	}

	// A Load fills an emptied slot again.
	if err := set.Load(ctx, abi.SlotFilter, "filter", placement, ""); err != nil {
		t.Fatal(err)
	}
	if err := (*in.filter.Load()).Filter(pod, nodes, make([]policy.FilterVerdict, 1)); err != nil {
		t.Errorf("the filter loaded after Empty: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	want := map[string]int{"filter/success": 2, "score/success": 1, "queueSort/success": 1, "filter/emptied": 1, "score/emptied": 1}
	if diff := cmp.Diff(want, rec.swaps); diff != "" {
		t.Errorf("swaps counted (-want, +got):\n%s", diff)
	}
	if len(rec.failures) != 0 {
		t.Errorf("failures: %v", rec.failures)
	}
}

func keys(m map[abi.Slot]wasmslot.ModuleInfo) []abi.Slot {
	var out []abi.Slot
	for _, s := range abi.Slots {
		if _, ok := m[s]; ok {
			out = append(out, s)
		}
	}
	return out
}

// TestPlacementSwapHandoff: a call that picked a placement adapter before a
// swap and reaches it after (its module closed) is answered by the adapter
// that replaced it, pre-step included, and counts no failure; once the Set
// is closed, there is no module to answer.
func TestPlacementSwapHandoff(t *testing.T) {
	ctx := context.Background()
	rt, _ := faultRuntime(t)
	rec := newCounting()
	in := &installed{}
	set := wasmslot.NewSet(rt, faultLimits(), rec, in.installer())
	placement := readWasm(t, "host/policy/wasmslot/testdata/placement.wasm")
	pod := policytest.MakePod().Name("p").Priority(4).View()
	skipped := policytest.MakePod().Name("skipped").Priority(-5).View() // placement's pre-step skips it
	nodes := []policy.PlacementNode{placementNode(0, 1, "a"), placementNode(1, 1, "b")}

	load := func(slot abi.Slot, name string, bin []byte) {
		t.Helper()
		if err := set.Load(ctx, slot, name, bin, ""); err != nil {
			t.Fatal(err)
		}
	}
	load(abi.SlotFilter, "placement", placement)
	load(abi.SlotScore, "placement", placement)
	oldF, oldS := *in.filter.Load(), *in.score.Load()
	load(abi.SlotFilter, "filter-slow", readFault(t, "filter-slow"))
	load(abi.SlotScore, "score-slow", readFault(t, "score-slow"))
	if *in.filter.Load() == oldF || *in.score.Load() == oldS {
		t.Fatal("the swap did not install new adapters")
	}

	// filter-slow rejects every node for even priorities, score-slow
	// scores n-i; neither has a pre-step.
	verdicts := make([]policy.FilterVerdict, len(nodes))
	if err := oldF.Filter(pod, nodes, verdicts); err != nil {
		t.Fatal(err)
	}
	reject := policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: "even priority"}
	if diff := cmp.Diff([]policy.FilterVerdict{reject, reject}, verdicts); diff != "" {
		t.Errorf("the retired filter's verdicts (-filter-slow's, +got):\n%s", diff)
	}
	scores := make([]int64, len(nodes))
	if err := oldS.Score(pod, nodes, scores); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{2, 1}, scores); diff != "" {
		t.Errorf("the retired score's scores (-score-slow's, +got):\n%s", diff)
	}
	if ok, err := oldF.PreFilter(skipped); !ok || err != nil {
		t.Errorf("the retired filter's PreFilter: %v, %v; want filter-slow's true", ok, err)
	}
	if ok, err := oldS.PreScore(skipped); !ok || err != nil {
		t.Errorf("the retired score's PreScore: %v, %v; want score-slow's true", ok, err)
	}
	rec.mu.Lock()
	if len(rec.failures) != 0 || len(rec.fallbacks) != 0 {
		t.Errorf("handed-off calls counted failures %v, fallbacks %v", rec.failures, rec.fallbacks)
	}
	rec.mu.Unlock()

	if err := set.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]any{"retired filter": oldF, "retired score": oldS, "filter": *in.filter.Load(), "score": *in.score.Load()} {
		var err error
		switch p := p.(type) {
		case policy.Filter:
			err = p.Filter(pod, nodes, verdicts)
		case policy.Score:
			err = p.Score(pod, nodes, scores)
		}
		if !errors.Is(err, policy.ErrNoModule) {
			t.Errorf("%s after Close: %v, want policy.ErrNoModule", name, err)
		}
	}
}

// TestPlacementHammer: many goroutines filter and score through one
// adapter each, over nodes whose generations move meanwhile, so that
// several instances each hold their own generations. The module fails a
// call that names a node it was never sent, so every call succeeding means
// every instance was sent what it lacked.
func TestPlacementHammer(t *testing.T) {
	rt, _ := faultRuntime(t)
	m := loadTestdata(t, rt, "placement")
	rec := newCounting()
	f, err := wasmslot.NewFilter(m, rec)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wasmslot.NewScore(m, rec)
	if err != nil {
		t.Fatal(err)
	}
	const (
		goroutines = 8
		calls      = 150
		numNodes   = 24
	)
	var gens [numNodes]atomic.Int64
	recs := make([]abi.NodeView, numNodes)
	for i := range recs {
		recs[i] = placementNode(uint32(i), 0, fmt.Sprintf("n%d", i)).Rec
	}
	pod := policytest.MakePod().Name("p").Priority(2).View()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range calls {
				if rng.IntN(4) == 0 {
					gens[rng.IntN(numNodes)].Add(1)
				}
				var nodes []policy.PlacementNode
				for _, i := range rng.Perm(numNodes)[:1+rng.IntN(numNodes)] {
					nodes = append(nodes, policy.PlacementNode{ID: uint32(i), Gen: gens[i].Load(), Rec: recs[i]})
				}
				if g%2 == 0 {
					out := make([]int64, len(nodes))
					if err := s.Score(pod, nodes, out); err != nil {
						errs <- err
						return
					}
					for i, p := range probes(out) {
						if p.ID != int64(nodes[i].ID) || p.Upserts < 1 {
							errs <- fmt.Errorf("score %d of a call: %+v for node %d", i, p, nodes[i].ID)
							return
						}
					}
					continue
				}
				out := make([]policy.FilterVerdict, len(nodes))
				if err := f.Filter(pod, nodes, out); err != nil {
					errs <- err
					return
				}
				for i, v := range out {
					if v.Code != abi.FilterCode(i%3) || (v.Code == abi.FilterPass) != (v.Reason == "") {
						errs <- fmt.Errorf("verdict %d of a call: %+v", i, v)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := m.Stats(); st.Discarded != 0 {
		t.Errorf("%d instances discarded, want none", st.Discarded)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.failures) != 0 {
		t.Errorf("failures: %v", rec.failures)
	}
}

// TestPlacementSDKNodepool: the guest SDK's node store, through the
// nodepool example (when it is built): a node whose labels change at a new
// generation is judged on its new labels, which it can only be if the host
// sent the record again; one at generation 0 is sent too.
func TestPlacementSDKNodepool(t *testing.T) {
	path := filepath.Join("..", "..", "..", "guest-sdk", "examples", "nodepool", "nodepool.wasm")
	bin, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not built", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := faultRuntime(t)
	limits := faultLimits()
	limits.MemoryPages = wasm.DefaultLimits().MemoryPages // a TinyGo module needs more than the faults' 8 pages
	m, err := rt.Load(context.Background(), "nodepool.wasm", bin, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	f, err := wasmslot.NewFilter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := policytest.MakePod().Name("p").View() // in no pool
	plain := policytest.MakeNode().Name("n").View()
	pooled := policytest.MakeNode().Name("n").Label("wasmsched.io/pool", "gpu").View()
	for _, step := range []struct {
		name string
		node policy.PlacementNode
		want abi.FilterCode
	}{
		{"generation 0, no pool", policy.PlacementNode{ID: 0, Gen: 0, Rec: plain}, abi.FilterPass},
		{"generation 1, in pool gpu", policy.PlacementNode{ID: 0, Gen: 1, Rec: pooled}, abi.FilterUnresolvable},
		{"generation 1 again", policy.PlacementNode{ID: 0, Gen: 1, Rec: pooled}, abi.FilterUnresolvable},
		{"generation 2, no pool", policy.PlacementNode{ID: 0, Gen: 2, Rec: plain}, abi.FilterPass},
	} {
		out := make([]policy.FilterVerdict, 1)
		if err := f.Filter(pod, []policy.PlacementNode{step.node}, out); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if out[0].Code != step.want {
			t.Errorf("%s: verdict %+v, want %v", step.name, out[0], step.want)
		}
	}
}
