package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
)

const gangPlugin = abi.PluginGangScheduling

// gang is a PreEnqueue policy after upstream's GangScheduling: a member
// waits until its group has minCount known pods.
func gang(p abi.PodView) abi.Gate {
	if p.GroupName() != "" && p.GroupMembers() < p.GroupMinCount() {
		return abi.Gate{Code: abi.GateWait, Plugin: gangPlugin, Reason: "waiting for minCount pods from a gang to appear in scheduling queue"}
	}
	return abi.Gate{Code: abi.GateAdmit}
}

// gangHint queues a waiting member when a pod of its group is added or its
// PodGroup changes (upstream's GangScheduling events).
func gangHint() *countingHint {
	return &countingHint{QueueingHint: policytest.NativeQueueingHint(hint.Plugin{
		Name: gangPlugin,
		Events: []hint.Event{
			{Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionAdd},
			{Resource: abi.ResourcePodGroup, Actions: abi.ActionAdd | abi.ActionUpdate},
		},
		Hint: func(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
			if added, ok := ev.NewPod(); ok && added.GroupName() == p.GroupName() {
				return abi.HintQueue, nil
			}
			if pg, ok := ev.NewPodGroup(); ok && pg.Name() == p.GroupName() {
				return abi.HintQueue, nil
			}
			return abi.HintSkip, nil
		},
	})}
}

func member(name, group string) *podWrapper { return makePod(name).group(group) }

// addMember adds a member and sends the unscheduled-pod add event, as the
// event handler does.
func (e *env) addMember(pod *v1.Pod) {
	e.q.Add(pod)
	e.q.MoveOnEvent(podview.PodEvent(abi.ActionAdd, nil, pod, nil))
}

func memberNames(g *Group) []string {
	var names []string
	for _, p := range g.Members() {
		names = append(names, p.obj.Name)
	}
	return names
}

func (e *env) popGroup(t testing.TB) *Group {
	t.Helper()
	g, ok := e.pop(t).(*Group)
	if !ok {
		t.Fatal("Pop returned a pod, want a group")
	}
	return g
}

func TestGroupPoppedAsUnit(t *testing.T) {
	e := newEnv(t)
	pg := makePodGroup("g", 3)
	prio := int32(50)
	pg.Spec.Priority = &prio
	e.q.AddPodGroup(pg)
	e.q.Add(makePod("single").priority(10).obj())
	for i, n := range []string{"m1", "m2", "m3"} {
		e.clk.Step(time.Millisecond)
		e.q.Add(member(n, "g").priority(int32(50 + i%2)).obj())
	}
	if s := e.q.Stats(); s.Active != 4 {
		t.Fatalf("stats %+v, want 4 pods active", s)
	}
	e.check(t)
	g := e.popGroup(t)
	// The group sorts by its PodGroup's priority (50 > 10); members by
	// priority, then timestamp.
	if diff := cmp.Diff([]string{"m2", "m1", "m3"}, memberNames(g)); diff != "" {
		t.Errorf("members (-want, +got):\n%s", diff)
	}
	if g.Attempts() != 1 || g.PodGroup() != pg || g.View().Priority() != 50 || g.View().GroupMinCount() != 3 {
		t.Errorf("group: attempts %d, record priority %d minCount %d", g.Attempts(), g.View().Priority(), g.View().GroupMinCount())
	}
	for _, m := range g.Members() {
		if m.Attempts() != 1 || m.Group() != g || m.View().GroupMembers() != 3 {
			t.Errorf("member %s: attempts %d, members in record %d", m.obj.Name, m.Attempts(), m.View().GroupMembers())
		}
	}
	if s := e.q.Stats(); s.InFlightPods != 3 || s.Active != 1 {
		t.Errorf("stats %+v, want 3 pods in flight, 1 active", s)
	}
	if diff := cmp.Diff([]string{"single"}, e.popNames(t)); diff != "" {
		t.Errorf("after the group (-want, +got):\n%s", diff)
	}
	// Bound: every member Done, then the group handed back with nothing
	// pending leaves the queue.
	for _, m := range g.Members() {
		e.q.Done(m.uid)
	}
	if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Scheduled: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Scheduled: true}); err == nil {
		t.Error("handing a group back twice: want an error")
	}
	e.q.Done("uid-single")
	if s := e.q.Stats(); s != (Stats{}) {
		t.Errorf("stats %+v, want all zero", s)
	}
	if e.rec.inFlightTotal() != 0 {
		t.Errorf("scheduler_inflight_events = %d, want 0", e.rec.inFlightTotal())
	}
	e.check(t)
	// With its PodGroup gone and no member left, the group is forgotten.
	e.q.DeletePodGroup(pg)
	e.q.mu.Lock()
	n := len(e.q.groups)
	e.q.mu.Unlock()
	if n != 0 {
		t.Errorf("%d groups kept after the PodGroup and its pods are gone", n)
	}
}

