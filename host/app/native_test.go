package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
)

// allNative is a configuration override setting every slot's module to
// native.
func allNative() map[string]string {
	over := map[string]string{}
	for _, s := range abi.Slots {
		if !s.Placement() { // no native placement policy
			over["policies."+s.String()+".module"] = config.NativeModule
		}
	}
	return over
}

// nativeNames is what Set.Current names each slot when it runs natively.
func nativeNames() map[abi.Slot]string {
	out := map[abi.Slot]string{}
	for _, s := range abi.Slots {
		if !s.Placement() { // empty
			out[s] = "native:" + policies.Builtin(s).Name
		}
	}
	return out
}

func currentNames(set *wasmslot.Set) map[abi.Slot]string {
	out := map[abi.Slot]string{}
	for s, m := range set.Current() {
		out[s] = m.Name
	}
	return out
}

// swapCounter counts successful swaps per slot.
type swapCounter struct {
	policy.Discard
	mu sync.Mutex
	n  map[string]int
}

func (c *swapCounter) Swapped(s abi.Slot, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[s.String()+"/"+result]++
}

func (c *swapCounter) count(key string) int { c.mu.Lock(); defer c.mu.Unlock(); return c.n[key] }

// newTestSet returns a Set with an installer that keeps nothing, on a
// runtime closed at the end of the test.
func newTestSet(t *testing.T, rec policy.Recorder) *wasmslot.Set {
	t.Helper()
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	// A deadline no call reaches: the default 100 ms is wall-clock, and a
	// smoke call descheduled that long on a loaded machine would fail.
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	set := wasmslot.NewSet(rt, limits, rec, policy.Installer{
		Sort: func(policy.Sort) {}, BackoffSort: func(policy.BackoffSort) {}, PreEnqueue: func(policy.PreEnqueue) {},
		QueueingHint: func(policy.QueueingHint) {}, VictimOrder: func(policy.VictimOrder) {},
		Filter: func(policy.Filter) {}, Score: func(policy.Score) {},
	})
	t.Cleanup(func() {
		if err := set.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return set
}

// TestLoadSlotsNative: a configuration with every slot native loads each
// slot's reference policy natively, with no sha256.
func TestLoadSlotsNative(t *testing.T) {
	cfg, err := config.Load(config.Source{Overrides: allNative()})
	if err != nil {
		t.Fatal(err)
	}
	set := newTestSet(t, nil)
	if err := loadSlots(context.Background(), set, &policy.Placement{}, cfg.Policies); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nativeNames(), currentNames(set)); diff != "" {
		t.Errorf("Current (-want, +got):\n%s", diff)
	}
	for s, m := range set.Current() {
		if !m.IsNative() || m.SHA256 != "" || m.ABI != wasmslot.NativeABI {
			t.Errorf("slot %s: %+v, want a native policy without sha256", s, m)
		}
	}
}

// TestReloadNative: a configuration reload moves a slot from its built-in
// Wasm module to native and back, and loads nothing when nothing changed;
// GET /policies shows a native slot as such.
func TestReloadNative(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "config.yaml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("policies:\n  queueSort: {module: native}\n")
	src := config.Source{File: file}
	cfg, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	rec := &swapCounter{}
	set := newTestSet(t, rec)
	if err := loadSlots(ctx, set, &policy.Placement{}, cfg.Policies); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	sw := &swapper{profiles: []*profile{{name: cfg.SchedulerName, set: set}}, src: src, current: cfg,
		log: slog.New(slog.NewTextHandler(&logs, nil))}
	name := func(s abi.Slot) string { return set.Current()[s].Name }

	if got := name(abi.SlotQueueSort); got != "native:backoffpop" {
		t.Fatalf("queueSort at start: %s", got)
	}
	if got := name(abi.SlotBackoffSort); got != "builtin:backoffpop" {
		t.Fatalf("backoffSort at start: %s", got)
	}
	const key = "queueSort/success"
	sw.reload(ctx, "test")
	if n := rec.count(key); n != 1 {
		t.Errorf("reload without a change: %d queueSort loads, want the 1 at start", n)
	}

	write("policies:\n  backoffSort: {module: native}\n")
	sw.reload(ctx, "test")
	if got, want := currentNames(set), map[abi.Slot]string{
		abi.SlotQueueSort: "builtin:backoffpop", abi.SlotBackoffSort: "native:backoffpop", abi.SlotPreEnqueue: "builtin:gangpreempt",
		abi.SlotQueueingHint: "builtin:hints", abi.SlotVictimOrder: "builtin:gangpreempt",
	}; !cmp.Equal(want, got) {
		t.Errorf("after native -> Wasm: (-want, +got):\n%s", cmp.Diff(want, got))
	}

	write("policies:\n  queueSort: {module: native}\n  backoffSort: {module: native}\n")
	sw.reload(ctx, "test")
	if got := name(abi.SlotQueueSort); got != "native:backoffpop" {
		t.Errorf("queueSort after Wasm -> native: %s", got)
	}
	if n := rec.count("backoffSort/success"); n != 2 {
		t.Errorf("backoffSort loaded %d times, want 2 (start, to native)", n)
	}
	if n := rec.count(key); n != 3 {
		t.Errorf("queueSort loaded %d times, want 3 (start, to Wasm, to native)", n)
	}
	if !strings.Contains(logs.String(), "module=native:backoffpop") {
		t.Errorf("the swap log does not name the native policy:\n%s", logs.String())
	}

	// A sha256 with native is refused as a whole; the slots stay.
	write("policies:\n  queueSort: {module: native, sha256: " + strings.Repeat("0", 64) + "}\n")
	sw.reload(ctx, "test")
	if got := name(abi.SlotQueueSort); got != "native:backoffpop" || !strings.Contains(logs.String(), "configuration reload refused") {
		t.Errorf("refused reload: queueSort %s; log:\n%s", got, logs.String())
	}

	rr := httptest.NewRecorder()
	sw.get(rr, httptest.NewRequest(http.MethodGet, "/policies", nil))
	var out map[string]map[string]map[string]any
	if err := json.Unmarshal(rr.Body.Bytes(), &out); err != nil {
		t.Fatalf("GET /policies: %v: %s", err, rr.Body.String())
	}
	q, b := out["wasmsched"]["queueSort"], out["wasmsched"]["preEnqueue"]
	if q["module"] != "native:backoffpop" || q["native"] != true || q["sha256"] != nil || q["breakerOpen"] != false {
		t.Errorf("GET /policies, native queueSort: %v", q)
	}
	if b["module"] != "builtin:gangpreempt" || b["native"] != nil || b["sha256"] != digest(policies.Builtin(abi.SlotPreEnqueue).Wasm) {
		t.Errorf("GET /policies, Wasm preEnqueue: %v", b)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger writing while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeNative: the scheduler (New, then Run) starts against a (fake) cluster with every
// slot of its profiles native, logs each native policy loaded, and stops
// cleanly.
func TestServeNative(t *testing.T) {
	over := allNative()
	over["metrics.bindAddress"] = ""
	over["secureServing.bindAddress"] = ""
	over["profiles.second.policies.queueingHint.module"] = config.NativeModule
	over["sandbox.deadline"] = "10s" // the second profile's queueSort is Wasm: see newTestSet
	src := config.Source{Overrides: over}
	cfg, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		a, err := New(ctx, cfg, fake.NewClientset(), WithLogger(log), WithEventClient(fake.NewClientset()), WithReload(src))
		if err != nil {
			done <- err
			return
		}
		done <- a.Run(ctx)
	}()
	deadline := time.After(30 * time.Second)
	for !strings.Contains(logs.String(), `msg=scheduling`) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("New or Run returned before scheduling: %v\n%s", err, logs.String())
		case <-deadline:
			cancel()
			<-done
			t.Fatalf("the scheduler did not start scheduling in 30s:\n%s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	out := logs.String()
	for s, name := range nativeNames() {
		want := `msg="policy loaded" profile=wasmsched slot=` + s.String() + " module=" + name + ` sha256=""`
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		`msg="policy loaded" profile=second slot=queueingHint module=native:hints`,
		`msg="policy loaded" profile=second slot=queueSort module=builtin:backoffpop`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
