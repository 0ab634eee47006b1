package logic_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/fifosort/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

var t0 = time.Unix(1_700_000_000, 0)

// TestPolicy: natively and through the compiled module, priority is ignored
// and the earlier created pod goes first.
func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../fifosort.wasm", QueueSort: &logic.Policy}, func(t *testing.T, s policytest.Slots) {
		if !s.QueueSort.Keyed() {
			t.Error("the queue sort is not keyed")
		}
		pod := func(name string, prio int32, created, queued time.Duration) *abi.Pod {
			return policytest.MakePod().Name(name).Namespace("ns").Priority(prio).Created(t0.Add(created)).Queued(t0.Add(queued)).Obj()
		}
		cases := []struct {
			name string
			pods []*abi.Pod
			want []string
		}{
			{
				name: "creation order, whatever the priority",
				pods: []*abi.Pod{pod("third", 100, 3*time.Second, 0), pod("first", 1, time.Second, 0), pod("second", 50, 2*time.Second, 0)},
				want: []string{"first", "second", "third"},
			},
			{
				name: "same creation time: earlier queued first",
				pods: []*abi.Pod{pod("b", 1, 0, 2*time.Second), pod("a", 9, 0, time.Second)},
				want: []string{"a", "b"},
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
