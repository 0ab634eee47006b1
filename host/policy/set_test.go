package policy_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// installed holds what a Set installed, as the queue and preemption would.
type installed struct {
	sort     atomic.Pointer[policy.Sort]
	backoff  atomic.Pointer[policy.BackoffSort]
	pre      atomic.Pointer[policy.PreEnqueue]
	hint     atomic.Pointer[policy.QueueingHint]
	victims  atomic.Pointer[policy.VictimOrder]
	installs atomic.Int64
}

func (in *installed) installer() policy.Installer {
	return policy.Installer{
		Sort:         func(s policy.Sort) { in.sort.Store(&s); in.installs.Add(1) },
		BackoffSort:  func(s policy.BackoffSort) { in.backoff.Store(&s); in.installs.Add(1) },
		PreEnqueue:   func(p policy.PreEnqueue) { in.pre.Store(&p); in.installs.Add(1) },
		QueueingHint: func(h policy.QueueingHint) { in.hint.Store(&h); in.installs.Add(1) },
		VictimOrder:  func(v policy.VictimOrder) { in.victims.Store(&v); in.installs.Add(1) },
	}
}

// readWasm reads a module binary; path is relative to the repository root.
func readWasm(tb testing.TB, path string) []byte {
	tb.Helper()
	bin, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		tb.Fatalf("%v (run make policies fixtures)", err)
	}
	return bin
}

func example(tb testing.TB, name string) []byte {
	return readWasm(tb, filepath.Join("guest-sdk", "examples", name, name+".wasm"))
}

func sha(bin []byte) string {
	s := sha256.Sum256(bin)
	return hex.EncodeToString(s[:])
}

func newRuntime(tb testing.TB) *wasm.Runtime {
	tb.Helper()
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(ctx) })
	return rt
}

func testLimits() wasm.Limits {
	l := wasm.DefaultLimits()
	l.Deadline = 50 * time.Millisecond
	return l
}

// newSet returns a Set whose Close runs at the end of the test.
func newSet(tb testing.TB, rec policy.Recorder, in *installed, opts ...policy.SetOption) *policy.Set {
	tb.Helper()
	s := policy.NewSet(newRuntime(tb), testLimits(), rec, in.installer(), opts...)
	tb.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

var (
	hiPod = policytest.MakePod().Name("hi").Priority(10).Created(time.Unix(20, 0)).Queued(time.Unix(20, 0)).View()
	loPod = policytest.MakePod().Name("lo").Priority(1).Created(time.Unix(10, 0)).Queued(time.Unix(10, 0)).View()
)

// TestSetLoadSwaps: a call after Load answers from the new module.
func TestSetLoadSwaps(t *testing.T) {
	ctx := context.Background()
	rec := newCounting()
	in := &installed{}
	s := newSet(t, rec, in)
	prio, fifo := example(t, "prioritysort"), example(t, "fifosort")

	if err := s.Load(ctx, abi.SlotQueueSort, "prioritysort", prio, sha(prio)); err != nil {
		t.Fatal(err)
	}
	sort := *in.sort.Load()
	if !sort.Less(hiPod, loPod) {
		t.Error("prioritysort: want the higher priority first")
	}
	if err := s.Load(ctx, abi.SlotQueueSort, "fifosort", fifo, ""); err != nil {
		t.Fatal(err)
	}
	sort2 := *in.sort.Load()
	if sort2.Less(hiPod, loPod) || !sort2.Less(loPod, hiPod) {
		t.Error("fifosort: want the earlier created first")
	}
	if k, ok := sort2.(policy.Keyer); !ok || !k.Keyed() {
		t.Error("fifosort's adapter is not keyed")
	}
	// The previous adapter was not changed by the swap; its module is closed,
	// so it answers natively and counts no failure.
	if !sort.Less(hiPod, loPod) {
		t.Error("old adapter after the swap: want the native answer")
	}
	info := s.Current()[abi.SlotQueueSort]
	if info.Name != "fifosort" || info.SHA256 != sha(fifo) || info.ABI != "1.0" && info.ABI[:2] != "1." {
		t.Errorf("Current = %+v", info)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if got := rec.swaps["queueSort/success"]; got != 2 {
		t.Errorf("successful swaps = %d, want 2 (%v)", got, rec.swaps)
	}
	if len(rec.failures) != 0 {
		t.Errorf("failures: %v", rec.failures)
	}
}

var _ = sync.Mutex{}
