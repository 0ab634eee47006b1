package instrument_test

import (
	"context"
	"testing"
)

// BenchmarkInstrumentedLoop records the per-iteration cost of the loop-header
// check: compute.wasm's countdown runs iters additions per call.
func BenchmarkInstrumentedLoop(b *testing.B) {
	const iters = 1000
	benchCall(b, "countdown", iters, iters)
}

// BenchmarkInstrumentedCall records the per-call cost of the function-entry
// check on a call that does almost nothing.
func BenchmarkInstrumentedCall(b *testing.B) {
	benchCall(b, "countdown", 1, 1)
}

func benchCall(b *testing.B, fn string, arg uint64, iters int) {
	ctx := context.Background()
	plainBin := fixture(b, "compute.wasm")
	instBin, _ := mustInstrument(b, plainBin)
	r := newRuntime(b)
	for _, v := range []struct {
		name string
		bin  []byte
	}{{"plain", plainBin}, {"instrumented", instBin}} {
		f := instantiate(b, r, v.bin, v.name).ExportedFunction(fn)
		b.Run(v.name, func(b *testing.B) {
			stack := make([]uint64, 1)
			b.ReportAllocs()
			for b.Loop() {
				stack[0] = arg
				if err := f.CallWithStack(ctx, stack); err != nil {
					b.Fatal(err)
				}
			}
			if iters > 1 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(iters), "ns/iter")
			}
		})
	}
}

// BenchmarkMemoryGrow0 records the cost of one exit to Go through
// `memory.grow 0`, the yield Instrument emits every YieldPeriod checks: the
// same plain loop with and without it in its body.
func BenchmarkMemoryGrow0(b *testing.B) {
	const iters = 1000
	i32 := []byte{0x7f}
	loop := func(extra ...byte) []byte {
		return body([][]byte{cat(u32(1), i32)}, loopE, extra,
			[]byte{0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01},             // acc += n
			[]byte{0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00}, // br_if 0 (n = n-1)
			end, []byte{0x20, 0x01}, end)
	}
	bin := module(sec(secType, vec(funcType(i32, i32))), sec(secFunction, vec(u32(0), u32(0))),
		sec(secMemory, vec([]byte{0x00, 0x01})),
		sec(secExport, vec(cat(name("without"), []byte{0x00}, u32(0)), cat(name("with"), []byte{0x00}, u32(1)))),
		sec(secCode, vec(loop(), loop(0x41, 0x00, 0x40, 0x00, 0x1a))))
	mod := instantiate(b, newRuntime(b), bin, "grow0")
	for _, fn := range []string{"without", "with"} {
		f := mod.ExportedFunction(fn)
		b.Run(fn, func(b *testing.B) {
			stack := make([]uint64, 1)
			for b.Loop() {
				stack[0] = iters
				if err := f.CallWithStack(context.Background(), stack); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(iters), "ns/iter")
		})
	}
}
