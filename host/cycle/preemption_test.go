package cycle_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/queue"
)

// on is the pod bound to node.
func (b *podBuilder) on(node string) *podBuilder { b.p.Spec.NodeName = node; return b }

// never sets preemptionPolicy: Never.
func (b *podBuilder) never() *podBuilder {
	never := v1.PreemptNever
	b.p.Spec.PreemptionPolicy = &never
	return b
}

// addRunning adds bound pods to the cache and the fake apiserver, as the
// informer would.
func (e *env) addRunning(pods ...*v1.Pod) {
	e.t.Helper()
	for _, p := range pods {
		if err := e.cache.AddPod(p); err != nil {
			e.t.Fatalf("add %s to the cache: %v", p.Name, err)
		}
		e.api.add(p)
	}
}

// condition is the last PodScheduled message written for pod ("" if none).
func (e *env) condition(pod *v1.Pod) string {
	var msg string
	for _, c := range e.api.conditions() {
		if c.Pod == key(pod.Namespace, pod.Name) && c.Type == v1.PodScheduled {
			msg = c.Message
		}
	}
	return msg
}

// reasonEvents are the events of the given reason, sorted by object (the
// Preempted events come from parallel evictions).
func (e *env) reasonEvents(reason string) []event {
	var out []event
	for _, ev := range e.events.all() {
		if ev.Reason == reason {
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, func(a, b event) int { return strings.Compare(a.Object, b.Object) })
	return out
}

// reverseOrder is the victim-order slot with the order of o reversed: the
// most important victim is preempted first.
type reverseOrder struct{ o policy.VictimOrder }

var _ policy.VictimOrder = reverseOrder{}

func (r reverseOrder) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	r.o.Order(preemptor, victims, order)
	slices.Reverse(order)
}

func isGroup(e queue.Entity) bool { _, ok := e.(*queue.Group); return ok }

func isPod(e queue.Entity, pod *v1.Pod) bool {
	p, ok := e.(*queue.Pod)
	return ok && p.UID() == pod.UID
}

const evictMsg = profile + ": preempting to accommodate a higher priority pod"

// A pod that fits nowhere preempts on the node where it fits once the least
// important victims (in the slot's order) are gone: they are evicted, the
// pod is nominated there, and its condition says so.
func TestPreemptionEvictsTheLeastImportantVictim(t *testing.T) {
	tests := []struct {
		name   string
		order  policy.VictimOrder
		victim string
	}{
		{"native default", nil, "v-low"},
		{"importance", policy.Importance{}, "v-low"},
		{"reversed importance", reverseOrder{policy.Importance{}}, "v-high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nom := cycle.NewNominator()
			e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{Order: tt.order}))
			e.addNodes(makeNode("n1", "cpu", "3").obj())
			// Room for the preemptor once any one of them is gone.
			e.addRunning(
				makePod("v-high").priority(5).req("cpu", "1").on("n1").obj(),
				makePod("v-mid").priority(3).req("cpu", "1").on("n1").obj(),
				makePod("v-low").priority(1).req("cpu", "1").on("n1").obj(),
			)
			pod := makePod("p").priority(10).req("cpu", "1").obj()
			e.addPods(pod)

			e.scheduleNext()

			if diff := cmp.Diff([]string{"default/" + tt.victim + ": " + evictMsg}, e.api.evictions()); diff != "" {
				t.Errorf("evictions (-want, +got):\n%s", diff)
			}
			wantWrites := []string{"nominate default/p n1", "evict default/" + tt.victim}
			if diff := cmp.Diff(wantWrites, e.api.writeLog()); diff != "" {
				t.Errorf("API writes (-want, +got):\n%s", diff)
			}
			wantEvents := []event{{Object: "default/" + tt.victim, Type: v1.EventTypeNormal, Reason: "Preempted",
				Action: "Preempting", Note: "Preempted by pod uid-p on node n1"}}
			if diff := cmp.Diff(wantEvents, e.reasonEvents("Preempted")); diff != "" {
				t.Errorf("Preempted events (-want, +got):\n%s", diff)
			}
			const msg = "0/1 nodes are available: 1 Insufficient cpu. " +
				"preemption: found a potential placement for pod on node n1, preempting 1 victims"
			wantConds := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
				Reason: v1.PodReasonUnschedulable, Message: msg, LastTransitionTime: t0}}
			if diff := cmp.Diff(wantConds, e.api.conditions()); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff([]preemption{{Victims: 1, Found: true}}, e.rec.podPreemptions()); diff != "" {
				t.Errorf("recorded preemptions (-want, +got):\n%s", diff)
			}
			if got := nom.NodeOf(pod.UID); got != "n1" {
				t.Errorf("Nominator has the preemptor on %q, want n1", got)
			}
			if got := e.state(pod.UID); got != queue.QueueUnschedulable {
				t.Errorf("preemptor in %q, want %q until its victims are gone", got, queue.QueueUnschedulable)
			}
			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds %+v, want none", got)
			}
		})
	}
}

