package framework_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wasmsched/wasmsched/host/cache"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		percentage, numAll, want int32
	}{
		{0, 0, 0},
		{0, 10, 10},
		{0, 99, 99},       // under 100: all
		{1, 99, 99},       // whatever the percentage
		{0, 100, 100},     // 50% = 50, at least 100
		{0, 200, 100},     // 49% = 98, at least 100
		{0, 250, 120},     // 48%
		{0, 1000, 420},    // 50 - 1000/125 = 42%
		{0, 5000, 500},    // 50 - 40 = 10%
		{0, 5624, 337},    // 50 - 44 = 6%
		{0, 5999, 299},    // 50 - 47 = 3%, at least 5%: 299
		{0, 6000, 300},    // 50 - 48 = 2%, at least 5%
		{0, 10000, 500},   // 5%
		{10, 1000, 100},   // configured
		{30, 1000, 300},   // configured
		{100, 1000, 1000}, // all
		{50, 150, 100},    // 75, at least 100
		{5, 3000, 150},
	}
	for _, tc := range tests {
		if got := NumFeasibleNodesToFind(tc.percentage, tc.numAll); got != tc.want {
			t.Errorf("NumFeasibleNodesToFind(%d, %d) = %d, want %d", tc.percentage, tc.numAll, got, tc.want)
		}
	}
}

// evenNodes returns n nodes named n0..n<n-1>, the odd ones unschedulable.
func evenNodes(n int) []*cache.NodeInfo {
	out := make([]*cache.NodeInfo, n)
	for i := range out {
		b := ft.MakeNode(fmt.Sprintf("n%d", i))
		if i%2 == 1 {
			b.Unschedulable()
		}
		out[i] = b.Info()
	}
	return out
}

func TestFindFeasible(t *testing.T) {
	SetHandOffWorth(t, 0) // with workers > 1, the helpers start after the first chunk
	tests := []struct {
		name         string
		pod          *ft.PodBuilder
		nodes        int
		start, want  int
		wantFeasible []string
		wantRejected []string
		wantNext     int
		wantMessage  string
	}{
		{name: "stops at want", pod: ft.MakePod(), nodes: 10, start: 0, want: 2,
			wantFeasible: []string{"n0", "n2"}, wantRejected: []string{"n1"}, wantNext: 3},
		{name: "starts where the last cycle stopped", pod: ft.MakePod(), nodes: 10, start: 3, want: 2,
			wantFeasible: []string{"n4", "n6"}, wantRejected: []string{"n3", "n5"}, wantNext: 7},
		{name: "wraps around", pod: ft.MakePod(), nodes: 10, start: 9, want: 2,
			wantFeasible: []string{"n0", "n2"}, wantRejected: []string{"n1", "n9"}, wantNext: 3},
		{name: "a start beyond the list wraps", pod: ft.MakePod(), nodes: 10, start: 23, want: 1,
			wantFeasible: []string{"n4"}, wantRejected: []string{"n3"}, wantNext: 5},
		{name: "want 0 is every node", pod: ft.MakePod(), nodes: 6, start: 2, want: 0,
			wantFeasible: []string{"n2", "n4", "n0"}, wantRejected: []string{"n1", "n3", "n5"}, wantNext: 2},
		{name: "nothing fits", pod: ft.MakePod().Selector("zone", "x"), nodes: 4, start: 1, want: 100,
			wantRejected: []string{"n0", "n1", "n2", "n3"}, wantNext: 1,
			wantMessage: "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) were unschedulable."},
		{name: "restricted to named nodes", pod: ft.MakePod().Required(ft.NameTerm("n3"), ft.NameTerm("n4"), ft.NameTerm("gone")), nodes: 10, start: 5, want: 100,
			wantFeasible: []string{"n4"}, wantRejected: []string{"n3"}, wantNext: 7},
		{name: "restricted, nothing fits", pod: ft.MakePod().Required(ft.NameTerm("n3")), nodes: 10, start: 0, want: 100,
			wantRejected: []string{"n3"}, wantNext: 1,
			wantMessage: "0/10 nodes are available: 1 node(s) were unschedulable, 9 node(s) didn't satisfy plugin(s) [NodeAffinity]."},
		{name: "restricted to a node that is gone", pod: ft.MakePod().Required(ft.NameTerm("gone")), nodes: 3, start: 2, want: 100,
			wantNext: 2, wantMessage: "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."},
	}
	for _, tc := range tests {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				nodes := evenNodes(tc.nodes)
				var d Diagnosis
				feasible, next := FindFeasible(context.Background(), state(tc.pod), nodes, tc.start, tc.want, workers, &d)
				if diff := cmp.Diff(tc.wantFeasible, ft.Names(feasible), cmpopts.EquateEmpty()); workers == 1 && diff != "" {
					t.Errorf("feasible (-want, +got):\n%s", diff)
				}
				if workers == 1 {
					var rejected []string
					for _, n := range nodes {
						if d.Rejected(n.Name()) {
							rejected = append(rejected, n.Name())
						}
					}
					if diff := cmp.Diff(tc.wantRejected, rejected); diff != "" {
						t.Errorf("rejected (-want, +got):\n%s", diff)
					}
					if next != tc.wantNext {
						t.Errorf("next = %d, want %d", next, tc.wantNext)
					}
				}
				if len(feasible) != len(tc.wantFeasible) {
					t.Errorf("%d feasible nodes, want %d", len(feasible), len(tc.wantFeasible))
				}
				if tc.wantMessage != "" {
					if diff := cmp.Diff(tc.wantMessage, d.Message(len(nodes))); diff != "" {
						t.Errorf("Message (-want, +got):\n%s", diff)
					}
				}
			})
		}
	}
}

