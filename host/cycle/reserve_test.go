package cycle_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// reserver is a test plugin with Reserve and PreBind. It keeps a token
// per pod in the PodState at Reserve and checks at PreBind that the same
// state carried it into the binding goroutine.
type reserver struct {
	mu  sync.Mutex
	log []string
	// reserve, preflight and preBind answer for the pod named (a
	// PreBindPreFlight has work by default); gate, if set, is waited on by
	// PreBind.
	reserve, preflight, preBind map[string]*framework.Status
	gate                        chan struct{}
}

const reserverName = "TestReserver"

func (r *reserver) Name() string { return reserverName }

func (r *reserver) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *reserver) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *reserver) Reserve(_ context.Context, ps *framework.PodState, pod *v1.Pod, node string) *framework.Status {
	r.add("Reserve " + pod.Name + " " + node)
	ps.Write(reserverName, fmt.Sprintf("%s@%s", pod.Name, node))
	return r.reserve[pod.Name]
}

func (r *reserver) Unreserve(_ context.Context, _ *framework.PodState, pod *v1.Pod, node string) {
	r.add("Unreserve " + pod.Name + " " + node)
}

func (r *reserver) PreBindPreFlight(_ context.Context, _ *framework.PodState, pod *v1.Pod, _ string) *framework.Status {
	return r.preflight[pod.Name]
}

func (r *reserver) PreBind(ctx context.Context, ps *framework.PodState, pod *v1.Pod, node string) *framework.Status {
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return &framework.Status{Code: framework.Error, Err: ctx.Err()}
		}
	}
	v, _ := ps.Read(reserverName)
	r.add(fmt.Sprintf("PreBind %s %s state=%v", pod.Name, node, v))
	return r.preBind[pod.Name]
}

// reserveEnv is an env whose profile is the default one plus r.
func reserveEnv(t *testing.T, r *reserver, opts ...cycle.Option) *env {
	entries := append(defaultEntries(framework.Listers{}), framework.Entry{Plugin: r})
	e := newEnv(t, append([]cycle.Option{cycle.WithBuilt(framework.Built{Entries: entries}), cycle.WithPluginMetricsSample(10)}, opts...)...)
	// Binds go to r's log too, for the order.
	e.api.hook = func(_ *fakeAPI, pod *v1.Pod, node string) error {
		r.add("Bind " + pod.Name + " " + node)
		return nil
	}
	return e
}

