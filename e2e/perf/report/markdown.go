package report

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Markdown writes the complete results page. Plot links are relative names as
// written by WriteDir.
func (r *Report) Markdown(w io.Writer) error {
	var b bytes.Buffer
	sums := r.Summaries()
	comps := Compare(sums)
	soak := r.SoakResults()

	title := r.Title
	if title == "" {
		title = "wasmsched benchmark results"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "- Date: %s\n", fmtTime(r.Started))
	fmt.Fprintf(&b, "- Machine: %s\n", orDash(r.Machine))
	if len(r.Versions) > 0 {
		var vs []string
		for _, k := range slices.Sorted(maps.Keys(r.Versions)) {
			vs = append(vs, fmt.Sprintf("%s %s", k, r.Versions[k]))
		}
		fmt.Fprintf(&b, "- Versions: %s\n", strings.Join(vs, ", "))
	}
	if missed := r.Missed(); len(missed) == 0 {
		b.WriteString("- Targets: all checked targets met\n")
	} else {
		fmt.Fprintf(&b, "- Targets: %d missed or failed (see below)\n", len(missed))
	}
	if r.CommandLine != "" {
		fmt.Fprintf(&b, "\nCommand line:\n\n```sh\n%s\n```\n", r.CommandLine)
	}

	if len(r.Workloads) > 0 {
		b.WriteString("\n## Workloads\n\n| Workload | Description | Schedulers |\n|---|---|---|\n")
		for _, wl := range r.Workloads {
			scheds := strings.Join(r.schedulersOf(wl.Name), ", ")
			if scheds == "" {
				scheds = "—"
			}
			if wl.InMemory {
				scheds += " (in memory, no upstream)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(wl.Name), cell(wl.Description), cell(scheds))
		}
	}

	if len(sums) > 0 {
		b.WriteString("\n## Results\n\n")
		b.WriteString("Throughput in pods/s: average and nearest-rank percentiles (scheduler_perf style, index ceil(n·p)−1 of the " +
			"sorted samples) over every per-second sample of all successful rounds, first second dropped; P99 is near the best second. " +
			"Overall = measured pods / measured time. Attempt latency: mean over rounds of the quantiles of " +
			"`scheduler_scheduling_attempt_duration_seconds` (none for the ceiling, which makes no attempts). CPU: user+system of the scheduler process, mean per run and " +
			"total CPU / total pods. Control plane CPU: user+system of kube-apiserver + etcd during the measured phase / measured pods bound, " +
			"the cost each scheduler's requests and watches put on the shared control plane (it includes the harness's own requests creating the pods, the same for every scheduler; " +
			"a dash where not measured: the in-memory runs have no control plane, older reports lack it). Attempts/pod: growth of `scheduler_schedule_attempts_total` (every result) over the measured phase / measured pods bound, " +
			"1 when each pod is tried once and nothing else is retried. Peak RSS: largest VmHWM. Failed rounds are excluded.\n\n")
		b.WriteString("| Workload | Scheduler | Avg pods/s | P50 | P90 | P99 | Overall pods/s | Latency p50 ms | p90 ms | p99 ms | CPU s/run | CPU ms/pod | Control plane CPU ms/pod | Attempts/pod | Peak RSS MiB | Rounds |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, row := range summaryRows(sums) {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}

	if len(comps) > 0 {
		b.WriteString("\n## Ratios\n\n")
		fmt.Fprintf(&b, "Both ratios are oriented so that **> 1 means the first scheduler is better**. Throughput = overall pods/s (measured pods ÷ measured time: bursty workloads such as preemption put many binds in the dropped first or partial last second), "+
			"first ÷ second. CPU = CPU ms per pod, second ÷ first (> 1: the first needs less CPU per pod). "+
			"The ceiling binds each pod round-robin and writes what kube-scheduler writes for it, nothing else: "+
			"wasm/ceiling is the share of what the API and the machine allow that wasm reaches. "+
			"Targets, on throughput: wasm/upstream ≥ %.2f on %s and ≥ %.2f elsewhere; wasm/ceiling ≥ %.2f on %s and ≥ %.2f on %s; "+
			"wasm/native ≥ %.2f everywhere. "+
			"✓ met, ✗ missed, n/a not measurable (e.g. no upstream run for in-memory workloads, no ceiling run).\n\n",
			TargetWasmUpstreamBasic, TargetWorkload, TargetWasmUpstream, TargetWasmCeilingBasic, TargetWorkload,
			TargetWasmCeilingMix, TargetMixWorkload, TargetWasmNative)
		b.WriteString("| Workload | Throughput native/upstream | Throughput wasm/upstream | Throughput wasm/ceiling | Throughput wasm/native | CPU native/upstream | CPU wasm/upstream | CPU wasm/ceiling | CPU wasm/native |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, row := range ratioRows(comps, "≥") {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}

	if len(soak) > 0 {
		b.WriteString("\n## Memory soak\n\n")
		fmt.Fprintf(&b, "Heap = `go_memstats_heap_inuse_bytes` after each cycle and a settle delay. Flat: the median heap of the "+
			"last third of the cycles exceeds the median of the second third by at most %.0f%% of it or %.0f MiB, whichever is "+
			"larger (the first third is warm-up; shrinking is flat). Inflight: `scheduler_inflight_events` must be 0 after every cycle.\n\n",
			FlatTolerance*100, mib(FlatSlackBytes))
		b.WriteString("| Scheduler | Phase | Cycles | Heap first MiB | Heap last MiB | Median 2nd third MiB | Median last third MiB | Growth MiB | Flat | Max inflight | Inflight 0 |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|:-:|--:|:-:|\n")
		for _, row := range soakRows(soak) {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}

	plotted := r.plottedWorkloads()
	if len(plotted) > 0 || len(r.Soak) > 0 {
		b.WriteString("\n## Plots\n\n")
		for _, name := range plotted {
			fmt.Fprintf(&b, "![Throughput %s](%s)\n\n", cell(name), ThroughputFile(name))
		}
		if len(r.Soak) > 0 {
			fmt.Fprintf(&b, "![Memory soak](%s)\n\n", SoakFile)
		}
	}

	if len(r.Runs) > 0 {
		b.WriteString("\n## Runs\n\nEvery run in execution order within each workload; rounds alternate the schedulers.\n\n")
		b.WriteString("| Workload | Round | Scheduler | Pods | Elapsed s | Avg pods/s | Latency p99 ms | CPU s | Control plane CPU s | Attempts | Peak RSS MiB | Error |\n")
		b.WriteString("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, run := range r.orderedRuns() {
			attempts := "—"
			if run.Attempts > 0 {
				attempts = num(run.Attempts, 0)
			}
			controlPlane := "—" // in-memory runs, older reports
			if run.ControlPlaneCPUSeconds > 0 {
				controlPlane = num(run.ControlPlaneCPUSeconds, 2)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				cell(run.Workload), run.Round, cell(run.Scheduler), run.Pods, num(run.Elapsed.Seconds(), 1),
				num(mean(run.Throughput), 1), num(run.Latency.P99*1000, 2), num(run.CPUSeconds, 2), controlPlane, attempts,
				num(mib(float64(run.PeakRSS)), 1), cell(run.Err))
		}
	}

	if missed := r.Missed(); len(missed) > 0 {
		b.WriteString("\n## Missed targets and failures\n\n")
		for _, m := range missed {
			fmt.Fprintf(&b, "- %s\n", oneLine(m))
		}
	}

	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", oneLine(n))
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Text writes the same tables compactly for a console.
func (r *Report) Text(w io.Writer) error {
	var b bytes.Buffer
	sums := r.Summaries()
	title := r.Title
	if title == "" {
		title = "wasmsched benchmark results"
	}
	fmt.Fprintf(&b, "%s  (%s, %s)\n", title, fmtTime(r.Started), orDash(r.Machine))

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	table := func(header string, rows [][]string) {
		b.WriteString("\n")
		fmt.Fprintln(tw, header+"\t")
		for _, row := range rows {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
	}
	if len(sums) > 0 {
		table("workload\tsched\tavg/s\tp50\tp90\tp99\toverall/s\tlat50ms\tlat90ms\tlat99ms\tcpu s\tcpu ms/pod\tcp ms/pod\tattempts/pod\trss MiB\trounds", summaryRows(sums))
	}
	if comps := Compare(sums); len(comps) > 0 {
		b.WriteString("\nratios, >1 = first is better (overall pods/s first/second, CPU per pod second/first):")
		table("workload\tthr n/u\tthr w/u\tthr w/c\tthr w/n\tcpu n/u\tcpu w/u\tcpu w/c\tcpu w/n", ratioRows(comps, ">="))
	}
	if soak := r.SoakResults(); len(soak) > 0 {
		b.WriteString("\nsoak (heap MiB; flat = last-third median <= second-third median + max(10%, 2 MiB)):")
		table("sched\tphase\tcycles\tfirst\tlast\tmid med\tlate med\tgrowth\tflat\tmax inflight\tinflight 0", soakRows(soak))
	}
	if missed := r.Missed(); len(missed) > 0 {
		b.WriteString("\nmissed targets and failures:\n")
		for _, m := range missed {
			fmt.Fprintf(&b, "  %s\n", oneLine(m))
		}
	} else {
		b.WriteString("\nall checked targets met\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

func summaryRows(sums []Summary) [][]string {
	var rows [][]string
	for _, s := range sums {
		rounds := fmt.Sprint(s.Rounds)
		if s.Failed > 0 {
			rounds = fmt.Sprintf("%d + %d failed", s.Rounds, s.Failed)
		}
		rss := "—"
		if s.Rounds > 0 {
			rss = num(mib(float64(s.PeakRSS)), 1)
		}
		rows = append(rows, []string{
			cell(s.Workload), cell(s.Scheduler),
			num(s.Average, 1), num(s.P50, 1), num(s.P90, 1), num(s.P99, 1), num(s.PodsPerSec, 1),
			num(s.Latency.P50*1000, 2), num(s.Latency.P90*1000, 2), num(s.Latency.P99*1000, 2),
			num(s.CPUSeconds, 2), num(s.CPUMsPerPod, 3), num(s.ControlPlaneMsPerPod, 3), num(s.AttemptsPerPod, 2), rss, rounds,
		})
	}
	return rows
}

func ratioRows(comps []Comparison, ge string) [][]string {
	var rows [][]string
	for _, c := range comps {
		row := []string{cell(c.Workload)}
		for _, x := range c.ratios() {
			row = append(row, ratioCell(x, ge))
		}
		for _, x := range c.ratios() {
			row = append(row, num(x.CPU, 3))
		}
		rows = append(rows, row)
	}
	return rows
}

func ratioCell(x Ratio, ge string) string {
	v := num(x.Throughput, 3)
	if v == "—" {
		v = "n/a"
	}
	switch x.Verdict {
	case NoTarget:
		return v
	case NA:
		return fmt.Sprintf("n/a (%s %.2f)", ge, x.Target)
	}
	return fmt.Sprintf("%s %s (%s %.2f)", v, x.Verdict, ge, x.Target)
}

func soakRows(soak []SoakResult) [][]string {
	var rows [][]string
	for _, s := range soak {
		rows = append(rows, []string{
			cell(s.Scheduler), cell(s.Phase), fmt.Sprint(s.Cycles),
			num(mib(s.FirstHeap), 1), num(mib(s.LastHeap), 1), num(mib(s.MidHeap), 1), num(mib(s.LateHeap), 1),
			signed(mib(s.Growth()), 1), yesNo(s.Flat), fmt.Sprintf("%g", s.MaxInflight), yesNo(s.InflightZero),
		})
	}
	return rows
}

// schedulersOf lists, in display order, the schedulers with a run (failed
// or not) of workload.
func (r *Report) schedulersOf(workload string) []string {
	var out []string
	for _, run := range r.Runs {
		if run.Workload == workload && !slices.Contains(out, run.Scheduler) {
			out = append(out, run.Scheduler)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case schedulerLess(a, b):
			return -1
		case schedulerLess(b, a):
			return 1
		}
		return 0
	})
	return out
}

// orderedRuns groups runs by workload in display order, keeping execution
// order (then round) within a workload.
func (r *Report) orderedRuns() []Run {
	var out []Run
	for _, name := range r.workloadOrder() {
		var runs []Run
		for _, run := range r.Runs {
			if run.Workload == name {
				runs = append(runs, run)
			}
		}
		slices.SortStableFunc(runs, func(a, b Run) int { return a.Round - b.Round })
		out = append(out, runs...)
	}
	return out
}

func yesNo(v Verdict) string {
	switch v {
	case Met:
		return "yes ✓"
	case Missed:
		return "no ✗"
	}
	return "n/a"
}

// num formats a finite number; NaN and Inf, meaning "nothing measured", show as a dash.
func num(f float64, prec int) string {
	if !finite(f) {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, f)
}

func signed(f float64, prec int) string {
	if !finite(f) {
		return "—"
	}
	return fmt.Sprintf("%+.*f", prec, f)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cell makes s safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}
