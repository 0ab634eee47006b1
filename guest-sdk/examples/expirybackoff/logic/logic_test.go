package logic_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/expirybackoff/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../expirybackoff.wasm", BackoffSort: &logic.Policy}, func(t *testing.T, s policytest.Slots) {
		if !s.BackoffSort.Keyed() {
			t.Error("the backoff sort is not keyed")
		}
		pod := func(name string, prio int32, expiry time.Duration) *abi.Pod {
			return policytest.MakePod().Name(name).Priority(prio).BackoffExpiry(t0.Add(expiry)).Obj()
		}
		t.Run("order", func(t *testing.T) {
			cases := []struct {
				name string
				pods []*abi.Pod
				want []string
			}{
				{
					name: "earlier expiry first, whatever the priority",
					pods: []*abi.Pod{pod("late", 100, 3*time.Second), pod("early", 0, time.Second), pod("mid", 5, 2*time.Second)},
					want: []string{"early", "mid", "late"},
				},
				{
					name: "sub-second differences count (no ordering window)",
					pods: []*abi.Pod{pod("b", 0, 1500*time.Millisecond), pod("a", 0, 1200*time.Millisecond)},
					want: []string{"a", "b"},
				},
				{
					name: "equal expiry keeps order",
					pods: []*abi.Pod{pod("x", 9, time.Second), pod("y", 1, time.Second)},
					want: []string{"x", "y"},
				},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if diff := cmp.Diff(c.want, policytest.Sorted(t, s.BackoffSort, c.pods...)); diff != "" {
						t.Errorf("order (-want, +got):\n%s", diff)
					}
				})
			}
		})
		t.Run("may pop", func(t *testing.T) {
			cases := []struct {
				name string
				pod  *policytest.PodWrapper
				want bool
			}{
				{"after an unschedulable attempt", policytest.MakePod().Name("u").UnschedulablePlugins("NodeResourcesFit"), true},
				{"after an error", policytest.MakePod().Name("e").LastFailureError(), false},
				{"after an error, with rejecting plugins", policytest.MakePod().Name("e2").LastFailureError().UnschedulablePlugins("X"), false},
			}
			for _, c := range cases {
				if got := s.BackoffSort.MayPop(c.pod.View()); got != c.want {
					t.Errorf("%s: MayPop = %v, want %v", c.name, got, c.want)
				}
			}
		})
	})
}
