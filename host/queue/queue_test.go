package queue

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	holdlabel "github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

const fit = abi.PluginNodeResourcesFit

// fitHint is a QueueingHint for NodeResourcesFit on node adds that decides
// by the node's name: "fit-*" queues, "err-*" fails, anything else skips.
// A second plugin, "Gate", is a Pending plugin that queues on nodes named
// "open-*".
func fitHint() *countingHint {
	byName := func(ev abi.EventView, prefix string) (abi.Hint, error) {
		n, ok := ev.NewNode()
		switch {
		case !ok:
			return abi.HintSkip, nil
		case strings.HasPrefix(n.Name(), prefix):
			return abi.HintQueue, nil
		case strings.HasPrefix(n.Name(), "err-"):
			return abi.HintSkip, errors.New("boom")
		}
		return abi.HintSkip, nil
	}
	return &countingHint{QueueingHint: policytest.NativeQueueingHint(
		hint.Plugin{Name: fit, Events: []hint.Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}},
			Hint: func(ev abi.EventView, _ abi.PodView) (abi.Hint, error) { return byName(ev, "fit-") }},
		hint.Plugin{Name: "Gate", Events: []hint.Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}},
			Hint: func(ev abi.EventView, _ abi.PodView) (abi.Hint, error) { return byName(ev, "open-") }},
	)}
}

// failOnce adds pod, pops it and hands it back rejected: with no event
// during its attempt it waits in the unschedulable pool (an error: in the
// error-backoff heap).
func (e *env) failOnce(t testing.TB, pod *v1.Pod, rejected podview.Plugins) *Pod {
	t.Helper()
	return e.fail(t, pod, rejected, nil)
}

// backOff is failOnce with a node add during the attempt that fitHint
// answers Queue for NodeResourcesFit: the pod backs off.
func (e *env) backOff(t testing.TB, pod *v1.Pod) *Pod {
	t.Helper()
	return e.fail(t, pod, rejectedBy(fit), func() { e.q.MoveOnEvent(nodeAdd(makeNode("fit-during", 4000))) })
}

func (e *env) fail(t testing.TB, pod *v1.Pod, rejected podview.Plugins, during func()) *Pod {
	t.Helper()
	e.q.Add(pod)
	p := e.popPod(t)
	if p.uid != pod.UID {
		t.Fatalf("popped %s, want %s", p.obj.Name, pod.Name)
	}
	if during != nil {
		during()
	}
	if err := e.q.AddUnschedulableIfNotPresent(p, rejected); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPopOrder(t *testing.T) {
	cases := []struct {
		name string
		pods []*v1.Pod // added in this order, 1 ms apart
		want []string
	}{
		{
			name: "higher priority first",
			pods: []*v1.Pod{makePod("low").priority(1).obj(), makePod("high").priority(10).obj(), makePod("mid").priority(5).obj()},
			want: []string{"high", "mid", "low"},
		},
		{
			name: "equal priority: earlier added first",
			pods: []*v1.Pod{makePod("a").priority(3).obj(), makePod("b").priority(3).obj(), makePod("c").priority(3).obj()},
			want: []string{"a", "b", "c"},
		},
		{
			name: "priority, then timestamp",
			pods: []*v1.Pod{makePod("a0").obj(), makePod("b7").priority(7).obj(), makePod("c0").obj(), makePod("d7").priority(7).obj()},
			want: []string{"b7", "d7", "a0", "c0"},
		},
		{
			name: "no priority counts as 0, below positive and above negative",
			pods: []*v1.Pod{makePod("neg").priority(-5).obj(), makePod("none").obj(), makePod("pos").priority(1).obj()},
			want: []string{"pos", "none", "neg"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			for _, p := range c.pods {
				e.q.Add(p)
				e.clk.Step(time.Millisecond)
			}
			e.check(t)
			if diff := cmp.Diff(c.want, e.popNames(t)); diff != "" {
				t.Errorf("pop order (-want, +got):\n%s", diff)
			}
			e.check(t)
		})
	}
}

func TestBackoffDuration(t *testing.T) {
	cases := []struct {
		name         string
		initial, max time.Duration
		count, size  int
		want         time.Duration
	}{
		{"never attempted", time.Second, 10 * time.Second, 0, 1, 0},
		{"first", time.Second, 10 * time.Second, 1, 1, time.Second},
		{"doubles", time.Second, 10 * time.Second, 2, 1, 2 * time.Second},
		{"doubles again", time.Second, 10 * time.Second, 4, 1, 8 * time.Second},
		{"capped", time.Second, 10 * time.Second, 5, 1, 10 * time.Second},
		{"stays capped", time.Second, 10 * time.Second, 100, 1, 10 * time.Second},
		{"custom", 100 * time.Millisecond, time.Second, 3, 1, 400 * time.Millisecond},
		{"group cap grows with sqrt(size)", time.Second, 10 * time.Second, 10, 4, 20 * time.Second},
		{"group below the cap doubles", time.Second, 10 * time.Second, 3, 9, 4 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := New(WithBackoff(c.initial, c.max))
			defer q.Close()
			if got := q.backoffDuration(c.count, c.size); got != c.want {
				t.Errorf("backoffDuration(%d, %d) = %v, want %v", c.count, c.size, got, c.want)
			}
		})
	}
}

