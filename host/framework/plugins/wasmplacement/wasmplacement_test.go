package wasmplacement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/policy"
)

// poolFilter is a native filter policy: a node labelled pool=P accepts only
// pods labelled pool=P (Unresolvable otherwise); it records what it was
// asked.
type poolFilter struct {
	mu    sync.Mutex
	calls [][]string // node names per Filter call
	ids   map[string]uint32
	pre   func(abi.PodView) bool
	err   error
}

func (f *poolFilter) Options() abi.PlacementOptions { return abi.PlacementOptions{} }
func (f *poolFilter) PreFilter(p abi.PodView) (bool, error) {
	if f.pre != nil {
		return f.pre(p), nil
	}
	return true, nil
}

func (f *poolFilter) Filter(p abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Rec.Name())
		if !n.Inline {
			if f.ids == nil {
				f.ids = map[string]uint32{}
			}
			if id, ok := f.ids[n.Rec.Name()]; ok && id != n.ID {
				return fmt.Errorf("node %s changed id %d -> %d", n.Rec.Name(), id, n.ID)
			}
			f.ids[n.Rec.Name()] = n.ID
		}
	}
	f.calls = append(f.calls, names)
	if f.err != nil {
		return f.err
	}
	want, _ := p.Labels().Get("pool")
	for i, n := range nodes {
		pool, ok := n.Rec.Labels().Get("pool")
		switch {
		case ok && pool != want:
			out[i] = policy.FilterVerdict{Code: abi.FilterUnresolvable, Reason: "node(s) are reserved for pool " + pool}
		case !ok && want != "":
			out[i] = policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: "node(s) are not in pool " + want}
		default:
			out[i] = policy.FilterVerdict{}
		}
	}
	return nil
}

// labelScore scores a node by its label "score" (a raw number).
type labelScore struct {
	normalized bool
	err        error
}

func (s labelScore) Options() abi.PlacementOptions {
	return abi.PlacementOptions{ScoreNormalized: s.normalized}
}
func (s labelScore) PreScore(abi.PodView) (bool, error) { return true, s.err }
func (s labelScore) Score(_ abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	for i, n := range nodes {
		v, _ := n.Rec.Labels().Get("score")
		fmt.Sscan(v, &out[i])
	}
	return nil
}

// noCPU is a native filter that rejects nodes labelled full=true: it runs
// before WasmFilter in the profile, and the Wasm filter must never see what
// it rejected.
type noCPU struct{}

func (noCPU) Name() string { return "NoCPU" }
func (noCPU) PreFilter(*cache.PodInfo, *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	return noCPU{}, nil, nil
}

var full = &framework.Status{Code: framework.Unschedulable, Plugin: "NoCPU", Reasons: []string{"node(s) are full"}}

func (noCPU) Filter(ni *cache.NodeInfo) *framework.Status {
	if ni.Node().Labels["full"] == "true" {
		return full
	}
	return nil
}

func profileWith(t *testing.T, pl *policy.Placement) *framework.Profile {
	t.Helper()
	h := framework.NewHandle(framework.HandleOptions{}).WithPlacement(pl)
	// WasmFilter first in the list: it still runs after the native filter.
	return ft.MustProfile(framework.Entry{Plugin: newFilter(h)}, framework.Entry{Plugin: noCPU{}},
		framework.Entry{Plugin: newScore(h), Weight: 1})
}

func snapshotOf(nodes ...*ft.NodeBuilder) (*cache.Snapshot, []*cache.NodeInfo) {
	c := cache.New()
	for _, n := range nodes {
		c.AddNode(n.N)
	}
	snap := cache.NewSnapshot()
	c.UpdateSnapshot(snap)
	return snap, snap.List()
}

func find(t *testing.T, prof *framework.Profile, pod *cache.PodInfo, snap *cache.Snapshot, want, workers int) ([]string, *framework.Diagnosis) {
	t.Helper()
	ps, st := prof.Prepare(pod, snap)
	if st != nil {
		t.Fatalf("Prepare: %v", st)
	}
	var diag framework.Diagnosis
	feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, want, workers, &diag)
	if diag.Err() != nil {
		t.Fatalf("FindFeasible: %v", diag.Err())
	}
	return ft.Names(feasible), &diag
}

