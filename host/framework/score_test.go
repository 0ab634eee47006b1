package framework_test

import (
	"fmt"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins/noderesources"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// The expectations below are upstream's test cases and formula comments
// (least_allocated_test.go, balanced_allocation_test.go), with cpu in
// millicores.

func TestLeastAllocated(t *testing.T) {
	tests := []struct {
		name  string
		pod   *ft.PodBuilder
		nodes []*ft.NodeBuilder
		want  []int64
	}{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   ft.MakePod(),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4", "memory", "10000"), ft.MakeNode("n2", "cpu", "4", "memory", "10000")},
			want:  []int64{100, 100},
		},
		{
			// cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50: 37
			// cpu (6000-3000)*100/6000 = 50, memory 50: 50
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4", "memory", "10000"), ft.MakeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{37, 50},
		},
		{
			// cpu (10000-6000)*100/10000 = 40, memory 100: 70
			// cpu 40, memory (20000-5000)*100/20000 = 75: 57
			name: "no resources requested, pods scheduled with resources",
			pod:  ft.MakePod(),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1", "cpu", "10", "memory", "20000").With(ft.MakePod().Req("cpu", "3", "memory", "0"), ft.MakePod().Req("cpu", "3", "memory", "0")),
				ft.MakeNode("n2", "cpu", "10", "memory", "20000").With(ft.MakePod().Req("cpu", "3", "memory", "0"), ft.MakePod().Req("cpu", "3", "memory", "5000")),
			},
			want: []int64{70, 57},
		},
		{
			// A container without requests counts 100m and 200Mi:
			// cpu (1000-100-100)*100/1000 = 80, memory (1Gi-400Mi)*100/1Gi = 60: 70
			name:  "non-zero defaults for the pod and the node's pods",
			pod:   ft.MakePod().Req(),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "1", "memory", "1Gi").With(ft.MakePod().Req())},
			want:  []int64{70},
		},
		{
			name:  "requested beyond capacity scores 0 for that resource",
			pod:   ft.MakePod().Req("cpu", "2", "memory", "5000"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "1", "memory", "10000")},
			want:  []int64{25},
		},
		{
			name:  "a resource the node lacks is left out",
			pod:   ft.MakePod().Req("cpu", "1", "memory", "5000"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4"), ft.MakeNode("n2")},
			want:  []int64{75, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := state(tc.pod)
			var got []int64
			for _, ni := range ft.Infos(tc.nodes...) {
				got = append(got, pluginScore(abi.PluginNodeResourcesFit, ps, ni))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LeastAllocated (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocation(t *testing.T) {
	tests := []struct {
		name  string
		pod   *ft.PodBuilder
		nodes []*ft.NodeBuilder
		want  []int64
	}{
		{
			name:  "best-effort pod: skipped",
			pod:   ft.MakePod().Req(),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4", "memory", "10000")},
			want:  []int64{0},
		},
		{
			// n1: cpu 0 -> 75%, memory 0 -> 50%: 100 -> 87: 68
			// n2: cpu 0 -> 50%, memory 0 -> 50%: 100 -> 100: 75
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4", "memory", "10000"), ft.MakeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{68, 75},
		},
		{
			// n1: cpu 30% -> 60%, memory 0 -> 25%: 85 -> 82: 73
			// n2: cpu 30% -> 60%, memory 25% -> 50%: 97 -> 95: 74
			name: "resources requested, pods scheduled with resources",
			pod:  ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000"),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1", "cpu", "10", "memory", "20000").With(ft.MakePod().Req("cpu", "1").Req("cpu", "2")),
				ft.MakeNode("n2", "cpu", "10", "memory", "20000").With(ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000")),
			},
			want: []int64{73, 74},
		},
		{
			// n2: cpu 30% -> 60%, memory 10% -> 20%: 90 -> 80: 70
			name: "resources requested, pods scheduled with resources, differently sized nodes",
			pod:  ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000"),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1", "cpu", "10", "memory", "20000").With(ft.MakePod().Req("cpu", "1").Req("cpu", "2")),
				ft.MakeNode("n2", "cpu", "10", "memory", "50000").With(ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000")),
			},
			want: []int64{73, 70},
		},
		{
			// n1: cpu 100% -> 100%, memory 0 -> 100%: 50 -> 100: 100
			// n2: cpu 0 -> 0, memory 0 -> 100%: 100 -> 50: 50
			name: "nodes to reach min/max score",
			pod:  ft.MakePod().Req("memory", "2000").Req("memory", "3000"),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1", "cpu", "3", "memory", "5000").With(ft.MakePod().Req("cpu", "1").Req("cpu", "2")),
				ft.MakeNode("n2", "cpu", "3", "memory", "5000"),
			},
			want: []int64{100, 50},
		},
		{
			// n1: cpu 50% -> 100%, memory 0 -> 0: 75 -> 50: 62
			// n2: cpu 50% -> 100%, memory 50% -> 50%: 100 -> 75: 62
			name: "requested resources at node capacity",
			pod:  ft.MakePod().Req("cpu", "1").Req("cpu", "2"),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1", "cpu", "6", "memory", "10000").With(ft.MakePod().Req("cpu", "1").Req("cpu", "2")),
				ft.MakeNode("n2", "cpu", "6", "memory", "10000").With(ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000")),
			},
			want: []int64{62, 62},
		},
		{
			// Uses the actual requests, not the non-zero ones: the node's
			// request-less pod counts nothing. cpu 0 -> 50%, no memory: 100 -> 100: 75
			name:  "one resource only",
			pod:   ft.MakePod().Req("cpu", "1"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "2").With(ft.MakePod().Req())},
			want:  []int64{75},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := state(tc.pod)
			var got []int64
			for _, ni := range ft.Infos(tc.nodes...) {
				got = append(got, balancedScore(ps, ni))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BalancedAllocation (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestScore checks the weighted totals: 3 x TaintToleration + 2 x
// NodeAffinity + NodeResourcesFit + BalancedAllocation.
func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		pod   *ft.PodBuilder
		nodes []*ft.NodeBuilder
		want  []int64
	}{
		{
			// Fit 37 and 50, balanced 68 and 75 (above), no taints: 3 x 100.
			name:  "resources",
			pod:   ft.MakePod().Req("cpu", "1", "memory", "2000").Req("cpu", "2", "memory", "3000"),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1", "cpu", "4", "memory", "10000"), ft.MakeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{300 + 37 + 68, 300 + 50 + 75},
		},
		{
			// Raw counts 0, 1, 2, 0 (a tolerated and a NoSchedule taint
			// do not count), reverse-normalised: 100, 50, 0, 100.
			name: "PreferNoSchedule taints",
			pod:  ft.MakePod().Toleration("ok", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1").Taint("ok", "", v1.TaintEffectPreferNoSchedule).Taint("hard", "", v1.TaintEffectNoSchedule),
				ft.MakeNode("n2").Taint("a", "", v1.TaintEffectPreferNoSchedule),
				ft.MakeNode("n3").Taint("a", "", v1.TaintEffectPreferNoSchedule).Taint("b", "x", v1.TaintEffectPreferNoSchedule),
				ft.MakeNode("n4"),
			},
			want: []int64{300, 150, 0, 300},
		},
		{
			// Raw sums 2, 5, 7, 0, normalised by 7: 28, 71, 100, 0.
			name: "preferred node affinity",
			pod: ft.MakePod().
				Preferred(2, ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "a"))).
				Preferred(5, ft.LabelTerm(ft.Expr("disk", v1.NodeSelectorOpIn, "ssd"))),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1").Label("zone", "a"),
				ft.MakeNode("n2").Label("disk", "ssd"),
				ft.MakeNode("n3").Label("zone", "a").Label("disk", "ssd"),
				ft.MakeNode("n4"),
			},
			want: []int64{300 + 2*28, 300 + 2*71, 300 + 2*100, 300},
		},
		{
			name:  "preferred affinity matching nothing",
			pod:   ft.MakePod().Preferred(3, ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "z"))),
			nodes: []*ft.NodeBuilder{ft.MakeNode("n1").Label("zone", "a"), ft.MakeNode("n2")},
			want:  []int64{300, 300},
		},
		{
			name: "preferred affinity on metadata.name",
			pod:  ft.MakePod().Preferred(10, ft.NameTerm("n2")),
			nodes: []*ft.NodeBuilder{
				ft.MakeNode("n1"), ft.MakeNode("n2"),
			},
			want: []int64{300, 500},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := Score(state(tc.pod), ft.Infos(tc.nodes...), nil)
			if st != nil {
				t.Fatalf("Score: %v", st.Message())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Score (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestScoreReusesOut(t *testing.T) {
	nodes := ft.Infos(ft.MakeNode("n1", "cpu", "1", "memory", "1Gi"), ft.MakeNode("n2", "cpu", "2", "memory", "1Gi"))
	out := make([]int64, 1, 8)
	got, _ := Score(state(ft.MakePod().Req("cpu", "100m")), nodes, out)
	if len(got) != 2 || &got[0] != &out[:1][0] {
		t.Errorf("Score did not write into out: len %d", len(got))
	}
	if got, _ := Score(state(ft.MakePod()), nil, out); len(got) != 0 {
		t.Errorf("Score of no nodes = %v", got)
	}
}

// balancedScore is NodeResourcesBalancedAllocation's score of ni for ps's
// pod, 0 when its PreScore skips the pod.
func balancedScore(ps *PodState, ni *cache.NodeInfo) int64 {
	sc, st := pluginOf(noderesources.BalancedAllocationName).(PreScorePlugin).PreScore(ps.Pod(), []*cache.NodeInfo{ni}, nil)
	if st != nil {
		panic(st.Message())
	}
	if sc == nil {
		return 0
	}
	score := make([]int64, 1)
	sc.Score([]*cache.NodeInfo{ni}, score)
	return score[0]
}

// pluginScore is the in-tree plugin name's score of ni for ps's pod, with
// its default args (LeastAllocated for NodeResourcesFit).
func pluginScore(name string, ps *PodState, ni *cache.NodeInfo) int64 {
	sc, st := pluginOf(name).(PreScorePlugin).PreScore(ps.Pod(), []*cache.NodeInfo{ni}, nil)
	if st != nil || sc == nil {
		panic(fmt.Sprintf("PreScore = %v, %v", sc, st))
	}
	score := make([]int64, 1)
	sc.Score([]*cache.NodeInfo{ni}, score)
	return score[0]
}
