package report

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const mebi = 1 << 20

var approx = cmp.Options{cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateNaNs()}

func TestPercentile(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	tests := []struct {
		name          string
		sorted        []float64
		p50, p90, p99 float64
	}{
		{"one", []float64{7}, 7, 7, 7},
		{"three", []float64{10, 20, 30}, 20, 30, 30}, // ranks ceil(1.5)=2, ceil(2.7)=3, ceil(2.97)=3
		{"ten", seq(10), 5, 9, 10},
		{"two hundred", seq(200), 100, 180, 198},
		{"empty", nil, math.NaN(), math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := []float64{tc.p50, tc.p90, tc.p99}
			got := []float64{percentile(tc.sorted, 50), percentile(tc.sorted, 90), percentile(tc.sorted, 99)}
			if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("percentiles (-want, +got):\n%s", diff)
			}
		})
	}
}

// sampleRuns: SchedulingBasic with all three schedulers (one failed upstream
// round, one wasm round without latency), Other with native and wasm only,
// in memory: no control-plane CPU.
func sampleRuns() []Run {
	nan := math.NaN()
	return []Run{
		{Workload: "SchedulingBasic", Scheduler: Upstream, Round: 1, Pods: 60, Elapsed: 3 * time.Second,
			Throughput: []float64{10, 20, 30}, Latency: Quantiles{0.001, 0.002, 0.004}, CPUSeconds: 1.5, ControlPlaneCPUSeconds: 3, Attempts: 90, PeakRSS: 100 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Wasm, Round: 1, Pods: 100, Elapsed: 2 * time.Second,
			Throughput: []float64{50, 50}, Latency: Quantiles{0.001, 0.002, 0.003}, CPUSeconds: 1, ControlPlaneCPUSeconds: 2.5, PeakRSS: 80 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Native, Round: 1, Pods: 120, Elapsed: 2 * time.Second,
			Throughput: []float64{60, 60}, Latency: Quantiles{0.0005, 0.001, 0.002}, CPUSeconds: 1.2, ControlPlaneCPUSeconds: 1.2, PeakRSS: 70 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Upstream, Round: 2, Pods: 40, Elapsed: 2 * time.Second,
			Throughput: []float64{40}, Latency: Quantiles{0.003, 0.004, 0.008}, CPUSeconds: 0.5, ControlPlaneCPUSeconds: 1, Attempts: 60, PeakRSS: 120 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Wasm, Round: 2, Pods: 100, Elapsed: 2 * time.Second,
			Throughput: []float64{70, 30}, Latency: Quantiles{nan, nan, nan}, CPUSeconds: 1, ControlPlaneCPUSeconds: 1.5, PeakRSS: 90 * mebi},
		// Failed: every number is absurd so that including it would show.
		{Workload: "SchedulingBasic", Scheduler: Upstream, Round: 3, Pods: 5, Elapsed: time.Second,
			Throughput: []float64{1000}, Latency: Quantiles{9, 9, 9}, CPUSeconds: 99, ControlPlaneCPUSeconds: 99, Attempts: 9999, PeakRSS: 999 * mebi, Err: "timeout after 10m"},
		{Workload: "Other", Scheduler: Wasm, Round: 1, Pods: 96, Elapsed: time.Second,
			Throughput: []float64{96}, Latency: Quantiles{0.001, 0.001, 0.001}, CPUSeconds: 0.2, PeakRSS: 60 * mebi},
		{Workload: "Other", Scheduler: Native, Round: 1, Pods: 100, Elapsed: time.Second,
			Throughput: []float64{100}, Latency: Quantiles{0.001, 0.001, 0.001}, CPUSeconds: 0.2, PeakRSS: 50 * mebi},
	}
}