// TestEmptySlotsDoNothing: with no module, the plugins skip every pod.
func TestEmptySlotsDoNothing(t *testing.T) {
	prof := profileWith(t, &policy.Placement{})
	snap, _ := snapshotOf(ft.MakeNode("a").Label("pool", "gpu"), ft.MakeNode("b"))
	ps, st := prof.Prepare(ft.MakePod().Info(), snap)
	if st != nil {
		t.Fatal(st)
	}
	if got := len(ps.Filters()); got != 1 {
		t.Errorf("%d filters for the pod, want only NoCPU's", got)
	}
	got, _ := find(t, prof, ft.MakePod().Info(), snap, 0, 1)
	if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
		t.Errorf("feasible (-want +got):\n%s", diff)
	}
}

// TestFilterAfterNatives: the Wasm filter judges only the nodes the native
// filters accepted, in one call when it rejects none, and its rejections
// read as any plugin's in the pod's message.
func TestFilterAfterNatives(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			f := &poolFilter{}
			pl := &policy.Placement{}
			pl.SetFilter(f)
			prof := profileWith(t, pl)
			snap, _ := snapshotOf(
				ft.MakeNode("a").Label("pool", "gpu"), ft.MakeNode("b").Label("pool", "gpu"),
				ft.MakeNode("c").Label("full", "true"), ft.MakeNode("d"), ft.MakeNode("e").Label("pool", "gpu"))
			got, diag := find(t, prof, ft.MakePod().Info(), snap, 0, workers)
			if diff := cmp.Diff([]string{"d"}, got); diff != "" {
				t.Errorf("feasible (-want +got):\n%s", diff)
			}
			if len(f.calls) != 1 || slices.Contains(f.calls[0], "c") {
				t.Errorf("filter calls %v: want one, without the node NoCPU rejected", f.calls)
			}
			msg := diag.Message(5)
			for _, want := range []string{"3 node(s) are reserved for pool gpu (wasmsched.io/WasmFilter)", "1 node(s) are full"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if st := diag.NodeStatus("a"); st == nil || st.Code != framework.UnschedulableAndUnresolvable {
				t.Errorf("node a: %v, want UnschedulableAndUnresolvable", st)
			}
		})
	}
}

// TestFilterRounds: when the filter rejects the nodes first found, the
// search asks for more until it has as many as wanted or looked at every
// node, and returns the first ones accepted.
func TestFilterRounds(t *testing.T) {
	var nodes []*ft.NodeBuilder
	for i := range 40 {
		n := ft.MakeNode(fmt.Sprintf("n%02d", i))
		if i%10 != 9 {
			n.Label("pool", "gpu")
		}
		nodes = append(nodes, n)
	}
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			f := &poolFilter{}
			pl := &policy.Placement{}
			pl.SetFilter(f)
			prof := profileWith(t, pl)
			snap, _ := snapshotOf(nodes...)
			got, _ := find(t, prof, ft.MakePod().Info(), snap, 3, workers)
			if len(got) != 3 {
				t.Fatalf("feasible %v, want 3 of n09 n19 n29 n39", got)
			}
			for _, n := range got {
				if !strings.HasSuffix(n, "9") {
					t.Errorf("feasible %v: %s is in the pool", got, n)
				}
			}
			seen := map[string]int{}
			for _, c := range f.calls {
				for _, n := range c {
					seen[n]++
				}
			}
			for n, k := range seen {
				if k > 1 {
					t.Errorf("node %s judged %d times", n, k)
				}
			}
			if len(f.calls) > 6 {
				t.Errorf("%d filter calls for 40 nodes: want a few rounds", len(f.calls))
			}
			// With no node acceptable, every node is judged once.
			f.calls = nil
			got, diag := find(t, prof, ft.MakePod().Labels("pool", "cpu").Info(), snap, 3, workers)
			if len(got) != 0 || diag.Len() != 40 {
				t.Errorf("pool cpu: feasible %v, %d nodes rejected; want none, 40", got, diag.Len())
			}
		})
	}
}

