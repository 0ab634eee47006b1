package queue

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

// The memory regression tests of the 1.28 in-flight growth (kubernetes
// issues #122725, #120622): a pod that never reached Done pinned every later
// event. Here every path out of flight releases the pod, events nobody
// needs are not kept, and a hard cap bounds the rest.

func (e *env) idle(t testing.TB) {
	t.Helper()
	if s := e.q.Stats(); s.InFlightPods != 0 || s.InFlightEvents != 0 {
		t.Fatalf("in flight when idle: %+v", s)
	}
	if n := e.rec.inFlightTotal(); n != 0 {
		t.Fatalf("scheduler_inflight_events = %d when idle, want 0", n)
	}
	e.check(t)
}

func TestDeletedWhileInFlight(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	e.q.Add(makePod("p").obj())
	p := e.popPod(t)
	for i := range 50 {
		e.q.MoveOnEvent(nodeAdd(makeNode("n"+strconv.Itoa(i), 4000)))
	}
	if s := e.q.Stats(); s.InFlightEvents != 50 {
		t.Fatalf("stats %+v, want 50 events kept for the pod in flight", s)
	}
	e.q.Delete(p.obj)
	e.idle(t)
	// The cycle finds out later: both hand-backs are no-ops.
	if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
		t.Errorf("hand-back of a deleted pod: %v, want a silent drop", err)
	}
	e.q.Done(p.uid)
	if s := e.q.Stats(); s != (Stats{}) {
		t.Errorf("the deleted pod came back: %+v", s)
	}
	e.idle(t)
}

// TestDoneCalledLate: events are kept while a pod popped before them is in
// flight (its binding may take long), and released when it is done.
func TestDoneCalledLate(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	e.q.Add(makePod("slow").obj())
	slow := e.popPod(t)
	for i := range 100 {
		// Other pods come and go meanwhile.
		name := "fast" + strconv.Itoa(i)
		e.q.Add(makePod(name).obj())
		p := e.popPod(t)
		e.q.MoveOnEvent(nodeAdd(makeNode("n"+strconv.Itoa(i), 4000)))
		e.q.Done(p.uid)
	}
	if s := e.q.Stats(); s.InFlightPods != 1 || s.InFlightEvents != 100 {
		t.Fatalf("stats %+v, want the slow pod and the 100 events popped after it", s)
	}
	e.q.Done(slow.uid)
	e.idle(t)

	t.Run("the oldest pod done first releases the events before the next", func(t *testing.T) {
		e := newEnv(t, WithQueueingHint(fitHint()))
		e.q.Add(makePod("a").obj())
		e.q.Add(makePod("b").obj())
		a := e.popPod(t)
		e.q.MoveOnEvent(nodeAdd(makeNode("n1", 4000)))
		b := e.popPod(t)
		e.q.MoveOnEvent(nodeAdd(makeNode("n2", 4000)))
		e.q.Done(b.uid) // not the oldest: a still needs both events
		if s := e.q.Stats(); s.InFlightEvents != 2 {
			t.Fatalf("stats %+v, want 2 events", s)
		}
		e.q.Done(a.uid)
		e.idle(t)
	})
}

// TestDuplicateAdd: adding a pod the queue holds (queued or in flight)
// updates it; there is never a second entry to leak (PR #127016).
func TestDuplicateAdd(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	pod := makePod("p").rv("1").obj()
	e.q.Add(pod)
	e.q.Add(pod)
	if s := e.q.Stats(); s.Active != 1 {
		t.Fatalf("stats %+v, want 1 active", s)
	}
	p := e.popPod(t)
	e.q.Add(makePod("p").rv("2").obj()) // e.g. a relist while in flight
	if s := e.q.Stats(); s.Active != 0 || s.InFlightPods != 1 {
		t.Fatalf("stats %+v: the in-flight pod was queued twice", s)
	}
	if e.tryPop(t) != nil {
		t.Fatal("popped a pod that is already in flight")
	}
	e.q.Done(p.uid)
	e.idle(t)
	if s := e.q.Stats(); s != (Stats{}) {
		t.Errorf("stats %+v, want nothing left", s)
	}
}