func TestSummarise(t *testing.T) {
	nan := math.NaN() // no attempts, no control-plane CPU recorded
	want := []Summary{
		{Workload: "SchedulingBasic", Scheduler: Upstream, Rounds: 2, Failed: 1, Samples: 4, Pods: 100, Elapsed: 5 * time.Second,
			Average: 25, P50: 20, P90: 40, P99: 40, PodsPerSec: 20, Latency: Quantiles{0.002, 0.003, 0.006},
			CPUSeconds: 1, CPUMsPerPod: 20, ControlPlaneMsPerPod: 40, AttemptsPerPod: 1.5, PeakRSS: 120 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Native, Rounds: 1, Samples: 2, Pods: 120, Elapsed: 2 * time.Second,
			Average: 60, P50: 60, P90: 60, P99: 60, PodsPerSec: 60, Latency: Quantiles{0.0005, 0.001, 0.002},
			CPUSeconds: 1.2, CPUMsPerPod: 10, ControlPlaneMsPerPod: 10, AttemptsPerPod: nan, PeakRSS: 70 * mebi},
		{Workload: "SchedulingBasic", Scheduler: Wasm, Rounds: 2, Samples: 4, Pods: 200, Elapsed: 4 * time.Second,
			Average: 50, P50: 50, P90: 70, P99: 70, PodsPerSec: 50, Latency: Quantiles{0.001, 0.002, 0.003},
			CPUSeconds: 1, CPUMsPerPod: 10, ControlPlaneMsPerPod: 20, AttemptsPerPod: nan, PeakRSS: 90 * mebi},
		{Workload: "Other", Scheduler: Native, Rounds: 1, Samples: 1, Pods: 100, Elapsed: time.Second,
			Average: 100, P50: 100, P90: 100, P99: 100, PodsPerSec: 100, Latency: Quantiles{0.001, 0.001, 0.001},
			CPUSeconds: 0.2, CPUMsPerPod: 2, ControlPlaneMsPerPod: nan, AttemptsPerPod: nan, PeakRSS: 50 * mebi},
		{Workload: "Other", Scheduler: Wasm, Rounds: 1, Samples: 1, Pods: 96, Elapsed: time.Second,
			Average: 96, P50: 96, P90: 96, P99: 96, PodsPerSec: 96, Latency: Quantiles{0.001, 0.001, 0.001},
			CPUSeconds: 0.2, CPUMsPerPod: 0.2 * 1000 / 96, ControlPlaneMsPerPod: nan, AttemptsPerPod: nan, PeakRSS: 60 * mebi},
	}
	if diff := cmp.Diff(want, Summarise(sampleRuns()), approx); diff != "" {
		t.Errorf("Summarise (-want, +got):\n%s", diff)
	}

	// Report.Summaries follows Report.Workloads instead of first appearance.
	r := &Report{Workloads: []Workload{{Name: "Other"}, {Name: "SchedulingBasic"}}, Runs: sampleRuns()}
	var got []string
	for _, s := range r.Summaries() {
		got = append(got, s.Workload+"/"+s.Scheduler)
	}
	wantOrder := []string{"Other/native", "Other/wasm", "SchedulingBasic/upstream", "SchedulingBasic/native", "SchedulingBasic/wasm"}
	if diff := cmp.Diff(wantOrder, got); diff != "" {
		t.Errorf("Summaries order (-want, +got):\n%s", diff)
	}
}

func TestSummariseAllFailed(t *testing.T) {
	got := Summarise([]Run{{Workload: "W", Scheduler: Wasm, Round: 1, Pods: 10, Elapsed: time.Second, Throughput: []float64{10}, Err: "crash"}})
	if len(got) != 1 || got[0].Rounds != 0 || got[0].Failed != 1 || !math.IsNaN(got[0].Average) || !math.IsNaN(got[0].PodsPerSec) {
		t.Errorf("all-failed summary = %+v, want 0 rounds, 1 failed, NaN statistics", got)
	}
}

func TestCompare(t *testing.T) {
	nan := math.NaN()
	r := func(num, den string, thr, cpu, target float64, v Verdict) Ratio {
		return Ratio{Num: num, Den: den, Throughput: thr, CPU: cpu, Target: target, Verdict: v}
	}
	want := []Comparison{
		{
			Workload:       "SchedulingBasic",
			NativeUpstream: r(Native, Upstream, 60.0/20, 2, 0, NoTarget),
			WasmUpstream:   r(Wasm, Upstream, 50.0/20, 2, 1.2, Met),
			WasmCeiling:    r(Wasm, Ceiling, nan, nan, 1.0, NA), // no ceiling run
			WasmNative:     r(Wasm, Native, 50.0/60, 1, 0.95, Missed),
		},
		{
			Workload:       "Other",
			NativeUpstream: r(Native, Upstream, nan, nan, 0, NoTarget),
			WasmUpstream:   r(Wasm, Upstream, nan, nan, 1.0, NA),
			WasmCeiling:    r(Wasm, Ceiling, nan, nan, 0, NoTarget),
			WasmNative:     r(Wasm, Native, 0.96, 2/(0.2*1000/96), 0.95, Met),
		},
	}
	if diff := cmp.Diff(want, Compare(Summarise(sampleRuns())), approx); diff != "" {
		t.Errorf("Compare (-want, +got):\n%s", diff)
	}
}

