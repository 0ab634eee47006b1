package filter

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.ExportFilter, abi.ExportPreFilter)
	// With package nodes', the exports the slot requires.
	for _, name := range abi.SlotFilter.RequiredExports() {
		if name != abi.ExportFilter && name != abi.ExportNodes {
			t.Errorf("the filter slot requires %s, which neither package filter nor package nodes exports", name)
		}
	}
}

func podView(t testing.TB, p *abi.Pod) abi.PodView {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, p))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func nodeView(t testing.TB, n *abi.Node) abi.NodeView {
	t.Helper()
	v, err := abi.ReadNode(abi.AppendNode(nil, n))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// byLabel judges a node by its label "verdict" (pass, reject or never),
// giving its label "reason" as the reason.
func byLabel(_ abi.PodView, n abi.NodeView) Verdict {
	reason, _ := n.Labels().Get("reason")
	switch v, _ := n.Labels().Get("verdict"); v {
	case "reject":
		return Reject(reason)
	case "never":
		return Never(reason)
	}
	return Pass()
}

func labelled(name, verdict, reason string) *abi.Node {
	n := &abi.Node{Name: name, Labels: []abi.KV{{Key: "verdict", Value: verdict}}}
	if reason != "" {
		n.Labels = append(n.Labels, abi.KV{Key: "reason", Value: reason})
	}
	return n
}

func TestJudge(t *testing.T) {
	long := strings.Repeat("x", abi.MaxReasonLen-1) + "ü"
	p := New(byLabel)
	pod := podView(t, &abi.Pod{Name: "p"})
	cases := []struct {
		name string
		node *abi.Node
		want Verdict
	}{
		{"pass", labelled("n", "pass", "ignored"), Pass()},
		{"reject", labelled("n", "reject", "node(s) are busy"), Verdict{abi.FilterUnschedulable, "node(s) are busy"}},
		{"never", labelled("n", "never", "node(s) are far"), Verdict{abi.FilterUnresolvable, "node(s) are far"}},
		{"an empty reason gets the default", labelled("n", "never", ""), Verdict{abi.FilterUnresolvable, DefaultReason}},
		{"a long reason is cut on a rune boundary", labelled("n", "reject", long), Verdict{abi.FilterUnschedulable, long[:abi.MaxReasonLen-1]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := p.Judge(pod, nodeView(t, c.node))
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(Verdict{})); diff != "" {
				t.Errorf("Judge (-want, +got):\n%s", diff)
			}
		})
	}
	t.Run("invalid UTF-8 is replaced", func(t *testing.T) {
		got := New(func(abi.PodView, abi.NodeView) Verdict { return Reject("bad \xff byte") }).Judge(pod, nodeView(t, &abi.Node{}))
		if got.Reason() != "bad \uFFFD byte" || !utf8.ValidString(got.Reason()) {
			t.Errorf("reason %q, want %q", got.Reason(), "bad \uFFFD byte")
		}
	})
}

func TestNew(t *testing.T) {
	pre := func(p abi.PodView) bool { return p.Name() == "mine" }
	p := New(byLabel, Pre(pre), Events(abi.FilterEvent{Resource: abi.ResourceNode, Actions: abi.ActionAdd}),
		Events(abi.FilterEvent{Resource: abi.ResourcePod, Actions: abi.ActionDelete}))
	if !p.Concerns(podView(t, &abi.Pod{Name: "mine"})) || p.Concerns(podView(t, &abi.Pod{Name: "other"})) {
		t.Error("the pre-step is not the one set")
	}
	want := []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}, {Resource: abi.ResourcePod, Actions: abi.ActionDelete}}
	if diff := cmp.Diff(want, p.Events()); diff != "" {
		t.Errorf("Events (-want, +got):\n%s", diff)
	}
	p.Events()[0].Resource = abi.ResourceWildcard
	if p.Events()[0].Resource != abi.ResourceNode {
		t.Error("Events returned the policy's own slice")
	}
	bare := New(byLabel)
	if !bare.Concerns(podView(t, &abi.Pod{})) || bare.Events() != nil {
		t.Errorf("without options: Concerns false or events %v; want true, nil", bare.Events())
	}

	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"nil func", "nil Func", func() { New(nil) }},
		{"nil pre", "nil func", func() { Pre(nil) }},
		{"no actions", "invalid actions", func() { New(byLabel, Events(abi.FilterEvent{Resource: abi.ResourceNode})) }},
		{"unknown resource", "unknown resource", func() { New(byLabel, Events(abi.FilterEvent{Resource: 200, Actions: abi.ActionAdd})) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("panic %v, want one containing %q", r, c.want)
				}
			}()
			c.f()
		})
	}
}

