package wasm

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tryModule is a hand-assembled module with one exported memory and one
// function whose body uses `try` (exception handling), which instrument
// refuses. wat2wasm needs a feature flag for it, so it is not a fixture.
var tryModule = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
	0x03, 0x02, 0x01, 0x00, // function 0: type 0
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1
	0x07, 0x0a, 0x01, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00, // export "memory"
	0x0a, 0x07, 0x01, 0x05, 0x00, 0x06, 0x40, 0x0b, 0x0b, // code: try end end
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name    string
		bin     []byte // nil: the fixture of that name
		limits  func(*Limits)
		wantSub []string
		kind    error // the sentinel errors.Is finds; nil: none of them
	}{
		{name: "garbage", bin: []byte("#!/bin/sh\necho not wasm\n"),
			wantSub: []string{"not a WebAssembly binary", "pass a .wasm file"}},
		{name: "empty", bin: []byte{},
			wantSub: []string{"not a WebAssembly binary"}},
		{name: "version", bin: []byte{0x00, 'a', 's', 'm', 0x02, 0x00, 0x00, 0x00},
			wantSub: []string{"unsupported WebAssembly binary version 02 00 00 00"}},
		{name: "truncated", bin: []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00, 0x01, 0x64, 0x01},
			wantSub: []string{"section 1 at offset 0x8: size 100 runs past the end of the file"}},
		{name: "instrument", bin: tryModule,
			wantSub: []string{"cannot instrument it for deadline enforcement", "unsupported opcode 0x06", "rebuild it"}},
		{name: "forbidden_wasi",
			wantSub: []string{"forbidden import wasi_snapshot_preview1.path_open",
				"no filesystem, network or environment", "remove the dependency"}, kind: ErrForbiddenImport},
		{name: "forbidden_env",
			wantSub: []string{"forbidden imports env.socket, env.secret (global)", "no filesystem, network or environment"}, kind: ErrForbiddenImport},
		{name: "badimportsig",
			wantSub: []string{"import wasi_snapshot_preview1.fd_write has signature (i32) -> (i32), " +
				"the sandbox provides (i32, i32, i32, i32) -> (i32)"}, kind: ErrABIMismatch},
		{name: "abi2",
			wantSub: []string{"speaks ABI 2.0, this host speaks 1.x: rebuild it with the current guest SDK"}, kind: ErrABIMismatch},
		{name: "nobuffer",
			wantSub: []string{"missing required export wasmsched_buffer", "build it with the guest SDK"}, kind: ErrABIMismatch},
		{name: "badsig",
			wantSub: []string{
				"export wasmsched_buffer has signature (i64) -> (i32), the contract requires (i32) -> (i32)",
				"export wasmsched_queue_sort_less has signature (i32) -> (i32), the contract requires (i32, i32) -> (i32)",
				"rebuild it with the current guest SDK"}, kind: ErrABIMismatch},
		{name: "nomemory",
			wantSub: []string{`missing required export "memory"`}},
		{name: "bigmem",
			wantSub: []string{"initial memory of 300 pages (19200 KiB) is above the limit of 256 pages", "raise the module's memory limit"}, kind: ErrTooLarge},
		{name: "maxmem",
			wantSub: []string{"declares a maximum memory of 1000 pages, above the limit of 256 pages"}, kind: ErrTooLarge},
		{name: "start",
			wantSub: []string{"has a start function", "-buildmode=c-shared"}},
		{name: "valid-bad-limits", bin: fixture(t, "valid"),
			limits:  func(l *Limits) { l.MemoryPages = 40000; l.Deadline = 0 },
			wantSub: []string{"invalid limits", "memory limit 40000 pages out of range: set 1 to 32768", "deadline 0s"}},
	}
	rt, _ := newTestRuntime(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := tt.bin
			if bin == nil {
				bin = fixture(t, tt.name)
			}
			limits := DefaultLimits()
			if tt.limits != nil {
				tt.limits(&limits)
			}
			m, err := rt.Load(context.Background(), tt.name, bin, limits)
			if err == nil {
				m.Close(context.Background())
				t.Fatalf("Load succeeded, want an error containing %q", tt.wantSub)
			}
			for _, k := range []error{ErrForbiddenImport, ErrABIMismatch, ErrTooLarge} {
				if got, want := errors.Is(err, k), k == tt.kind; got != want {
					t.Errorf("errors.Is(err, %v) = %v, want %v", k, got, want)
				}
			}
			msg := err.Error()
			for _, sub := range append([]string{`load module "` + tt.name + `": `}, tt.wantSub...) {
				if !strings.Contains(msg, sub) {
					t.Errorf("Load error = %q\nwant it to contain %q", msg, sub)
				}
			}
		})
	}
}