func TestCompareTargets(t *testing.T) {
	sums := func(workload string, upstream, native, wasm float64) []Summary {
		return []Summary{
			{Workload: workload, Scheduler: Upstream, PodsPerSec: upstream, CPUMsPerPod: 1},
			{Workload: workload, Scheduler: Native, PodsPerSec: native, CPUMsPerPod: 1},
			{Workload: workload, Scheduler: Wasm, PodsPerSec: wasm, CPUMsPerPod: 1},
		}
	}
	tests := []struct {
		name                  string
		sums                  []Summary
		wasmUpstream, wasmNat Verdict
	}{
		{"basic needs 1.2, 1.1 misses", sums("SchedulingBasic", 100, 110, 110), Missed, Met},
		{"basic exactly 1.2 meets", sums("SchedulingBasic", 100, 120, 120), Met, Met},
		{"others need 1.0, 1.1 meets", sums("Affinity", 100, 110, 110), Met, Met},
		{"others below 1.0 miss", sums("Affinity", 100, 99, 99), Missed, Met},
		{"wasm/native exactly 0.95 meets", sums("Affinity", 50, 100, 95), Met, Met},
		{"wasm/native 0.94 misses", sums("Affinity", 50, 100, 94), Met, Missed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.sums)[0]
			if c.WasmUpstream.Verdict != tc.wasmUpstream || c.WasmNative.Verdict != tc.wasmNat {
				t.Errorf("verdicts wasm/upstream %v (%.3f), wasm/native %v (%.3f); want %v, %v",
					c.WasmUpstream.Verdict, c.WasmUpstream.Throughput, c.WasmNative.Verdict, c.WasmNative.Throughput, tc.wasmUpstream, tc.wasmNat)
			}
			if c.NativeUpstream.Verdict != NoTarget {
				t.Errorf("native/upstream verdict %v, want no target", c.NativeUpstream.Verdict)
			}
		})
	}
}

func TestCompareCeiling(t *testing.T) {
	sums := func(workload string, wasm, ceiling float64) []Summary {
		return []Summary{
			{Workload: workload, Scheduler: Wasm, PodsPerSec: wasm, CPUMsPerPod: 4},
			{Workload: workload, Scheduler: Ceiling, PodsPerSec: ceiling, CPUMsPerPod: 2},
		}
	}
	tests := []struct {
		name   string
		sums   []Summary
		target float64
		want   Verdict
	}{
		{"basic needs 1.0, exactly 1.0 meets", sums("SchedulingBasic", 380, 380), 1.0, Met},
		{"basic 0.99 misses", sums("SchedulingBasic", 99, 100), 1.0, Missed},
		{"mix needs 0.75, 0.8 meets", sums("ConstraintMix", 300, 375), 0.75, Met},
		{"mix 0.43 misses", sums("ConstraintMix", 163, 380), 0.75, Missed},
		{"elsewhere no target", sums("TopologySpreading", 10, 100), 0, NoTarget},
		{"no ceiling run", sums("SchedulingBasic", 100, 0)[:1], 1.0, NA},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(tc.sums)[0].WasmCeiling
			if got.Num != Wasm || got.Den != Ceiling || got.Target != tc.target || got.Verdict != tc.want {
				t.Errorf("wasm/ceiling = %+v; want target %.2f, verdict %v", got, tc.target, tc.want)
			}
			// CPU: the ceiling's ms per pod over wasm's.
			if len(tc.sums) == 2 && got.CPU != 0.5 {
				t.Errorf("wasm/ceiling CPU = %v, want 0.5", got.CPU)
			}
		})
	}
}

func soakSeries(scheduler, phase string, heapMiB []float64, inflight ...float64) []SoakSample {
	var out []SoakSample
	for i, h := range heapMiB {
		s := SoakSample{Scheduler: scheduler, Phase: phase, Cycle: i + 1, HeapInuse: h * mebi}
		if i < len(inflight) {
			s.Inflight = inflight[i]
		}
		out = append(out, s)
	}
	return out
}

