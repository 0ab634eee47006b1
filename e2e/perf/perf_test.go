package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
)

// TestHarnessEndToEnd runs every workload, every scheduler (the ceiling
// too, on the workloads it runs) and the soak at a small scale on a real
// control plane, and checks that each run measured what it claims: all
// measured pods bound (and, for the workloads with hard inter-pod or
// spreading constraints, placed as those demand), a latency histogram that
// moved (none for the ceiling), CPU and RSS of the right process, a soak
// that scraped both schedulers, and a results directory. The figures
// themselves are not asserted (the machine is shared); `make bench`
// produces them at full size. A second's settle between runs is enough at
// this size (the default 5 s is for the thousands of deletions of a
// full-size run) and keeps the 60 runs and the soak under three minutes
// on 2 cores, the builds included.
func TestHarnessEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and three schedulers")
	}
	const scale = 0.02
	out := t.TempDir()
	var log bytes.Buffer
	args := []string{"-scale", "0.02", "-rounds", "1", "-soak-cycles", "3", "-settle", "1s", "-out", out,
		"-schedulers", strings.Join([]string{schedUpstream, schedNative, schedWasm, schedCeiling}, ",")}
	var stdout bytes.Buffer
	err := runMain(context.Background(), args, &stdout, &log)
	if err != nil {
		t.Fatalf("perf %s: %v\n--- log ---\n%s", strings.Join(args, " "), err, log.String())
	}
	rep, err := report.Load(filepath.Join(out, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{inMemory: scaled(inMemoryPods, scale)}
	byName := map[string]*workload{}
	for _, w := range workloads(scale) {
		want[w.name] = w.measured
		byName[w.name] = w
	}
	seen := map[string]int{}
	cpu, cp := map[string]float64{}, map[string]float64{}
	for _, r := range rep.Runs {
		key := r.Workload + "/" + r.Scheduler
		seen[key]++
		if r.Err != "" {
			t.Errorf("%s: %s", key, r.Err)
			continue
		}
		if r.Pods != want[r.Workload] {
			t.Errorf("%s: %d pods bound, want %d", key, r.Pods, want[r.Workload])
		}
		switch {
		case r.Scheduler == schedCeiling:
			if !math.IsNaN(r.Latency.P50) {
				t.Errorf("%s: attempt latency %+v: the ceiling has no attempt histogram", key, r.Latency)
			}
		case math.IsNaN(r.Latency.P50) || r.Latency.P50 <= 0 || r.Latency.P99 < r.Latency.P50:
			t.Errorf("%s: attempt latency %+v: the histogram did not move over the measured phase", key, r.Latency)
		}
		// A run this small can use less CPU than one clock tick (10 ms):
		// each run's CPU may be 0, their sum may not.
		cpu[r.Scheduler] += r.CPUSeconds
		if r.CPUSeconds < 0 || r.PeakRSS < 10<<20 {
			t.Errorf("%s: cpu %.3fs, peak RSS %d bytes: not the scheduler process's", key, r.CPUSeconds, r.PeakRSS)
		}
		// Likewise kube-apiserver's and etcd's, which the in-memory runs
		// have none of.
		cp[r.Scheduler] += r.ControlPlaneCPUSeconds
		if r.ControlPlaneCPUSeconds < 0 || (r.Workload == inMemory && r.ControlPlaneCPUSeconds != 0) {
			t.Errorf("%s: control plane cpu %.3fs", key, r.ControlPlaneCPUSeconds)
		}
	}
	for s, c := range cpu {
		if c <= 0 {
			t.Errorf("%s: no CPU time over all its runs", s)
		}
		if cp[s] <= 0 {
			t.Errorf("%s: no control-plane CPU time over all its runs", s)
		}
	}
	for w := range want {
		for _, s := range []string{schedUpstream, schedNative, schedWasm, schedCeiling} {
			n := seen[w+"/"+s]
			if (w == inMemory && s == schedUpstream) || (s == schedCeiling && ceilingSkipped(w, byName) != "") {
				if n != 0 {
					t.Errorf("%s ran under %s", w, s)
				}
				continue
			}
			if n != 1 {
				t.Errorf("%s/%s ran %d times, want 1", w, s, n)
			}
		}
	}
	soaked := map[string]int{}
	for _, s := range rep.Soak {
		soaked[s.Scheduler+"/"+s.Phase]++
		if s.HeapInuse < 1<<20 {
			t.Errorf("soak %s %s cycle %d: heap in use %.0f bytes: not scraped", s.Scheduler, s.Phase, s.Cycle, s.HeapInuse)
		}
		if s.Inflight != 0 {
			t.Errorf("soak %s %s cycle %d: %v in-flight events while idle", s.Scheduler, s.Phase, s.Cycle, s.Inflight)
		}
	}
	for _, k := range []string{"upstream/scale", "upstream/affinity", "wasm/scale", "wasm/affinity"} {
		if soaked[k] != 3 {
			t.Errorf("soak %s: %d cycles, want 3", k, soaked[k])
		}
	}
	files := []string{report.MarkdownFile, report.SoakFile}
	for _, r := range rep.Runs {
		if len(r.Throughput) > 0 { // a run this small may end within its first second
			files = append(files, report.ThroughputFile(r.Workload))
		}
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout.String(), "SchedulingBasic") {
		t.Errorf("console summary lacks the workloads:\n%s", stdout.String())
	}
}

// TestChurnHints runs the churn workload under wasm and under althints with
// the hints module from before ABI minor 4 (recovered from git), and checks
// what the workload is for: the selective hints retry none of the waiting
// pods (one attempt per measured pod), the old ones retry them (the
// assigned-pod and node events of the churn and of every binding each
// move all of them). The workload's own verify checks meanwhile that the
// waiting pods stayed unschedulable for their reason under both.
func TestChurnHints(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and two schedulers")
	}
	mod, err := filepath.Abs(oldHintsModule)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var log, stdout bytes.Buffer
	args := []string{"-workloads", "ChurnAffinity", "-scale", "0.05", "-rounds", "1", "-soak-cycles", "0", "-settle", "1s", "-out", out,
		"-schedulers", schedWasm + "," + schedAltHints, "-hints-module", mod}
	if err := runMain(context.Background(), args, &stdout, &log); err != nil {
		t.Fatalf("perf %s: %v\n--- log ---\n%s", strings.Join(args, " "), err, log.String())
	}
	rep, err := report.Load(filepath.Join(out, report.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]report.Run{}
	for _, r := range rep.Runs {
		got[r.Scheduler] = r
		if r.ControlPlaneCPUSeconds <= 0 {
			t.Errorf("%s: control plane cpu %.3fs: kube-apiserver and etcd not measured", r.Scheduler, r.ControlPlaneCPUSeconds)
		}
	}
	// A hint call that fails (its deadline, on a machine stalled for
	// 100 ms) falls back to Queue for its batch: those moves, at most one
	// retry per fallback, are the fallback's, not the hints'.
	if w := got[schedWasm]; w.Pods == 0 || w.Attempts < float64(w.Pods) || w.Attempts > float64(w.Pods)+w.Fallbacks {
		t.Errorf("wasm: %v attempts for %d pods (%v policy fallbacks): the selective hints retried a waiting pod", w.Attempts, w.Pods, w.Fallbacks)
	}
	if a := got[schedAltHints]; a.Pods == 0 || a.Attempts <= float64(a.Pods) {
		t.Errorf("althints: %v attempts for %d pods: the old hints retried no waiting pod (not the module of -hints-module?)", a.Attempts, a.Pods)
	}
}

// oldHintsModule is policies/hints as commit afc75ea built it, before ABI
// minor 4: it moves every pod rejected by InterPodAffinity or
// PodTopologySpread on every assigned-pod or node event. A copy in testdata
// rather than `git show`, so that the test needs no history.
const oldHintsModule = "testdata/hints-afc75ea.wasm"
