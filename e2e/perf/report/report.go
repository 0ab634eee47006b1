package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Scheduler names, in display order.
const (
	Upstream = "upstream"
	Native   = "native"
	Wasm     = "wasm"
	// Ceiling is no scheduler: a binder that places each pod round-robin
	// and writes what kube-scheduler writes for it (the binding and the
	// Scheduled event), the most any scheduler could reach through the
	// same API on the same machine.
	Ceiling = "ceiling"
)

// Run is one measured run of one scheduler on one workload.
type Run struct {
	Workload  string // e.g. "SchedulingBasic"
	Scheduler string // "upstream", "native", "wasm" or "ceiling"
	Round     int    // 1-based; runs of a workload alternate schedulers
	Pods      int    // measured pods scheduled
	// Elapsed is the duration of the measured phase.
	Elapsed time.Duration
	// Throughput holds pods scheduled per second, one sample per second of the
	// measured phase, the first sample already dropped (as upstream scheduler_perf does).
	Throughput []float64
	// Latency is the scheduling-attempt latency in seconds, from
	// scheduler_scheduling_attempt_duration_seconds over the measured phase.
	Latency    Quantiles
	CPUSeconds float64 // user+system CPU of the scheduler process during the measured phase
	// ControlPlaneCPUSeconds is the user+system CPU of kube-apiserver and
	// etcd during the measured phase: what the scheduler's requests and
	// watches (and the harness's creation of the pods, the same for every
	// scheduler) cost the control plane. 0 means not measured: the
	// in-memory runs have no control plane, older reports lack it.
	ControlPlaneCPUSeconds float64 `json:",omitempty"`
	// Attempts is the growth of scheduler_schedule_attempts_total (every
	// result) over the measured phase: with Pods, how often the scheduler
	// retried pods that could not fit (0: not recorded, older reports).
	Attempts float64 `json:",omitempty"`
	// Fallbacks is the growth of wasmsched_policy_fallbacks_total over the
	// measured phase: decisions a module failed (a trap, its deadline on a
	// stalled machine) and the slot's native default made instead.
	Fallbacks float64 `json:",omitempty"`
	PeakRSS   uint64  // bytes, peak resident set of the scheduler process (VmHWM)
	Err       string  // non-empty if the run failed (timeout...): shown, excluded from statistics
}

// Quantiles are latency quantiles in seconds. NaN means unknown (an empty
// histogram has no quantiles); it is stored as null in JSON.
type Quantiles struct{ P50, P90, P99 float64 }

// quantilesJSON is the wire form of Quantiles: JSON has no NaN.
type quantilesJSON struct{ P50, P90, P99 *float64 }

func finiteOrNil(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func nilToNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes NaN and infinite quantiles as null.
func (q Quantiles) MarshalJSON() ([]byte, error) {
	return json.Marshal(quantilesJSON{finiteOrNil(q.P50), finiteOrNil(q.P90), finiteOrNil(q.P99)})
}

// UnmarshalJSON reads null quantiles back as NaN.
func (q *Quantiles) UnmarshalJSON(b []byte) error {
	var v quantilesJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*q = Quantiles{nilToNaN(v.P50), nilToNaN(v.P90), nilToNaN(v.P99)}
	return nil
}

// SoakSample is one cycle of the memory soak.
type SoakSample struct {
	Scheduler string  // "upstream" or "wasm" (or "native")
	Phase     string  // "scale" (pods 0<->60) or "affinity" (unschedulable pod, nodes added repeatedly)
	Cycle     int     // 1-based within the phase
	HeapInuse float64 // bytes, go_memstats_heap_inuse_bytes after the cycle (after a settle delay)
	Inflight  float64 // sum of scheduler_inflight_events after the cycle
}

// Report is everything one benchmark invocation measured; results.json holds it.
type Report struct {
	Title       string
	Started     time.Time
	CommandLine string
	Machine     string            // e.g. "2 cores, 24 GiB, linux/amd64, <cpu model>"
	Versions    map[string]string // "kube-apiserver": "v1.37.1", ...
	Workloads   []Workload        // descriptions, in display order
	Runs        []Run
	Soak        []SoakSample
	Notes       []string
}

// Workload describes one workload. InMemory workloads have no upstream runs.
type Workload struct {
	Name, Description string
	InMemory          bool
}

// File names written by WriteDir, relative to its directory.
const (
	MarkdownFile = "README.md"
	JSONFile     = "results.json"
	SoakFile     = "soak.png"
)

// ThroughputFile is the name of the throughput plot of a workload. Characters
// outside [A-Za-z0-9._-] become '_' so the name is safe in paths and markdown links.
func ThroughputFile(workload string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, workload)
	return "throughput-" + safe + ".png"
}

// WriteDir writes the results page, results.json and the plots into dir,
// creating it. Each file is written to a temporary name and renamed, so a crash
// never leaves a truncated file behind; README.md is written last so that the
// files it links to exist.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create results directory: %w", err)
	}
	for _, name := range r.plottedWorkloads() {
		err := writeFileAtomic(dir, ThroughputFile(name), func(w io.Writer) error {
			return PlotThroughput(w, name, r.Runs)
		})
		if err != nil {
			return err
		}
	}
	if len(r.Soak) > 0 {
		err := writeFileAtomic(dir, SoakFile, func(w io.Writer) error { return PlotSoak(w, r.Soak) })
		if err != nil {
			return err
		}
	}
	if err := writeFileAtomic(dir, JSONFile, func(w io.Writer) error { return r.writeJSON(w) }); err != nil {
		return err
	}
	return writeFileAtomic(dir, MarkdownFile, r.Markdown)
}

// Load reads a results.json written by WriteDir, so that the page can be re-rendered.
func Load(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("load report %s: not a results.json written by WriteDir: %w", path, err)
	}
	return &r, nil
}

func (r *Report) writeJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		// Only non-finite numbers outside Quantiles get here; say where to look.
		return fmt.Errorf("encode report (NaN or Inf in Throughput or Soak?): %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeFileAtomic(dir, name string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// workloadOrder lists the described workloads, then any others that have runs,
// in order of first appearance.
func (r *Report) workloadOrder() []string {
	var order []string
	seen := map[string]bool{}
	for _, w := range r.Workloads {
		if !seen[w.Name] {
			seen[w.Name] = true
			order = append(order, w.Name)
		}
	}
	for _, run := range r.Runs {
		if !seen[run.Workload] {
			seen[run.Workload] = true
			order = append(order, run.Workload)
		}
	}
	return order
}

// plottedWorkloads are the workloads that get a throughput plot: those with a
// successful run that has samples. Markdown and WriteDir agree through it.
func (r *Report) plottedWorkloads() []string {
	var out []string
	for _, name := range r.workloadOrder() {
		if len(plottable(name, r.Runs)) > 0 {
			out = append(out, name)
		}
	}
	return out
}

func plottable(workload string, runs []Run) []Run {
	var out []Run
	for _, run := range runs {
		if run.Workload == workload && run.Err == "" && len(run.Throughput) > 0 {
			out = append(out, run)
		}
	}
	return out
}
