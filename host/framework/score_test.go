package framework

import (
	"testing"

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
		pod   *podBuilder
		nodes []*nodeBuilder
		want  []int64
	}{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   makePod(),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4", "memory", "10000"), makeNode("n2", "cpu", "4", "memory", "10000")},
			want:  []int64{100, 100},
		},
		{
			// cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50: 37
			// cpu (6000-3000)*100/6000 = 50, memory 50: 50
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4", "memory", "10000"), makeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{37, 50},
		},
		{
			// cpu (10000-6000)*100/10000 = 40, memory 100: 70
			// cpu 40, memory (20000-5000)*100/20000 = 75: 57
			name: "no resources requested, pods scheduled with resources",
			pod:  makePod(),
			nodes: []*nodeBuilder{
				makeNode("n1", "cpu", "10", "memory", "20000").with(makePod().req("cpu", "3", "memory", "0"), makePod().req("cpu", "3", "memory", "0")),
				makeNode("n2", "cpu", "10", "memory", "20000").with(makePod().req("cpu", "3", "memory", "0"), makePod().req("cpu", "3", "memory", "5000")),
			},
			want: []int64{70, 57},
		},
		{
			// A container without requests counts 100m and 200Mi:
			// cpu (1000-100-100)*100/1000 = 80, memory (1Gi-400Mi)*100/1Gi = 60: 70
			name:  "non-zero defaults for the pod and the node's pods",
			pod:   makePod().req(),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "1", "memory", "1Gi").with(makePod().req())},
			want:  []int64{70},
		},
		{
			name:  "requested beyond capacity scores 0 for that resource",
			pod:   makePod().req("cpu", "2", "memory", "5000"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "1", "memory", "10000")},
			want:  []int64{25},
		},
		{
			name:  "a resource the node lacks is left out",
			pod:   makePod().req("cpu", "1", "memory", "5000"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4"), makeNode("n2")},
			want:  []int64{75, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := tc.pod.state()
			var got []int64
			for _, ni := range infos(tc.nodes...) {
				got = append(got, leastAllocated(ps.Pod(), ni))
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
		pod   *podBuilder
		nodes []*nodeBuilder
		want  []int64
	}{
		{
			name:  "best-effort pod: skipped",
			pod:   makePod().req(),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4", "memory", "10000")},
			want:  []int64{0},
		},
		{
			// n1: cpu 0 -> 75%, memory 0 -> 50%: 100 -> 87: 68
			// n2: cpu 0 -> 50%, memory 0 -> 50%: 100 -> 100: 75
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4", "memory", "10000"), makeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{68, 75},
		},
		{
			// n1: cpu 30% -> 60%, memory 0 -> 25%: 85 -> 82: 73
			// n2: cpu 30% -> 60%, memory 25% -> 50%: 97 -> 95: 74
			name: "resources requested, pods scheduled with resources",
			pod:  makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000"),
			nodes: []*nodeBuilder{
				makeNode("n1", "cpu", "10", "memory", "20000").with(makePod().req("cpu", "1").req("cpu", "2")),
				makeNode("n2", "cpu", "10", "memory", "20000").with(makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000")),
			},
			want: []int64{73, 74},
		},
		{
			// n2: cpu 30% -> 60%, memory 10% -> 20%: 90 -> 80: 70
			name: "resources requested, pods scheduled with resources, differently sized nodes",
			pod:  makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000"),
			nodes: []*nodeBuilder{
				makeNode("n1", "cpu", "10", "memory", "20000").with(makePod().req("cpu", "1").req("cpu", "2")),
				makeNode("n2", "cpu", "10", "memory", "50000").with(makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000")),
			},
			want: []int64{73, 70},
		},
		{
			// n1: cpu 100% -> 100%, memory 0 -> 100%: 50 -> 100: 100
			// n2: cpu 0 -> 0, memory 0 -> 100%: 100 -> 50: 50
			name: "nodes to reach min/max score",
			pod:  makePod().req("memory", "2000").req("memory", "3000"),
			nodes: []*nodeBuilder{
				makeNode("n1", "cpu", "3", "memory", "5000").with(makePod().req("cpu", "1").req("cpu", "2")),
				makeNode("n2", "cpu", "3", "memory", "5000"),
			},
			want: []int64{100, 50},
		},
		{
			// n1: cpu 50% -> 100%, memory 0 -> 0: 75 -> 50: 62
			// n2: cpu 50% -> 100%, memory 50% -> 50%: 100 -> 75: 62
			name: "requested resources at node capacity",
			pod:  makePod().req("cpu", "1").req("cpu", "2"),
			nodes: []*nodeBuilder{
				makeNode("n1", "cpu", "6", "memory", "10000").with(makePod().req("cpu", "1").req("cpu", "2")),
				makeNode("n2", "cpu", "6", "memory", "10000").with(makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000")),
			},
			want: []int64{62, 62},
		},
		{
			// Uses the actual requests, not the non-zero ones: the node's
			// request-less pod counts nothing. cpu 0 -> 50%, no memory: 100 -> 100: 75
			name:  "one resource only",
			pod:   makePod().req("cpu", "1"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "2").with(makePod().req())},
			want:  []int64{75},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := tc.pod.state()
			var got []int64
			for _, ni := range infos(tc.nodes...) {
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
		pod   *podBuilder
		nodes []*nodeBuilder
		want  []int64
	}{
		{
			// Fit 37 and 50, balanced 68 and 75 (above), no taints: 3 x 100.
			name:  "resources",
			pod:   makePod().req("cpu", "1", "memory", "2000").req("cpu", "2", "memory", "3000"),
			nodes: []*nodeBuilder{makeNode("n1", "cpu", "4", "memory", "10000"), makeNode("n2", "cpu", "6", "memory", "10000")},
			want:  []int64{300 + 37 + 68, 300 + 50 + 75},
		},
		{
			// Raw counts 0, 1, 2, 0 (a tolerated and a NoSchedule taint
			// do not count), reverse-normalised: 100, 50, 0, 100.
			name: "PreferNoSchedule taints",
			pod:  makePod().toleration("ok", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule),
			nodes: []*nodeBuilder{
				makeNode("n1").taint("ok", "", v1.TaintEffectPreferNoSchedule).taint("hard", "", v1.TaintEffectNoSchedule),
				makeNode("n2").taint("a", "", v1.TaintEffectPreferNoSchedule),
				makeNode("n3").taint("a", "", v1.TaintEffectPreferNoSchedule).taint("b", "x", v1.TaintEffectPreferNoSchedule),
				makeNode("n4"),
			},
			want: []int64{300, 150, 0, 300},
		},
		{
			// Raw sums 2, 5, 7, 0, normalised by 7: 28, 71, 100, 0.
			name: "preferred node affinity",
			pod: makePod().
				preferred(2, labelTerm(expr("zone", v1.NodeSelectorOpIn, "a"))).
				preferred(5, labelTerm(expr("disk", v1.NodeSelectorOpIn, "ssd"))),
			nodes: []*nodeBuilder{
				makeNode("n1").label("zone", "a"),
				makeNode("n2").label("disk", "ssd"),
				makeNode("n3").label("zone", "a").label("disk", "ssd"),
				makeNode("n4"),
			},
			want: []int64{300 + 2*28, 300 + 2*71, 300 + 2*100, 300},
		},
		{
			name:  "preferred affinity matching nothing",
			pod:   makePod().preferred(3, labelTerm(expr("zone", v1.NodeSelectorOpIn, "z"))),
			nodes: []*nodeBuilder{makeNode("n1").label("zone", "a"), makeNode("n2")},
			want:  []int64{300, 300},
		},
		{
			name: "preferred affinity on metadata.name",
			pod:  makePod().preferred(10, nameTerm("n2")),
			nodes: []*nodeBuilder{
				makeNode("n1"), makeNode("n2"),
			},
			want: []int64{300, 500},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := Score(tc.pod.state(), infos(tc.nodes...), nil)
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
	nodes := infos(makeNode("n1", "cpu", "1", "memory", "1Gi"), makeNode("n2", "cpu", "2", "memory", "1Gi"))
	out := make([]int64, 1, 8)
	got, _ := Score(makePod().req("cpu", "100m").state(), nodes, out)
	if len(got) != 2 || &got[0] != &out[:1][0] {
		t.Errorf("Score did not write into out: len %d", len(got))
	}
	if got, _ := Score(makePod().state(), nil, out); len(got) != 0 {
		t.Errorf("Score of no nodes = %v", got)
	}
}

// balancedScore is NodeResourcesBalancedAllocation's score of ni for ps's
// pod, 0 when its PreScore skips the pod.
func balancedScore(ps *PodState, ni *cache.NodeInfo) int64 {
	sc, st := nodeResourcesBalancedAllocation{}.PreScore(ps.Pod(), []*cache.NodeInfo{ni}, nil)
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
