package e2e

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// Asynchronous preemption (upstream's SchedulerAsyncPreemption, GA in
// 1.37) and what follows a preemption: the scheduler keeps scheduling while
// a preemptor waits for its victims, and the room a nomination held is
// offered to other pods as soon as the nomination goes.

// slowNode creates a node with no kubelet at all (not KWOK's): a pod bound
// there and deleted with a grace period stays terminating until the test
// deletes it for good, as on a node whose kubelet is slow to stop it.
func slowNode(t *testing.T, s *scheduler, name, cpu string) string {
	t.Helper()
	createNode(t, s.c, nodeSpec{name: name, cpu: cpu, memory: "32Gi"})
	return name
}

// boundSlowly creates p bound to node with a long termination grace period
// (nothing finishes its termination on a slow node).
func boundSlowly(t *testing.T, s *scheduler, p *v1.Pod, node string) {
	t.Helper()
	grace := int64(600)
	p.Spec.NodeName = node
	p.Spec.TerminationGracePeriodSeconds = &grace
	submit(t, s.c, p)
}

// waitPreempting waits until victim is terminating and preemptor is
// nominated to node: the preemption is written and waits for the victim.
func waitPreempting(t *testing.T, s *scheduler, preemptor, victim, node string) {
	t.Helper()
	waitFor(t, 60*time.Second, preemptor+" nominated to "+node+" and "+victim+" terminating", func() (bool, error) {
		p := getPod(t, s.c, s.ns, preemptor)
		v := getPod(t, s.c, s.ns, victim)
		return p.Status.NominatedNodeName == node && v.DeletionTimestamp != nil, nil
	})
}

// forceDelete deletes a pod at once (grace period 0), as a kubelet
// finishing its termination would.
func forceDelete(t *testing.T, s *scheduler, name string) {
	t.Helper()
	zero := int64(0)
	if err := s.c.CoreV1().Pods(s.ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// TestNominatedRoomFreedWhenPreemptorDeleted: a lower-priority pod is
// refused the room a nominated preemptor holds while its victim
// terminates; once the preemptor is deleted, the room is offered at once
// (the nominated pod's deletion moves the pods of lower or equal priority,
// as an assigned pod's deletion would) and the pod is bound within seconds,
// not after the 5-minute unschedulable flush.
func TestNominatedRoomFreedWhenPreemptorDeleted(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createPriorityClasses(t, s.c)
		node := slowNode(t, s, "slow", "2")
		onSlow := withNodeSelector(v1.LabelHostname, node)
		boundSlowly(t, s, newPod(s.ns, "victim", "1", withPriorityClass(pcLow)), node)
		s.start(t)

		// slow: victim (1 cpu, terminating) + preemptor (2, nominated) > 2.
		submit(t, s.c, newPod(s.ns, "preemptor", "2", withPriorityClass(pcHigh), onSlow))
		waitPreempting(t, s, "preemptor", "victim", node)

		// lower would fit next to the terminating victim, but not next to
		// the preemptor's nomination; preempting the victim would not help.
		submit(t, s.c, newPod(s.ns, "lower", "1", withPriorityClass(pcMid), onSlow))
		p := waitCondition(t, s, "lower", v1.PodReasonUnschedulable, 60*time.Second)
		s.logf(t, "lower: %s", conditionText(scheduledCondition(p)))
		testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
			if p := getPod(t, s.c, s.ns, "lower"); p.Spec.NodeName != "" {
				return fmt.Errorf("lower bound to %s while the preemptor's nomination holds the room", p.Spec.NodeName)
			}
			return nil
		})

		if err := s.c.CoreV1().Pods(s.ns).Delete(context.Background(), "preemptor", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if got := waitBound(t, s.c, s.ns, "lower", 20*time.Second); got != node {
			t.Errorf("lower bound to %s, want %s", got, node)
		}
		s.logf(t, "lower bound %v after the preemptor was deleted", time.Since(t0).Round(time.Millisecond))
		stillTerminating(t, s, "victim")
	})
}

