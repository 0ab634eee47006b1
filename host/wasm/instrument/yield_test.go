package instrument_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// countdownModule has a memory and three functions:
//
//	run(n) loops n times (n >= 1) and returns n+(n-1)+...+1
//	counter() returns global 1, which is Instrument's countdown global (the
//	  module defines no global, so the interrupt global is 0): the plain
//	  module does not validate, the instrumented one reads the counter
//	size() returns memory.size
//
// Every call runs one function-entry check; run(n) also runs n loop-header
// checks.
func countdownModule() []byte {
	i32 := []byte{0x7f}
	return module(
		sec(secType, vec(funcType(nil, i32), funcType(i32, i32))),
		sec(secFunction, vec(u32(1), u32(0), u32(0))),
		sec(secMemory, vec([]byte{0x00, 0x01})),
		sec(secExport, vec(cat(name("run"), []byte{0x00}, u32(0)), cat(name("counter"), []byte{0x00}, u32(1)),
			cat(name("size"), []byte{0x00}, u32(2)), cat(name("memory"), []byte{0x02}, u32(0)))),
		sec(secCode, vec(
			body([][]byte{cat(u32(1), i32)}, loopE,
				[]byte{0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01},             // acc += n
				[]byte{0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00}, // br_if 0 (n = n-1)
				end, []byte{0x20, 0x01}, end),
			body(nil, []byte{0x23, 0x01}, end),
			body(nil, []byte{0x3f, 0x00}, end),
		)))
}

// TestYieldCountdown runs the countdown and checks it against a model: the
// counter starts at YieldPeriod, every check decrements it, and a check that
// brings it to 0 resets it to YieldPeriod (and runs memory.grow 0). Results
// and the memory size must not change, however many yields ran.
func TestYieldCountdown(t *testing.T) {
	const P = instrument.YieldPeriod
	ctx := context.Background()
	bin, info := mustInstrument(t, countdownModule())
	if want := (instrument.Info{GlobalIndex: 0, Functions: 3, Loops: 1, YieldPeriod: P}); info != want {
		t.Fatalf("info = %+v, want %+v", info, want)
	}
	mod := instantiate(t, newRuntime(t), bin, "countdown")
	irqGlobal(t, mod)

	counter, yields := uint64(P), 0
	checks := func(n int) {
		for range n {
			if counter--; counter == 0 {
				counter = P
				yields++
			}
		}
	}
	call := func(fn string, args ...uint64) uint64 {
		t.Helper()
		res, err := mod.ExportedFunction(fn).Call(ctx, args...)
		if err != nil {
			t.Fatalf("%s%v: %v", fn, args, err)
		}
		return res[0]
	}
	readCounter := func(when string) {
		t.Helper()
		checks(1)
		if got := call("counter"); got != counter {
			t.Fatalf("%s: counter = %d, want %d", when, got, counter)
		}
	}

	readCounter("fresh instance")
	for _, n := range []uint64{3*P + 5, 1, P - 3, P, 2, 1, 7*P + 1} {
		if got, want := call("run", n), n*(n+1)/2&0xffffffff; got != want {
			t.Errorf("run(%d) = %d, want %d", n, got, want)
		}
		checks(int(n) + 1)
		readCounter(fmt.Sprintf("after run(%d)", n))
		checks(1)
		if got := call("size"); got != 1 {
			t.Errorf("after run(%d): memory.size = %d pages, want 1", n, got)
		}
		if got := mod.ExportedMemory("memory").Size(); got != 65536 {
			t.Errorf("after run(%d): memory is %d bytes, want 65536", n, got)
		}
	}
	if yields < 11 {
		t.Errorf("only %d yields modeled: the calls do not cover enough periods", yields)
	}
	t.Logf("%d yields", yields)
}

const gcHelperEnv = "INSTRUMENT_GC_HELPER"

// insideCount is how many interrupt checks a spin.wasm guest must have
// passed (its count at address 0) to be well inside its loop or recursion:
// through several yields (every instrument.YieldPeriod checks).
const insideCount = 4 * instrument.YieldPeriod

// waitInside waits until the spin.wasm guest whose memory is mem has passed
// insideCount interrupt checks, which it does in microseconds when it runs.
// done receives the errors of the spinning calls: none may return first.
// After stopBound it gives up: the guest is not running.
func waitInside(mem api.Memory, done <-chan error) error {
	bound := time.After(stopBound)
	for {
		if n, _ := mem.ReadUint32Le(0); n >= insideCount {
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("a guest returned before the interrupt: %v", err)
		case <-bound:
			n, _ := mem.ReadUint32Le(0)
			return fmt.Errorf("a guest passed %d of %d checks in %v: it is not running", n, insideCount, stopBound)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestYieldDuringGC runs GCs while every P runs a spinning instrumented
// guest, then interrupts the guests. Without the yields the first GC waits
// forever for the spinning goroutines, which Go cannot preempt in machine
// code, and the whole process deadlocks, so the work runs in a subprocess
// that is killed after a timeout.
func TestYieldDuringGC(t *testing.T) {
	if os.Getenv(gcHelperEnv) != "" {
		t.Skip("running as the helper")
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestYieldDuringGCHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), gcHelperEnv+"=1")
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("deadlock: the helper did not finish within %v; output:\n%s", stopBound, out)
	case err != nil:
		t.Fatalf("helper failed: %v; output:\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "yield_test.go") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

func TestYieldDuringGCHelper(t *testing.T) {
	if os.Getenv(gcHelperEnv) == "" {
		t.Skip("run by TestYieldDuringGC")
	}
	ctx := context.Background()
	r := newRuntime(t)
	started := make(chan struct{}, 64)
	if _, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func(context.Context) { started <- struct{}{} }).Export("started").
		Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	bin, info := mustInstrument(t, fixture(t, "spin.wasm"))
	if info.YieldPeriod == 0 {
		t.Fatalf("spin.wasm instrumented without yields: %+v", info)
	}
	// No guest, one guest (a stop-the-world waits for it to yield), and a
	// guest on every P (the GC also waits for the scheduler to preempt one,
	// which sysmon does after 10ms as with any CPU-bound goroutine).
	for _, n := range []int{0, 1, runtime.GOMAXPROCS(0)} {
		globals := make([]api.MutableGlobal, n)
		mems := make([]api.Memory, n)
		done := make(chan error, n)
		for i := range n {
			mod := instantiate(t, r, bin, fmt.Sprintf("spin%d-%d", n, i))
			globals[i], mems[i] = irqGlobal(t, mod), mod.ExportedMemory("memory")
			go func() {
				_, err := mod.ExportedFunction("spin").Call(ctx)
				done <- err
			}()
		}
		for range n {
			<-started
		}
		for _, mem := range mems {
			if err := waitInside(mem, done); err != nil {
				t.Fatal(err)
			}
		}

		const gcs = 20
		var total, worst time.Duration
		for range gcs {
			start := time.Now()
			runtime.GC()
			d := time.Since(start)
			total += d
			worst = max(worst, d)
		}
		t.Logf("runtime.GC() with %d spinning guest(s) on %d Ps (period %d): mean %v, worst %v",
			n, runtime.GOMAXPROCS(0), info.YieldPeriod, total/gcs, worst)

		raised := time.Now()
		for _, g := range globals {
			g.Set(1)
		}
		for range n {
			if err := <-done; err == nil || !strings.Contains(err.Error(), "unreachable") {
				t.Errorf("spin: err = %v, want an unreachable trap", err)
			}
		}
		if n > 0 {
			t.Logf("all %d guest(s) trapped %v after the interrupt", n, time.Since(raised))
		}
	}
}
