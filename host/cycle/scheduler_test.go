package cycle_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

func TestScheduleOneBindsToTheOnlyFittingNode(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*v1.Node
		// bound are pods the informer already shows on nodes.
		bound []*v1.Pod
		pod   *v1.Pod
		want  string
	}{{
		name:  "resources",
		nodes: []*v1.Node{makeNode("small", "cpu", "1").obj(), makeNode("big", "cpu", "4").obj()},
		pod:   makePod("p").req("cpu", "2").obj(),
		want:  "big",
	}, {
		name: "resources used by bound pods",
		nodes: []*v1.Node{
			makeNode("busy", "cpu", "2").obj(), makeNode("free", "cpu", "2").obj(),
		},
		bound: []*v1.Pod{func() *v1.Pod {
			p := makePod("other").req("cpu", "1500m").obj()
			p.Spec.NodeName = "busy"
			return p
		}()},
		pod:  makePod("p").req("cpu", "1").obj(),
		want: "free",
	}, {
		name: "nodeSelector",
		nodes: []*v1.Node{
			makeNode("a", "cpu", "4").label("zone", "a").obj(), makeNode("b", "cpu", "4").label("zone", "b").obj(),
		},
		pod:  makePod("p").selector("zone", "b").obj(),
		want: "b",
	}, {
		name: "taints",
		nodes: []*v1.Node{
			makeNode("tainted", "cpu", "4").taint("gpu", v1.TaintEffectNoSchedule).obj(),
			makeNode("plain", "cpu", "4").obj(),
		},
		pod:  makePod("p").obj(),
		want: "plain",
	}, {
		name: "tolerated taint, the other node cordoned",
		nodes: []*v1.Node{
			makeNode("tainted", "cpu", "4").taint("gpu", v1.TaintEffectNoSchedule).obj(),
			makeNode("cordoned", "cpu", "4").unschedulable().obj(),
		},
		pod:  makePod("p").tolerate("gpu", v1.TaintEffectNoSchedule).obj(),
		want: "tainted",
	}, {
		name: "one node passes every filter",
		nodes: []*v1.Node{
			makeNode("n1", "cpu", "1").label("zone", "b").obj(),
			makeNode("n2", "cpu", "4").label("zone", "a").obj(),
			makeNode("n3", "cpu", "4").label("zone", "b").taint("k", v1.TaintEffectNoExecute).obj(),
			makeNode("n4", "cpu", "4").label("zone", "b").obj(),
			makeNode("n5", "cpu", "4").label("zone", "b").unschedulable().obj(),
		},
		pod:  makePod("p").req("cpu", "2").selector("zone", "b").obj(),
		want: "n4",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNodes(tt.nodes...)
			for _, p := range tt.bound {
				if err := e.cache.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
			e.addPods(tt.pod)

			e.scheduleNext()

			if diff := cmp.Diff([]bindCall{{Pod: "default/p", Node: tt.want}}, e.api.bindCalls()); diff != "" {
				t.Errorf("binds (-want, +got):\n%s", diff)
			}
			if got := e.state(tt.pod.UID); got != "" {
				t.Errorf("queue still holds the bound pod, in %q", got)
			}
			if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
				t.Errorf("queue stats (-want, +got):\n%s", diff)
			}
			if got := e.cachedNode(tt.pod.UID); got != tt.want {
				t.Errorf("cache has the pod on %q, want %q", got, tt.want)
			}
			if !e.cache.IsAssumed(tt.pod.UID) {
				t.Error("the bound pod is not assumed in the cache (the informer has not confirmed it)")
			}
			wantEvents := []event{{Object: "default/p", Type: v1.EventTypeNormal, Reason: "Scheduled", Action: "Binding",
				Note: "Successfully assigned default/p to " + tt.want}}
			if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
			if got := e.api.conditions(); len(got) != 0 {
				t.Errorf("conditions set on a bound pod: %+v", got)
			}
			if diff := cmp.Diff([]string{cycle.ResultScheduled}, e.rec.results()); diff != "" {
				t.Errorf("attempt results (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleOneUnschedulable(t *testing.T) {
	tests := []struct {
		name        string
		nodes       []*v1.Node
		pod         *v1.Pod
		wantMessage string
		wantPlugins []string
	}{{
		name: "a different filter rejects each node",
		nodes: []*v1.Node{
			makeNode("n1", "cpu", "1").label("zone", "b").obj(),
			makeNode("n2", "cpu", "4").label("zone", "b").taint("k", v1.TaintEffectNoSchedule).obj(),
			makeNode("n3", "cpu", "4").label("zone", "a").obj(),
		},
		pod: makePod("p").req("cpu", "2").selector("zone", "b").obj(),
		wantMessage: "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, " +
			"1 node(s) had untolerated taint(s).",
		wantPlugins: []string{abi.PluginNodeAffinity, abi.PluginNodeResourcesFit, abi.PluginTaintToleration},
	}, {
		name:        "every node cordoned",
		nodes:       []*v1.Node{makeNode("n1", "cpu", "4").unschedulable().obj(), makeNode("n2", "cpu", "4").unschedulable().obj()},
		pod:         makePod("p").obj(),
		wantMessage: "0/2 nodes are available: 2 node(s) were unschedulable.",
		wantPlugins: []string{abi.PluginNodeUnschedulable},
	}, {
		name:        "too big for any node",
		nodes:       []*v1.Node{makeNode("n1", "cpu", "1", "memory", "1Gi").obj(), makeNode("n2", "cpu", "2", "memory", "1Gi").obj()},
		pod:         makePod("p").req("cpu", "3", "memory", "2Gi").obj(),
		wantMessage: "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.",
		wantPlugins: []string{abi.PluginNodeResourcesFit},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNodes(tt.nodes...)
			e.addPods(tt.pod)

			e.scheduleNext()

			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds of an unschedulable pod: %+v", got)
			}
			wantCond := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
				Reason: v1.PodReasonUnschedulable, Message: tt.wantMessage, LastTransitionTime: t0}}
			if diff := cmp.Diff(wantCond, e.api.conditions()); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			wantEvents := []event{{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
				Action: "Scheduling", Note: tt.wantMessage}}
			if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff([]podview.Plugins{{Unschedulable: tt.wantPlugins}}, e.q.rejections(tt.pod.UID)); diff != "" {
				t.Errorf("rejecting plugins handed to the queue (-want, +got):\n%s", diff)
			}
			st, ok := e.q.PodState(tt.pod.UID)
			if diff := cmp.Diff(queue.PodState{Queue: queue.QueueUnschedulable, Attempts: 1}, st); !ok || diff != "" {
				t.Errorf("queue state (held %v) (-want, +got):\n%s", ok, diff)
			}
			if diff := cmp.Diff(queue.Stats{Unschedulable: 1}, e.q.Stats()); diff != "" {
				t.Errorf("queue stats (-want, +got):\n%s", diff)
			}
			if n := e.cache.PodCount(); n != 0 {
				t.Errorf("cache holds %d pods, want none", n)
			}
			if diff := cmp.Diff([]string{cycle.ResultUnschedulable}, e.rec.results()); diff != "" {
				t.Errorf("attempt results (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestScheduleOneWithoutNodes: as upstream, an empty cluster makes the
// attempt unschedulable (reason Unschedulable), with no rejecting plugin to
// wake the pod, so it backs off in the error heap.
func TestScheduleOneWithoutNodes(t *testing.T) {
	e := newEnv(t)
	pod := makePod("p").obj()
	e.addPods(pod)

	e.scheduleNext()

	wantCond := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
		Reason: v1.PodReasonUnschedulable, Message: cycle.ErrNoNodes.Error(), LastTransitionTime: t0}}
	if diff := cmp.Diff(wantCond, e.api.conditions()); diff != "" {
		t.Errorf("conditions (-want, +got):\n%s", diff)
	}
	wantEvents := []event{{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
		Action: "Scheduling", Note: cycle.ErrNoNodes.Error()}}
	if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
		t.Errorf("events (-want, +got):\n%s", diff)
	}
	// No plugin rejected it: the pod backs off in the error heap.
	if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(pod.UID)); diff != "" {
		t.Errorf("rejecting plugins handed to the queue (-want, +got):\n%s", diff)
	}
	if got := e.state(pod.UID); got != queue.QueueBackoff {
		t.Errorf("queue holds the pod in %q, want %q", got, queue.QueueBackoff)
	}
	if diff := cmp.Diff([]string{cycle.ResultUnschedulable}, e.rec.results()); diff != "" {
		t.Errorf("attempt results (-want, +got):\n%s", diff)
	}
}

func TestScheduleOneSkipsPodBeingDeleted(t *testing.T) {
	e := newEnv(t)
	e.addNodes(makeNode("n1", "cpu", "4").obj())
	pod := makePod("p").deleting().obj()
	e.addPods(pod)

	e.scheduleNext()

	if got := e.api.bindCalls(); len(got) != 0 {
		t.Errorf("binds of a pod being deleted: %+v", got)
	}
	if got := e.state(pod.UID); got != "" {
		t.Errorf("queue still holds the pod, in %q; want it handed back with Done", got)
	}
	if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
	if n := e.cache.PodCount(); n != 0 {
		t.Errorf("cache holds %d pods, want none", n)
	}
	if got := e.events.all(); len(got) != 0 {
		t.Errorf("events: %+v", got)
	}
	if got := e.api.conditions(); len(got) != 0 {
		t.Errorf("conditions: %+v", got)
	}
}

func TestBindingFailure(t *testing.T) {
	serverError := apierrors.NewInternalError(errors.New("etcd is down"))
	tests := []struct {
		name string
		hook func(a *fakeAPI, pod *v1.Pod, node string) error
		// requeued: handed back as failed with an error (else with Done).
		requeued bool
		wantMsg  string
	}{{
		name:     "server error",
		hook:     func(*fakeAPI, *v1.Pod, string) error { return serverError },
		requeued: true,
		wantMsg:  "binding rejected: " + serverError.Error(),
	}, {
		name: "conflict, the informer has not seen the other binding yet",
		hook: func(*fakeAPI, *v1.Pod, string) error {
			return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, "p", errors.New("already bound"))
		},
		requeued: true,
		wantMsg:  `binding rejected: Operation cannot be fulfilled on pods/binding "p": already bound`,
	}, {
		name: "conflict, the informer shows the pod bound elsewhere",
		hook: func(a *fakeAPI, pod *v1.Pod, _ string) error {
			a.bindElsewhereLocked(pod.Namespace, pod.Name, "elsewhere")
			return nil // the fake answers Conflict itself
		},
	}, {
		name: "not found, the pod was deleted",
		hook: func(a *fakeAPI, pod *v1.Pod, _ string) error {
			a.removeLocked(pod.Namespace, pod.Name)
			return nil // the fake answers NotFound itself
		},
	}, {
		name: "not found, the pod was replaced by one of the same name",
		hook: func(a *fakeAPI, pod *v1.Pod, _ string) error {
			a.pods[key(pod.Namespace, pod.Name)] = makePod(pod.Name).uid("uid-new").obj()
			return nil
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNodes(makeNode("n1", "cpu", "4").obj())
			pod := makePod("p").req("cpu", "1").obj()
			e.addPods(pod)
			e.api.hook = tt.hook

			e.scheduleNext()

			binds := e.api.bindCalls()
			if len(binds) != 1 || binds[0].Err == "" {
				t.Fatalf("binds: %+v, want one failed bind", binds)
			}
			if n := e.cache.PodCount(); n != 0 {
				t.Errorf("cache holds %d pods: the assumed pod was not forgotten", n)
			}
			if got := e.cachedNode(pod.UID); got != "" {
				t.Errorf("cache still has the pod on %q", got)
			}
			if diff := cmp.Diff([]string{cycle.ResultError}, e.rec.results()); diff != "" {
				t.Errorf("attempt results (-want, +got):\n%s", diff)
			}
			if !tt.requeued {
				if got := e.state(pod.UID); got != "" {
					t.Errorf("queue holds the pod in %q; want it handed back with Done", got)
				}
				if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
					t.Errorf("queue stats (-want, +got):\n%s", diff)
				}
				if got := e.q.rejections(pod.UID); len(got) != 0 {
					t.Errorf("requeued with %+v; want Done", got)
				}
				if got := e.api.conditions(); len(got) != 0 {
					t.Errorf("conditions set on a pod that is gone or bound: %+v", got)
				}
				if got := e.events.all(); len(got) != 0 {
					t.Errorf("events for a pod that is gone or bound: %+v", got)
				}
				return
			}
			if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(pod.UID)); diff != "" {
				t.Errorf("requeue (-want, +got):\n%s", diff)
			}
			if got := e.state(pod.UID); got != queue.QueueBackoff {
				t.Errorf("queue holds the pod in %q, want %q", got, queue.QueueBackoff)
			}
			wantCond := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
				Reason: v1.PodReasonSchedulerError, Message: tt.wantMsg, LastTransitionTime: t0}}
			if diff := cmp.Diff(wantCond, e.api.conditions()); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			wantEvents := []event{{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
				Action: "Scheduling", Note: tt.wantMsg}}
			if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
		})
	}
}