// TestSchedulingGoesOnWhileAVictimTerminates: while a preemptor waits for a
// victim that terminates slowly, pods created meanwhile for the other nodes
// are all bound; the preemptor keeps its nomination, and is bound once its
// victim is gone.
func TestSchedulingGoesOnWhileAVictimTerminates(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createPriorityClasses(t, s.c)
		node := slowNode(t, s, "slow", "1")
		others := fakeNodes(t, s, 2, "4", nil)
		boundSlowly(t, s, newPod(s.ns, "victim", "1", withPriorityClass(pcLow)), node)
		s.start(t)

		submit(t, s.c, newPod(s.ns, "preemptor", "1", withPriorityClass(pcHigh), withNodeSelector(v1.LabelHostname, node)))
		waitPreempting(t, s, "preemptor", "victim", node)

		t0 := time.Now()
		var names []string
		for i := range 20 {
			name := fmt.Sprintf("meanwhile-%02d", i)
			names = append(names, name)
			submit(t, s.c, newPod(s.ns, name, "200m", withPriorityClass(pcMid)))
		}
		for _, n := range names {
			if got := waitBound(t, s.c, s.ns, n, 60*time.Second); !slices.Contains(others, got) {
				t.Errorf("%s bound to %s, want one of %v", n, got, others)
			}
		}
		s.logf(t, "%d pods bound in %v while the victim terminates", len(names), time.Since(t0).Round(time.Millisecond))
		p := getPod(t, s.c, s.ns, "preemptor")
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName != node {
			t.Errorf("preemptor: bound %q, nominated %q; want pending, nominated to %s", p.Spec.NodeName, p.Status.NominatedNodeName, node)
		}
		stillTerminating(t, s, "victim")

		forceDelete(t, s, "victim")
		if got := waitBound(t, s.c, s.ns, "preemptor", 60*time.Second); got != node {
			t.Errorf("preemptor bound to %s, want %s", got, node)
		}
	})
}

// stillTerminating asserts that the pod is still there, terminating.
func stillTerminating(t *testing.T, s *scheduler, name string) {
	t.Helper()
	if p := getPod(t, s.c, s.ns, name); p.DeletionTimestamp == nil {
		t.Errorf("%s is not terminating", name)
	}
}

// metricFamily is what TestPreemptionMetrics expects of a family: its
// label names and, per series it must hold, some label values.
type metricFamily struct {
	name   string
	labels []string
	series [][]string // each `k="v"` list must match one series
}

