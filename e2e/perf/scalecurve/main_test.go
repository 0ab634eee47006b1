package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScaleCurve runs a tiny curve end to end with the real wasmsched-bench:
// every point measured, the mix capped at 10 pods per node, the growth
// table and the three plots written.
func TestScaleCurve(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "wasmsched-bench")
	build := exec.Command("go", "build", "-o", bench, "github.com/wasmsched/wasmsched/cmd/wasmsched-bench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build wasmsched-bench: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	args := []string{"-nodes", "60,30", "-procs", "1,2", "-pods", "400", "-workloads", "plain,mix", "-wasmsched-bench", bench, "-out", out}
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pts []point
	if err := json.Unmarshal(data, &pts); err != nil {
		t.Fatal(err)
	}
	if len(pts) != 8 {
		t.Fatalf("%d points, want 8 (2 workloads x 2 sizes x 2 GOMAXPROCS)", len(pts))
	}
	for _, p := range pts {
		if p.Err != "" || p.PodsPerSec <= 0 || p.CPUMsPod <= 0 || p.PeakHeap <= 0 || p.PeakRSS <= 0 {
			t.Errorf("point %+v: want no error and positive figures", p)
		}
		want := 400
		if p.Workload == "mix" && p.Nodes == 30 {
			want = 300
		}
		if p.Pods != want {
			t.Errorf("%s on %d nodes measured %d pods, want %d", p.Workload, p.Nodes, p.Pods, want)
		}
	}
	if pts[0].Nodes != 30 || pts[1].Nodes != 30 || pts[2].Nodes != 60 {
		t.Errorf("points not in ascending node order: %+v", pts[:3])
	}
	md, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| plain | 1 | 30 → 60 |", "| mix | 2 | 30 → 60 |", "![CPU per pod](cpu-per-pod.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("README.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"cpu-per-pod.png", "throughput.png", "heap.png"} {
		fh, err := os.Open(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		fh.Close()
	}
}

func TestParseRejects(t *testing.T) {
	for _, args := range [][]string{
		{"-nodes", "0"},
		{"-nodes", "a,b"},
		{"-procs", "-1"},
		{"-workloads", "plain,gang"},
		{"-pods", "0"},
		{"extra"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parse(%q) accepted it", args)
		}
	}
}
