package wasm

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
)

func TestCallValid(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "valid", testLimits())
	inst := acquire(t, m)
	defer m.Release(inst)

	for _, tc := range []struct{ a, b, want uint64 }{{1, 2, 1}, {2, 1, 0}, {3, 3, 0}} {
		got, err := inst.Call(FuncQueueSortLess, tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("less(%d, %d) = %d, %v; want %d, nil", tc.a, tc.b, got, err, tc.want)
		}
	}

	// key(n) reverses the input.
	in, err := inst.Input(5)
	if err != nil {
		t.Fatalf("Input(5): %v", err)
	}
	copy(in, "hello")
	r, err := inst.Call(FuncQueueSortKey, 5, 0)
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil || string(out) != "olleh" {
		t.Errorf("key output = %q, %v; want %q, nil", out, err, "olleh")
	}

	// may_pop: the low bit of the first input byte, read as a boolean.
	for _, first := range []byte{2, 3} {
		in, err := inst.Input(1)
		if err != nil {
			t.Fatal(err)
		}
		in[0] = first
		r, err := inst.Call(FuncBackoffMayPop, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inst.Bool(r)
		if want := first&1 == 1; err != nil || got != want {
			t.Errorf("may_pop(first byte %d) = %v, %v; want %v, nil", first, got, err, want)
		}
	}

	// A function the module does not export: a guest error, not a broken instance.
	_, err = inst.Call(FuncVictimOrder, 0, 0)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindGuestError || ce.Code != abi.ErrUnsupported || inst.Broken() {
		t.Errorf("victim_order on a module without it: %v (broken %v), want a guest error with code unsupported", err, inst.Broken())
	}
}

// Input asks the guest for a buffer only when the request outgrows the last
// one, and checks what the guest returns.
func TestInput(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "valid", testLimits())
	inst := acquire(t, m)
	defer m.Release(inst)
	bufferCalls := func() uint32 {
		b, _ := inst.mem.Read(4, 4) // the fixture counts its wasmsched_buffer calls there
		return binary.LittleEndian.Uint32(b)
	}

	var got []uint32
	for _, n := range []int{0, 100, 50, 100, 101, 4096} {
		b, err := inst.Input(n)
		if err != nil || len(b) != n {
			t.Fatalf("Input(%d) = %d bytes, %v", n, len(b), err)
		}
		got = append(got, bufferCalls())
	}
	if diff := cmp.Diff([]uint32{0, 1, 1, 1, 2, 3}, got); diff != "" {
		t.Errorf("wasmsched_buffer calls after each Input (-want, +got):\n%s", diff)
	}

	// The guest refuses 4097 bytes (returns 0): a guest error, instance usable.
	_, err := inst.Input(4097)
	if KindOf(err) != KindGuestError || inst.Broken() {
		t.Fatalf("Input(4097) = %v (broken %v), want a guest error", err, inst.Broken())
	}
	var ce *CallError
	if errors.As(err, &ce); ce.Code != abi.ErrBuffer {
		t.Errorf("Input(4097) code = %v, want %v", ce.Code, abi.ErrBuffer)
	}
	if b, err := inst.Input(10); err != nil || len(b) != 10 {
		t.Errorf("Input(10) after a refusal = %d bytes, %v", len(b), err)
	}

	// A buffer that does not fit in guest memory breaks the instance.
	bad := load(t, rt, "badptr", testLimits())
	bi := acquire(t, bad)
	defer bad.Release(bi)
	if _, err := bi.Input(6); err != nil {
		t.Fatalf("badptr Input(6) = %v, want success (65530+6 fits)", err)
	}
	_, err = bi.Input(16)
	if KindOf(err) != KindBadOutput || !bi.Broken() || !strings.Contains(err.Error(), "outside guest memory") {
		t.Errorf("badptr Input(16) = %v (broken %v), want a broken instance and a bad output error", err, bi.Broken())
	}
}

