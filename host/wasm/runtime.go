package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"k8s.io/utils/clock"
)

// Option configures a Runtime.
type Option func(*options)

type options struct {
	logger   *slog.Logger
	tick     time.Duration
	cacheDir string
	clock    clock.WithTicker
}

// WithLogger sets the logger that receives load warnings and the guests'
// stdout and stderr lines. The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithWatchdogTick sets the finest resolution of the deadline watchdog
// (default 1 ms). The watchdog scans every tick, or every tenth of the
// shortest deadline of the instances it watches if that is longer (see
// periodDivisor): a call is interrupted within its deadline plus two scan
// periods. A shorter tick tightens that bound for short deadlines and wakes
// the watchdog more often.
func WithWatchdogTick(d time.Duration) Option {
	return func(o *options) { o.tick = d }
}

// WithClock sets the clock of the deadline watchdog (its ticker and the time
// a call has been running) and of the guest-output rate limiter. The default
// is the real clock; tests pass k8s.io/utils/clock/testing's fake clock, on
// which no call reaches its deadline until the test steps the clock.
func WithClock(c clock.WithTicker) Option {
	return func(o *options) {
		if c != nil {
			o.clock = c
		}
	}
}

// WithCompilationCacheDir keeps compiled modules in dir as well as in memory,
// so that a restart skips compilation (the scheduler's
// sandbox.compilationCacheDir). By default the cache is in memory only.
func WithCompilationCacheDir(dir string) Option {
	return func(o *options) { o.cacheDir = dir }
}

// DefaultWatchdogTick is the watchdog resolution unless WithWatchdogTick says
// otherwise.
const DefaultWatchdogTick = time.Millisecond

// Runtime loads policy modules and runs their calls under the sandbox limits.
// It owns one deadline watchdog and one wazero runtime per distinct memory
// limit, all sharing one compilation cache. Its methods are safe for
// concurrent use.
type Runtime struct {
	logger *slog.Logger
	tick   time.Duration
	cache  wazero.CompilationCache
	clock  clock.WithTicker // the watchdog's
	// now is the wall clock of the guest-output rate limiter (clock.Now
	// unless a test replaces it before loading modules).
	now func() time.Time

	// start is when the watchdog's clock reads 0.
	start time.Time

	// mu guards engines, modules and closed.
	// Lock order: Runtime.mu, then Module.mu, then Runtime.watchMu.
	mu      sync.Mutex
	engines map[uint32]wazero.Runtime // by memory limit in pages
	modules map[*Module]struct{}
	closed  bool

	// watchMu guards watched, the live instances the watchdog scans. It is
	// the innermost lock.
	watchMu sync.Mutex
	watched []*Instance

	// parked is set while the watchdog sleeps for want of calls; a call
	// that finds it set wakes the watchdog through wake (capacity 1).
	parked atomic.Bool
	wake   chan struct{}
	// period is the watchdog's scan period in ticks; retune asks it to
	// scan now and shorten it, for an instance whose deadline calls for a
	// shorter one (setDeadline).
	period atomic.Int64
	retune chan struct{}

	stop chan struct{} // closed by Close to stop the watchdog
	done chan struct{} // closed by the watchdog when it has stopped
}

// parkAfter is how many scans in a row the watchdog must find no call
// running before it parks. A call lasts microseconds, so a scan rarely
// catches one even when calls are many: parking after one idle scan would
// trade each scan for a wake-up. After 64 scans the watchdog wakes at most
// about 16 times a second at a 1 ms period for the calls that unpark it,
// instead of every scan (1,000 times a second: 212 ms of CPU per 5 s of an
// idle runtime).
const parkAfter = 64

// periodDivisor sets the watchdog's scan period: a tenth of the shortest
// deadline it watches, in whole ticks, at least one tick. A call is
// interrupted within its deadline plus two periods, a fifth more than the
// deadline at most, whatever the deadline; scanning every tick instead woke
// the watchdog 1,000 times a second for the default 100 ms deadline while
// calls came, about 9 ms of CPU per second (3% of wasmsched's CPU on plain
// pods through the apiserver), for a bound no tighter in proportion.
const periodDivisor = 10

