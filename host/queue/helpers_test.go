package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

// t0 is on a whole second, so that the 1-second windows are easy to read.
var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// Builders of v1 test objects, after kube-scheduler's st.MakePod():
//
//	makePod("p").priority(5).cpu(500).obj()
//
// obj returns a deep copy, so one builder can yield several revisions.
type podWrapper struct{ p v1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{p: v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
	}}
}

func (w *podWrapper) obj() *v1.Pod                 { return w.p.DeepCopy() }
func (w *podWrapper) priority(v int32) *podWrapper { w.p.Spec.Priority = &v; return w }
func (w *podWrapper) rv(s string) *podWrapper      { w.p.ResourceVersion = s; return w }
func (w *podWrapper) node(s string) *podWrapper    { w.p.Spec.NodeName = s; return w }
func (w *podWrapper) gate(name string) *podWrapper {
	w.p.Spec.SchedulingGates = append(w.p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: name})
	return w
}
func (w *podWrapper) ungate() *podWrapper { w.p.Spec.SchedulingGates = nil; return w }
func (w *podWrapper) group(name string) *podWrapper {
	w.p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return w
}
func (w *podWrapper) label(k, v string) *podWrapper {
	if w.p.Labels == nil {
		w.p.Labels = map[string]string{}
	}
	w.p.Labels[k] = v
	return w
}
func (w *podWrapper) unlabel(k string) *podWrapper { delete(w.p.Labels, k); return w }

func makeNode(name string, cpuMilli int64) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:  *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
			v1.ResourcePods: *resource.NewQuantity(110, resource.DecimalSI),
		}},
	}
}

func makePodGroup(name string, minCount int32) *schedv1beta1.PodGroup {
	return &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pg-" + name),
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
}

func nodeAdd(n *v1.Node) abi.Event { return podview.NodeEvent(abi.ActionAdd, nil, n, nil, 0) }

func nodeUpdate(old, new *v1.Node) abi.Event {
	return podview.NodeEvent(podview.NodeUpdateActions(old, new), old, new, nil, 0)
}

// rejectedBy is a rejection by unschedulable plugins.
func rejectedBy(plugins ...string) podview.Plugins { return podview.Plugins{Unschedulable: plugins} }

// recorder is a Recorder that keeps its sums.
type recorder struct {
	mu        sync.Mutex
	pending   map[string]int
	entities  map[[2]string]int // queue, kind
	incoming  map[[2]string]int // queue, event
	inflight  map[string]int
	overflows int
	rescues   map[[2]string]int // profile, plugin
}

func newRecorder() *recorder {
	return &recorder{pending: map[string]int{}, entities: map[[2]string]int{}, incoming: map[[2]string]int{},
		inflight: map[string]int{}, rescues: map[[2]string]int{}}
}

func (r *recorder) PendingPods(q string, d int) { r.mu.Lock(); r.pending[q] += d; r.mu.Unlock() }
func (r *recorder) QueuedEntities(q, kind string, d int) {
	r.mu.Lock()
	r.entities[[2]string{q, kind}] += d
	r.mu.Unlock()
}
func (r *recorder) IncomingPods(q, ev string, n int) {
	r.mu.Lock()
	r.incoming[[2]string{q, ev}] += n
	r.mu.Unlock()
}
func (r *recorder) InFlightEvents(ev string, d int) { r.mu.Lock(); r.inflight[ev] += d; r.mu.Unlock() }
func (r *recorder) InFlightOverflow()               { r.mu.Lock(); r.overflows++; r.mu.Unlock() }
func (r *recorder) FlushRescue(profile, plugin string) {
	r.mu.Lock()
	r.rescues[[2]string{profile, plugin}]++
	r.mu.Unlock()
}

// flushRescues is wasmsched_queue_flush_rescues_total by profile and plugin.
func (r *recorder) flushRescues() map[[2]string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.rescues)
}

// inFlightTotal is scheduler_inflight_events summed over its labels.
func (r *recorder) inFlightTotal() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, v := range r.inflight {
		n += v
	}
	return n
}