// Output checks bounds and turns negative results into guest errors carrying
// the guest's code and message.
func TestOutput(t *testing.T) {
	rt, _ := newTestRuntime(t)
	tests := []struct {
		name       string
		module     string
		fn         FuncID
		boolean    bool
		wantKind   ErrorKind
		wantCode   abi.ErrCode
		wantMsg    string // exact guest message, for guest errors
		wantSub    string // in the error text
		wantBroken bool
	}{
		{name: "pointer outside memory", module: "badptr", fn: FuncQueueSortKey,
			wantKind: KindBadOutput, wantSub: "result [0x7fff0000, +16) is outside guest memory (65536 bytes)", wantBroken: true},
		{name: "straddles the end", module: "badptr", fn: FuncPreEnqueue,
			wantKind: KindBadOutput, wantSub: "result [0xfffa, +16) is outside", wantBroken: true},
		{name: "length beyond memory", module: "badptr", fn: FuncVictimOrder,
			wantKind: KindBadOutput, wantSub: "result [0x0, +4294967295) is outside", wantBroken: true},
		{name: "boolean neither 0 nor 1", module: "badptr", fn: FuncBackoffMayPop, boolean: true,
			wantKind: KindBadOutput, wantSub: "boolean result 7 is neither 0 nor 1", wantBroken: true},
		{name: "policy error", module: "guesterr", fn: FuncPreEnqueue,
			wantKind: KindGuestError, wantCode: abi.ErrPolicy, wantMsg: "quota exceeded for team-a",
			wantSub: `module "guesterr": wasmsched_pre_enqueue: guest_error 2 (policy): quota exceeded for team-a`},
		{name: "long message capped", module: "guesterr", fn: FuncQueueSortKey,
			wantKind: KindGuestError, wantCode: abi.ErrDecode,
			wantMsg: "quota exceeded for team-a" + strings.Repeat("\x00", abi.MaxReasonLen-25)},
		{name: "boolean error, invalid UTF-8", module: "guesterr", fn: FuncBackoffMayPop, boolean: true,
			wantKind: KindGuestError, wantCode: abi.ErrUnsupported, wantMsg: "\uFFFD bad utf-8"},
		{name: "message outside memory", module: "guesterr", fn: FuncVictimOrder,
			wantKind: KindGuestError, wantCode: abi.ErrPolicy,
			wantMsg: "(no message: wasmsched_last_error returned [0x7fff0000, +16), outside guest memory)"},
	}
	mods := map[string]*Module{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mods[tt.module]
			if m == nil {
				m = load(t, rt, tt.module, testLimits())
				mods[tt.module] = m
			}
			inst := acquire(t, m)
			defer m.Release(inst)
			r, err := inst.Call(tt.fn, 0, 0)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if tt.boolean {
				_, err = inst.Bool(r)
			} else {
				_, err = inst.Output(abi.Result(r))
			}
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want a *CallError", err)
			}
			got := struct {
				Module, Function string
				Kind             ErrorKind
				Code             abi.ErrCode
				Broken           bool
			}{ce.Module, ce.Function, ce.Kind, ce.Code, inst.Broken()}
			want := got
			want.Module, want.Function, want.Kind, want.Code, want.Broken = tt.module, tt.fn.Export(), tt.wantKind, tt.wantCode, tt.wantBroken
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CallError mismatch (-want, +got):\n%s", diff)
			}
			if tt.wantMsg != "" {
				var msg GuestMessage
				if !errors.As(err, &msg) || string(msg) != tt.wantMsg {
					t.Errorf("guest message = %q, want %q", msg, tt.wantMsg)
				}
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("error = %q, want it to contain %q", err, tt.wantSub)
			}
			if !errors.Is(err, tt.wantKind.sentinel()) {
				t.Errorf("errors.Is(err, %v) = false", tt.wantKind.sentinel())
			}
		})
	}
}

