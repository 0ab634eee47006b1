package cycle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
)

// postFilterer is a test PostFilterPlugin: it answers st and logs, at each
// run, whether it had the pod's state and how many preemptions were
// recorded so far.
type postFilterer struct {
	st  *framework.Status
	rec *attemptLog
	log []string
}

func (*postFilterer) Name() string { return "TestPostFilter" }

func (p *postFilterer) PostFilter(_ context.Context, ps *framework.PodState, pod *v1.Pod) *framework.Status {
	p.log = append(p.log, fmt.Sprintf("%s state=%v preemptions=%d", pod.Name, ps != nil, len(p.rec.podPreemptions())))
	return p.st
}

// TestPostFilterPluginsBeforePreemption checks upstream's
// RunPostFilterPlugins in the cycle: a pod that fits nowhere meets the
// profile's PostFilter plugins first; Unschedulable goes on to preemption,
// their reasons and preemption's message joined in FailedScheduling's
// message; an Error ends it, with its text in the message.
func TestPostFilterPluginsBeforePreemption(t *testing.T) {
	const fit = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."
	const preempted = "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, " +
		"1 Preemption is not helpful for scheduling."
	tests := []struct {
		name        string
		st          *framework.Status
		preemption  bool
		msg         string
		preemptions int
		point       string
	}{
		{name: "unschedulable with a reason: preemption follows", preemption: true,
			st:  &framework.Status{Code: framework.Unschedulable, Reasons: []string{"deallocation of ResourceClaim completed"}},
			msg: fit + " deallocation of ResourceClaim completed, " + preempted, preemptions: 1, point: "wasmsched PostFilter Unschedulable"},
		{name: "unschedulable without a reason", preemption: true, st: &framework.Status{Code: framework.Unschedulable},
			msg: fit + " " + preempted, preemptions: 1, point: "wasmsched PostFilter Unschedulable"},
		{name: "no preemption: the plugins' reasons alone",
			st:  &framework.Status{Code: framework.Unschedulable, Reasons: []string{"deallocation of ResourceClaim completed"}},
			msg: fit + " deallocation of ResourceClaim completed", point: "wasmsched PostFilter Unschedulable"},
		{name: "an error ends it", preemption: true, st: &framework.Status{Code: framework.Error, Err: errors.New("boom")},
			msg: fit + " boom", point: "wasmsched PostFilter Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pf := &postFilterer{st: tt.st}
			opts := []cycle.Option{cycle.WithBuilt(framework.Built{Entries: append(defaultEntries(framework.Listers{}), framework.Entry{Plugin: pf})}), cycle.WithPluginMetricsSample(10)}
			if tt.preemption {
				opts = append(opts, cycle.WithPreemption(cycle.Preemption{}))
			}
			e := newEnv(t, opts...)
			pf.rec = e.rec
			e.addNodes(makeNode("n1", "cpu", "1").obj(), makeNode("n2", "cpu", "4").taint("k", v1.TaintEffectNoSchedule).obj())
			e.addRunning(makePod("v").priority(5).req("cpu", "1").on("n1").obj())
			pod := makePod("p").priority(1).req("cpu", "1").obj()
			e.addPods(pod)

			e.scheduleNext()

			if diff := cmp.Diff([]string{"p state=true preemptions=0"}, pf.log); diff != "" {
				t.Errorf("PostFilter runs (-want, +got):\n%s", diff)
			}
			if got := len(e.rec.podPreemptions()); got != tt.preemptions {
				t.Errorf("%d preemptions recorded, want %d", got, tt.preemptions)
			}
			if got := e.condition(pod); got != tt.msg {
				t.Errorf("condition message\n got %q\nwant %q", got, tt.msg)
			}
			var points []string
			for _, p := range e.rec.extensionPoints() {
				if strings.HasPrefix(p, "wasmsched PostFilter ") {
					points = append(points, p)
				}
			}
			if diff := cmp.Diff([]string{tt.point}, points); diff != "" {
				t.Errorf("PostFilter observed (-want, +got):\n%s", diff)
			}
		})
	}
}
