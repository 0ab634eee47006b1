package cycle_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
)

// countingPlugin has a node-local filter that passes every node and counts
// the nodes it was asked about.
type countingPlugin struct{ calls atomic.Int64 }

func (*countingPlugin) Name() string { return "Counting" }

func (p *countingPlugin) PreFilter(*cache.PodInfo, *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	return countingFilter{p}, nil, nil
}

type countingFilter struct{ p *countingPlugin }

func (countingFilter) NodeLocal() bool { return true }

func (f countingFilter) Filter(*cache.NodeInfo) *framework.Status {
	f.p.calls.Add(1)
	return nil
}

// TestMemoAcrossPods checks that the scheduling loop keeps its memo across
// pods, sampled cycles (timed plugins) or not: each pod of a spec after the
// first is filtered on the one node the pod before took, a pod of another
// spec on every node, and a pod of the first spec after it only on the
// nodes taken since.
func TestMemoAcrossPods(t *testing.T) {
	for _, sample := range []int{0, 50, 100} {
		t.Run(fmt.Sprintf("sample %d%%", sample), func(t *testing.T) {
			counting := &countingPlugin{}
			entries := append(defaultEntries(framework.Listers{}), framework.Entry{Plugin: counting})
			e := newEnv(t, cycle.WithBuilt(framework.Built{Entries: entries}), cycle.WithPluginMetricsSample(sample))
			for i := range 20 {
				e.addNodes(makeNode(fmt.Sprintf("n%02d", i), "cpu", "4").obj())
			}
			filtered := func(p *podBuilder) int64 {
				t.Helper()
				before := counting.calls.Load()
				e.addPods(p.obj())
				e.scheduleNext()
				if _, ok := e.api.boundTo()["default/"+p.p.Name]; !ok {
					t.Fatalf("%s not bound: %v", p.p.Name, e.api.boundTo())
				}
				return counting.calls.Load() - before
			}
			if n := filtered(makePod("a").req("cpu", "1")); n != 20 {
				t.Errorf("first pod filtered on %d nodes, want all 20", n)
			}
			// Enough pods that some sampled cycles follow unsampled ones at
			// 50% (the seed is fixed).
			for i := range 7 {
				if n := filtered(makePod(fmt.Sprintf("b%d", i)).req("cpu", "1")); n != 1 {
					t.Errorf("pod %d of the spec after the first filtered on %d nodes, want 1 (the node the one before took)", i+1, n)
				}
			}
			if n := filtered(makePod("c").req("cpu", "2")); n != 20 {
				t.Errorf("pod of another spec filtered on %d nodes, want all 20", n)
			}
			// The first spec's verdicts are still kept: only the nodes the
			// last two pods took changed since.
			if n := filtered(makePod("d").req("cpu", "1")); n < 1 || n > 2 {
				t.Errorf("pod of the first spec again filtered on %d nodes, want the 1 or 2 the last two pods took", n)
			}
		})
	}
}
