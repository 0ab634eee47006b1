package main

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/e2e/perf/report"
)

func TestFlagsCeiling(t *testing.T) {
	o, err := parseFlags([]string{"-schedulers", "ceiling,wasm", "-ceiling", "/tmp/ceiling", "-workloads", "SchedulingBasic,ConstraintMix"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{schedCeiling, schedWasm}, o.schedulers); diff != "" {
		t.Errorf("schedulers (-want, +got):\n%s", diff)
	}
	if o.ceiling != "/tmp/ceiling" || !slices.Equal(o.workloads, []string{"SchedulingBasic", "ConstraintMix"}) {
		t.Errorf("parsed %+v", o)
	}
	// By default every workload reports wasm/ceiling, and the mix runs.
	o, err = parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.schedulers, schedCeiling) {
		t.Errorf("default schedulers %v lack the ceiling", o.schedulers)
	}
	if !slices.Contains(o.workloads, "ConstraintMix") {
		t.Errorf("default workloads %v lack ConstraintMix", o.workloads)
	}
}

// The ceiling runs where a binding and an event are all a scheduler
// writes per pod, and on no other workload.
func TestCeilingSkips(t *testing.T) {
	byName := map[string]*workload{}
	for _, w := range workloads(1) {
		byName[w.name] = w
	}
	var skipped []string
	for _, name := range append(slices.Sorted(maps.Keys(byName)), inMemory) {
		if ceilingSkipped(name, byName) != "" {
			skipped = append(skipped, name)
		}
	}
	want := []string{"ChurnAffinity", "Preemption", "PreemptionAsync", "SchedulingWaitForFirstConsumerPVs", "SchedulingWithResourceClaimTemplate", "Unschedulable", inMemory}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("workloads the ceiling skips (-want, +got):\n%s", diff)
	}
	// The report's targets name workloads that exist.
	for _, name := range []string{report.TargetWorkload, report.TargetMixWorkload} {
		if byName[name] == nil || byName[name].noCeiling != "" {
			t.Errorf("target workload %s: missing, or the ceiling skips it", name)
		}
	}
}

func TestCeilingArgs(t *testing.T) {
	got := strings.Join(ceilingArgs("/k", "127.0.0.1:1"), " ")
	want := "-kubeconfig /k -listen 127.0.0.1:1 -scheduler-name perf -qps 5000 -burst 5000"
	if got != want {
		t.Errorf("ceilingArgs = %q, want %q (the other schedulers' name and client limits)", got, want)
	}
}