func TestReservePreBindBindInOrder(t *testing.T) {
	for _, sample := range []int{0, 100} {
		t.Run(fmt.Sprintf("sample=%d", sample), func(t *testing.T) {
			r := &reserver{}
			e := reserveEnv(t, r, cycle.WithPluginMetricsSample(sample))
			e.addNodes(makeNode("n1", "cpu", "4").obj())
			e.addPods(makePod("p").req("cpu", "1").obj())

			e.scheduleNext()

			want := []string{"Reserve p n1", "PreBind p n1 state=p@n1", "Bind p n1"}
			if diff := cmp.Diff(want, r.calls()); diff != "" {
				t.Errorf("calls (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"default/p": "n1"}, e.api.boundTo()); diff != "" {
				t.Errorf("bound (-want, +got):\n%s", diff)
			}
			// The preflight found work: p is nominated to n1 before its
			// PreBind, as upstream's NominatedNodeNameForExpectation.
			if diff := cmp.Diff([]string{"nominate default/p n1", "bind default/p n1"}, e.api.writeLog()); diff != "" {
				t.Errorf("API writes (-want, +got):\n%s", diff)
			}
			wantPoints := []string{"wasmsched PreFilter Success", "wasmsched Filter Success", "wasmsched Reserve Success",
				"wasmsched PreBindPreFlight Success", "wasmsched PreBind Success", "wasmsched Bind Success"}
			if diff := cmp.Diff(wantPoints, e.rec.extensionPoints()); diff != "" {
				t.Errorf("extension points (-want, +got):\n%s", diff)
			}
			runs := e.rec.pluginRuns()
			for _, k := range []string{reserverName + " Reserve Success", reserverName + " PreBind Success"} {
				want := 0
				if sample == 100 {
					want = 1
				}
				if runs[k] != want {
					t.Errorf("%s observed %d times, want %d", k, runs[k], want)
				}
			}
		})
	}
}

// A profile without a reserve or preBind plugin (the default one less
// VolumeBinding and DynamicResources) records no such point (nothing runs).
func TestNoReservePointsWithoutPlugins(t *testing.T) {
	entries := slices.DeleteFunc(defaultEntries(framework.Listers{}), func(e framework.Entry) bool {
		return e.Plugin.Name() == abi.PluginVolumeBinding || e.Plugin.Name() == abi.PluginDynamicResources
	})
	e := newEnv(t, cycle.WithBuilt(framework.Built{Entries: entries}), cycle.WithPluginMetricsSample(10))
	e.addNodes(makeNode("n1", "cpu", "4").obj())
	e.addPods(makePod("p").req("cpu", "1").obj())
	e.scheduleNext()
	want := []string{"wasmsched PreFilter Success", "wasmsched Filter Success", "wasmsched Bind Success"}
	if diff := cmp.Diff(want, e.rec.extensionPoints()); diff != "" {
		t.Errorf("extension points (-want, +got):\n%s", diff)
	}
}

func TestReserveFailure(t *testing.T) {
	for _, tt := range []struct {
		name       string
		status     *framework.Status
		wantReason string
		wantMsg    string
		wantQueue  string
		wantReq    podview.Plugins
		wantResult string
		wantPoint  string
	}{{
		name:       "rejected",
		status:     &framework.Status{Code: framework.Unschedulable, Reasons: []string{"volume is taken"}},
		wantReason: v1.PodReasonUnschedulable,
		wantMsg:    "0/1 nodes are available: 1 volume is taken.",
		wantQueue:  queue.QueueUnschedulable,
		wantReq:    podview.Plugins{Unschedulable: []string{reserverName}},
		wantResult: cycle.ResultUnschedulable,
		wantPoint:  "wasmsched Reserve Unschedulable",
	}, {
		name:       "error",
		status:     &framework.Status{Code: framework.Error, Err: errors.New("boom")},
		wantReason: v1.PodReasonSchedulerError,
		wantMsg:    `running Reserve plugin "TestReserver": boom`,
		wantQueue:  queue.QueueBackoff,
		wantReq:    podview.Plugins{},
		wantResult: cycle.ResultError,
		wantPoint:  "wasmsched Reserve Error",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{reserve: map[string]*framework.Status{"p": tt.status}}
			e := reserveEnv(t, r)
			e.addNodes(makeNode("n1", "cpu", "4").obj())
			pod := makePod("p").req("cpu", "1").obj()
			e.addPods(pod)

			e.scheduleNext()

			if diff := cmp.Diff([]string{"Reserve p n1", "Unreserve p n1"}, r.calls()); diff != "" {
				t.Errorf("calls (-want, +got):\n%s", diff)
			}
			if n := e.cache.PodCount(); n != 0 {
				t.Errorf("cache holds %d pods: the assumed pod was not forgotten", n)
			}
			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds: %+v", got)
			}
			wantCond := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
				Reason: tt.wantReason, Message: tt.wantMsg, LastTransitionTime: t0}}
			if diff := cmp.Diff(wantCond, e.api.conditions()); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			wantEvents := []event{{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
				Action: "Scheduling", Note: tt.wantMsg}}
			if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
				t.Errorf("events (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff([]podview.Plugins{tt.wantReq}, e.q.rejections(pod.UID)); diff != "" {
				t.Errorf("requeue (-want, +got):\n%s", diff)
			}
			if got := e.state(pod.UID); got != tt.wantQueue {
				t.Errorf("queue holds the pod in %q, want %q", got, tt.wantQueue)
			}
			if diff := cmp.Diff([]string{tt.wantResult}, e.rec.results()); diff != "" {
				t.Errorf("attempt results (-want, +got):\n%s", diff)
			}
			wantPoints := []string{"wasmsched PreFilter Success", "wasmsched Filter Success", tt.wantPoint,
				"wasmsched Unreserve Success"}
			if diff := cmp.Diff(wantPoints, e.rec.extensionPoints()); diff != "" {
				t.Errorf("extension points (-want, +got):\n%s", diff)
			}
		})
	}
}