// TestBackoffExpiry: each failure doubles the backoff from the time the pod
// was handed back; unschedulable and error failures count separately, an
// unschedulable failure resetting the error count (upstream's
// ConsecutiveErrorsCount).
func TestBackoffExpiry(t *testing.T) {
	e := newEnv(t, WithPopFromBackoffQ(false), WithQueueingHint(fitHint()))
	e.q.Add(makePod("p").obj())
	var got []time.Duration
	failures := []podview.Plugins{rejectedBy(fit), rejectedBy(fit), {}, {}, rejectedBy(fit), rejectedBy(fit), rejectedBy(fit)}
	for _, f := range failures {
		p := e.popPod(t)
		e.clk.Step(250 * time.Millisecond) // the attempt
		handedBack := e.clk.Now()
		if err := e.q.AddUnschedulableIfNotPresent(p, f); err != nil {
			t.Fatal(err)
		}
		got = append(got, time.Unix(0, p.view.BackoffExpiry()).Sub(handedBack))
		e.q.Activate(p.obj) // straight back to activeQ for the next attempt
	}
	want := []time.Duration{1 * time.Second, 2 * time.Second, 1 * time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 10 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff after each failure (-want, +got):\n%s", diff)
	}
	e.check(t)
}

// TestBackoffWindows: with popFromBackoffQ (KEP-5142) expiries are
// truncated to 1-second windows; a window completes as a whole at the next
// boundary, and inside a window pods are ordered by priority.
func TestBackoffWindows(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	// Failures at +0.2 s, +0.7 s and +1.3 s: 1 s of backoff puts the first
	// two in window [1 s, 2 s) and the third in [2 s, 3 s).
	for _, f := range []struct {
		at   time.Duration
		name string
		prio int32
	}{{200 * time.Millisecond, "low", 1}, {700 * time.Millisecond, "high", 10}, {1300 * time.Millisecond, "late", 100}} {
		e.clk.SetTime(t0.Add(f.at))
		e.backOff(t, makePod(f.name).priority(f.prio).obj())
	}
	e.check(t)
	for _, s := range []struct {
		now    time.Duration
		active []string // after the flush at now, in pop order
	}{
		{1900 * time.Millisecond, nil},                     // window 1 is current: still backing off
		{2000 * time.Millisecond, []string{"high", "low"}}, // window 1 complete, by priority
		{2999 * time.Millisecond, nil},
		{3000 * time.Millisecond, []string{"late"}},
	} {
		e.clk.SetTime(t0.Add(s.now))
		e.q.flushBackoffCompleted()
		if diff := cmp.Diff(s.active, e.q.activeNames()); diff != "" {
			t.Errorf("activeQ after the flush at +%v (-want, +got):\n%s", s.now, diff)
		}
		e.check(t)
		for range s.active {
			e.popPod(t)
		}
	}

	// Popped from backoffQ when activeQ is empty: the same order, windows
	// first, priority inside a window, whatever the exact expiry.
	e2 := newEnv(t, WithQueueingHint(fitHint()))
	for _, f := range []struct {
		at   time.Duration
		name string
		prio int32
	}{{1300 * time.Millisecond, "late", 100}, {200 * time.Millisecond, "low", 1}, {700 * time.Millisecond, "high", 10}} {
		e2.clk.SetTime(t0.Add(f.at))
		e2.backOff(t, makePod(f.name).priority(f.prio).obj())
	}
	if diff := cmp.Diff([]string{"high", "low", "late"}, e2.popNames(t)); diff != "" {
		t.Errorf("pop from backoffQ (-want, +got):\n%s", diff)
	}
}

// TestBackoffWithoutWindows: with popFromBackoffQ off, expiries are exact
// and a pod leaves backoff as soon as its expiry has passed.
func TestBackoffWithoutWindows(t *testing.T) {
	e := newEnv(t, WithPopFromBackoffQ(false), WithQueueingHint(fitHint()))
	e.clk.SetTime(t0.Add(300 * time.Millisecond))
	e.backOff(t, makePod("p").obj())
	for _, s := range []struct {
		now  time.Duration
		want []string
	}{{1300 * time.Millisecond, nil}, {1301 * time.Millisecond, []string{"p"}}} {
		e.clk.SetTime(t0.Add(s.now))
		e.q.flushBackoffCompleted()
		if diff := cmp.Diff(s.want, e.q.activeNames()); diff != "" {
			t.Errorf("activeQ at +%v (-want, +got):\n%s", s.now, diff)
		}
	}
	if e.tryPop(t) == nil {
		t.Fatal("the flushed pod must pop")
	}
}

// activeNames lists activeQ in pop order without popping.
func (q *Queue) activeNames() []string {
	q.amu.Lock()
	defer q.amu.Unlock()
	h := newHeap(q.sort, nil)
	for _, he := range q.active.es {
		c := *he.e
		c.hidx = -1
		h.push(&c)
	}
	var names []string
	for h.len() > 0 {
		e := h.pop()
		if e.pod != nil {
			names = append(names, e.pod.obj.Name)
		} else {
			names = append(names, "group:"+e.group.key.name)
		}
	}
	return names
}

// vetoSort is the native backoff sort with MayPop refused for pods labelled
// "no-early".
type vetoSort struct{ policy.BackoffExpiry }

func (vetoSort) MayPop(p abi.PodView) bool {
	_, no := p.Labels().Get("no-early")
	return !no && (policy.BackoffExpiry{}).MayPop(p)
}