func TestRegister(t *testing.T) {
	defer func() { registered = nil; nodes.SetFilterEvents(nil) }()
	ev := abi.FilterEvent{Resource: abi.ResourceNode, Actions: abi.ActionUpdateNodeLabel}
	Register(byLabel, Events(ev))
	if registered == nil {
		t.Fatal("nothing registered")
	}
	if diff := cmp.Diff([]abi.FilterEvent{ev}, nodes.Options().FilterEvents); diff != "" {
		t.Errorf("the module's placement options (-want, +got):\n%s", diff)
	}
}

// placement encodes a placement of pod on the nodes held under ids and on
// the inline nodes.
func placement(pod *abi.Pod, ids []uint32, inline ...*abi.Node) []byte {
	var recs [][]byte
	for _, n := range inline {
		recs = append(recs, abi.AppendNode(nil, n))
	}
	return abi.AppendPlacement(nil, abi.AppendPod(nil, pod), ids, recs)
}

// store holds nodes under ids 0..len(nodes)-1.
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

type verdict struct {
	Code   abi.FilterCode
	Reason string
}

// decode reads the verdicts record out as the host does.
func decode(t *testing.T, out []byte, n int) []verdict {
	t.Helper()
	v, err := abi.ReadVerdicts(out, n)
	if err != nil {
		t.Fatalf("the host would refuse the verdicts: %v", err)
	}
	got := make([]verdict, n)
	for i := range got {
		if got[i].Code = v.Code(i); got[i].Code != abi.FilterPass {
			got[i].Reason = v.Reason(v.ReasonIndex(i))
		}
	}
	return got
}