// A PreBind failure unreserves and forgets the pod, which backs off with
// its failure as message, and moves the pods its room may now fit (q,
// rejected for lack of cpu while p held it), as upstream's
// handleBindingCycleError.
func TestPreBindFailure(t *testing.T) {
	for _, tt := range []struct {
		name       string
		status     *framework.Status
		wantReason string
		wantMsg    string
		wantResult string
	}{{
		name:       "rejected",
		status:     &framework.Status{Code: framework.UnschedulableAndUnresolvable, Reasons: []string{"claim is gone"}},
		wantReason: v1.PodReasonUnschedulable,
		wantMsg:    "claim is gone",
		wantResult: cycle.ResultUnschedulable,
	}, {
		name:       "error",
		status:     &framework.Status{Code: framework.Error, Err: errors.New("boom")},
		wantReason: v1.PodReasonSchedulerError,
		wantMsg:    `running PreBind plugin "TestReserver": boom`,
		wantResult: cycle.ResultError,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{preBind: map[string]*framework.Status{"p": tt.status}, gate: make(chan struct{})}
			e := reserveEnv(t, r)
			e.addNodes(makeNode("n1", "cpu", "1").obj())
			p := makePod("p").priority(10).req("cpu", "1").obj()
			q := makePod("q").priority(0).req("cpu", "1").obj()
			e.addPods(p, q)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()

			// p is placed, its PreBind waits; q finds no room meanwhile.
			for range 2 {
				ent, err := e.q.Pop(ctx)
				if err != nil {
					t.Fatal(err)
				}
				e.s.ScheduleOne(ctx, ent)
			}
			waitFor(t, "q unschedulable", func() bool { return e.state(q.UID) == queue.QueueUnschedulable })
			close(r.gate)
			e.s.WaitForBindings()

			want := []string{"Reserve p n1", "PreBind p n1 state=p@n1", "Unreserve p n1"}
			if diff := cmp.Diff(want, r.calls()); diff != "" {
				t.Errorf("calls (-want, +got):\n%s", diff)
			}
			// Nominated before its PreBind, p's nomination is withdrawn
			// with the binding.
			if diff := cmp.Diff([]string{"default/p n1", "default/p "}, e.api.nominations()); diff != "" {
				t.Errorf("nominations (-want, +got):\n%s", diff)
			}
			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds: %+v", got)
			}
			if n := e.cache.PodCount(); n != 0 {
				t.Errorf("cache holds %d pods: the assumed pod was not forgotten", n)
			}
			if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(p.UID)); diff != "" {
				t.Errorf("requeue (-want, +got):\n%s", diff)
			}
			if got := e.state(p.UID); got != queue.QueueBackoff {
				t.Errorf("queue holds p in %q, want %q", got, queue.QueueBackoff)
			}
			if got := e.state(q.UID); got != queue.QueueBackoff {
				t.Errorf("queue holds q in %q, want %q: p's forgotten room should have moved it", got, queue.QueueBackoff)
			}
			var conds []condCall
			for _, c := range e.api.conditions() {
				if c.Pod == "default/p" {
					conds = append(conds, c)
				}
			}
			wantCond := []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
				Reason: tt.wantReason, Message: tt.wantMsg, LastTransitionTime: t0}}
			if diff := cmp.Diff(wantCond, conds); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			wantEvent := event{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
				Action: "Scheduling", Note: tt.wantMsg}
			found := false
			for _, ev := range e.events.all() {
				found = found || ev == wantEvent
			}
			if !found {
				t.Errorf("events %+v, want %+v among them", e.events.all(), wantEvent)
			}
			if got := e.rec.results(); len(got) != 2 || got[1] != tt.wantResult {
				t.Errorf("attempt results %v, want q's unschedulable then p's %s", got, tt.wantResult)
			}
		})
	}
}

