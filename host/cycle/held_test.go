package cycle

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/queue"
)

// heldGauge is a HeldRecorder for tests.
type heldGauge struct {
	mu sync.Mutex
	n  map[string]int // "profile/holder" -> pods
}

func (g *heldGauge) HeldPods(profile, holder string, delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n == nil {
		g.n = map[string]int{}
	}
	g.n[profile+"/"+holder] += delta
	if g.n[profile+"/"+holder] == 0 {
		delete(g.n, profile+"/"+holder)
	}
}

func (g *heldGauge) get() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for k, v := range g.n {
		out[k] = v
	}
	return out
}

type heldEnv struct {
	client *fake.Clientset
	api    API
	w      *HeldWriter
	gauge  *heldGauge
	clk    *testingclock.FakeClock
}

func heldPodObj(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
}

// newHeldEnv is a writer over a fake clientset holding pods; the informer
// shows none of them, so the writer reads the apiserver's copy.
func newHeldEnv(t *testing.T, pods ...*v1.Pod) *heldEnv {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	client := fake.NewClientset(objs...)
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	api := NewAPI(client, corelisters.NewPodLister(idx))
	g := &heldGauge{}
	w, err := NewHeldWriter(api, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC))
	w.clock = clk
	return &heldEnv{client: client, api: api, w: w, gauge: g, clk: clk}
}

// flush writes every pending change, as Run does, on the test's goroutine.
func (e *heldEnv) flush(t *testing.T) {
	t.Helper()
	for {
		j, ok := e.w.next()
		if !ok {
			return
		}
		if err := e.w.write(context.Background(), j); err != nil {
			t.Fatalf("write %s: %v", j.pod.Name, err)
		}
	}
}

func (e *heldEnv) note(pod *v1.Pod, plugin, reason string) {
	e.w.Note(queue.Held{Profile: "p", Pod: pod, Plugin: plugin, Reason: reason})
}

// patches counts the status patches made, and clears the actions.
func (e *heldEnv) patches() int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
			n++
		}
	}
	e.client.ClearActions()
	return n
}

// condition is the pod's PodScheduled condition in the fake apiserver, as
// "status reason: message", or "none".
func (e *heldEnv) condition(t *testing.T, name string) string {
	t.Helper()
	p, err := e.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := findCondition(p.Status.Conditions, v1.PodScheduled)
	if c == nil {
		return "none"
	}
	return string(c.Status) + " " + c.Reason + ": " + c.Message
}

// TestHeldWriter: a held pod's condition is written once per change of
// holder or reason (changes before a write coalesce to the latest), not
// rewritten when it already says so, and removed on release; the gauge
// follows every note.
func TestHeldWriter(t *testing.T) {
	pod := heldPodObj("a")
	e := newHeldEnv(t, pod)
	steps := []struct {
		name    string
		do      func()
		patches int
		cond    string
		gauge   map[string]int
	}{
		{"held", func() { e.note(pod, "HoldLabel", "r1") }, 1, "False HoldLabel: r1", map[string]int{"p/HoldLabel": 1}},
		{"changes before the write: the latest is written", func() {
			e.note(pod, "HoldLabel", "r2")
			e.note(pod, abi.PluginGangScheduling, "2 of 3")
			e.note(pod, "HoldLabel", "r3")
		}, 1, "False HoldLabel: r3", map[string]int{"p/HoldLabel": 1}},
		{"back and forth before the write: nothing to write", func() {
			e.note(pod, "HoldLabel", "r4")
			e.note(pod, "HoldLabel", "r3")
		}, 0, "False HoldLabel: r3", map[string]int{"p/HoldLabel": 1}},
		{"another holder", func() { e.note(pod, abi.PluginGangScheduling, "2 of 3") }, 1,
			"False GangScheduling: 2 of 3", map[string]int{"p/GangScheduling": 1}},
		{"released", func() { e.note(pod, "", "") }, 1, "none", map[string]int{}},
		{"held and released before the write", func() {
			e.note(pod, "HoldLabel", "r5")
			e.note(pod, "", "")
		}, 0, "none", map[string]int{}},
		// The preemption's hold is counted, not written.
		{"held by DefaultPreemption", func() { e.note(pod, abi.PluginDefaultPreemption, "waiting") }, 0, "none",
			map[string]int{"p/DefaultPreemption": 1}},
		{"gone", func() { e.w.Note(queue.Held{Profile: "p", Pod: pod, Gone: true}) }, 0, "none", map[string]int{}},
	}
	for _, s := range steps {
		s.do()
		e.flush(t)
		if n := e.patches(); n != s.patches {
			t.Errorf("%s: %d status patches, want %d", s.name, n, s.patches)
		}
		if got := e.condition(t, "a"); got != s.cond {
			t.Errorf("%s: condition %q, want %q", s.name, got, s.cond)
		}
		if diff := cmp.Diff(s.gauge, e.gauge.get()); diff != "" {
			t.Errorf("%s: gauge (-want, +got):\n%s", s.name, diff)
		}
	}
	if len(e.w.pods) != 0 || e.w.order.Len() != 0 {
		t.Errorf("after gone: %d pods, %d pending, want none", len(e.w.pods), e.w.order.Len())
	}
}

