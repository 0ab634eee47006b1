package queue

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
)

// heldLog records the queue's held notifications as "pod plugin: reason",
// "pod released" and "pod gone".
type heldLog struct {
	mu    sync.Mutex
	notes []string
}

func (l *heldLog) note(h Held) {
	s := h.Pod.Name
	switch {
	case h.Gone:
		s += " gone"
	case h.Plugin == "":
		s += " released"
	default:
		s += " " + h.Plugin + ": " + h.Reason
	}
	if h.Profile != "p" {
		s += " (profile " + h.Profile + ")"
	}
	l.mu.Lock()
	l.notes = append(l.notes, s)
	l.mu.Unlock()
}

// take returns the notes since the last take.
func (l *heldLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.notes
	l.notes = nil
	return out
}

// holdLabel holds a pod labelled "hold", its value in the reason (as
// guest-sdk/examples/holdlabel does).
func holdLabel(p abi.PodView) abi.Gate {
	if v, ok := p.Labels().Get("hold"); ok {
		return abi.Gate{Code: abi.GateWait, Plugin: "HoldLabel", Reason: "hold=" + v}
	}
	return abi.Gate{Code: abi.GateAdmit}
}

// TestHeldNotify: a gated pod is notified with its holder and reason once;
// an event that leaves them as they were notifies nothing, a new reason
// notifies once, admission notifies the release, and deleting a pod once
// held notifies that it is gone. A pod never held is never notified.
func TestHeldNotify(t *testing.T) {
	var log heldLog
	e := newEnv(t, WithProfile("p"), WithHeldNotify(log.note), WithPreEnqueue(policytest.NativePreEnqueue(holdLabel)))
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"a pod admitted at once", func() { e.q.Add(makePod("free").obj()) }, nil},
		{"a pod held by the slot", func() { e.q.Add(makePod("a").label("hold", "1").obj()) },
			[]string{"a HoldLabel: hold=1"}},
		{"a pod held by its scheduling gates", func() { e.q.Add(makePod("g").gate("example.com/wait").obj()) },
			[]string{"g SchedulingGates: waiting for scheduling gates: [example.com/wait]"}},
		// Every event runs PreEnqueue again (AlwaysQueue): same answer,
		// nothing to tell.
		{"events that change nothing", func() {
			e.q.MoveOnEvent(nodeAdd(makeNode("n1", 1000)))
			e.q.Update(makePod("a").label("hold", "1").obj(), makePod("a").label("hold", "1").label("x", "y").obj())
			e.q.MoveOnEvent(nodeAdd(makeNode("n2", 1000)))
		}, nil},
		{"a new reason", func() {
			e.q.Update(makePod("a").label("hold", "1").label("x", "y").obj(), makePod("a").label("hold", "2").label("x", "y").obj())
			e.q.MoveOnEvent(nodeAdd(makeNode("n3", 1000)))
		}, []string{"a HoldLabel: hold=2"}},
		{"the slot admits", func() {
			e.q.Update(makePod("a").label("hold", "2").label("x", "y").obj(), makePod("a").label("x", "y").obj())
		}, []string{"a released"}},
		{"the gates are removed", func() {
			e.q.Update(makePod("g").gate("example.com/wait").obj(), makePod("g").obj())
		}, []string{"g released"}},
		{"a held pod deleted", func() {
			e.q.Add(makePod("d").label("hold", "x").obj())
			e.q.Delete(makePod("d").obj())
		}, []string{"d HoldLabel: hold=x", "d gone"}},
	}
	for _, s := range steps {
		s.do()
		if diff := cmp.Diff(s.want, log.take()); diff != "" {
			t.Errorf("%s: notes (-want, +got):\n%s", s.name, diff)
		}
		e.check(t)
	}

	// Popped and bound: a pod once held says it is gone, one never held
	// says nothing.
	got := map[string]bool{}
	for range 3 {
		p := e.popPod(t)
		got[p.Object().Name] = true
		e.q.Scheduled(p.UID())
	}
	if diff := cmp.Diff(map[string]bool{"free": true, "a": true, "g": true}, got); diff != "" {
		t.Fatalf("popped (-want, +got):\n%s", diff)
	}
	notes := log.take()
	if diff := cmp.Diff(map[string]bool{"a gone": true, "g gone": true}, setOf(notes)); diff != "" || len(notes) != 2 {
		t.Errorf("after binding: notes %q, want a and g gone once each", notes)
	}
}

