package benchcli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/app/bench"
)

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestBenchJSON runs a small benchmark through the CLI: every pod bound,
// the samples adding up to the pods, ordered positive quantiles, and the
// policies that served.
func TestBenchJSON(t *testing.T) {
	code, out, errOut := runCLI("-nodes", "50", "-init-pods", "20", "-pods", "200", "-json", "-timeout", "2m")
	if code != 0 {
		t.Fatalf("bench: code %d, stderr:\n%s", code, errOut)
	}
	var got bench.Result
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not one bench.Result: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("stdout holds more than one JSON value:\n%s", out)
	}
	if got.Nodes != 50 || got.InitPods != 20 || got.Pods != 200 {
		t.Errorf("nodes, initPods, pods = %d, %d, %d; want 50, 20, 200", got.Nodes, got.InitPods, got.Pods)
	}
	sum := got.FirstSample
	for _, n := range got.Throughput {
		if n < 0 {
			t.Errorf("negative sample in %v", got.Throughput)
		}
		sum += n
	}
	if sum != got.Pods {
		t.Errorf("firstSample %d + throughput %v = %d; want every pod, %d", got.FirstSample, got.Throughput, sum, got.Pods)
	}
	if got.ElapsedSeconds <= 0 || got.AvgPodsPerSecond <= 0 {
		t.Errorf("elapsed %vs, %v pods/s; want both > 0", got.ElapsedSeconds, got.AvgPodsPerSecond)
	}
	if want := float64(got.Pods) / got.ElapsedSeconds; math.Abs(got.AvgPodsPerSecond-want) > 1e-6*want {
		t.Errorf("avgPodsPerSecond %v; want pods/elapsed = %v", got.AvgPodsPerSecond, want)
	}
	l := got.Latency
	if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99) || l.Mean <= 0 {
		t.Errorf("latency %+v; want 0 < p50 <= p90 <= p99 and mean > 0", l)
	}
	if got.CPUSeconds <= 0 || got.PeakRSSBytes <= 0 || got.PeakHeapBytes <= 0 {
		t.Errorf("cpuSeconds %v, peakRSSBytes %d, peakHeapBytes %d; want all > 0", got.CPUSeconds, got.PeakRSSBytes, got.PeakHeapBytes)
	}
	var slots []string
	for _, s := range abi.Slots {
		if !s.Placement() { // empty: no module configured
			slots = append(slots, s.String())
		}
	}
	var served []string
	for s, name := range got.Policies {
		if name == "" {
			t.Errorf("slot %s: empty module name", s)
		}
		served = append(served, s)
	}
	slices.Sort(slots)
	slices.Sort(served)
	if diff := cmp.Diff(slots, served); diff != "" {
		t.Errorf("policies' slots (-want, +got):\n%s", diff)
	}
	for _, want := range []string{"init: bound 20/20\n", "bound 200/200\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks progress %q:\n%s", want, errOut)
		}
	}
}

// TestBenchSummary: without -json, a summary for people on stdout.
func TestBenchSummary(t *testing.T) {
	code, out, errOut := runCLI("-nodes", "10", "-init-pods", "0", "-pods", "30")
	if code != 0 {
		t.Fatalf("bench: code %d, stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"cluster      10 nodes, 0 pods bound before, 30 pods measured", "pods/s on average", "p99", "queueSort=", "peak RSS"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"unknown flag", []string{"-frobnicate"}, 2, "flag provided but not defined: -frobnicate"},
		{"argument", []string{"extra"}, 2, `bench takes no arguments, got ["extra"]`},
		{"no nodes", []string{"-nodes", "0"}, 2, "-nodes 0: want at least 1"},
		{"no pods", []string{"-pods", "0"}, 2, "-pods 0: want at least 1"},
		{"too many pods", []string{"-nodes", "2", "-init-pods", "0", "-pods", "81"}, 2, "81 pods do not fit on 2 nodes (40 pods each): raise -nodes"},
		{"bad timeout", []string{"-timeout", "0s"}, 2, "-timeout 0s: want a positive duration"},
		{"bad log level", []string{"-log-level", "loud"}, 2, `-log-level "loud"`},
		{"unknown key", []string{"-set", "no.such.key=1"}, 1, `configuration: command line: unknown key "no.such.key"`},
		{"missing config file", []string{"-config", "/nonexistent/wasmsched.yaml"}, 1, "/nonexistent/wasmsched.yaml"},
		{"bad module", []string{"-nodes", "2", "-init-pods", "0", "-pods", "1", "-set", "policies.queueSort.module=bench.go"},
			1, `start the scheduler: profile wasmsched: policy for slot queueSort: load policy "bench.go"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.contains) {
				t.Errorf("code %d, stderr:\n%s\nwant code %d and %q", code, errOut, tt.code, tt.contains)
			}
			if out != "" {
				t.Errorf("stdout %q; want nothing", out)
			}
		})
	}
}