// TestHeldWriterLeavesOthers: a release removes only a condition the
// writer would have written: not an attempt's Unschedulable, not the
// apiserver's SchedulingGated, not a bound pod's; scheduling gates are
// counted and never written.
func TestHeldWriterLeavesOthers(t *testing.T) {
	unsched := heldPodObj("unsched")
	unsched.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, Message: "0/1 nodes"}}
	gated := heldPodObj("gated")
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/g"}}
	gated.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonSchedulingGated, Message: "gates"}}
	bound := heldPodObj("bound")
	bound.Spec.NodeName = "n1"
	bound.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}
	e := newHeldEnv(t, unsched, gated, bound)

	e.note(unsched, "HoldLabel", "r") // held and released before the write
	e.note(unsched, "", "")
	e.note(gated, abi.PluginSchedulingGates, "waiting for scheduling gates: [example.com/g]")
	e.note(bound, "HoldLabel", "r") // a stale note: the pod is bound meanwhile
	e.flush(t)
	if diff := cmp.Diff(map[string]int{"p/SchedulingGates": 1, "p/HoldLabel": 1}, e.gauge.get()); diff != "" {
		t.Errorf("gauge (-want, +got):\n%s", diff)
	}
	e.note(gated, "", "")
	e.note(bound, "", "")
	e.flush(t)
	if n := e.patches(); n != 0 {
		t.Errorf("%d status patches, want none", n)
	}
	for name, want := range map[string]string{
		"unsched": "False Unschedulable: 0/1 nodes", "gated": "False SchedulingGated: gates", "bound": "True : ",
	} {
		if got := e.condition(t, name); got != want {
			t.Errorf("%s: condition %q, want %q", name, got, want)
		}
	}
}

// TestHeldWriterErrors: a pod gone is given up at once; a conflict is
// retried with the pod read again; a transient error is retried after a
// backoff; a later note supersedes a write being retried.
func TestHeldWriterErrors(t *testing.T) {
	t.Run("NotFound", func(t *testing.T) {
		e := newHeldEnv(t)
		e.note(heldPodObj("gone"), "HoldLabel", "r")
		e.flush(t) // no error
		if e.w.order.Len() != 0 {
			t.Errorf("%d writes pending, want none", e.w.order.Len())
		}
	})
	t.Run("Conflict", func(t *testing.T) {
		pod := heldPodObj("a")
		e := newHeldEnv(t, pod)
		conflicts := 1
		e.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			if conflicts > 0 {
				conflicts--
				return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "a", nil)
			}
			return false, nil, nil
		})
		e.note(pod, "HoldLabel", "r")
		e.flush(t)
		var verbs []string
		for _, a := range e.client.Actions() {
			verbs = append(verbs, a.GetVerb())
		}
		if diff := cmp.Diff([]string{"get", "patch", "get", "patch"}, verbs); diff != "" {
			t.Errorf("actions (-want, +got):\n%s", diff)
		}
		if got := e.condition(t, "a"); got != "False HoldLabel: r" {
			t.Errorf("condition %q", got)
		}
	})
	t.Run("transient", func(t *testing.T) {
		pod := heldPodObj("a")
		e := newHeldEnv(t, pod)
		failures := 2
		e.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			if failures > 0 {
				failures--
				return true, nil, apierrors.NewServiceUnavailable("busy")
			}
			return false, nil, nil
		})
		e.note(pod, "HoldLabel", "r")
		done := make(chan struct{})
		go func() { defer close(done); e.flush(t) }()
		for _, d := range []time.Duration{heldBackoff, 2 * heldBackoff} {
			waitWaiters(t, e.clk)
			e.clk.Step(d)
		}
		<-done
		if got := e.condition(t, "a"); got != "False HoldLabel: r" {
			t.Errorf("condition %q", got)
		}
	})
	t.Run("superseded", func(t *testing.T) {
		pod := heldPodObj("a")
		e := newHeldEnv(t, pod)
		failing := true
		var mu sync.Mutex
		e.client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				return true, nil, apierrors.NewServiceUnavailable("busy")
			}
			return false, nil, nil
		})
		e.note(pod, "HoldLabel", "r1")
		j, _ := e.w.next()
		done := make(chan error)
		go func() { done <- e.w.write(context.Background(), j) }()
		waitWaiters(t, e.clk)
		e.note(pod, "HoldLabel", "r2") // while the first write backs off
		mu.Lock()
		failing = false
		mu.Unlock()
		e.clk.Step(heldBackoff)
		if err := <-done; err != nil {
			t.Fatalf("superseded write: %v", err)
		}
		if got := e.condition(t, "a"); got != "none" {
			t.Errorf("after the superseded write: condition %q, want none (the later note is written instead)", got)
		}
		e.flush(t)
		if got := e.condition(t, "a"); got != "False HoldLabel: r2" {
			t.Errorf("condition %q", got)
		}
	})
}