// TestFilterFailurePolicy: a filter that fails rejects every node it was
// asked about (Fail, the default) with a message naming the failure, but
// not as the filter's rejection (the pod retries after backoff), or is
// skipped (Ignore); a slot emptied while the call was on its way is skipped.
func TestFilterFailurePolicy(t *testing.T) {
	snap, _ := snapshotOf(ft.MakeNode("a"), ft.MakeNode("b"))
	f := &poolFilter{err: errors.New("module \"m\": wasmsched_filter: trap: unreachable")}
	pl := &policy.Placement{}
	pl.SetFilter(f)
	prof := profileWith(t, pl)
	got, diag := find(t, prof, ft.MakePod().Info(), snap, 0, 1)
	if len(got) != 0 {
		t.Fatalf("feasible %v with a failing filter and failurePolicy Fail", got)
	}
	if st := diag.NodeStatus("a"); st == nil || st.Code != framework.Unschedulable || !strings.Contains(st.Message(), "trap: unreachable") {
		t.Errorf("node a: %v; want Unschedulable naming the failure", st)
	}
	if slices.Contains(diag.UnschedulablePlugins(), FilterName) {
		t.Errorf("unschedulable plugins %v name %s: a failure is no rejection, the pod must back off and retry, not wait for the filter's events",
			diag.UnschedulablePlugins(), FilterName)
	}

	pl.SetFailurePolicy(abi.SlotFilter, policy.Ignore)
	if got, _ := find(t, prof, ft.MakePod().Info(), snap, 0, 1); len(got) != 2 {
		t.Errorf("Ignore: feasible %v, want both", got)
	}
	pl.SetFailurePolicy(abi.SlotFilter, policy.Fail)
	f.err = fmt.Errorf("late: %w", policy.ErrNoModule)
	if got, _ := find(t, prof, ft.MakePod().Info(), snap, 0, 1); len(got) != 2 {
		t.Errorf("slot emptied: feasible %v, want both", got)
	}
}

// TestFilterPreStep: a pod the pre-step skips is not filtered at all.
func TestFilterPreStep(t *testing.T) {
	f := &poolFilter{pre: func(p abi.PodView) bool { _, ok := p.Labels().Get("pool"); return ok }}
	pl := &policy.Placement{}
	pl.SetFilter(f)
	prof := profileWith(t, pl)
	snap, _ := snapshotOf(ft.MakeNode("a").Label("pool", "gpu"))
	if got, _ := find(t, prof, ft.MakePod().Info(), snap, 0, 1); len(got) != 1 || len(f.calls) != 0 {
		t.Errorf("feasible %v after %d calls: want a, no call", got, len(f.calls))
	}
}

// TestFilterDryRunNode: a node that is not the snapshot's (preemption's
// copy without its victims) goes inline, and its verdict is the filter's.
func TestFilterDryRunNode(t *testing.T) {
	f := &poolFilter{}
	pl := &policy.Placement{}
	pl.SetFilter(f)
	prof := profileWith(t, pl)
	snap, nodes := snapshotOf(ft.MakeNode("a").Label("pool", "gpu"), ft.MakeNode("b"))
	ps, st := prof.Prepare(ft.MakePod().Info(), snap)
	if st != nil {
		t.Fatal(st)
	}
	if st := framework.Filter(ps, nodes[0].Clone()); st == nil || st.Code != framework.UnschedulableAndUnresolvable {
		t.Errorf("copy of a: %v, want the filter's rejection", st)
	}
	if st := framework.Filter(ps, nodes[1].Clone()); st != nil {
		t.Errorf("copy of b: %v, want accepted", st)
	}
	if len(f.ids) != 0 {
		t.Errorf("ids %v given to copies of nodes", f.ids)
	}
}

