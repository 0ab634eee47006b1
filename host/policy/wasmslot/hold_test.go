package wasmslot_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// TestHoldAcrossSwap: a scheduling cycle that began with filter A ends with
// A even if a swap installs B meanwhile (WasmFilter holds the adapter from
// PreFilter to PodState.Done); A's module is closed when the last hold is
// released, and a hold is refused once A is retired and free.
func TestHoldAcrossSwap(t *testing.T) {
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(ctx) })
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	var cur policy.Filter
	set := wasmslot.NewSet(rt, limits, nil, policy.Installer{Filter: func(f policy.Filter) { cur = f }})
	t.Cleanup(func() { _ = set.Close(ctx) })
	read := func(parts ...string) []byte {
		b, err := os.ReadFile(filepath.Join(parts...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	nodepool := read("..", "..", "..", "guest-sdk", "examples", "nodepool", "nodepool.wasm")
	labels := read("..", "..", "..", "guest-sdk", "policytest", "testdata", "placement", "placement.wasm")

	if err := set.Load(ctx, abi.SlotFilter, "nodepool", nodepool, ""); err != nil {
		t.Fatal(err)
	}
	a := cur
	release, ok := a.(interface{ Hold() (func(), bool) }).Hold()
	if !ok {
		t.Fatal("a fresh filter refused a hold")
	}
	// A pod in no pool on a node of pool gpu: nodepool rejects it; the
	// labels module passes a node without a verdict label.
	pod := policytest.MakePod().Name("p").View()
	nodes := policytest.PlacementNodes(policytest.MakeNode().Name("n").Label("wasmsched.io/pool", "gpu"))
	judge := func(f policy.Filter) abi.FilterCode {
		t.Helper()
		out := make([]policy.FilterVerdict, 1)
		if err := f.Filter(pod, nodes, out); err != nil {
			t.Fatalf("Filter: %v", err)
		}
		return out[0].Code
	}
	if got := judge(a); got != abi.FilterUnresolvable {
		t.Fatalf("nodepool's verdict %v, want Unresolvable", got)
	}

	if err := set.Load(ctx, abi.SlotFilter, "labels", labels, ""); err != nil {
		t.Fatal(err)
	}
	b := cur
	if got := judge(b); got != abi.FilterPass {
		t.Fatalf("the labels module's verdict %v, want Pass", got)
	}
	// The held cycle still reaches A.
	if got := judge(a); got != abi.FilterUnresolvable {
		t.Errorf("held A after the swap answered %v, want nodepool's Unresolvable", got)
	}
	if _, ok := a.(interface{ Hold() (func(), bool) }).Hold(); ok {
		t.Error("a retired filter accepted a new hold")
	}
	release()
	release() // idempotent
	// Released, A's module is closed: a late call goes to its successor.
	if got := judge(a); got != abi.FilterPass {
		t.Errorf("A after its release answered %v, want B's Pass (A is closed)", got)
	}
	if a.(interface{ Module() *wasm.Module }).Module().Stats().Live != 0 {
		t.Errorf("A's module still has live instances after its release")
	}
}