// A preemption that finds nothing evicts nothing and nominates no one; the
// message says why. Only "no candidate" clears an earlier nomination
// (upstream's PostFilterResult with an empty nominated node).
func TestPreemptionFindsNothing(t *testing.T) {
	tests := []struct {
		name      string
		pod       *podBuilder
		nominated bool // the pod was nominated to n1 by an earlier preemption
		msg       string
		// wantNominations are the Nominate calls; wantNode is where the
		// Nominator has the pod afterwards.
		wantNominations []string
		wantNode        string
		wantRecorded    []preemption
	}{
		{
			name: "preemptionPolicy Never",
			pod:  makePod("p").priority(10).req("cpu", "1").never(),
			msg: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). " +
				"preemption: not eligible due to preemptionPolicy=Never.",
			wantRecorded: []preemption{{}},
		},
		{
			name:      "preemptionPolicy Never keeps its nomination",
			pod:       makePod("p").priority(10).req("cpu", "1").never(),
			nominated: true,
			msg: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). " +
				"preemption: not eligible due to preemptionPolicy=Never.",
			wantNode:     "n1",
			wantRecorded: []preemption{{}},
		},
		{
			name: "no candidate",
			pod:  makePod("p").priority(1).req("cpu", "1"),
			msg: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). " +
				"preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, " +
				"1 Preemption is not helpful for scheduling.",
			wantRecorded: []preemption{{}},
		},
		{
			name:      "no candidate clears the nomination",
			pod:       makePod("p").priority(1).req("cpu", "1"),
			nominated: true,
			msg: "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). " +
				"preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, " +
				"1 Preemption is not helpful for scheduling.",
			wantNominations: []string{"default/p "},
			wantRecorded:    []preemption{{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nom := cycle.NewNominator()
			e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
			// n1 is full of pods no more important than 5; n2 does not
			// tolerate the pod at all (preemption is not helpful there).
			e.addNodes(makeNode("n1", "cpu", "1").obj(), makeNode("n2", "cpu", "4").taint("k", v1.TaintEffectNoSchedule).obj())
			e.addRunning(makePod("v").priority(5).req("cpu", "1").on("n1").obj())
			b := tt.pod
			if tt.nominated {
				b = b.nominated("n1")
			}
			pod := b.obj()
			if tt.nominated {
				nom.Set(pod, "n1")
			}
			e.addPods(pod)

			e.scheduleNext()

			if got := e.condition(pod); got != tt.msg {
				t.Errorf("condition message\n got %q\nwant %q", got, tt.msg)
			}
			if got := e.api.evictions(); len(got) != 0 {
				t.Errorf("evictions %q, want none", got)
			}
			if diff := cmp.Diff(tt.wantNominations, e.api.nominations()); diff != "" {
				t.Errorf("Nominate calls (-want, +got):\n%s", diff)
			}
			if got := nom.NodeOf(pod.UID); got != tt.wantNode {
				t.Errorf("Nominator has the pod on %q, want %q", got, tt.wantNode)
			}
			if diff := cmp.Diff(tt.wantRecorded, e.rec.podPreemptions()); diff != "" {
				t.Errorf("recorded preemptions (-want, +got):\n%s", diff)
			}
			if got := e.reasonEvents("Preempted"); len(got) != 0 {
				t.Errorf("Preempted events %+v, want none", got)
			}
		})
	}
}

