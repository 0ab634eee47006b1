package cycle_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// gangEnv is an env with n nodes of 1 cpu and a PodGroup "g" of minCount
// members, each requesting 1 cpu, queued as one group entity.
func gangEnv(t *testing.T, nodes int, members ...*v1.Pod) *env {
	t.Helper()
	e := newEnv(t)
	for i := range nodes {
		e.addNodes(makeNode(fmt.Sprintf("n%d", i+1), "cpu", "1").obj())
	}
	e.q.AddPodGroup(makePodGroup("g", int32(len(members))))
	e.addPods(members...)
	return e
}

func member(name string) *podBuilder { return makePod(name).group("g").req("cpu", "1") }

func TestGroupAllMembersFit(t *testing.T) {
	pods := []*v1.Pod{member("m1").obj(), member("m2").obj(), member("m3").obj()}
	e := gangEnv(t, 3, pods...)

	ent := e.scheduleNext()

	if _, ok := ent.(*queue.Group); !ok {
		t.Fatalf("popped %T, want the group", ent)
	}
	bound := e.api.boundTo()
	if diff := cmp.Diff([]string{"default/m1", "default/m2", "default/m3"}, sortedKeys(bound)); diff != "" {
		t.Fatalf("bound members (-want, +got):\n%s", diff)
	}
	nodes := map[string]bool{}
	for _, n := range bound {
		nodes[n] = true
	}
	if len(nodes) != 3 {
		t.Errorf("members bound to %v: want one per node (each node has room for one)", bound)
	}
	if got := len(e.api.bindCalls()); got != 3 {
		t.Errorf("%d binds, want 3", got)
	}
	for _, p := range pods {
		if got, want := e.cachedNode(p.UID), bound["default/"+p.Name]; got != want {
			t.Errorf("cache has %s on %q, bound to %q", p.Name, got, want)
		}
	}
	if diff := cmp.Diff([]queue.GroupResult{{Scheduled: true}}, e.q.groupResults()); diff != "" {
		t.Errorf("group hand-backs (-want, +got):\n%s", diff)
	}
	wantPG := []pgCondCall{{Group: "default/g", Type: schedv1beta1.PodGroupInitiallyScheduled,
		Status: metav1.ConditionTrue, Reason: "Scheduled", Message: "3 pods placed", GroupUID: "pg-g"}}
	if diff := cmp.Diff(wantPG, e.api.podGroupConditions()); diff != "" {
		t.Errorf("PodGroup conditions (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
	if got := e.api.conditions(); len(got) != 0 {
		t.Errorf("conditions: %+v", got)
	}
	if diff := cmp.Diff([]string{cycle.ResultScheduled, cycle.ResultScheduled, cycle.ResultScheduled}, e.rec.results()); diff != "" {
		t.Errorf("attempt results (-want, +got):\n%s", diff)
	}
}

func TestGroupOneMemberDoesNotFit(t *testing.T) {
	pods := []*v1.Pod{member("m1").obj(), member("m2").obj(), member("m3").obj()}
	e := gangEnv(t, 2, pods...)

	e.scheduleNext()

	if got := e.api.bindCalls(); len(got) != 0 {
		t.Errorf("binds: %+v; want none (all or nothing)", got)
	}
	if n := e.cache.PodCount(); n != 0 {
		t.Errorf("cache holds %d pods, want none", n)
	}
	// Members are placed in the queue's order (priority, attempts,
	// timestamp, name): m1 and m2 take the two nodes, m3 is left out. As
	// upstream, m3 reports its filters' reasons, the others the quorum.
	const msg = "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
	const m3msg = "0/2 nodes are available: 2 Insufficient cpu."
	var wantConds []condCall
	var wantEvents []event
	for _, p := range pods {
		m := msg
		if p.Name == "m3" {
			m = m3msg
		}
		wantConds = append(wantConds, condCall{Pod: "default/" + p.Name, Type: v1.PodScheduled, Status: v1.ConditionFalse,
			Reason: v1.PodReasonUnschedulable, Message: m, LastTransitionTime: t0})
		wantEvents = append(wantEvents, event{Object: "default/" + p.Name, Type: v1.EventTypeWarning,
			Reason: "FailedScheduling", Action: "Scheduling", Note: m})
	}
	if diff := cmp.Diff(wantConds, e.api.conditions()); diff != "" {
		t.Errorf("conditions (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
		t.Errorf("events (-want, +got):\n%s", diff)
	}
	rejected := podview.Plugins{Unschedulable: []string{abi.PluginNodeResourcesFit}}
	for _, p := range pods {
		if diff := cmp.Diff([]podview.Plugins{rejected}, e.q.rejections(p.UID)); diff != "" {
			t.Errorf("%s handed back (-want, +got):\n%s", p.Name, diff)
		}
		if got := e.state(p.UID); got != queue.QueueBackoff {
			t.Errorf("%s is in %q, want %q with its group", p.Name, got, queue.QueueBackoff)
		}
	}
	if diff := cmp.Diff([]queue.GroupResult{{Rejected: rejected}}, e.q.groupResults()); diff != "" {
		t.Errorf("group hand-backs (-want, +got):\n%s", diff)
	}
	wantPG := []pgCondCall{{Group: "default/g", Type: schedv1beta1.PodGroupInitiallyScheduled,
		Status: metav1.ConditionFalse, Reason: schedv1beta1.PodGroupReasonUnschedulable, Message: msg, GroupUID: "pg-g"}}
	if diff := cmp.Diff(wantPG, e.api.podGroupConditions()); diff != "" {
		t.Errorf("PodGroup conditions (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(queue.Stats{Backoff: 3}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
	want := []string{cycle.ResultUnschedulable, cycle.ResultUnschedulable, cycle.ResultUnschedulable}
	if diff := cmp.Diff(want, e.rec.results()); diff != "" {
		t.Errorf("attempt results (-want, +got):\n%s", diff)
	}
}

func TestGroupMemberBeingDeletedIsDropped(t *testing.T) {
	pods := []*v1.Pod{member("m1").obj(), member("m2").deleting().obj(), member("m3").obj()}
	e := gangEnv(t, 2, pods...)

	e.scheduleNext()

	if diff := cmp.Diff([]string{"default/m1", "default/m3"}, sortedKeys(e.api.boundTo())); diff != "" {
		t.Errorf("bound members (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
	if got := e.cachedNode(pods[1].UID); got != "" {
		t.Errorf("the member being deleted is in the cache on %q", got)
	}
}

// A member whose binding fails after the group was placed is forgotten and
// requeued; the others stay bound.
func TestGroupMemberBindingFails(t *testing.T) {
	pods := []*v1.Pod{member("m1").obj(), member("m2").obj(), member("m3").obj()}
	e := gangEnv(t, 3, pods...)
	e.api.hook = func(_ *fakeAPI, pod *v1.Pod, _ string) error {
		if pod.Name == "m2" {
			return apierrors.NewInternalError(errors.New("etcd is down"))
		}
		return nil
	}

	e.scheduleNext()

	if diff := cmp.Diff([]string{"default/m1", "default/m3"}, sortedKeys(e.api.boundTo())); diff != "" {
		t.Errorf("bound members (-want, +got):\n%s", diff)
	}
	if got := e.cachedNode(pods[1].UID); got != "" {
		t.Errorf("m2 is still assumed on %q", got)
	}
	if n := e.cache.PodCount(); n != 2 {
		t.Errorf("cache holds %d pods, want the 2 bound members", n)
	}
	if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(pods[1].UID)); diff != "" {
		t.Errorf("m2 handed back (-want, +got):\n%s", diff)
	}
	// Its binding failed with an error: the member backs off (as a group of
	// its own) rather than being retried at once on every cycle.
	if got := e.state(pods[1].UID); got != queue.QueueBackoff {
		t.Errorf("m2 is in %q, want %q", got, queue.QueueBackoff)
	}
	for _, p := range []*v1.Pod{pods[0], pods[2]} {
		if got := e.state(p.UID); got != "" {
			t.Errorf("the queue still holds bound member %s, in %q", p.Name, got)
		}
	}
	conds := e.api.conditions()
	if len(conds) != 1 || conds[0].Pod != "default/m2" || conds[0].Reason != v1.PodReasonSchedulerError {
		t.Errorf("conditions: %+v, want m2's SchedulerError", conds)
	}
}

// Members that disagree with each other or with their PodGroup fail the
// group with upstream's validation error, before any is placed.
func TestGroupValidation(t *testing.T) {
	never := v1.PreemptNever
	tests := []struct {
		name string
		m3   *v1.Pod
		msg  string
	}{{
		name: "another scheduler name",
		m3:   member("m3").obj(),
		msg:  `all pods in a single pod group should have the same .spec.schedulerName set, got: "other" and "wasmsched"`,
	}, {
		name: "a priority other than the group's",
		m3:   member("m3").priority(5).obj(),
		msg:  "all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0",
	}, {
		name: "another preemption policy",
		m3: func() *v1.Pod {
			p := member("m3").obj()
			p.Spec.PreemptionPolicy = &never
			return p
		}(),
		msg: "all pods in a single pod group should have the same preemption policy, got Never and PreemptLowerPriority",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m3 := tt.m3
			if tt.name == "another scheduler name" {
				m3.Spec.SchedulerName = "other"
			}
			pods := []*v1.Pod{member("m1").obj(), member("m2").obj(), m3}
			e := gangEnv(t, 3, pods...)

			e.scheduleNext()

			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds: %+v, want none", got)
			}
			for _, p := range pods {
				if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(p.UID)); diff != "" {
					t.Errorf("%s handed back (-want, +got):\n%s", p.Name, diff)
				}
			}
			conds := e.api.conditions()
			if len(conds) != 3 {
				t.Fatalf("conditions: %+v, want one per member", conds)
			}
			for _, c := range conds {
				if c.Reason != v1.PodReasonSchedulerError || c.Message != tt.msg {
					t.Errorf("%s: condition %s: %q, want %s: %q", c.Pod, c.Reason, c.Message, v1.PodReasonSchedulerError, tt.msg)
				}
			}
			wantPG := []pgCondCall{{Group: "default/g", Type: schedv1beta1.PodGroupInitiallyScheduled,
				Status: metav1.ConditionFalse, Reason: schedv1beta1.PodGroupReasonSchedulerError, Message: tt.msg, GroupUID: "pg-g"}}
			if diff := cmp.Diff(wantPG, e.api.podGroupConditions()); diff != "" {
				t.Errorf("PodGroup conditions (-want, +got):\n%s", diff)
			}
			// A group that failed with an error backs off in the error heap.
			if diff := cmp.Diff([]queue.GroupResult{{}}, e.q.groupResults()); diff != "" {
				t.Errorf("group hand-backs (-want, +got):\n%s", diff)
			}
		})
	}
}

// A gang whose minCount is below its size is scheduled once minCount
// members fit, as upstream: the member that does not fit waits on its own,
// and the bound ones count towards minCount at the next attempt.
func TestGroupQuorumBelowSize(t *testing.T) {
	pods := []*v1.Pod{member("m1").obj(), member("m2").obj(), member("m3").obj()}
	e := newEnv(t)
	e.addNodes(makeNode("n1", "cpu", "1").obj(), makeNode("n2", "cpu", "1").obj())
	e.q.AddPodGroup(makePodGroup("g", 2))
	e.addPods(pods...)

	e.scheduleNext()

	if diff := cmp.Diff([]string{"default/m1", "default/m2"}, sortedKeys(e.api.boundTo())); diff != "" {
		t.Errorf("bound members (-want, +got):\n%s", diff)
	}
	conds := e.api.conditions()
	if len(conds) != 1 || conds[0].Pod != "default/m3" || conds[0].Reason != v1.PodReasonUnschedulable {
		t.Errorf("conditions %+v, want only m3's Unschedulable", conds)
	}
	if diff := cmp.Diff([]queue.GroupResult{{Scheduled: true}}, e.q.groupResults()); diff != "" {
		t.Errorf("group hand-backs (-want, +got):\n%s", diff)
	}
	if got := e.state(pods[2].UID); got == "" {
		t.Error("m3 left the queue, want it requeued")
	}
}