func TestPopFromBackoffQ(t *testing.T) {
	cases := []struct {
		name     string
		opts     []Option
		pod      *v1.Pod
		rejected podview.Plugins
		want     bool // popped while its backoff runs and activeQ is empty
	}{
		{"after an unschedulable attempt", nil, makePod("p").obj(), rejectedBy(fit), true},
		{"after an error: never", nil, makePod("p").obj(), podview.Plugins{}, false},
		{"vetoed by the backoff sort", []Option{WithBackoffSort(vetoSort{})}, makePod("p").label("no-early", "").obj(), rejectedBy(fit), false},
		{"not vetoed", []Option{WithBackoffSort(vetoSort{})}, makePod("p").obj(), rejectedBy(fit), true},
		{"popFromBackoffQ off", []Option{WithPopFromBackoffQ(false)}, makePod("p").obj(), rejectedBy(fit), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, append(c.opts, WithQueueingHint(fitHint()))...)
			e.fail(t, c.pod, c.rejected, func() { e.q.MoveOnEvent(nodeAdd(makeNode("fit-during", 4000))) })
			if got := e.where(c.pod.UID); got != "backoff" && got != "errorBackoff" {
				t.Fatalf("after the failure the pod is %s, want backing off", got)
			}
			en := e.tryPop(t)
			if (en != nil) != c.want {
				t.Fatalf("popped while backing off = %v, want %v", en != nil, c.want)
			}
			e.check(t)
			if !c.want {
				return
			}
			p := en.(*Pod)
			if p.Attempts() != 2 || p.view.Attempts() != 2 {
				t.Errorf("attempts = %d (record %d), want 2: a pop from backoffQ is an attempt", p.Attempts(), p.view.Attempts())
			}
			if n := e.rec.incomingOf(QueueActive, EventPopFromBackoffQ); n != 1 {
				t.Errorf("incoming{active, PopFromBackoffQ} = %d, want 1", n)
			}
		})
	}

	t.Run("activeQ first", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(fitHint()))
		e.backOff(t, makePod("backing-off").priority(100).obj())
		e.q.Add(makePod("active").obj())
		if diff := cmp.Diff([]string{"active", "backing-off"}, e.popNames(t)); diff != "" {
			t.Errorf("pop order (-want, +got):\n%s", diff)
		}
	})
}

// TestPopWakesOnBackoffAdd is the lost wakeup of kubernetes PR #139884: a
// Pop waiting on an empty activeQ must wake when an entity enters the
// unschedulable-backoff heap.
func TestPopWakesOnBackoffAdd(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	e.q.Add(makePod("p").obj())
	p := e.popPod(t)
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-during", 4000)))
	got := make(chan Entity, 1)
	go func() {
		en, _ := e.q.Pop(context.Background())
		got <- en
	}()
	e.waitForWaitingPop(t)
	if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
		t.Fatal(err)
	}
	select {
	case en := <-got:
		if en != Entity(p) {
			t.Fatalf("woke with %v, want the pod that entered backoffQ", en)
		}
	case <-time.After(popTimeout):
		t.Fatal("Pop did not wake when a pod entered backoffQ")
	}
}

// waitForWaitingPop waits until a Pop blocks (a liveness bound, polled).
func (e *env) waitForWaitingPop(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(popTimeout)
	for {
		e.q.amu.Lock()
		n := e.q.waiting
		e.q.amu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("Pop never blocked")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCloseUnblocksPop(t *testing.T) {
	e := newEnv(t)
	errc := make(chan error, 1)
	go func() {
		_, err := e.q.Pop(context.Background())
		errc <- err
	}()
	e.waitForWaitingPop(t)
	e.q.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop after Close: %v, want ErrClosed", err)
		}
	case <-time.After(popTimeout):
		t.Fatal("Close did not unblock Pop")
	}

	t.Run("context", func(t *testing.T) {
		e := newEnv(t)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := e.q.Pop(ctx)
			errc <- err
		}()
		e.waitForWaitingPop(t)
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Pop after cancel: %v, want context.Canceled", err)
			}
		case <-time.After(popTimeout):
			t.Fatal("cancelling the context did not unblock Pop")
		}
	})
}

