package wasm

import (
	"context"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/wasmsched/wasmsched/abi"
)

// BenchmarkCall measures the hot paths: a scalar call (a heap comparison) and
// a sort-key round trip (Input, Call, Output). Both must report 0 allocs/op.
func BenchmarkCall(b *testing.B) {
	rt, _ := newTestRuntime(b)
	// A long deadline: deadlines are wall-clock, and on a loaded machine a
	// goroutine descheduled inside a call would otherwise be interrupted.
	limits := testLimits()
	limits.Deadline = time.Minute
	m := load(b, rt, "valid", limits)
	inst := acquire(b, m)
	defer m.Release(inst)
	key := []byte("0123456789abcdef")

	b.Run("less", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := inst.Call(FuncQueueSortLess, uint64(i), 7); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("input+key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, err := inst.Input(len(key))
			if err != nil {
				b.Fatal(err)
			}
			copy(in, key)
			r, err := inst.Call(FuncQueueSortKey, uint64(len(key)), 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := inst.Output(abi.Result(r)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acquire+release", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			i, err := m.Acquire(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			m.Release(i)
		}
	})
}

// The hot paths do not allocate (the benchmark reports it; this enforces it).
func TestCallDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "valid", testLimits())
	inst := acquire(t, m)
	defer m.Release(inst)
	key := []byte("0123456789abcdef")
	allocs := testing.AllocsPerRun(1000, func() {
		in, _ := inst.Input(len(key))
		copy(in, key)
		r, _ := inst.Call(FuncQueueSortKey, uint64(len(key)), 0)
		_, _ = inst.Output(abi.Result(r))
		_, _ = inst.Call(FuncQueueSortLess, 1, 2)
		i, _ := m.Acquire(context.Background())
		m.Release(i)
	})
	if allocs != 0 {
		t.Errorf("Input+Call+Output+Call+Acquire+Release allocate %v times per run, want 0", allocs)
	}
}

// BenchmarkCallBaseline is BenchmarkCall/less on bare wazero: the same module
// uninstrumented, called with CallWithStack and no watchdog bookkeeping. The
// difference is what the sandbox's deadline costs per call.
func BenchmarkCallBaseline(b *testing.B) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, fixture(b, "valid"))
	if err != nil {
		b.Fatal(err)
	}
	f := mod.ExportedFunction(abi.ExportQueueSortLess)
	stack := make([]uint64, 2)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		stack[0], stack[1] = uint64(i), 7
		if err := f.CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
	}
}