func (r *recorder) incomingOf(queue, event string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.incoming[[2]string{queue, event}]
}

// env is a queue on a fake clock with a recorder.
type env struct {
	q   *Queue
	clk *testingclock.FakeClock
	rec *recorder
}

func newEnv(t testing.TB, opts ...Option) *env {
	t.Helper()
	e := &env{clk: testingclock.NewFakeClock(t0), rec: newRecorder()}
	e.q = New(append([]Option{WithClock(e.clk), WithRecorder(e.rec)}, opts...)...)
	t.Cleanup(e.q.Close)
	return e
}

// popTimeout bounds a Pop that must return: a liveness bound, not a timing
// assertion.
const popTimeout = 10 * time.Second

func (e *env) pop(t testing.TB) Entity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), popTimeout)
	defer cancel()
	en, err := e.q.Pop(ctx)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return en
}

func (e *env) popPod(t testing.TB) *Pod {
	t.Helper()
	p, ok := e.pop(t).(*Pod)
	if !ok {
		t.Fatal("Pop returned a group, want a pod")
	}
	return p
}

// tryPop pops without blocking: nil when Pop would block.
func (e *env) tryPop(t testing.TB) Entity {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	en, err := e.q.Pop(ctx)
	switch {
	case errors.Is(err, context.Canceled):
		return nil
	case err != nil:
		t.Fatalf("Pop: %v", err)
	}
	return en
}

// popNames pops until Pop would block and returns the names.
func (e *env) popNames(t testing.TB) []string {
	t.Helper()
	var names []string
	for {
		en := e.tryPop(t)
		if en == nil {
			return names
		}
		names = append(names, nameOf(en))
	}
}

func nameOf(en Entity) string {
	switch x := en.(type) {
	case *Pod:
		return x.obj.Name
	case *Group:
		return "group:" + x.key.name
	}
	return "?"
}

// where reports a pod's place for tests: its location, or its group's.
func (e *env) where(uid types.UID) string {
	q := e.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	defer q.amu.Unlock()
	p := q.pods[uid]
	if p == nil {
		return "gone"
	}
	if p.where == locMember {
		return p.grp.where.String()
	}
	return p.where.String()
}

func (e *env) check(t testing.TB) {
	t.Helper()
	if err := e.q.checkInvariants(e.rec); err != nil {
		t.Fatal(err)
	}
}

