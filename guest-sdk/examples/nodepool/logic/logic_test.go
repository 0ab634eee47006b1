package logic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/nodepool/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
)

var (
	pass = policy.FilterVerdict{}
	// notIn and reserved are the verdicts on a node outside the pod's pool,
	// and on a pool's node for a pod in none.
	notIn    = func(pool string) policy.FilterVerdict { return never("node(s) are not in pool " + pool) }
	reserved = func(pool string) policy.FilterVerdict { return never("node(s) are reserved for pool " + pool) }
)

func never(reason string) policy.FilterVerdict {
	return policy.FilterVerdict{Code: abi.FilterUnresolvable, Reason: reason}
}

func node(name, pool string) *policytest.NodeWrapper {
	n := policytest.MakeNode().Name(name).Label("kubernetes.io/hostname", name).Allocatable("cpu", 4000)
	if pool != "" {
		n.Label(logic.PoolLabel, pool)
	}
	return n
}

func pod(name, pool string) *policytest.PodWrapper {
	p := policytest.MakePod().Name(name).Namespace("ns").NamespaceLabel("team", "a")
	if pool != "" {
		p.NamespaceLabel(logic.PoolLabel, pool)
	}
	return p
}

func TestPolicy(t *testing.T) {
	p := policytest.Policy{WasmPath: "../nodepool.wasm", Filter: logic.Filter, FilterOptions: logic.Options}
	policytest.Run(t, p, func(t *testing.T, s policytest.Slots) {
		t.Run("options", func(t *testing.T) {
			want := []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel}}
			if diff := cmp.Diff(want, s.Filter.Options().FilterEvents); diff != "" {
				t.Errorf("filter events (-want, +got):\n%s", diff)
			}
		})

		// One node table for every case: the module keeps the records
		// between calls, as it does in the scheduler.
		nodes := policytest.PlacementNodes(
			node("gpu-1", "gpu"), node("gpu-2", "gpu"), node("cpu-1", ""), node("batch-1", "batch"),
			node("empty-pool", "").Label(logic.PoolLabel, ""),
		)
		cases := []struct {
			name string
			pod  *policytest.PodWrapper
			want []policy.FilterVerdict // nil: skipped
		}{
			{
				name: "a pool's pod runs only in its pool",
				pod:  pod("train", "gpu"),
				want: []policy.FilterVerdict{pass, pass, notIn("gpu"), notIn("gpu"), notIn("gpu")},
			},
			{
				name: "another pool's pod",
				pod:  pod("etl", "batch"),
				want: []policy.FilterVerdict{notIn("batch"), notIn("batch"), notIn("batch"), pass, notIn("batch")},
			},
			{
				name: "a pod in no pool stays off every pool's nodes",
				pod:  pod("web", ""),
				want: []policy.FilterVerdict{reserved("gpu"), reserved("gpu"), pass, reserved("batch"), pass},
			},
			{
				name: "an empty pool is no pool",
				pod:  pod("web", "").NamespaceLabel(logic.PoolLabel, ""),
				want: []policy.FilterVerdict{reserved("gpu"), reserved("gpu"), pass, reserved("batch"), pass},
			},
			{
				name: "the pod's own labels do not choose a pool",
				pod:  pod("sneaky", "").Label(logic.PoolLabel, "gpu"),
				want: []policy.FilterVerdict{reserved("gpu"), reserved("gpu"), pass, reserved("batch"), pass},
			},
			{
				name: "a pool no node has",
				pod:  pod("lonely", "tpu"),
				want: []policy.FilterVerdict{notIn("tpu"), notIn("tpu"), notIn("tpu"), notIn("tpu"), notIn("tpu")},
			},
			{
				name: "a DaemonSet's pod is skipped",
				pod:  pod("agent", "").OwnerKind("DaemonSet"),
			},
			{
				name: "a ReplicaSet's pod is not",
				pod:  pod("web", "").OwnerKind("ReplicaSet"),
				want: []policy.FilterVerdict{reserved("gpu"), reserved("gpu"), pass, reserved("batch"), pass},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := policytest.Verdicts(t, s.Filter, c.pod.Obj(), nodes...)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("verdicts (-want, +got):\n%s", diff)
				}
			})
		}

		t.Run("a node changed since the module saw it", func(t *testing.T) {
			n := node("moving", "gpu").Placement()
			got := policytest.Verdicts(t, s.Filter, pod("web", "").Obj(), n)
			if diff := cmp.Diff([]policy.FilterVerdict{reserved("gpu")}, got); diff != "" {
				t.Errorf("before (-want, +got):\n%s", diff)
			}
			n.Gen, n.Rec = 2, node("moving", "").View()
			got = policytest.Verdicts(t, s.Filter, pod("web", "").Obj(), n)
			if diff := cmp.Diff([]policy.FilterVerdict{pass}, got); diff != "" {
				t.Errorf("after its pool label went away (-want, +got):\n%s", diff)
			}
		})

		t.Run("a node sent whole", func(t *testing.T) {
			dry := node("gpu-1", "gpu").Placement()
			dry.Inline = true
			got := policytest.Verdicts(t, s.Filter, pod("train", "gpu").Obj(), append(nodes[2:3:3], dry)...)
			if diff := cmp.Diff([]policy.FilterVerdict{notIn("gpu"), pass}, got); diff != "" {
				t.Errorf("verdicts (-want, +got):\n%s", diff)
			}
		})
	})
}

func TestFilterDoesNotAllocate(t *testing.T) {
	pods := []abi.PodView{pod("p", "gpu").View(), pod("q", "").View(), pod("r", "batch").View()}
	nodes := []abi.NodeView{node("a", "gpu").View(), node("b", "").View(), node("c", "batch").View()}
	for range 2 { // the first round builds the reasons
		for _, p := range pods {
			for _, n := range nodes {
				logic.Filter(p, n)
			}
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, p := range pods {
			for _, n := range nodes {
				logic.Filter(p, n)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per round, want 0", allocs)
	}
}