// TestPreEnqueueGates: scheduling gates hold a pod natively (the slot is
// not asked) and an update that removes the last gate requeues it; the
// PreEnqueue slot holds a pod with its plugin and reason until an event
// that plugin registered requeues it.
func TestPreEnqueueGates(t *testing.T) {
	t.Run("scheduling gates", func(t *testing.T) {
		pe := &countingPreEnqueue{inner: policy.Admit{}}
		// A hint slot that knows nothing of SchedulingGates: the gates are
		// the queue's business.
		e := newEnv(t, WithPreEnqueue(pe), WithQueueingHint(fitHint()))
		gated := makePod("p").gate("example.com/wait").gate("example.com/also").rv("1")
		e.q.Add(gated.obj())
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("gated pod is %s, want gated", got)
		}
		if pe.count("p") != 0 {
			t.Error("the PreEnqueue slot was asked about a pod with scheduling gates")
		}
		e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("after an unrelated event the gated pod is %s, want gated", got)
		}
		old := gated.obj()
		e.q.Update(old, gated.gate("example.com/third").rv("2").obj())
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("after adding a gate the pod is %s, want gated", got)
		}
		old = gated.obj()
		e.q.Update(old, gated.ungate().rv("3").obj())
		if got := e.where("uid-p"); got != "active" {
			t.Fatalf("after removing its gates the pod is %s, want active", got)
		}
		if pe.count("p") != 1 {
			t.Errorf("PreEnqueue calls = %d, want 1 (once the gates are gone)", pe.count("p"))
		}
		e.check(t)
		if n := e.rec.incomingOf(QueueUnschedulable, EventUnscheduledPodAdd); n != 1 {
			t.Errorf("incoming{unschedulable, UnscheduledPodAdd} = %d, want 1", n)
		}
	})

	t.Run("scheduling gates are not the slot's business", func(t *testing.T) {
		// The default slot registers every event for every plugin; the
		// gates still wait for the update that removes them.
		h := &countingHint{QueueingHint: policy.AlwaysQueue{}}
		pe := &countingPreEnqueue{inner: policy.Admit{}}
		e := newEnv(t, WithQueueingHint(h), WithPreEnqueue(pe))
		gated := makePod("p").gate("example.com/wait").rv("1")
		e.q.Add(gated.obj())
		e.q.MoveOnEvent(nodeAdd(makeNode("n", 4000)))
		old := gated.obj()
		e.q.Update(old, gated.label("x", "y").rv("2").obj())
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("the gated pod is %s, want gated", got)
		}
		if len(h.calls()) != 0 || pe.count("p") != 0 {
			t.Errorf("hint batches %v, PreEnqueue calls %d: want none for a pod held by its gates", h.calls(), pe.count("p"))
		}
		old = gated.obj()
		e.q.Update(old, gated.ungate().rv("3").obj())
		if got := e.where("uid-p"); got != "active" {
			t.Fatalf("after removing its gates the pod is %s, want active", got)
		}
	})

	held := func() *countingHint {
		// HoldLabel registers updates of the pod's labels.
		return &countingHint{QueueingHint: policytest.NativeQueueingHint(hint.Plugin{
			Name:   holdlabel.Plugin,
			Events: []hint.Event{{Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodLabel}},
			Hint: func(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
				if _, held := p.Labels().Get(holdlabel.Label); held {
					return abi.HintSkip, nil
				}
				return abi.HintQueue, nil
			},
		})}
	}
	t.Run("PreEnqueue slot", func(t *testing.T) {
		e := newEnv(t, WithPreEnqueue(policytest.NativePreEnqueue(holdlabel.PreEnqueue)), WithQueueingHint(held()))
		w := makePod("p").label(holdlabel.Label, "yes").rv("1")
		e.q.Add(w.obj())
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("held pod is %s, want gated", got)
		}
		st, _ := e.q.PodState("uid-p")
		if st.Queue != QueueGated || st.GatingPlugin != holdlabel.Plugin || !strings.Contains(st.GateReason, holdlabel.Label) {
			t.Errorf("state %+v, want gated by %s with a reason naming the label", st, holdlabel.Plugin)
		}
		e.q.mu.Lock()
		plugins := e.q.pods["uid-p"].plugins
		e.q.mu.Unlock()
		if diff := cmp.Diff([]string{holdlabel.Plugin}, plugins.Unschedulable); diff != "" {
			t.Errorf("the gating plugin joins the unschedulable plugins (-want, +got):\n%s", diff)
		}
		old := w.obj()
		e.q.Update(old, w.label("other", "x").rv("2").obj())
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("still labelled: the pod is %s, want gated", got)
		}
		old = w.obj()
		e.q.Update(old, w.unlabel(holdlabel.Label).rv("3").obj())
		if got := e.where("uid-p"); got != "active" {
			t.Fatalf("label removed: the pod is %s, want active", got)
		}
		e.check(t)
	})

	// A PreEnqueue module the QueueingHint slot knows nothing of: as
	// upstream's plugins without EnqueueExtensions, any event may end its
	// hold, so every event runs PreEnqueue again instead of leaving the
	// pod to the leftover flush (a missed wake-up).
	t.Run("nothing registered for the gating plugin", func(t *testing.T) {
		pe := &countingPreEnqueue{inner: policytest.NativePreEnqueue(holdlabel.PreEnqueue)}
		e := newEnv(t, WithPreEnqueue(pe), WithQueueingHint(fitHint()))
		w := makePod("p").label(holdlabel.Label, "yes").rv("1")
		e.q.Add(w.obj())
		e.q.MoveOnEvent(podview.NodeEvent(abi.ActionDelete, makeNode("gone", 4000), nil, nil, 0))
		if got, n := e.where("uid-p"), pe.count("p"); got != "gated" || n != 2 {
			t.Fatalf("still labelled, after a node deletion: the pod is %s after %d PreEnqueue calls, want gated after 2", got, n)
		}
		old := w.obj()
		e.q.Update(old, w.unlabel(holdlabel.Label).rv("2").obj())
		if got := e.where("uid-p"); got != "active" {
			t.Fatalf("label removed: the pod is %s, want active without waiting for the flush", got)
		}
		e.check(t)
	})
}

// TestPreEnqueueOnBackoff: with popFromBackoffQ on, PreEnqueue runs before a
// pod enters backoffQ (and may hold it), not again when it moves from
// backoffQ to activeQ; with it off, it runs on the way to activeQ only.
func TestPreEnqueueOnBackoff(t *testing.T) {
	for _, c := range []struct {
		name          string
		pop           bool
		atBackoff     int // PreEnqueue calls after the failure
		atFlush       int // after the flush to activeQ
		wantAfterFail string
	}{
		{"popFromBackoffQ on", true, 2, 2, "backoff"},
		{"popFromBackoffQ off", false, 1, 2, "backoff"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pe := &countingPreEnqueue{inner: policy.Admit{}}
			e := newEnv(t, WithPopFromBackoffQ(c.pop), WithPreEnqueue(pe), WithQueueingHint(fitHint()))
			e.q.Add(makePod("p").obj())
			p := e.popPod(t)
			e.q.Update(p.obj, makePod("p").rv("2").obj()) // in flight: recorded, nothing else
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
			if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
				t.Fatal(err)
			}
			if got := e.where("uid-p"); got != c.wantAfterFail {
				t.Fatalf("after the failure the pod is %s, want %s", got, c.wantAfterFail)
			}
			if n := pe.count("p"); n != c.atBackoff {
				t.Errorf("PreEnqueue calls after entering backoffQ = %d, want %d", n, c.atBackoff)
			}
			e.clk.Step(3 * time.Second)
			e.q.flushBackoffCompleted()
			if got := e.where("uid-p"); got != "active" {
				t.Fatalf("after the flush the pod is %s, want active", got)
			}
			if n := pe.count("p"); n != c.atFlush {
				t.Errorf("PreEnqueue calls after the flush = %d, want %d", n, c.atFlush)
			}
			e.check(t)
		})
	}

	t.Run("held on the way to backoffQ", func(t *testing.T) {
		e := newEnv(t, WithPreEnqueue(policytest.NativePreEnqueue(holdlabel.PreEnqueue)), WithQueueingHint(fitHint()))
		e.q.Add(makePod("p").rv("1").obj())
		p := e.popPod(t)
		e.q.Update(p.obj, makePod("p").label(holdlabel.Label, "now").rv("2").obj())
		e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
			t.Fatal(err)
		}
		if got := e.where("uid-p"); got != "gated" {
			t.Fatalf("the pod labelled while in flight is %s, want gated", got)
		}
		e.check(t)
	})
}

