package policyapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

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
	fault := func(name string) []byte { return read("host", "policy", "wasmslot", "testdata", "faults", name+".wasm") }
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
		{"forbidden import", abi.SlotQueueSort, fault("queueSort-fs"), "", limits, ReasonForbiddenImport},
		{"another ABI", abi.SlotQueueSort, fault("queueSort-abi2"), "", limits, ReasonABIMismatch},
		{"not the slot's exports", abi.SlotPreEnqueue, prio, "", limits, ReasonABIMismatch},
		{"sha256", abi.SlotQueueSort, prio, strings.Repeat("0", 64), limits, ReasonSHA256Mismatch},
		{"smoke call", abi.SlotVictimOrder, fault("victimOrder-garbage"), "", limits, ReasonSmokeFailed},
		{"memory", abi.SlotQueueSort, prio, "", tight, ReasonTooLarge},
		{"not wasm", abi.SlotQueueSort, []byte("#!/bin/sh"), "", limits, ReasonInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := set.LoadWithLimits(ctx, tc.slot, tc.name, tc.bin, tc.pin, tc.limits)
			if err == nil {
				t.Fatal("loaded, want a refusal")
			}
			if got := RefusalReason(err); got != tc.want {
				t.Errorf("RefusalReason(%v) = %s, want %s", err, got, tc.want)
			}
		})
	}
	if err := set.Load(ctx, abi.SlotQueueSort, "prio", prio, ""); err != nil {
		t.Fatalf("a good module is refused: %v", err)
	}
}
