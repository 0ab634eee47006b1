package logic_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies/backoffpop/logic"
)

const wasmPath = "../backoffpop.wasm"

// t0 is on a window boundary (a whole second), as upstream's
// TestBackoffQueueOrdering aligns its fake clock.
var t0 = time.Unix(1_700_000_000, 0)

var module = policytest.Policy{WasmPath: wasmPath, QueueSort: &logic.QueueSort, BackoffSort: &logic.BackoffSort}

type orderCase struct {
	name string
	pods []*abi.Pod
	want []string
}

func checkOrder(t *testing.T, s policy.Sort, cases []orderCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, policytest.Sorted(t, s, c.pods...)); diff != "" {
				t.Errorf("order (-want, +got):\n%s", diff)
			}
		})
	}
}

// backingOff is a pod that was rejected by a plugin at queued and backs off
// until expiry.
func backingOff(name string, prio int32, queued, expiry time.Time) *abi.Pod {
	return policytest.MakePod().Name(name).Namespace("ns").Priority(prio).
		Queued(queued).BackoffExpiry(expiry).Attempts(1).UnschedulablePlugins("NodeResourcesFit").Obj()
}

// at is a pod backing off until t0+d, queued a second before (upstream's
// initial backoff).
func at(name string, prio int32, d time.Duration) *abi.Pod {
	return backingOff(name, prio, t0.Add(d-time.Second), t0.Add(d))
}

func TestPolicy(t *testing.T) {
	policytest.Run(t, module, func(t *testing.T, s policytest.Slots) {
		if !s.QueueSort.Keyed() || !s.BackoffSort.Keyed() {
			t.Errorf("keyed: queue sort %v, backoff sort %v; want both", s.QueueSort.Keyed(), s.BackoffSort.Keyed())
		}
		t.Run("queue sort", func(t *testing.T) { testQueueSort(t, s.QueueSort) })
		t.Run("backoff sort", func(t *testing.T) { testBackoffSort(t, s.BackoffSort) })
		t.Run("may pop", func(t *testing.T) { testMayPop(t, s.BackoffSort) })
	})
}

func testQueueSort(t *testing.T, s policy.Sort) {
	pod := func(name string, prio int32, queued time.Duration) *abi.Pod {
		return policytest.MakePod().Name(name).Namespace("ns").Priority(prio).Queued(t0.Add(queued)).Obj()
	}
	checkOrder(t, s, []orderCase{
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
			name: "negative and extreme priorities",
			pods: []*abi.Pod{pod("min", math.MinInt32, 0), pod("minus1", -1, 0), pod("max", math.MaxInt32, 0), pod("zero", 0, 0)},
			want: []string{"max", "zero", "minus1", "min"},
		},
		{
			name: "the backoff expiry plays no part",
			pods: []*abi.Pod{at("expires-first", 1, 0), at("expires-last", 2, time.Hour)},
			want: []string{"expires-last", "expires-first"},
		},
		{
			name: "ties keep their order",
			pods: []*abi.Pod{pod("a", 2, time.Second), pod("b", 2, time.Second)},
			want: []string{"a", "b"},
		},
	})
}

