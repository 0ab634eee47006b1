package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmsched/wasmsched/abi"
)

// FuncID names a function export of the contract; an Instance resolves them
// all once, when it is created.
type FuncID uint8

// The contract's function exports; see the abi.Export* constants for their
// signatures and meaning.
const (
	FuncABIVersion FuncID = iota
	FuncBuffer
	FuncLastError
	FuncQueueSortLess
	FuncQueueSortKey
	FuncBackoffSortLess
	FuncBackoffSortKey
	FuncBackoffMayPop
	FuncPreEnqueue
	FuncHintEvents
	FuncQueueingHint
	FuncVictimOrder
	FuncNodes
	FuncFilter
	FuncScore
	FuncPreFilter
	FuncPreScore
	FuncPlacementOptions
	numFuncs
)

var funcExports = [numFuncs]string{
	FuncABIVersion:      abi.ExportABIVersion,
	FuncBuffer:          abi.ExportBuffer,
	FuncLastError:       abi.ExportLastError,
	FuncQueueSortLess:   abi.ExportQueueSortLess,
	FuncQueueSortKey:    abi.ExportQueueSortKey,
	FuncBackoffSortLess: abi.ExportBackoffSortLess,
	FuncBackoffSortKey:  abi.ExportBackoffSortKey,
	FuncBackoffMayPop:   abi.ExportBackoffMayPop,
	FuncPreEnqueue:      abi.ExportPreEnqueue,
	FuncHintEvents:      abi.ExportHintEvents,
	FuncQueueingHint:    abi.ExportQueueingHint,
	FuncVictimOrder:     abi.ExportVictimOrder,

	FuncNodes:            abi.ExportNodes,
	FuncFilter:           abi.ExportFilter,
	FuncScore:            abi.ExportScore,
	FuncPreFilter:        abi.ExportPreFilter,
	FuncPreScore:         abi.ExportPreScore,
	FuncPlacementOptions: abi.ExportPlacementOptions,
}

// Export is the export name of f (one of the abi.Export* constants).
func (f FuncID) Export() string {
	if f < numFuncs {
		return funcExports[f]
	}
	return fmt.Sprintf("FuncID(%d)", uint8(f))
}

func (f FuncID) String() string { return f.Export() }

// interruptExport is the name under which instrument exports the interrupt
// global; the colon keeps it out of any name a Go or TinyGo guest can export.
const interruptExport = "wasmsched:interrupt"

// Values of Instance.state besides a call's sequence number (> 0).
const (
	stateIdle        = 0
	stateInterrupted = -1 // the watchdog interrupted the call
	stateClosed      = -2 // Runtime.Close interrupted the call
)

// Instance is one instantiation of a Module, held by one goroutine at a time
// between Module.Acquire and Module.Release. Its methods are not safe for
// concurrent use (except by the watchdog, which only touches state and the
// interrupt global).
type Instance struct {
	module    *Module
	mod       api.Module
	ctx       context.Context // carries the instance for host functions; no Done channel
	fns       [numFuncs]api.Function
	stack     []uint64
	mem       api.Memory
	interrupt api.MutableGlobal

	// state is stateIdle, the sequence number of the call in progress (> 0),
	// or stateInterrupted/stateClosed once the watchdog or Close claimed it.
	state   atomic.Int64
	callSeq int64 // last call's sequence number; owner only
	// deadlineTicks is the call deadline in watchdog ticks; atomic because
	// the instance raises it while it initialises.
	deadlineTicks atomic.Int64
	// Guarded by Runtime.watchMu: the index in Runtime.watched, and the call
	// the watchdog last saw in progress and its clock tick then.
	watchIdx int
	wdSeq    int64
	wdSince  int64

	bufPtr, bufCap uint32 // the guest's input buffer, once known
	lastFn         FuncID // the function of the last Call, for Output's errors
	broken         bool   // trapped, interrupted or returned garbage: discard
	released       bool   // in the free list; guarded by Module.mu
	out            [2]lineBuffer
	// value is the host's state about this instance's guest memory (the
	// placement adapters' record of which nodes it holds); a new instance
	// starts with none.
	value any
}

// Value returns what SetValue stored on the instance, nil for a new one.
func (i *Instance) Value() any { return i.value }

// SetValue stores v on the instance: host state that describes the
// instance's guest memory and so lives and dies with it.
func (i *Instance) SetValue(v any) { i.value = v }

