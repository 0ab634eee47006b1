package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// heldPod adds pod p, pops it, holds it (its attempt preempted) and hands
// it back rejected by NodeResourcesFit, as the scheduling cycle does.
func (e *env) heldPod(t *testing.T, name string) *Pod {
	t.Helper()
	e.q.Add(makePod(name).obj())
	p := e.popPod(t)
	e.q.Hold(p)
	if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
		t.Fatal(err)
	}
	return p
}

// gate is PodState's gating plugin for uid, "" if none.
func (e *env) gate(uid types.UID) string {
	st, _ := e.q.PodState(uid)
	return st.GatingPlugin
}

// The hold is released on every path out of a preemption, and the
// preemptor then goes where the moves decided meanwhile send it.
func TestHoldReleases(t *testing.T) {
	cases := []struct {
		name string
		// during runs while the pod is held, after it was handed back.
		during func(t *testing.T, e *env, p *Pod)
		// activate: the preemption failed.
		activate bool
		// wantHeld is where the pod is before Release, want after.
		wantHeld, want string
		wantEvent      string // incoming label of the release, if any
	}{{
		name: "evictions done, no event: it waits for one", wantHeld: "unschedulable", want: "unschedulable",
	}, {
		name: "evictions done, an event queued it meanwhile: backoff",
		during: func(t *testing.T, e *env, _ *Pod) {
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		},
		wantHeld: "gated", want: "backoff", wantEvent: "NodeAdd",
	}, {
		name: "evictions done, queued after its backoff: activeQ",
		during: func(t *testing.T, e *env, _ *Pod) {
			e.clk.Step(5 * time.Second)
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		},
		wantHeld: "gated", want: "active", wantEvent: "NodeAdd",
	}, {
		name: "evictions done, an event that skips: unschedulable",
		during: func(t *testing.T, e *env, _ *Pod) {
			e.q.MoveOnEvent(nodeAdd(makeNode("small", 4000)))
		},
		wantHeld: "unschedulable", want: "unschedulable",
	}, {
		name: "activated meanwhile: activeQ at release",
		during: func(t *testing.T, e *env, p *Pod) {
			e.q.Activate(p.obj)
		},
		wantHeld: "gated", want: "active", wantEvent: EventForceActivate,
	}, {
		name: "unschedulable timeout meanwhile: remembered",
		during: func(t *testing.T, e *env, _ *Pod) {
			e.clk.Step(DefaultMaxInUnschedulable + time.Second)
			e.q.flushLeftovers()
		},
		wantHeld: "gated", want: "active", wantEvent: EventUnschedulableTimeout,
	}, {
		name: "eviction failed: activeQ at once", activate: true,
		wantHeld: "unschedulable", want: "active", wantEvent: EventForceActivate,
	}, {
		name: "eviction failed after an event: activeQ", activate: true,
		during: func(t *testing.T, e *env, _ *Pod) {
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		},
		wantHeld: "gated", want: "active", wantEvent: EventForceActivate,
	}, {
		name: "slots swapped meanwhile: the hold is the queue's, not a slot's",
		during: func(t *testing.T, e *env, _ *Pod) {
			e.q.SetPreEnqueue(policy.Admit{})
			e.q.SetQueueingHint(fitHint())
			e.q.SetSort(policy.PrioritySort{})
			e.q.SetBackoffSort(policy.BackoffExpiry{})
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
		},
		wantHeld: "gated", want: "backoff", wantEvent: "NodeAdd",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, WithQueueingHint(fitHint()))
			p := e.heldPod(t, "p")
			if c.during != nil {
				c.during(t, e, p)
			}
			if got := e.where(p.uid); got != c.wantHeld {
				t.Fatalf("held, the pod is %s, want %s", got, c.wantHeld)
			}
			if c.wantHeld == "gated" {
				st, _ := e.q.PodState(p.uid)
				want := PodState{Queue: QueueGated, Attempts: 1, GatingPlugin: abi.PluginDefaultPreemption, GateReason: reasonHeldPod}
				if diff := cmp.Diff(want, st); diff != "" {
					t.Errorf("PodState while held (-want, +got):\n%s", diff)
				}
			}
			// Other pods are popped meanwhile; the held one is not.
			e.q.Add(makePod("other").obj())
			if got := e.popNames(t); !cmp.Equal(got, []string{"other"}) {
				t.Fatalf("popped %v while the preemptor is held, want [other]", got)
			}
			e.check(t)

			before := e.rec.incomingOf(c.want, c.wantEvent)
			e.q.Release(p, c.activate)

			if got := e.where(p.uid); got != c.want {
				t.Errorf("released, the pod is %s, want %s", got, c.want)
			}
			if got := e.gate(p.uid); got != "" {
				t.Errorf("released, the pod is still gated by %s", got)
			}
			if c.wantEvent != "" {
				if n := e.rec.incomingOf(c.want, c.wantEvent) - before; n != 1 {
					t.Errorf("incoming{%s, %s} += %d at release, want 1", c.want, c.wantEvent, n)
				}
			}
			// Released twice: nothing more happens.
			e.q.Release(p, true)
			if got := e.where(p.uid); got != c.want {
				t.Errorf("after a second Release the pod is %s, want %s", got, c.want)
			}
			e.check(t)
		})
	}
}

