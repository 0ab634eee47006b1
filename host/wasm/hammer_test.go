package wasm

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
)

// TestHammer runs many goroutines through Acquire, Input, Call, Output and
// Release on one module while the watchdog aborts looping calls on the same
// module, then checks a deterministic end state: every result correct, every
// abort reported, no instance leaked or left watched.
func TestHammer(t *testing.T) {
	const (
		workers    = 8
		iterations = 2000
		aborts     = 5
	)
	if testing.Short() {
		t.Skip("hammer test")
	}
	rt, _ := newTestRuntime(t)
	limits := testLimits()
	limits.Deadline = 20 * time.Millisecond
	limits.PoolSize = workers
	m := load(t, rt, "oddspin", limits)

	var (
		wg       sync.WaitGroup
		spurious atomic.Int64 // calls that should not loop but overran the deadline
	)
	errs := make(chan error, workers+1)
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < iterations; i++ {
				err := hammerOnce(m, uint32(w), uint32(i))
				if KindOf(err) == KindDeadline {
					// Deadlines are wall-clock: on a loaded machine a goroutine
					// descheduled inside a call can overrun one. Count and retry.
					spurious.Add(1)
					i--
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d, iteration %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range aborts {
			inst, err := m.Acquire(context.Background())
			if err != nil {
				errs <- err
				return
			}
			start := time.Now()
			_, err = inst.Call(FuncQueueSortLess, uint64(2*i+1), 0) // odd: loops until aborted
			m.Release(inst)
			t.Logf("looping call %d aborted after %v", i, time.Since(start))
			if KindOf(err) != KindDeadline {
				errs <- fmt.Errorf("looping call %d = %v, want a deadline error", i, err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	s := m.Stats()
	if s.Live != s.Free || s.Live > limits.PoolSize {
		t.Errorf("Stats = %+v: want every live instance back in the pool, at most %d", s, limits.PoolSize)
	}
	if n := spurious.Load(); n > 0 {
		t.Logf("%d calls overran the deadline without looping (loaded machine?)", n)
	}
	if want := aborts + uint64(spurious.Load()); s.Discarded != want {
		t.Errorf("Stats.Discarded = %d, want %d (one per aborted call)", s.Discarded, want)
	}
	// The rest of the instances were closed because the pool was full.
	if s.Instantiated < uint64(s.Live)+s.Discarded {
		t.Errorf("Stats = %+v: more instances live or discarded than created", s)
	}
	if n := watchedCount(rt); n != s.Live {
		t.Errorf("watchdog watches %d instances, want the %d live ones", n, s.Live)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Live != 0 || s.Free != 0 {
		t.Errorf("Stats after Close = %+v, want nothing live", s)
	}
	if n := watchedCount(rt); n != 0 {
		t.Errorf("watchdog still watches %d instances after Close", n)
	}
}

// hammerOnce does one full round trip and checks its results.
func hammerOnce(m *Module, w, i uint32) error {
	inst, err := m.Acquire(context.Background())
	if err != nil {
		return err
	}
	defer m.Release(inst)
	in, err := inst.Input(8)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(in, w)
	binary.LittleEndian.PutUint32(in[4:], i)
	r, err := inst.Call(FuncQueueSortKey, 8, 0)
	if err != nil {
		return err
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil {
		return err
	}
	if len(out) != 8 || binary.LittleEndian.Uint32(out) != w || binary.LittleEndian.Uint32(out[4:]) != i {
		return fmt.Errorf("key output %x, want the input (%d, %d)", out, w, i)
	}
	a, b := uint64(2*i), uint64(2*w+i%3) // even a: never loops
	got, err := inst.Call(FuncQueueSortLess, a, b)
	if err != nil {
		return err
	}
	if want := a < b; (got == 1) != want {
		return fmt.Errorf("less(%d, %d) = %d, want %v", a, b, got, want)
	}
	return nil
}
