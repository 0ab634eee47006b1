package logic_test

import (
	"context"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies/backoffpop/logic"
)

// failRecorder fails the test on every failed call and every fallback, and
// counts the calls that reached the module.
type failRecorder struct {
	t     *testing.T
	calls atomic.Int64
}

func (r *failRecorder) Called(abi.Slot) { r.calls.Add(1) }
func (r *failRecorder) Failed(slot abi.Slot, reason string, err error) {
	r.t.Errorf("a call into the %s slot failed (%s): %v", slot, reason, err)
}
func (r *failRecorder) FellBack(slot abi.Slot, n int) {
	r.t.Errorf("the %s slot answered %d decisions with the fallback", slot, n)
}
func (r *failRecorder) Observe(abi.Slot, time.Duration) {}
func (r *failRecorder) Swapped(abi.Slot, string)        {}
func (r *failRecorder) BreakerTripped(slot abi.Slot) {
	r.t.Errorf("the %s slot's circuit breaker opened", slot)
}

// wrongFallback answers the opposite of the logic of one slot, so that a
// fallback the recorder somehow missed still fails the comparison.
type wrongFallback struct {
	less func(a, b abi.PodView) bool
	key  func(p abi.PodView) abi.SortKey
}

func (w wrongFallback) Less(a, b abi.PodView) bool { return !w.less(a, b) }
func (w wrongFallback) MayPop(p abi.PodView) bool  { return !logic.MayPop(p) }
func (w wrongFallback) Keyed() bool                { return true }
func (w wrongFallback) Key(p abi.PodView) abi.SortKey {
	k := w.key(p)
	k[3] = ^k[3]
	return k
}

// TestDifferential compares, on random pods and pairs, every answer of the
// native logic with the compiled module's, called through the host's Wasm
// adapters in the real runtime: Less both ways and Key for both slots, and
// MayPop.
func TestDifferential(t *testing.T) {
	bin, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatalf("reading the module: %v (build it with `make policies`)", err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			t.Errorf("closing the runtime: %v", err)
		}
	}()
	// A deadline no call reaches: the default 100 ms is wall-clock, and a
	// call descheduled that long on a loaded machine would fall back.
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	m, err := rt.Load(ctx, "backoffpop.wasm", bin, limits)
	if err != nil {
		t.Fatal(err)
	}
	rec := &failRecorder{t: t}
	qs, err := wasmslot.NewSort(m, abi.SlotQueueSort, wrongFallback{logic.QueueLess, logic.QueueKey}, rec)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := wasmslot.NewBackoffSort(m, wrongFallback{logic.BackoffLess, logic.BackoffKey}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if !qs.Keyed() || !bs.Keyed() {
		t.Fatalf("keyed: queue sort %v, backoff sort %v; want both (is the module stale? run `make policies`)", qs.Keyed(), bs.Keyed())
	}

	r := rand.New(rand.NewPCG(20250514, 5142))
	const pairs = 20_000
	var compared int
	for i := range pairs {
		pa := randomPod(r)
		pb := randomPod(r)
		if w := logic.Window(pa.BackoffExpiry); i%3 == 0 && w > -1e9 && w < 1e9 {
			// the same window as a: the interesting case
			pb.BackoffExpiry = w*logic.WindowNanos + int64(r.IntN(logic.WindowNanos))
			if r.IntN(2) == 0 {
				pb.Priority = pa.Priority
			}
			if r.IntN(2) == 0 {
				pb.QueuedTime = pa.QueuedTime
			}
		}
		a, b := policytest.PodView(pa), policytest.PodView(pb)
		checks := []struct {
			what         string
			native, wasm any
		}{
			{"QueueLess(a, b)", logic.QueueLess(a, b), qs.Less(a, b)},
			{"QueueLess(b, a)", logic.QueueLess(b, a), qs.Less(b, a)},
			{"QueueKey(a)", logic.QueueKey(a), qs.Key(a)},
			{"QueueKey(b)", logic.QueueKey(b), qs.Key(b)},
			{"BackoffLess(a, b)", logic.BackoffLess(a, b), bs.Less(a, b)},
			{"BackoffLess(b, a)", logic.BackoffLess(b, a), bs.Less(b, a)},
			{"BackoffKey(a)", logic.BackoffKey(a), bs.Key(a)},
			{"BackoffKey(b)", logic.BackoffKey(b), bs.Key(b)},
			{"MayPop(a)", logic.MayPop(a), bs.MayPop(a)},
			{"MayPop(b)", logic.MayPop(b), bs.MayPop(b)},
		}
		for _, c := range checks {
			if c.native != c.wasm {
				t.Fatalf("pair %d: %s: native %v, wasm %v\na: %+v\nb: %+v", i, c.what, c.native, c.wasm, pa, pb)
			}
			compared++
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if got, want := rec.calls.Load(), int64(compared); got != want {
		t.Errorf("%d calls reached the module, want %d", got, want)
	}
	t.Logf("%d pairs, %d answers compared, all identical", pairs, compared)
}
