package policy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/abi"
)

// breaker is the circuit breaker of one loaded module in one slot. After
// failures failed calls within window it opens, and the slot's adapter
// answers every decision with its native default without calling the module,
// until a [Set] loads a new module for the slot, which comes with a new,
// closed breaker. It never closes by itself: a module that failed this often
// is broken until an operator replaces it.
//
// The hot path is isOpen: a nil check and one atomic load. Only failures take
// the mutex. A Set gives every module a breaker, disabled (failures 0) or
// not, since it also carries the retired flag; a nil *breaker (adapters built
// by the NewWasm* constructors) never opens and is never retired.
type breaker struct {
	open    atomic.Bool
	retired atomic.Bool // set by the Set once a swap replaced the module
	// successorAdapter is the adapter that replaced this one's module, written before
	// retired is set and read only after it is seen set; nil when the Set
	// was closed.
	successorAdapter any

	slot     abi.Slot
	failures int
	window   time.Duration
	now      func() time.Time
	rec      Recorder

	// mu guards times, next, n and since. It is taken on failures only.
	mu    sync.Mutex
	times []time.Time // ring of the last failures failure times
	next  int         // where the next failure time goes; the oldest once full
	n     int         // failure times held, up to len(times)
	since time.Time   // when the breaker opened
}

// newBreaker returns a closed breaker; failures 0 disables it.
func newBreaker(slot abi.Slot, failures int, window time.Duration, now func() time.Time, rec Recorder) *breaker {
	failures = max(failures, 0)
	return &breaker{slot: slot, failures: failures, window: window, now: now, rec: rec, times: make([]time.Time, failures)}
}

// isOpen reports whether the module must not be called.
func (b *breaker) isOpen() bool { return b != nil && b.open.Load() }

// isRetired reports whether a swap replaced the module.
func (b *breaker) isRetired() bool { return b != nil && b.retired.Load() }

// retire stops a replaced module's breaker from tripping: failures of calls
// still in flight on the old module say nothing about the slot's new module.
// next is the adapter that replaced it, which the old adapter hands the calls
// that reach it after its module was closed; nil when nothing replaced it.
func (b *breaker) retire(next any) {
	if b != nil {
		b.successorAdapter = next
		b.retired.Store(true)
	}
}

// successor is the adapter that replaced a retired module, or nil.
func (b *breaker) successor() any {
	if b == nil || !b.retired.Load() {
		return nil
	}
	return b.successorAdapter
}

// fail records a failed call and opens the breaker if it was the failures-th
// within window.
func (b *breaker) fail() {
	if b == nil || b.failures == 0 || b.open.Load() || b.retired.Load() {
		return
	}
	now := b.now()
	b.mu.Lock()
	b.times[b.next] = now
	b.next = (b.next + 1) % len(b.times)
	if b.n < len(b.times) {
		b.n++
	}
	// Once the ring is full, times[next] is the oldest of the last failures.
	trip := b.n == len(b.times) && now.Sub(b.times[b.next]) <= b.window && !b.open.Load()
	if trip {
		b.since = now
		b.open.Store(true)
	}
	b.mu.Unlock()
	if trip && !b.retired.Load() {
		b.rec.BreakerTripped(b.slot)
	}
}

// BreakerState is the state of a slot's circuit breaker.
type BreakerState struct {
	// Enabled is false when the breaker is disabled (WithBreaker(0, ...)).
	Enabled bool
	// Open: the slot answers every decision with its native default and does
	// not call its module, until a new module is loaded for it.
	Open bool
	// Since is when the breaker opened; zero while closed.
	Since time.Time
	// RecentFailures counts the failed calls within the window before now
	// (the last Threshold at most).
	RecentFailures int
	// Threshold and Window: Threshold failures within Window open the breaker.
	Threshold int
	Window    time.Duration
}

func (b *breaker) state() BreakerState {
	if b == nil || b.failures == 0 {
		return BreakerState{}
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	st := BreakerState{Enabled: true, Open: b.open.Load(), Since: b.since, Threshold: b.failures, Window: b.window}
	for i := 0; i < b.n; i++ {
		if now.Sub(b.times[i]) <= b.window {
			st.RecentFailures++
		}
	}
	return st
}
