package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

func member(ns, name, group, cpu string) *v1.Pod {
	p := makePod(ns, name, "wasmsched", cpu)
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

// TestGangQuorum (KEP-4671), against upstream and wasmsched (with its
// built-in gangpreempt policy): members of a PodGroup with minCount 4 wait
// while only three exist, gated before any attempt (the scheduler reports
// them gated, makes no attempt, writes no event, binds none, and no
// condition upstream, wasmsched's saying why they are held);
// the fourth makes all four bind together. Then a gang that cannot fit as a
// whole (three 2-cpu members, 4 cpu left) binds none of its members,
// although two would fit, and each is reported Unschedulable.
func TestGangQuorum(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		node := fakeNodes(t, s, 1, "8", nil)[0]
		s.start(t)
		w := watchPods(t, s.c, s.ns)
		createGroup(t, s, groupSpec{name: "quad", minCount: 4})
		quad := []string{"q0", "q1", "q2", "q3"}
		for _, n := range quad[:3] {
			submit(t, s.c, newPod(s.ns, n, "1", inGroup("quad")))
		}
		// The scheduler holds the three back before any attempt: it reports
		// them gated (the precondition of what follows, waited on through
		// its metrics), ...
		waitFor(t, 30*time.Second, "three members gated", func() (bool, error) {
			return s.metric(t, "scheduler_pending_pods", `queue="gated"`) == 3, nil
		})
		// ... they do not bind ...
		if !testenv.Consistently(t, 3*time.Second, 100*time.Millisecond, func() error {
			if b := bound(t, s, quad[:3]...); len(b) > 0 {
				return fmt.Errorf("members %v bound while the group had 3 of minCount 4", b)
			}
			return nil
		}) {
			t.FailNow()
		}
		// ... and it made no attempt.
		if n := s.metric(t, "scheduler_schedule_attempts_total"); n != 0 {
			t.Errorf("%v attempts before quorum, want 0", n)
		}
		// Upstream shows nothing while a gang lacks quorum: its PreEnqueue
		// holds the pods back before any attempt, so no condition, no
		// nomination, no event. wasmsched's held pods say why (issue 29,
		// KEP-5501's proposal): PodScheduled=False reason GangScheduling,
		// and still no nomination or event.
		for _, n := range quad[:3] {
			p := getPod(t, s.c, s.ns, n)
			evs := schedulingEvents(t, s, n)
			s.logf(t, "%s below quorum: PodScheduled %s, nominated %q, events %q",
				n, conditionText(scheduledCondition(p)), p.Status.NominatedNodeName, evs)
			c := scheduledCondition(p)
			switch {
			case s.name == implUpstream && c != nil:
				t.Errorf("%s below quorum: %s, want no PodScheduled condition (as upstream)", n, conditionText(c))
			case s.name == implWasmsched && (c == nil || c.Status != v1.ConditionFalse || c.Reason != gangPlugin ||
				!strings.Contains(c.Message, "3 of 4 pods exist")):
				t.Errorf("%s below quorum: %s, want PodScheduled=False reason %s saying 3 of 4 pods exist", n, conditionText(c), gangPlugin)
			}
			if len(evs) > 0 {
				t.Errorf("%s below quorum: events %q, want none (as upstream)", n, evs)
			}
		}
		t0 := time.Now()
		submit(t, s.c, newPod(s.ns, "q3", "1", inGroup("quad")))
		for _, n := range quad {
			if got := waitBound(t, s.c, s.ns, n, 60*time.Second); got != node {
				t.Errorf("%s bound to %s, want %s", n, got, node)
			}
		}
		s.logf(t, "quad bound %v after its fourth member was created", time.Since(t0).Round(time.Millisecond))
		for _, n := range quad {
			s.logf(t, "%s before binding: %q", n, w.pendingConditions(n))
		}

		createGroup(t, s, groupSpec{name: "big", minCount: 3})
		big := []string{"b0", "b1", "b2"}
		for _, n := range big {
			submit(t, s.c, newPod(s.ns, n, "2", inGroup("big")))
		}
		// Upstream: the members that were placed in the simulation say
		// "pod group is unschedulable, minCount (3) cannot be satisfied: 2
		// scheduled, 0 remaining, pod group preemption: ...", the one that
		// did not fit says "0/1 nodes are available: 1 Insufficient cpu.".
		var messages []string
		for _, n := range big {
			p := waitCondition(t, s, n, v1.PodReasonUnschedulable, 60*time.Second)
			cond := scheduledCondition(p)
			s.logf(t, "%s: %s; events %q", n, conditionText(cond), schedulingEvents(t, s, n))
			messages = append(messages, cond.Message)
		}
		for _, want := range []string{"Insufficient cpu", "minCount (3) cannot be satisfied"} {
			if !strings.Contains(strings.Join(messages, "\n"), want) {
				t.Errorf("no member's message contains %q: %q", want, messages)
			}
		}
		testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error { // none binds later
			if b := bound(t, s, big...); len(b) > 0 {
				return fmt.Errorf("members %v of a group that does not fit were bound", b)
			}
			return nil
		})
		logPodGroups(t, s)
		checkPodGroupCondition(t, s, "quad", "True", "Scheduled")
		checkPodGroupCondition(t, s, "big", "False", "Unschedulable")
	})
}