func waitWaiters(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the writer never waited for its backoff")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHeldWriterAndUnschedulable: an attempt's Unschedulable condition
// that a held condition replaced is written again when the next attempt
// says the same (the cycle's memo of written conditions is forgotten).
func TestHeldWriterAndUnschedulable(t *testing.T) {
	pod := heldPodObj("a")
	e := newHeldEnv(t, pod)
	ctx := context.Background()
	unsched := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, Message: "0/1 nodes"}
	if err := e.api.SetCondition(ctx, pod, unsched); err != nil {
		t.Fatal(err)
	}
	e.note(pod, abi.PluginGangScheduling, "1 of 2")
	e.flush(t)
	e.note(pod, "", "")
	e.flush(t)
	if got := e.condition(t, "a"); got != "none" {
		t.Fatalf("after the release: %q", got)
	}
	if err := e.api.SetCondition(ctx, pod, unsched); err != nil {
		t.Fatal(err)
	}
	if got := e.condition(t, "a"); got != "False Unschedulable: 0/1 nodes" {
		t.Errorf("after the next attempt: condition %q, want it Unschedulable again", got)
	}
}

// TestHeldWriterRun: Run writes what was noted before it started (a
// replica that becomes leader) and what is noted while it runs, and ends
// with its context.
func TestHeldWriterRun(t *testing.T) {
	a, b := heldPodObj("a"), heldPodObj("b")
	e := newHeldEnv(t, a, b)
	e.note(a, "HoldLabel", "before")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.w.Run(ctx) }()
	e.note(b, "HoldLabel", "while")
	deadline := time.Now().Add(10 * time.Second)
	for e.condition(t, "a") != "False HoldLabel: before" || e.condition(t, "b") != "False HoldLabel: while" {
		if time.Now().After(deadline) {
			t.Fatalf("not written: a %q, b %q", e.condition(t, "a"), e.condition(t, "b"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestHeldCondition(t *testing.T) {
	long := strings.Repeat("é", abi.MaxReasonLen)
	for _, c := range []struct{ plugin, reason, wantReason, wantMsg string }{
		{"HoldLabel", "pod has label x", "HoldLabel", "pod has label x"},
		{abi.PluginSchedulingGates, "g", v1.PodReasonSchedulingGated, "g"},
		{"not a reason!", "why", "PreEnqueue", "not a reason!: why"},
		// é is two bytes: the cut at 1021 falls inside one and moves back to 1020.
		{"HoldLabel", long, "HoldLabel", long[:abi.MaxReasonLen-4] + "..."},
	} {
		r, m := heldCondition(c.plugin, c.reason)
		if r != c.wantReason || m != c.wantMsg {
			t.Errorf("heldCondition(%q, %.20q) = %q, %.20q, want %q, %.20q", c.plugin, c.reason, r, m, c.wantReason, c.wantMsg)
		}
		if len(m) > abi.MaxReasonLen {
			t.Errorf("message of %d bytes, want at most %d", len(m), abi.MaxReasonLen)
		}
	}
}

// TestHeldWriterHammer: notes from many goroutines while Run writes; once
// the last notes are in, every pod's condition is its last note's and the
// gauge counts exactly the pods left held.
func TestHeldWriterHammer(t *testing.T) {
	const pods, goroutines, rounds = 20, 8, 200
	objs := make([]*v1.Pod, pods)
	for i := range objs {
		objs[i] = heldPodObj(fmt.Sprintf("p%d", i))
	}
	e := newHeldEnv(t, objs...)
	e.w.clock = clock.RealClock{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.w.Run(ctx) }()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				p := objs[(g*rounds+r)%pods]
				switch r % 3 {
				case 0:
					e.note(p, "HoldLabel", fmt.Sprintf("r%d", r))
				case 1:
					e.note(p, abi.PluginGangScheduling, fmt.Sprintf("g%d", g))
				default:
					e.note(p, "", "")
				}
			}
		}()
	}
	wg.Wait()
	// The last word, from one goroutine: even pods held, odd released.
	want := map[string]string{}
	for i, p := range objs {
		if i%2 == 0 {
			e.note(p, "HoldLabel", "final")
			want[p.Name] = "False HoldLabel: final"
		} else {
			e.note(p, "", "")
			want[p.Name] = "none"
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := map[string]string{}
		for _, p := range objs {
			got[p.Name] = e.condition(t, p.Name)
		}
		if cmp.Equal(want, got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("conditions (-want, +got):\n%s", cmp.Diff(want, got))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if diff := cmp.Diff(map[string]int{"p/HoldLabel": pods / 2}, e.gauge.get()); diff != "" {
		t.Errorf("gauge (-want, +got):\n%s", diff)
	}
}
