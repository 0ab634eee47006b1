package metrics

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wasmsched/wasmsched/host/cycle"
)

// observed is what a histogram series holds.
type observed struct {
	Count uint64
	Sum   float64
}

// histograms gathers the histogram family name from reg, by its labels
// ("k=v,k=v", sorted by name).
func histograms(t *testing.T, reg prometheus.Gatherer, name string) map[string]observed {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]observed{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			h := m.GetHistogram()
			out[strings.Join(ls, ",")] = observed{h.GetSampleCount(), h.GetSampleSum()}
		}
	}
	return out
}

// bucketBounds are the upper bounds of the histogram family name's first
// series.
func bucketBounds(t *testing.T, reg prometheus.Gatherer, name string) []float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			var bs []float64
			for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
				bs = append(bs, b.GetUpperBound())
			}
			return bs
		}
	}
	t.Fatalf("no series of %s", name)
	return nil
}

func TestCycleAttempts(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Attempt("wasmsched", cycle.ResultScheduled, 3*time.Millisecond)
	c.Attempt("wasmsched", cycle.ResultScheduled, 5*time.Millisecond)
	c.Attempt("wasmsched", cycle.ResultUnschedulable, time.Second)
	c.Attempt("tenant-a", cycle.ResultError, 250*time.Millisecond)

	want := `
# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="tenant-a",result="error"} 1
scheduler_schedule_attempts_total{profile="wasmsched",result="scheduled"} 2
scheduler_schedule_attempts_total{profile="wasmsched",result="unschedulable"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "scheduler_schedule_attempts_total"); err != nil {
		t.Error(err)
	}
	wantDur := map[string]observed{
		"profile=tenant-a,result=error":          {1, 0.25},
		"profile=wasmsched,result=scheduled":     {2, 0.008},
		"profile=wasmsched,result=unschedulable": {1, 1},
	}
	if diff := cmp.Diff(wantDur, histograms(t, reg, "scheduler_scheduling_attempt_duration_seconds")); diff != "" {
		t.Errorf("scheduler_scheduling_attempt_duration_seconds (-want, +got):\n%s", diff)
	}
	// Upstream's buckets: 1 ms doubling 15 times.
	bs := bucketBounds(t, reg, "scheduler_scheduling_attempt_duration_seconds")
	if len(bs) != 15 || bs[0] != 0.001 || bs[14] != 16.384 {
		t.Errorf("duration buckets %v, want 15 from 0.001 to 16.384", bs)
	}
}

func TestCycleSLIAttemptsLabel(t *testing.T) {
	tests := []struct {
		attempts int
		label    string
	}{
		{1, "1"},
		{2, "2"},
		{14, "14"},
		{15, "15+"},
		{16, "15+"},
		{1000, "15+"},
	}
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]observed{}
	for _, tt := range tests {
		c.Scheduled("wasmsched", tt.attempts, 2*time.Second)
		o := want["attempts="+tt.label]
		want["attempts="+tt.label] = observed{o.Count + 1, o.Sum + 2}
	}
	if diff := cmp.Diff(want, histograms(t, reg, "scheduler_pod_scheduling_sli_duration_seconds")); diff != "" {
		t.Errorf("scheduler_pod_scheduling_sli_duration_seconds (-want, +got):\n%s", diff)
	}
	bs := bucketBounds(t, reg, "scheduler_pod_scheduling_sli_duration_seconds")
	if len(bs) != 20 || bs[0] != 0.01 {
		t.Errorf("SLI buckets %v, want upstream's 20 from 0.01", bs)
	}
}

func TestCyclePreemption(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(result string, victims, pdb int, d time.Duration) cycle.PreemptionAttempt {
		return cycle.PreemptionAttempt{Preemptor: cycle.PreemptorPod, Result: result, Victims: victims, PDBViolations: pdb, Duration: d}
	}
	c.Preempted(pod(cycle.PreemptionSuccess, 3, 1, 2*time.Millisecond))
	c.Preempted(pod(cycle.PreemptionSuccess, 1, 0, 4*time.Millisecond))
	c.Preempted(pod(cycle.PreemptionUnschedulable, 0, 0, time.Millisecond)) // counts, observes no victims
	c.PreemptionWritten(cycle.PreemptorPod, cycle.WrittenSuccess, 100*time.Millisecond)
	c.PreemptionWritten(cycle.PreemptorPod, cycle.WrittenError, 50*time.Millisecond)

	if got := testutil.ToFloat64(c.preemptionAttempts); got != 3 {
		t.Errorf("scheduler_preemption_attempts_total = %v, want 3", got)
	}
	if diff := cmp.Diff(map[string]observed{"": {2, 4}}, histograms(t, reg, "scheduler_preemption_victims")); diff != "" {
		t.Errorf("scheduler_preemption_victims (-want, +got):\n%s", diff)
	}
	wantEval := map[string]observed{
		"preemptor=pod,result=Success":       {2, 0.006},
		"preemptor=pod,result=Unschedulable": {1, 0.001},
	}
	if diff := cmp.Diff(wantEval, histograms(t, reg, "scheduler_preemption_evaluation_duration_seconds")); diff != "" {
		t.Errorf("scheduler_preemption_evaluation_duration_seconds (-want, +got):\n%s", diff)
	}
	wantExec := map[string]observed{"preemptor=pod,result=success": {1, 0.1}, "preemptor=pod,result=error": {1, 0.05}}
	if diff := cmp.Diff(wantExec, histograms(t, reg, "scheduler_preemption_execution_duration_seconds")); diff != "" {
		t.Errorf("scheduler_preemption_execution_duration_seconds (-want, +got):\n%s", diff)
	}
	want := `
# HELP scheduler_preemption_goroutines_execution_total Number of preemption goroutines executed.
# TYPE scheduler_preemption_goroutines_execution_total counter
scheduler_preemption_goroutines_execution_total{result="error"} 1
scheduler_preemption_goroutines_execution_total{result="success"} 1
# HELP scheduler_preemption_pdb_violations_total Total number of pod disruption budget violations caused by preemption.
# TYPE scheduler_preemption_pdb_violations_total counter
scheduler_preemption_pdb_violations_total{preemptor="pod"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"scheduler_preemption_goroutines_execution_total", "scheduler_preemption_pdb_violations_total"); err != nil {
		t.Error(err)
	}
	// Upstream's buckets: 1 ms doubling 16 times.
	for _, name := range []string{"scheduler_preemption_evaluation_duration_seconds", "scheduler_preemption_execution_duration_seconds"} {
		if bs := bucketBounds(t, reg, name); len(bs) != 16 || bs[0] != 0.001 || bs[15] != 32.768 {
			t.Errorf("%s buckets %v, want 16 from 0.001 to 32.768", name, bs)
		}
	}
}