// A pod whose binding failed waits out its backoff, is not popped early
// (it failed with an error), and is then bound once.
func TestBindingFailureRetriedAfterBackoff(t *testing.T) {
	e := newEnv(t)
	e.addNodes(makeNode("n1", "cpu", "4").obj())
	pod := makePod("p").req("cpu", "1").obj()
	e.addPods(pod)
	failures := 1
	e.api.hook = func(*fakeAPI, *v1.Pod, string) error {
		if failures > 0 {
			failures--
			return apierrors.NewInternalError(errors.New("etcd is down"))
		}
		return nil
	}

	e.scheduleNext()
	if diff := cmp.Diff(queue.Stats{Backoff: 1}, e.q.Stats()); diff != "" {
		t.Fatalf("after the failed binding, queue stats (-want, +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.q.Run(ctx)
	// The backoff flush's timer and the leftover flush's ticker.
	waitFor(t, "the queue's flush timers", func() bool { return e.clock.Waiters() == 2 })
	e.clock.Step(3 * time.Second)
	waitFor(t, "the pod back in activeQ", func() bool { return e.q.Stats().Active == 1 })

	e.scheduleNext()

	want := []bindCall{
		{Pod: "default/p", Node: "n1", Err: "Internal error occurred: etcd is down"},
		{Pod: "default/p", Node: "n1"},
	}
	if diff := cmp.Diff(want, e.api.bindCalls()); diff != "" {
		t.Errorf("binds (-want, +got):\n%s", diff)
	}
	if e.api.doubleBinds != 0 {
		t.Errorf("%d binds of a pod already bound", e.api.doubleBinds)
	}
	if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{cycle.ResultError, cycle.ResultScheduled}, e.rec.results()); diff != "" {
		t.Errorf("attempt results (-want, +got):\n%s", diff)
	}
	if got := e.rec.scheduled; len(got) != 1 || got[0].Attempts != 2 {
		t.Errorf("scheduled: %+v, want one pod bound after 2 attempts", got)
	}
}

func TestUnschedulablePodGoneOrBoundMeanwhile(t *testing.T) {
	tests := []struct {
		name    string
		current func(pod *v1.Pod) *v1.Pod // what the informer shows; nil: nothing
	}{
		{"deleted", func(*v1.Pod) *v1.Pod { return nil }},
		{"replaced by a pod of the same name", func(p *v1.Pod) *v1.Pod { return makePod(p.Name).uid("uid-new").obj() }},
		{"bound by someone else", func(p *v1.Pod) *v1.Pod {
			p = p.DeepCopy()
			p.Spec.NodeName = "elsewhere"
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addNodes(makeNode("n1", "cpu", "1").obj())
			pod := makePod("p").req("cpu", "2").obj()
			e.q.Add(pod)
			if cur := tt.current(pod); cur != nil {
				e.api.add(cur)
			}

			e.scheduleNext()

			if got := e.state(pod.UID); got != "" {
				t.Errorf("queue holds the pod in %q; want it handed back with Done", got)
			}
			if got := e.q.rejections(pod.UID); len(got) != 0 {
				t.Errorf("requeued with %+v; want Done", got)
			}
			if got := e.api.conditions(); len(got) != 0 {
				t.Errorf("conditions: %+v", got)
			}
			if got := e.events.all(); len(got) != 0 {
				t.Errorf("events: %+v", got)
			}
			if diff := cmp.Diff([]string{cycle.ResultUnschedulable}, e.rec.results()); diff != "" {
				t.Errorf("attempt results (-want, +got):\n%s", diff)
			}
		})
	}
}

// Successive pods are filtered from where the last cycle stopped (upstream's
// nextStartNodeIndex): with 200 feasible nodes and 100 to find, pods
// alternate between the two halves of the node list. (With several
// workers, which nodes past the first 100 are looked at depends on timing,
// as upstream's; so the halves are exact with one.)
func TestRoundRobinAcrossCycles(t *testing.T) {
	// 0 is adaptive: 50% less 1 point per 125 nodes, but at least 100 nodes.
	for _, percentage := range []int32{50, 0} {
		t.Run(fmt.Sprintf("percentage=%d", percentage), func(t *testing.T) {
			e := newEnv(t, cycle.WithPercentageOfNodesToScore(percentage), cycle.WithParallelism(1))
			const numNodes = 200
			for i := range numNodes {
				e.addNodes(makeNode(fmt.Sprintf("n%03d", i), "cpu", "4").obj())
			}
			var halves []string
			nodes := map[string]bool{}
			for i := range 6 {
				pod := makePod(fmt.Sprintf("p%d", i)).req("cpu", "100m").obj()
				e.addPods(pod)
				e.scheduleNext()
				node := e.cachedNode(pod.UID)
				var idx int
				if _, err := fmt.Sscanf(node, "n%03d", &idx); err != nil {
					t.Fatalf("pod %s on %q: %v", pod.Name, node, err)
				}
				half := "first"
				if idx >= numNodes/2 {
					half = "second"
				}
				halves = append(halves, half)
				nodes[node] = true
			}
			want := []string{"first", "second", "first", "second", "first", "second"}
			if diff := cmp.Diff(want, halves); diff != "" {
				t.Errorf("half of the node list each pod was placed in (-want, +got):\n%s", diff)
			}
			if len(nodes) != 6 {
				t.Errorf("6 pods on %d nodes, want each on its own (the least allocated)", len(nodes))
			}
		})
	}
}

func TestRecorderSeesEveryAttempt(t *testing.T) {
	const tenant = "tenant-a"
	tests := []struct {
		name          string
		nodes         []*v1.Node
		bindErr       error
		wantAttempts  []attempt
		wantScheduled []scheduled
	}{{
		name:          "scheduled: the attempt lasts until the binding returns",
		nodes:         []*v1.Node{makeNode("n1", "cpu", "4").obj()},
		wantAttempts:  []attempt{{tenant, cycle.ResultScheduled, 3 * time.Second}},
		wantScheduled: []scheduled{{tenant, 1, 5 * time.Second}},
	}, {
		name:         "binding failed",
		nodes:        []*v1.Node{makeNode("n1", "cpu", "4").obj()},
		bindErr:      apierrors.NewInternalError(errors.New("etcd is down")),
		wantAttempts: []attempt{{tenant, cycle.ResultError, 3 * time.Second}},
	}, {
		name:         "unschedulable",
		nodes:        []*v1.Node{makeNode("n1", "cpu", "1").obj()},
		wantAttempts: []attempt{{tenant, cycle.ResultUnschedulable, 0}},
	}, {
		name:         "no nodes",
		wantAttempts: []attempt{{tenant, cycle.ResultUnschedulable, 0}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, cycle.WithProfile(tenant))
			e.addNodes(tt.nodes...)
			e.addPods(makePod("p").req("cpu", "2").obj())
			e.api.hook = func(*fakeAPI, *v1.Pod, string) error {
				e.clock.Step(3 * time.Second) // the binding takes 3 s
				return tt.bindErr
			}
			e.clock.Step(2 * time.Second) // the pod waits 2 s in activeQ

			e.scheduleNext()

			e.rec.mu.Lock()
			defer e.rec.mu.Unlock()
			if diff := cmp.Diff(tt.wantAttempts, e.rec.attempts); diff != "" {
				t.Errorf("attempts (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantScheduled, e.rec.scheduled, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scheduled (-want, +got):\n%s", diff)
			}
		})
	}
}

