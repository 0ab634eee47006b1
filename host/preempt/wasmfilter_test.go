package preempt

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/policy"
)

// reservedFilter is a filter policy that rejects nodes labelled
// reserved=true as Unschedulable (a rejection preemption may try to undo),
// whatever runs on them.
type reservedFilter struct{ policy.None }

func (reservedFilter) PreFilter(abi.PodView) (bool, error) { return true, nil }
func (reservedFilter) Filter(_ abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	for i, n := range nodes {
		out[i] = policy.FilterVerdict{}
		if v, _ := n.Rec.Labels().Get("reserved"); v == "true" {
			out[i] = policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: "node(s) are reserved"}
		}
	}
	return nil
}

// TestDryRunHonoursWasmFilter: a victim is chosen only on a node the Wasm
// filter accepts. node1 has the cheaper victim, but the filter rejects
// node1 whatever is removed from it, so the preemptor evicts on node2.
func TestDryRunHonoursWasmFilter(t *testing.T) {
	reserved := makeNode("node1", "1")
	reserved.Labels["reserved"] = "true"
	nodes := []*v1.Node{reserved, makeNode("node2", "1")}
	pods := []*v1.Pod{
		makePod("a").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("b").node("node2").priority(midPriority).cpu("1").obj(),
	}
	preemptor := makePod("p").priority(highPriority).cpu("1").obj()
	for _, withFilter := range []bool{false, true} {
		pl := &policy.Placement{}
		if withFilter {
			pl.SetFilter(reservedFilter{})
		}
		prof, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{}).WithPlacement(pl))
		if err != nil {
			t.Fatal(err)
		}
		snap := snapshot(nodes, pods...)
		ps, st := prof.Prepare(cache.NewPodInfo(preemptor), snap)
		if st != nil {
			t.Fatal(st)
		}
		var d framework.Diagnosis
		if feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d); len(feasible) != 0 {
			t.Fatalf("the preemptor fits without preemption")
		}
		ps.Done()
		for _, par := range []int{0, 8} {
			res, found, err := Pod(context.Background(), preemptor, Input{Plugins: prof, Snapshot: snap, Diagnosis: &d, Parallelism: par})
			if err != nil || !found {
				t.Fatalf("filter %v: Pod: found %v, %v", withFilter, found, err)
			}
			wantNode, wantVictims := "node1", []string{"a"}
			if withFilter {
				wantNode, wantVictims = "node2", []string{"b"}
			}
			if res.Node != wantNode || !slices.Equal(names(res.Victims), wantVictims) {
				t.Errorf("filter %v, parallelism %d: node %s victims %v, want %s %v", withFilter, par, res.Node, names(res.Victims), wantNode, wantVictims)
			}
		}
	}
}
