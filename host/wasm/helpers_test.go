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

// testLimits are DefaultLimits with a short deadline and a small pool.
func testLimits() Limits {
	l := DefaultLimits()
	l.Deadline = 50 * time.Millisecond
	l.PoolSize = 4
	return l
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