// A module that loads is described by its accessors.
func TestLoadValid(t *testing.T) {
	rt, _ := newTestRuntime(t)
	bin := fixture(t, "valid")
	m := load(t, rt, "valid", testLimits())

	type description struct {
		Name               string
		Major, Minor       uint16
		Imports, Exports   []string
		MinPages, MaxPages uint32
		HasMax             bool
		SHA256             [32]byte
		HasExport          map[string]bool
		HasFunc            map[FuncID]bool
		Stats              Stats
	}
	got := description{Name: m.Name(), Imports: m.Imports(), Exports: m.Exports(), SHA256: m.SHA256(),
		HasExport: map[string]bool{}, HasFunc: map[FuncID]bool{}, Stats: m.Stats()}
	got.Major, got.Minor = m.ABIVersion()
	got.MinPages, got.MaxPages, got.HasMax = m.MemoryPages()
	for _, name := range []string{"memory", "wasmsched_queue_sort_less", "wasmsched_pre_enqueue", interruptExport} {
		got.HasExport[name] = m.HasExport(name)
	}
	for _, f := range []FuncID{FuncQueueSortLess, FuncQueueSortKey, FuncPreEnqueue, numFuncs} {
		got.HasFunc[f] = m.HasFunc(f)
	}
	want := description{
		Name: "valid", Major: 1, Minor: 0,
		Imports: []string{},
		Exports: []string{"_initialize", "memory", "wasmsched_abi_version", "wasmsched_backoff_may_pop",
			"wasmsched_buffer", "wasmsched_last_error", "wasmsched_queue_sort_key", "wasmsched_queue_sort_less"},
		MinPages: 1,
		SHA256:   sha256.Sum256(bin),
		HasExport: map[string]bool{"memory": true, "wasmsched_queue_sort_less": true,
			"wasmsched_pre_enqueue": false, interruptExport: false},
		HasFunc: map[FuncID]bool{FuncQueueSortLess: true, FuncQueueSortKey: true, FuncPreEnqueue: false, numFuncs: false},
		// Load keeps the instance it probed the version with.
		Stats: Stats{Live: 1, Free: 1, Instantiated: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("module description mismatch (-want, +got):\n%s", diff)
	}
}

// Unknown exports with the contract prefix load, and are logged once.
func TestLoadUnknownExportLogged(t *testing.T) {
	rt, rec := newTestRuntime(t)
	load(t, rt, "unknown", testLimits())
	var got []logLine
	for _, l := range rec.lines() {
		if strings.Contains(l.Msg, "does not know") {
			got = append(got, l)
		}
	}
	if len(got) != 1 {
		t.Fatalf("got %d log lines about unknown exports, want 1: %+v", len(got), rec.lines())
	}
	if got[0].Attrs["module"] != "unknown" || !strings.Contains(got[0].Attrs["exports"], "wasmsched_future_slot") {
		t.Errorf("log line = %+v, want module=unknown and exports naming wasmsched_future_slot", got[0])
	}
}

// Modules with different memory limits get different wazero runtimes; equal
// limits share one.
func TestLoadEnginePerMemoryLimit(t *testing.T) {
	rt, _ := newTestRuntime(t)
	small, big := testLimits(), testLimits()
	small.MemoryPages, big.MemoryPages = 2, 512
	var mods []*Module
	for _, l := range []Limits{small, big, small} {
		m, err := rt.Load(context.Background(), "valid", fixture(t, "valid"), l)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, m)
	}
	a, b, c := mods[0], mods[1], mods[2]
	if a.engine == b.engine || a.engine != c.engine {
		t.Errorf("engines: a==b %v (want false), a==c %v (want true)", a.engine == b.engine, a.engine == c.engine)
	}
}

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		wantErr string
	}{
		{"default", DefaultLimits(), ""},
		{"max memory", Limits{MemoryPages: MaxMemoryPages, Deadline: time.Millisecond}, ""},
		{"no pool", Limits{MemoryPages: 1, Deadline: time.Millisecond, PoolSize: 0}, ""},
		{"zero memory", Limits{MemoryPages: 0, Deadline: time.Millisecond}, "memory limit 0 pages out of range"},
		{"2 GiB+", Limits{MemoryPages: MaxMemoryPages + 1, Deadline: time.Millisecond}, "memory limit 32769 pages out of range"},
		{"negative deadline", Limits{MemoryPages: 1, Deadline: -1}, "deadline -1ns: set a positive duration"},
		{"negative pool", Limits{MemoryPages: 1, Deadline: 1, PoolSize: -1}, "pool size -1: set 0 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limits.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewRuntimeOptions(t *testing.T) {
	if _, err := NewRuntime(context.Background(), WithWatchdogTick(0)); err == nil {
		t.Error("NewRuntime(WithWatchdogTick(0)) succeeded, want an error")
	}
	// A compilation cache directory is created and used.
	dir := t.TempDir()
	rt, _ := newTestRuntime(t, WithCompilationCacheDir(dir))
	load(t, rt, "valid", testLimits())
}

func TestLoadAfterClose(t *testing.T) {
	rt, _ := newTestRuntime(t)
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := rt.Load(context.Background(), "late", fixture(t, "valid"), testLimits())
	if err == nil || !strings.Contains(err.Error(), `load module "late": the runtime is closed`) {
		t.Errorf("Load after Close: %v, want the runtime is closed", err)
	}
}
