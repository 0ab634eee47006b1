package instrument_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

const irq = "__wasmsched_interrupt"

// stopBound bounds the waits for something that must happen (a guest
// starts, traps once interrupted, a helper process ends): it only catches
// what never happens, not a slow machine.
const stopBound = time.Minute

// features enables what the fixtures use on top of Wasm 2.0.
const features = api.CoreFeaturesV2 | experimental.CoreFeaturesThreads | experimental.CoreFeaturesTailCall

func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func mustInstrument(tb testing.TB, wasm []byte) ([]byte, instrument.Info) {
	tb.Helper()
	out, info, err := instrument.Instrument(wasm, irq)
	if err != nil {
		tb.Fatalf("Instrument: %v", err)
	}
	return out, info
}

// newRuntime returns a compiler runtime without WithCloseOnContextDone: the
// instrumentation is the only way to interrupt a guest.
func newRuntime(tb testing.TB) wazero.Runtime {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(features))
	tb.Cleanup(func() { r.Close(ctx) })
	return r
}

func instantiate(tb testing.TB, r wazero.Runtime, wasm []byte, name string, start ...string) api.Module {
	tb.Helper()
	cfg := wazero.NewModuleConfig().WithName(name).WithStartFunctions(start...)
	mod, err := r.InstantiateWithConfig(context.Background(), wasm, cfg)
	if err != nil {
		tb.Fatalf("instantiate %s: %v", name, err)
	}
	return mod
}

func irqGlobal(tb testing.TB, mod api.Module) api.MutableGlobal {
	tb.Helper()
	g, ok := mod.ExportedGlobal(irq).(api.MutableGlobal)
	if !ok {
		tb.Fatalf("%s does not export a mutable global %q", mod.Name(), irq)
	}
	if g.Type() != api.ValueTypeI32 || g.Get() != 0 {
		tb.Fatalf("interrupt global: type %v value %d, want i32 0", g.Type(), g.Get())
	}
	return g
}

// TestInterrupt starts a guest that never returns, waits until it has passed
// a few thousand interrupt checks, raises the interrupt global from another
// goroutine and expects a trap: "spin" is stopped by the loop-header check,
// "recurse" (no loops) by the function-entry check.
func TestInterrupt(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t)
	started := make(chan struct{}, 1)
	if _, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(context.Context) { started <- struct{}{} }).Export("started").
		Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	bin, info := mustInstrument(t, fixture(t, "spin.wasm"))
	if want := (instrument.Info{GlobalIndex: 0, Functions: 4, Loops: 1, YieldPeriod: instrument.YieldPeriod}); info != want {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	mod := instantiate(t, r, bin, "spin")
	g := irqGlobal(t, mod)
	add := mod.ExportedFunction("add")
	mem := mod.ExportedMemory("memory")

	for _, fn := range []string{"spin", "recurse", "spin"} {
		mem.WriteUint32Le(0, 0)
		done := make(chan error, 1)
		go func() {
			_, err := mod.ExportedFunction(fn).Call(ctx)
			done <- err
		}()
		select {
		case <-started:
		case <-time.After(stopBound):
			t.Fatalf("%s: guest did not start within %v", fn, stopBound)
		}
		if err := waitInside(mem, done); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		raised := time.Now()
		g.Set(1)
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Fatalf("%s: err = %v, want an unreachable trap", fn, err)
			}
			t.Logf("%s: trapped %v after the interrupt", fn, time.Since(raised))
		case <-time.After(stopBound):
			t.Fatalf("%s: not interrupted within %v (the guest keeps spinning)", fn, stopBound)
		}

		// Still raised: every call traps at entry. Lowered: the instance works.
		if _, err := add.Call(ctx, 2, 3); err == nil {
			t.Errorf("add succeeded while the interrupt is raised")
		}
		g.Set(0)
		if res, err := add.Call(ctx, 2, 3); err != nil || res[0] != 5 {
			t.Fatalf("add after the interrupt = %v, %v", res, err)
		}
	}
}

type call struct {
	fn   string
	args []uint64
}