// Misbehaving calls fail with the right kind, break their instance, and do not
// affect the next instance. The watchdog runs on a fake clock that the test
// steps only while a spinning call runs, so the spinning calls are stopped by
// their deadline, and no other call can be: the others must fail by
// themselves, however slowly (recursing to a stack overflow or growing memory
// a page at a time is slow under the race detector), and the calls after
// them must succeed. The watchdog on the real clock is exercised by
// TestAllPsSpinning and TestSpinDuringGC, and tick by tick by
// TestWatchdogScan.
func TestCallFailures(t *testing.T) {
	tests := []struct {
		module   string
		a        uint64
		wantKind ErrorKind
		wantSub  string
	}{
		{module: "spin", wantKind: KindDeadline, wantSub: "interrupted after running longer than 50ms"},
		{module: "oddspin", a: 7, wantKind: KindDeadline, wantSub: "interrupted after running longer than 50ms"},
		{module: "trap", wantKind: KindTrap, wantSub: "unreachable"},
		{module: "recurse", wantKind: KindTrap, wantSub: "stack overflow"},
		{module: "grow", wantKind: KindTrap, wantSub: "unreachable"},
	}
	rt, _, clk := newFakeClockRuntime(t)
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			limits := spinLimits()
			limits.MemoryPages = 16
			m := load(t, rt, tt.module, limits)
			inst := acquire(t, m)

			var step *testingclock.FakeClock
			if tt.wantKind == KindDeadline {
				step = clk
			}
			ran, err := callStopped(t, step, inst, FuncQueueSortLess, tt.a, 0)
			if KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantSub) {
				t.Fatalf("Call = %v, want kind %v containing %q", err, tt.wantKind, tt.wantSub)
			}
			if !strings.Contains(err.Error(), `module "`+tt.module+`": wasmsched_queue_sort_less: `) {
				t.Errorf("error %q does not name the module and function", err)
			}
			if tt.wantKind == KindDeadline && ran <= limits.Deadline {
				t.Errorf("interrupted after %v of the watchdog's clock, not past its %v deadline", ran, limits.Deadline)
			}
			if tt.module == "grow" {
				if pages := inst.mem.Size() / 65536; pages > limits.MemoryPages {
					t.Errorf("memory grew to %d pages, beyond the limit of %d", pages, limits.MemoryPages)
				} else if pages != limits.MemoryPages {
					t.Errorf("memory grew to %d pages, want it to reach the limit of %d", pages, limits.MemoryPages)
				}
			}
			if !inst.Broken() {
				t.Error("instance not broken after the failure")
			}
			if _, err := inst.Call(FuncABIVersion, 0, 0); KindOf(err) != KindTrap {
				t.Errorf("call on a broken instance = %v, want a trap error", err)
			}
			m.Release(inst)

			// The next Acquire gets a fresh instance that works.
			next := acquire(t, m)
			defer m.Release(next)
			if next == inst {
				t.Fatal("Acquire returned the broken instance")
			}
			// The fixtures speak minor 0: what the module said at load.
			major, minor := m.ABIVersion()
			if v, err := next.Call(FuncABIVersion, 0, 0); err != nil || v != uint64(major)<<16|uint64(minor) {
				t.Errorf("abi_version on the next instance = %#x, %v", v, err)
			}
			if tt.module == "oddspin" {
				if v, err := next.Call(FuncQueueSortLess, 4, 5); err != nil || v != 1 {
					t.Errorf("less(4, 5) after the odd call = %d, %v; want 1", v, err)
				}
			}
			if diff := cmp.Diff(Stats{Live: 1, Free: 0, Instantiated: 2, Discarded: 1}, m.Stats()); diff != "" {
				t.Errorf("Stats (-want, +got):\n%s", diff)
			}
		})
	}
}