// TestQueueingHints: one batched call per event decides for every
// candidate; Queue requeues (to backoffQ while backing off, else activeQ),
// Skip leaves the pod, an error counts as Queue, a Pending plugin's Queue
// skips backoff; pods rejected by plugins that did not register the event
// are not asked.
func TestQueueingHints(t *testing.T) {
	cases := []struct {
		name      string
		rejected  podview.Plugins
		node      string
		elapsed   time.Duration // since the failure
		want      string
		wantCalls []int
	}{
		{"Queue while backing off", rejectedBy(fit), "fit-1", 0, "backoff", []int{1}},
		{"Queue after the backoff", rejectedBy(fit), "fit-1", 5 * time.Second, "active", []int{1}},
		{"Skip", rejectedBy(fit), "small-1", 0, "unschedulable", []int{1}},
		{"error counts as Queue", rejectedBy(fit), "err-1", 0, "backoff", []int{1}},
		{"Pending plugin queues: no backoff", podview.Plugins{Pending: []string{"Gate"}}, "open-1", 0, "active", []int{1}},
		{"Pending plugin skips", podview.Plugins{Pending: []string{"Gate"}}, "fit-1", 0, "unschedulable", []int{1}},
		{"Pending plugin fails: no backoff", podview.Plugins{Pending: []string{"Gate"}}, "err-1", 0, "active", []int{1}},
		{"unschedulable plugin queues, Pending skips: backoff", podview.Plugins{Unschedulable: []string{fit}, Pending: []string{"Gate"}},
			"fit-1", 0, "backoff", []int{2}},
		{"both queue: no backoff", podview.Plugins{Unschedulable: []string{fit}, Pending: []string{"Gate"}},
			"open-fit", 0, "active", []int{2}},
		// As upstream's plugins without EnqueueExtensions: every event may
		// concern a plugin nobody registered, so the queue moves its pods
		// itself, without asking the slot.
		{"plugin without registration: moved by any event, not asked", rejectedBy("NodeAffinity"), "small-1", 0, "backoff", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := fitHint()
			e := newEnv(t, WithQueueingHint(h))
			// The first event skips: the pod lands in the unschedulable pool.
			e.failOnce(t, makePod("p").obj(), c.rejected)
			if got := e.where("uid-p"); got != "unschedulable" {
				t.Fatalf("after the failure the pod is %s, want unschedulable", got)
			}
			e.clk.Step(c.elapsed)
			e.q.MoveOnEvent(nodeAdd(makeNode(c.node, 4000)))
			if got := e.where("uid-p"); got != c.want {
				t.Errorf("after a node add %q the pod is %s, want %s", c.node, got, c.want)
			}
			if diff := cmp.Diff(c.wantCalls, h.calls()); diff != "" {
				t.Errorf("hint batches (-want, +got):\n%s", diff)
			}
			e.check(t)
		})
	}

	t.Run("one call per event for all candidates", func(t *testing.T) {
		h := fitHint()
		e := newEnv(t, WithQueueingHint(h))
		for _, n := range []string{"a", "b", "c", "d"} {
			e.failOnce(t, makePod(n).obj(), rejectedBy(fit))
		}
		e.failOnce(t, makePod("other").obj(), rejectedBy(abi.PluginTaintToleration)) // not registered by fitHint: moved by any event, not asked
		e.q.MoveOnEvent(nodeAdd(makeNode("small", 10)))
		e.q.MoveOnEvent(nodeUpdate(makeNode("small", 10), makeNode("small", 20))) // nobody registered updates
		if diff := cmp.Diff([]int{4}, h.calls()); diff != "" {
			t.Errorf("hint batches (-want, +got):\n%s", diff)
		}
		e.q.MoveOnEvent(nodeAdd(makeNode("fit-big", 10)))
		if s := e.q.Stats(); s.Backoff != 5 || s.Unschedulable != 0 {
			t.Errorf("stats %+v, want 5 in backoff", s)
		}
		if n := e.rec.incomingOf(QueueBackoff, "NodeAdd"); n != 5 {
			t.Errorf("incoming{backoff, NodeAdd} = %d, want 5 (the other pod on the first, the four on the second)", n)
		}
		e.check(t)
	})

	t.Run("plugin without registration: an event in flight requeues", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			event bool
			want  string
		}{{"event while in flight", true, "backoff"}, {"no event", false, "unschedulable"}} {
			t.Run(c.name, func(t *testing.T) {
				h := fitHint()
				e := newEnv(t, WithQueueingHint(h))
				// The plugin has been seen before, as it is in a running
				// scheduler once it rejected a pod.
				e.failOnce(t, makePod("earlier").obj(), rejectedBy(abi.PluginTaintToleration))
				e.q.Add(makePod("p").obj())
				p := e.popPod(t)
				if c.event {
					e.q.MoveOnEvent(podview.NodeEvent(abi.ActionDelete, makeNode("gone", 4000), nil, nil, 0))
				}
				if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(abi.PluginTaintToleration)); err != nil {
					t.Fatal(err)
				}
				if got := e.where("uid-p"); got != c.want {
					t.Errorf("the pod is %s, want %s", got, c.want)
				}
				if len(h.calls()) != 0 {
					t.Errorf("hint batches %v, want none: nothing registered the plugin", h.calls())
				}
				e.check(t)
			})
		}
	})

	t.Run("no rejecting plugin: moved by any registered event", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(fitHint()))
		e.q.Add(makePod("p").obj())
		p := e.popPod(t)
		// Placed in the pool by hand: the queue puts a pod that failed with
		// an error in backoffQ, never in the pool.
		if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
			t.Fatal(err)
		}
		e.q.mu.Lock()
		p.plugins, p.mask = rejectors{}, 0
		e.q.mu.Unlock()
		e.q.MoveOnEvent(nodeAdd(makeNode("small", 10)))
		if got := e.where("uid-p"); got != "errorBackoff" {
			t.Errorf("the pod is %s, want errorBackoff", got)
		}
	})
}