func TestGroupIncomplete(t *testing.T) {
	e := newEnv(t)
	e.q.Add(member("m1", "g").obj())
	e.q.Add(member("m2", "g").obj())
	if s := e.q.Stats(); s.Incomplete != 2 || s.Active != 0 {
		t.Fatalf("stats %+v, want 2 incomplete", s)
	}
	if e.tryPop(t) != nil {
		t.Fatal("popped a group whose PodGroup is unseen")
	}
	if st, ok := e.q.PodState("uid-m1"); !ok || st.Queue != QueueIncomplete {
		t.Errorf("PodState(m1) = %+v, %v; want incomplete", st, ok)
	}
	e.q.Delete(member("m2", "g").obj())
	e.q.AddPodGroup(makePodGroup("g", 1))
	if s := e.q.Stats(); s.Incomplete != 0 || s.Active != 1 {
		t.Fatalf("stats %+v, want 1 active", s)
	}
	e.check(t)
	// Deleting the PodGroup sends the queued members back to waiting.
	e.q.DeletePodGroup(makePodGroup("g", 1))
	if s := e.q.Stats(); s.Incomplete != 1 || s.Active != 0 {
		t.Fatalf("after DeletePodGroup: stats %+v, want 1 incomplete", s)
	}
	e.q.AddPodGroup(makePodGroup("g", 1))
	g := e.popGroup(t)
	if diff := cmp.Diff([]string{"m1"}, memberNames(g)); diff != "" {
		t.Errorf("members (-want, +got):\n%s", diff)
	}
	e.check(t)
}