// TestGangAllOrNothing: a group whose minCount cannot be met binds none of
// its members, and each says why.
func TestGangAllOrNothing(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "4"})
	startScheduler(t, env.Kubeconfig)
	if _, err := env.CreatePodGroup(ctx, ns, "big", 3); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // 3 x 2 cpu on a 4-cpu node: two fit, the group does not
		createPod(t, c, member(ns, "b"+strconv.Itoa(i), "big", "2"))
	}
	waitFor(t, 30*time.Second, "every member reported unschedulable", func() (bool, error) {
		for i := range 3 {
			cond := scheduledCondition(getPod(t, c, ns, "b"+strconv.Itoa(i)))
			if cond == nil || cond.Reason != v1.PodReasonUnschedulable {
				return false, nil
			}
		}
		return true, nil
	})
	// As upstream: the member that does not fit reports its filters'
	// reasons, the others the unmet quorum.
	var quorum, own int
	for i := range 3 {
		p := getPod(t, c, ns, "b"+strconv.Itoa(i))
		if p.Spec.NodeName != "" {
			t.Errorf("member %s bound to %s although the group does not fit", p.Name, p.Spec.NodeName)
		}
		msg := scheduledCondition(p).Message
		switch {
		case strings.Contains(msg, "minCount (3) cannot be satisfied"):
			quorum++
		case strings.Contains(msg, "Insufficient cpu"):
			own++
		default:
			t.Errorf("member %s: message %q names neither the quorum nor a filter", p.Name, msg)
		}
	}
	if quorum != 2 || own != 1 {
		t.Errorf("%d members report the quorum and %d their own reasons, want 2 and 1", quorum, own)
	}
}

