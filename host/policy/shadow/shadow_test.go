package shadow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	fifosort "github.com/wasmsched/wasmsched/guest-sdk/examples/fifosort/logic"
	holdlabel "github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/native"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/shadow"
	"github.com/wasmsched/wasmsched/host/queue"
)

// counts is a shadow.Recorder that keeps the metric's counts.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) ShadowDecision(slot abi.Slot, pol, result string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[slot.String()+"/"+pol+"/"+result] += n
}

func (c *counts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// start returns an Evaluator whose worker runs until the test ends.
func start(t *testing.T, opts ...shadow.Option) (*shadow.Evaluator, *counts) {
	t.Helper()
	rec := &counts{}
	ev := shadow.New(append([]shadow.Option{shadow.WithRecorder(rec)}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ev.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ev, rec
}

// settle waits until the worker has evaluated what was offered before it
// (the worker runs offers in order, so a marker offered last tells).
func settle(t *testing.T, ev *shadow.Evaluator, slot abi.Slot, decisions int64) shadow.Stats {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a bound on a hang, not a timing assertion
	for {
		st, ok := ev.Stats(slot)
		if !ok {
			t.Fatalf("%s has no shadow", slot)
		}
		if st.Decisions >= decisions {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d decisions evaluated, want %d", slot, st.Decisions, decisions)
		}
		time.Sleep(time.Millisecond)
	}
}

func pod(name string, prio int32, created int64, plugins ...string) abi.PodView {
	v, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{UID: "uid-" + name, Namespace: "ns", Name: name, Priority: prio,
		CreationTime: created, UnschedulablePlugins: plugins}))
	if err != nil {
		panic(err)
	}
	return v
}

// TestSortShadow: a FIFO shadow of the priority sort disagrees with a pop
// of a young high-priority pod ahead of older ones, once per pop, counting
// the inverted pairs, and agrees with a pop of the oldest.
func TestSortShadow(t *testing.T) {
	ev, rec := start(t)
	ev.Configure(abi.SlotQueueSort, "fifo", 1)
	ev.Installer().Sort(native.Sort(fifosort.Policy))
	if n := ev.Ahead(queue.QueueActive); n == 0 {
		t.Fatal("Ahead(active) = 0 with a queueSort shadow sampling every pop")
	}
	if n := ev.Ahead(queue.QueueBackoff); n != 0 {
		t.Errorf("Ahead(backoff) = %d without a backoffSort shadow, want 0", n)
	}
	young := pod("young-high", 100, 30)
	old1, old2, younger := pod("old-1", 0, 10), pod("old-2", 0, 20), pod("younger", 0, 40)
	ev.Popped(queue.QueueActive, young, []abi.PodView{old1, younger, old2})
	ev.Popped(queue.QueueActive, old1, []abi.PodView{old2, younger})
	st := settle(t, ev, abi.SlotQueueSort, 2)
	if st.Disagreements != 1 || st.Kinds[shadow.KindOrderInversions] != 2 {
		t.Errorf("disagreements %d, inversions %d; want 1 and 2", st.Disagreements, st.Kinds[shadow.KindOrderInversions])
	}
	if len(st.Samples) != 1 {
		t.Fatalf("samples %+v, want one", st.Samples)
	}
	s := st.Samples[0]
	if s.Pod != "ns/young-high" || s.Event != "Pop" || s.Kind != shadow.KindOrderInversions ||
		!strings.Contains(s.Shadow, "would pop ns/old-1 first (2 of 3 sampled") || s.Time.IsZero() {
		t.Errorf("sample %+v", s)
	}
	if rec.get("queueSort/fifo/agree") != 1 || rec.get("queueSort/fifo/disagree") != 1 {
		t.Errorf("metric counts %v", rec.n)
	}
}

// TestSampleRate: a rate of 0 evaluates nothing; the backoff heap's pops go
// to the backoffSort shadow.
func TestSampleRate(t *testing.T) {
	ev, _ := start(t)
	ev.Configure(abi.SlotQueueSort, "fifo", 0)
	ev.Installer().Sort(native.Sort(fifosort.Policy))
	if n := ev.Ahead(queue.QueueActive); n != 0 {
		t.Errorf("Ahead = %d at sample rate 0", n)
	}
	ev.Configure(abi.SlotQueueSort, "fifo", 1) // the installed shadow takes the new rate
	if n := ev.Ahead(queue.QueueActive); n == 0 {
		t.Error("Ahead = 0 after the rate went to 1")
	}
}

type skipAll struct{ regs []abi.Registration }

func (s skipAll) Registrations() []abi.Registration { return s.regs }
func (skipAll) Hints(_ abi.EventView, _ []abi.PodView, out []abi.Hint) {
	for i := range out {
		out[i] = abi.HintSkip
	}
}

var everything = []abi.Registration{{Plugin: abi.PluginWildcard, Resource: abi.ResourceWildcard, Actions: abi.ActionAll}}

func nodeAdd(t *testing.T) abi.EventView {
	t.Helper()
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// teeHint returns the hint the queue would call: active, teed to ev.
func teeHint(ev *shadow.Evaluator, active policy.QueueingHint) policy.QueueingHint {
	var got policy.QueueingHint
	ev.Tee(policy.Installer{QueueingHint: func(p policy.QueueingHint) { got = p }}).QueueingHint(active)
	return got
}

// TestHintShadowWouldHaveDelayed: a shadow that skips what the serving hint
// queued disagrees; the pod whose attempt then scheduled it is one the
// shadow would have delayed, the one that failed again is not, nor is one
// the shadow queued on a later event before its attempt. A shadow Queue
// where the serving hint skipped is an extra attempt.
func TestHintShadowWouldHaveDelayed(t *testing.T) {
	ev, _ := start(t)
	ev.Configure(abi.SlotQueueingHint, "skipper", 1)
	ev.Installer().QueueingHint(skipAll{everything})
	h := teeHint(ev, policy.AlwaysQueue{})
	a, b, c := pod("a", 0, 1, "NodeResourcesFit"), pod("b", 0, 2, "NodeResourcesFit"), pod("c", 0, 3, "NodeResourcesFit")
	out := make([]abi.Hint, 3)
	h.Hints(nodeAdd(t), []abi.PodView{a, b, c}, out)
	for i, o := range out {
		if o != abi.HintQueue {
			t.Errorf("the tee answered %v for pod %d, want the serving policy's Queue", o, i)
		}
	}
	ev.Attempting(types.UID(a.UID()))
	ev.Scheduled(types.UID(a.UID()))
	ev.Attempting(types.UID(b.UID())) // fails: no Scheduled
	st := settle(t, ev, abi.SlotQueueingHint, 3)
	if st.Disagreements != 3 || st.Kinds[shadow.KindWouldSkip] != 3 {
		t.Errorf("disagreements %d, wouldSkip %d; want 3 and 3", st.Disagreements, st.Kinds[shadow.KindWouldSkip])
	}
	deadline := time.Now().Add(time.Minute)
	for st.Kinds[shadow.KindWouldHaveDelayed] == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		st, _ = ev.Stats(abi.SlotQueueingHint)
	}
	if st.Kinds[shadow.KindWouldHaveDelayed] != 1 {
		t.Errorf("wouldHaveDelayed %d, want 1 (pod a)", st.Kinds[shadow.KindWouldHaveDelayed])
	}
	last := st.Samples[len(st.Samples)-1]
	if last.Pod != "ns/a" || last.Kind != shadow.KindWouldHaveDelayed || last.Event != "NodeAdd" {
		t.Errorf("last sample %+v, want pod a's wouldHaveDelayed on NodeAdd", last)
	}

	// The other way round, and a shadow that does not register the event
	// for the pod's plugin: a Skip, whatever it would answer.
	ev2, _ := start(t)
	ev2.Configure(abi.SlotQueueingHint, "queuer", 1)
	ev2.Installer().QueueingHint(policy.AlwaysQueue{})
	h2 := teeHint(ev2, skipAll{everything})
	h2.Hints(nodeAdd(t), []abi.PodView{a}, make([]abi.Hint, 1))
	st2 := settle(t, ev2, abi.SlotQueueingHint, 1)
	if st2.Kinds[shadow.KindExtraAttempts] != 1 {
		t.Errorf("extraAttempts %d, want 1", st2.Kinds[shadow.KindExtraAttempts])
	}
	ev3, _ := start(t)
	ev3.Installer().QueueingHint(native.QueueingHint()) // registers nothing
	teeHint(ev3, policy.AlwaysQueue{}).Hints(nodeAdd(t), []abi.PodView{a}, make([]abi.Hint, 1))
	if st3 := settle(t, ev3, abi.SlotQueueingHint, 1); st3.Kinds[shadow.KindWouldSkip] != 1 {
		t.Errorf("a shadow registering nothing: kinds %v, want a wouldSkip", st3.Kinds)
	}
}

// TestPreEnqueueShadow: a holding shadow of an admitting policy disagrees
// (wouldHold) with its reason in the sample, and the tee answers the
// serving policy's gate.
func TestPreEnqueueShadow(t *testing.T) {
	ev, _ := start(t)
	ev.Configure(abi.SlotPreEnqueue, "holdlabel", 1)
	ev.Installer().PreEnqueue(native.PreEnqueue(holdlabel.PreEnqueue))
	var pe policy.PreEnqueue
	ev.Tee(policy.Installer{PreEnqueue: func(p policy.PreEnqueue) { pe = p }}).PreEnqueue(policy.Admit{})
	held, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{UID: "h", Namespace: "ns", Name: "held", Labels: []abi.KV{{Key: holdlabel.Label, Value: "x"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if g := pe.PreEnqueue(held); g.Code != abi.GateAdmit {
		t.Errorf("the tee answered %+v, want the serving policy's admit", g)
	}
	pe.PreEnqueue(pod("free", 0, 1))
	st := settle(t, ev, abi.SlotPreEnqueue, 2)
	if st.Disagreements != 1 || st.Kinds[shadow.KindWouldHold] != 1 {
		t.Errorf("stats %+v, want one wouldHold", st)
	}
	if s := st.Samples[0]; s.Pod != "ns/held" || s.Active != "admit" || !strings.Contains(s.Shadow, "hold: pod has label "+holdlabel.Label) {
		t.Errorf("sample %+v", s)
	}
}

type reverse struct{}

func (reverse) Order(_ abi.PodView, victims []abi.Victim, order []uint32) {
	policy.Importance{}.Order(abi.PodView{}, victims, order)
	slices.Reverse(order)
}

// TestVictimShadow: a shadow that reverses the order disagrees, and the
// least important victim (evicted first) differs.
func TestVictimShadow(t *testing.T) {
	ev, _ := start(t)
	ev.Installer().VictimOrder(reverse{})
	var vo policy.VictimOrder
	ev.Tee(policy.Installer{VictimOrder: func(p policy.VictimOrder) { vo = p }}).VictimOrder(policy.Importance{})
	victims := []abi.Victim{{Namespace: "ns", Name: "low", Priority: 1}, {Namespace: "ns", Name: "high", Priority: 10}}
	order := make([]uint32, 2)
	vo.Order(pod("preemptor", 100, 1), victims, order)
	if !slices.Equal(order, []uint32{1, 0}) {
		t.Errorf("the tee ordered %v, want the serving policy's [1 0]", order)
	}
	st := settle(t, ev, abi.SlotVictimOrder, 1)
	if st.Kinds[shadow.KindVictimOrderDiffers] != 1 || st.Kinds[shadow.KindVictimSetDiffers] != 1 {
		t.Errorf("kinds %v", st.Kinds)
	}
	if s := st.Samples[0]; s.Pod != "ns/preemptor" || s.Active != "most important first: ns/high ns/low" || s.Shadow != "most important first: ns/low ns/high" {
		t.Errorf("sample %+v", s)
	}
}

// rejectNode is a filter that rejects one node by name, or fails.
type rejectNode struct {
	name string
	err  error
}

func (rejectNode) Options() abi.PlacementOptions         { return abi.PlacementOptions{} }
func (r rejectNode) PreFilter(abi.PodView) (bool, error) { return true, nil }
func (r rejectNode) PreScore(abi.PodView) (bool, error)  { return true, nil }
func (r rejectNode) Filter(_ abi.PodView, nodes []policy.PlacementNode, out []policy.FilterVerdict) error {
	if r.err != nil {
		return r.err
	}
	for i, n := range nodes {
		out[i] = policy.FilterVerdict{}
		if n.Rec.Name() == r.name {
			out[i] = policy.FilterVerdict{Code: abi.FilterUnschedulable, Reason: "not " + r.name}
		}
	}
	return nil
}

// Score prefers the node named r.name.
func (r rejectNode) Score(_ abi.PodView, nodes []policy.PlacementNode, out []int64) error {
	if r.err != nil {
		return r.err
	}
	for i, n := range nodes {
		out[i] = 0
		if n.Rec.Name() == r.name {
			out[i] = 10
		}
	}
	return nil
}

func nodes(t *testing.T, names ...string) []policy.PlacementNode {
	t.Helper()
	var out []policy.PlacementNode
	for i, n := range names {
		v, err := abi.ReadNode(abi.AppendNode(nil, &abi.Node{Name: n}))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, policy.PlacementNode{ID: uint32(i), Gen: 1, Rec: v})
	}
	return out
}

// TestPlacementShadow: filter and score shadows are compared on the nodes
// the serving policy judged; the tee returns the serving policy's answers;
// a failing shadow counts an error and changes nothing.
func TestPlacementShadow(t *testing.T) {
	ev, _ := start(t)
	ev.Installer().Filter(rejectNode{name: "n2"})
	ev.Installer().Score(rejectNode{name: "n2"})
	var f policy.Filter
	var s policy.Score
	in := ev.Tee(policy.Installer{Filter: func(p policy.Filter) { f = p }, Score: func(p policy.Score) { s = p }})
	in.Filter(rejectNode{name: "n1"})
	in.Score(rejectNode{name: "n1"})
	ns := nodes(t, "n1", "n2", "n3")
	vs := make([]policy.FilterVerdict, 3)
	if err := f.Filter(pod("p", 0, 1), ns, vs); err != nil || vs[0].Code == abi.FilterPass || vs[1].Code != abi.FilterPass {
		t.Errorf("the tee's verdicts %+v (%v), want the serving filter's", vs, err)
	}
	sc := make([]int64, 3)
	if err := s.Score(pod("p", 0, 1), ns, sc); err != nil || sc[0] != 10 {
		t.Errorf("the tee's scores %v (%v), want the serving score's", sc, err)
	}
	if release, ok := f.(interface{ Hold() (func(), bool) }).Hold(); !ok {
		t.Error("the tee's Hold refused")
	} else {
		release()
	}
	fs, ss := settle(t, ev, abi.SlotFilter, 1), settle(t, ev, abi.SlotScore, 1)
	if fs.Kinds[shadow.KindFeasibleDiffers] != 1 || !strings.Contains(fs.Samples[0].Shadow, "2 of 3 nodes pass; n1: pass") {
		t.Errorf("filter stats %+v", fs)
	}
	if ss.Kinds[shadow.KindChosenNodeDiffers] != 1 || !strings.Contains(ss.Samples[0].Shadow, "ranks n2 first") {
		t.Errorf("score stats %+v", ss)
	}

	// A failing shadow.
	ev.Installer().Filter(rejectNode{err: errors.New("boom")})
	if err := f.Filter(pod("p", 0, 1), ns, vs); err != nil {
		t.Fatal(err)
	}
	fs = settle(t, ev, abi.SlotFilter, 1)
	if fs.Errors != 1 || fs.Disagreements != 0 || !strings.Contains(fs.Samples[0].Shadow, "failed: boom") {
		t.Errorf("a failing filter shadow: %+v", fs)
	}
}

// failingSort falls back as a Wasm adapter does when its module fails: it
// tells the shadows' recorder and answers the default.
type failingSort struct{ rec policy.Recorder }

func (f failingSort) Less(a, b abi.PodView) bool {
	f.rec.FellBack(abi.SlotQueueSort, 1)
	return policy.PrioritySort{}.Less(a, b)
}

// TestFailingShadow: a shadow whose module falls back counts an error for
// the decision, not an agreement.
func TestFailingShadow(t *testing.T) {
	ev, rec := start(t)
	ev.Configure(abi.SlotQueueSort, "broken", 1)
	ev.Installer().Sort(failingSort{ev.Recorder()})
	ev.Popped(queue.QueueActive, pod("a", 0, 1), []abi.PodView{pod("b", 0, 2)})
	st := settle(t, ev, abi.SlotQueueSort, 1)
	if st.Errors != 1 || st.Disagreements != 0 || st.Samples[0].Kind != "error" {
		t.Errorf("stats %+v, want one error", st)
	}
	if rec.get("queueSort/broken/error") != 1 {
		t.Errorf("metric counts %v", rec.n)
	}
}

// TestDropped: when the worker is behind, decisions are dropped and
// counted, and the backlog never grows past its bound.
func TestDropped(t *testing.T) {
	rec := &counts{}
	ev := shadow.New(shadow.WithBacklog(2), shadow.WithRecorder(rec)) // no worker
	ev.Configure(abi.SlotPreEnqueue, "slow", 1)
	ev.Installer().PreEnqueue(policy.Admit{})
	var pe policy.PreEnqueue
	ev.Tee(policy.Installer{PreEnqueue: func(p policy.PreEnqueue) { pe = p }}).PreEnqueue(policy.Admit{})
	for i := range 10 {
		pe.PreEnqueue(pod(fmt.Sprint(i), 0, 1))
	}
	st, _ := ev.Stats(abi.SlotPreEnqueue)
	if st.Dropped != 8 || rec.get("preEnqueue/slow/dropped") != 8 {
		t.Errorf("dropped %d (metric %d), want 8", st.Dropped, rec.get("preEnqueue/slow/dropped"))
	}
}

// TestNoShadowNoWork: without a shadow the tee and the observer hand the
// worker nothing; emptying a slot ends its shadow.
func TestNoShadowNoWork(t *testing.T) {
	ev := shadow.New(shadow.WithBacklog(1)) // no worker: any offer would fill it
	var pe policy.PreEnqueue
	ev.Tee(policy.Installer{PreEnqueue: func(p policy.PreEnqueue) { pe = p }}).PreEnqueue(policy.Admit{})
	for range 3 {
		pe.PreEnqueue(pod("p", 0, 1))
	}
	ev.Attempting("p")
	if ev.Ahead(queue.QueueActive) != 0 || ev.Active(abi.SlotPreEnqueue) {
		t.Error("a slot without a shadow samples")
	}
	ev.Installer().PreEnqueue(policy.Admit{})
	if !ev.Active(abi.SlotPreEnqueue) {
		t.Fatal("no shadow after install")
	}
	st, _ := ev.Stats(abi.SlotPreEnqueue)
	if st.Dropped != 0 {
		t.Errorf("dropped %d before the shadow: the offers were queued", st.Dropped)
	}
	ev.Installer().PreEnqueue(nil)
	if ev.Active(abi.SlotPreEnqueue) {
		t.Error("the shadow survived an empty install")
	}
}

// TestSampleCases: every sample carries its decision as a policytest case
// whose want is the serving policy's answer: the serving policy passes it
// and the shadow fails it.
func TestSampleCases(t *testing.T) {
	ev, _ := start(t)
	ev.Configure(abi.SlotQueueSort, "fifo", 1)
	ev.Installer().Sort(native.Sort(fifosort.Policy))
	ev.Installer().PreEnqueue(native.PreEnqueue(holdlabel.PreEnqueue))
	ev.Installer().QueueingHint(skipAll{everything})
	ev.Installer().VictimOrder(reverse{})
	ev.Installer().Filter(rejectNode{name: "n2"})
	ev.Installer().Score(rejectNode{name: "n2"})
	var slots policytest.Slots
	in := ev.Tee(policy.Installer{
		PreEnqueue:   func(p policy.PreEnqueue) { slots.PreEnqueue = p },
		QueueingHint: func(p policy.QueueingHint) { slots.QueueingHint = p },
		VictimOrder:  func(p policy.VictimOrder) { slots.VictimOrder = p },
		Filter:       func(p policy.Filter) { slots.Filter = p },
		Score:        func(p policy.Score) { slots.Score = p },
	})
	in.PreEnqueue(policy.Admit{})
	in.QueueingHint(policy.AlwaysQueue{})
	in.VictimOrder(policy.Importance{})
	in.Filter(rejectNode{name: "n1"})
	in.Score(rejectNode{name: "n1"})
	slots.QueueSort = policy.PrioritySort{}

	ev.Popped(queue.QueueActive, pod("young-high", 100, 30), []abi.PodView{pod("old", 0, 10)})
	held, _ := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{UID: "h", Namespace: "ns", Name: "held", Labels: []abi.KV{{Key: holdlabel.Label, Value: "x"}}}))
	slots.PreEnqueue.PreEnqueue(held)
	slots.QueueingHint.Hints(nodeAdd(t), []abi.PodView{pod("a", 0, 1, "NodeResourcesFit")}, make([]abi.Hint, 1))
	slots.VictimOrder.Order(pod("preemptor", 100, 1), []abi.Victim{{Namespace: "ns", Name: "low", Priority: 1}, {Namespace: "ns", Name: "high", Priority: 10}}, make([]uint32, 2))
	ns := nodes(t, "n1", "n2", "n3")
	_ = slots.Filter.Filter(pod("p", 0, 1), ns, make([]policy.FilterVerdict, 3))
	_ = slots.Score.Score(pod("p", 0, 1), ns, make([]int64, 3))

	shadows := policytest.Slots{QueueSort: native.Sort(fifosort.Policy), PreEnqueue: native.PreEnqueue(holdlabel.PreEnqueue),
		QueueingHint: skipAll{everything}, VictimOrder: reverse{}, Filter: rejectNode{name: "n2"}, Score: rejectNode{name: "n2"}}
	for _, slot := range []abi.Slot{abi.SlotQueueSort, abi.SlotPreEnqueue, abi.SlotQueueingHint, abi.SlotVictimOrder, abi.SlotFilter, abi.SlotScore} {
		st := settle(t, ev, slot, 1)
		if len(st.Samples) != 1 || st.Samples[0].Case == "" {
			t.Errorf("%s: samples %+v, want one with a case", slot, st.Samples)
			continue
		}
		f, err := policytest.ParseCaseFile(slot.String(), []byte(`{"slot": "`+slot.String()+`", "cases": [`+st.Samples[0].Case+`]}`))
		if err != nil {
			t.Errorf("%s: the sample's case does not parse: %v\n%s", slot, err, st.Samples[0].Case)
			continue
		}
		c := f.Cases()[0]
		if r := c.Run(slots); !r.OK {
			t.Errorf("%s: the serving policy fails its own case %s: got %s, want %s", slot, c.Name(), r.Got, r.Want)
		}
		if r := c.Run(shadows); r.OK {
			t.Errorf("%s: the shadow passes the case it disagreed on: %s", slot, r.Got)
		}
	}
}
