package cycle_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/policy"
)

// SetVictimOrder swaps the victim-order slot: the next preemption takes its
// victims in the new order, and nil goes back to the native default.
func TestSetVictimOrder(t *testing.T) {
	tests := []struct {
		name   string
		start  policy.VictimOrder // Preemption.Order
		set    []policy.VictimOrder
		victim string
	}{
		{"no swap", nil, nil, "v-low"},
		{"swapped to reversed importance", nil, []policy.VictimOrder{reverseOrder{policy.Importance{}}}, "v-high"},
		{"swapped back to the native default", reverseOrder{policy.Importance{}}, []policy.VictimOrder{nil}, "v-low"},
		{"the latest swap serves", nil, []policy.VictimOrder{reverseOrder{policy.Importance{}}, policy.Importance{}}, "v-low"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, cycle.WithNominator(cycle.NewNominator()), cycle.WithPreemption(cycle.Preemption{Order: tt.start}))
			for _, o := range tt.set {
				e.s.SetVictimOrder(o)
			}
			e.addNodes(makeNode("n1", "cpu", "3").obj())
			e.addRunning(
				makePod("v-high").priority(5).req("cpu", "1").on("n1").obj(),
				makePod("v-mid").priority(3).req("cpu", "1").on("n1").obj(),
				makePod("v-low").priority(1).req("cpu", "1").on("n1").obj(),
			)
			e.addPods(makePod("p").priority(10).req("cpu", "1").obj())

			e.scheduleNext()

			if diff := cmp.Diff([]string{"default/" + tt.victim + ": " + evictMsg}, e.api.evictions()); diff != "" {
				t.Errorf("evictions (-want, +got):\n%s", diff)
			}
		})
	}
}