type instanceKey struct{}

// instanceOf returns the Instance whose call is running host function code.
func instanceOf(ctx context.Context) *Instance {
	inst, _ := ctx.Value(instanceKey{}).(*Instance)
	return inst
}

// newInstance instantiates the module and runs its reactor initialiser under
// the watchdog, with a deadline of at least minInitDeadline.
func (m *Module) newInstance(ctx context.Context) (*Instance, error) {
	inst := &Instance{module: m, stack: make([]uint64, 2), watchIdx: -1}
	inst.ctx = context.WithValue(context.Background(), instanceKey{}, inst)
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	mod, err := m.engine.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("load module %q: instantiate: %w", m.name, err)
	}
	inst.mod = mod
	inst.mem = mod.ExportedMemory(abi.ExportMemory)
	g, ok := mod.ExportedGlobal(interruptExport).(api.MutableGlobal)
	if inst.mem == nil || !ok {
		_ = mod.Close(ctx)
		return nil, fmt.Errorf("load module %q: instantiate: memory or interrupt global missing (internal error)", m.name)
	}
	inst.interrupt = g
	for i := range inst.fns {
		inst.fns[i] = mod.ExportedFunction(funcExports[i])
	}
	inst.deadlineTicks.Store(m.rt.deadlineTicks(max(m.limits.Deadline, minInitDeadline)))
	m.rt.watch(inst)
	if init := mod.ExportedFunction(abi.ExportInitialize); init != nil {
		if err := inst.call(abi.ExportInitialize, init); err != nil {
			inst.close()
			return nil, fmt.Errorf("load module %q: %s failed: %w", m.name, abi.ExportInitialize, err)
		}
	}
	m.rt.setDeadline(inst, m.rt.deadlineTicks(m.limits.Deadline))
	return inst, nil
}

// close releases the instance's wazero module; the Module's accounting is
// the caller's job.
func (i *Instance) close() {
	i.module.rt.unwatch(i)
	i.flushOutput()
	_ = i.mod.Close(context.Background())
}

// Broken reports whether a call trapped, was interrupted, exited or returned
// an invalid result; Release discards a broken instance.
func (i *Instance) Broken() bool { return i.broken }

// Discard marks the instance broken, so Release closes it instead of
// pooling it: for an output that decodes but breaks the contract, which
// only the caller can tell (a module that answers garbage once may hold
// state that makes it answer garbage again).
func (i *Instance) Discard() { i.broken = true }

// Call calls a contract function with up to two parameters (unused ones are
// ignored) and returns its raw result: an i32 zero-extended, or an i64 (an
// [abi.Result] for the functions that produce bytes). It does not allocate.
//
// A function the module does not export fails with a KindGuestError carrying
// abi.ErrUnsupported; the instance stays usable.
func (i *Instance) Call(fn FuncID, a, b uint64) (uint64, error) {
	if fn >= numFuncs {
		return 0, i.fail(fn.Export(), KindBadOutput, 0, errors.New("unknown function id (host bug)"))
	}
	f := i.fns[fn]
	i.lastFn = fn
	if f == nil {
		return 0, &CallError{Module: i.module.name, Function: fn.Export(), Kind: KindGuestError, Code: abi.ErrUnsupported,
			Err: errors.New("the module does not export this function")}
	}
	i.stack[0], i.stack[1] = a, b
	if err := i.call(funcExports[fn], f); err != nil {
		return 0, err
	}
	return i.stack[0], nil
}

// call runs f with the parameters already in i.stack, under the watchdog.
func (i *Instance) call(name string, f api.Function) error {
	if i.broken {
		return i.fail(name, KindTrap, 0, errors.New("instance is broken by an earlier failure: release it and acquire another"))
	}
	i.callSeq++
	i.state.Store(i.callSeq)
	i.module.rt.wakeWatchdog()
	err := f.CallWithStack(i.ctx, i.stack)
	switch i.state.Swap(stateIdle) {
	case stateInterrupted:
		return i.fail(name, KindDeadline, 0, fmt.Errorf("interrupted after running longer than %v", i.module.limits.Deadline))
	case stateClosed:
		return i.fail(name, KindTrap, 0, errors.New("interrupted: the runtime is closing"))
	}
	if err != nil {
		var exit *sys.ExitError
		if errors.As(err, &exit) {
			return i.fail(name, KindExit, 0, fmt.Errorf("guest called proc_exit with code %d", exit.ExitCode()))
		}
		return i.fail(name, KindTrap, 0, err)
	}
	return nil
}

