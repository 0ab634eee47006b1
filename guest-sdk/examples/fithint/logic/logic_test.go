package logic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

const fit = logic.Name

var (
	skip  = abi.HintSkip
	queue = abi.HintQueue
	herr  = abi.HintError
)

func node() *policytest.NodeWrapper {
	return policytest.MakeNode().Name("n1").
		Allocatable("cpu", 4000).Allocatable("memory", 8<<30).Allocatable("pods", 110).
		Requested("cpu", 3000).Requested("memory", 2<<30).Requested("pods", 10)
}

func pending(name string) *policytest.PodWrapper {
	return policytest.MakePod().Name(name).Namespace("ns").UnschedulablePlugins(fit)
}

func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../fithint.wasm", QueueingHint: []hint.Plugin{logic.Plugin}}, func(t *testing.T, s policytest.Slots) {
		t.Run("registrations", func(t *testing.T) {
			want := []abi.Registration{
				{Plugin: fit, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable},
				{Plugin: fit, Resource: abi.ResourcePod, Actions: abi.ActionDelete},
			}
			if diff := cmp.Diff(want, s.QueueingHint.Registrations()); diff != "" {
				t.Errorf("Registrations (-want, +got):\n%s", diff)
			}
		})

		assigned := func(name string) *policytest.PodWrapper {
			return policytest.MakePod().Name(name).Namespace("ns").Node("n1")
		}
		cases := []struct {
			name string
			ev   abi.EventView
			pods []*policytest.PodWrapper
			want []abi.Hint
		}{
			{
				name: "node added: fits or not per resource",
				ev:   policytest.NodeAdd(node().Obj()),
				pods: []*policytest.PodWrapper{
					pending("fits").Request("cpu", 1000).Request("memory", 1<<30),
					pending("exactly").Request("cpu", 1000).Request("memory", 6<<30),
					pending("cpu-over").Request("cpu", 1001),
					pending("memory-over").Request("cpu", 10).Request("memory", 6<<30+1),
					pending("no-requests"),
					pending("zero-request").Request("cpu", 0),
				},
				want: []abi.Hint{queue, queue, skip, skip, queue, queue},
			},
			{
				name: "a resource the node lacks counts as zero",
				ev:   policytest.NodeAdd(node().Obj()),
				pods: []*policytest.PodWrapper{
					pending("gpu").Request("cpu", 100).Request("example.com/gpu", 1),
				},
				want: []abi.Hint{skip},
			},
			{
				name: "a resource the node has and the pod does not request is ignored",
				ev:   policytest.NodeAdd(node().Allocatable("example.com/gpu", 0).Requested("example.com/gpu", 5).Obj()),
				pods: []*policytest.PodWrapper{pending("cpu-only").Request("cpu", 100)},
				want: []abi.Hint{queue},
			},
			{
				name: "allocatable update: the new node counts",
				ev: policytest.NodeUpdate(node().Obj(), node().Allocatable("cpu", 8000).Obj(),
					abi.ActionUpdateNodeAllocatable),
				pods: []*policytest.PodWrapper{pending("big").Request("cpu", 5000), pending("huge").Request("cpu", 5001)},
				want: []abi.Hint{queue, skip},
			},
			{
				name: "label update is not registered",
				ev:   policytest.NodeUpdate(node().Obj(), node().Label("zone", "a").Obj(), abi.ActionUpdateNodeLabel),
				pods: []*policytest.PodWrapper{pending("small").Request("cpu", 1)},
				want: []abi.Hint{skip},
			},
			{
				name: "only pods rejected by NodeResourcesFit are asked",
				ev:   policytest.NodeAdd(node().Obj()),
				pods: []*policytest.PodWrapper{
					policytest.MakePod().Name("taint").UnschedulablePlugins("TaintToleration").Request("cpu", 1),
					policytest.MakePod().Name("pending").PendingPlugins(fit).Request("cpu", 1),
					policytest.MakePod().Name("both").UnschedulablePlugins("TaintToleration", fit).Request("cpu", 1),
				},
				want: []abi.Hint{skip, queue, queue},
			},
			{
				name: "assigned pod deleted: queue if it freed a resource the pod requests",
				ev:   policytest.PodDelete(assigned("gone").Request("cpu", 500).Request("memory", 0).Obj()),
				pods: []*policytest.PodWrapper{
					pending("cpu").Request("cpu", 100000),
					pending("memory").Request("memory", 1),
					pending("both").Request("memory", 1).Request("cpu", 1),
					pending("nothing"),
				},
				want: []abi.Hint{queue, skip, queue, skip},
			},
			{
				name: "assigned pod added is not registered",
				ev:   policytest.PodAdd(assigned("new").Request("cpu", 500).Obj()),
				pods: []*policytest.PodWrapper{pending("cpu").Request("cpu", 1)},
				want: []abi.Hint{skip},
			},
			{
				name: "unscheduled pod deleted is not registered",
				ev:   policytest.UnscheduledPodDelete(policytest.MakePod().Name("other").Request("cpu", 500).Obj()),
				pods: []*policytest.PodWrapper{pending("cpu").Request("cpu", 1)},
				want: []abi.Hint{skip},
			},
			{
				name: "node event without the node is an error",
				ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd}),
				pods: []*policytest.PodWrapper{pending("p").Request("cpu", 1)},
				want: []abi.Hint{herr},
			},
			{
				name: "no pods",
				ev:   policytest.NodeAdd(node().Obj()),
				want: []abi.Hint{},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var pods []*abi.Pod
				for _, p := range c.pods {
					pods = append(pods, p.Obj())
				}
				if diff := cmp.Diff(c.want, policytest.Hints(s.QueueingHint, c.ev, pods...)); diff != "" {
					t.Errorf("hints (-want, +got):\n%s", diff)
				}
			})
		}
	})
}

func TestHintDoesNotAllocate(t *testing.T) {
	ev := policytest.NodeAdd(node().Obj())
	p := pending("p").Request("cpu", 100).Request("memory", 1<<20).Request("example.com/gpu", 1).View()
	if allocs := testing.AllocsPerRun(100, func() { _, _ = logic.Hint(ev, p) }); allocs != 0 {
		t.Errorf("Hint allocates %v times per pod, want 0", allocs)
	}
}