func TestAnalyseSoak(t *testing.T) {
	tests := []struct {
		name        string
		heap        []float64 // MiB
		inflight    []float64
		mid, late   float64 // MiB
		flat, clean Verdict
	}{
		{"warm-up ignored, flat", []float64{50, 80, 90, 100, 101, 99, 102, 100, 104}, nil, 100, 102, Met, Met},
		{"leak", []float64{100, 101, 102, 110, 112, 114, 125, 130, 135}, nil, 112, 130, Missed, Met},
		{"shrinking is flat", []float64{100, 100, 100, 90, 90, 90, 80, 80, 80}, nil, 90, 80, Met, Met},
		{"small heap within 2 MiB slack", []float64{10, 10, 10, 10, 10, 10, 11.9, 11.9, 11.9}, nil, 10, 11.9, Met, Met},
		{"small heap beyond 2 MiB slack", []float64{10, 10, 10, 10, 10, 10, 12.5, 12.5, 12.5}, nil, 10, 12.5, Missed, Met},
		{"uneven thirds", []float64{1, 1, 1, 40, 41, 42, 43, 44, 45, 46}, nil, 41, 44.5, Met, Met},
		{"too short", []float64{10, 20}, nil, math.NaN(), math.NaN(), NA, Met},
		{"inflight left over", []float64{10, 10, 10}, []float64{0, 3, 0}, 10, 10, Met, Missed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := soakSeries(Wasm, "scale", tc.heap, tc.inflight...)
			// Out of order on input: the analysis sorts by cycle.
			samples[0], samples[len(samples)-1] = samples[len(samples)-1], samples[0]
			got := AnalyseSoak(samples)
			if len(got) != 1 {
				t.Fatalf("got %d results, want 1", len(got))
			}
			g := got[0]
			wantVals := []float64{tc.mid, tc.late, tc.heap[0], tc.heap[len(tc.heap)-1]}
			gotVals := []float64{g.MidHeap / mebi, g.LateHeap / mebi, g.FirstHeap / mebi, g.LastHeap / mebi}
			if diff := cmp.Diff(wantVals, gotVals, approx); diff != "" {
				t.Errorf("mid, late, first, last heap MiB (-want, +got):\n%s", diff)
			}
			if g.Flat != tc.flat || g.InflightZero != tc.clean {
				t.Errorf("flat %v, inflight zero %v; want %v, %v", g.Flat, g.InflightZero, tc.flat, tc.clean)
			}
		})
	}
}

func TestAnalyseSoakOrderAndInflight(t *testing.T) {
	var samples []SoakSample
	samples = append(samples, soakSeries(Wasm, "affinity", []float64{1, 1, 1})...)
	samples = append(samples, soakSeries(Wasm, "scale", []float64{1, 1, 1}, 0, 2, 5)...)
	samples = append(samples, soakSeries(Upstream, "scale", []float64{1, 1, 1})...)
	got := AnalyseSoak(samples)
	var keys []string
	for _, g := range got {
		keys = append(keys, g.Scheduler+"/"+g.Phase)
	}
	if diff := cmp.Diff([]string{"upstream/scale", "wasm/scale", "wasm/affinity"}, keys); diff != "" {
		t.Errorf("order (-want, +got):\n%s", diff)
	}
	if g := got[1]; g.MaxInflight != 5 || g.DirtyCycles != 2 || g.InflightZero != Missed {
		t.Errorf("wasm/scale: max inflight %g, dirty %d, verdict %v; want 5, 2, ✗", g.MaxInflight, g.DirtyCycles, g.InflightZero)
	}
}

func TestMissed(t *testing.T) {
	r := &Report{Runs: sampleRuns(), Soak: soakSeries(Wasm, "scale", []float64{100, 101, 102, 110, 112, 114, 125, 130, 135})}
	want := []string{
		"SchedulingBasic: wasm/native throughput 0.833 < 0.95",
		"soak wasm scale: heap grew 18.0 MiB (112.0 -> 130.0 MiB medians)",
		"SchedulingBasic round 3 upstream failed: timeout after 10m",
	}
	if diff := cmp.Diff(want, r.Missed()); diff != "" {
		t.Errorf("Missed (-want, +got):\n%s", diff)
	}
}
