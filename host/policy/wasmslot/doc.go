// Package wasmslot runs the policy slots of package host/policy through Wasm
// modules: one adapter per slot ([Sort], [BackoffSort], [PreEnqueue],
// [QueueingHint], [VictimOrder]) implementing the slot's interface over a
// host/wasm module, the circuit breaker in front of each loaded module, and
// the [Set] that loads, smoke-tests and hot-swaps one profile's modules.
//
// It is a package of its own so that the slot interfaces and their native
// defaults (package policy) depend on abi only: the guest SDK's native
// adapters and the reference policies compiled natively do not link wazero.
// Which adapter serves a slot, with which native default as fallback and
// through which Installer function it is installed, is read from the slot
// table ([policy.SpecOf]); this package adds one column to it, the adapter
// constructor of each slot ([New] picks it).
//
// # Notes
//
// An adapter never fails its caller: when a call traps, overruns its
// deadline or returns something malformed, the adapter answers that one
// decision with the slot's native default and counts the fallback. A pod is
// therefore never lost to a broken module; at worst it is ordered, gated or
// requeued as upstream would do it.
//
// A [Set] owns one profile's slot modules and swaps them while the scheduler
// runs: a swap builds new adapters (an installed adapter never changes) and
// gives each loaded module a circuit breaker, which after repeated failures
// makes the slot answer with its native default without calling the module,
// until a new module is loaded. A swap retires the replaced adapter: its
// typed handoff sends the calls that still reach it to the policy that
// replaced it, and its breaker stops counting. The breaker knows nothing of
// swaps; the handoff knows nothing of failures.
package wasmslot
