package instrument_test

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// FuzzInstrument: Instrument never panics and is deterministic; whatever it
// accepts, wazero compiles without allocating more than allocLimit (the
// input as well as the output: Instrument's checks cover both); and whenever
// wazero compiles the input, it compiles the output too.
func FuzzInstrument(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.wasm"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		f.Add(fixture(f, filepath.Base(p)))
	}
	ops, _ := pieces(allOpcodes(), 0)
	f.Add(module())
	f.Add(module(sec(secType, vec(voidTyp)), sec(secFunction, vec(u32(0))), sec(secCode, vec(body(nil, ops, end)))))
	f.Add(module(sec(secType, vec(voidTyp)), sec(secFunction, vec(u32(0))),
		sec(secCode, vec(body(nil, loopE, blockE, loopE, []byte{0x0c, 0x01}, end, end, end, end)))))
	f.Add(allForms())
	f.Add(nameSecModule())
	// At the limits: 50000 locals, 1000 params and 1000 results.
	f.Add(module(sec(secType, vec(funcType(rep(0x7f, 1000), rep(0x7e, 1000)))), sec(secFunction, vec(u32(0))),
		sec(secCode, vec(body([][]byte{cat(u32(50000), []byte{0x7f})}, []byte{0x00}, end)))))

	ctx := context.Background()
	// Configured like the host's runtime (host/wasm), with the features the
	// fixtures use.
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCoreFeatures(features).WithDebugInfoEnabled(false))
	f.Cleanup(func() { r.Close(ctx) })

	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out, info, err := instrument.Instrument(in, irq)
		if !bytes.Equal(in, orig) {
			t.Fatal("Instrument modified its input")
		}
		if err != nil {
			if out != nil {
				t.Fatal("output returned with an error")
			}
			return
		}
		again, info2, err := instrument.Instrument(in, irq)
		if err != nil || !bytes.Equal(out, again) || info != info2 {
			t.Fatalf("not deterministic (err %v)", err)
		}
		plainErr := compileWithin(t, r, in)
		if err := compileWithin(t, r, out); err != nil && plainErr == nil {
			t.Fatalf("wazero compiles the input but not the output: %v (%+v)", err, info)
		}
	})
}

// allocLimit is how much compiling a module of n bytes may allocate: the
// compiler's fixed working set plus a generous 1000 bytes per byte of input.
func allocLimit(n int) uint64 { return 64<<20 + 1000*uint64(n) }

// compileWithin compiles bin with r, fails t if that allocated more than
// allocLimit, and returns the compile error. An allocation large enough to
// exhaust memory crashes the fuzz worker instead, which the fuzzer reports
// too.
func compileWithin(t *testing.T, r wazero.Runtime, bin []byte) error {
	t.Helper()
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := r.CompileModule(ctx, bin)
	runtime.ReadMemStats(&after)
	if c != nil {
		c.Close(ctx)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > allocLimit(len(bin)) {
		t.Fatalf("compiling a %d-byte module allocated %d bytes, above the limit of %d", len(bin), n, allocLimit(len(bin)))
	}
	return err
}
