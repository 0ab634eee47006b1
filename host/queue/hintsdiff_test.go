package queue

import (
	"context"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// loadHintsFile loads a QueueingHint module from a file instead of the
// built-in one (WASMSCHED_HINTS_WASM: compare builds on the same trials).
func loadHintsFile(tb testing.TB, path string) *wasm.Module {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = rt.Close(ctx) })
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	m, err := rt.Load(ctx, path, b, limits)
	if err != nil {
		tb.Fatalf("loading %s: %v", path, err)
	}
	return m
}

// diffWorld is one trial of a differential test of the built-in hints
// module against the native filters: a generated cluster with a pending
// pod, and one event that may change whether the pod fits.
type diffWorld interface {
	// filter runs the default profile's filters on the pending pod: whether
	// it fits some node, else the plugins that rejected it and why.
	filter(t *testing.T) (fits bool, rejectors podview.Plugins, message string)
	// event applies one change to the world and returns it as host/cluster
	// and host/queue build it, with upstream's label; false if there is none.
	event() (ev abi.Event, label string, ok bool)
	// pending is the pending pod.
	pending() *v1.Pod
	// describe says what a false negative's report shows of the pod.
	describe() string
}

// hintsCounts tallies a differential test's trials.
type hintsCounts struct {
	unschedulable, transitions, queued, queuedFits, falseNeg int
	// byEvent: unschedulable, became schedulable, queued, false positives.
	byEvent map[string]*[4]int
}

func (c *hintsCounts) fpRate() float64 {
	if c.queued == 0 {
		return 0
	}
	return 100 * float64(c.queued-c.queuedFits) / float64(c.queued)
}

// hintsDiff runs trials worlds from newWorld (seeded with seed) against the
// built-in hints module. If the filters reject the pod on every node, one
// event is applied and the module asked about the pod with the plugins that
// rejected it: a Skip for a pod the filters then accept somewhere is a
// false negative and fails the test; a Queue for a pod still rejected
// everywhere is a false positive, which KEP-4247 allows, and their rate is
// logged. The test also fails when fewer than a quarter of the trials
// reject the pod, or fewer than minTransitions events make it schedulable:
// the comparison would say little.
func hintsDiff(t *testing.T, trials, minTransitions int, seed [2]uint64, newWorld func(rng *rand.Rand, trial int) diffWorld) {
	t.Helper()
	m := loadBuiltin(t, abi.SlotQueueingHint)
	if path := os.Getenv("WASMSCHED_HINTS_WASM"); path != "" {
		m = loadHintsFile(t, path)
	}
	hint, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, newSlotRecorder(t))
	if err != nil {
		t.Fatal(err)
	}
	c := hintsCounts{byEvent: map[string]*[4]int{}}
	rng := rand.New(rand.NewPCG(seed[0], seed[1]))
	for i := range trials {
		hintsTrial(t, newWorld(rng, i), i, hint, &c)
		if c.falseNeg > 5 {
			t.Fatal("too many false negatives, stopping")
		}
	}
	t.Logf("%d trials; the pod was unschedulable before the event in %d; the event made it schedulable in %d; "+
		"hints queued %d (false positives %d, %.0f%% of the queued); false negatives %d",
		trials, c.unschedulable, c.transitions, c.queued, c.queued-c.queuedFits, c.fpRate(), c.falseNeg)
	for _, k := range slices.Sorted(maps.Keys(c.byEvent)) {
		v := c.byEvent[k]
		t.Logf("  %-50s unschedulable %4d  became schedulable %4d  queued %4d  false positives %4d", k, v[0], v[1], v[2], v[3])
	}
	if c.unschedulable < trials/4 {
		t.Errorf("the pod was unschedulable before the event in only %d of %d trials: the generator says little", c.unschedulable, trials)
	}
	if c.transitions < minTransitions {
		t.Errorf("only %d events made the pod schedulable, want at least %d: the comparison says little", c.transitions, minTransitions)
	}
}

// hintsTrial runs one world's event and checks the hint.
func hintsTrial(t *testing.T, w diffWorld, trial int, hint policy.QueueingHint, c *hintsCounts) {
	t.Helper()
	fits, rejectors, msg := w.filter(t)
	if fits {
		return
	}
	// The queue's record of the pod is the one from before the event.
	rec := podview.Pod(w.pending(), nil, abi.PodQueueState{}, rejectors)
	pod, err := abi.ReadPod(abi.AppendPod(nil, &rec))
	if err != nil {
		t.Fatal(err)
	}
	ev, label, ok := w.event()
	if !ok {
		return
	}
	byEv := c.byEvent[label]
	if byEv == nil {
		byEv = &[4]int{}
		c.byEvent[label] = byEv
	}
	c.unschedulable++
	byEv[0]++
	view, err := abi.ReadEvent(abi.AppendEvent(nil, &ev))
	if err != nil {
		t.Fatal(err)
	}
	out := []abi.Hint{abi.HintSkip}
	hint.Hints(view, []abi.PodView{pod}, out)
	queued := out[0] != abi.HintSkip
	after, _, _ := w.filter(t)
	if queued {
		c.queued++
		byEv[2]++
	}
	switch {
	case after && queued:
		c.transitions++
		c.queuedFits++
		byEv[1]++
	case after:
		c.transitions++
		c.falseNeg++
		byEv[1]++
		t.Errorf("false negative in trial %d: event %s made the pod schedulable, but the hint skipped it\n"+
			"rejected before by %v: %s\n%s", trial, label, rejectors, msg, w.describe())
	case queued:
		byEv[3]++
	}
}
