package wasm

import (
	"context"
	"crypto/rand"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// The sandbox's WASI subset. A module built by TinyGo for wasip1 imports
// fd_write, fd_close, fd_seek and random_get, plus clock_time_get when it
// uses package time; standard Go and wasi-libc add the args, environ and
// proc_exit functions. These are implemented here rather than by wazero's
// imports/wasi_snapshot_preview1, which would also offer the filesystem.
// Nothing here reveals the host: no files, no arguments, no environment, and a
// clock stopped at zero.
const wasiModule = "wasi_snapshot_preview1"

// WASI errno values used here.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
	errnoSpipe   = 70
)

type wasiFunc struct {
	params, results []api.ValueType
	fn              api.GoModuleFunc
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

var wasiFuncs = map[string]wasiFunc{
	"fd_write":          {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, fdWrite},
	"fd_close":          {[]api.ValueType{i32}, []api.ValueType{i32}, fdClose},
	"fd_seek":           {[]api.ValueType{i32, i64, i32, i32}, []api.ValueType{i32}, fdSeek},
	"random_get":        {[]api.ValueType{i32, i32}, []api.ValueType{i32}, randomGet},
	"clock_time_get":    {[]api.ValueType{i32, i64, i32}, []api.ValueType{i32}, clockTimeGet},
	"args_sizes_get":    {[]api.ValueType{i32, i32}, []api.ValueType{i32}, zeroSizes},
	"args_get":          {[]api.ValueType{i32, i32}, []api.ValueType{i32}, nothingToGet},
	"environ_sizes_get": {[]api.ValueType{i32, i32}, []api.ValueType{i32}, zeroSizes},
	"environ_get":       {[]api.ValueType{i32, i32}, []api.ValueType{i32}, nothingToGet},
	"proc_exit":         {[]api.ValueType{i32}, nil, procExit},
}

func wasiFuncNames() []string {
	names := make([]string, 0, len(wasiFuncs))
	for n := range wasiFuncs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// instantiateHostModule defines the WASI subset in a wazero runtime.
func instantiateHostModule(ctx context.Context, r wazero.Runtime) error {
	b := r.NewHostModuleBuilder(wasiModule)
	for _, name := range wasiFuncNames() {
		f := wasiFuncs[name]
		b.NewFunctionBuilder().WithGoModuleFunction(f.fn, f.params, f.results).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return err
	}
	return nil
}

// fdWrite: (fd, iovs, iovs_len, nwritten_ptr) -> errno. Stdout and stderr
// become log lines of the calling module; other descriptors do not exist.
func fdWrite(ctx context.Context, mod api.Module, stack []uint64) {
	fd, iovs, n, nwrittenPtr := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	stack[0] = fdWriteErrno(ctx, mod, fd, iovs, n, nwrittenPtr)
}

func fdWriteErrno(ctx context.Context, mod api.Module, fd, iovs, n, nwrittenPtr uint32) uint64 {
	if fd != 1 && fd != 2 {
		return errnoBadf
	}
	if n > 1<<16 { // IOV_MAX is 1024; this only keeps n*8 from overflowing
		return errnoFault
	}
	mem := mod.Memory()
	vec, ok := mem.Read(iovs, n*8)
	if !ok {
		return errnoFault
	}
	inst := instanceOf(ctx)
	var total uint32
	for k := uint32(0); k < n; k++ {
		ptr := uint32(vec[8*k]) | uint32(vec[8*k+1])<<8 | uint32(vec[8*k+2])<<16 | uint32(vec[8*k+3])<<24
		size := uint32(vec[8*k+4]) | uint32(vec[8*k+5])<<8 | uint32(vec[8*k+6])<<16 | uint32(vec[8*k+7])<<24
		buf, ok := mem.Read(ptr, size)
		if !ok {
			return errnoFault
		}
		if inst != nil {
			inst.write(ctx, int(fd), buf)
		}
		total += size
	}
	if !mem.WriteUint32Le(nwrittenPtr, total) {
		return errnoFault
	}
	return errnoSuccess
}

// fdClose: (fd) -> errno. Closing stdio is a no-op; nothing else is open.
func fdClose(_ context.Context, _ api.Module, stack []uint64) {
	if fd := uint32(stack[0]); fd <= 2 {
		stack[0] = errnoSuccess
	} else {
		stack[0] = errnoBadf
	}
}

// fdSeek: (fd, offset, whence, newoffset_ptr) -> errno. Stdio is not
// seekable; nothing else is open.
func fdSeek(_ context.Context, _ api.Module, stack []uint64) {
	if fd := uint32(stack[0]); fd <= 2 {
		stack[0] = errnoSpipe
	} else {
		stack[0] = errnoBadf
	}
}

// randomGet: (buf, len) -> errno, from crypto/rand.
func randomGet(_ context.Context, mod api.Module, stack []uint64) {
	buf, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		stack[0] = errnoFault
		return
	}
	_, _ = rand.Read(buf) // never fails since Go 1.24
	stack[0] = errnoSuccess
}

// clockTimeGet: (id, precision, time_ptr) -> errno. Every clock reads 0: a
// policy sees no time but what the host passes in its input.
func clockTimeGet(_ context.Context, mod api.Module, stack []uint64) {
	if !mod.Memory().WriteUint64Le(uint32(stack[2]), 0) {
		stack[0] = errnoFault
		return
	}
	stack[0] = errnoSuccess
}

// zeroSizes: args_sizes_get and environ_sizes_get, (count_ptr, size_ptr) ->
// errno: no arguments, no environment.
func zeroSizes(_ context.Context, mod api.Module, stack []uint64) {
	mem := mod.Memory()
	if !mem.WriteUint32Le(uint32(stack[0]), 0) || !mem.WriteUint32Le(uint32(stack[1]), 0) {
		stack[0] = errnoFault
		return
	}
	stack[0] = errnoSuccess
}

// nothingToGet: args_get and environ_get, (ptrs, buf) -> errno, with zero
// entries to write.
func nothingToGet(_ context.Context, _ api.Module, stack []uint64) {
	stack[0] = errnoSuccess
}

// procExit: (code) -> noreturn. Ends the call with a KindExit error; the
// instance is discarded on Release.
func procExit(_ context.Context, _ api.Module, stack []uint64) {
	panic(sys.NewExitError(uint32(stack[0])))
}

// maxLine caps a buffered output line; a longer one is logged in pieces.
const maxLine = 1024

// lineBuffer accumulates a partial output line of one stream.
type lineBuffer struct{ b []byte }

var streamNames = [3]string{"", "stdout", "stderr"}

// write splits guest output into lines and logs them, rate-limited.
func (i *Instance) write(ctx context.Context, fd int, p []byte) {
	lb := &i.out[fd-1]
	for len(p) > 0 {
		k := slices.Index(p, '\n')
		if k < 0 {
			take := min(len(p), maxLine-len(lb.b))
			lb.b = append(lb.b, p[:take]...)
			p = p[take:]
			if len(lb.b) == maxLine {
				i.emit(ctx, fd, lb)
			}
			continue
		}
		take := min(k, maxLine-len(lb.b))
		lb.b = append(lb.b, p[:take]...)
		if take == k {
			p = p[k+1:]
		} else {
			p = p[take:]
		}
		i.emit(ctx, fd, lb)
	}
}

// flushOutput logs the partial lines left when the instance closes.
func (i *Instance) flushOutput() {
	for k := range i.out {
		if len(i.out[k].b) > 0 {
			i.emit(i.ctx, k+1, &i.out[k])
		}
	}
}

func (i *Instance) emit(ctx context.Context, fd int, lb *lineBuffer) {
	line := string(lb.b)
	lb.b = lb.b[:0]
	m := i.module
	ok, dropped := m.output.allow()
	if !ok {
		return
	}
	if dropped > 0 {
		m.logger.LogAttrs(ctx, slog.LevelWarn, "guest output rate-limited: lines dropped",
			slog.Uint64("dropped", dropped))
	}
	level := slog.LevelInfo
	if fd == 2 {
		level = slog.LevelWarn
	}
	m.logger.LogAttrs(ctx, level, "guest output", slog.String("stream", streamNames[fd]), slog.String("line", line))
}

// Guest output rate limit per module: a token bucket.
const (
	outputLinesPerSecond = 10
	outputBurst          = 50
)

// outputLimiter is a token bucket shared by a module's instances.
type outputLimiter struct {
	now func() time.Time

	mu      sync.Mutex // guards the fields below; a leaf lock
	tokens  float64
	last    time.Time
	dropped uint64 // since the last line let through
	total   uint64 // ever
}

func (l *outputLimiter) init(now func() time.Time) {
	l.now = now
	l.tokens = outputBurst
	l.last = now()
}

// allow takes a token. When it succeeds it also returns how many lines were
// dropped since the last success, so that the gap can be reported.
func (l *outputLimiter) allow() (ok bool, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if el := now.Sub(l.last); el > 0 {
		l.tokens = min(outputBurst, l.tokens+el.Seconds()*outputLinesPerSecond)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		l.total++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

func (l *outputLimiter) droppedTotal() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