func TestAnswer(t *testing.T) {
	s := store(t,
		labelled("a", "reject", "node(s) are busy"),
		labelled("b", "pass", ""),
		labelled("c", "never", "node(s) are far"),
		labelled("d", "reject", "node(s) are busy"),
		labelled("e", "never", ""),
	)
	var c call
	in := placement(&abi.Pod{Name: "p"}, []uint32{0, 1, 2, 3, 4, 2}, labelled("dry", "reject", "node(s) are far"))
	out, _, err := c.answer(New(byLabel), s, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []verdict{
		{abi.FilterUnschedulable, "node(s) are busy"}, {}, {abi.FilterUnresolvable, "node(s) are far"},
		{abi.FilterUnschedulable, "node(s) are busy"}, {abi.FilterUnresolvable, DefaultReason},
		{abi.FilterUnresolvable, "node(s) are far"}, {abi.FilterUnschedulable, "node(s) are far"},
	}
	if diff := cmp.Diff(want, decode(t, out, len(want))); diff != "" {
		t.Errorf("verdicts (-want, +got):\n%s", diff)
	}
	v, _ := abi.ReadVerdicts(out, len(want))
	if v.NumReasons() != 3 {
		t.Errorf("%d reasons in the record, want the 3 distinct ones", v.NumReasons())
	}

	// The scratch space of the previous call does not leak into this one.
	out, _, err = c.answer(New(byLabel), s, placement(&abi.Pod{Name: "p"}, []uint32{1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := abi.ReadVerdicts(out, 1); v.NumReasons() != 0 || v.Code(0) != abi.FilterPass {
		t.Errorf("a pass alone: code %s, %d reasons; want Pass, 0", v.Code(0), v.NumReasons())
	}

	// No nodes.
	out, _, err = c.answer(New(byLabel), s, placement(&abi.Pod{Name: "p"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	decode(t, out, 0)
}

func TestAnswerErrors(t *testing.T) {
	s := store(t, labelled("a", "pass", ""))
	for _, c := range []struct {
		name, want string
		in         []byte
	}{
		{"not a placement", "tag", abi.AppendPod(nil, &abi.Pod{})},
		{"no pod", "pod", abi.AppendPlacement(nil, nil, []uint32{0}, nil)},
		{"an id the module does not hold", "node id 9 is not held", placement(&abi.Pod{}, []uint32{0, 9})},
	} {
		t.Run(c.name, func(t *testing.T) {
			var call call
			_, code, err := call.answer(New(byLabel), s, c.in, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || code != abi.ErrDecode {
				t.Errorf("error %v (code %s), want one containing %q (code %s)", err, code, c.want, abi.ErrDecode)
			}
		})
	}
}

// TestAnswerDoesNotAllocate: once the scratch space and the output have
// grown to the batch, a call allocates nothing (the module's memory is
// never freed).
func TestAnswerDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var ns []*abi.Node
	var ids []uint32
	for i := range 200 {
		verdict := [...]string{"pass", "reject", "never"}[i%3]
		ns = append(ns, labelled("n"+strconv.Itoa(i), verdict, "node(s) are "+verdict+"ed"))
		ids = append(ids, uint32(i))
	}
	s := store(t, ns...)
	in := placement(&abi.Pod{Name: "p"}, ids, labelled("dry", "reject", "node(s) are dry"))
	p := New(byLabel)
	var c call
	out, _, err := c.answer(p, s, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if out, _, err = c.answer(p, s, in, out[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("a call over %d nodes allocates %v times, want 0", len(ids)+1, allocs)
	}
}

func TestReasons(t *testing.T) {
	r := NewReasons("node(s) are not in pool ")
	a := r.For("gpu")
	if a != "node(s) are not in pool gpu" {
		t.Errorf("For(gpu) = %q", a)
	}
	if b := r.For("gpu"); b != a {
		t.Errorf("For(gpu) again = %q", b)
	}
	if allocs := testing.AllocsPerRun(100, func() { r.For("gpu"); r.For("batch") }); allocs != 0 {
		t.Errorf("For of values seen before allocates %v times, want 0", allocs)
	}
	// Beyond MaxCachedReasons values the oldest are rebuilt; every answer
	// stays right.
	for i := range 3 * MaxCachedReasons {
		v := strconv.Itoa(i % (MaxCachedReasons + 7))
		if got := r.For(v); got != "node(s) are not in pool "+v {
			t.Fatalf("For(%s) = %q", v, got)
		}
	}
	if len(r.built) != MaxCachedReasons {
		t.Errorf("%d reasons kept, want at most %d", len(r.built), MaxCachedReasons)
	}
	// Values that are suffixes of one another are told apart.
	r = NewReasons("pool ")
	if r.For("a") != "pool a" || r.For("ba") != "pool ba" || r.For("a") != "pool a" {
		t.Error("For mixes up the values a and ba")
	}
	var zero Reasons
	if zero.For("x") != "x" || zero.For("") != "" {
		t.Error("the zero Reasons does not return the values as they are")
	}
}

// TestReasonsConcurrent: a native policy may judge nodes from several
// goroutines (run with -race).
func TestReasonsConcurrent(t *testing.T) {
	r := NewReasons("pool ")
	done := make(chan bool)
	for g := range 8 {
		go func() {
			ok := true
			for i := range 500 {
				v := strconv.Itoa((g + i) % (MaxCachedReasons + 3))
				ok = ok && r.For(v) == "pool "+v
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Error("For answered a wrong reason")
		}
	}
}

// TestReasonLimit: a verdicts record holds at most abi.MaxReasons reasons.
func TestReasonLimit(t *testing.T) {
	c := call{reasons: make([]string, abi.MaxReasons-1)}
	for i := range c.reasons {
		c.reasons[i] = "r" + strconv.Itoa(i)
	}
	if j, ok := c.reason("last"); !ok || j != abi.MaxReasons-1 {
		t.Errorf("reason(last) = %d, %v; want %d, true", j, ok, abi.MaxReasons-1)
	}
	if j, ok := c.reason("r7"); !ok || j != 7 {
		t.Errorf("reason(r7) = %d, %v; want 7, true", j, ok)
	}
	if _, ok := c.reason("one too many"); ok {
		t.Error("a reason beyond abi.MaxReasons was added")
	}
}