func testBackoffSort(t *testing.T, s policy.Sort) {
	ms := time.Millisecond
	checkOrder(t, s, []orderCase{
		{
			// upstream backoff_queue_test.go TestBackoffQueueOrdering: pods
			// queued at t0-3s..t0 with a 1s backoff. Upstream pops the pods
			// whose window has passed (pod5, pod4, pod2, pod3); pod1 (window
			// t0) and pod0 (t0+1s) follow.
			name: "upstream TestBackoffQueueOrdering",
			pods: []*abi.Pod{
				backingOff("pod0", 1, t0, t0.Add(time.Second)),
				backingOff("pod1", 1, t0.Add(-time.Second), t0),
				backingOff("pod2", 2, t0.Add(-2*time.Second+ms), t0.Add(-time.Second+ms)),
				backingOff("pod3", 1, t0.Add(-2*time.Second), t0.Add(-time.Second)),
				backingOff("pod4", 2, t0.Add(-2*time.Second), t0.Add(-time.Second)),
				backingOff("pod5", 1, t0.Add(-3*time.Second), t0.Add(-2*time.Second)),
			},
			want: []string{"pod5", "pod4", "pod2", "pod3", "pod1", "pod0"},
		},
		{
			// KEP-5142 "Low priority pod could be chosen to pop, even if high
			// priority pod has a slightly later backoff expiration".
			name: "a low-priority pod whose backoff ends earlier in the same second is popped after a high-priority pod",
			pods: []*abi.Pod{at("low", 0, 100*ms), at("high", 100, 900*ms)},
			want: []string{"high", "low"},
		},
		{
			name: "different windows order by window whatever the priority",
			pods: []*abi.Pod{
				at("max-later", math.MaxInt32, 2*time.Second),
				at("zero-mid", 0, time.Second+999*ms),
				at("min-earlier", math.MinInt32, 0),
			},
			want: []string{"min-earlier", "zero-mid", "max-later"},
		},
		{
			// alignToWindow truncates: an expiry on a whole second opens
			// that window, one a nanosecond earlier is still in the last.
			name: "an expiry on a whole second belongs to the window it starts",
			pods: []*abi.Pod{
				at("boundary-high", 10, time.Second),
				at("just-before-low", 0, time.Second-1),
				at("inside-low", 0, 1500*ms),
			},
			want: []string{"just-before-low", "boundary-high", "inside-low"},
		},
		{
			// lessBackoffCompletedWithPriority falls back to activeQLessFn
			// (PrioritySort: the queue timestamp), not to the exact expiry
			// that KEP-5142's pseudocode compares: the cached expiry is
			// already truncated. Here the earlier-queued pod had a longer
			// backoff (more attempts) and expires later in the window.
			name: "equal window and priority: earlier queued first, even if its exact expiry is later",
			pods: []*abi.Pod{
				backingOff("queued-later-expires-first", 5, t0.Add(-800*ms), t0.Add(200*ms)),
				backingOff("queued-first-expires-later", 5, t0.Add(-3500*ms), t0.Add(500*ms)),
			},
			want: []string{"queued-first-expires-later", "queued-later-expires-first"},
		},
		{
			name: "equal window, priority and queued time: equal, order kept",
			pods: []*abi.Pod{
				backingOff("a", 5, t0, t0.Add(1900*ms)),
				backingOff("b", 5, t0, t0.Add(1100*ms)),
				backingOff("c", 5, t0, t0.Add(1000*ms)),
			},
			want: []string{"a", "b", "c"},
		},
		{
			name: "negative priorities within a window",
			pods: []*abi.Pod{at("minus10", -10, 300*ms), at("minus1", -1, 600*ms), at("min", math.MinInt32, 0)},
			want: []string{"minus1", "minus10", "min"},
		},
		{
			// Truncate measures from year 1, so before 1970 it floors:
			// -0.5s is in the window [-1s, 0), with -1s, not with +0.3s.
			name: "expiries before 1970 floor to their window; unset is Unix 0",
			pods: []*abi.Pod{
				backingOff("plus0.3-high", 9, time.Time{}, time.Unix(0, 300_000_000)),
				backingOff("minus0.5-low", 0, time.Time{}, time.Unix(0, -500_000_000)),
				backingOff("minus1.0-mid", 5, time.Time{}, time.Unix(-1, 0)),
				backingOff("minus1.5-low", 0, time.Time{}, time.Unix(0, -1_500_000_000)),
				policytest.MakePod().Name("unset-low").UnschedulablePlugins("X").Obj(),
			},
			want: []string{"minus1.5-low", "minus1.0-mid", "minus0.5-low", "plus0.3-high", "unset-low"},
		},
	})
}

