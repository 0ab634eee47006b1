package policy

import (
	"time"

	"github.com/wasmsched/wasmsched/abi"
)

// Recorder observes what the Wasm adapters do; host/metrics implements it
// with Prometheus collectors.
type Recorder interface {
	// Called counts a call into a module.
	Called(slot abi.Slot)
	// Failed reports a failed call: reason is a short label value ("trap",
	// "deadline", "guest_error", "bad_output", "exit" or "instantiate") and
	// err says what happened, with the module's name and the guest's message.
	Failed(slot abi.Slot, reason string, err error)
	// FellBack counts decisions answered by the native default.
	FellBack(slot abi.Slot, n int)
	// Observe records the duration of a batched call (hints, victims); per-pod
	// calls are too cheap to time.
	Observe(slot abi.Slot, d time.Duration)
	// Swapped counts an attempt to load a module into a slot (see
	// [Set.Load]): result is "success" or the short reason it was refused
	// ("invalid", "slot", "sha256", "smoke", "closed", "unwired").
	Swapped(slot abi.Slot, result string)
	// BreakerTripped reports that the slot's circuit breaker opened: the slot
	// answers with its native default, without calling its module, until a
	// module is loaded into it (a "success" Swapped closes it again).
	BreakerTripped(slot abi.Slot)
}

// Discard is a Recorder that records nothing, for tests and tools.
type Discard struct{}

func (Discard) Called(abi.Slot)                 {}
func (Discard) Failed(abi.Slot, string, error)  {}
func (Discard) FellBack(abi.Slot, int)          {}
func (Discard) Observe(abi.Slot, time.Duration) {}
func (Discard) Swapped(abi.Slot, string)        {}
func (Discard) BreakerTripped(abi.Slot)         {}