// TestInFlightCap: past the cap the recorded events are dropped and every
// pod in flight is requeued as if an event had queued it.
func TestInFlightCap(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()), WithMaxInFlightEvents(100))
	e.q.Add(makePod("stuck").obj())
	stuck := e.popPod(t) // never Done in time
	for i := range 1000 {
		e.q.MoveOnEvent(nodeAdd(makeNode("small-"+strconv.Itoa(i), 1))) // all Skip for fit
		if s := e.q.Stats(); s.InFlightEvents > 100 {
			t.Fatalf("event %d: %d events kept, past the cap of 100", i, s.InFlightEvents)
		}
	}
	if e.rec.overflows == 0 {
		t.Fatal("the cap was never reached")
	}
	e.check(t)
	// A pod popped after the overflow is tracked as usual.
	e.q.Add(makePod("fresh").obj())
	fresh := e.popPod(t)
	e.q.MoveOnEvent(nodeAdd(makeNode("small", 1)))
	if s := e.q.Stats(); s.InFlightEvents != 1 {
		t.Fatalf("stats %+v, want the event after the fresh pod's pop kept", s)
	}
	// Every event said Skip, but the stuck pod lost them: requeued, not
	// parked. The fresh pod saw its one Skip: parked.
	for _, p := range []*Pod{stuck, fresh} {
		if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.where(stuck.uid); got != "backoff" {
		t.Errorf("the pod in flight at the overflow is %s, want backoff", got)
	}
	if got := e.where(fresh.uid); got != "unschedulable" {
		t.Errorf("the pod popped after the overflow is %s, want unschedulable", got)
	}
	e.idle(t)
}

// TestUnneededEventsNotKept: an event is kept only while a pod is in flight
// and only if some plugin registered it.
func TestUnneededEventsNotKept(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	e.q.MoveOnEvent(nodeAdd(makeNode("n", 4000))) // nobody in flight
	e.q.Add(makePod("p").obj())
	p := e.popPod(t)
	e.q.MoveOnEvent(nodeUpdate(makeNode("n", 4000), makeNode("n", 8000))) // nobody registered node updates
	if s := e.q.Stats(); s.InFlightEvents != 0 {
		t.Errorf("stats %+v, want no event kept", s)
	}
	e.q.Done(p.uid)
	e.idle(t)
}

// scaleCycles is the number of 0 <-> 60 scale cycles of TestScaleCycles
// (about 3 s); the heap is measured after a tenth of them and at the end.
// Under -race, whose instrumentation makes each cycle ~10x slower, it runs a
// tenth as many: the test is single-goroutine, so -race adds nothing to it
// but time (run it without -race for the full count).
var scaleCycles = 10000

func init() {
	if raceEnabled {
		scaleCycles = 1000
	}
}

// TestScaleCycles is upstream's reproducer of the 1.28 growth: a deployment
// scaled between 0 and 60 replicas in a loop, with node updates in between.
// All 60 pods are popped, a node update arrives while they are in flight, a
// third bind and the rest fail (replaying the update), another node update
// moves some of them, and all are deleted on scale-down. scheduler_inflight_events is 0 whenever the queue is idle,
// and the live heap does not grow with the number of cycles.
func TestScaleCycles(t *testing.T) {
	e := newEnv(t, WithQueueingHint(growHint))
	const replicas = 60
	pods := make([]*v1.Pod, replicas)
	for i := range pods {
		pods[i] = makePod("web-" + strconv.Itoa(i)).obj()
	}
	small, big := makeNode("n1", 1000), makeNode("n1", 2000)
	grow, shrink := nodeUpdate(small, big), nodeUpdate(big, small)
	cycles := scaleCycles
	uids := make([][replicas]types.UID, 2)
	for c := range uids {
		for i := range replicas {
			uids[c][i] = types.UID("uid-" + strconv.Itoa(c) + "-" + strconv.Itoa(i))
		}
	}

	var heapAt [2]uint64
	var inFlight [replicas]*Pod
	ctx := context.Background()
	start := time.Now()
	for c := range cycles {
		// Scale up: new pods (fresh UIDs, alternating between two sets so
		// that no string is built per cycle).
		for i, pod := range pods {
			pod.UID = uids[c%2][i]
			e.q.Add(pod)
		}
		e.q.MoveOnEvent(grow)
		for i := range replicas {
			en, err := e.q.Pop(ctx) // never blocks: the pods are queued
			if err != nil {
				t.Fatal(err)
			}
			inFlight[i] = en.(*Pod)
		}
		e.q.MoveOnEvent(shrink) // while all are in flight
		for i, p := range inFlight {
			if i%3 == 0 {
				e.q.Done(p.uid) // bound
			} else if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
				t.Fatal(err)
			}
			inFlight[i] = nil
		}
		e.q.MoveOnEvent(grow) // moves the unschedulable ones that now fit
		// Scale down.
		for _, pod := range pods {
			e.q.Delete(pod)
		}
		if s := e.q.Stats(); s != (Stats{}) {
			t.Fatalf("cycle %d: stats %+v after scaling down, want all zero", c, s)
		}
		if n := e.rec.inFlightTotal(); n != 0 {
			t.Fatalf("cycle %d: scheduler_inflight_events = %d when idle, want 0", c, n)
		}
		switch c + 1 {
		case cycles / 10:
			heapAt[0] = liveHeap()
		case cycles:
			heapAt[1] = liveHeap()
		}
	}
	e.check(t)
	t.Logf("%d cycles in %v; live heap %d KiB after %d cycles, %d KiB after %d",
		cycles, time.Since(start).Round(time.Millisecond), heapAt[0]>>10, cycles/10, heapAt[1]>>10, cycles)
	const tolerance = 256 << 10
	if heapAt[1] > heapAt[0]+tolerance {
		t.Errorf("the live heap grew by %d KiB between cycle %d and %d", (heapAt[1]-heapAt[0])>>10, cycles/10, cycles)
	}
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	if len(e.q.pods) != 0 || len(e.q.groups) != 0 || len(e.q.pool) != 0 {
		t.Errorf("the indexes hold %d pods, %d groups, %d pool entries", len(e.q.pods), len(e.q.groups), len(e.q.pool))
	}
}