func testMayPop(t *testing.T, s policy.BackoffSort) {
	cases := []struct {
		name string
		pod  *policytest.PodWrapper
		want bool
	}{
		{"after an unschedulable attempt", policytest.MakePod().Name("u").UnschedulablePlugins("NodeResourcesFit"), true},
		{"rejected by a Pending plugin only (upstream keeps it in entityBackoffQ)", policytest.MakePod().Name("p").PendingPlugins("DynamicResources"), true},
		{"rejected by several plugins", policytest.MakePod().Name("m").UnschedulablePlugins("NodeAffinity", "TaintToleration").PendingPlugins("X"), true},
		{"after an error", policytest.MakePod().Name("e").LastFailureError(), false},
		{"after an error, with stale rejecting plugins", policytest.MakePod().Name("e2").LastFailureError().UnschedulablePlugins("X").PendingPlugins("Y"), false},
		{"no rejecting plugin (e.g. no nodes registered): upstream's error heap", policytest.MakePod().Name("n").Attempts(1), false},
	}
	for _, c := range cases {
		if got := s.MayPop(c.pod.View()); got != c.want {
			t.Errorf("%s: MayPop = %v, want %v", c.name, got, c.want)
		}
	}
}

// randomPod draws pods whose fields collide often: few priorities (with the
// extremes), expiries on, just around and inside a few windows (before and
// after 1970, and unset), few queued times.
func randomPod(r *rand.Rand) *abi.Pod {
	prios := []int32{math.MinInt32, math.MinInt32 + 1, -100, -1, 0, 1, 100, math.MaxInt32 - 1, math.MaxInt32}
	offsets := []int64{0, 1, 500_000_000, 999_999_999, -1, -500_000_000, -999_999_999}
	p := &abi.Pod{Name: "p", Priority: prios[r.IntN(len(prios))]}
	switch r.IntN(10) {
	case 0:
		p.BackoffExpiry = 0
	case 1:
		p.BackoffExpiry = []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1}[r.IntN(4)]
	case 2:
		p.BackoffExpiry = r.Int64() - r.Int64()
	default:
		p.BackoffExpiry = int64(r.IntN(7)-3)*logic.WindowNanos + offsets[r.IntN(len(offsets))]
	}
	p.QueuedTime = int64(r.IntN(5)-2) * 250_000_000
	if r.IntN(8) == 0 {
		p.QueuedTime = r.Int64() - r.Int64()
	}
	p.LastFailureError = r.IntN(3) == 0
	if r.IntN(2) == 0 {
		p.UnschedulablePlugins = []string{"NodeResourcesFit"}
	}
	if r.IntN(3) == 0 {
		p.PendingPlugins = []string{"DynamicResources"}
	}
	return p
}

// upstreamBackoffLess is lessBackoffCompletedWithPriority written with the
// time package, as upstream computes it: truncate both expiries to the
// window, compare, else PrioritySort.
func upstreamBackoffLess(a, b *abi.Pod) bool {
	boA := time.Unix(0, a.BackoffExpiry).Truncate(time.Second)
	boB := time.Unix(0, b.BackoffExpiry).Truncate(time.Second)
	if !boA.Equal(boB) {
		return boA.Before(boB)
	}
	return a.Priority > b.Priority || (a.Priority == b.Priority && time.Unix(0, a.QueuedTime).Before(time.Unix(0, b.QueuedTime)))
}

func TestWindowIsTimeTruncate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(ns int64) {
		t.Helper()
		want := time.Unix(0, ns).Truncate(time.Second)
		if got := logic.Window(ns); got != want.Unix() || want.Nanosecond() != 0 {
			t.Fatalf("Window(%d) = %d, time.Truncate says %d", ns, got, want.Unix())
		}
	}
	for _, ns := range []int64{0, 1, -1, logic.WindowNanos, logic.WindowNanos - 1, -logic.WindowNanos, -logic.WindowNanos + 1, -logic.WindowNanos - 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		check(ns)
	}
	for range 100_000 {
		check(r.Int64() - r.Int64())
		check(int64(r.IntN(2001)-1000)*logic.WindowNanos + int64(r.IntN(3)-1))
	}
}