// checkInvariants cross-checks the queue's structures, counts and gauges.
func (q *Queue) checkInvariants(rec *recorder) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	defer q.amu.Unlock()
	if err := q.flight.check(); err != nil {
		return err
	}
	var counts [numLocations]int
	entities := map[[2]string]int{}
	seen := map[*entity]bool{}
	place := func(e *entity, l location) error {
		if seen[e] {
			return fmt.Errorf("entity in two places")
		}
		seen[e] = true
		if e.where != l {
			return fmt.Errorf("entity %s found in %s", e.where, l)
		}
		counts[l] += e.size()
		if lb := l.entityLabel(); lb != "" {
			kind := EntityPod
			if e.group != nil {
				kind = EntityPodGroup
			}
			entities[[2]string{lb, kind}]++
		}
		return nil
	}
	for _, h := range []struct {
		h *heap
		l location
	}{{q.active, locActive}, {q.backoff, locBackoff}, {q.errBackoff, locErrorBackoff}} {
		for i, he := range h.h.es {
			if he.e.hidx != i {
				return fmt.Errorf("heap index %d stored as %d", i, he.e.hidx)
			}
			if err := place(he.e, h.l); err != nil {
				return err
			}
		}
	}
	for i, e := range q.pool {
		if e.upos != i {
			return fmt.Errorf("pool index %d stored as %d", i, e.upos)
		}
		if !e.where.inPool() {
			return fmt.Errorf("pool entity is %s", e.where)
		}
		if err := place(e, e.where); err != nil {
			return err
		}
	}
	for _, g := range q.groups {
		switch g.where {
		case locIncomplete:
			if err := place(&g.entity, locIncomplete); err != nil {
				return err
			}
		case locInFlight:
			counts[locPending] += len(g.pending)
			for _, p := range g.pending {
				if p.where != locPending {
					return fmt.Errorf("pending member %s is %s", p.obj.Name, p.where)
				}
			}
		}
		if g.where != locInFlight && len(g.pending) > 0 {
			return fmt.Errorf("group %s is %s with pending members", g.key.name, g.where)
		}
		for _, p := range g.members {
			if p.where != locMember {
				return fmt.Errorf("member %s of group %s is %s", p.obj.Name, g.key.name, p.where)
			}
		}
	}
	for uid, p := range q.pods {
		if p.uid != uid {
			return fmt.Errorf("pod %s indexed as %s", p.uid, uid)
		}
		switch {
		case p.where == locInFlight:
			if !q.flight.inFlight(p) && !q.closed {
				return fmt.Errorf("pod %s in flight but not tracked", p.obj.Name)
			}
		case p.grp == nil && !seen[&p.entity]:
			return fmt.Errorf("pod %s is %s but in no queue", p.obj.Name, p.where)
		case p.grp != nil && p.where == locMember && !seen[&p.grp.entity]:
			return fmt.Errorf("member %s: its group (%s) is in no queue", p.obj.Name, p.grp.where)
		}
	}
	for l := range numLocations {
		if counts[l] != q.counts[l] && location(l).label() != "" {
			return fmt.Errorf("%s: %d pods there, %d counted", location(l), counts[l], q.counts[l])
		}
	}
	if rec != nil {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for l := range numLocations {
			lb := location(l).label()
			if lb == "" || l == locErrorBackoff {
				continue
			}
			want := q.counts[l]
			if l == locBackoff {
				want += q.counts[locErrorBackoff]
			}
			if rec.pending[lb] != want {
				return fmt.Errorf("gauge pending{%s} = %d, want %d", lb, rec.pending[lb], want)
			}
		}
		for k, v := range rec.entities {
			if v != entities[k] {
				return fmt.Errorf("gauge queued_entities{%s,%s} = %d, want %d", k[0], k[1], v, entities[k])
			}
		}
		for k, v := range entities {
			if rec.entities[k] != v {
				return fmt.Errorf("gauge queued_entities{%s,%s} = %d, want %d", k[0], k[1], rec.entities[k], v)
			}
		}
		n := 0
		for _, v := range rec.inflight {
			n += v
		}
		if n != q.flight.pods+q.flight.events {
			return fmt.Errorf("gauge inflight_events = %d, want %d pods + %d events", n, q.flight.pods, q.flight.events)
		}
	}
	return nil
}

// countingPreEnqueue counts the calls of the PreEnqueue slot.
type countingPreEnqueue struct {
	inner policy.PreEnqueue
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingPreEnqueue) PreEnqueue(p abi.PodView) abi.Gate {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[p.Name()]++
	c.mu.Unlock()
	return c.inner.PreEnqueue(p)
}

func (c *countingPreEnqueue) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

// countingHint counts the calls and batch sizes of the QueueingHint slot.
type countingHint struct {
	policy.QueueingHint
	mu      sync.Mutex
	batches []int
}

func (c *countingHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	c.mu.Lock()
	c.batches = append(c.batches, len(pods))
	c.mu.Unlock()
	c.QueueingHint.Hints(ev, pods, out)
}

func (c *countingHint) calls() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.batches...)
}

// defaultProfileOver is the default profile over h.
func defaultProfileOver(t testing.TB, h framework.Handle) *framework.Profile {
	t.Helper()
	p, err := plugins.InTree().Default(h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testProfile is the default profile without listers, built once for the
// package's tests.
var testProfile = sync.OnceValue(func() *framework.Profile {
	p, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{}))
	if err != nil {
		panic(err)
	}
	return p
})
