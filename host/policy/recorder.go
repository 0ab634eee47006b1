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
	// Failed counts a failed call; reason is a short label value such as
	// "trap", "deadline", "guest", "bad-output" or "instantiate".
	Failed(slot abi.Slot, reason string)
	// FellBack counts decisions answered by the native default.
	FellBack(slot abi.Slot, n int)
	// Observe records the duration of a batched call (hints, victims); per-pod
	// calls are too cheap to time.
	Observe(slot abi.Slot, d time.Duration)
}

// Discard is a Recorder that records nothing, for tests and tools.
type Discard struct{}

func (Discard) Called(abi.Slot)                 {}
func (Discard) Failed(abi.Slot, string)         {}
func (Discard) FellBack(abi.Slot, int)          {}
func (Discard) Observe(abi.Slot, time.Duration) {}
