// Command scalecurve measures how wasmsched's cost per pod grows with the
// cluster (`make bench-scale`): it runs wasmsched-bench, the scheduler in
// one process against a fake clientset, for each number of nodes, each
// GOMAXPROCS and each workload (plain pods and e2e/perf's constraint mix),
// and writes a table, results.json and plots of CPU per pod, throughput and
// peak heap over the number of nodes to -out.
//
//	go run ./e2e/perf/scalecurve -out docs/benchmarks/scale-2026-11-28
//	go run ./e2e/perf/scalecurve -nodes 100,500 -pods 2000 -procs 1 -workloads plain
//
// No apiserver is involved: the figures are the scheduler's own cost, the
// part that should grow sublinearly with nodes (a fixed share of nodes is
// scored past a few hundred; inter-pod constraints read counts per domain
// instead of walking pods). Each run is its own process, so one run's
// garbage does not bill the next.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "scalecurve: %v\n", err)
		os.Exit(1)
	}
}

// point is one run of wasmsched-bench.
type point struct {
	Workload   string  `json:"workload"`
	Nodes      int     `json:"nodes"`
	Procs      int     `json:"gomaxprocs"`
	Pods       int     `json:"pods"`
	PodsPerSec float64 `json:"podsPerSecond"`
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUMsPod   float64 `json:"cpuMsPerPod"`
	PeakHeap   int64   `json:"peakHeapBytes"`
	PeakRSS    int64   `json:"peakRSSBytes"`
	Err        string  `json:"error,omitempty"`
}

// benchJSON is the part of `wasmsched-bench -json` the curve reads.
type benchJSON struct {
	Pods             int     `json:"pods"`
	AvgPodsPerSecond float64 `json:"avgPodsPerSecond"`
	CPUSeconds       float64 `json:"cpuSeconds"`
	PeakRSSBytes     int64   `json:"peakRSSBytes"`
	PeakHeapBytes    int64   `json:"peakHeapBytes"`
}

