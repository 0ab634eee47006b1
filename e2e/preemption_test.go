package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// fillTwoNodes makes two 4-cpu KWOK nodes full of running lower-priority
// pods, with two priority levels and distinct start times:
//
//	a: low-old (low, 1 cpu, oldest)  low-new (low, 1 cpu, newest)  mid-a (mid, 2 cpu)
//	b: mid-b1 (mid, 2 cpu)           mid-b2 (mid, 2 cpu)
//
// A 1-cpu pod of higher priority fits on a by preempting low-new alone: on a
// every lower-priority pod is removed, then pods are reprieved most
// important first (mid-a: higher priority; low-old: same priority, earlier
// start) while the preemptor still fits. On b it would cost a mid pod, and
// upstream prefers the node whose most important victim has the lowest
// priority.
func fillTwoNodes(t *testing.T, s *scheduler) (a, b string) {
	t.Helper()
	createPriorityClasses(t, s.c)
	nodes := fakeNodes(t, s, 2, "4", nil)
	a, b = nodes[0], nodes[1]
	base := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
	runOn(t, s.c, newPod(s.ns, "low-old", "1", withPriorityClass(pcLow)), a, base)
	runOn(t, s.c, newPod(s.ns, "low-new", "1", withPriorityClass(pcLow)), a, base.Add(2*time.Hour))
	runOn(t, s.c, newPod(s.ns, "mid-a", "2", withPriorityClass(pcMid)), a, base.Add(time.Hour))
	runOn(t, s.c, newPod(s.ns, "mid-b1", "2", withPriorityClass(pcMid)), b, base)
	runOn(t, s.c, newPod(s.ns, "mid-b2", "2", withPriorityClass(pcMid)), b, base.Add(time.Hour))
	return a, b
}

// TestPreemptionLeastImportantVictims: a high-priority pod preempts only the
// least important victim it needs (lowest priority, then latest start), is
// nominated to that node, the victim is marked DisruptionTarget
// (PreemptionByScheduler) before it is deleted and gets a Preempted event,
// and the preemptor is bound once the victim is gone.
func TestPreemptionLeastImportantVictims(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		a, _ := fillTwoNodes(t, s)
		s.start(t)
		w := watchPods(t, s.c, s.ns)
		t0 := time.Now()
		submit(t, s.c, newPod(s.ns, "preemptor", "1", withPriorityClass(pcHigh)))
		node := waitBound(t, s.c, s.ns, "preemptor", 60*time.Second)
		s.logf(t, "preemptor bound to %s after %v", node, time.Since(t0).Round(time.Millisecond))
		if node != a {
			t.Errorf("preemptor bound to %s, want %s (the node where only a low-priority pod must go)", node, a)
		}
		w.waitDeleted(t, 30*time.Second, "low-new")
		w.boundAfterDeletions(t, "preemptor", "low-new")
		if nnn := w.firstNominated("preemptor"); nnn != a {
			t.Errorf("preemptor: status.nominatedNodeName before binding = %q, want %q", nnn, a)
		}
		s.logf(t, "preemptor while pending: %q", w.pendingConditions("preemptor"))
		w.checkPendingUnschedulable(t, "preemptor", "Insufficient cpu")
		checkPreempted(t, s, w, "low-new")
		stillThere(t, s, a, "low-old", "mid-a")
		s.logf(t, "preemptor events: %q", schedulingEvents(t, s, "preemptor"))
		testenv.Consistently(t, time.Second, 100*time.Millisecond, func() error { // nothing else goes
			if got := w.deletedPods(); !slices.Equal(got, []string{"low-new"}) {
				return fmt.Errorf("deleted pods %v, want [low-new]", got)
			}
			return nil
		})
	})
}

// TestPreemptionNeverPolicy (KEP-902): a pod of the same high priority but
// preemptionPolicy Never preempts nobody and stays pending, Unschedulable,
// with a message that says why; it is bound as soon as room appears.
func TestPreemptionNeverPolicy(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		a, _ := fillTwoNodes(t, s)
		s.start(t)
		w := watchPods(t, s.c, s.ns)
		submit(t, s.c, newPod(s.ns, "never", "1", withPriorityClass(pcHighNever)))
		p := waitCondition(t, s, "never", v1.PodReasonUnschedulable, 60*time.Second)
		cond := scheduledCondition(p)
		s.logf(t, "never: %s", conditionText(cond))
		for _, want := range []string{"Insufficient cpu", "Never"} {
			if !strings.Contains(cond.Message, want) {
				t.Errorf("never: message %q does not contain %q", cond.Message, want)
			}
		}
		testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error { // nothing is preempted
			if got := w.deletedPods(); len(got) > 0 {
				return fmt.Errorf("a preemptionPolicy: Never pod caused deletions: %v", got)
			}
			return nil
		})
		for _, p := range w.versions("never") {
			if p.Status.NominatedNodeName != "" || p.Spec.NodeName != "" {
				t.Errorf("never: nominated %q / bound %q, want neither", p.Status.NominatedNodeName, p.Spec.NodeName)
				break
			}
		}
		for _, n := range []string{"low-old", "low-new", "mid-a", "mid-b1", "mid-b2"} {
			if c := podCondition(getPod(t, s.c, s.ns, n), v1.DisruptionTarget); c != nil {
				t.Errorf("%s got %s", n, conditionText(c))
			}
		}
		s.logf(t, "never events: %q", schedulingEvents(t, s, "never"))
		// Still scheduled by priority like any pod: room appears, it is bound.
		if err := s.c.CoreV1().Pods(s.ns).Delete(context.Background(), "low-new", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if node := waitBound(t, s.c, s.ns, "never", 60*time.Second); node != a {
			t.Errorf("never bound to %s, want %s", node, a)
		}
		s.logf(t, "never bound %v after room appeared", time.Since(t0).Round(time.Millisecond))
	})
}

