// Package wasm is the sandboxed runtime every policy slot calls through: it
// validates and compiles policy modules (wazero, compiler engine, core
// features 2.0), pools their instances, and runs each call without allocating
// and under a deadline, a memory limit and an import allow-list.
//
// A [Runtime] loads modules; a [Module] is a validated, compiled module with a
// pool of instances; an [Instance] is held by one goroutine between
// [Module.Acquire] and [Module.Release] and calls the contract of package abi:
//
//	inst, err := mod.Acquire(ctx)
//	in, err := inst.Input(len(pod))        // the guest's input buffer
//	copy(in, pod)
//	r, err := inst.Call(wasm.FuncQueueSortKey, uint64(len(pod)), 0)
//	key, err := inst.Output(abi.Result(r)) // aliases guest memory
//	mod.Release(inst)
//
// Failed calls return a [*CallError] whose [ErrorKind] says why (trap,
// deadline, guest error, bad output, exit), so that a slot can fall back to
// its native default and count the reason. Any failure but a guest error
// breaks the instance: Release discards it and the next Acquire gets a fresh
// one.
//
// # Deadlines by instrumentation
//
// wazero can stop a call when its context is done
// (RuntimeConfig.WithCloseOnContextDone), but in v1.12 that costs a goroutine
// per call (about 2 us and 3 allocations) and makes every loop back-edge exit
// to Go, while a hot call (a sort key) costs about 30 ns and nothing. So that
// option stays off. Instead Load rewrites each binary with package instrument,
// which adds an exported mutable i32 global and checks it at every function
// entry and loop header (`global.get; if; unreachable; end`).
//
// One watchdog goroutine per Runtime scans on a coarse interval while calls
// come (it parks when they stop; see below): a tenth of the shortest
// deadline of the instances it watches, in whole ticks of [WithWatchdogTick]
// (default 1 ms), at least one tick. A call only marks its instance busy,
// with one atomic store of a per-call sequence number (no time.Now on the
// call path); the watchdog notes the tick at which it first sees each call
// and, once the call has been running longer than its module's deadline, sets
// that instance's global to 1 through api.MutableGlobal.Set. The guest traps
// at its next check and the call returns a KindDeadline error. A call is
// never interrupted before its deadline, and is interrupted within the
// deadline plus two scan periods, a fifth more at most, when the watchdog
// gets the CPU on time (its tick
// count comes from the monotonic clock, so a late watchdog catches up).
// Tests replace that clock with [WithClock].
//
// Go cannot preempt a goroutine running wazero-compiled code, so a guest that
// never returned to Go would hold off every stop-the-world (each GC) and,
// with it, the watchdog meant to stop it: the whole process would deadlock.
// Package instrument therefore also makes every check site count down and
// leave machine code for Go (memory.grow 0, a Go call in wazero) every
// [instrument.YieldPeriod] checks; TestSpinDuringGC and TestAllPsSpinning
// keep it so.
//
// # Memory
//
// wazero's memory limit is per runtime, so the Runtime keeps one wazero
// runtime per distinct [Limits.MemoryPages], all sharing one compilation
// cache (in memory, or also on disk with [WithCompilationCacheDir]); a module
// is compiled once. The limit is at most [MaxMemoryPages] (2 GiB) because an
// [abi.Result] packs the output pointer into the high half of a signed i64.
//
// # Imports
//
// TinyGo's wasm-unknown guests import nothing. Its wasip1 guests (TinyGo
// 0.42) import fd_write, fd_close, fd_seek and random_get, and clock_time_get
// when they use package time; the sandbox implements those and the args,
// environ and proc_exit functions itself, with no filesystem, network or environment
// behind them and a clock that reads 0 (see wasi.go). Stdout and stderr lines
// go to the Runtime's logger with the module's name, rate-limited per module
// (10 lines/s, bursts of 50; drops are counted). Any other import makes Load
// fail, including sched_yield and poll_oneoff, which standard-Go wasip1
// guests import: they are refused.
//
// # Notes
//
//   - A single long memory.fill or memory.copy runs in Go's memmove without a
//     check, so it can hold off a GC for as long as it takes (bounded by the
//     memory limit), though not forever.
//   - Deadlines are wall-clock: time a call spends descheduled (by Go or the
//     OS) counts, so a loaded machine can abort a call that would have
//     finished. Such a call fails with KindDeadline like a spinning one.
//   - A call that finishes just as the watchdog claims it still reports
//     KindDeadline (its instance's interrupt global is already set).
//   - Instrumentation shifts code offsets, so guests should be built without
//     DWARF (-no-debug); wazero's DWARF support is off.
//   - A module with a start function is refused: it would run inside
//     instantiation, before the watchdog can reach the instance. Reactors
//     (-buildmode=c-shared) initialise in _initialize, which runs under a
//     deadline of at least one second (standard-Go guests need milliseconds).
//   - A host function does not check the interrupt global, so the watchdog
//     cannot stop a call while it is inside one; the sandbox's host functions
//     all return promptly.
//   - The Output slice aliases guest memory: it is valid until the next call
//     into the same instance, which may grow (and so move) that memory.
//   - proc_exit, even with code 0, ends the call with a KindExit error.
//   - The watchdog wakes every scan period while calls come; after 64 scans
//     without a call running it parks, and the next call wakes it (one
//     atomic load on the call path, a channel send when it is parked). An idle
//     scheduler's watchdog costs nothing.
package wasm
