package wasm

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// Go cannot preempt a goroutine that runs wazero-compiled code: its signal
// handler finds no Go function at the interrupted PC. So a guest that spins
// without ever returning to Go would hold off every stop-the-world (a GC, a
// runtime.ReadMemStats) for as long as it spins, and the watchdog that would
// interrupt it would itself be stopped by that stop-the-world: the whole
// process would deadlock. Not only a stop-the-world: the end of every GC
// cycle waits for each P to reach a safe point (forEachP) while holding its
// own P, and when as many guests spin as there are Ps the watchdog would get
// no P at all. Package instrument therefore makes every check site count
// down and exit to Go (memory.grow 0) every instrument.YieldPeriod checks,
// where Go can preempt the guest; yieldspin.wat does the same by hand. These
// tests run spinning guests with the GC on.

const stwHelperEnv = "WASMSCHED_STW_HELPER_FIXTURE"

// stwHelperBound is how long TestSpinDuringGC waits for its helper process:
// a deadlock never ends, while a healthy helper (a race-enabled test binary
// starting, compiling a fixture and running a 50 ms call) takes well under a
// second on an idle machine and several on a loaded one. So it only catches
// the deadlock, not a slow machine.
const stwHelperBound = 2 * time.Minute

// TestSpinDuringGC starts a GC while a guest spins, in a subprocess because a
// deadlock stops every goroutine of the process, the test timeout's included.
func TestSpinDuringGC(t *testing.T) {
	if os.Getenv(stwHelperEnv) != "" {
		t.Skip("running as the helper")
	}
	for _, fixture := range []string{"spin", "oddspin", "yieldspin"} {
		t.Run(fixture, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), stwHelperBound)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSpinDuringGCHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), stwHelperEnv+"="+fixture)
			out, err := cmd.CombinedOutput()
			switch {
			case ctx.Err() != nil:
				t.Fatalf("deadlock: the helper did not finish within %v; output:\n%s", stwHelperBound, out)
			case err != nil:
				t.Fatalf("helper failed: %v; output:\n%s", err, out)
			}
		})
	}
}

func TestSpinDuringGCHelper(t *testing.T) {
	fixtureName := os.Getenv(stwHelperEnv)
	if fixtureName == "" {
		t.Skip("run by TestSpinDuringGC")
	}
	rt, _ := newTestRuntime(t)
	m := load(t, rt, fixtureName, spinLimits())
	inst := acquire(t, m)
	done := make(chan error, 1)
	go func() {
		_, err := inst.Call(FuncQueueSortLess, 1, 0) // odd: oddspin spins too
		done <- err
	}()
	for inst.state.Load() <= 0 {
		runtime.Gosched()
	}
	gcDone := make(chan struct{})
	go func() {
		runtime.GC()
		close(gcDone)
	}()
	if err := <-done; KindOf(err) != KindDeadline {
		t.Errorf("call = %v, want a deadline error", err)
	}
	<-gcDone
	m.Release(inst)
}

// Instrumented guests return to Go now and then, so the watchdog stops them
// even when every P runs one, and while the GC runs; never before their
// deadline (the watchdog counts ticks of the monotonic clock from a moment
// after the call began), however late on a loaded machine.
func TestAllPsSpinning(t *testing.T) {
	rt, _ := newTestRuntime(t)
	limits := spinLimits()
	m := load(t, rt, "spin", limits)
	n := runtime.GOMAXPROCS(0)
	stop, gcDone := make(chan struct{}), make(chan struct{})
	go func() { // GCs throughout, each waiting for every spinning guest
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); <-gcDone }()
	type result struct {
		err  error
		took time.Duration
	}
	for range 3 {
		done := make(chan result, n)
		for range n {
			inst := acquire(t, m)
			go func() {
				start := time.Now()
				_, err := inst.Call(FuncQueueSortLess, 0, 0)
				took := time.Since(start)
				m.Release(inst)
				done <- result{err, took}
			}()
		}
		for range n {
			r := <-done
			if KindOf(r.err) != KindDeadline {
				t.Errorf("call = %v, want a deadline error", r.err)
			} else if r.took < limits.Deadline {
				t.Errorf("call interrupted after %v, before its %v deadline", r.took, limits.Deadline)
			}
		}
	}
}
