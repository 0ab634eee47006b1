package wasm

import (
	"strings"
	"testing"
	"time"
)

// TestWatchdogScan runs the watchdog's scans by hand, at chosen ticks, on a
// Runtime whose own watchdog never scans (its fake clock is never stepped):
// a call is interrupted by the first scan more than its deadline in ticks
// after the scan that first saw it, never earlier; at once by a watchdog
// that comes late; never because an earlier call was seen; and an idle
// instance never. This is the deadline's accounting, with no wall clock in
// it; with regular ticks it bounds a call to its deadline plus two ticks.
func TestWatchdogScan(t *testing.T) {
	rt, _, _ := newFakeClockRuntime(t)
	limits := spinLimits()
	ticks := int64(limits.Deadline / rt.tick)
	if got := rt.deadlineTicks(limits.Deadline); got != ticks {
		t.Fatalf("deadlineTicks(%v) = %d with a %v tick, want %d", limits.Deadline, got, rt.tick, ticks)
	}
	spin := load(t, rt, "spin", limits)

	t.Run("spinning call", func(t *testing.T) {
		inst := acquire(t, spin)
		done, seq := startSpin(t, inst)
		const seen = 1000
		for _, now := range []int64{seen, seen + 1, seen + ticks} {
			rt.scan(now)
			if got := inst.state.Load(); got != seq {
				t.Fatalf("after the scan at tick %d (call seen at %d, deadline %d ticks): state %d, want the call (%d) still running",
					now, seen, ticks, got, seq)
			}
		}
		rt.scan(seen + ticks + 1)
		if got := inst.state.Load(); got != stateInterrupted {
			t.Fatalf("after the scan at tick %d (call seen at %d, deadline %d ticks): state %d, want interrupted",
				seen+ticks+1, seen, ticks, got)
		}
		wantDeadline(t, done)
		spin.Release(inst) // once the call returned; after a failure, Runtime.Close stops it
	})

	t.Run("late watchdog", func(t *testing.T) {
		inst := acquire(t, spin)
		done, _ := startSpin(t, inst)
		rt.scan(5000)
		rt.scan(5000 + 10*ticks) // the watchdog was starved of CPU for 10 deadlines
		if got := inst.state.Load(); got != stateInterrupted {
			t.Fatalf("state %d after a late scan, want interrupted at once", got)
		}
		wantDeadline(t, done)
		spin.Release(inst) // once the call returned; after a failure, Runtime.Close stops it
	})

	// The instance is not called: the test sets its state as Call does, so
	// that two calls can follow each other between two scans.
	t.Run("calls in turn", func(t *testing.T) {
		valid := load(t, rt, "valid", testLimits())
		inst := acquire(t, valid)
		defer func() {
			inst.state.Store(stateIdle)
			inst.Discard() // its interrupt global is set
			valid.Release(inst)
		}()
		ticks := inst.deadlineTicks.Load()
		scanWant := func(now, want int64) {
			t.Helper()
			rt.scan(now)
			if got := inst.state.Load(); got != want {
				t.Fatalf("after the scan at tick %d: state %d, want %d", now, got, want)
			}
		}
		scanWant(0, stateIdle)
		scanWant(100*ticks, stateIdle) // idle for 100 deadlines
		inst.state.Store(7)            // call 7 starts
		scanWant(100*ticks+1, 7)       // and is seen
		inst.state.Store(8)            // call 7 returned, call 8 started
		first := 101*ticks + 2
		scanWant(first, 8) // a deadline after call 7 was seen: call 8's first sighting
		scanWant(first+ticks, 8)
		if g := inst.interrupt.Get(); g != 0 {
			t.Fatalf("interrupt global %d before the deadline, want 0", g)
		}
		scanWant(first+ticks+1, stateInterrupted)
		if g := inst.interrupt.Get(); g != 1 {
			t.Errorf("interrupt global %d after the deadline, want 1", g)
		}
	})
}

// Deadlines are rounded up to whole ticks, so that no call is interrupted
// before its deadline, and are at least one tick.
func TestDeadlineTicks(t *testing.T) {
	for _, tt := range []struct {
		tick, deadline time.Duration
		want           int64
	}{
		{time.Millisecond, 50 * time.Millisecond, 50},
		{time.Millisecond, 1500 * time.Microsecond, 2},
		{time.Millisecond, time.Nanosecond, 1},
		{3 * time.Millisecond, 50 * time.Millisecond, 17},
		{3 * time.Millisecond, 51 * time.Millisecond, 17},
	} {
		rt := &Runtime{tick: tt.tick}
		if got := rt.deadlineTicks(tt.deadline); got != tt.want {
			t.Errorf("deadlineTicks(%v) with a %v tick = %d, want %d", tt.deadline, tt.tick, got, tt.want)
		}
	}
}