// periodTicks is the scan period, in ticks, for shortest, the shortest
// deadline in ticks of the instances watched (0: none).
func periodTicks(shortest int64) int64 { return max(shortest/periodDivisor, 1) }

// NewRuntime returns a running Runtime; Close releases it.
func NewRuntime(ctx context.Context, opts ...Option) (*Runtime, error) {
	o := options{logger: slog.Default(), tick: DefaultWatchdogTick, clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.tick <= 0 {
		return nil, fmt.Errorf("new wasm runtime: watchdog tick %v: set a positive duration", o.tick)
	}
	var cache wazero.CompilationCache
	if o.cacheDir != "" {
		var err error
		if cache, err = wazero.NewCompilationCacheWithDir(o.cacheDir); err != nil {
			return nil, fmt.Errorf("new wasm runtime: compilation cache in %q: %w: fix the directory or leave the option unset", o.cacheDir, err)
		}
	} else {
		cache = wazero.NewCompilationCache()
	}
	rt := &Runtime{
		logger:  o.logger,
		tick:    o.tick,
		cache:   cache,
		clock:   o.clock,
		now:     o.clock.Now,
		engines: make(map[uint32]wazero.Runtime),
		modules: make(map[*Module]struct{}),
		wake:    make(chan struct{}, 1),
		retune:  make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	rt.start = rt.clock.Now()
	rt.period.Store(1)
	go rt.watchdog()
	return rt, nil
}

// Close interrupts calls in flight, stops the watchdog and closes every
// module and instance. The Runtime cannot be used afterwards.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	modules := make([]*Module, 0, len(rt.modules))
	for m := range rt.modules {
		modules = append(modules, m)
	}
	engines := rt.engines
	rt.engines = nil
	rt.mu.Unlock()

	// Nothing will interrupt a spinning guest once the watchdog is gone.
	rt.watchMu.Lock()
	for _, inst := range rt.watched {
		if s := inst.state.Load(); s > 0 && inst.state.CompareAndSwap(s, stateClosed) {
			inst.interrupt.Set(1)
		}
	}
	rt.watchMu.Unlock()
	close(rt.stop)
	<-rt.done

	var errs []error
	for _, m := range modules {
		errs = append(errs, m.Close(ctx))
	}
	for _, e := range engines {
		errs = append(errs, e.Close(ctx))
	}
	errs = append(errs, rt.cache.Close(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close wasm runtime: %w", err)
	}
	return nil
}

// watchdog wakes every scan period (periodTicks) and interrupts the calls
// that have run past their deadline (see scan). The tick count comes from
// the clock rather than from counting wake-ups, so a watchdog that was
// starved of CPU catches up on its first run.
//
// After parkAfter ticks without a call running it parks until a call wakes
// it (wakeWatchdog). It sets parked before its last scan and a call marks
// its instance busy before it reads parked: with Go's sequentially
// consistent atomics, either that scan sees the call or the call sees
// parked and wakes it, so no call runs unwatched. The waking call is seen
// at once, so its deadline still counts from a tick after it began.
func (rt *Runtime) watchdog() {
	defer close(rt.done)
	period := rt.period.Load() // the ticker's, in ticks
	t := rt.clock.NewTicker(time.Duration(period) * rt.tick)
	defer func() { t.Stop() }()
	now := func() int64 { return int64(rt.clock.Since(rt.start) / rt.tick) }
	// every scans and sets the ticker to the period scan chose.
	every := func() (busy bool) {
		busy = rt.scan(now())
		if p := rt.period.Load(); p != period {
			period = p
			t.Stop()
			t = rt.clock.NewTicker(time.Duration(p) * rt.tick)
		}
		return busy
	}
	idle := 0
	for {
		select {
		case <-rt.stop:
			return
		case <-t.C():
		case <-rt.retune:
		}
		if every() {
			idle = 0
			continue
		}
		if idle++; idle < parkAfter {
			continue
		}
		idle = 0
		rt.parked.Store(true)
		if rt.scan(now()) {
			rt.parked.Store(false)
			continue
		}
		t.Stop()
		select {
		case <-rt.stop:
			return
		case <-rt.wake:
		}
		rt.parked.Store(false)
		t = rt.clock.NewTicker(time.Duration(period) * rt.tick)
		every()
	}
}

// setDeadline sets inst's deadline, in ticks, and has the watchdog scan at
// once if that deadline calls for a shorter period than it scans at: until
// its next scan, a call of inst would be watched at the longer one. Under
// watchMu, so that a scan either counts the deadline or has set the period
// compared here.
func (rt *Runtime) setDeadline(inst *Instance, ticks int64) {
	rt.watchMu.Lock()
	defer rt.watchMu.Unlock()
	inst.deadlineTicks.Store(ticks)
	if periodTicks(ticks) < rt.period.Load() {
		select {
		case rt.retune <- struct{}{}:
		default: // a retune is pending already
		}
	}
}

// wakeWatchdog unparks the watchdog, if it is parked, for a call that has
// just marked its instance busy.
func (rt *Runtime) wakeWatchdog() {
	if rt.parked.Load() {
		select {
		case rt.wake <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// scan is one round of the watchdog at tick now (whole ticks since
// rt.start).
//
// The call path only marks an instance busy, by storing a fresh sequence
// number in its state; it reads no clock. scan notes, per instance, the
// first tick at which it saw the current call (the call began before that),
// and interrupts the call once more than its deadline in ticks has passed
// since then. So a call is never interrupted before its deadline, and with
// regular scans it is interrupted within its deadline plus two scan periods. It
// claims an overdue call by swapping that call's sequence number for
// stateInterrupted, so it can never interrupt a later call by mistake.
// It reports whether some call was running, and sets the scan period for
// the shortest deadline of the instances watched (periodTicks).
func (rt *Runtime) scan(now int64) (busy bool) {
	rt.watchMu.Lock()
	defer rt.watchMu.Unlock()
	var shortest int64
	defer func() { rt.period.Store(periodTicks(shortest)) }()
	for _, inst := range rt.watched {
		if d := inst.deadlineTicks.Load(); shortest == 0 || d < shortest {
			shortest = d
		}
		s := inst.state.Load()
		if s <= 0 {
			continue
		}
		busy = true
		if s != inst.wdSeq {
			inst.wdSeq, inst.wdSince = s, now
			continue
		}
		if now-inst.wdSince > inst.deadlineTicks.Load() && inst.state.CompareAndSwap(s, stateInterrupted) {
			inst.interrupt.Set(1)
		}
	}
	return busy
}

// deadlineTicks converts a deadline into whole watchdog ticks, rounding up so
// that a call is never interrupted before its deadline.
func (rt *Runtime) deadlineTicks(d time.Duration) int64 {
	n := int64((d + rt.tick - 1) / rt.tick)
	return max(n, 1)
}

func (rt *Runtime) watch(inst *Instance) {
	rt.watchMu.Lock()
	inst.watchIdx = len(rt.watched)
	rt.watched = append(rt.watched, inst)
	rt.watchMu.Unlock()
}

func (rt *Runtime) unwatch(inst *Instance) {
	rt.watchMu.Lock()
	defer rt.watchMu.Unlock()
	i := inst.watchIdx
	if i < 0 || i >= len(rt.watched) || rt.watched[i] != inst {
		return
	}
	last := len(rt.watched) - 1
	rt.watched[i] = rt.watched[last]
	rt.watched[i].watchIdx = i
	rt.watched[last] = nil
	rt.watched = rt.watched[:last]
	inst.watchIdx = -1
}

// engine returns the wazero runtime for a memory limit, creating it (with the
// sandbox's host module) on first use. The caller holds rt.mu.
func (rt *Runtime) engine(ctx context.Context, pages uint32) (wazero.Runtime, error) {
	if e, ok := rt.engines[pages]; ok {
		return e, nil
	}
	cfg := wazero.NewRuntimeConfigCompiler().
		WithCoreFeatures(api.CoreFeaturesV2).
		WithMemoryLimitPages(pages).
		WithCompilationCache(rt.cache).
		WithDebugInfoEnabled(false)
	e := wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := instantiateHostModule(ctx, e); err != nil {
		_ = e.Close(ctx)
		return nil, err
	}
	rt.engines[pages] = e
	return e, nil
}