// PreBindPreFlight decides whether the pod is nominated and its PreBind
// runs: Skip binds it with neither, an Error fails the binding before
// PreBind, as upstream's bindingCycle.
func TestPreBindPreFlight(t *testing.T) {
	for _, tt := range []struct {
		name      string
		preflight *framework.Status
		wantCalls []string
		wantWrite []string
		wantCond  []condCall
		wantPoint []string
	}{{
		name:      "skip",
		preflight: &framework.Status{Code: framework.Skip},
		wantCalls: []string{"Reserve p n1", "Bind p n1"},
		wantWrite: []string{"bind default/p n1"},
		wantPoint: []string{"wasmsched PreBindPreFlight Skip", "wasmsched PreBind Success", "wasmsched Bind Success"},
	}, {
		name:      "error",
		preflight: &framework.Status{Code: framework.Error, Err: errors.New("boom")},
		wantCalls: []string{"Reserve p n1", "Unreserve p n1"},
		wantCond: []condCall{{Pod: "default/p", Type: v1.PodScheduled, Status: v1.ConditionFalse,
			Reason: v1.PodReasonSchedulerError, Message: `running PreBindPreFlight "TestReserver": boom`, LastTransitionTime: t0}},
		wantPoint: []string{"wasmsched PreBindPreFlight Error", "wasmsched Unreserve Success"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{preflight: map[string]*framework.Status{"p": tt.preflight}}
			e := reserveEnv(t, r)
			e.addNodes(makeNode("n1", "cpu", "1").obj())
			e.addPods(makePod("p").req("cpu", "1").obj())

			e.scheduleNext()

			if diff := cmp.Diff(tt.wantCalls, r.calls()); diff != "" {
				t.Errorf("calls (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWrite, e.api.writeLog()); diff != "" {
				t.Errorf("API writes (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCond, e.api.conditions()); diff != "" {
				t.Errorf("conditions (-want, +got):\n%s", diff)
			}
			points := e.rec.extensionPoints()
			if i := slices.Index(points, "wasmsched Reserve Success"); i < 0 || !slices.Equal(points[i+1:], tt.wantPoint) {
				t.Errorf("extension points %v, want %v after Reserve", points, tt.wantPoint)
			}
		})
	}
}

// A pod group's members are reserved as they are placed on the snapshot;
// a group that fails unreserves every reserved member, last first, and
// binds none (all or nothing).
func TestGroupUnreservesAll(t *testing.T) {
	for _, tt := range []struct {
		name    string
		nodes   int
		reserve map[string]*framework.Status
		want    []string
		m3msg   string
	}{{
		name:  "a member does not fit",
		nodes: 2,
		want:  []string{"Reserve m1 {m1}", "Reserve m2 {m2}", "Unreserve m2 {m2}", "Unreserve m1 {m1}"},
		m3msg: "0/2 nodes are available: 2 Insufficient cpu.",
	}, {
		name:    "a member's reserve rejects it",
		nodes:   3,
		reserve: map[string]*framework.Status{"m3": {Code: framework.Unschedulable, Reasons: []string{"no device"}}},
		want: []string{"Reserve m1 {m1}", "Reserve m2 {m2}", "Reserve m3 {m3}", "Unreserve m3 {m3}",
			"Unreserve m2 {m2}", "Unreserve m1 {m1}"},
		m3msg: "0/1 nodes are available: 1 no device.",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{reserve: tt.reserve}
			e := reserveEnv(t, r)
			for i := range tt.nodes {
				e.addNodes(makeNode(fmt.Sprintf("n%d", i+1), "cpu", "1").obj())
			}
			e.q.AddPodGroup(makePodGroup("g", 3))
			e.addPods(member("m1").obj(), member("m2").obj(), member("m3").obj())

			e.scheduleNext()

			calls := r.calls()
			if diff := cmp.Diff(withNodes(tt.want, calls), calls); diff != "" {
				t.Errorf("calls (-want, +got):\n%s", diff)
			}
			if got := e.api.bindCalls(); len(got) != 0 {
				t.Errorf("binds: %+v; want none (all or nothing)", got)
			}
			if n := e.cache.PodCount(); n != 0 {
				t.Errorf("cache holds %d pods, want none", n)
			}
			var m3 []string
			for _, c := range e.api.conditions() {
				if c.Pod == "default/m3" {
					m3 = append(m3, c.Message)
				}
			}
			if diff := cmp.Diff([]string{tt.m3msg}, m3); diff != "" {
				t.Errorf("m3's condition messages (-want, +got):\n%s", diff)
			}
		})
	}
}

// A group that fits reserves every member and binds each after its
// PreBind, with its own state.
func TestGroupReservedMembersBind(t *testing.T) {
	r := &reserver{}
	e := reserveEnv(t, r)
	for i := range 2 {
		e.addNodes(makeNode(fmt.Sprintf("n%d", i+1), "cpu", "1").obj())
	}
	e.q.AddPodGroup(makePodGroup("g", 2))
	e.addPods(member("m1").obj(), member("m2").obj())

	e.scheduleNext()

	calls := r.calls()
	nodes := reservedOn(calls)
	if diff := cmp.Diff(withNodes([]string{"Reserve m1 {m1}", "Reserve m2 {m2}"}, calls), calls[:2]); diff != "" {
		t.Errorf("reserves (-want, +got):\n%s", diff)
	}
	for _, m := range []string{"m1", "m2"} {
		node := nodes[m]
		pre, bind := -1, -1
		for i, c := range calls {
			switch c {
			case fmt.Sprintf("PreBind %s %s state=%s@%s", m, node, m, node):
				pre = i
			case "Bind " + m + " " + node:
				bind = i
			}
		}
		if pre < 2 || bind < pre {
			t.Errorf("%s: PreBind at %d, Bind at %d in %q; want PreBind with its own state, then Bind", m, pre, bind, calls)
		}
	}
	if diff := cmp.Diff(map[string]string{"default/m1": nodes["m1"], "default/m2": nodes["m2"]}, e.api.boundTo()); diff != "" {
		t.Errorf("bound (-want, +got):\n%s", diff)
	}
	if nodes["m1"] == nodes["m2"] {
		t.Errorf("both members reserved on %s, which has room for one", nodes["m1"])
	}
}

// reservedOn maps each pod to the node its Reserve call named.
func reservedOn(calls []string) map[string]string {
	out := map[string]string{}
	for _, c := range calls {
		var pod, node string
		if n, _ := fmt.Sscanf(c, "Reserve %s %s", &pod, &node); n == 2 {
			out[pod] = node
		}
	}
	return out
}

// withNodes replaces {pod} in want by the node calls reserved pod on (the
// cycle breaks ties between equal nodes at random).
func withNodes(want, calls []string) []string {
	nodes := reservedOn(calls)
	out := make([]string, len(want))
	for i, w := range want {
		for pod, node := range nodes {
			w = strings.ReplaceAll(w, "{"+pod+"}", node)
		}
		out[i] = w
	}
	return out
}

// A binding goroutine whose context ends during PreBind undoes the
// reservation and forgets the pod like any other PreBind failure.
func TestPreBindContextEnds(t *testing.T) {
	r := &reserver{gate: make(chan struct{})}
	e := reserveEnv(t, r)
	e.addNodes(makeNode("n1", "cpu", "1").obj())
	p := makePod("p").req("cpu", "1").obj()
	e.addPods(p)
	ctx, cancel := context.WithCancel(context.Background())
	ent, err := e.q.Pop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.s.ScheduleOne(ctx, ent)
	cancel()
	e.s.WaitForBindings()

	if diff := cmp.Diff([]string{"Reserve p n1", "Unreserve p n1"}, r.calls()); diff != "" {
		t.Errorf("calls (-want, +got):\n%s", diff)
	}
	if got := e.api.bindCalls(); len(got) != 0 {
		t.Errorf("binds: %+v", got)
	}
	if n := e.cache.PodCount(); n != 0 {
		t.Errorf("cache holds %d pods: the assumed pod was not forgotten", n)
	}
	if diff := cmp.Diff([]podview.Plugins{{}}, e.q.rejections(p.UID)); diff != "" {
		t.Errorf("requeue (-want, +got):\n%s", diff)
	}
	const msg = `running PreBind plugin "TestReserver": context canceled`
	wantEvents := []event{{Object: "default/p", Type: v1.EventTypeWarning, Reason: "FailedScheduling",
		Action: "Scheduling", Note: msg}}
	if diff := cmp.Diff(wantEvents, e.events.all()); diff != "" {
		t.Errorf("events (-want, +got):\n%s", diff)
	}
}

// A victim in its PreBind (assumed, not bound: waiting for its volume, say)
// is preempted in memory, as upstream's: its binding is canceled and it
// goes back to the queue, with no API eviction, and the Preempted event
// says so; the preemptor then takes the room.
func TestPreemptionCancelsAPreBind(t *testing.T) {
	r := &reserver{gate: make(chan struct{})} // v's PreBind waits until canceled
	e := reserveEnv(t, r, cycle.WithPreemption(cycle.Preemption{}))
	e.addNodes(makeNode("n1", "cpu", "1").obj())
	v := makePod("v").priority(0).req("cpu", "1").obj()
	e.addPods(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.startNext(ctx)
	waitFor(t, "v nominated before its PreBind", func() bool { return len(e.api.nominations()) > 0 })

	p := makePod("p").priority(10).req("cpu", "1").obj()
	e.addPods(p)
	e.startNext(ctx) // p preempts v
	e.s.WaitForBindings()

	if got := e.api.evictions(); len(got) != 0 {
		t.Errorf("evictions %v, want none: v was not bound", got)
	}
	if _, ok := e.api.Current("default", "v"); !ok {
		t.Error("v was deleted")
	}
	if got := e.state(v.UID); got != queue.QueueBackoff {
		t.Errorf("v is %q after its binding was canceled, want %q", got, queue.QueueBackoff)
	}
	// The failure names the cancellation's cause, as upstream's.
	wantCond := []condCall{{Pod: "default/v", Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonSchedulerError,
		Message: `running PreBind plugin "TestReserver": preempted by DefaultPreemption`, LastTransitionTime: t0}}
	var got []condCall
	for _, c := range e.api.conditions() {
		if c.Pod == "default/v" {
			got = append(got, c)
		}
	}
	if diff := cmp.Diff(wantCond, got); diff != "" {
		t.Errorf("v's conditions (-want, +got):\n%s", diff)
	}
	want := []event{{Object: "default/v", Type: v1.EventTypeNormal, Reason: "Preempted", Action: "Preempting",
		Note: "Preempted by pod " + string(p.UID) + " on node n1 (in kube-scheduler memory)."}}
	if diff := cmp.Diff(want, e.reasonEvents("Preempted")); diff != "" {
		t.Errorf("Preempted events (-want, +got):\n%s", diff)
	}
	if got := e.api.bindCalls(); len(got) != 0 {
		t.Errorf("binds %+v before p's next attempt, want none", got)
	}
	close(r.gate)
	if ent := e.scheduleNext(); !isPod(ent, p) {
		t.Fatalf("popped %v, want p", ent)
	}
	if diff := cmp.Diff(map[string]string{"default/p": "n1"}, e.api.boundTo()); diff != "" {
		t.Errorf("bound (-want, +got):\n%s", diff)
	}
}

// With WithClusterMoves, the room a pod forgotten after its failed binding
// frees moves the pods of the other profiles' queues too, as upstream's one
// queue does.
func TestBindingFailureMovesOtherProfiles(t *testing.T) {
	var (
		e     *env
		other *queue.Queue
	)
	moves := func(ev abi.Event, only func(abi.PodView) bool) {
		for _, q := range []*queue.Queue{e.q.Queue, other} {
			if only == nil {
				q.MoveOnEvent(ev)
			} else {
				q.MoveOnEventFor(ev, only)
			}
		}
	}
	r := &reserver{preBind: map[string]*framework.Status{"p": {Code: framework.Error, Err: errors.New("boom")}}}
	e = reserveEnv(t, r, cycle.WithClusterMoves(moves))
	other = queue.New(queue.WithClock(e.clock))
	t.Cleanup(other.Close)
	e.addNodes(makeNode("n1", "cpu", "1").obj())

	// The other profile's pod o found no room while p held it.
	o := makePod("o").req("cpu", "1").obj()
	other.Add(o)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ent, err := other.Pop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.AddUnschedulableIfNotPresent(ent.(*queue.Pod), podview.Plugins{Unschedulable: []string{abi.PluginNodeResourcesFit}}); err != nil {
		t.Fatal(err)
	}

	e.addPods(makePod("p").req("cpu", "1").obj())
	e.scheduleNext() // p's PreBind fails: p is forgotten

	if st, _ := other.PodState(o.UID); st.Queue == queue.QueueUnschedulable {
		t.Errorf("the other profile's pod o is still %q after p's room was freed, want it moved", st.Queue)
	}
}
