// Package policy defines the five policy slots of wasmsched as small Go
// interfaces, their native defaults (which behave like upstream
// kube-scheduler), and the adapters that run a slot through a Wasm module.
//
// Every slot reads pods as [abi.PodView]s over encoded records: the queue
// encodes a pod once per change and both native and Wasm implementations read
// the same bytes, so the two can be compared input for input.
//
// # Notes
//
// A Wasm adapter never fails its caller: when a call traps, overruns its
// deadline or returns something malformed, the adapter answers that one
// decision with the slot's native default and counts the fallback. A pod is
// therefore never lost to a broken module; at worst it is ordered, gated or
// requeued as upstream would do it.
//
// A [Set] owns one profile's slot modules and swaps them while the scheduler
// runs: a swap builds new adapters (an installed adapter never changes) and
// gives each loaded module a circuit breaker, which after repeated failures
// makes the slot answer with its native default without calling the module,
// until a new module is loaded.
package policy