// TestSemanticsPreserved runs the same calls on the plain and the instrumented
// module, in the same order, and compares results and traps.
func TestSemanticsPreserved(t *testing.T) {
	ctx := context.Background()
	f64 := api.EncodeF64
	tests := []struct {
		file  string
		start []string
		info  instrument.Info
		calls []call
	}{{
		file: "compute.wasm",
		info: instrument.Info{Functions: 10, Loops: 8, YieldPeriod: instrument.YieldPeriod},
		calls: []call{
			{"sum", []uint64{0}}, {"sum", []uint64{1}}, {"sum", []uint64{100000}},
			{"nested", []uint64{0}}, {"nested", []uint64{1}}, {"nested", []uint64{37}},
			{"classify", []uint64{0}}, {"classify", []uint64{1}}, {"classify", []uint64{2}},
			{"classify", []uint64{3}}, {"classify", []uint64{4}}, {"classify", []uint64{0xffffffff}},
			{"collatz", []uint64{1}}, {"collatz", []uint64{27}}, {"collatz", []uint64{871}},
			{"fib", []uint64{0}}, {"fib", []uint64{1}}, {"fib", []uint64{10}}, {"fib", []uint64{90}},
			{"primes", []uint64{10}}, {"primes", []uint64{1000}}, {"primes", []uint64{65536}},
			{"primes", []uint64{65537}}, // traps: out of bounds memory.fill
			{"dispatch", []uint64{0, 5}}, {"dispatch", []uint64{1, 5}}, {"dispatch", []uint64{2, 5}},
			{"dispatch", []uint64{1, 0}},
			{"countdown", []uint64{0}}, {"countdown", []uint64{1}}, {"countdown", []uint64{1000}},
		},
	}, {
		file: "features.wasm",
		info: instrument.Info{GlobalIndex: 2, Functions: 10, Loops: 3, YieldPeriod: instrument.YieldPeriod},
		calls: []call{
			{"simd", []uint64{0}}, {"simd", []uint64{1}}, {"simd", []uint64{1000}},
			{"bulk", []uint64{1}}, {"bulk", []uint64{20}},
			{"tailsum", []uint64{0}}, {"tailsum", []uint64{10}}, {"tailsum", []uint64{1000000}},
			{"tailindirect", []uint64{7}},
			{"atomics", []uint64{1}}, {"atomics", []uint64{100}},
			{"numeric", []uint64{f64(3.7)}}, {"numeric", []uint64{f64(-1e30)}}, {"numeric", []uint64{f64(200.5)}},
			{"drop_segments", nil}, {"bulk", []uint64{3}}, // traps: dropped segment
		},
	}, {
		// producers and target_features are dropped, name is kept.
		file:  "tinygo.wasm",
		start: []string{"_initialize"},
		info:  instrument.Info{GlobalIndex: 1, Functions: 37, Loops: 55, DroppedCustomSections: 2, YieldPeriod: instrument.YieldPeriod},
		calls: []call{
			{"sort_keys", []uint64{0, 1}}, {"sort_keys", []uint64{10, 42}}, {"sort_keys", []uint64{5000, 7}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			plainBin := fixture(t, tc.file)
			instBin, info := mustInstrument(t, plainBin)
			if tc.info != (instrument.Info{}) && info != tc.info {
				t.Errorf("info = %+v, want %+v", info, tc.info)
			}
			r := newRuntime(t)
			plain := instantiate(t, r, plainBin, "plain", tc.start...)
			inst := instantiate(t, r, instBin, "instrumented", tc.start...)
			irqGlobal(t, inst)
			for _, c := range tc.calls {
				want, wantErr := plain.ExportedFunction(c.fn).Call(ctx, c.args...)
				got, gotErr := inst.ExportedFunction(c.fn).Call(ctx, c.args...)
				if (wantErr == nil) != (gotErr == nil) || !equalU64(got, want) {
					t.Errorf("%s%v: instrumented %v, %v; plain %v, %v", c.fn, c.args, got, gotErr, want, wantErr)
				}
			}
		})
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCompileFixtures instruments every committed module and compiles it.
func TestCompileFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.wasm"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	r := newRuntime(t)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			out, info := mustInstrument(t, fixture(t, filepath.Base(p)))
			if err := compileWithin(t, r, out); err != nil {
				t.Fatalf("compile instrumented module: %v", err)
			}
			t.Logf("%+v", info)
		})
	}
}

