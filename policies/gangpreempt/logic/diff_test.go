package logic_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies/gangpreempt/logic"
)

// The differential test feeds thousands of generated inputs to the native
// logic and to the module (policytest's "wasm" run: the host's runtime and
// slot adapters, where any failed call or native fallback fails the test)
// and requires identical gates and orders. Orders are also checked against
// the host's native default, host/policy.Importance, which sorts with the
// standard library rather than the SDK's sort.
const (
	diffPods    = 5000
	diffBatches = 2000
	maxBatch    = 200
)

func TestDifferential(t *testing.T) {
	policytest.Run(t, gangpreempt, func(t *testing.T, s policytest.Slots) {
		t.Run("PreEnqueue", func(t *testing.T) {
			r := rand.New(rand.NewPCG(4671, 4671))
			for i := range diffPods {
				p := randomPod(r)
				view := policytest.PodView(p)
				want := logic.PreEnqueue(view)
				if diff := cmp.Diff(want, s.PreEnqueue.PreEnqueue(view)); diff != "" {
					t.Fatalf("pod %d (group %q minCount %d members %d): gate (-native logic, +slot):\n%s",
						i, p.Group.Name, p.Group.MinCount, p.Group.Members, diff)
				}
			}
		})
		t.Run("VictimOrder", func(t *testing.T) {
			r := rand.New(rand.NewPCG(5710, 5710))
			native := policytest.NativeVictimOrder(logic.MoreImportant)
			for i := range diffBatches {
				victims := randomBatch(r)
				preemptor := abi.PodView{}
				if r.IntN(2) == 0 {
					preemptor = policytest.PodView(randomPod(r))
				}
				want := make([]uint32, len(victims))
				native.Order(preemptor, victims, want)
				got := make([]uint32, len(victims))
				s.VictimOrder.Order(preemptor, victims, got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("batch %d of %d victims: order (-native logic, +slot):\n%s", i, len(victims), diff)
				}
				host := make([]uint32, len(victims))
				policy.Importance{}.Order(preemptor, victims, host)
				if diff := cmp.Diff(host, got); diff != "" {
					t.Fatalf("batch %d of %d victims: order (-host/policy.Importance, +slot):\n%s", i, len(victims), diff)
				}
			}
		})
	})
}

// TestDifferentialOracle checks the generators against the rules written
// out longhand, so that the differential test does not compare two copies
// of one mistake.
func TestDifferentialOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range diffPods {
		p := randomPod(r)
		g := logic.PreEnqueue(policytest.PodView(p))
		wait := p.Group.Name != "" && (p.Group.MinCount == 0 || p.Group.Members < p.Group.MinCount)
		if (g.Code == abi.GateWait) != wait {
			t.Fatalf("group %q minCount %d members %d: gate %+v, want wait=%v", p.Group.Name, p.Group.MinCount, p.Group.Members, g, wait)
		}
		if wait && !strings.Contains(g.Reason, "pod group") {
			t.Fatalf("reason %q does not name the pod group", g.Reason)
		}
	}
	for range 200 {
		victims := randomBatch(r)
		order := make([]uint32, len(victims))
		victim.OrderVictims(logic.MoreImportant, victims, order)
		for k := 1; k < len(order); k++ {
			a, b := victims[order[k-1]], victims[order[k]]
			if rank(b).less(rank(a)) {
				t.Fatalf("position %d: %+v sorts before %+v", k, b, a)
			}
			if rank(a) == rank(b) && order[k-1] > order[k] {
				t.Fatalf("position %d: equal victims %+v, %+v left their batch order", k, a, b)
			}
		}
	}
}

// rankTuple is a victim's importance as a tuple, most important smallest,
// compared field by field by less: the KEP-5710 rules written out again.
type rankTuple struct {
	negPriority int64
	notGroup    bool
	negMembers  int64 // groups only
	notStarted  bool
	start       int64
	uid         string
}

func rank(v abi.Victim) rankTuple {
	t := rankTuple{negPriority: -int64(v.Priority), notGroup: v.Kind != abi.VictimGroup,
		notStarted: v.StartTime == 0, start: v.StartTime, uid: v.UID}
	if !t.notGroup {
		t.negMembers = -int64(v.Members)
	}
	return t
}