// The room a preemption made is kept for the preemptor while it is
// nominated: a less important pod that would fit there once the victim is
// gone goes nowhere, and the preemptor, tried again, takes its node even
// though another node now scores better.
func TestPreemptorKeepsTheRoomItMade(t *testing.T) {
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
	e.addNodes(makeNode("n1", "cpu", "2").obj())
	victim := makePod("v").priority(0).req("cpu", "2").on("n1").obj()
	e.addRunning(victim)
	preemptor := makePod("p").priority(10).req("cpu", "2").obj()
	e.addPods(preemptor)

	e.scheduleNext()

	if diff := cmp.Diff([]string{"default/v: " + evictMsg}, e.api.evictions()); diff != "" {
		t.Fatalf("evictions (-want, +got):\n%s", diff)
	}
	// The informer shows the victim deleted.
	if err := e.cache.RemovePod(victim); err != nil {
		t.Fatal(err)
	}
	lower := makePod("l").priority(5).req("cpu", "1").obj()
	e.addPods(lower)

	if ent := e.scheduleNext(); !isPod(ent, lower) {
		t.Fatalf("popped %v, want the lower-priority pod", ent)
	}

	if got := e.cachedNode(lower.UID); got != "" {
		t.Errorf("lower-priority pod placed on %q, in the room kept for the preemptor", got)
	}
	const msg = "0/1 nodes are available: 1 Insufficient cpu. " +
		"preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
	if got := e.condition(lower); got != msg {
		t.Errorf("lower-priority pod's condition\n got %q\nwant %q", got, msg)
	}
	if got := nom.NodeOf(preemptor.UID); got != "n1" {
		t.Fatalf("preemptor nominated to %q after the other pod's attempt, want n1", got)
	}

	// A roomier node arrives: the preemptor still goes to the node made for it.
	e.addNodes(makeNode("n2", "cpu", "8").obj())
	e.q.Activate(preemptor)
	if ent := e.scheduleNext(); !isPod(ent, preemptor) {
		t.Fatalf("popped %v, want the preemptor", ent)
	}

	if diff := cmp.Diff(map[string]string{"default/p": "n1"}, e.api.boundTo()); diff != "" {
		t.Errorf("bound pods (-want, +got):\n%s", diff)
	}
	if got := nom.NodeOf(preemptor.UID); got != "" {
		t.Errorf("preemptor still nominated to %q once bound", got)
	}
}

// The nominations of less important pods on the chosen node are withdrawn
// (after the evictions); more important ones are kept, and hold their room.
func TestPreemptionWithdrawsLowerNominations(t *testing.T) {
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
	e.addNodes(makeNode("n1", "cpu", "3").obj())
	e.addRunning(makePod("v").priority(0).req("cpu", "1").on("n1").obj())
	// Neither is in the queue: both wait for their victims elsewhere.
	lowerNom := makePod("q").priority(5).req("cpu", "1").nominated("n1").obj()
	higherNom := makePod("r").priority(20).req("cpu", "1").nominated("n1").obj()
	nom.Set(lowerNom, "n1")
	nom.Set(higherNom, "n1")
	// With r's room held, p fits only once v is gone; q's room is taken.
	preemptor := makePod("p").priority(10).req("cpu", "2").obj()
	e.addPods(preemptor)

	e.scheduleNext()

	// As upstream's asynchronous preemption: the lower nominations are
	// withdrawn before the evictions.
	want := []string{"nominate default/p n1", "nominate default/q ", "evict default/v"}
	if diff := cmp.Diff(want, e.api.writeLog()); diff != "" {
		t.Errorf("API writes (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p", "r"}, onNode(nom, "n1")); diff != "" {
		t.Errorf("nominated to n1 (-want, +got):\n%s", diff)
	}
	if got := nom.NodeOf(lowerNom.UID); got != "" {
		t.Errorf("lower-priority pod still nominated to %q", got)
	}
}

// While a preemption's evictions are written, its preemptor is held in
// the queue and the cycle goes on: other pods are popped and bound. When
// the evictions are written the hold is released, and the preemptor, which
// the victim's deletion queued meanwhile, binds where it preempted. The
// test runs in a synctest bubble, so that it can tell when every binding
// started is done while the eviction is still blocked (synctest.Wait)
// instead of guessing with a sleep.
func TestPreemptorHeldWhileOthersAreScheduled(t *testing.T) {
	synctest.Test(t, testPreemptorHeld)
}