// TestPreemptionMetrics scrapes /metrics after a pod preemption, a pod
// group preemption (of a pod group's member) and enough attempts for the
// sampled plugin metrics, and finds each family with upstream's labels.
func TestPreemptionMetrics(t *testing.T) {
	want := []metricFamily{
		{name: "scheduler_preemption_attempts_total"},
		{name: "scheduler_preemption_victims"},
		{name: "scheduler_workload_preemption_attempts_total", labels: []string{"result"}, series: [][]string{{`result="Success"`}}},
		{name: "scheduler_workload_preemption_victims"},
		{name: "scheduler_preemption_workload_disruptions", labels: []string{"preemptor"}, series: [][]string{{`preemptor="podgroup"`}}},
		{name: "scheduler_preemption_evaluation_duration_seconds", labels: []string{"preemptor", "result"},
			series: [][]string{{`preemptor="pod"`, `result="Success"`}, {`preemptor="podgroup"`, `result="Success"`}}},
		{name: "scheduler_preemption_execution_duration_seconds", labels: []string{"preemptor", "result"},
			series: [][]string{{`preemptor="pod"`, `result="success"`}, {`preemptor="podgroup"`, `result="success"`}}},
		{name: "scheduler_preemption_goroutines_execution_total", labels: []string{"result"}, series: [][]string{{`result="success"`}}},
		{name: "scheduler_plugin_execution_duration_seconds", labels: []string{"extension_point", "plugin", "status"},
			series: [][]string{{`plugin="NodeResourcesFit"`, `extension_point="Filter"`}}},
		{name: "scheduler_framework_extension_point_duration_seconds", labels: []string{"extension_point", "profile", "status"},
			series: [][]string{
				{`extension_point="Filter"`, `profile="` + schedulerName + `"`, `status="Success"`},
				{`extension_point="PostFilter"`, `status="Success"`},
				{`extension_point="PodGroupPostFilter"`, `status="Success"`},
			}},
		{name: "scheduler_queued_entities", labels: []string{"queue", "type"}},
		{name: "scheduler_pod_scheduling_attempts"},
		{name: "scheduler_pending_pods", labels: []string{"queue"}},
		{name: "scheduler_inflight_events", labels: []string{"event"}},
	}
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createPriorityClasses(t, s.c)
		a := fakeNodes(t, s, 1, "4", map[string]string{"zone": "a"})[0]
		b := fakeNodes(t, s, 1, "4", map[string]string{"zone": "b"})[0]
		fakeNodes(t, s, 1, "32", map[string]string{"zone": "c"})
		base := time.Now().Add(-time.Hour).Truncate(time.Second)
		runOn(t, s.c, newPod(s.ns, "low-a", "4", withPriorityClass(pcLow)), a, base)
		createGroup(t, s, groupSpec{name: "victims", minCount: 1, priorityClass: pcLow})
		runOn(t, s.c, newPod(s.ns, "low-b", "4", withPriorityClass(pcLow), inGroup("victims")), b, base)
		s.start(t)

		submit(t, s.c, newPod(s.ns, "preemptor", "4", withPriorityClass(pcHigh), withNodeSelector("zone", "a")))
		createGroup(t, s, groupSpec{name: "preemptors", minCount: 2, priorityClass: pcHigh})
		for _, n := range []string{"m0", "m1"} {
			submit(t, s.c, newPod(s.ns, n, "2", withPriorityClass(pcHigh), withNodeSelector("zone", "b"), inGroup("preemptors")))
		}
		// Enough cycles that a sampled one (10%) is all but certain:
		// 0.9^100 < 3e-5.
		var small []string
		for i := range 100 {
			n := fmt.Sprintf("small-%03d", i)
			small = append(small, n)
			submit(t, s.c, newPod(s.ns, n, "10m", withPriorityClass(pcLow), withNodeSelector("zone", "c")))
		}
		for _, n := range append([]string{"preemptor", "m0", "m1"}, small...) {
			waitBound(t, s.c, s.ns, n, 120*time.Second)
		}
		var page []byte
		waitFor(t, 30*time.Second, "the preemptions' metrics", func() (bool, error) {
			page = s.page(t)
			return testenv.SumSamples(page, "scheduler_preemption_goroutines_execution_total") >= 2, nil
		})
		fams, err := parseMetrics(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			f, ok := fams[w.name]
			if !ok {
				t.Errorf("%s: not exposed", w.name)
				continue
			}
			if got := labelNames(f); !slices.Equal(got, w.labels) {
				t.Errorf("%s: labels %v, want %v", w.name, got, w.labels)
			}
			for _, ls := range w.series {
				if testenv.SumSamples(page, seriesName(f, w.name), ls...) == 0 {
					t.Errorf("%s: no series with %v (or it is 0)", w.name, ls)
				}
			}
			s.logf(t, "%s: %d series", w.name, len(f.GetMetric()))
		}
	})
}

func parseMetrics(page []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(page))
}

// labelNames are the label names of a family's series, sorted, without
// the histogram's le.
func labelNames(f *dto.MetricFamily) []string {
	seen := map[string]bool{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			seen[l.GetName()] = true
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// seriesName is the sample name to sum for a family: its count for a
// histogram.
func seriesName(f *dto.MetricFamily, name string) string {
	if f.GetType() == dto.MetricType_HISTOGRAM {
		return name + "_count"
	}
	return name
}
