package wasm

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// Go cannot preempt a goroutine that runs wazero-compiled code: its signal
// handler finds no Go function at the interrupted PC. So a guest that spins
// without ever returning to Go holds off every stop-the-world (a GC, a
// runtime.ReadMemStats) for as long as it spins, and the watchdog that would
// interrupt it is itself stopped by that stop-the-world: the whole process
// deadlocks. Not only a stop-the-world: the end of every GC cycle waits for
// each P to reach a safe point (forEachP) while holding its own P, and when
// as many guests spin as there are Ps the watchdog gets no P at all.
// Instrumented checks must therefore also exit to Go now and then
// (yieldspin.wat shows the shape: memory.grow 0 every 4096 iterations), which
// lets Go preempt the guest.
//
// Until they do, the tests that run a spinning guest stop the GC first, and
// TestSpinDuringGC reports the deadlock.

// noGC disables the garbage collector until the test ends, so that no GC
// phase can wait on a spinning guest (see above). SetGCPercent returns once
// the current cycle's marking is done; the short sleep lets the rest of the
// cycle (flushing every P's caches) finish before a guest starts to spin.
func noGC(t testing.TB) {
	t.Helper()
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	time.Sleep(20 * time.Millisecond)
}

const stwHelperEnv = "WASMSCHED_STW_HELPER_FIXTURE"

// TestSpinDuringGC starts a GC while a guest spins, in a subprocess because a
// deadlock stops every goroutine of the process, the test timeout's included.
func TestSpinDuringGC(t *testing.T) {
	if os.Getenv(stwHelperEnv) != "" {
		t.Skip("running as the helper")
	}
	tests := []struct {
		fixture  string
		knownBug bool // the stock instrumented loop: deadlocks until instrument yields
	}{
		{fixture: "yieldspin"},
		{fixture: "spin", knownBug: true},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSpinDuringGCHelper$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), stwHelperEnv+"="+tt.fixture)
			out, err := cmd.CombinedOutput()
			switch {
			case ctx.Err() != nil && tt.knownBug:
				t.Skipf("KNOWN BLOCKER: a GC that starts while an instrumented guest spins deadlocks the process "+
					"(instrumented loops never exit to Go, so Go cannot stop the spinning goroutine, and the "+
					"watchdog is stopped by the same stop-the-world). Fix: instrument must also exit to Go "+
					"periodically, as testdata/yieldspin.wat does. Helper output:\n%s", out)
			case ctx.Err() != nil:
				t.Fatalf("deadlock: the helper did not finish within 5s; output:\n%s", out)
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
	m := load(t, rt, fixtureName, testLimits())
	inst := acquire(t, m)
	done := make(chan error, 1)
	go func() {
		_, err := inst.Call(FuncQueueSortLess, 0, 0)
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

// With guests that return to Go now and then, the watchdog stops them even
// when every P runs one, and without stopping the GC.
func TestAllPsSpinning(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "yieldspin", testLimits())
	n := runtime.GOMAXPROCS(0)
	for range 3 {
		done := make(chan error, n)
		for range n {
			inst := acquire(t, m)
			go func() {
				_, err := inst.Call(FuncQueueSortLess, 0, 0)
				m.Release(inst)
				done <- err
			}()
		}
		for range n {
			if err := <-done; KindOf(err) != KindDeadline {
				t.Errorf("call = %v, want a deadline error", err)
			}
		}
	}
}