// TestPreemptionRespectsPDB: among two victim sets that both work, the one
// without a PodDisruptionBudget violation is chosen — across nodes (zone x:
// the guarded pod would otherwise be chosen, its start being the latest)
// and within a node (zone y: the guarded pod would otherwise be the one to
// go, being the newest).
func TestPreemptionRespectsPDB(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createPriorityClasses(t, s.c)
		x := fakeNodes(t, s, 2, "4", map[string]string{"zone": "x"})
		y := fakeNodes(t, s, 1, "4", map[string]string{"zone": "y"})
		base := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
		runOn(t, s.c, newPod(s.ns, "x-guarded", "4", withPriorityClass(pcLow), withLabels("app", "guarded-x")), x[0], base.Add(2*time.Hour))
		runOn(t, s.c, newPod(s.ns, "x-free", "4", withPriorityClass(pcLow), withLabels("app", "free-x")), x[1], base)
		runOn(t, s.c, newPod(s.ns, "y-guarded", "2", withPriorityClass(pcLow), withLabels("app", "guarded-y")), y[0], base.Add(2*time.Hour))
		runOn(t, s.c, newPod(s.ns, "y-free", "2", withPriorityClass(pcLow), withLabels("app", "free-y")), y[0], base)
		protect(t, s, "guard-x", "guarded-x")
		protect(t, s, "guard-y", "guarded-y")
		s.start(t) // after the PDBs' status: both implementations start from it
		w := watchPods(t, s.c, s.ns)

		submit(t, s.c, newPod(s.ns, "across", "4", withPriorityClass(pcHigh), withNodeSelector("zone", "x")))
		if node := waitBound(t, s.c, s.ns, "across", 60*time.Second); node != x[1] {
			t.Errorf("across: bound to %s, want %s (the node without a PDB violation)", node, x[1])
		}
		w.waitDeleted(t, 30*time.Second, "x-free")
		checkPreempted(t, s, w, "x-free")
		stillThere(t, s, x[0], "x-guarded")

		submit(t, s.c, newPod(s.ns, "within", "2", withPriorityClass(pcHigh), withNodeSelector("zone", "y")))
		if node := waitBound(t, s.c, s.ns, "within", 60*time.Second); node != y[0] {
			t.Errorf("within: bound to %s, want %s", node, y[0])
		}
		w.waitDeleted(t, 30*time.Second, "x-free", "y-free")
		checkPreempted(t, s, w, "y-free")
		stillThere(t, s, y[0], "y-guarded")
	})
}

// workloadCase is one of KEP-5710's four: a victim PodGroup in DisruptionMode
// single or all, preempted by a higher-priority PodGroup or a single pod.
type workloadCase struct {
	name        string
	all         bool // the victim group's DisruptionMode
	group       bool // the preemptor is a PodGroup (else a single pod)
	wantDeleted []string
}

// TestWorkloadPreemption (KEP-5710): one 8-cpu node runs a mid-priority pod
// "steady" (2 cpu) and a low-priority PodGroup "victims" of three 2-cpu pods
// v0, v1, v2 (oldest first). A high-priority preemptor needs 2 cpu: a
// PodGroup of two 1-cpu pods, or one 2-cpu pod.
//
// Everything lower is removed, then reprieved most important first: steady
// (higher priority), then the victims. In DisruptionMode single each member
// is a victim of its own (v0, v1 fit back; v2 goes: only as many members as
// needed). In DisruptionMode all the group is one victim and is preempted
// whole, although one member would have freed enough room.
func TestWorkloadPreemption(t *testing.T) {
	for _, tc := range []workloadCase{
		{name: "single-by-group", all: false, group: true, wantDeleted: []string{"v2"}},
		{name: "all-by-group", all: true, group: true, wantDeleted: []string{"v0", "v1", "v2"}},
		{name: "single-by-pod", all: false, group: false, wantDeleted: []string{"v2"}},
		{name: "all-by-pod", all: true, group: false, wantDeleted: []string{"v0", "v1", "v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachScheduler(t, func(t *testing.T, s *scheduler) { workloadPreemption(t, s, tc) })
		})
	}
}