// TestNodeRecords: a node keeps its id; its record is rebuilt when its
// generation moves, with what the cache has on it.
func TestNodeRecords(t *testing.T) {
	c := cache.New()
	node := ft.MakeNode("a", "cpu", "4", "nvidia.com/gpu", "8").Label("zone", "z1").N
	node.Status.Images = []v1.ContainerImage{{Names: []string{"img:1", "img@sha256:x"}, SizeBytes: 100}}
	c.AddNode(node)
	snap := cache.NewSnapshot()
	c.UpdateSnapshot(snap)
	recs := newNodeRecords()
	n1 := recs.fill(snap.List(), snap, nil)
	if len(n1) != 1 || n1[0].Rec.Name() != "a" || n1[0].Inline {
		t.Fatalf("fill: %+v", n1)
	}
	if v, _ := n1[0].Rec.Labels().Get("zone"); v != "z1" || !n1[0].Rec.Images().Has("img@sha256:x") ||
		n1[0].Rec.Allocatable().Get("nvidia.com/gpu") != 8 {
		t.Errorf("record lacks labels, images or allocatable")
	}
	pod := ft.MakePod().Node("a").Req("nvidia.com/gpu", "2").P
	pod.UID = "u1"
	if err := c.AddPod(pod); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	n2 := recs.fill(snap.List(), snap, nil)
	if n2[0].ID != n1[0].ID || n2[0].Gen == n1[0].Gen {
		t.Errorf("after a pod: id %d gen %d, before id %d gen %d: want the id kept, the generation moved", n2[0].ID, n2[0].Gen, n1[0].ID, n1[0].Gen)
	}
	if got := n2[0].Rec.Requested().Get("nvidia.com/gpu"); got != 2 {
		t.Errorf("requested gpu %d, want 2", got)
	}
	if got := n2[0].Rec.Requested().Get("pods"); got != 1 {
		t.Errorf("requested pods %d, want 1", got)
	}
}

// TestPodRecordNamespaceLabels: the pod record carries its namespace's
// labels and its owner's kind.
func TestPodRecordNamespaceLabels(t *testing.T) {
	client := fake.NewClientset(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"wasmsched.io/pool": "gpu"}}})
	inf := informers.NewSharedInformerFactory(client, 0)
	ns := inf.Core().V1().Namespaces()
	ns.Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	b := newBase(framework.NewHandle(framework.HandleOptions{Listers: framework.Listers{Namespaces: ns.Lister()}}))
	pod := ft.MakePod().Namespace("team-a").P
	yes := true
	pod.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "j", Controller: &yes}}
	rec := b.podRecord(cache.NewPodInfo(pod))
	if v, ok := rec.NamespaceLabels().Get("wasmsched.io/pool"); !ok || v != "gpu" {
		t.Errorf("namespace label %q %v, want gpu", v, ok)
	}
	if rec.OwnerKind() != "Job" {
		t.Errorf("owner kind %q, want Job", rec.OwnerKind())
	}
}

// TestScore: raw scores are scaled from the lowest (0) to the highest
// (100); declared-normalised ones are kept and must be in range; a failing
// score is skipped (Ignore) or fails the attempt (Fail).
func TestScore(t *testing.T) {
	snap, nodes := snapshotOf(ft.MakeNode("a").Label("score", "-10"), ft.MakeNode("b").Label("score", "30"), ft.MakeNode("c").Label("score", "10"))
	pl := &policy.Placement{}
	h := framework.NewHandle(framework.HandleOptions{}).WithPlacement(pl)
	sp := newScore(h)
	score := func() ([]int64, *framework.Status) {
		sc, st := sp.PreScore(ft.MakePod().Info(), nodes, snap)
		if st != nil || sc == nil {
			return nil, st
		}
		out := make([]int64, len(nodes))
		sc.Score(nodes, out)
		return out, nil
	}
	if got, st := score(); got != nil || st != nil {
		t.Errorf("empty slot: %v %v, want skipped", got, st)
	}
	pl.SetScore(labelScore{})
	if got, _ := score(); !slices.Equal(got, []int64{0, 100, 50}) {
		t.Errorf("raw: %v, want [0 100 50]", got)
	}
	pl.SetScore(labelScore{normalized: true})
	if _, st := score(); st != nil {
		// -10 is outside [0,100]: an error, skipped under Ignore.
		t.Errorf("normalised out of range under Ignore: %v, want skipped", st)
	}
	pl.SetFailurePolicy(abi.SlotScore, policy.Fail)
	if _, st := score(); st == nil || st.Code != framework.Error || !strings.Contains(st.Message(), "outside [0, 100]") {
		t.Errorf("normalised out of range under Fail: %v", st)
	}
	pl.SetScore(labelScore{err: errors.New("boom")})
	if _, st := score(); st == nil || !strings.Contains(st.Message(), "boom") {
		t.Errorf("failing pre-step under Fail: %v", st)
	}
}
