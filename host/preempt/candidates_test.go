package preempt

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/framework"
)

// TestNumCandidates is upstream's calculateNumCandidates with
// DefaultPreemptionArgs.
func TestNumCandidates(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		args  framework.PreemptionArgs
		want  int
	}{
		{10, framework.PreemptionArgs{}, 10},    // defaults: at least 100, at most all
		{5000, framework.PreemptionArgs{}, 500}, // 10%
		{500, framework.PreemptionArgs{}, 100},  // at least 100
		{500, framework.PreemptionArgs{MinCandidateNodesPercentage: 50, MinCandidateNodesAbsolute: 10}, 250},
		{500, framework.PreemptionArgs{MinCandidateNodesPercentage: 0, MinCandidateNodesAbsolute: 1}, 1},
		{500, framework.PreemptionArgs{MinCandidateNodesPercentage: 100, MinCandidateNodesAbsolute: 0}, 500},
	} {
		if got := numCandidates(tc.nodes, tc.args); got != tc.want {
			t.Errorf("numCandidates(%d, %+v) = %d, want %d", tc.nodes, tc.args, got, tc.want)
		}
	}
}

// TestMinCandidates checks that Pod stops dry-running once it has
// Input.MinCandidates candidates: with one, the first node that can make
// room wins even though another needs a less important victim.
func TestMinCandidates(t *testing.T) {
	nodes := []*v1.Node{makeNode("n1", "1"), makeNode("n2", "1")}
	pods := []*v1.Pod{makePod("v1").priority(5).cpu("1").node("n1").obj(), makePod("v2").priority(1).cpu("1").node("n2").obj()}
	preemptor := makePod("p").priority(10).cpu("1").obj()
	for _, tc := range []struct {
		args framework.PreemptionArgs
		want string
	}{
		{framework.PreemptionArgs{}, "n2"},
		{framework.PreemptionArgs{MinCandidateNodesPercentage: 0, MinCandidateNodesAbsolute: 1}, "n1"},
	} {
		snap := snapshot(nodes, pods...)
		in := Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diagnose(t, preemptor, snap, nil), MinCandidates: tc.args}
		res, found, err := Pod(context.Background(), preemptor, in)
		if err != nil || !found {
			t.Fatalf("Pod = %+v, %v, %v; want a node", res, found, err)
		}
		if res.Node != tc.want {
			t.Errorf("MinCandidates %+v: node %q, want %q", tc.args, res.Node, tc.want)
		}
	}
}