// Run pops until its context ends, then waits for the bindings it started.
func TestRunSchedulesUntilCancelled(t *testing.T) {
	e := newEnv(t)
	e.addNodes(makeNode("n1", "cpu", "4").obj(), makeNode("n2", "cpu", "4").obj())
	var names []string
	for i := range 5 {
		p := makePod(fmt.Sprintf("p%d", i)).req("cpu", "500m").obj()
		e.addPods(p)
		names = append(names, "default/"+p.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.s.Run(ctx) }()
	waitFor(t, "5 pods bound", func() bool { return len(e.api.boundTo()) == 5 })
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if diff := cmp.Diff(names, sortedKeys(e.api.boundTo())); diff != "" {
		t.Errorf("bound pods (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(queue.Stats{}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
}

// Run stops popping once its context has ended, even with pods in
// activeQ: it does not fail them with the context's error (a
// FailedScheduling event and a requeue for every queued pod on shutdown).
func TestRunDoesNotPopAfterCancel(t *testing.T) {
	e := newEnv(t)
	e.addNodes(makeNode("n1", "cpu", "4").obj())
	for i := range 3 {
		e.addPods(makePod(fmt.Sprintf("p%d", i)).obj())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() { defer close(done); e.s.Run(ctx) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if got := e.events.all(); len(got) != 0 {
		t.Errorf("events after the context ended: %+v", got)
	}
	if got := e.rec.results(); len(got) != 0 {
		t.Errorf("attempts after the context ended: %v", got)
	}
	if diff := cmp.Diff(queue.Stats{Active: 3}, e.q.Stats()); diff != "" {
		t.Errorf("queue stats (-want, +got):\n%s", diff)
	}
}

// Run returns when the queue is closed.
func TestRunReturnsWhenTheQueueCloses(t *testing.T) {
	e := newEnv(t)
	done := make(chan struct{})
	go func() { defer close(done); e.s.Run(context.Background()) }()
	e.q.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the queue closed")
	}
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
