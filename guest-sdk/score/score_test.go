package score

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.ExportScore, abi.ExportPreScore)
	for _, name := range abi.SlotScore.RequiredExports() {
		if name != abi.ExportScore && name != abi.ExportNodes {
			t.Errorf("the score slot requires %s, which neither package score nor package nodes exports", name)
		}
	}
}

// byLabel scores a node by its label "score".
func byLabel(_ abi.PodView, n abi.NodeView) int64 {
	v, _ := n.Labels().Get("score")
	s, _ := strconv.ParseInt(v, 10, 64)
	return s
}

func scored(name string, score int64) *abi.Node {
	return &abi.Node{Name: name, Labels: []abi.KV{{Key: "score", Value: strconv.FormatInt(score, 10)}}}
}

func podView(t testing.TB, p *abi.Pod) abi.PodView {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, p))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNew(t *testing.T) {
	pre := func(p abi.PodView) bool { return p.Name() == "mine" }
	p := New(byLabel, Pre(pre), Normalized())
	if !p.Concerns(podView(t, &abi.Pod{Name: "mine"})) || p.Concerns(podView(t, &abi.Pod{Name: "other"})) {
		t.Error("the pre-step is not the one set")
	}
	if !p.Normalized() {
		t.Error("Normalized() = false")
	}
	bare := New(byLabel)
	if !bare.Concerns(podView(t, &abi.Pod{})) || bare.Normalized() {
		t.Error("without options: Concerns false or Normalized true")
	}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"nil func", func() { New(nil) }},
		{"nil pre", func() { Pre(nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "nil") {
					t.Errorf("panic %v, want one about nil", r)
				}
			}()
			c.f()
		})
	}
}

func TestRegister(t *testing.T) {
	defer func() { registered = nil; nodes.SetScoreNormalized(false) }()
	Register(byLabel, Normalized())
	if registered == nil || !nodes.Options().ScoreNormalized {
		t.Error("Register did not set the policy, or the module's normalised flag")
	}
}

func answerOf(t *testing.T, p *Policy, s *nodes.Store, in []byte) []int64 {
	t.Helper()
	out, err := answer(p, s, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := abi.ReadPlacement(in)
	got := make([]int64, pl.Len())
	if err := abi.DecodeScores(out, got); err != nil {
		t.Fatalf("the host would refuse the scores: %v", err)
	}
	return got
}

func store(t testing.TB, ns ...*abi.Node) *nodes.Store {
	t.Helper()
	var s nodes.Store
	for i, n := range ns {
		if err := s.Put(uint32(i), abi.AppendNode(nil, n)); err != nil {
			t.Fatal(err)
		}
	}
	return &s
}

func placement(ids []uint32, inline ...*abi.Node) []byte {
	var recs [][]byte
	for _, n := range inline {
		recs = append(recs, abi.AppendNode(nil, n))
	}
	return abi.AppendPlacement(nil, abi.AppendPod(nil, &abi.Pod{Name: "p"}), ids, recs)
}

func TestAnswer(t *testing.T) {
	s := store(t, scored("a", 7), scored("b", -3), scored("c", 250), scored("d", 1<<40))
	in := placement([]uint32{0, 1, 2, 3, 0}, scored("dry", 50))
	if diff := cmp.Diff([]int64{7, -3, 250, 1 << 40, 7, 50}, answerOf(t, New(byLabel), s, in)); diff != "" {
		t.Errorf("raw scores (-want, +got):\n%s", diff)
	}
	// Normalised scores are clamped to what the host accepts.
	if diff := cmp.Diff([]int64{7, 0, 100, 100, 7, 50}, answerOf(t, New(byLabel, Normalized()), s, in)); diff != "" {
		t.Errorf("normalised scores (-want, +got):\n%s", diff)
	}
	if got := answerOf(t, New(byLabel), s, placement(nil)); len(got) != 0 {
		t.Errorf("no nodes: %v", got)
	}
	if _, err := answer(New(byLabel), s, placement([]uint32{8}), nil); err == nil || !strings.Contains(err.Error(), "node id 8 is not held") {
		t.Errorf("unknown id: error %v, want one saying id 8 is not held", err)
	}
	if _, err := answer(New(byLabel), s, abi.AppendPod(nil, &abi.Pod{}), nil); err == nil {
		t.Error("a pod record for a placement: no error")
	}
}

func TestAnswerDoesNotAllocate(t *testing.T) {
	var ns []*abi.Node
	var ids []uint32
	for i := range 200 {
		ns = append(ns, scored("n", int64(i)))
		ids = append(ids, uint32(i))
	}
	s := store(t, ns...)
	in := placement(ids, scored("dry", 1))
	p := New(func(_ abi.PodView, n abi.NodeView) int64 { return int64(n.Labels().Len()) }, Normalized())
	out, err := answer(p, s, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if out, err = answer(p, s, in, out[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a call over %d nodes allocates %v times, want 0", len(ids)+1, allocs)
	}
}
