package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wasmsched/wasmsched/abi"
)

func TestPolicyRecorder(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p, err := NewPolicy(reg)
	if err != nil {
		t.Fatal(err)
	}
	p.Called(abi.SlotQueueSort)
	p.Called(abi.SlotQueueSort)
	p.Called(abi.SlotQueueingHint)
	p.Failed(abi.SlotQueueingHint, "deadline", nil)
	p.Failed(abi.SlotQueueingHint, "deadline", nil)
	p.Failed(abi.SlotVictimOrder, "trap", nil)
	p.FellBack(abi.SlotQueueingHint, 7)
	p.Observe(abi.SlotQueueingHint, 3*time.Millisecond)

	want := `
# HELP wasmsched_policy_calls_total Calls into policy modules, by slot.
# TYPE wasmsched_policy_calls_total counter
wasmsched_policy_calls_total{slot="backoffSort"} 0
wasmsched_policy_calls_total{slot="filter"} 0
wasmsched_policy_calls_total{slot="preEnqueue"} 0
wasmsched_policy_calls_total{slot="queueSort"} 2
wasmsched_policy_calls_total{slot="queueingHint"} 1
wasmsched_policy_calls_total{slot="score"} 0
wasmsched_policy_calls_total{slot="victimOrder"} 0
# HELP wasmsched_policy_errors_total Failed policy calls, by slot and reason (trap, deadline, guest_error, bad_output, exit, instantiate).
# TYPE wasmsched_policy_errors_total counter
wasmsched_policy_errors_total{reason="deadline",slot="queueingHint"} 2
wasmsched_policy_errors_total{reason="trap",slot="victimOrder"} 1
# HELP wasmsched_policy_fallbacks_total Decisions answered by a slot's native default because its module failed (filter, score: decided by the slot's failure policy), by slot.
# TYPE wasmsched_policy_fallbacks_total counter
wasmsched_policy_fallbacks_total{slot="backoffSort"} 0
wasmsched_policy_fallbacks_total{slot="filter"} 0
wasmsched_policy_fallbacks_total{slot="preEnqueue"} 0
wasmsched_policy_fallbacks_total{slot="queueSort"} 0
wasmsched_policy_fallbacks_total{slot="queueingHint"} 7
wasmsched_policy_fallbacks_total{slot="score"} 0
wasmsched_policy_fallbacks_total{slot="victimOrder"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"wasmsched_policy_calls_total", "wasmsched_policy_errors_total", "wasmsched_policy_fallbacks_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "wasmsched_policy_call_duration_seconds"); n != len(abi.Slots) {
		t.Errorf("duration histograms: got %d series, want one per slot (%d)", n, len(abi.Slots))
	}
	if _, err := NewPolicy(reg); err == nil {
		t.Error("registering the collectors twice on one registry: want an error")
	}
}

func TestPolicySwapsAndBreakers(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	p, err := NewPolicy(reg)
	if err != nil {
		t.Fatal(err)
	}
	p.Swapped(abi.SlotQueueSort, "success")
	p.Swapped(abi.SlotQueueSort, "smoke")
	p.Swapped(abi.SlotQueueSort, "smoke")
	p.Swapped(abi.SlotVictimOrder, "sha256")
	p.BreakerTripped(abi.SlotQueueingHint)
	p.BreakerTripped(abi.SlotQueueSort)
	p.Swapped(abi.SlotQueueSort, "success") // a new module closes the breaker
	p.Swapped(abi.SlotQueueingHint, "invalid")

	want := `
# HELP wasmsched_policy_breaker_open 1 while a slot's circuit breaker is open (its native default answers without calling the module, until a module is loaded), else 0; by slot.
# TYPE wasmsched_policy_breaker_open gauge
wasmsched_policy_breaker_open{slot="backoffSort"} 0
wasmsched_policy_breaker_open{slot="filter"} 0
wasmsched_policy_breaker_open{slot="preEnqueue"} 0
wasmsched_policy_breaker_open{slot="queueSort"} 0
wasmsched_policy_breaker_open{slot="queueingHint"} 1
wasmsched_policy_breaker_open{slot="score"} 0
wasmsched_policy_breaker_open{slot="victimOrder"} 0
# HELP wasmsched_policy_breaker_trips_total Times a slot's circuit breaker opened after repeated failures of its module, by slot.
# TYPE wasmsched_policy_breaker_trips_total counter
wasmsched_policy_breaker_trips_total{slot="backoffSort"} 0
wasmsched_policy_breaker_trips_total{slot="filter"} 0
wasmsched_policy_breaker_trips_total{slot="preEnqueue"} 0
wasmsched_policy_breaker_trips_total{slot="queueSort"} 1
wasmsched_policy_breaker_trips_total{slot="queueingHint"} 1
wasmsched_policy_breaker_trips_total{slot="score"} 0
wasmsched_policy_breaker_trips_total{slot="victimOrder"} 0
# HELP wasmsched_policy_swaps_total Attempts to load a policy module into a slot, by slot and result (success, or why it was refused: invalid, slot, sha256, smoke, closed, unwired).
# TYPE wasmsched_policy_swaps_total counter
wasmsched_policy_swaps_total{result="invalid",slot="queueingHint"} 1
wasmsched_policy_swaps_total{result="sha256",slot="victimOrder"} 1
wasmsched_policy_swaps_total{result="smoke",slot="queueSort"} 2
wasmsched_policy_swaps_total{result="success",slot="queueSort"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"wasmsched_policy_breaker_open", "wasmsched_policy_breaker_trips_total", "wasmsched_policy_swaps_total"); err != nil {
		t.Error(err)
	}
}