func workloadPreemption(t *testing.T, s *scheduler, tc workloadCase) {
	createPriorityClasses(t, s.c)
	node := fakeNodes(t, s, 1, "8", nil)[0]
	base := time.Now().Add(-4 * time.Hour).Truncate(time.Second)
	createGroup(t, s, groupSpec{name: "victims", minCount: 3, priorityClass: pcLow, all: tc.all})
	runOn(t, s.c, newPod(s.ns, "steady", "2", withPriorityClass(pcMid)), node, base)
	for i, v := range []string{"v0", "v1", "v2"} {
		runOn(t, s.c, newPod(s.ns, v, "2", withPriorityClass(pcLow), inGroup("victims")), node, base.Add(time.Duration(i+1)*time.Hour))
	}
	s.start(t)
	w := watchPods(t, s.c, s.ns)
	preemptors := []string{"preemptor"}
	t0 := time.Now()
	if tc.group {
		preemptors = []string{"p0", "p1"}
		createGroup(t, s, groupSpec{name: "preemptors", minCount: 2, priorityClass: pcHigh})
		for _, p := range preemptors {
			submit(t, s.c, newPod(s.ns, p, "1", withPriorityClass(pcHigh), inGroup("preemptors")))
		}
	} else {
		submit(t, s.c, newPod(s.ns, "preemptor", "2", withPriorityClass(pcHigh)))
	}
	for _, p := range preemptors {
		if got := waitBound(t, s.c, s.ns, p, 60*time.Second); got != node {
			t.Errorf("%s bound to %s, want %s", p, got, node)
		}
	}
	s.logf(t, "preemptors %v bound after %v", preemptors, time.Since(t0).Round(time.Millisecond))
	w.waitDeleted(t, 30*time.Second, tc.wantDeleted...)
	for _, p := range preemptors {
		w.boundAfterDeletions(t, p, tc.wantDeleted...)
		if nnn := w.firstNominated(p); nnn != node {
			t.Errorf("%s: status.nominatedNodeName before binding = %q, want %q", p, nnn, node)
		}
		s.logf(t, "%s while pending: %q", p, w.pendingConditions(p))
		w.checkPendingUnschedulable(t, p)
	}
	checkPreempted(t, s, w, tc.wantDeleted...)
	var kept []string
	for _, n := range []string{"steady", "v0", "v1", "v2"} {
		if !slices.Contains(tc.wantDeleted, n) {
			kept = append(kept, n)
		}
	}
	stillThere(t, s, node, kept...)
	testenv.Consistently(t, time.Second, 100*time.Millisecond, func() error { // nothing else goes
		if got := w.deletedPods(); !slices.Equal(got, tc.wantDeleted) {
			return fmt.Errorf("deleted pods %v, want %v", got, tc.wantDeleted)
		}
		return nil
	})
	logPodGroups(t, s)
	if tc.group {
		checkPodGroupCondition(t, s, "preemptors", "True", "Scheduled")
	}
}

// checkPodGroupCondition waits until the PodGroup's PodGroupInitiallyScheduled
// condition has status and reason (upstream writes it after each pod-group
// attempt).
func checkPodGroupCondition(t *testing.T, s *scheduler, name, status, reason string) {
	t.Helper()
	var last string
	ok := waitForSoft(30*time.Second, func() bool {
		pg, err := s.c.SchedulingV1beta1().PodGroups(s.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false
		}
		last = "no PodGroupInitiallyScheduled condition"
		for _, c := range pg.Status.Conditions {
			if c.Type == "PodGroupInitiallyScheduled" {
				last = fmt.Sprintf("%s=%s reason=%q message=%q", c.Type, c.Status, c.Reason, c.Message)
				return string(c.Status) == status && c.Reason == reason
			}
		}
		return false
	})
	if !ok {
		t.Errorf("PodGroup %s: want PodGroupInitiallyScheduled=%s reason %s (as upstream); got %s", name, status, reason, last)
	}
}

// logPodGroups logs the conditions of every PodGroup of the namespace.
func logPodGroups(t *testing.T, s *scheduler) {
	t.Helper()
	list, err := s.c.SchedulingV1beta1().PodGroups(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Errorf("list PodGroups: %v", err)
		return
	}
	for _, pg := range list.Items {
		for _, c := range pg.Status.Conditions {
			s.logf(t, "PodGroup %s: %s=%s reason=%q message=%q", pg.Name, c.Type, c.Status, c.Reason, c.Message)
		}
		if len(pg.Status.Conditions) == 0 {
			s.logf(t, "PodGroup %s: no conditions", pg.Name)
		}
	}
}
