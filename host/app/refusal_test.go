package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/policyapi"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// TestSpecLimits: a SchedulingPolicy's sandbox overrides the configured
// limits field by field.
func TestSpecLimits(t *testing.T) {
	base := wasm.Limits{MemoryPages: 256, Deadline: 100 * time.Millisecond, PoolSize: 4}
	pages := int32(32)
	s := policyapi.Spec{Sandbox: &policyapi.Sandbox{MemoryPages: &pages}}
	if got := specLimits(&s, base); got != (wasm.Limits{MemoryPages: 32, Deadline: 100 * time.Millisecond, PoolSize: 4}) {
		t.Errorf("memoryPages only: %+v", got)
	}
	s.Sandbox.Deadline = &metav1.Duration{Duration: 5 * time.Millisecond}
	if got := specLimits(&s, base); got != (wasm.Limits{MemoryPages: 32, Deadline: 5 * time.Millisecond, PoolSize: 4}) {
		t.Errorf("both: %+v", got)
	}
	if got := specLimits(&policyapi.Spec{}, base); got != base {
		t.Errorf("no sandbox: %+v, want the base", got)
	}
}

// TestRefusalReason: each way the loader refuses a module maps onto the
// Accepted condition's reason an operator reads in status.
func TestRefusalReason(t *testing.T) {
	ctx := context.Background()
	read := func(parts ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fault := func(name string) []byte {
		return read("host", "policy", "wasmslot", "testdata", "faults", name+".wasm")
	}
	prio := read("guest-sdk", "examples", "prioritysort", "prioritysort.wasm")
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second // no test here is about deadlines
	noop := policy.Installer{Sort: func(policy.Sort) {}, PreEnqueue: func(policy.PreEnqueue) {}, VictimOrder: func(policy.VictimOrder) {}}
	set := wasmslot.NewSet(rt, limits, nil, noop)
	defer set.Close(ctx)
	tight := limits
	tight.MemoryPages = 1
	for _, tc := range []struct {
		name   string
		slot   abi.Slot
		bin    []byte
		pin    string
		limits wasm.Limits
		want   string
	}{
		{"forbidden import", abi.SlotQueueSort, fault("queueSort-fs"), "", limits, policyapi.ReasonForbiddenImport},
		{"another ABI", abi.SlotQueueSort, fault("queueSort-abi2"), "", limits, policyapi.ReasonABIMismatch},
		{"not the slot's exports", abi.SlotPreEnqueue, prio, "", limits, policyapi.ReasonABIMismatch},
		{"sha256", abi.SlotQueueSort, prio, strings.Repeat("0", 64), limits, policyapi.ReasonSHA256Mismatch},
		{"smoke call", abi.SlotVictimOrder, fault("victimOrder-garbage"), "", limits, policyapi.ReasonSmokeFailed},
		{"memory", abi.SlotQueueSort, prio, "", tight, policyapi.ReasonTooLarge},
		{"not wasm", abi.SlotQueueSort, []byte("#!/bin/sh"), "", limits, policyapi.ReasonInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := set.LoadWithLimits(ctx, tc.slot, tc.name, tc.bin, tc.pin, tc.limits)
			if err == nil {
				t.Fatal("loaded, want a refusal")
			}
			if got := refusalReason(err); got != tc.want {
				t.Errorf("refusalReason(%v) = %s, want %s", err, got, tc.want)
			}
		})
	}
	if err := set.Load(ctx, abi.SlotQueueSort, "prio", prio, ""); err != nil {
		t.Fatalf("a good module is refused: %v", err)
	}
}
