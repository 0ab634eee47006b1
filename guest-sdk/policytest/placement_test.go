package policytest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest/testdata/placement/logic"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// placementModule implements both placement slots (testdata/placement).
const placementModule = "testdata/placement/placement.wasm"

var placementPolicy = Policy{WasmPath: placementModule,
	Filter: logic.Filter, FilterOptions: logic.FilterOptions, Score: logic.Score, ScoreOptions: logic.ScoreOptions}

func verdictNode(name, verdict, reason string) *NodeWrapper {
	return MakeNode().Name(name).Label("verdict", verdict).Label("reason", reason)
}

func scoreNode(name string, score int64) *NodeWrapper {
	return MakeNode().Name(name).Label("score", strconv.FormatInt(score, 10))
}

// TestPlacementSlots runs both placement slots of one module: the node
// records the two share, the options record they share, and what the SDK
// does to answers the host would refuse.
func TestPlacementSlots(t *testing.T) {
	Run(t, placementPolicy, func(t *testing.T, s Slots) {
		t.Run("options", func(t *testing.T) {
			want := []abi.FilterEvent{{Resource: abi.ResourcePod, Actions: abi.ActionDelete}}
			if diff := cmp.Diff(want, s.Filter.Options().FilterEvents); diff != "" {
				t.Errorf("filter events (-want, +got):\n%s", diff)
			}
			if !s.Score.Options().ScoreNormalized {
				t.Error("the score's options do not say normalised")
			}
			// One module, one options record: the filter's adapter sees
			// the score's flag too (the native slots are separate).
			if wasmRun := strings.HasSuffix(t.Name(), "wasm/options"); s.Filter.Options().ScoreNormalized != wasmRun {
				t.Errorf("the filter's options say normalised: %v, want %v", !wasmRun, wasmRun)
			}
		})

		long := strings.Repeat("é", abi.MaxReasonLen) // twice the limit, in bytes
		nodes := PlacementNodes(
			verdictNode("a", "pass", ""),
			verdictNode("b", "reject", "node(s) are busy"),
			verdictNode("c", "never", "node(s) are far"),
			verdictNode("d", "reject", "node(s) are busy"),
			verdictNode("e", "never", ""),
			verdictNode("f", "reject", long),
			verdictNode("g", "reject", "bad \xff byte"),
		)
		t.Run("verdicts", func(t *testing.T) {
			got := Verdicts(t, s.Filter, MakePod().Name("p").Obj(), nodes...)
			want := []policy.FilterVerdict{
				{},
				{Code: abi.FilterUnschedulable, Reason: "node(s) are busy"},
				{Code: abi.FilterUnresolvable, Reason: "node(s) are far"},
				{Code: abi.FilterUnschedulable, Reason: "node(s) are busy"},
				{Code: abi.FilterUnresolvable, Reason: filter.DefaultReason},
				{Code: abi.FilterUnschedulable, Reason: long[:abi.MaxReasonLen]},
				{Code: abi.FilterUnschedulable, Reason: "bad \uFFFD byte"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdicts (-want, +got):\n%s", diff)
			}
		})
		t.Run("scores", func(t *testing.T) {
			got := Scores(t, s.Score, MakePod().Name("p").Obj(), PlacementNodes(
				scoreNode("a", 40), scoreNode("b", -5), scoreNode("c", 250), MakeNode().Name("d"))...)
			if diff := cmp.Diff([]int64{40, 0, 100, 0}, got); diff != "" {
				t.Errorf("scores, clamped to [0, 100] (-want, +got):\n%s", diff)
			}
		})
		t.Run("pre-steps", func(t *testing.T) {
			pod := MakePod().Name("p").Label("skip", "").Obj()
			if got := Verdicts(t, s.Filter, pod, nodes...); got != nil {
				t.Errorf("filter: %v, want skipped", got)
			}
			if got := Scores(t, s.Score, pod, nodes...); got != nil {
				t.Errorf("score: %v, want skipped", got)
			}
			pod = MakePod().Name("p").Label("skip-score", "").Obj()
			if got := Verdicts(t, s.Filter, pod, nodes[:1]...); len(got) != 1 {
				t.Errorf("filter: %v, want one verdict", got)
			}
			if got := Scores(t, s.Score, pod, nodes...); got != nil {
				t.Errorf("score: %v, want skipped", got)
			}
		})
		t.Run("one node record serves both slots", func(t *testing.T) {
			n := verdictNode("both", "never", "node(s) are both").Label("score", "7").Placement()
			pod := MakePod().Name("p").Obj()
			if got := Scores(t, s.Score, pod, n); !cmp.Equal(got, []int64{7}) {
				t.Errorf("score %v, want [7]", got)
			}
			if got := Verdicts(t, s.Filter, pod, n); len(got) != 1 || got[0].Reason != "node(s) are both" {
				t.Errorf("verdict %v, want the node's", got)
			}
			n.Gen, n.Rec = 2, verdictNode("both", "pass", "").Label("score", "8").View()
			if got := Verdicts(t, s.Filter, pod, n); len(got) != 1 || got[0].Code != abi.FilterPass {
				t.Errorf("verdict %v after the node changed, want a pass", got)
			}
			if got := Scores(t, s.Score, pod, n); !cmp.Equal(got, []int64{8}) {
				t.Errorf("score %v after the node changed, want [8]", got)
			}
		})
		t.Run("many nodes, inline ones last", func(t *testing.T) {
			var ns []policy.PlacementNode
			var want []int64
			for i := range 300 {
				n := scoreNode("n"+strconv.Itoa(i), int64(i%101)).Placement()
				n.Inline = i >= 290
				ns = append(ns, n)
				want = append(want, int64(i%101))
			}
			if diff := cmp.Diff(want, Scores(t, s.Score, MakePod().Name("p").Obj(), ns...)); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	})
}

// TestPlacementMemoryStaysPut: a long-lived instance of a placement module
// does not grow. The modules are built with TinyGo's leaking collector,
// which never frees, so one allocation per call would grow the instance
// until the host recycles it (at half its memory limit); here the limit is
// small enough that a leak of a few bytes per call is caught. Every call
// resyncs some nodes, as the host does when their requested resources move.
func TestPlacementMemoryStaysPut(t *testing.T) {
	if testing.Short() {
		t.Skip("many calls")
	}
	for _, tc := range []struct {
		name   string
		path   string
		slot   abi.Slot
		pods   []*abi.Pod
		labels func(i int) map[string]string
	}{
		{"filter", placementModule, abi.SlotFilter, []*abi.Pod{MakePod().Name("p").Obj()},
			func(i int) map[string]string {
				return map[string]string{"verdict": [...]string{"pass", "reject", "never"}[i%3], "reason": "node(s) are " + strconv.Itoa(i%5)}
			}},
		{"score", placementModule, abi.SlotScore, []*abi.Pod{MakePod().Name("p").Obj()},
			func(i int) map[string]string { return map[string]string{"score": strconv.Itoa(i)} }},
		{"nodepool", "../examples/nodepool/nodepool.wasm", abi.SlotFilter,
			[]*abi.Pod{MakePod().Name("a").NamespaceLabel("wasmsched.io/pool", "gpu").Obj(), MakePod().Name("b").Obj(),
				MakePod().Name("c").NamespaceLabel("wasmsched.io/pool", "batch").Obj()},
			func(i int) map[string]string {
				return map[string]string{"wasmsched.io/pool": [...]string{"gpu", "batch", "tpu", ""}[i%4]}
			}},
		{"gpupack", "../examples/gpupack/gpupack.wasm", abi.SlotScore,
			[]*abi.Pod{MakePod().Name("p").Request("nvidia.com/gpu", 1).Request("cpu", 100).Obj()},
			func(int) map[string]string { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limits := wasm.DefaultLimits()
			limits.Deadline, limits.MemoryPages = wasmDeadline, 8 // recycled above 256 KiB
			m := LoadModule(t, tc.path, limits)
			var s Slots
			if err := s.AddWasm(m, tc.slot, nil, Strict(t)); err != nil {
				t.Fatal(err)
			}
			const numNodes, calls = 100, 10000
			nodes := make([]policy.PlacementNode, numNodes)
			build := func(i int, requested int64) abi.NodeView {
				return MakeNode().Name("node-"+strconv.Itoa(i)).Labels(tc.labels(i)).
					Allocatable("cpu", 64000).Allocatable("nvidia.com/gpu", 8).
					Requested("cpu", requested).Requested("nvidia.com/gpu", int64(i%8)).View()
			}
			for i := range nodes {
				nodes[i] = placementNode(build(i, 0))
			}
			// The records a call resyncs, built ahead: the host builds
			// them, the guest copies them.
			changed := make([][]abi.NodeView, 10)
			for k := range changed {
				for i := range numNodes / 10 {
					changed[k] = append(changed[k], build(k*10+i, int64(1000+k)))
				}
			}
			pods := make([]abi.PodView, len(tc.pods))
			for i, p := range tc.pods {
				pods[i] = PodView(p)
			}
			verdicts := make([]policy.FilterVerdict, numNodes)
			scores := make([]int64, numNodes)
			for c := range calls {
				k := c % 10
				for i, rec := range changed[k] {
					n := &nodes[k*10+i]
					n.Gen++
					n.Rec = rec
				}
				pod := pods[c%len(pods)]
				var err error
				if tc.slot == abi.SlotFilter {
					err = s.Filter.Filter(pod, nodes, verdicts)
				} else {
					err = s.Score.Score(pod, nodes, scores)
				}
				if err != nil {
					t.Fatalf("call %d: %v", c, err)
				}
			}
			st := m.Stats()
			if st.Instantiated != 1 || st.Recycled != 0 || st.Discarded != 0 {
				t.Errorf("after %d calls over %d nodes: %d instances made, %d recycled for their memory, %d discarded; want 1, 0, 0 (does a call allocate?)",
					calls, numNodes, st.Instantiated, st.Recycled, st.Discarded)
			}
		})
	}
}

func TestPlacementBuilders(t *testing.T) {
	p := MakePod().Name("p").NamespaceLabel("b", "2").NamespaceLabel("a", "1").NamespaceLabel("b", "3").OwnerKind("Job")
	var pod abi.Pod
	if err := p.View().Decode(&pod); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]abi.KV{{Key: "a", Value: "1"}, {Key: "b", Value: "3"}}, pod.NamespaceLabels, cmp.Transformer("sort", sortKVs)); diff != "" || pod.OwnerKind != "Job" {
		t.Errorf("namespace labels (-want, +got):\n%s\nowner kind %q", diff, pod.OwnerKind)
	}
	obj := p.Obj()
	obj.NamespaceLabels[0].Value = "changed"
	if p.Obj().NamespaceLabels[0].Value == "changed" {
		t.Error("changing an Obj changed the builder")
	}

	n := MakeNode().Name("n").Image("pause:3.10", 300<<10).Image("app:v1", 50<<20)
	want := []abi.Image{{Name: "pause:3.10", Size: 300 << 10}, {Name: "app:v1", Size: 50 << 20}}
	if diff := cmp.Diff(want, n.Obj().Images); diff != "" {
		t.Errorf("images (-want, +got):\n%s", diff)
	}
	if !n.View().Images().Has("app:v1") {
		t.Error("the record lacks the image")
	}
	a, b := n.Placement(), n.Placement()
	ns := PlacementNodes(n, n)
	ids := map[uint32]bool{a.ID: true, b.ID: true, ns[0].ID: true, ns[1].ID: true}
	if len(ids) != 4 || a.Gen != 1 || a.Inline || a.Rec.Name() != "n" {
		t.Errorf("placement nodes %+v %+v %+v: want distinct ids, generation 1, not inline", a, b, ns)
	}
}

func sortKVs(in []abi.KV) []abi.KV {
	out := append([]abi.KV(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Key < out[i].Key {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