// Module.Close while a call is in flight: the call completes on its instance,
// which is closed on Release; idle instances close at once.
func TestModuleCloseInFlight(t *testing.T) {
	rt, rec := newTestRuntime(t)
	limits := testLimits()
	limits.Deadline = 10 * time.Second
	m := load(t, rt, "wasi", limits)

	// The call blocks inside fd_write (in the logger) until the module is closed.
	entered, proceed := make(chan struct{}), make(chan struct{})
	rec.setBlock(func(l logLine) {
		if l.Msg == "guest output" {
			close(entered)
			<-proceed
		}
	})
	idle := acquire(t, m) // the pooled instance from Load
	busy := acquire(t, m) // a second one, for the call in flight
	m.Release(idle)
	done := make(chan error, 1)
	go func() {
		r, err := busy.Call(FuncBackoffMayPop, 1, 0)
		if err == nil && r != 1 {
			err = errors.New("may_pop returned the wrong value")
		}
		done <- err
	}()
	<-entered
	if err := m.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if diff := cmp.Diff(Stats{Live: 1, Free: 0, Instantiated: 2}, m.Stats()); diff != "" {
		t.Errorf("Stats after Close, call in flight (-want, +got):\n%s", diff)
	}
	if _, err := m.Acquire(context.Background()); err == nil || !strings.Contains(err.Error(), `module "wasi" is closed`) {
		t.Errorf("Acquire after Close = %v, want module is closed", err)
	}
	rec.setBlock(nil)
	close(proceed)
	if err := <-done; err != nil {
		t.Fatalf("call in flight failed: %v", err)
	}
	m.Release(busy)
	if diff := cmp.Diff(Stats{Live: 0, Free: 0, Instantiated: 2}, m.Stats()); diff != "" {
		t.Errorf("Stats after Release (-want, +got):\n%s", diff)
	}
	if n := watchedCount(rt); n != 0 {
		t.Errorf("watchdog still watches %d instances", n)
	}
}

// Runtime.Close interrupts calls in flight rather than leaving them spinning.
func TestRuntimeCloseInterrupts(t *testing.T) {
	rt, _ := newTestRuntime(t)
	limits := testLimits()
	limits.Deadline = time.Hour
	m := load(t, rt, "spin", limits)
	inst := acquire(t, m)
	done := make(chan error, 1)
	go func() {
		_, err := inst.Call(FuncQueueSortLess, 0, 0)
		done <- err
	}()
	for inst.state.Load() <= 0 { // wait for the call to start
		time.Sleep(time.Millisecond)
	}
	if err := rt.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-done:
		if KindOf(err) != KindTrap || !strings.Contains(err.Error(), "the runtime is closing") {
			t.Errorf("call = %v, want a trap error saying the runtime is closing", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call still running 10s after Runtime.Close")
	}
	m.Release(inst)
}

func TestReleaseTwicePanics(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "valid", testLimits())
	inst := acquire(t, m)
	m.Release(inst)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "released twice") {
			t.Errorf("second Release: recovered %v, want a panic about releasing twice", r)
		}
	}()
	m.Release(inst)
}

// A pool of size 0 keeps nothing; a full pool closes the extra instances.
func TestPoolSize(t *testing.T) {
	rt, _ := newTestRuntime(t)
	for _, size := range []int{0, 2} {
		limits := testLimits()
		limits.PoolSize = size
		m := load(t, rt, "valid", limits)
		var insts []*Instance
		for range 4 {
			insts = append(insts, acquire(t, m))
		}
		for _, inst := range insts {
			m.Release(inst)
		}
		want := Stats{Live: size, Free: size, Instantiated: 4}
		if size == 0 {
			want.Instantiated = 5 // the instance Load probed with was not kept
		}
		if diff := cmp.Diff(want, m.Stats()); diff != "" {
			t.Errorf("pool size %d: Stats (-want, +got):\n%s", size, diff)
		}
	}
}

func watchedCount(rt *Runtime) int {
	rt.watchMu.Lock()
	defer rt.watchMu.Unlock()
	return len(rt.watched)
}