func testPreemptorHeld(t *testing.T) {
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	e.api.evictHook = func(*v1.Pod) error { <-release; return nil }

	e.addNodes(makeNode("n1", "cpu", "1").label("zone", "a").obj(), makeNode("n2", "cpu", "4").obj())
	victim := makePod("v").priority(0).req("cpu", "1").on("n1").obj()
	e.addRunning(victim)
	preemptor := makePod("p").priority(10).req("cpu", "1").selector("zone", "a").obj()
	e.addPods(preemptor)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ent, err := e.q.Pop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.s.ScheduleOne(ctx, ent) // the eviction blocks in the background
	if got := nom.NodeOf(preemptor.UID); got != "n1" {
		t.Fatalf("preemptor nominated to %q, want n1", got)
	}
	// The informer shows the victim gone (its delete was sent before the
	// hook blocked, say) and the event queues the preemptor: it stays held.
	if err := e.cache.RemovePod(victim); err != nil {
		t.Fatal(err)
	}
	e.q.MoveOnEvent(podview.PodEvent(abi.ActionDelete, victim, nil, nil))
	st, _ := e.q.PodState(preemptor.UID)
	if st.Queue != queue.QueueGated || st.GatingPlugin != abi.PluginDefaultPreemption {
		t.Fatalf("preemptor's state while its eviction is written: %+v, want gated by %s", st, abi.PluginDefaultPreemption)
	}

	// Meanwhile other pods are scheduled.
	others := []*v1.Pod{makePod("o1").req("cpu", "1").obj(), makePod("o2").req("cpu", "1").obj()}
	e.addPods(others...)
	for range others {
		ent, err := e.q.Pop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if isPod(ent, preemptor) {
			t.Fatal("popped the preemptor while its eviction is written")
		}
		e.s.ScheduleOne(ctx, ent)
	}
	// Every goroutine is blocked: the bindings are done, the eviction is not.
	synctest.Wait()
	// v is still bound: its delete is not written yet.
	want := map[string]string{"default/o1": "n2", "default/o2": "n2", "default/v": "n1"}
	if diff := cmp.Diff(want, e.api.boundTo()); diff != "" {
		t.Fatalf("bound while the eviction is written (-want, +got):\n%s", diff)
	}

	unblock()
	e.s.WaitForBindings()
	// Where the victim's deletion sent it: backoffQ (its backoff is not
	// over on the fake clock), from which an empty activeQ pops it.
	if got := e.state(preemptor.UID); got != queue.QueueBackoff {
		t.Fatalf("preemptor is %q once its eviction is written, want %q", got, queue.QueueBackoff)
	}
	if ent := e.scheduleNext(); !isPod(ent, preemptor) {
		t.Fatalf("popped %v, want the preemptor", ent)
	}
	// o1 and o2 bind on goroutines of their own and the nomination is
	// written on the preemption's: the three in any order, the eviction
	// after the nomination.
	writes := []string{"bind default/o1 n2", "bind default/o2 n2", "nominate default/p n1", "evict default/v", "bind default/p n1"}
	got := e.api.writeLog()
	if len(got) == len(writes) {
		slices.Sort(got[:3])
	}
	if diff := cmp.Diff(writes, got); diff != "" {
		t.Errorf("API writes (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pod success"}, e.rec.writtenPreemptions()); diff != "" {
		t.Errorf("written preemptions (-want, +got):\n%s", diff)
	}
	if s := e.q.Stats(); s != (queue.Stats{}) {
		t.Errorf("queue idle at the end: %+v, want all zero (nothing in flight, no in-flight event)", s)
	}
}

