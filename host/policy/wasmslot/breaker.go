package wasmslot

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
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
// not; a nil *breaker (adapters built by the New* constructors) never opens.
// What happens to a module's calls once a swap replaced it is not the
// breaker's business but the adapter's [handoff].
type breaker struct {
	open atomic.Bool

	slot     abi.Slot
	failures int
	window   time.Duration
	now      func() time.Time
	rec      policy.Recorder

	// mu guards times, next, n and since. It is taken on failures only.
	mu    sync.Mutex
	times []time.Time // ring of the last failures failure times
	next  int         // where the next failure time goes; the oldest once full
	n     int         // failure times held, up to len(times)
	since time.Time   // when the breaker opened
}

// newBreaker returns a closed breaker; failures 0 disables it.
func newBreaker(slot abi.Slot, failures int, window time.Duration, now func() time.Time, rec policy.Recorder) *breaker {
	failures = max(failures, 0)
	return &breaker{slot: slot, failures: failures, window: window, now: now, rec: rec, times: make([]time.Time, failures)}
}

// isOpen reports whether the module must not be called.
func (b *breaker) isOpen() bool { return b != nil && b.open.Load() }

// fail records a failed call and opens the breaker if it was the failures-th
// within window. retired is the module's retirement flag (see [handoff]):
// failures of calls still in flight on a module a swap replaced say nothing
// about the slot's new module, so they neither count nor trip.
func (b *breaker) fail(retired *atomic.Bool) {
	if b == nil || b.failures == 0 || b.open.Load() || retired.Load() {
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
	if trip && !retired.Load() {
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
