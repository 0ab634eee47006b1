package wasm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// fixture reads testdata/<name>.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatalf("read fixture: %v (rebuild with: wat2wasm testdata/%s.wat -o testdata/%s.wasm)", err, name, name)
	}
	return b
}

// newTestRuntime returns a Runtime that logs into the returned recorder and
// is closed when the test ends.
func newTestRuntime(t testing.TB, opts ...Option) (*Runtime, *logRecorder) {
	t.Helper()
	rec := &logRecorder{}
	opts = append([]Option{WithLogger(slog.New(rec))}, opts...)
	rt, err := NewRuntime(context.Background(), opts...)
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(context.Background()); err != nil {
			t.Errorf("Runtime.Close: %v", err)
		}
	})
	return rt, rec
}

// load loads a fixture or fails the test.
func load(t testing.TB, rt *Runtime, name string, limits Limits) *Module {
	t.Helper()
	m, err := rt.Load(context.Background(), name, fixture(t, name), limits)
	if err != nil {
		t.Fatalf("Load(%s): %v", name, err)
	}
	return m
}

func acquire(t testing.TB, m *Module) *Instance {
	t.Helper()
	inst, err := m.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return inst
}

// Deadlines are wall-clock: a call descheduled for long enough on a loaded
// machine (-race, every CPU busy) fails with KindDeadline however little work
// it does. So a call that must succeed, or fail by itself, runs under
// generousDeadline, which only a call that never stops reaches, or on a
// Runtime whose watchdog clock stands still (newFakeClockRuntime); the short
// spinDeadline is for calls that the watchdog must stop. Of those the tests
// assert that they are stopped, with KindDeadline and never before their
// deadline, but not how soon after it on the real clock: TestWatchdogScan
// pins that down tick by tick.
const (
	// generousDeadline is the deadline of calls that must not reach it.
	generousDeadline = 10 * time.Second
	// spinDeadline is the deadline of calls that spin until the watchdog
	// stops them.
	spinDeadline = 50 * time.Millisecond
	// stopBound bounds the wait for a call that must be stopped (by a trap
	// or its deadline): it only catches a call that never stops.
	stopBound = 2 * time.Minute
)

// testLimits are DefaultLimits with the generous deadline and a small pool.
func testLimits() Limits {
	l := DefaultLimits()
	l.Deadline = generousDeadline
	l.PoolSize = 4
	return l
}

// spinLimits are testLimits with spinDeadline, for guests that spin.
func spinLimits() Limits {
	l := testLimits()
	l.Deadline = spinDeadline
	return l
}

// newFakeClockRuntime is newTestRuntime with the watchdog on a fake clock:
// no call reaches its deadline, however long it runs, unless the test steps
// the clock (see callStopped).
func newFakeClockRuntime(t testing.TB, opts ...Option) (*Runtime, *logRecorder, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, rec := newTestRuntime(t, append([]Option{WithClock(clk)}, opts...)...)
	return rt, rec, clk
}

// callStopped calls fn on inst, which must fail, and returns its error. With
// a fake clock (the Runtime's, see newFakeClockRuntime), it steps the clock a
// watchdog tick at a time until the call returns, and returns how much fake
// time that took: the call is stopped by its deadline unless it fails by
// itself first. With clk nil it only waits. Either way it fails the test if
// the call is still running after stopBound; Runtime.Close, at the end of
// the test, then stops it.
func callStopped(t testing.TB, clk *testingclock.FakeClock, inst *Instance, fn FuncID, a, b uint64) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := inst.Call(fn, a, b)
		done <- err
	}()
	var start time.Time
	if clk != nil {
		start = clk.Now()
	}
	bound := time.After(stopBound)
	for {
		var step <-chan time.Time
		if clk != nil {
			step = time.After(time.Millisecond) // leave the watchdog time to scan
		}
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s(%d, %d) on %q succeeded, want it stopped", fn, a, b, inst.module.name)
			}
			if clk == nil {
				return 0, err
			}
			return clk.Since(start), err
		case <-step:
			clk.Step(inst.module.rt.tick)
		case <-bound:
			t.Fatalf("%s(%d, %d) on %q still running after %v: never stopped", fn, a, b, inst.module.name, stopBound)
			return 0, nil
		}
	}
}

// logRecorder is a slog.Handler that keeps records, flattened; a test can make
// Handle block on a line to hold a call inside a host function.
type logRecorder struct {
	mu      sync.Mutex
	records []logLine
	block   func(logLine) // called outside mu, may block
}

type logLine struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	l := logLine{Level: rec.Level, Msg: rec.Message, Attrs: map[string]string{}}
	r.mu.Lock()
	rec.Attrs(func(a slog.Attr) bool {
		l.Attrs[a.Key] = a.Value.String()
		return true
	})
	r.records = append(r.records, l)
	block := r.block
	r.mu.Unlock()
	if block != nil {
		block(l)
	}
	return nil
}

// WithAttrs returns a handler sharing the records of r.
func (r *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &attrHandler{parent: r, attrs: as}
}

func (r *logRecorder) WithGroup(string) slog.Handler { return r }

func (r *logRecorder) lines() []logLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// guestLines returns the guest output lines logged, as "module/stream: line".
func (r *logRecorder) guestLines() []string {
	var out []string
	for _, l := range r.lines() {
		if l.Msg == "guest output" {
			out = append(out, l.Attrs["module"]+"/"+l.Attrs["stream"]+": "+l.Attrs["line"])
		}
	}
	return out
}

func (r *logRecorder) setBlock(f func(logLine)) {
	r.mu.Lock()
	r.block = f
	r.mu.Unlock()
}

type attrHandler struct {
	parent *logRecorder
	attrs  []slog.Attr
}

func (h *attrHandler) Enabled(ctx context.Context, l slog.Level) bool { return true }

func (h *attrHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec = rec.Clone()
	rec.AddAttrs(h.attrs...)
	return h.parent.Handle(ctx, rec)
}

func (h *attrHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &attrHandler{parent: h.parent, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *attrHandler) WithGroup(string) slog.Handler { return h }

// fakeClock is a settable clock for the output rate limiter.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