// A failed eviction ends the hold at once: the preemptor's nomination is
// withdrawn (in memory and in its status) and it is activated, as upstream
// activates a preemptor whose preemption failed; its next attempt preempts
// again and reports it.
func TestPreemptionEvictionFails(t *testing.T) {
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
	// The failing eviction waits for the cycle to have requeued the
	// preemptor, as it does when the API answers slower than the cycle
	// ends; otherwise the order of the two is up to the Go scheduler.
	fail, cycleDone := true, make(chan struct{})
	e.api.evictHook = func(v *v1.Pod) error {
		if fail {
			<-cycleDone
			return apierrors.NewInternalError(errors.New("etcd is down"))
		}
		return nil
	}
	e.addNodes(makeNode("n1", "cpu", "1").obj())
	e.addRunning(makePod("v").priority(0).req("cpu", "1").on("n1").obj())
	preemptor := makePod("p").priority(10).req("cpu", "1").obj()
	e.addPods(preemptor)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.startNext(ctx)
	close(cycleDone)
	e.s.WaitForBindings()

	if got := nom.NodeOf(preemptor.UID); got != "" {
		t.Errorf("preemptor still nominated to %q after its eviction failed", got)
	}
	if diff := cmp.Diff([]string{"default/p n1", "default/p "}, e.api.nominations()); diff != "" {
		t.Errorf("Nominate calls (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pod error"}, e.rec.writtenPreemptions()); diff != "" {
		t.Errorf("written preemptions (-want, +got):\n%s", diff)
	}
	if got := e.state(preemptor.UID); got != queue.QueueActive {
		t.Fatalf("preemptor is %q after its eviction failed, want %q (activated)", got, queue.QueueActive)
	}
	if got := len(e.reasonEvents("Preempted")); got != 0 {
		t.Errorf("%d Preempted events for a failed eviction, want 0", got)
	}

	// Tried again, it preempts again; this time the eviction is written.
	fail = false
	if ent := e.scheduleNext(); !isPod(ent, preemptor) {
		t.Fatalf("popped %v, want the preemptor", ent)
	}
	if got := nom.NodeOf(preemptor.UID); got != "n1" {
		t.Errorf("preemptor nominated to %q after its second preemption, want n1", got)
	}
	if diff := cmp.Diff([]string{"default/v: " + evictMsg}, e.api.evictions()); diff != "" {
		t.Errorf("evictions (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pod error", "pod success"}, e.rec.writtenPreemptions()); diff != "" {
		t.Errorf("written preemptions (-want, +got):\n%s", diff)
	}
}

// A preemptor deleted while its evictions are written takes its hold with
// it: the evictions finish, nothing is requeued, nothing stays in flight.
func TestPreemptorDeletedWhileHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, cycle.WithPreemption(cycle.Preemption{}))
		release := make(chan struct{})
		e.api.evictHook = func(*v1.Pod) error { <-release; return nil }
		e.addNodes(makeNode("n1", "cpu", "1").obj())
		e.addRunning(makePod("v").priority(0).req("cpu", "1").on("n1").obj())
		preemptor := makePod("p").priority(10).req("cpu", "1").obj()
		e.addPods(preemptor)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.startNext(ctx)
		e.q.Delete(preemptor)
		close(release)
		e.s.WaitForBindings()
		if got := e.state(preemptor.UID); got != "" {
			t.Errorf("deleted preemptor is %q in the queue", got)
		}
		if s := e.q.Stats(); s != (queue.Stats{}) {
			t.Errorf("queue at the end: %+v, want all zero", s)
		}
		if diff := cmp.Diff([]string{"pod success"}, e.rec.writtenPreemptions()); diff != "" {
			t.Errorf("written preemptions (-want, +got):\n%s", diff)
		}
	})
}

// A victim-order slot swapped while a preemption is written neither
// blocks nor loses the hold: the next preemption uses the new slot, and the
// held preemptor comes back.
func TestHoldSurvivesASlotSwap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, cycle.WithPreemption(cycle.Preemption{}))
		release := make(chan struct{})
		e.api.evictHook = func(*v1.Pod) error { <-release; return nil }
		e.addNodes(makeNode("n1", "cpu", "1").obj())
		victim := makePod("v").priority(0).req("cpu", "1").on("n1").obj()
		e.addRunning(victim)
		preemptor := makePod("p").priority(10).req("cpu", "1").obj()
		e.addPods(preemptor)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.startNext(ctx)
		e.q.Activate(preemptor)
		e.s.SetVictimOrder(reverseOrder{policy.Importance{}})
		e.q.SetPreEnqueue(policy.Admit{})
		e.q.SetQueueingHint(policy.AlwaysQueue{})
		if st, _ := e.q.PodState(preemptor.UID); st.GatingPlugin != abi.PluginDefaultPreemption {
			t.Fatalf("preemptor's state after the swaps: %+v, want held", st)
		}
		close(release)
		e.s.WaitForBindings()
		if got := e.state(preemptor.UID); got != queue.QueueActive {
			t.Errorf("preemptor is %q once its eviction is written, want %q", got, queue.QueueActive)
		}
	})
}

