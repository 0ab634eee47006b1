package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
)

// The allow-listed WASI functions behave as documented: output to the
// logger, nothing from the host's files, arguments, environment or clock.
func TestWASI(t *testing.T) {
	rt, rec := newTestRuntime(t)
	m := load(t, rt, "wasi", testLimits())
	inst := acquire(t, m)

	call := func(fn FuncID, a uint64) uint64 {
		t.Helper()
		r, err := inst.Call(fn, a, 0)
		if err != nil {
			t.Fatalf("%v(%d): %v", fn, a, err)
		}
		return r
	}

	// fd_write: stdout and stderr become log lines, pieces joined; other fds fail.
	call(FuncBackoffMayPop, 2)
	errnos := map[uint64]uint64{}
	for _, fd := range []uint64{0, 1, 2, 3} {
		errnos[fd] = call(FuncQueueSortLess, fd)
	}
	if diff := cmp.Diff(map[uint64]uint64{0: errnoBadf, 1: 0, 2: 0, 3: errnoBadf}, errnos); diff != "" {
		t.Errorf("fd_write errno by fd (-want, +got):\n%s", diff)
	}
	if got := call(FuncBackoffSortLess, 1); got != errnoFault {
		t.Errorf("fd_write with an iovec outside memory: errno %d, want %d", got, errnoFault)
	}
	want := []string{"wasi/stdout: hello", "wasi/stdout: hello", "wasi/stdout: x", "wasi/stderr: x"}
	if diff := cmp.Diff(want, rec.guestLines()); diff != "" {
		t.Errorf("guest output lines (-want, +got):\n%s", diff)
	}

	// random_get: 32 bytes from crypto/rand, different each time.
	first, err := inst.Output(abi.Result(call(FuncQueueSortKey, 0)))
	if err != nil {
		t.Fatal(err)
	}
	first = bytes.Clone(first)
	second, err := inst.Output(abi.Result(call(FuncQueueSortKey, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 32 || bytes.Equal(first, second) || bytes.Equal(first, make([]byte, 32)) {
		t.Errorf("random_get gave %x then %x, want 32 fresh random bytes each time", first, second)
	}

	// clock_time_get reads 0; no arguments, no environment; all succeed.
	out, err := inst.Output(abi.Result(call(FuncPreEnqueue, 0)))
	if err != nil {
		t.Fatal(err)
	}
	type clockArgsEnv struct {
		Time                              uint64
		Argc, ArgvSize, EnvCount, EnvSize uint32
		ErrnoSum, Untouched               uint32
	}
	var got clockArgsEnv
	if err := binary.Read(bytes.NewReader(out), binary.LittleEndian, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(clockArgsEnv{Untouched: 0xffffffff}, got); diff != "" {
		t.Errorf("clock, args and environ (-want, +got):\n%s", diff)
	}

	// fd_seek: stdio is not seekable, nothing else is open; fd_close likewise.
	if got, want := call(FuncHintEvents, 0), uint64(errnoSpipe<<24|errnoBadf<<16|0<<8|errnoBadf); got != want {
		t.Errorf("fd_seek/fd_close errnos = %#x, want %#x", got, want)
	}

	// A partial line is flushed when the instance closes.
	call(FuncBackoffSortKey, 0)
	m.Release(inst)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lines := rec.guestLines(); lines[len(lines)-1] != "wasi/stderr: partial" {
		t.Errorf("last guest line = %q, want the partial line flushed on close", lines[len(lines)-1])
	}
}

// proc_exit ends the call with an exit error naming the code, and breaks the
// instance.
func TestWASIProcExit(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "wasi", testLimits())
	for _, code := range []uint64{0, 7} {
		inst := acquire(t, m)
		_, err := inst.Call(FuncVictimOrder, code, 0)
		if KindOf(err) != KindExit || !errors.Is(err, ErrExit) || !inst.Broken() {
			t.Errorf("proc_exit(%d): %v (broken %v), want an exit error and a broken instance", code, err, inst.Broken())
		}
		if want := "proc_exit with code " + string(rune('0'+code)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("proc_exit(%d): %v, want it to contain %q", code, err, want)
		}
		m.Release(inst)
	}
	if s := m.Stats(); s.Discarded != 2 {
		t.Errorf("Stats.Discarded = %d, want 2", s.Discarded)
	}
}

// Guest output is rate-limited per module: a burst of 50 lines, then 10 per
// second; dropped lines are counted and reported with the next line let
// through.
func TestWASIRateLimit(t *testing.T) {
	rt, rec := newTestRuntime(t)
	clock := newFakeClock()
	rt.now = clock.Now
	m := load(t, rt, "wasi", testLimits())
	inst := acquire(t, m)
	defer m.Release(inst)

	if _, err := inst.Call(FuncBackoffMayPop, 100, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := len(rec.guestLines()), outputBurst; got != want {
		t.Errorf("lines logged after 100 writes = %d, want the burst of %d", got, want)
	}
	if got := m.Stats().DroppedLines; got != 50 {
		t.Errorf("DroppedLines = %d, want 50", got)
	}

	clock.Step(time.Second) // 10 more tokens
	if _, err := inst.Call(FuncBackoffMayPop, 20, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := len(rec.guestLines()), outputBurst+outputLinesPerSecond; got != want {
		t.Errorf("lines logged after one more second = %d, want %d", got, want)
	}
	if got := m.Stats().DroppedLines; got != 60 {
		t.Errorf("DroppedLines = %d, want 60", got)
	}
	var reports []string
	for _, l := range rec.lines() {
		if strings.Contains(l.Msg, "lines dropped") {
			reports = append(reports, l.Attrs["module"]+": "+l.Attrs["dropped"])
		}
	}
	if diff := cmp.Diff([]string{"wasi: 50"}, reports); diff != "" {
		t.Errorf("drop reports (-want, +got):\n%s", diff)
	}
}

// Lines longer than maxLine are logged in pieces.
func TestWASILongLine(t *testing.T) {
	rt, rec := newTestRuntime(t)
	m := load(t, rt, "valid", testLimits())
	inst := acquire(t, m)
	defer m.Release(inst)
	inst.write(inst.ctx, 1, bytes.Repeat([]byte("a"), maxLine+10))
	inst.write(inst.ctx, 1, []byte("\nb\n"))
	var lens []int
	for _, l := range rec.guestLines() {
		lens = append(lens, len(strings.TrimPrefix(l, "valid/stdout: ")))
	}
	if diff := cmp.Diff([]int{maxLine, 10, 1}, lens); diff != "" {
		t.Errorf("logged line lengths (-want, +got):\n%s", diff)
	}
}

// wasi.wat imports the whole allow-list, so Load checked every host
// function's signature against the WASI preview 1 one a guest declares.
func TestWASIFixtureCoversAllowList(t *testing.T) {
	rt, _ := newTestRuntime(t)
	m := load(t, rt, "wasi", testLimits())
	var got []string
	for _, imp := range m.Imports() {
		got = append(got, strings.TrimPrefix(imp, wasiModule+"."))
	}
	slices.Sort(got)
	if diff := cmp.Diff(wasiFuncNames(), got); diff != "" {
		t.Errorf("wasi.wat imports (-want allow-list, +got):\n%s", diff)
	}
}