// startSpin starts a call of the spin fixture on inst and waits until it is
// running; it returns the call's result channel and sequence number.
func startSpin(t *testing.T, inst *Instance) (<-chan error, int64) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := inst.Call(FuncQueueSortLess, 0, 0)
		done <- err
	}()
	bound := time.Now().Add(stopBound)
	for {
		if s := inst.state.Load(); s > 0 {
			return done, s
		}
		if time.Now().After(bound) {
			t.Fatalf("the call did not start within %v", stopBound)
		}
		time.Sleep(time.Millisecond)
	}
}

// wantDeadline waits for an interrupted call to return its deadline error.
func wantDeadline(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if KindOf(err) != KindDeadline || !strings.Contains(err.Error(), "interrupted after running longer than 50ms") {
			t.Errorf("call = %v, want a deadline error", err)
		}
	case <-time.After(stopBound):
		t.Fatalf("the interrupted call still runs after %v", stopBound)
	}
}

// TestWatchdogParks: a watchdog that has seen no call for parkAfter ticks
// parks, and the next call wakes it: a spinning call is still stopped at
// its deadline, never before.
func TestWatchdogParks(t *testing.T) {
	rt, _, clk := newFakeClockRuntime(t)
	spin := load(t, rt, "spin", spinLimits())
	inst := acquire(t, spin)
	for step := 0; !rt.parked.Load(); step++ {
		if step > 100*parkAfter {
			t.Fatalf("the watchdog did not park after %d idle ticks", step)
		}
		clk.Step(rt.tick)
		time.Sleep(100 * time.Microsecond) // leave the watchdog time to scan
	}
	// stepped is the fake clock's advance, which only the test makes: no
	// wall time.
	stepped, err := callStopped(t, clk, inst, FuncQueueSortLess, 0, 0)
	if KindOf(err) != KindDeadline {
		t.Fatalf("spinning call after the watchdog parked: %v, want a deadline error", err)
	}
	if ticks, want := int64(stepped/rt.tick), rt.deadlineTicks(spinDeadline); ticks < want {
		t.Errorf("stopped after %d ticks of the fake clock, before its deadline of %d ticks", ticks, want)
	}
	if rt.parked.Load() {
		t.Error("the watchdog is still parked after a call ran")
	}
}

// TestWatchdogPeriod: the watchdog scans every tenth of the shortest
// deadline it watches (a tick at least), so a spinning call is stopped
// after its deadline and within two such periods of it; an instance whose
// deadline is shorter than the period it finds has the watchdog rescan at
// once, with no tick of the clock, and its calls are stopped as tightly.
func TestWatchdogPeriod(t *testing.T) {
	rt, _, clk := newFakeClockRuntime(t)
	waitPeriod := func(want int64) {
		t.Helper()
		for step := 0; rt.period.Load() != want; step++ {
			if step > 10000 {
				t.Fatalf("scan period %d ticks, want %d", rt.period.Load(), want)
			}
			if step%100 == 99 {
				clk.Step(rt.tick) // a scan may be needed, not a retune
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	slow := load(t, rt, "valid", testLimits()) // generousDeadline: 10 s
	busy := acquire(t, slow)
	defer slow.Release(busy)
	long := periodTicks(rt.deadlineTicks(generousDeadline))
	if long != 1000 {
		t.Fatalf("periodTicks for %v with a %v tick = %d, want 1000", generousDeadline, rt.tick, long)
	}
	waitPeriod(long)

	// No clock step from here to the call: only the retune can shorten it.
	spin := load(t, rt, "spin", spinLimits())
	short := periodTicks(rt.deadlineTicks(spinDeadline))
	if short != 5 {
		t.Fatalf("periodTicks for %v with a %v tick = %d, want 5", spinDeadline, rt.tick, short)
	}
	for step := 0; rt.period.Load() != short; step++ {
		if step > 10000 {
			t.Fatalf("scan period %d ticks after an instance with a %v deadline came, want %d at once", rt.period.Load(), spinDeadline, short)
		}
		time.Sleep(100 * time.Microsecond)
	}
	inst := acquire(t, spin)
	stepped, err := callStopped(t, clk, inst, FuncQueueSortLess, 0, 0)
	if KindOf(err) != KindDeadline {
		t.Fatalf("spinning call: %v, want a deadline error", err)
	}
	// callStopped steps a tick at a time: the call is seen by the first
	// scan, a period at most after it began.
	if lo, hi := spinDeadline, spinDeadline+time.Duration(2*short+1)*rt.tick; stepped < lo || stepped > hi {
		t.Errorf("stopped after %v of the fake clock, want between its deadline %v and %v (two periods of %d ticks more)", stepped, lo, hi, short)
	}
	spin.Release(inst)
}