// The victims are evicted all at once, not one after another: each
// eviction here waits for the others to have started. The test runs in a
// synctest bubble, whose clock moves only when every goroutine in it is
// blocked: an eviction gives up waiting (after 2 s of that clock) only if
// no other eviction can start, however slowly the machine runs them.
func TestPreemptionEvictsVictimsInParallel(t *testing.T) {
	synctest.Test(t, testEvictsInParallel)
}

func testEvictsInParallel(t *testing.T) {
	const victims = 3
	e := newEnv(t, cycle.WithPreemption(cycle.Preemption{}))
	var (
		mu      sync.Mutex
		started int
		all     = make(chan struct{})
		serial  bool // an eviction gave up waiting for the others
	)
	e.api.evictHook = func(*v1.Pod) error {
		mu.Lock()
		if started++; started == victims {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(2 * time.Second):
			mu.Lock()
			serial = true
			mu.Unlock()
		}
		return nil
	}
	e.addNodes(makeNode("n1", "cpu", "3").obj())
	for _, name := range []string{"v0", "v1", "v2"} {
		e.addRunning(makePod(name).priority(0).req("cpu", "1").on("n1").obj())
	}
	e.addPods(makePod("p").priority(10).req("cpu", "3").obj())

	e.scheduleNext()

	mu.Lock()
	defer mu.Unlock()
	if serial {
		t.Error("the evictions ran one after another, want all at once")
	}
	want := []string{"default/v0: " + evictMsg, "default/v1: " + evictMsg, "default/v2: " + evictMsg}
	if diff := cmp.Diff(want, e.api.evictions()); diff != "" {
		t.Errorf("evictions (-want, +got):\n%s", diff)
	}
	if got := len(e.reasonEvents("Preempted")); got != victims {
		t.Errorf("%d Preempted events, want %d", got, victims)
	}
	if diff := cmp.Diff([]preemption{{Victims: victims, Found: true}}, e.rec.podPreemptions()); diff != "" {
		t.Errorf("recorded preemptions (-want, +got):\n%s", diff)
	}
}

// A preemptor tried again while its victim is still terminating on its
// nominated node does not preempt again (KEP-902 eligibility): nothing more
// is evicted and it keeps its nomination.
func TestPreemptorWaitsForItsTerminatingVictim(t *testing.T) {
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{}))
	e.addNodes(makeNode("n1", "cpu", "1").obj(), makeNode("n2", "cpu", "1").obj())
	victim := makePod("v").priority(0).req("cpu", "1").on("n1").obj()
	other := makePod("w").priority(0).req("cpu", "1").on("n2").obj()
	e.addRunning(victim, other)
	preemptor := makePod("p").priority(10).req("cpu", "1").obj()
	e.addPods(preemptor)

	e.scheduleNext()

	if diff := cmp.Diff([]preemption{{Victims: 1, Found: true}}, e.rec.podPreemptions()); diff != "" {
		t.Fatalf("recorded preemptions (-want, +got):\n%s", diff)
	}
	node := nom.NodeOf(preemptor.UID)
	victimOf := map[string]*v1.Pod{"n1": victim, "n2": other}[node]
	if victimOf == nil {
		t.Fatalf("preemptor nominated to %q", node)
	}
	// The informer shows the victim terminating (DisruptionTarget, then
	// deletionTimestamp) and the preemptor nominated.
	terminating := victimOf.DeepCopy()
	terminating.DeletionTimestamp = terminating.CreationTimestamp.DeepCopy()
	terminating.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
		Reason: v1.PodReasonPreemptionByScheduler, Message: evictMsg}}
	if err := e.cache.UpdatePod(victimOf, terminating); err != nil {
		t.Fatal(err)
	}
	nominated := preemptor.DeepCopy()
	nominated.Status.NominatedNodeName = node
	e.q.Update(preemptor, nominated)
	e.q.Activate(nominated)

	e.scheduleNext()

	const msg = "0/2 nodes are available: 2 Insufficient cpu. " +
		"preemption: not eligible due to a terminating pod on the nominated node."
	if got := e.condition(preemptor); got != msg {
		t.Errorf("condition message\n got %q\nwant %q", got, msg)
	}
	if got := e.api.evictions(); len(got) != 1 {
		t.Errorf("evictions %q, want only the first one", got)
	}
	if diff := cmp.Diff([]string{"default/p " + node}, e.api.nominations()); diff != "" {
		t.Errorf("Nominate calls (-want, +got):\n%s", diff)
	}
	if got := nom.NodeOf(preemptor.UID); got != node {
		t.Errorf("preemptor nominated to %q, want %q still", got, node)
	}
	want := []preemption{{Victims: 1, Found: true}, {}}
	if diff := cmp.Diff(want, e.rec.podPreemptions()); diff != "" {
		t.Errorf("recorded preemptions (-want, +got):\n%s", diff)
	}
}

