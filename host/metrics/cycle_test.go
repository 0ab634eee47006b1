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
	c.Preemption(3, true)
	c.Preemption(1, true)
	c.Preemption(0, false) // an attempt that found no victims counts, observes nothing
	if got := testutil.ToFloat64(c.preemptionAttempts); got != 3 {
		t.Errorf("scheduler_preemption_attempts_total = %v, want 3", got)
	}
	if diff := cmp.Diff(map[string]observed{"": {2, 4}}, histograms(t, reg, "scheduler_preemption_victims")); diff != "" {
		t.Errorf("scheduler_preemption_victims (-want, +got):\n%s", diff)
	}
}

func TestCycleGroupPreemption(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c, err := NewCycle(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.GroupPreemption("Success", 4)
	c.GroupPreemption("Unschedulable", 0)
	c.GroupPreemption("Success", 2)
	for result, want := range map[string]float64{"Success": 2, "Unschedulable": 1} {
		if got := testutil.ToFloat64(c.groupAttempts.WithLabelValues(result)); got != want {
			t.Errorf("scheduler_podgroup_preemption_attempts_total{result=%q} = %v, want %v", result, got, want)
		}
	}
	if diff := cmp.Diff(map[string]observed{"": {2, 6}}, histograms(t, reg, "scheduler_podgroup_preemption_victims")); diff != "" {
		t.Errorf("scheduler_podgroup_preemption_victims (-want, +got):\n%s", diff)
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