// TestFindFeasibleWorkersAgree: without an early stop, the parallel search
// finds what the sequential one does, in the same order.
func TestFindFeasibleWorkersAgree(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var bs []*ft.NodeBuilder
	for i := range 1000 {
		b := ft.MakeNode(fmt.Sprintf("n%d", i), "cpu", "1", "memory", "1Gi")
		switch rnd.IntN(4) {
		case 0:
			b.Unschedulable()
		case 1:
			b.With(ft.MakePod().Req("cpu", "900m"))
		case 2:
			b.Label("zone", "b")
		}
		bs = append(bs, b)
	}
	nodes := ft.Infos(bs...)
	ps := state(ft.MakePod().Req("cpu", "200m"))
	type result struct {
		Feasible []string
		Next     int
		Message  string
		Plugins  []string
	}
	run := func(workers, want int) result {
		var d Diagnosis
		f, next := FindFeasible(context.Background(), ps, nodes, 123, want, workers, &d)
		return result{ft.Names(f), next, d.Message(len(nodes)), d.UnschedulablePlugins()}
	}
	seq := run(1, 0)
	if len(seq.Feasible) == 0 || len(seq.Feasible) == len(nodes) {
		t.Fatalf("bad fixture: %d feasible", len(seq.Feasible))
	}
	// Whether the helpers start after the first chunk (0) or never (an
	// hour) or as the pace says, the result is the same.
	for _, worth := range []time.Duration{0, time.Hour, 50 * time.Microsecond} {
		SetHandOffWorth(t, worth)
		for _, workers := range []int{2, 4, 16} {
			for _, want := range []int{0, len(nodes)} {
				if diff := cmp.Diff(seq, run(workers, want)); diff != "" {
					t.Errorf("hand-off at %v, workers=%d want=%d (-sequential, +parallel):\n%s", worth, workers, want, diff)
				}
			}
		}
	}
	SetHandOffWorth(t, 0)

	// Into a slice used before (stale nodes in it, room for all): the same
	// result, in that slice's array.
	for _, workers := range []int{1, 4} {
		buf := slices.Repeat([]*cache.NodeInfo{nodes[0]}, len(nodes))
		var d Diagnosis
		f, next := FindFeasibleInto(context.Background(), buf, ps, nodes, 123, 0, workers, &d)
		if diff := cmp.Diff(seq, result{ft.Names(f), next, d.Message(len(nodes)), d.UnschedulablePlugins()}); diff != "" {
			t.Errorf("into a used slice, workers=%d (-fresh, +reused):\n%s", workers, diff)
		}
		if &f[0] != &buf[0] {
			t.Errorf("workers=%d: the feasible nodes are not in the slice passed", workers)
		}
	}

	// With an early stop, the parallel search returns want nodes, all
	// feasible, and accounts for what it processed.
	for range 20 {
		var d Diagnosis
		f, next := FindFeasible(context.Background(), ps, nodes, 123, 50, 4, &d)
		if len(f) != 50 {
			t.Fatalf("found %d nodes, want 50", len(f))
		}
		for _, n := range f {
			if Filter(ps, n) != nil {
				t.Fatalf("node %s is not feasible", n.Name())
			}
		}
		if want := (123 + 50 + d.Len()) % len(nodes); next != want {
			t.Fatalf("next = %d, want %d", next, want)
		}
	}
}