// A gang that does not fit preempts across the cluster: the victims are
// evicted on behalf of the PodGroup, each placed member is nominated, and
// each member reports why the group failed (the member that did not fit:
// its filters; the others: the quorum and the preemption).
func TestGroupPreemption(t *testing.T) {
	const (
		quorum     = "pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"
		groupEvict = profile + ": preempting to accommodate a higher priority podgroup"
	)
	tests := []struct {
		name    string
		nodes   []*v1.Node
		running []*v1.Pod
		// The victims (all on n1) and the Nominate calls; the members'
		// messages; the recorded group preemptions; the Nominator's nodes
		// of m1 and m2.
		wantVictims     []string
		wantNominations []string
		wantMsgs        map[string]string
		wantRecorded    []groupPreemption
		wantNominated   map[string]string
	}{
		{
			// m1 takes n1's free half; m2 finds no room. Both fit on n1 once
			// l0 and l1 are gone.
			name:  "victims on one node",
			nodes: []*v1.Node{makeNode("n1", "cpu", "4").obj()},
			running: []*v1.Pod{
				makePod("l0").priority(0).req("cpu", "1").on("n1").obj(),
				makePod("l1").priority(1).req("cpu", "1").on("n1").obj(),
			},
			wantVictims:     []string{"l0", "l1"},
			wantNominations: []string{"default/m1 n1", "default/m2 n1"},
			wantMsgs: map[string]string{
				"m1": quorum + ", pod group preemption: found a placement for podgroup, preempting 2 victims",
				"m2": "0/1 nodes are available: 1 Insufficient cpu.",
			},
			wantRecorded:  []groupPreemption{{Result: cycle.PreemptionSuccess, Victims: 2}},
			wantNominated: map[string]string{"m1": "n1", "m2": "n1"},
		},
		{
			// n2 is held by a more important pod; evicting l from n3 is not
			// enough room for a member.
			name: "cannot be helped",
			nodes: []*v1.Node{
				makeNode("n1", "cpu", "2").obj(), makeNode("n2", "cpu", "2").obj(), makeNode("n3", "cpu", "1").obj(),
			},
			running: []*v1.Pod{
				makePod("h").priority(20).req("cpu", "2").on("n2").obj(),
				makePod("l").priority(0).req("cpu", "1").on("n3").obj(),
			},
			wantMsgs: map[string]string{
				"m1": quorum + ", pod group preemption: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining",
				"m2": "0/3 nodes are available: 3 Insufficient cpu.",
			},
			wantRecorded:  []groupPreemption{{Result: cycle.PreemptionUnschedulable}},
			wantNominated: map[string]string{"m1": "", "m2": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := makePodGroup("g", 2)
			prio := int32(10)
			pg.Spec.Priority = &prio
			nom := cycle.NewNominator()
			e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{
				Group: func(namespace, name string) *schedv1beta1.PodGroup {
					if namespace == pg.Namespace && name == pg.Name {
						return pg
					}
					return nil
				},
			}))
			e.addNodes(tt.nodes...)
			e.addRunning(tt.running...)
			e.q.AddPodGroup(pg)
			members := []*v1.Pod{
				makePod("m1").group("g").priority(10).req("cpu", "2").obj(),
				makePod("m2").group("g").priority(10).req("cpu", "2").obj(),
			}
			e.addPods(members...)

			if ent := e.scheduleNext(); !isGroup(ent) {
				t.Fatalf("popped %T, want the group", ent)
			}

			var wantEvicted []string
			var wantEvents []event
			for _, v := range tt.wantVictims {
				wantEvicted = append(wantEvicted, "default/"+v+": "+groupEvict)
				wantEvents = append(wantEvents, event{Object: "default/" + v, Type: v1.EventTypeNormal,
					Reason: "Preempted", Action: "Preempting", Note: "Preempted by podgroup pg-g on node n1"})
			}
			if diff := cmp.Diff(wantEvicted, e.api.evictions()); diff != "" {
				t.Errorf("evictions (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNominations, e.api.nominations()); diff != "" {
				t.Errorf("Nominate calls (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantEvents, e.reasonEvents("Preempted")); diff != "" {
				t.Errorf("Preempted events (-want, +got):\n%s", diff)
			}
			gotMsgs := map[string]string{}
			gotNominated := map[string]string{}
			for _, m := range members {
				gotMsgs[m.Name] = e.condition(m)
				gotNominated[m.Name] = nom.NodeOf(m.UID)
			}
			if diff := cmp.Diff(tt.wantMsgs, gotMsgs); diff != "" {
				t.Errorf("members' condition messages (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNominated, gotNominated); diff != "" {
				t.Errorf("members' nominations (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRecorded, e.rec.groupPreemptions()); diff != "" {
				t.Errorf("recorded group preemptions (-want, +got):\n%s", diff)
			}
			if got := e.rec.podPreemptions(); len(got) != 0 {
				t.Errorf("pod preemptions %+v recorded for a group", got)
			}
			wantPG := []pgCondCall{{Group: "default/g", Type: schedv1beta1.PodGroupInitiallyScheduled,
				Status: metav1.ConditionFalse, Reason: schedv1beta1.PodGroupReasonUnschedulable, Message: tt.wantMsgs["m1"], GroupUID: "pg-g"}}
			if diff := cmp.Diff(wantPG, e.api.podGroupConditions()); diff != "" {
				t.Errorf("PodGroup conditions (-want, +got):\n%s", diff)
			}
			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds %+v, want none", got)
			}
		})
	}
}

// Once its victims are gone, a gang that preempted binds where it was
// nominated, even though another node has freed up meanwhile and scores
// better.
func TestGroupBindsWhereItPreempted(t *testing.T) {
	pg := makePodGroup("g", 2)
	prio := int32(10)
	pg.Spec.Priority = &prio
	nom := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(nom), cycle.WithPreemption(cycle.Preemption{
		Group: func(string, string) *schedv1beta1.PodGroup { return pg },
	}))
	e.addNodes(makeNode("n1", "cpu", "4").obj(), makeNode("n2", "cpu", "8").obj())
	l0 := makePod("l0").priority(0).req("cpu", "1").on("n1").obj()
	l1 := makePod("l1").priority(1).req("cpu", "1").on("n1").obj()
	big := makePod("big").priority(20).req("cpu", "8").on("n2").obj()
	e.addRunning(l0, l1, big)
	e.q.AddPodGroup(pg)
	members := []*v1.Pod{
		makePod("m1").group("g").priority(10).req("cpu", "2").obj(),
		makePod("m2").group("g").priority(10).req("cpu", "2").obj(),
	}
	e.addPods(members...)

	e.scheduleNext()

	// The informer shows the victims deleted, and big gone too.
	for _, p := range []*v1.Pod{l0, l1, big} {
		if err := e.cache.RemovePod(p); err != nil {
			t.Fatal(err)
		}
	}
	e.q.Activate(members...)
	if ent := e.scheduleNext(); !isGroup(ent) {
		t.Fatalf("popped %T, want the group", ent)
	}

	want := []string{"nominate default/m1 n1", "nominate default/m2 n1", "evict default/l0", "evict default/l1",
		"bind default/m1 n1", "bind default/m2 n1"}
	got := e.api.writeLog()
	// The evictions run in parallel, and so do the members' bindings.
	if len(got) == len(want) {
		slices.Sort(got[2:4])
		slices.Sort(got[4:6])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API writes (-want, +got):\n%s", diff)
	}
	for _, m := range members {
		if got := nom.NodeOf(m.UID); got != "" {
			t.Errorf("%s still nominated to %q once bound", m.Name, got)
		}
	}
}
