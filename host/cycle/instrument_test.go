package cycle_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Every cycle records its extension points; a sampled cycle also times its
// plugins one by one, as upstream's pluginMetricsSamplePercent.
func TestPluginMetricsSampled(t *testing.T) {
	for _, sample := range []int{0, 100} {
		t.Run(fmt.Sprintf("sample=%d", sample), func(t *testing.T) {
			e := newEnv(t, cycle.WithBuilt(framework.Built{Entries: defaultEntries(framework.Listers{})}), cycle.WithPluginMetricsSample(10),
				cycle.WithPluginMetricsSample(sample))
			e.addNodes(makeNode("n1", "cpu", "4").obj(), makeNode("n2", "cpu", "4").obj())
			e.addPods(makePod("p").req("cpu", "1").obj())

			e.scheduleNext()

			// VolumeBinding reserves and pre-binds (nothing for this pod:
			// its PreBindPreFlight, like DynamicResources', says Skip).
			want := []string{"wasmsched PreFilter Success", "wasmsched Filter Success", "wasmsched Score Success",
				"wasmsched Reserve Success", "wasmsched PreBindPreFlight Skip", "wasmsched PreBind Success",
				"wasmsched Bind Success"}
			if diff := cmp.Diff(want, e.rec.extensionPoints()); diff != "" {
				t.Errorf("extension points (-want, +got):\n%s", diff)
			}
			if got := e.api.nominations(); len(got) != 0 {
				t.Errorf("nominations %v for a pod no PreBind has work for, want none", got)
			}
			runs := e.rec.pluginRuns()
			if sample == 0 {
				if len(runs) != 0 {
					t.Errorf("plugin runs recorded in an unsampled cycle: %v", runs)
				}
				return
			}
			for k, n := range map[string]int{
				"NodeResourcesFit PreFilter Success":     1,
				"NodeResourcesFit Filter Success":        2, // one per node
				"NodeResourcesFit PreScore Success":      1,
				"NodeResourcesFit Score Success":         1, // one call scores both nodes
				"VolumeBinding PreScore Skip":            1, // no claims to score by
				"DynamicResources PreScore Skip":         1,
				"VolumeBinding PreBindPreFlight Skip":    1,
				"DynamicResources PreBindPreFlight Skip": 1,
				"VolumeBinding PreBind Success":          0, // left out after its Skip
			} {
				if runs[k] != n {
					t.Errorf("%s observed %d times, want %d", k, runs[k], n)
				}
			}
		})
	}
}

// An unschedulable pod's cycle records PostFilter with the preemption's
// outcome.
func TestPostFilterRecorded(t *testing.T) {
	e := newEnv(t, cycle.WithPreemption(cycle.Preemption{}))
	e.addNodes(makeNode("n1", "cpu", "1").obj())
	e.addRunning(makePod("v").priority(0).req("cpu", "1").on("n1").obj())
	e.addPods(makePod("p").priority(10).req("cpu", "1").obj(), makePod("q").priority(0).req("cpu", "1").obj())

	e.scheduleNext() // p preempts v
	e.scheduleNext() // q finds no victim

	want := []string{"wasmsched PreFilter Success", "wasmsched Filter Success", "wasmsched PostFilter Success",
		"wasmsched PreFilter Success", "wasmsched Filter Success", "wasmsched PostFilter Unschedulable"}
	if diff := cmp.Diff(want, e.rec.extensionPoints()); diff != "" {
		t.Errorf("extension points (-want, +got):\n%s", diff)
	}
}

// A sampled cycle times the first 32 Filter calls of each plugin and runs
// the rest untimed: every node is still filtered, and the histogram gets a
// bounded sample instead of one observation per plugin and node.
func TestFilterTimingBounded(t *testing.T) {
	e := newEnv(t, cycle.WithBuilt(framework.Built{Entries: defaultEntries(framework.Listers{})}), cycle.WithPluginMetricsSample(100))
	for i := range 40 {
		e.addNodes(makeNode(fmt.Sprintf("n%02d", i), "cpu", "4").obj())
	}
	e.addPods(makePod("p").req("cpu", "1").obj())

	e.scheduleNext()

	if got := e.api.boundTo(); len(got) != 1 {
		t.Fatalf("bound %v, want p bound", got)
	}
	// Under 100 nodes adaptive scoring looks at all 40: 40 calls, 32 timed.
	runs := e.rec.pluginRuns()
	if n := runs["NodeResourcesFit Filter Success"]; n != 32 {
		t.Errorf("NodeResourcesFit Filter observed %d times over 40 nodes, want the first 32 (runs %v)", n, runs)
	}
	if n := runs["NodeResourcesFit Score Success"]; n != 1 {
		t.Errorf("NodeResourcesFit Score observed %d times, want 1", n)
	}
}
