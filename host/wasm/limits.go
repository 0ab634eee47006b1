package wasm

import (
	"errors"
	"fmt"
	"time"
)

// MaxMemoryPages is the largest memory limit a module may get: 32768 pages
// of 64 KiB, 2 GiB. An [abi.Result] packs the output pointer in the high 32
// bits of a signed i64, so a pointer at or above 2 GiB would read as an error
// code.
const MaxMemoryPages = 32768

// Limits are the sandbox limits of one module, applied to each of its
// instances.
type Limits struct {
	// MemoryPages caps the guest's linear memory, in 64 KiB pages: the module's
	// initial memory must fit, and memory.grow fails beyond it. 1 to
	// [MaxMemoryPages].
	MemoryPages uint32
	// Deadline bounds every call into the guest; the watchdog interrupts a call
	// within Deadline plus two of its scan periods (a tenth of the shortest
	// deadline it watches, at least a tick). Instantiation (the reactor's
	// _initialize) gets at least [minInitDeadline].
	Deadline time.Duration
	// PoolSize is how many idle instances the module keeps for reuse; 0 keeps
	// none (every Release closes its instance).
	PoolSize int
}

// minInitDeadline is the least time _initialize and the version probe get:
// a standard-Go guest spends a few milliseconds initialising its runtime,
// which a deadline sized for sort keys would not allow.
const minInitDeadline = time.Second

// DefaultLimits returns the limits a module gets unless configured otherwise:
//
//   - 256 pages (16 MiB) of memory. The largest input is a QueueingHint or
//     victim batch for ~10k pods, about 2-3 MB, written into a guest buffer
//     that TinyGo allocates on its heap; decoding it (strings alias the buffer,
//     but slices of records do not) and the output need about as much again,
//     and TinyGo's conservative GC grows the heap rather than collect when the
//     free space runs low, so it needs headroom on top: 4x the batch, rounded
//     up to a power of two. 4 MiB (64 pages) would not hold a large batch
//     twice. Memory is committed as the guest grows it, not up front.
//   - a 100 ms deadline per call: far above a healthy batched call (well under
//     1 ms for 10k pods) and short enough that a spinning guest costs one
//     scheduling decision, not a stalled queue.
//   - a pool of [DefaultPoolSize] idle instances.
func DefaultLimits() Limits {
	return Limits{
		MemoryPages: 256,
		Deadline:    100 * time.Millisecond,
		PoolSize:    DefaultPoolSize,
	}
}

// DefaultPoolSize is how many idle instances a module keeps unless
// configured otherwise (sandbox.poolSize, whose default is this value). It
// bounds what the pool keeps, not the instances: a call that finds the pool
// empty instantiates one, and Release closes it if the pool is full. Four
// covers the few goroutines that call one slot's module at the same time
// (the queue's, the scheduling cycle's, the event handlers') without
// instantiating on every call, and does not grow with the machine: every idle instance keeps its memory, up
// to the module's limit (16 MiB by default), so a pool sized by GOMAXPROCS
// would hold hundreds of megabytes per module on a large node for calls that
// do not come.
const DefaultPoolSize = 4

// Validate reports what is wrong with l.
func (l Limits) Validate() error {
	var errs []error
	if l.MemoryPages == 0 || l.MemoryPages > MaxMemoryPages {
		errs = append(errs, fmt.Errorf("memory limit %d pages out of range: set 1 to %d pages (64 KiB each)", l.MemoryPages, MaxMemoryPages))
	}
	if l.Deadline <= 0 {
		errs = append(errs, fmt.Errorf("deadline %v: set a positive duration", l.Deadline))
	}
	if l.PoolSize < 0 {
		errs = append(errs, fmt.Errorf("pool size %d: set 0 or more", l.PoolSize))
	}
	return errors.Join(errs...)
}