// TestGlobalIndex checks the index of the new global when globals are imported
// and when the module has neither a global nor an export section.
func TestGlobalIndex(t *testing.T) {
	ctx := context.Background()

	t.Run("imported globals", func(t *testing.T) {
		r := newRuntime(t)
		instantiate(t, r, fixture(t, "env.wasm"), "env")
		bin, info := mustInstrument(t, fixture(t, "imports.wasm"))
		if info.GlobalIndex != 3 {
			t.Errorf("GlobalIndex = %d, want 3 (2 imported + 1 defined)", info.GlobalIndex)
		}
		mod := instantiate(t, r, bin, "imports")
		g := irqGlobal(t, mod)
		get := mod.ExportedFunction("get")
		if res, err := get.Call(ctx); err != nil || res[0] != 24 {
			t.Fatalf("get = %v, %v; want 24", res, err)
		}
		g.Set(1)
		if _, err := get.Call(ctx); err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("get with the interrupt raised: err = %v", err)
		}
		g.Set(0)
		if res, err := get.Call(ctx); err != nil || res[0] != 24 {
			t.Fatalf("get = %v, %v; want 24", res, err)
		}
	})

	t.Run("no global or export section", func(t *testing.T) {
		r := newRuntime(t)
		hooked := 0
		if _, err := r.NewHostModuleBuilder("host").NewFunctionBuilder().
			WithFunc(func(context.Context) { hooked++ }).Export("hook").Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
		// (import "host" "hook" (func)) (func $start call 0 (loop)) (start $start)
		in := module(sec(secType, vec(voidTyp)),
			sec(secImport, vec(cat(name("host"), name("hook"), []byte{0x00, 0x00}))),
			sec(secFunction, vec(u32(0))), sec(secStart, u32(1)),
			sec(secCode, vec(body(nil, []byte{0x10, 0x00}, loopE, end, end))))
		bin, info := mustInstrument(t, in)
		if want := (instrument.Info{GlobalIndex: 0, Functions: 1, Loops: 1}); info != want {
			t.Errorf("info = %+v, want %+v", info, want)
		}
		mod := instantiate(t, r, bin, "bare")
		irqGlobal(t, mod)
		if hooked != 1 {
			t.Errorf("start function ran %d times, want 1", hooked)
		}
	})
}

// TestGoWasip1Module instruments a module built by the Go toolchain
// (GOOS=wasip1, c-shared, ~2.6 MB): broad opcode coverage from a real
// compiler. It is built into a temporary directory, never committed. Without
// a Go toolchain, or when the build fails, it is skipped locally and fails
// under CI=true.
func TestGoWasip1Module(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go wasip1 module")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		skipUnlessCI(t, "go toolchain not on PATH: install Go (go.dev/dl) to build the wasip1 module")
	}
	dir := t.TempDir()
	src := `package main

import (
	"fmt"
	"sort"
	"strings"
)

//go:wasmexport work
func work(n int32) int32 {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i * 7 % 13)
	}
	sort.Strings(s)
	return int32(len(strings.Join(s, ",")))
}

func main() {}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module gowasm\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := filepath.Join(dir, "go.wasm")
	cmd := exec.CommandContext(ctx, goBin, "build", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		skipUnlessCI(t, fmt.Sprintf("cannot build the Go wasip1 module within 20s: %v (a Go toolchain with GOOS=wasip1 support is needed)\n%s", err, msg))
	}
	plainBin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	instBin, info := mustInstrument(t, plainBin)
	t.Logf("%d bytes -> %d bytes, %+v", len(plainBin), len(instBin), info)
	if info.Functions < 1000 || info.Loops < 100 {
		t.Errorf("suspiciously few functions or loops: %+v", info)
	}

	// The interpreter validates like the compiler and is ~10x faster to
	// compile a module of this size; the compiler runs too unless -race makes
	// it take ~17s.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	plain := instantiate(t, r, plainBin, "plain", "_initialize")
	inst := instantiate(t, r, instBin, "instrumented", "_initialize")
	irqGlobal(t, inst)
	for _, n := range []uint64{0, 1, 300} {
		want, wantErr := plain.ExportedFunction("work").Call(ctx, n)
		got, gotErr := inst.ExportedFunction("work").Call(ctx, n)
		if wantErr != nil || gotErr != nil || !equalU64(got, want) {
			t.Errorf("work(%d): instrumented %v, %v; plain %v, %v", n, got, gotErr, want, wantErr)
		}
	}
	if raceEnabled {
		t.Log("not compiling with the optimizing compiler under -race")
		return
	}
	if _, err := newRuntime(t).CompileModule(ctx, instBin); err != nil {
		t.Fatalf("compile instrumented module: %v", err)
	}
}

// skipUnlessCI skips the test for a missing tool or a failed build, and
// fails it under CI=true, where a skip would hide that the test never ran.
func skipUnlessCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " (CI=true: not skipped)")
	}
	t.Skip(why)
}