// TestEventDuringCycle: an event that arrives while a pod is in its cycle is
// replayed through its hints when it comes back unschedulable.
func TestEventDuringCycle(t *testing.T) {
	cases := []struct {
		name   string
		before []string // nodes added before the pod is popped
		during []string // while in flight
		want   string
	}{
		{"no event: unschedulable", nil, nil, "unschedulable"},
		{"event that queues: backoff", nil, []string{"fit-1"}, "backoff"},
		{"event that skips: unschedulable", nil, []string{"small"}, "unschedulable"},
		{"skip then queue: backoff", nil, []string{"small", "fit-1"}, "backoff"},
		{"event before the pop does not count", []string{"fit-1"}, nil, "unschedulable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, WithQueueingHint(fitHint()))
			e.q.Add(makePod("p").obj())
			for _, n := range c.before {
				e.q.MoveOnEvent(nodeAdd(makeNode(n, 4000)))
			}
			p := e.popPod(t)
			for _, n := range c.during {
				e.q.MoveOnEvent(nodeAdd(makeNode(n, 4000)))
			}
			if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
				t.Fatal(err)
			}
			if got := e.where("uid-p"); got != c.want {
				t.Errorf("the pod is %s, want %s", got, c.want)
			}
			if s := e.q.Stats(); s.InFlightEvents != 0 || s.InFlightPods != 0 {
				t.Errorf("in flight after the pod came back: %+v", s)
			}
			e.check(t)
		})
	}

	t.Run("update of the pod itself", func(t *testing.T) {
		// The pod's own label update registered by its rejecting plugin.
		h := policytest.NativeQueueingHint(hint.Plugin{Name: "Labels",
			Events: []hint.Event{{Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodLabel}}})
		e := newEnv(t, WithQueueingHint(h))
		e.q.Add(makePod("p").rv("1").obj())
		e.q.Add(makePod("other").rv("1").obj())
		p := e.popPod(t)
		other := e.popPod(t)
		e.q.Update(p.obj, makePod("p").label("a", "b").rv("2").obj())
		if err := e.q.AddUnschedulableIfNotPresent(other, rejectedBy("Labels")); err != nil {
			t.Fatal(err)
		}
		if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy("Labels")); err != nil {
			t.Fatal(err)
		}
		if got := e.where("uid-other"); got != "unschedulable" {
			t.Errorf("another pod's update requeued %s", got)
		}
		if got := e.where("uid-p"); got != "backoff" {
			t.Errorf("the pod updated in flight is %s, want backoff", got)
		}
		e.q.mu.Lock()
		labels := e.q.pods["uid-p"].obj.Labels
		e.q.mu.Unlock()
		if labels["a"] != "b" {
			t.Error("the pod came back with its popped object, want the newest")
		}
		e.check(t)
	})
}

func TestSetSortResorts(t *testing.T) {
	e := newEnv(t)
	for i, p := range []*v1.Pod{makePod("a").priority(1).obj(), makePod("b").priority(9).obj(), makePod("c").priority(5).obj()} {
		e.q.Add(p)
		e.clk.Step(time.Duration(i+1) * time.Millisecond)
	}
	e.q.SetSort(fifo{})
	if diff := cmp.Diff([]string{"a", "b", "c"}, e.q.activeNames()); diff != "" {
		t.Errorf("after swapping to FIFO (-want, +got):\n%s", diff)
	}
	e.q.SetSort(policy.PrioritySort{})
	if diff := cmp.Diff([]string{"b", "c", "a"}, e.popNames(t)); diff != "" {
		t.Errorf("after swapping back (-want, +got):\n%s", diff)
	}

	t.Run("backoff sort", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(fitHint()))
		e.backOff(t, makePod("first").priority(1).obj())
		e.clk.Step(3 * time.Second)
		e.backOff(t, makePod("second").priority(9).obj())
		e.q.SetBackoffSort(reverseExpiry{})
		if diff := cmp.Diff([]string{"second", "first"}, e.popNames(t)); diff != "" {
			t.Errorf("pop from backoffQ after the swap (-want, +got):\n%s", diff)
		}
	})
}

// reverseExpiry pops the latest expiry first (a policy swap to test).
type reverseExpiry struct{ policy.BackoffExpiry }

func (reverseExpiry) Less(a, b abi.PodView) bool { return a.BackoffExpiry() > b.BackoffExpiry() }
func (reverseExpiry) Keyed() bool                { return false }

