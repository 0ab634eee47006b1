package logic_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/importance/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
)

var t0 = time.Unix(1_700_000_000, 0)

func v(name string, prio int32) *policytest.VictimWrapper {
	return policytest.MakeVictim().Name(name).UID("uid-" + name).Namespace("ns").Priority(prio)
}

func TestPolicy(t *testing.T) {
	policytest.Run(t, policytest.Policy{WasmPath: "../importance.wasm", VictimOrder: logic.MoreImportant}, func(t *testing.T, s policytest.Slots) {
		cases := []struct {
			name    string
			victims []*policytest.VictimWrapper
			want    []string
		}{
			{
				name:    "higher priority first",
				victims: []*policytest.VictimWrapper{v("low", 1), v("high", 100), v("mid", 10)},
				want:    []string{"high", "mid", "low"},
			},
			{
				name:    "group before pod at equal priority",
				victims: []*policytest.VictimWrapper{v("pod", 5).Started(t0), v("group", 5).Group(3).Started(t0.Add(time.Hour))},
				want:    []string{"group", "pod"},
			},
			{
				name:    "priority beats kind",
				victims: []*policytest.VictimWrapper{v("group", 4).Group(10), v("pod", 5)},
				want:    []string{"pod", "group"},
			},
			{
				name: "pods: earlier start first, unstarted last",
				victims: []*policytest.VictimWrapper{
					v("unstarted", 5), v("late", 5).Started(t0.Add(time.Minute)), v("early", 5).Started(t0),
				},
				want: []string{"early", "late", "unstarted"},
			},
			{
				name: "groups: more members first, then earlier start",
				victims: []*policytest.VictimWrapper{
					v("small", 5).Group(2).Started(t0), v("big-late", 5).Group(8).Started(t0.Add(time.Hour)),
					v("big-early", 5).Group(8).Started(t0), v("big-unstarted", 5).Group(8),
				},
				want: []string{"big-early", "big-late", "big-unstarted", "small"},
			},
			{
				name:    "ties break on UID",
				victims: []*policytest.VictimWrapper{v("b", 5).Started(t0), v("a", 5).Started(t0), v("c", 5).Started(t0)},
				want:    []string{"a", "b", "c"},
			},
			{
				name:    "one victim",
				victims: []*policytest.VictimWrapper{v("only", 0)},
				want:    []string{"only"},
			},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var victims []abi.Victim
				for _, w := range c.victims {
					victims = append(victims, w.Obj())
				}
				if diff := cmp.Diff(c.want, policytest.Ordered(s.VictimOrder, victims...)); diff != "" {
					t.Errorf("order (-want, +got):\n%s", diff)
				}
			})
		}
		t.Run("random batches agree with the host's native default", func(t *testing.T) {
			r := rand.New(rand.NewPCG(8, 9))
			for range 20 {
				victims := make([]abi.Victim, 1+r.IntN(300))
				for i := range victims {
					w := v("v"+strconv.Itoa(i), int32(r.IntN(3))).UID(strconv.Itoa(r.IntN(50)))
					if st := r.IntN(4); st > 0 {
						w.Started(t0.Add(time.Duration(st) * time.Second))
					}
					if r.IntN(3) == 0 {
						w.Group(int32(1 + r.IntN(3)))
					}
					victims[i] = w.Obj()
				}
				want := make([]uint32, len(victims))
				policy.Importance{}.Order(abi.PodView{}, victims, want)
				if diff := cmp.Diff(want, policytest.Order(s.VictimOrder, victims...)); diff != "" {
					t.Fatalf("order of %d victims (-host, +policy):\n%s", len(victims), diff)
				}
			}
		})
		t.Run("empty batch", func(t *testing.T) {
			if got := policytest.Order(s.VictimOrder); len(got) != 0 {
				t.Errorf("order of no victims = %v, want none", got)
			}
		})
	})
}

// TestAgreesWithHost checks, on random victims, that the policy decides as
// the host's native default does.
func TestAgreesWithHost(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := func() abi.Victim {
		v := abi.Victim{Priority: int32(r.IntN(3)), StartTime: int64(r.IntN(3)), UID: string(rune('a' + r.IntN(3)))}
		if r.IntN(2) == 0 {
			v.Kind, v.Members = abi.VictimGroup, int32(r.IntN(3))
		}
		return v
	}
	for range 10000 {
		a, b := random(), random()
		if got, want := logic.MoreImportant(a, b), policy.MoreImportant(&a, &b); got != want {
			t.Fatalf("MoreImportant(%+v, %+v) = %v, host says %v", a, b, got, want)
		}
	}
}
