package logic_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/prioritysort/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../prioritysort.wasm", QueueSort: &logic.Policy}, func(t *testing.T, s policytest.Slots) {
		if !s.QueueSort.Keyed() {
			t.Error("the queue sort is not keyed")
		}
		pod := func(name string, prio int32, queued time.Duration) *abi.Pod {
			return policytest.MakePod().Name(name).Namespace("ns").Priority(prio).Queued(t0.Add(queued)).Obj()
		}
		cases := []struct {
			name string
			pods []*abi.Pod
			want []string
		}{
			{
				name: "higher priority first",
				pods: []*abi.Pod{pod("low", 1, 0), pod("high", 10, time.Second), pod("mid", 5, 0)},
				want: []string{"high", "mid", "low"},
			},
			{
				name: "equal priority: earlier queued first",
				pods: []*abi.Pod{pod("later", 3, 2*time.Second), pod("earlier", 3, time.Second), pod("latest", 3, time.Minute)},
				want: []string{"earlier", "later", "latest"},
			},
			{
				name: "negative priorities and unset queue times",
				pods: []*abi.Pod{
					policytest.MakePod().Name("minus5").Priority(-5).Obj(),
					policytest.MakePod().Name("zero").Obj(),
					policytest.MakePod().Name("minus1").Priority(-1).Obj(),
				},
				want: []string{"zero", "minus1", "minus5"},
			},
			{
				name: "extreme priorities",
				pods: []*abi.Pod{pod("min", math.MinInt32, 0), pod("max", math.MaxInt32, 0), pod("zero", 0, 0)},
				want: []string{"max", "zero", "min"},
			},
			{
				name: "ties keep their order",
				pods: []*abi.Pod{pod("a", 2, time.Second), pod("b", 2, time.Second), pod("c", 2, time.Second)},
				want: []string{"a", "b", "c"},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if diff := cmp.Diff(c.want, policytest.Sorted(t, s.QueueSort, c.pods...)); diff != "" {
					t.Errorf("order (-want, +got):\n%s", diff)
				}
			})
		}
	})
}

// TestAgreesWithHost checks, on random pods, that the policy orders and
// keys pods as the host's native default does.
func TestAgreesWithHost(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	random := func() abi.PodView {
		return policytest.MakePod().Priority(int32(r.IntN(5) - 2)).Queued(t0.Add(time.Duration(r.IntN(3)) * time.Second)).View()
	}
	host := policy.PrioritySort{}
	for range 10000 {
		a, b := random(), random()
		if got, want := logic.Less(a, b), host.Less(a, b); got != want {
			t.Fatalf("Less = %v, host says %v", got, want)
		}
		if got, want := logic.Key(a), host.Key(a); got != want {
			t.Fatalf("Key = %v, host says %v", got, want)
		}
	}
}