// growHint queues NodeResourcesFit's pods when a node's allocatable cpu
// grows; it is cheap, so that TestScaleCycles measures the queue.
var growHint = policytest.NativeQueueingHint(hint.Plugin{
	Name:   fit,
	Events: []hint.Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable}},
	Hint: func(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
		o, _ := ev.OldNode()
		n, _ := ev.NewNode()
		if n.Allocatable().Get("cpu") > o.Allocatable().Get("cpu") {
			return abi.HintQueue, nil
		}
		return abi.HintSkip, nil
	},
})

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestGangCycles: pod groups come and go; members bind, fail, or are deleted
// while in flight (a member dropped from the gang). Nothing is left behind:
// no group, no pod, no in-flight entry, and the heap does not grow.
func TestGangCycles(t *testing.T) {
	e := newEnv(t)
	const size = 8
	cycles := scaleCycles / 10
	var heapAt [2]uint64
	for c := range cycles {
		pg := makePodGroup("gang", size)
		e.q.AddPodGroup(pg)
		pods := make([]*v1.Pod, size)
		for i := range pods {
			pods[i] = member("m"+strconv.Itoa(i), "gang").obj()
			pods[i].UID = types.UID("uid-" + strconv.Itoa(c) + "-" + strconv.Itoa(i))
			e.q.Add(pods[i])
		}
		g := e.popGroup(t)
		for i, m := range g.Members() {
			switch i % 4 {
			case 0, 1:
				e.q.Done(m.uid) // bound
			case 2:
				if err := e.q.AddUnschedulableIfNotPresent(m, rejectedBy("TopologyFit")); err != nil {
					t.Fatal(err)
				}
			case 3:
				e.q.Delete(m.obj) // dropped while in flight
			}
		}
		if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Rejected: rejectedBy("TopologyFit")}); err != nil {
			t.Fatal(err)
		}
		for _, pod := range pods {
			e.q.Delete(pod)
		}
		e.q.DeletePodGroup(pg)
		if s := e.q.Stats(); s != (Stats{}) {
			t.Fatalf("cycle %d: stats %+v, want all zero", c, s)
		}
		if n := e.rec.inFlightTotal(); n != 0 {
			t.Fatalf("cycle %d: scheduler_inflight_events = %d when idle, want 0", c, n)
		}
		switch c + 1 {
		case cycles / 10:
			heapAt[0] = liveHeap()
		case cycles:
			heapAt[1] = liveHeap()
		}
	}
	e.check(t)
	if heapAt[1] > heapAt[0]+256<<10 {
		t.Errorf("the live heap grew by %d KiB between cycle %d and %d", (heapAt[1]-heapAt[0])>>10, cycles/10, cycles)
	}
	e.q.mu.Lock()
	defer e.q.mu.Unlock()
	if len(e.q.pods) != 0 || len(e.q.groups) != 0 {
		t.Errorf("the indexes hold %d pods, %d groups", len(e.q.pods), len(e.q.groups))
	}
}