// TestGroupRequeuedAsUnit: members that fail, and members that arrive while
// the group is in flight, are requeued with the group, which backs off as a
// unit; its max backoff grows with its size.
func TestGroupRequeuedAsUnit(t *testing.T) {
	cases := []struct {
		name       string
		result     GroupResult
		wantWhere  string
		wantExpiry time.Duration // after the hand-back; 0: none
		keepsTime  bool
	}{
		// As upstream's, whose group infos carry no rejecting plugins: the
		// error heap, which a pop from backoffQ never takes early.
		{"rejected: error backoff", GroupResult{Rejected: rejectedBy("TopologyFit")}, "errorBackoff", time.Second, false},
		{"error: error backoff", GroupResult{}, "errorBackoff", time.Second, false},
		{"scheduled with a failed member: activeQ, timestamp kept", GroupResult{Scheduled: true}, "active", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.q.AddPodGroup(makePodGroup("g", 2))
			e.q.Add(member("m1", "g").obj())
			e.q.Add(member("m2", "g").obj())
			g := e.popGroup(t)
			before := g.Timestamp()
			e.q.Add(member("late", "g").obj())
			if got := e.where("uid-late"); got != "pending" {
				t.Fatalf("a member added in flight is %s, want pending", got)
			}
			for uid, want := range map[types.UID]string{"uid-late": QueuePending, "uid-m1": InFlight} {
				if st, _ := e.q.PodState(uid); st.Queue != want {
					t.Errorf("PodState(%s).Queue = %q, want %q", uid, st.Queue, want)
				}
			}
			e.clk.Step(400 * time.Millisecond)
			m1, m2 := g.Members()[0], g.Members()[1]
			e.q.Done(m1.uid) // bound
			if err := e.q.AddUnschedulableIfNotPresent(m2, rejectedBy("TopologyFit")); err != nil {
				t.Fatal(err)
			}
			if got := e.where(m2.uid); got != "pending" {
				t.Fatalf("a failed member is %s, want pending", got)
			}
			e.check(t)
			if err := e.q.AddAttemptedGroupIfNeeded(g, c.result); err != nil {
				t.Fatal(err)
			}
			if got := e.where("uid-late"); got != c.wantWhere {
				t.Fatalf("the group is %s, want %s", got, c.wantWhere)
			}
			e.q.mu.Lock()
			gotExpiry, ts, members := g.expiry, g.timestamp, memberNames(&Group{popped: g.members})
			e.q.mu.Unlock()
			if diff := cmp.Diff([]string{m2.obj.Name, "late"}, members); diff != "" {
				t.Errorf("requeued members (-want, +got):\n%s", diff)
			}
			var want time.Time
			if c.wantExpiry > 0 {
				want = e.q.align(e.clk.Now().Add(c.wantExpiry))
			}
			if !gotExpiry.Equal(want) {
				t.Errorf("expiry %v, want %v", gotExpiry, want)
			}
			if c.keepsTime != ts.Equal(before) {
				t.Errorf("timestamp kept = %v, want %v", ts.Equal(before), c.keepsTime)
			}
			e.check(t)
		})
	}

	t.Run("a rejected group waits out its backoff, then pops as a unit", func(t *testing.T) {
		e := newEnv(t)
		e.q.AddPodGroup(makePodGroup("g", 2))
		e.q.Add(member("m1", "g").obj())
		e.q.Add(member("m2", "g").obj())
		g := e.popGroup(t)
		for _, m := range g.Members() {
			if err := e.q.AddUnschedulableIfNotPresent(m, rejectedBy("TopologyFit")); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Rejected: rejectedBy("TopologyFit")}); err != nil {
			t.Fatal(err)
		}
		// activeQ is empty, but a rejected group is not popped from
		// backoffQ before its backoff ends: that retried a group that
		// does not fit in a busy loop.
		if got := e.tryPop(t); got != nil {
			t.Fatalf("popped %v during the group's backoff", got)
		}
		e.clk.Step(2 * time.Second)
		e.q.flushBackoffCompleted()
		again := e.popGroup(t)
		if again != g || len(g.Members()) != 2 || g.Attempts() != 2 || g.Members()[0].Attempts() != 2 {
			t.Errorf("popped again: %d members, attempts %d", len(g.Members()), g.Attempts())
		}
		if n := e.rec.incomingOf(QueueActive, EventPopFromBackoffQ); n != 0 {
			t.Errorf("incoming{active, PopFromBackoffQ} = %d, want 0", n)
		}
		if n := e.rec.incomingOf(QueueActive, EventBackoffComplete); n != 2 {
			t.Errorf("incoming{active, BackoffComplete} = %d, want 2 (pods)", n)
		}
	})

	t.Run("max backoff grows with the square root of the size", func(t *testing.T) {
		q := New()
		defer q.Close()
		g := newGroup(groupKey{"ns", "g"})
		for range 4 {
			g.members = append(g.members, newPod(makePod("x").obj()))
		}
		g.unschedCount = 10
		g.timestamp = t0
		q.popFromBackoffQ = false
		q.setExpiry(&g.entity)
		if got := g.expiry.Sub(t0); got != 20*time.Second {
			t.Errorf("backoff of a group of 4 after 10 attempts = %v, want 20s", got)
		}
	})
}

// TestGangGatedUntilMinCount: a gang's members wait (gated by the PreEnqueue
// policy) until minCount pods exist; the unscheduled-pod add event, which
// the gating plugin registered, lets the policy see each new member.
// TestGroupMemberErrorAfterScheduled: a member of a scheduled group whose
// attempt failed with an error (its binding) backs off in the error heap,
// whether it is handed back before the group (it waits pending) or after
// it (it starts a group of its own); never straight to activeQ.
func TestGroupMemberErrorAfterScheduled(t *testing.T) {
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("handed back before the group: %v", before), func(t *testing.T) {
			e := newEnv(t)
			e.q.AddPodGroup(makePodGroup("g", 2))
			e.q.Add(member("m1", "g").obj())
			e.q.Add(member("m2", "g").obj())
			g := e.popGroup(t)
			m1, m2 := g.Members()[0], g.Members()[1]
			e.q.Done(m1.uid) // bound
			failBinding := func() {
				t.Helper()
				if err := e.q.AddUnschedulableIfNotPresent(m2, podview.Plugins{}); err != nil {
					t.Fatal(err)
				}
			}
			if before {
				failBinding()
			}
			if err := e.q.AddAttemptedGroupIfNeeded(g, GroupResult{Scheduled: true}); err != nil {
				t.Fatal(err)
			}
			if !before {
				failBinding()
			}
			if got := e.where(m2.uid); got != "errorBackoff" {
				t.Fatalf("m2 is %s, want errorBackoff", got)
			}
			e.q.mu.Lock()
			g = m2.grp
			expiry, errCount := g.expiry, g.errCount
			e.q.mu.Unlock()
			if want := e.q.align(e.clk.Now().Add(time.Second)); !expiry.Equal(want) || errCount != 1 {
				t.Errorf("expiry %v, errCount %d; want %v, 1", expiry, errCount, want)
			}
			if en := e.tryPop(t); en != nil {
				t.Errorf("popped %s while m2 backs off", nameOf(en))
			}
			e.check(t)
		})
	}
}