func TestFlushLeftovers(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()), WithPreEnqueue(policytest.NativePreEnqueue(holdlabel.PreEnqueue)))
	e.failOnce(t, makePod("u").obj(), rejectedBy(fit))
	e.q.Add(makePod("g").label(holdlabel.Label, "x").obj())
	e.clk.Step(DefaultMaxInUnschedulable)
	e.q.flushLeftovers()
	if got := e.where("uid-u"); got != "unschedulable" {
		t.Fatalf("at exactly the limit the pod is %s, want unschedulable", got)
	}
	e.clk.Step(time.Second)
	e.q.flushLeftovers()
	if got := e.where("uid-u"); got != "active" {
		t.Errorf("past the limit the pod is %s, want active (its backoff is over)", got)
	}
	if got := e.where("uid-g"); got != "gated" {
		t.Errorf("the held pod is %s, want gated (PreEnqueue still holds it)", got)
	}
	if n := e.rec.incomingOf(QueueActive, EventUnschedulableTimeout); n != 1 {
		t.Errorf("incoming{active, UnschedulableTimeout} = %d, want 1", n)
	}
	// The held pod was flushed now: not again before another full period.
	pe := &countingPreEnqueue{inner: policytest.NativePreEnqueue(holdlabel.PreEnqueue)}
	e.q.SetPreEnqueue(pe)
	e.clk.Step(time.Minute)
	e.q.flushLeftovers()
	if pe.count("g") != 0 {
		t.Error("the held pod was flushed again a minute after its last flush")
	}
	e.clk.Step(DefaultMaxInUnschedulable)
	e.q.flushLeftovers()
	if pe.count("g") != 1 {
		t.Errorf("PreEnqueue calls = %d, want 1 after another full period", pe.count("g"))
	}
	e.check(t)
}

// TestRunFlushes: Run flushes completed backoffs on whole seconds and
// leftovers every 30 s, on the injected clock.
func TestRunFlushes(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()), WithMaxInUnschedulable(time.Minute))
	e.clk.SetTime(t0.Add(300 * time.Millisecond))
	e.backOff(t, makePod("b").obj()) // expiry 1.3 s -> window 1 s -> leaves at 2 s
	e.failOnce(t, makePod("u").obj(), rejectedBy("NodeAffinity"))
	e.q.mu.Lock()
	e.q.pool[0].timestamp = t0 // make "u" the leftover
	e.q.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.q.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	e.waitForWaiters(t, 2)             // the alignment timer and the leftover ticker
	e.clk.Step(700 * time.Millisecond) // 1.0 s: first aligned flush; "b" still in its window
	e.waitForWaiters(t, 2)             // the backoff ticker replaced the timer
	e.clk.Step(time.Second)            // 2.0 s
	e.waitFor(t, func() bool { return e.where("uid-b") == "active" }, "the backoff flush at 2 s")
	e.clk.Step(59 * time.Second) // 61 s: a leftover tick; "u" has waited more than a minute
	e.waitFor(t, func() bool { return e.where("uid-u") != "unschedulable" }, "the leftover flush")
}

func (e *env) waitForWaiters(t testing.TB, n int) {
	t.Helper()
	e.waitFor(t, func() bool { return e.clk.Waiters() >= n }, "the flush loops to wait on the clock")
}

// waitFor polls cond: a liveness bound for work done by Run's goroutines,
// not a timing assertion.
func (e *env) waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(popTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestActivate(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	e.failOnce(t, makePod("u").obj(), rejectedBy("NodeAffinity"))
	e.failOnce(t, makePod("b").obj(), rejectedBy(fit))
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 1)))
	e.q.Add(makePod("f").obj())
	f := e.popPod(t)
	e.q.Activate(makePod("u").obj(), makePod("b").obj(), makePod("f").obj(), makePod("unknown").obj())
	for _, n := range []string{"u", "b"} {
		if got := e.where(types.UID("uid-" + n)); got != "active" {
			t.Errorf("activated %s is %s, want active", n, got)
		}
	}
	if err := e.q.AddUnschedulableIfNotPresent(f, rejectedBy("NodeAffinity")); err != nil {
		t.Fatal(err)
	}
	if got := e.where("uid-f"); got != "backoff" {
		t.Errorf("the pod activated in flight is %s, want backoff", got)
	}
	if n := e.rec.incomingOf(QueueActive, EventForceActivate); n != 2 {
		t.Errorf("incoming{active, ForceActivate} = %d, want 2", n)
	}
	e.check(t)
}

func TestUpdateAndDelete(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	w := makePod("p").priority(1).rv("1")
	e.q.Add(w.obj())
	e.q.Add(makePod("q").priority(5).rv("1").obj())
	// Updating a pod in activeQ re-keys it (a label does not change
	// PrioritySort's key, but the record must be new).
	old := w.obj()
	e.q.Update(old, w.label("x", "y").rv("2").obj())
	e.q.mu.Lock()
	_, ok := e.q.pods["uid-p"].view.Labels().Get("x")
	e.q.mu.Unlock()
	if !ok {
		t.Error("the record of the updated pod lacks the new label")
	}
	// Adding a known pod is an update, not a second entry.
	e.q.Add(w.obj())
	if s := e.q.Stats(); s.Active != 2 {
		t.Errorf("stats %+v, want 2 active", s)
	}
	// An update of an unknown unassigned pod adds it; of an assigned one,
	// nothing.
	e.q.Update(makePod("new").obj(), makePod("new").rv("2").obj())
	e.q.Update(makePod("bound").obj(), makePod("bound").node("n1").rv("2").obj())
	if got := e.where("uid-bound"); got != "gone" {
		t.Errorf("an assigned pod's update added it: %s", got)
	}
	e.q.Delete(makePod("q").obj())
	e.q.Delete(makePod("never").obj())
	if diff := cmp.Diff([]string{"p", "new"}, e.popNames(t)); diff != "" {
		t.Errorf("pods left (-want, +got):\n%s", diff)
	}
	e.check(t)
}

