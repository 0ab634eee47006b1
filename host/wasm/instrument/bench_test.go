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
