package victim

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.SlotVictimOrder.RequiredExports()...)
}

func byPriority(a, b abi.Victim) bool { return a.Priority > b.Priority }

func batchOf(t testing.TB, vs []abi.Victim) abi.VictimBatchView {
	t.Helper()
	b, err := abi.ReadVictimBatch(abi.AppendVictimBatch(nil, nil, vs))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func victims(prios ...int32) []abi.Victim {
	var vs []abi.Victim
	for i, p := range prios {
		vs = append(vs, abi.Victim{Priority: p, UID: "v" + strconv.Itoa(i)})
	}
	return vs
}

func TestOrder(t *testing.T) {
	cases := []struct {
		name  string
		prios []int32
		want  []uint32
	}{
		{"empty", nil, []uint32{}},
		{"one", []int32{3}, []uint32{0}},
		{"most important first", []int32{1, 9, 5}, []uint32{1, 2, 0}},
		{"ties keep batch order", []int32{5, 9, 5, 9, 5}, []uint32{1, 3, 0, 2, 4}},
		{"all equal", []int32{2, 2, 2, 2}, []uint32{0, 1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := victims(c.prios...)
			got := make([]uint32, len(vs))
			Order(byPriority, batchOf(t, vs), got, nil)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Order (-want, +got):\n%s", diff)
			}
			native := make([]uint32, len(vs))
			OrderVictims(byPriority, vs, native)
			if diff := cmp.Diff(c.want, native); diff != "" {
				t.Errorf("OrderVictims (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestOrderIsStable compares with the standard library's stable sort on
// random batches of many sizes (around the run length and its doublings)
// with many ties.
func TestOrderIsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{2, 3, 15, 16, 17, 31, 32, 33, 47, 64, 65, 100, 127, 128, 129, 300, 1000, 1025} {
		for _, distinct := range []int{1, 2, 5, 1000} {
			prios := make([]int32, n)
			for i := range prios {
				prios[i] = int32(r.IntN(distinct))
			}
			vs := victims(prios...)
			want := make([]uint32, n)
			for i := range want {
				want[i] = uint32(i)
			}
			slices.SortStableFunc(want, func(i, j uint32) int {
				switch {
				case byPriority(vs[i], vs[j]):
					return -1
				case byPriority(vs[j], vs[i]):
					return 1
				}
				return 0
			})
			got := make([]uint32, n)
			Order(byPriority, batchOf(t, vs), got, nil)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("n=%d, %d distinct priorities: Order (-want, +got):\n%s", n, distinct, diff)
			}
		}
	}
}

func TestOrderDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	prios := make([]int32, 200)
	for i := range prios {
		prios[i] = int32(r.IntN(10))
	}
	vs := victims(prios...)
	batch := batchOf(t, vs)
	order := make([]uint32, len(vs))
	scratch := Order(byPriority, batch, order, nil)
	if allocs := testing.AllocsPerRun(50, func() { scratch = Order(byPriority, batch, order, scratch) }); allocs != 0 {
		t.Errorf("Order allocates %v times per call, want 0", allocs)
	}
	if allocs := testing.AllocsPerRun(50, func() { OrderVictims(byPriority, vs, order) }); allocs != 0 {
		t.Errorf("OrderVictims allocates %v times per call, want 0", allocs)
	}
}

func BenchmarkOrder(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			prios := make([]int32, n)
			for i := range prios {
				prios[i] = int32(r.IntN(50))
			}
			batch := batchOf(b, victims(prios...))
			order := make([]uint32, n)
			var scratch []abi.Victim
			b.ReportAllocs()
			for b.Loop() {
				scratch = Order(byPriority, batch, order, scratch)
			}
		})
	}
}

func TestRegisterNilPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register(nil) did not panic")
		}
	}()
	Register(nil)
}