// TestGangMemberMismatchReference: every pod of a PodGroup must share the
// group's priority and preemption policy. A divergent member fails the
// whole group: PodScheduled=False, reason SchedulerError, with a message
// naming both values, and nothing is bound.
//
// With the default gates (GenericWorkload only), PodGroup.spec.preemptionPolicy
// cannot be set (the PodGroupPreemptionPolicy gate is alpha, off), and
// upstream compares the members' policies with each other; with
// PodGroupPreemptionPolicy on (apiserver and upstream), the group's policy
// comes from its PriorityClass and members are compared with it.
func TestGangMemberMismatchReference(t *testing.T) {
	t.Run("default-gates", func(t *testing.T) {
		forEachScheduler(t, func(t *testing.T, s *scheduler) {
			createPriorityClasses(t, s.c)
			fakeNodes(t, s, 1, "8", nil)
			s.start(t)
			// Priority: the group is high (1000), one member low (10).
			createGroup(t, s, groupSpec{name: "prio", minCount: 2, priorityClass: pcHigh})
			submit(t, s.c, newPod(s.ns, "prio-0", "1", withPriorityClass(pcHigh), inGroup("prio")))
			submit(t, s.c, newPod(s.ns, "prio-1", "1", withPriorityClass(pcLow), inGroup("prio")))
			// Preemption policy: same priority, one member Never.
			createGroup(t, s, groupSpec{name: "policy", minCount: 2, priorityClass: pcHigh})
			submit(t, s.c, newPod(s.ns, "policy-0", "1", withPriorityClass(pcHigh), inGroup("policy")))
			submit(t, s.c, newPod(s.ns, "policy-1", "1", withPriorityClass(pcHighNever), inGroup("policy")))

			expectSchedulerError(t, s, []string{"prio-0", "prio-1"}, "priority", "10", "1000")
			expectSchedulerError(t, s, []string{"policy-0", "policy-1"}, "preemption policy", string(v1.PreemptNever), string(v1.PreemptLowerPriority))
			logPodGroups(t, s)
			checkPodGroupCondition(t, s, "prio", "False", "SchedulerError")
			checkPodGroupCondition(t, s, "policy", "False", "SchedulerError")
		})
	})
	t.Run("PodGroupPreemptionPolicy", func(t *testing.T) {
		forEachSchedulerWithGates(t, []string{"PodGroupPreemptionPolicy=true"}, func(t *testing.T, s *scheduler) {
			createPriorityClasses(t, s.c)
			fakeNodes(t, s, 1, "8", nil)
			s.start(t)
			// The group's policy is Never (its PriorityClass's), its
			// members' PreemptLowerPriority, at the same priority.
			pg := createGroup(t, s, groupSpec{name: "policy", minCount: 2, priorityClass: pcHighNever, preemptionPolicy: string(v1.PreemptNever)})
			if pg.Spec.PreemptionPolicy == nil || string(*pg.Spec.PreemptionPolicy) != string(v1.PreemptNever) {
				t.Fatalf("PodGroup preemptionPolicy = %v, want Never from its PriorityClass", pg.Spec.PreemptionPolicy)
			}
			submit(t, s.c, newPod(s.ns, "policy-0", "1", withPriorityClass(pcHigh), inGroup("policy")))
			submit(t, s.c, newPod(s.ns, "policy-1", "1", withPriorityClass(pcHigh), inGroup("policy")))
			expectSchedulerError(t, s, []string{"policy-0", "policy-1"}, "preemption policy", string(v1.PreemptNever), string(v1.PreemptLowerPriority))
			logPodGroups(t, s)
			checkPodGroupCondition(t, s, "policy", "False", "SchedulerError")
		})
	})
}

// expectSchedulerError waits until every pod reports PodScheduled=False with
// reason SchedulerError, checks the message contains every want, and that
// none is bound.
func expectSchedulerError(t *testing.T, s *scheduler, pods []string, want ...string) {
	t.Helper()
	for _, n := range pods {
		p := waitCondition(t, s, n, "SchedulerError", 60*time.Second)
		cond := scheduledCondition(p)
		s.logf(t, "%s: %s; events %q", n, conditionText(cond), schedulingEvents(t, s, n))
		if cond.Status != v1.ConditionFalse {
			t.Errorf("%s: PodScheduled status %s, want False", n, cond.Status)
		}
		for _, w := range want {
			if !strings.Contains(cond.Message, w) {
				t.Errorf("%s: message %q does not contain %q", n, cond.Message, w)
			}
		}
	}
	if b := bound(t, s, pods...); len(b) > 0 {
		t.Errorf("members %v bound although the group is invalid", b)
	}
}
