package logic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/gpupack/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

// node has gpus GPUs, of which used are requested, and 16 CPUs, of which
// cpu millicores are requested.
func node(name string, gpus, used, cpu int64) *policytest.NodeWrapper {
	return policytest.MakeNode().Name(name).
		Allocatable(logic.GPU, gpus).Requested(logic.GPU, used).
		Allocatable("cpu", 16000).Requested("cpu", cpu)
}

func pod(gpus, cpu int64) *policytest.PodWrapper {
	p := policytest.MakePod().Name("p").Namespace("ns").Request("cpu", cpu)
	if gpus > 0 {
		p.Request(logic.GPU, gpus)
	}
	return p
}

func TestPolicy(t *testing.T) {
	p := policytest.Policy{WasmPath: "../gpupack.wasm", Score: logic.Score, ScoreOptions: logic.Options}
	policytest.Run(t, p, func(t *testing.T, s policytest.Slots) {
		if !s.Score.Options().ScoreNormalized {
			t.Error("the scores are not declared normalised")
		}
		cases := []struct {
			name  string
			pod   *policytest.PodWrapper
			nodes []*policytest.NodeWrapper
			want  []int64 // nil: skipped
		}{
			{
				name: "fewest GPUs left free wins",
				pod:  pod(1, 0),
				nodes: []*policytest.NodeWrapper{
					node("empty", 8, 0, 0), node("half", 8, 4, 0), node("last-one", 8, 7, 0), node("small", 2, 0, 0),
				},
				// free after: 7, 3, 0, 1; all CPU free (penalty 9)
				want: []int64{100 - 70 - 9, 100 - 30 - 9, 100 - 0 - 9, 100 - 10 - 9},
			},
			{
				name: "at equal GPUs the node left with less free CPU wins",
				pod:  pod(2, 2000),
				nodes: []*policytest.NodeWrapper{
					node("idle", 4, 2, 0), node("busy", 4, 2, 12000), node("full-cpu", 4, 2, 14000),
				},
				// 0 GPUs left; CPU free after: 14/16, 2/16, 0/16
				want: []int64{100 - 7, 100 - 1, 100},
			},
			{
				name:  "GPUs count before CPU",
				pod:   pod(1, 1000),
				nodes: []*policytest.NodeWrapper{node("gpu-packed", 2, 1, 0), node("cpu-packed", 4, 2, 15000)},
				want:  []int64{100 - 0 - 8, 100 - 10 - 0},
			},
			{
				name:  "nine or more GPUs left free score alike but for CPU",
				pod:   pod(1, 0),
				nodes: []*policytest.NodeWrapper{node("ten", 10, 0, 0), node("sixteen", 16, 0, 8000)},
				want:  []int64{100 - 90 - 9, 100 - 90 - 4},
			},
			{
				name:  "a node where the pod does not fit scores 0",
				pod:   pod(4, 0),
				nodes: []*policytest.NodeWrapper{node("too-small", 2, 0, 0), node("taken", 8, 6, 0), node("no-gpus", 0, 0, 0)},
				want:  []int64{0, 0, 0},
			},
			{
				name:  "a node without CPU figures is scored on GPUs only",
				pod:   pod(1, 0),
				nodes: []*policytest.NodeWrapper{policytest.MakeNode().Name("bare").Allocatable(logic.GPU, 1)},
				want:  []int64{100},
			},
			{
				name:  "pods without GPUs are skipped",
				pod:   pod(0, 1000),
				nodes: []*policytest.NodeWrapper{node("a", 8, 0, 0)},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := policytest.Scores(t, s.Score, c.pod.Obj(), policytest.PlacementNodes(c.nodes...)...)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("scores (-want, +got):\n%s", diff)
				}
				for i, v := range got {
					if v < 0 || v > abi.MaxNodeScore {
						t.Errorf("node %d scored %d, outside [0, %d]", i, v, abi.MaxNodeScore)
					}
				}
			})
		}
	})
}

func TestScoreDoesNotAllocate(t *testing.T) {
	p := pod(1, 500).View()
	n := node("n", 8, 3, 4000).View()
	if allocs := testing.AllocsPerRun(100, func() { logic.Score(p, n) }); allocs != 0 {
		t.Errorf("Score allocates %v times per node, want 0", allocs)
	}
}