func (a rankTuple) less(b rankTuple) bool {
	switch {
	case a.negPriority != b.negPriority:
		return a.negPriority < b.negPriority
	case a.notGroup != b.notGroup:
		return !a.notGroup
	case a.negMembers != b.negMembers:
		return a.negMembers < b.negMembers
	case a.notStarted != b.notStarted:
		return !a.notStarted
	case a.start != b.start:
		return a.start < b.start
	}
	return a.uid < b.uid
}

// randomPod draws group fields from small pools (so that many pods share
// them) and from extremes, names included: empty, unicode, quotes, invalid
// UTF-8 and names longer than a reason may be.
func randomPod(r *rand.Rand) *abi.Pod {
	names := []string{"", "", "", "train", "infer", "学習", "a\"b\nc", "x\xffy",
		strings.Repeat("g", 300), strings.Repeat("\x01", 700), strings.Repeat("é", 900)}
	counts := []int32{math.MinInt32, -1, 0, 0, 1, 2, 3, 4, 4, 5, 8, 100, math.MaxInt32}
	count := func() int32 {
		if r.IntN(4) == 0 {
			return int32(r.Uint32())
		}
		return counts[r.IntN(len(counts))]
	}
	p := policytest.MakePod().
		Namespace([]string{"", "ns", "team-a", "日本"}[r.IntN(4)]).
		Name("p-"+strconv.Itoa(r.IntN(1000))).
		UID("uid-"+strconv.Itoa(r.IntN(1000))).
		Priority(int32(r.IntN(5)-2)).
		Group(names[r.IntN(len(names))], count()).
		GroupMembers(count()).
		GroupPriority(int32(r.IntN(5) - 2)).
		GroupDisruption(abi.DisruptionMode(r.IntN(2)))
	if r.IntN(3) == 0 {
		p.Label("app", "x").SchedulingGates("example.com/gate")
	}
	return p.Obj()
}

// randomBatch returns up to maxBatch victims whose fields repeat often:
// duplicates of every field, whole duplicate victims, and extremes.
func randomBatch(r *rand.Rand) []abi.Victim {
	n := r.IntN(maxBatch + 1)
	// Each batch draws from its own small pools, so some batches are
	// nearly all ties and others nearly all distinct.
	distinct := 1 + r.IntN(12)
	prios := make([]int32, distinct)
	starts := make([]int64, distinct)
	members := make([]int32, distinct)
	uids := make([]string, distinct)
	for i := range distinct {
		prios[i] = []int32{math.MinInt32, -10, -1, 0, 0, 1, 2, 1000, math.MaxInt32, int32(r.Uint32())}[r.IntN(10)]
		starts[i] = []int64{0, 0, 0, -1, 1, 1_700_000_000e9, 1_700_000_000e9 + 1, math.MaxInt64, math.MinInt64, int64(r.Uint64())}[r.IntN(10)]
		members[i] = []int32{0, 1, 1, 2, 3, 8, 64, -1, math.MaxInt32}[r.IntN(9)]
		uids[i] = []string{"", "a", "b", "B", "uid-" + strconv.Itoa(r.IntN(50)), "é", "\xff", strings.Repeat("u", r.IntN(64))}[r.IntN(8)]
	}
	vs := make([]abi.Victim, n)
	for i := range vs {
		if i > 0 && r.IntN(10) == 0 {
			vs[i] = vs[r.IntN(i)] // a whole duplicate
			vs[i].Name = "dup-" + strconv.Itoa(i)
			continue
		}
		vs[i] = abi.Victim{
			Kind:         []abi.VictimKind{abi.VictimPod, abi.VictimPod, abi.VictimGroup, abi.VictimGroup, 2}[r.IntN(5)],
			Priority:     prios[r.IntN(distinct)],
			StartTime:    starts[r.IntN(distinct)],
			Members:      members[r.IntN(distinct)],
			PDBViolating: r.IntN(4) == 0,
			UID:          uids[r.IntN(distinct)],
			Namespace:    []string{"", "ns", "team-a"}[r.IntN(3)],
			Name:         "v-" + strconv.Itoa(i),
		}
	}
	return vs
}