func TestFindFeasibleErrors(t *testing.T) {
	SetHandOffWorth(t, 0)
	nodes := evenNodes(4)
	nodes[2] = ft.MakeNode("n2").InfoWithoutNode()
	for _, workers := range []int{1, 4} {
		var d Diagnosis
		f, _ := FindFeasible(context.Background(), state(ft.MakePod()), nodes, 1, 0, workers, &d)
		if f != nil || d.Err() == nil {
			t.Errorf("workers=%d: feasible %v, err %v; want none and an error", workers, ft.Names(f), d.Err())
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, workers := range []int{1, 4} {
		var d Diagnosis
		if f, _ := FindFeasible(ctx, state(ft.MakePod()), evenNodes(10), 0, 0, workers, &d); len(f) != 0 {
			t.Errorf("workers=%d: found %v after cancel", workers, ft.Names(f))
		}
	}

	var d Diagnosis
	if f, next := FindFeasible(context.Background(), state(ft.MakePod()), nil, 5, 1, 1, &d); f != nil || next != 0 {
		t.Errorf("no nodes: %v, %d", f, next)
	}
}

func TestSelectHost(t *testing.T) {
	nodes := evenNodes(6)
	scores := []int64{5, 9, 9, 3, 9, 8}
	rnd := rand.New(rand.NewPCG(42, 42))
	counts := map[string]int{}
	const draws = 30000
	for range draws {
		counts[SelectHost(nodes, scores, rnd).Name()]++
	}
	if len(counts) != 3 || counts["n0"]+counts["n3"]+counts["n5"] != 0 {
		t.Fatalf("picked %v, want only n1, n2 and n4", counts)
	}
	for _, n := range []string{"n1", "n2", "n4"} {
		if c := counts[n]; c < draws/3*95/100 || c > draws/3*105/100 {
			t.Errorf("%s picked %d times of %d, want about a third", n, c, draws)
		}
	}
	if got := SelectHost(nodes, scores, nil); got.Name() != "n1" {
		t.Errorf("without rand: %s, want the first best, n1", got.Name())
	}
	if got := SelectHost(nil, nil, rnd); got != nil {
		t.Errorf("no nodes: %v", got)
	}
	if got := SelectHost(nodes[:1], []int64{-1}, rnd); got != nodes[0] {
		t.Errorf("one node with a negative score: %v", got)
	}
}

// TestHandOff: filterParallel starts its helpers once the chunks left
// would take handOffWorth (50 µs) or more at the pace so far.
func TestHandOff(t *testing.T) {
	tests := []struct {
		elapsed    time.Duration
		done, left int
		want       bool
	}{
		{time.Microsecond, 1, 20, false},     // a plain pod: 20 µs left
		{10 * time.Microsecond, 1, 20, true}, // 200 µs left
		{10 * time.Microsecond, 4, 20, true}, // 50 µs left
		{10 * time.Microsecond, 5, 20, false},
		{time.Hour, 1, 0, false}, // nothing left
		{0, 0, 3, false},
	}
	for _, tc := range tests {
		if got := HandOff(tc.elapsed, tc.done, tc.left); got != tc.want {
			t.Errorf("HandOff(%v, %d done, %d left) = %v, want %v", tc.elapsed, tc.done, tc.left, got, tc.want)
		}
	}
}