// TestHeldNotifyGang: a gang below quorum notifies each member with the
// gang's holder and reason, which changes as members arrive; the member
// that completes the quorum releases them all; a member deleted from a held
// gang is gone, the others keep their holder. (A member joining a held
// gang first takes its holder, then the move for its add event runs
// PreEnqueue again, as upstream: what counts is the last note.)
func TestHeldNotifyGang(t *testing.T) {
	var log heldLog
	count := func(p abi.PodView) abi.Gate {
		if p.GroupName() != "" && p.GroupMembers() < p.GroupMinCount() {
			return abi.Gate{Code: abi.GateWait, Plugin: gangPlugin, Reason: fmt.Sprintf("%d of %d", p.GroupMembers(), p.GroupMinCount())}
		}
		return abi.Gate{Code: abi.GateAdmit}
	}
	e := newEnv(t, WithProfile("p"), WithHeldNotify(log.note), WithPreEnqueue(policytest.NativePreEnqueue(count)),
		WithQueueingHint(gangHint()))
	e.q.AddPodGroup(makePodGroup("g", 3))
	steps := []struct {
		name string
		do   func()
		want map[string]string // pod -> its last note
	}{
		{"first member", func() { e.addMember(member("m1", "g").obj()) },
			map[string]string{"m1": "GangScheduling: 1 of 3"}},
		{"second member", func() { e.addMember(member("m2", "g").obj()) },
			map[string]string{"m1": "GangScheduling: 2 of 3", "m2": "GangScheduling: 2 of 3"}},
		// The group goes back to the pool as it was (PreEnqueue does not
		// run again, as upstream), so m1 keeps its note.
		{"a member deleted", func() { e.q.Delete(member("m2", "g").obj()) },
			map[string]string{"m2": "gone"}},
		{"it comes back", func() { e.addMember(member("m2", "g").obj()) },
			map[string]string{"m2": "GangScheduling: 2 of 3"}},
		{"quorum", func() { e.addMember(member("m3", "g").obj()) },
			map[string]string{"m1": "released", "m2": "released", "m3": "released"}},
		// An event that admits nothing new notifies nothing.
		{"a PodGroup update", func() {
			e.q.MoveOnEvent(podview.PodGroupEvent(abi.ActionUpdate, makePodGroup("g", 3), makePodGroup("g", 3), 3))
		}, map[string]string{}},
	}
	for _, s := range steps {
		s.do()
		notes := log.take()
		got := map[string]string{}
		for _, n := range notes {
			pod, what, _ := strings.Cut(n, " ")
			if got[pod] == what {
				t.Errorf("%s: %s notified twice with %q: %q", s.name, pod, what, notes)
			}
			got[pod] = what
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: last note per pod (-want, +got):\n%s\nnotes %q", s.name, diff, notes)
		}
		e.check(t)
	}
}

func setOf(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// TestHeldNotifyPreemption: a preemptor held while its evictions are
// written waits unschedulable until an event would move it; then it is
// gated by DefaultPreemption, and notified so, until Release.
func TestHeldNotifyPreemption(t *testing.T) {
	var log heldLog
	e := newEnv(t, WithProfile("p"), WithHeldNotify(log.note), WithQueueingHint(fitHint()))
	p := e.heldPod(t, "p")
	if notes := log.take(); len(notes) != 0 {
		t.Errorf("held, no event yet: notes %q, want none", notes)
	}
	e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
	if diff := cmp.Diff([]string{"p DefaultPreemption: " + reasonHeldPod}, log.take()); diff != "" {
		t.Errorf("an event moves it while held (-want, +got):\n%s", diff)
	}
	e.q.Release(p, false)
	if diff := cmp.Diff([]string{"p released"}, log.take()); diff != "" {
		t.Errorf("released (-want, +got):\n%s", diff)
	}
	e.check(t)
}
