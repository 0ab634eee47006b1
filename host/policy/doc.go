// Package policy defines the five policy slots of wasmsched as small Go
// interfaces, their native defaults (which behave like upstream
// kube-scheduler), and the slot table: one row per slot saying what the rest
// of the host needs to know about it.
//
// Every slot reads pods as [abi.PodView]s over encoded records: the queue
// encodes a pod once per change and both native and Wasm implementations read
// the same bytes, so the two can be compared input for input.
//
// # The slot table
//
// [SpecOf] returns a slot's row: the interface its policies implement, the
// guest SDK package that exports it, its native default and how a policy is
// handed to the [Installer] (the queue's setters and the cycle's victim
// order). [Smoke] is the synthetic input a module must answer before it is
// installed. The slot-aware places read the table instead of switching on
// the slot: the Wasm adapters and the Set (package host/policy/wasmslot,
// whose builders are its one column of its own), the native and embedded
// reference policies (package policies), policytest, `wasmsched policy test`
// and the admin endpoint. A new slot is a row here, its export list in abi,
// and a hook in each consumer that needs one (an adapter constructor in
// wasmslot, a built-in module in policies, a field of policytest.Slots).
//
// # Notes
//
// This package depends on abi only, so the guest SDK's native adapters
// (guest-sdk/native) and the reference policies compiled natively implement
// its interfaces without linking wazero. Running a slot through a Wasm
// module, the circuit breakers and hot swap are package wasmslot's.
//
// The victim importance rule of the native default, [Importance], is
// [abi.MoreImportantVictim], which the reference guests call too.
package policy
