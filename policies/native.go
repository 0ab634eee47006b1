package policies

import "github.com/wasmsched/wasmsched/abi"

// NativePolicy is the reference policy of a slot compiled into the binary:
// the logic package a built-in module is built from, run in-process through
// package guest-sdk/native instead of through the Wasm sandbox.
type NativePolicy struct {
	// Name is the built-in module the logic comes from, as Builtin names it.
	Name string
	// Impl implements the slot's interface of package host/policy:
	// policy.Sort and policy.Keyer (queue sort), policy.BackoffSort and
	// policy.Keyer (backoff sort), policy.PreEnqueue, policy.QueueingHint or
	// policy.VictimOrder. It holds no state and may be shared.
	Impl any
}

// Native returns the reference policy of a slot compiled natively, built from
// the same logic values as the module that Builtin returns for the slot (what
// the module's main.go registers). ok is false for a placement slot (no
// built-in policy) and for a slot not in abi.Slots.
func Native(slot abi.Slot) (p NativePolicy, ok bool) {
	if int(slot) >= len(builtins) || builtins[slot].module == "" {
		return NativePolicy{}, false
	}
	b := builtins[slot]
	return NativePolicy{Name: b.module, Impl: b.native()}, true
}