// Pod-group preemption is counted under upstream's workload names.
func TestCycleGroupPreemption(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	group := func(result string, victims, disruptions int) cycle.PreemptionAttempt {
		return cycle.PreemptionAttempt{Preemptor: cycle.PreemptorPodGroup, Result: result, Victims: victims,
			GroupDisruptions: disruptions, Duration: 10 * time.Millisecond}
	}
	c.Preempted(group(cycle.PreemptionSuccess, 4, 1))
	c.Preempted(group(cycle.PreemptionUnschedulable, 0, 0))
	c.Preempted(group(cycle.PreemptionSuccess, 2, 2))
	for result, want := range map[string]float64{"Success": 2, "Unschedulable": 1} {
		if got := testutil.ToFloat64(c.groupAttempts.WithLabelValues(result)); got != want {
			t.Errorf("scheduler_workload_preemption_attempts_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if got := testutil.ToFloat64(c.preemptionAttempts); got != 0 {
		t.Errorf("scheduler_preemption_attempts_total = %v for pod groups, want 0 (pods only)", got)
	}
	if diff := cmp.Diff(map[string]observed{"": {2, 6}}, histograms(t, reg, "scheduler_workload_preemption_victims")); diff != "" {
		t.Errorf("scheduler_workload_preemption_victims (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]observed{"preemptor=podgroup": {2, 3}}, histograms(t, reg, "scheduler_preemption_workload_disruptions")); diff != "" {
		t.Errorf("scheduler_preemption_workload_disruptions (-want, +got):\n%s", diff)
	}
	wantEval := map[string]observed{
		"preemptor=podgroup,result=Success":       {2, 0.02},
		"preemptor=podgroup,result=Unschedulable": {1, 0.01},
	}
	if diff := cmp.Diff(wantEval, histograms(t, reg, "scheduler_preemption_evaluation_duration_seconds")); diff != "" {
		t.Errorf("scheduler_preemption_evaluation_duration_seconds (-want, +got):\n%s", diff)
	}
}

// The framework's durations under upstream's names, labels and buckets;
// scheduler_pod_scheduling_attempts with every bound pod.
func TestCycleFramework(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.ExtensionPoint("wasmsched", cycle.ExtensionPointFilter, "Success", 2*time.Millisecond)
	c.ExtensionPoint("wasmsched", cycle.ExtensionPointFilter, "Success", time.Millisecond)
	c.ExtensionPoint("wasmsched", cycle.ExtensionPointBind, "Error", time.Second)
	fit := c.PluginObserver("NodeResourcesFit", cycle.ExtensionPointFilter, "Unschedulable")
	fit(20 * time.Microsecond)
	fit(30 * time.Microsecond)
	c.Scheduled("wasmsched", 1, time.Second)
	c.Scheduled("wasmsched", 3, time.Second)

	wantEP := map[string]observed{
		"extension_point=Filter,profile=wasmsched,status=Success": {2, 0.003},
		"extension_point=Bind,profile=wasmsched,status=Error":     {1, 1},
	}
	if diff := cmp.Diff(wantEP, histograms(t, reg, "scheduler_framework_extension_point_duration_seconds")); diff != "" {
		t.Errorf("scheduler_framework_extension_point_duration_seconds (-want, +got):\n%s", diff)
	}
	if bs := bucketBounds(t, reg, "scheduler_framework_extension_point_duration_seconds"); len(bs) != 12 || bs[0] != 0.0001 {
		t.Errorf("extension point buckets %v, want upstream's 12 from 0.0001", bs)
	}
	got := histograms(t, reg, "scheduler_plugin_execution_duration_seconds")
	if o := got["extension_point=Filter,plugin=NodeResourcesFit,status=Unschedulable"]; o.Count != 2 {
		t.Errorf("scheduler_plugin_execution_duration_seconds: %v, want 2 NodeResourcesFit Filter runs", got)
	}
	if bs := bucketBounds(t, reg, "scheduler_plugin_execution_duration_seconds"); len(bs) != 20 || bs[0] != 0.00001 {
		t.Errorf("plugin buckets %v, want upstream's 20 from 0.00001", bs)
	}
	if diff := cmp.Diff(map[string]observed{"": {2, 4}}, histograms(t, reg, "scheduler_pod_scheduling_attempts")); diff != "" {
		t.Errorf("scheduler_pod_scheduling_attempts (-want, +got):\n%s", diff)
	}
	if bs := bucketBounds(t, reg, "scheduler_pod_scheduling_attempts"); !cmp.Equal(bs, []float64{1, 2, 4, 8, 16}) {
		t.Errorf("attempts buckets %v, want upstream's 1, 2, 4, 8, 16", bs)
	}
}

func TestNewCycleTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := NewCycle(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewCycle(reg); err == nil {
		t.Error("registering the cycle collectors twice on one registry: want an error")
	}
	// Next to the queue's and the policies' collectors.
	if _, err := NewQueue(reg); err != nil {
		t.Errorf("queue collectors next to the cycle's: %v", err)
	}
	if _, err := NewPolicy(reg); err != nil {
		t.Errorf("policy collectors next to the cycle's: %v", err)
	}
}