func TestGangGatedUntilMinCount(t *testing.T) {
	pe := &countingPreEnqueue{inner: policytest.NativePreEnqueue(gang)}
	h := gangHint()
	e := newEnv(t, WithPreEnqueue(pe), WithQueueingHint(h))
	e.q.AddPodGroup(makePodGroup("g", 3))
	for _, n := range []string{"m1", "m2"} {
		e.addMember(member(n, "g").obj())
		if s := e.q.Stats(); s.Gated == 0 || s.Active != 0 {
			t.Fatalf("after %s: stats %+v, want the gang gated", n, s)
		}
	}
	e.addMember(member("m3", "g").obj())
	if s := e.q.Stats(); s.Active != 3 || s.Gated != 0 {
		t.Fatalf("with minCount members: stats %+v, want 3 active", s)
	}
	e.q.mu.Lock()
	for _, n := range []string{"m1", "m2"} { // m3 completed the quorum: never held
		p := e.q.pods[types.UID("uid-"+n)]
		if diff := cmp.Diff([]string{gangPlugin}, p.plugins.Unschedulable); diff != "" {
			t.Errorf("%s: every member held records the gating plugin (-want, +got):\n%s", n, diff)
		}
	}
	e.q.mu.Unlock()
	e.check(t)

	// A member deleted from a queued gang takes it below minCount: held
	// again (PreEnqueue runs again, as upstream).
	e.q.Delete(member("m2", "g").obj())
	if s := e.q.Stats(); s.Gated != 2 || s.Active != 0 {
		t.Fatalf("after deleting a member: stats %+v, want 2 gated", s)
	}
	e.addMember(member("m4", "g").obj())
	g := e.popGroup(t)
	if diff := cmp.Diff([]string{"m1", "m3", "m4"}, memberNames(g)); diff != "" {
		t.Errorf("members (-want, +got):\n%s", diff)
	}
	e.check(t)
}

// TestGroupMembersCount: the member count in records comes from
// WithGroupMembers when it knows the group.
func TestGroupMembersCount(t *testing.T) {
	e := newEnv(t, WithGroupMembers(func(ns, name string) (int32, bool) { return 42, name == "known" }))
	for _, g := range []string{"known", "other"} {
		e.q.AddPodGroup(makePodGroup(g, 1))
		e.q.Add(member(g+"-m", g).obj())
	}
	got := map[string]int32{}
	for range 2 {
		g := e.popGroup(t)
		got[g.Name()] = g.Members()[0].View().GroupMembers()
	}
	if diff := cmp.Diff(map[string]int32{"known": 42, "other": 1}, got); diff != "" {
		t.Errorf("members in the records (-want, +got):\n%s", diff)
	}
}

// TestWithoutGroups: in a cluster that does not serve PodGroups, a pod
// naming one is scheduled alone, and its record names no group (so a gang
// PreEnqueue policy does not hold it for a PodGroup that cannot exist).
func TestWithoutGroups(t *testing.T) {
	e := newEnv(t, WithoutGroups())
	e.q.Add(member("m1", "g").obj())
	if s := e.q.Stats(); s.Incomplete != 0 || s.Active != 1 {
		t.Fatalf("stats %+v, want the member active on its own", s)
	}
	p, ok := e.pop(t).(*Pod)
	if !ok {
		t.Fatal("popped a group, want the pod alone")
	}
	if name := p.View().GroupName(); name != "" {
		t.Errorf("record names group %q, want none", name)
	}
	e.q.Done(p.UID())
	e.check(t)
}