type options struct {
	nodes, procs []int
	workloads    []string
	pods         int
	bench, out   string
	timeout      time.Duration
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("scalecurve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.String("nodes", "1000,5000,15000", "comma-separated cluster sizes")
	procs := fs.String("procs", "1,2", "comma-separated GOMAXPROCS values")
	wl := fs.String("workloads", "plain,mix", "comma-separated workloads of wasmsched-bench: plain, mix")
	fs.IntVar(&o.pods, "pods", 30000, "measured pods per run (the mix is capped at 10 per node: every tenth pod wants a node of its own)")
	fs.StringVar(&o.bench, "wasmsched-bench", "", "the wasmsched-bench binary (empty: go build ./cmd/wasmsched-bench into a temporary directory)")
	fs.StringVar(&o.out, "out", "", "directory for README.md, results.json and the plots (empty: print only)")
	fs.DurationVar(&o.timeout, "timeout", 20*time.Minute, "give up on a run after this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.nodes, err = ints("-nodes", *nodes); err != nil {
		return o, err
	}
	if o.procs, err = ints("-procs", *procs); err != nil {
		return o, err
	}
	for _, w := range strings.Split(*wl, ",") {
		if w = strings.TrimSpace(w); w != "plain" && w != "mix" {
			return o, fmt.Errorf("-workloads: unknown workload %q: use plain and/or mix", w)
		}
		o.workloads = append(o.workloads, strings.TrimSpace(w))
	}
	if o.pods < 1 || o.timeout <= 0 {
		return o, fmt.Errorf("-pods must be >= 1 and -timeout > 0 (got %d, %v)", o.pods, o.timeout)
	}
	return o, nil
}

// ints parses a comma-separated list of positive integers.
func ints(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.bench == "" {
		dir, err := os.MkdirTemp("", "scalecurve-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.bench = filepath.Join(dir, "wasmsched-bench")
		fmt.Fprintf(stderr, "scalecurve: go build -o %s ./cmd/wasmsched-bench\n", o.bench)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", o.bench, "./cmd/wasmsched-bench")
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build wasmsched-bench (run from the repository root): %w", err)
		}
	}
	var pts []point
	var failed error
	total := len(o.workloads) * len(o.nodes) * len(o.procs)
	for _, w := range o.workloads {
		for _, n := range o.nodes {
			for _, p := range o.procs {
				pt := measure(ctx, o, w, n, p, stderr)
				fmt.Fprintf(stderr, "scalecurve: [%d/%d] %s\n", len(pts)+1, total, pt.line())
				if pt.Err != "" {
					failed = errors.Join(failed, fmt.Errorf("%s, %d nodes, GOMAXPROCS %d: %s", w, n, p, pt.Err))
				}
				pts = append(pts, pt)
				if ctx.Err() != nil {
					return errors.Join(failed, ctx.Err())
				}
			}
		}
	}
	md := markdown(o, pts, "go run ./e2e/perf/scalecurve "+strings.Join(args, " "))
	fmt.Fprint(stdout, md)
	if o.out != "" {
		if err := write(o.out, md, pts); err != nil {
			return errors.Join(failed, err)
		}
		fmt.Fprintf(stderr, "scalecurve: results in %s\n", o.out)
	}
	return failed
}

// podsFor is the measured pods of a run: the mix needs a node per tenth pod.
func podsFor(o options, workload string, nodes int) int {
	if workload == "mix" {
		return min(o.pods, nodes*10)
	}
	return o.pods
}

func measure(ctx context.Context, o options, workload string, nodes, procs int, stderr io.Writer) point {
	pt := point{Workload: workload, Nodes: nodes, Procs: procs, Pods: podsFor(o, workload, nodes)}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bench, "-json", "-log-level", "warn", "-timeout", o.timeout.String(),
		"-nodes", strconv.Itoa(nodes), "-init-pods", "0", "-pods", strconv.Itoa(pt.Pods), "-workload", workload)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		pt.Err = fmt.Sprintf("wasmsched-bench: %v: %s", err, lastLine(errOut.String()))
		return pt
	}
	var res benchJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		pt.Err = fmt.Sprintf("wasmsched-bench -json: %v", err)
		return pt
	}
	pt.PodsPerSec, pt.CPUSeconds = res.AvgPodsPerSecond, res.CPUSeconds
	pt.CPUMsPod = 1000 * res.CPUSeconds / float64(max(res.Pods, 1))
	pt.PeakHeap, pt.PeakRSS = res.PeakHeapBytes, res.PeakRSSBytes
	return pt
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (pt point) line() string {
	if pt.Err != "" {
		return fmt.Sprintf("%s %d nodes GOMAXPROCS %d: FAILED: %s", pt.Workload, pt.Nodes, pt.Procs, pt.Err)
	}
	return fmt.Sprintf("%s %d nodes GOMAXPROCS %d: %d pods, %.0f pods/s, %.3f ms CPU/pod, peak heap %.0f MiB",
		pt.Workload, pt.Nodes, pt.Procs, pt.Pods, pt.PodsPerSec, pt.CPUMsPod, mib(pt.PeakHeap))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// growth is how CPU per pod grows with nodes for one workload and
// GOMAXPROCS, from the smallest to the largest cluster measured: the
// exponent k of cost ∝ nodes^k (k < 1: sublinear).
type growth struct {
	workload            string
	procs               int
	fromNodes, toNodes  int
	fromCost, toCost, k float64
}

func growths(pts []point) []growth {
	var out []growth
	for _, w := range uniq(pts, func(p point) string { return p.Workload }) {
		for _, procs := range uniq(pts, func(p point) int { return p.Procs }) {
			var ok []point
			for _, p := range pts {
				if p.Workload == w && p.Procs == procs && p.Err == "" && p.CPUMsPod > 0 {
					ok = append(ok, p)
				}
			}
			if len(ok) < 2 {
				continue
			}
			slices.SortFunc(ok, func(a, b point) int { return a.Nodes - b.Nodes })
			a, b := ok[0], ok[len(ok)-1]
			out = append(out, growth{workload: w, procs: procs, fromNodes: a.Nodes, toNodes: b.Nodes, fromCost: a.CPUMsPod, toCost: b.CPUMsPod,
				k: math.Log(b.CPUMsPod/a.CPUMsPod) / math.Log(float64(b.Nodes)/float64(a.Nodes))})
		}
	}
	return out
}

func uniq[T cmp.Ordered](pts []point, key func(point) T) []T {
	var out []T
	for _, p := range pts {
		if k := key(p); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func markdown(o options, pts []point, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# wasmsched's cost per pod over the cluster's size (in memory)\n\n")
	fmt.Fprintf(&b, "`wasmsched-bench` (the scheduler in one process, a fake clientset, no apiserver), no pod bound before the measured phase, "+
		"on %s/%s with %d CPUs, %s. `plain`: 100m-cpu pods without constraints; `mix`: e2e/perf's ConstraintMix (a third plain, a third preferred "+
		"anti-affinity on the hostname, a third zone spread with maxSkew 1, every tenth a required anti-affinity on the hostname), at most 10 pods per node "+
		"since every tenth wants a node of its own. CPU is the process's user+system time over the measured phase, per pod; heap is the largest heap in use "+
		"at the one-second samples.\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", command)
	b.WriteString("| workload | nodes | GOMAXPROCS | pods | pods/s | CPU ms/pod | peak heap MiB | peak RSS MiB |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range pts {
		if p.Err != "" {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | failed: %s | | | |\n", p.Workload, p.Nodes, p.Procs, p.Pods, strings.ReplaceAll(p.Err, "|", "/"))
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %.3f | %.0f | %.0f |\n", p.Workload, p.Nodes, p.Procs, p.Pods, p.PodsPerSec, p.CPUMsPod, mib(p.PeakHeap), mib(p.PeakRSS))
	}
	b.WriteString("\n## Growth of CPU per pod with nodes\n\nk is the exponent of cost ∝ nodes^k between the smallest and the largest cluster: " +
		"k < 1 is sublinear (1 would mean every node added costs every pod as much as the last).\n\n" +
		"| workload | GOMAXPROCS | nodes | CPU ms/pod | k | sublinear |\n|---|--:|---|---|--:|---|\n")
	for _, g := range growths(pts) {
		verdict := "✓"
		if g.k >= 1 {
			verdict = "✗"
		}
		fmt.Fprintf(&b, "| %s | %d | %d → %d | %.3f → %.3f | %.2f | %s |\n", g.workload, g.procs, g.fromNodes, g.toNodes, g.fromCost, g.toCost, g.k, verdict)
	}
	if o.out != "" {
		b.WriteString("\n![CPU per pod](cpu-per-pod.png)\n\n![Throughput](throughput.png)\n\n![Peak heap](heap.png)\n")
	}
	return b.String()
}

// write puts README.md, results.json and the three plots into dir.
func write(dir, md string, pts []point) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(pts, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"README.md": []byte(md), "results.json": append(js, '\n')}
	for _, pl := range []struct {
		file, title, ylabel string
		y                   func(point) float64
	}{
		{"cpu-per-pod.png", "CPU per pod over the cluster's size", "CPU ms per pod", func(p point) float64 { return p.CPUMsPod }},
		{"throughput.png", "Throughput over the cluster's size", "pods per second", func(p point) float64 { return p.PodsPerSec }},
		{"heap.png", "Peak heap over the cluster's size", "heap in use, MiB", func(p point) float64 { return mib(p.PeakHeap) }},
	} {
		var buf bytes.Buffer
		if err := report.PlotCurves(&buf, pl.title, "nodes", pl.ylabel, curves(pts, pl.y)); err != nil {
			return err
		}
		files[pl.file] = buf.Bytes()
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// workloadColor tells the workloads apart (tab10's blue and orange).
var workloadColor = map[string]color.RGBA{"plain": {31, 119, 180, 255}, "mix": {255, 127, 14, 255}}

// curves is one curve per workload and GOMAXPROCS: a colour per workload,
// dashed for GOMAXPROCS past the first.
func curves(pts []point, y func(point) float64) []report.Curve {
	var out []report.Curve
	procs := uniq(pts, func(p point) int { return p.Procs })
	slices.Sort(procs)
	for _, w := range uniq(pts, func(p point) string { return p.Workload }) {
		for i, pr := range procs {
			cv := report.Curve{Name: fmt.Sprintf("%s, GOMAXPROCS %d", w, pr), Color: workloadColor[w], Dashed: i > 0}
			for _, p := range pts {
				if p.Workload == w && p.Procs == pr && p.Err == "" {
					cv.X, cv.Y = append(cv.X, float64(p.Nodes)), append(cv.Y, y(p))
				}
			}
			if len(cv.X) > 0 {
				out = append(out, cv)
			}
		}
	}
	return out
}