// TestKeysOrderAsLess checks, on random pods, that each slot's key orders
// exactly as its less, that the less is a strict weak order, and that the
// backoff less is upstream's computed with time.Time.
func TestKeysOrderAsLess(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 20_000
	equal := 0
	for i := range n {
		pa := randomPod(r)
		var pb *abi.Pod
		if i%4 == 0 {
			// a near twin: same everything but one field, or nothing
			c := *pa
			pb = &c
			switch r.IntN(4) {
			case 0:
				pb.BackoffExpiry += int64(r.IntN(3) - 1)
			case 1:
				pb.Priority = randomPod(r).Priority
			case 2:
				pb.QueuedTime++
			}
		} else {
			pb = randomPod(r)
		}
		a, b := policytest.PodView(pa), policytest.PodView(pb)
		for _, s := range []struct {
			name string
			less func(a, b abi.PodView) bool
			key  func(abi.PodView) abi.SortKey
		}{
			{"queue sort", logic.QueueLess, logic.QueueKey},
			{"backoff sort", logic.BackoffLess, logic.BackoffKey},
		} {
			ab, ba := s.less(a, b), s.less(b, a)
			ka, kb := s.key(a), s.key(b)
			if ab && ba {
				t.Fatalf("%s: both less(a, b) and less(b, a) for\n%+v\n%+v", s.name, pa, pb)
			}
			if ka.Less(kb) != ab || kb.Less(ka) != ba {
				t.Fatalf("%s: keys disagree with less: less %v/%v, keys %v/%v for\n%+v\n%+v", s.name, ab, ba, ka.Less(kb), kb.Less(ka), pa, pb)
			}
			if s.less(a, a) {
				t.Fatalf("%s: less(a, a) for %+v", s.name, pa)
			}
			if !ab && !ba {
				equal++
			}
		}
		if got, want := logic.BackoffLess(a, b), upstreamBackoffLess(pa, pb); got != want {
			t.Fatalf("BackoffLess = %v, upstream's less says %v for\n%+v\n%+v", got, want, pa, pb)
		}
	}
	t.Logf("%d pairs, %d of the comparisons equal", n, equal)
	if equal == 0 {
		t.Error("no equal pairs drawn: the generator does not exercise ties")
	}
}

// TestQueueSortIsHostDefault checks that the queue sort is the host's native
// PrioritySort, key for key.
func TestQueueSortIsHostDefault(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	host := policy.PrioritySort{}
	for range 10_000 {
		a, b := policytest.PodView(randomPod(r)), policytest.PodView(randomPod(r))
		if got, want := logic.QueueLess(a, b), host.Less(a, b); got != want {
			t.Fatalf("QueueLess = %v, host says %v", got, want)
		}
		if got, want := logic.QueueKey(a), host.Key(a); got != want {
			t.Fatalf("QueueKey = %v, host says %v", got, want)
		}
	}
}

func TestNoAllocations(t *testing.T) {
	a := policytest.PodView(backingOff("a", 3, t0, t0.Add(time.Second)))
	b := policytest.PodView(backingOff("b", 4, t0, t0.Add(1500*time.Millisecond)))
	var sink bool
	var key abi.SortKey
	for name, f := range map[string]func(){
		"QueueLess":   func() { sink = logic.QueueLess(a, b) },
		"QueueKey":    func() { key = logic.QueueKey(a) },
		"BackoffLess": func() { sink = logic.BackoffLess(a, b) },
		"BackoffKey":  func() { key = logic.BackoffKey(a) },
		"MayPop":      func() { sink = logic.MayPop(a) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
	_, _ = sink, key
}
