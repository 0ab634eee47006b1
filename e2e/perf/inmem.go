package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
)

// inMemory is the workload without an apiserver: `wasmsched-bench` runs the
// real scheduler wiring against a fake clientset with a no-op binder, so
// only the scheduler's own cost is measured. Upstream has no such mode, so
// only native and wasm run it.
const inMemory = "InMemory"

func inMemoryWorkload(scale float64) report.Workload {
	return report.Workload{Name: inMemory, InMemory: true, Description: fmt.Sprintf(
		"wasmsched-bench: the scheduler in one process against a fake clientset (informers on client-go's fake, binding sets spec.nodeName in the fake), %d nodes, %d initial pods, %d measured pods; no apiserver, network or serialisation",
		scaled(inMemoryNodes, scale), scaled(inMemoryInit, scale), scaled(inMemoryPods, scale))}
}

// The in-memory sizes: upstream's 5000 nodes; 30000 measured pods because
// at ~3000 pods/s 5000 would be over in under 2 s, too few samples.
const (
	inMemoryNodes = 5000
	inMemoryInit  = 1000
	inMemoryPods  = 30000
)

// benchResult is `wasmsched-bench -json`'s output.
type benchResult struct {
	Pods           int       `json:"pods"`
	ElapsedSeconds float64   `json:"elapsedSeconds"`
	Throughput     []float64 `json:"throughput"`
	Latency        struct {
		P50 float64 `json:"p50"`
		P90 float64 `json:"p90"`
		P99 float64 `json:"p99"`
	} `json:"latency"`
	CPUSeconds   float64           `json:"cpuSeconds"`
	PeakRSSBytes uint64            `json:"peakRSSBytes"`
	Policies     map[string]string `json:"policies"`
}

// measureInMemory runs `wasmsched-bench` for kind (native or wasm).
func (h *harness) measureInMemory(ctx context.Context, kind string, round int, scale float64) report.Run {
	out := report.Run{Workload: inMemory, Scheduler: kind, Round: round}
	args := []string{"-json", "-log-level", "warn",
		"-nodes", strconv.Itoa(scaled(inMemoryNodes, scale)), "-init-pods", strconv.Itoa(scaled(inMemoryInit, scale)),
		"-pods", strconv.Itoa(scaled(inMemoryPods, scale))}
	if kind == schedNative {
		args = append(args, nativeArgs()...)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bench, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr // its progress
	h.logf("[%s-%s-%d] %s %v", inMemory, kind, round, h.bench, args)
	if err := cmd.Run(); err != nil {
		out.Err = fmt.Sprintf("wasmsched-bench: %v", err)
		return out
	}
	var res benchResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		out.Err = fmt.Sprintf("wasmsched-bench -json: %v: %q", err, stdout.String())
		return out
	}
	if kind == schedNative {
		for slot, m := range res.Policies {
			if !strings.HasPrefix(m, "native:") {
				out.Err = fmt.Sprintf("slot %s ran %q, not the native policy", slot, m)
				return out
			}
		}
	}
	out.Pods = res.Pods
	out.Elapsed = time.Duration(res.ElapsedSeconds * float64(time.Second))
	out.Throughput = res.Throughput
	out.Latency = report.Quantiles{P50: res.Latency.P50, P90: res.Latency.P90, P99: res.Latency.P99}
	out.CPUSeconds = res.CPUSeconds
	out.PeakRSS = res.PeakRSSBytes
	h.logf("[%s-%s-%d] %d pods in %.1fs, attempt p50 %.2fms, cpu %.1fs", inMemory, kind, round, out.Pods, res.ElapsedSeconds, out.Latency.P50*1e3, out.CPUSeconds)
	return out
}