// fail builds a CallError; every kind but KindGuestError breaks the instance.
func (i *Instance) fail(fn string, kind ErrorKind, code abi.ErrCode, err error) *CallError {
	if kind != KindGuestError {
		i.broken = true
	}
	return &CallError{Module: i.module.name, Function: fn, Kind: kind, Code: code, Err: err}
}

// Input returns n writable bytes of guest memory at the guest's input buffer,
// asking the guest for a larger buffer (wasmsched_buffer) only when n exceeds
// the capacity it last provided. The slice aliases guest memory and is valid
// until the next call into the instance.
func (i *Instance) Input(n int) ([]byte, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, i.fail(abi.ExportBuffer, KindBadOutput, 0, fmt.Errorf("input size %d out of range (host bug)", n))
	}
	if n == 0 {
		return nil, nil
	}
	if uint32(n) > i.bufCap {
		r, err := i.Call(FuncBuffer, uint64(n), 0)
		if err != nil {
			return nil, err
		}
		ptr := uint32(r)
		if ptr == 0 {
			return nil, i.fail(abi.ExportBuffer, KindGuestError, abi.ErrBuffer,
				fmt.Errorf("the guest cannot provide an input buffer of %d bytes", n))
		}
		i.bufPtr, i.bufCap = ptr, uint32(n)
	}
	b, ok := i.mem.Read(i.bufPtr, uint32(n))
	if !ok {
		i.bufCap = 0
		return nil, i.fail(abi.ExportBuffer, KindBadOutput, 0,
			fmt.Errorf("input buffer [%#x, +%d) is outside guest memory (%d bytes)", i.bufPtr, n, i.mem.Size()))
	}
	return b, nil
}

// Output interprets the result of the last Call. A non-negative result yields
// the guest memory it points to (an alias, valid until the next call); a
// pointer or length outside memory is a KindBadOutput error and breaks the
// instance. A negative result yields a KindGuestError with the guest's code
// and its message from wasmsched_last_error.
func (i *Instance) Output(r abi.Result) ([]byte, error) {
	ptr, n, code, ok := r.Unpack()
	if !ok {
		return nil, i.guestError(code)
	}
	b, ok := i.mem.Read(ptr, n)
	if !ok {
		return nil, i.fail(i.lastFn.Export(), KindBadOutput, 0,
			fmt.Errorf("result [%#x, +%d) is outside guest memory (%d bytes)", ptr, n, i.mem.Size()))
	}
	return b, nil
}

// Bool interprets the i32 result of the last Call of a boolean function:
// 1 is true, 0 false, a negative value a KindGuestError as in Output, and
// anything else a KindBadOutput error.
func (i *Instance) Bool(r uint64) (bool, error) {
	switch v := int32(uint32(r)); {
	case v == 0:
		return false, nil
	case v == 1:
		return true, nil
	case v < 0:
		return false, i.guestError(abi.ErrCode(-int64(v)))
	default:
		return false, i.fail(i.lastFn.Export(), KindBadOutput, 0, fmt.Errorf("boolean result %d is neither 0 nor 1", v))
	}
}

// guestError builds the error of a negative result, with the guest's message
// (copied, at most abi.MaxReasonLen bytes).
func (i *Instance) guestError(code abi.ErrCode) error {
	fn := i.lastFn
	var msg string
	if r, err := i.Call(FuncLastError, 0, 0); err != nil {
		msg = fmt.Sprintf("(no message: %v)", err)
	} else if ptr, n, _, ok := abi.Result(r).Unpack(); !ok {
		msg = "(no message)"
	} else if b, ok := i.mem.Read(ptr, min(n, abi.MaxReasonLen)); !ok {
		msg = fmt.Sprintf("(no message: %s returned [%#x, +%d), outside guest memory)", abi.ExportLastError, ptr, n)
	} else {
		msg = strings.ToValidUTF8(string(b), "\uFFFD")
	}
	i.lastFn = fn
	return &CallError{Module: i.module.name, Function: fn.Export(), Kind: KindGuestError, Code: code, Err: GuestMessage(msg)}
}
