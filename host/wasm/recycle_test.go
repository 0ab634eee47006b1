package wasm

import (
	"context"
	"testing"
)

// TestRecycleGrownInstances: an instance released with more than half its
// memory limit is closed instead of pooled, so a guest that only ever grows
// (TinyGo's leaking GC) is replaced between calls and never reaches its limit
// inside one.
func TestRecycleGrownInstances(t *testing.T) {
	rt, _ := newTestRuntime(t)
	limits := testLimits()
	limits.MemoryPages = 8 // recycled above 4 pages
	limits.PoolSize = 2
	m := load(t, rt, "leak", limits)
	for i := 0; i < 40; i++ {
		inst, err := m.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r, err := inst.Call(FuncBackoffMayPop, 0, 0)
		if err != nil {
			t.Fatalf("call %d: %v (an instance reached its memory limit: it was not recycled in time)", i, err)
		}
		if ok, err := inst.Bool(r); err != nil || !ok {
			t.Fatalf("call %d: %v %v", i, ok, err)
		}
		if pages := inst.mem.Size() / 65536; pages > 5 {
			t.Fatalf("call %d ran on an instance of %d pages: it should have been recycled above 4", i, pages)
		}
		m.Release(inst)
	}
	st := m.Stats()
	// Every instance serves 4 calls (1 -> 5 pages) before it is recycled.
	if st.Recycled < 9 || st.Discarded != 0 {
		t.Errorf("after 40 calls: %d recycled, %d discarded; want about 10 recycled and none discarded", st.Recycled, st.Discarded)
	}
	if st.Live > limits.PoolSize {
		t.Errorf("%d live instances, pool size %d: recycled instances leaked", st.Live, limits.PoolSize)
	}
}