func TestHandBackErrors(t *testing.T) {
	e := newEnv(t)
	e.q.Add(makePod("p").obj())
	p := e.popPod(t)
	e.q.Done(p.uid)
	if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err == nil {
		t.Error("handing back a pod twice: want an error")
	}
	e.q.Add(makePod("c").obj())
	c := e.popPod(t)
	e.q.Close()
	if err := e.q.AddUnschedulableIfNotPresent(c, rejectedBy(fit)); err != nil {
		t.Errorf("after Close: %v, want a silent drop", err)
	}
	if s := e.q.Stats(); s.InFlightPods != 0 {
		t.Errorf("Close left %d pods in flight", s.InFlightPods)
	}
	if e.rec.inFlightTotal() != 0 {
		t.Errorf("scheduler_inflight_events = %d after Close, want 0", e.rec.inFlightTotal())
	}
}

// MoveOnEventFor asks only about the entities its check accepts: a freed
// nomination moves the pods of lower or equal priority, and the hint sees
// an assigned pod's deletion on the nominated node.
func TestMoveOnEventFor(t *testing.T) {
	var seen []string
	h := policytest.NativeQueueingHint(hint.Plugin{Name: fit,
		Events: []hint.Event{{Resource: abi.ResourcePod, Actions: abi.ActionDelete}},
		Hint: func(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
			old, _ := ev.OldPod()
			seen = append(seen, p.Name()+" sees "+old.Name()+" on "+old.NodeName())
			return abi.HintQueue, nil
		}})
	e := newEnv(t, WithQueueingHint(h))
	for _, w := range []*podWrapper{makePod("low").priority(5), makePod("equal").priority(10), makePod("high").priority(20)} {
		e.failOnce(t, w.obj(), rejectedBy(fit))
	}
	nominated := makePod("nominated").priority(10).node("n1").obj()
	e.q.MoveOnEventFor(podview.PodEvent(abi.ActionDelete, nominated, nil, nil),
		func(v abi.PodView) bool { return v.Priority() <= 10 })
	slices.Sort(seen)
	if diff := cmp.Diff([]string{"equal sees nominated on n1", "low sees nominated on n1"}, seen); diff != "" {
		t.Errorf("hints asked (-want, +got):\n%s", diff)
	}
	for name, want := range map[string]string{"low": "backoff", "equal": "backoff", "high": "unschedulable"} {
		if got := e.where(types.UID("uid-" + name)); got != want {
			t.Errorf("%s is %s, want %s", name, got, want)
		}
	}
	e.check(t)
}

// TestLazyEvent: a pod event sent with MoveOnLazyEvent is built only when
// the queue reads it (an entity of the pool to decide on, a pod in flight
// replaying it), at most once per reading, and then decides as MoveOnEvent
// would.
func TestLazyEvent(t *testing.T) {
	const room = "Room"
	// Room queues a pod on the deletion of an assigned pod from a node
	// named fit-*, and skips otherwise.
	h := policytest.NativeQueueingHint(hint.Plugin{Name: room,
		Events: []hint.Event{{Resource: abi.ResourcePod, Actions: abi.ActionDelete}},
		Hint: func(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
			if p, ok := ev.OldPod(); ok && strings.HasPrefix(p.NodeName(), "fit-") {
				return abi.HintQueue, nil
			}
			return abi.HintSkip, nil
		}})
	deletion := func(node string, builds *int) (abi.EventResource, abi.ActionType, func() abi.Event) {
		gone := makePod("gone-" + node).node(node).obj()
		return podview.PodEventResource(gone, nil), abi.ActionDelete, func() abi.Event {
			*builds++
			return podview.PodEvent(abi.ActionDelete, gone, nil, nil)
		}
	}

	t.Run("recorded for a pod in flight that succeeds: never built", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(h))
		e.q.Add(makePod("p").obj())
		p := e.popPod(t)
		var builds int
		e.q.MoveOnLazyEvent(deletion("fit-1", &builds))
		if s := e.q.Stats(); s.InFlightEvents != 1 {
			t.Fatalf("stats %+v, want the event recorded for the pod in flight", s)
		}
		e.q.Done(p.uid)
		if builds != 0 {
			t.Errorf("built %d times, want never", builds)
		}
		e.idle(t)
	})
	for _, tc := range []struct{ node, want string }{{"fit-1", "backoff"}, {"small", "unschedulable"}} {
		t.Run("replayed by a pod in flight that fails, node "+tc.node, func(t *testing.T) {
			e := newEnv(t, WithQueueingHint(h))
			e.q.Add(makePod("p").obj())
			p := e.popPod(t)
			var builds int
			e.q.MoveOnLazyEvent(deletion(tc.node, &builds))
			if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(room)); err != nil {
				t.Fatal(err)
			}
			if got := e.where(p.uid); got != tc.want {
				t.Errorf("the pod is %s, want %s", got, tc.want)
			}
			if builds != 1 {
				t.Errorf("built %d times, want once", builds)
			}
			e.check(t)
		})
		t.Run("decided for the pool, node "+tc.node, func(t *testing.T) {
			e := newEnv(t, WithQueueingHint(h))
			p := e.failOnce(t, makePod("p").obj(), rejectedBy(room))
			var builds int
			e.q.MoveOnLazyEvent(deletion(tc.node, &builds))
			if got := e.where(p.uid); got != tc.want {
				t.Errorf("the pod is %s, want %s", got, tc.want)
			}
			if builds != 1 {
				t.Errorf("built %d times, want once", builds)
			}
			if s := e.q.Stats(); s.InFlightEvents != 0 {
				t.Errorf("stats %+v, want nothing recorded with no pod in flight", s)
			}
			e.check(t)
		})
	}
	t.Run("empty pool, no pod in flight: not built", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(h))
		var builds int
		e.q.MoveOnLazyEvent(deletion("fit-1", &builds))
		if builds != 0 {
			t.Errorf("built %d times, want never", builds)
		}
	})
}