// A hold released before the preemptor is handed back (the evictions were
// quick) leaves nothing behind: the pod comes back as any other.
func TestHoldReleasedInFlight(t *testing.T) {
	for _, activate := range []bool{false, true} {
		e := newEnv(t, WithQueueingHint(fitHint()))
		e.q.Add(makePod("p").obj())
		p := e.popPod(t)
		e.q.Hold(p)
		e.q.Release(p, activate)
		if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
			t.Fatal(err)
		}
		// Activated in flight: requeued, after its backoff, as Activate
		// does for a pod in flight.
		want := map[bool]string{false: "unschedulable", true: "backoff"}[activate]
		if got := e.where(p.uid); got != want {
			t.Errorf("activate=%v: the pod is %s, want %s", activate, got, want)
		}
		if got := e.gate(p.uid); got != "" {
			t.Errorf("activate=%v: the pod is gated by %s", activate, got)
		}
		e.check(t)
	}
}

// A preemptor deleted while held takes its hold with it: the Release that
// comes when its evictions are written finds nothing, and nothing is left
// in flight or queued.
func TestHoldOfDeletedPreemptor(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	p := e.heldPod(t, "p")
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
	e.q.Delete(p.obj)
	e.q.Release(p, false)
	e.q.Release(p, true)
	// Re-created under the same name (another UID): not held.
	e.q.Add(func() *v1.Pod { p := makePod("p").obj(); p.UID = "uid-p2"; return p }())
	if got := e.popNames(t); !cmp.Equal(got, []string{"p"}) {
		t.Errorf("popped %v, want the new p", got)
	}
	if s := e.q.Stats(); s != (Stats{InFlightPods: 1}) {
		t.Errorf("stats %+v, want only the new pod in flight", s)
	}
	e.check(t)
}

// The hold is not visible to the policy slots: PreEnqueue is not asked
// about a held pod, and its record names only the plugins that rejected it.
func TestHoldNotVisibleToSlots(t *testing.T) {
	pre := &countingPreEnqueue{inner: policy.Admit{}}
	e := newEnv(t, WithQueueingHint(fitHint()), WithPreEnqueue(pre))
	p := e.heldPod(t, "p")
	calls := pre.count("p")
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
	e.q.Activate(p.obj)
	if got := pre.count("p") - calls; got != 0 {
		t.Errorf("PreEnqueue asked %d times about the held pod, want 0", got)
	}
	e.q.mu.Lock()
	unsched := append([]string(nil), p.plugins.Unschedulable...)
	recorded := p.view.UnschedulablePlugins()
	inRecord := recorded.Has(abi.PluginDefaultPreemption)
	e.q.mu.Unlock()
	if diff := cmp.Diff([]string{fit}, unsched); diff != "" {
		t.Errorf("rejecting plugins (-want, +got):\n%s", diff)
	}
	if inRecord || !recorded.Has(fit) {
		t.Errorf("the record's rejecting plugins: %s in it %v, %s in it %v; want only %s",
			abi.PluginDefaultPreemption, inRecord, fit, recorded.Has(fit), fit)
	}
	e.q.Release(p, false)
	if got := pre.count("p") - calls; got != 1 {
		t.Errorf("PreEnqueue asked %d times at release, want 1", got)
	}
	if got := e.where(p.uid); got != "active" {
		t.Errorf("the pod is %s, want active", got)
	}
}

// A pod group is held as one: its members arriving meanwhile wait with it,
// and the group is released as a unit.
func TestHoldGroup(t *testing.T) {
	e := newEnv(t)
	e.q.AddPodGroup(makePodGroup("g", 2))
	e.q.Add(member("m1", "g").obj())
	e.q.Add(member("m2", "g").obj())
	g := e.popGroup(t)
	e.q.Hold(g)
	for _, m := range g.Members() {
		if err := e.q.AddUnschedulableIfNotPresent(m, rejectedBy(fit)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Rejected: rejectedBy(fit)}); err != nil {
		t.Fatal(err)
	}
	e.q.Add(member("m3", "g").obj())
	st, _ := e.q.PodState("uid-m3")
	want := PodState{Queue: QueueGated, GatingPlugin: abi.PluginDefaultPreemption, GateReason: reasonHeldGroup}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("PodState of a member that arrived during the hold (-want, +got):\n%s", diff)
	}
	e.clk.Step(5 * time.Second) // past the group's backoff
	if got := e.popNames(t); len(got) != 0 {
		t.Fatalf("popped %v while the group is held", got)
	}
	e.check(t)

	e.q.Release(g, false)
	if got := e.popNames(t); !cmp.Equal(got, []string{"group:g"}) {
		t.Errorf("popped %v after the release, want the group", got)
	}
	e.check(t)
}

// Nothing of a hold stays in flight: with the queue idle after a held
// preemptor was released, scheduler_inflight_events is 0.
func TestHoldLeavesNothingInFlight(t *testing.T) {
	e := newEnv(t, WithQueueingHint(fitHint()))
	p := e.heldPod(t, "p")
	if s := e.q.Stats(); s.InFlightPods != 0 || s.InFlightEvents != 0 {
		t.Errorf("while held: %+v, want nothing in flight", s)
	}
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
	e.q.Release(p, false)
	e.clk.Step(5 * time.Second)
	e.q.flushBackoffCompleted()
	p = e.popPod(t)
	e.q.Done(p.uid)
	if s := e.q.Stats(); s != (Stats{}) {
		t.Errorf("idle: %+v, want all zero", s)
	}
	if n := e.rec.inFlightTotal(); n != 0 {
		t.Errorf("scheduler_inflight_events = %d when idle, want 0", n)
	}
	e.check(t)
}
