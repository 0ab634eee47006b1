package queue

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

func item(t testing.TB, p abi.Pod) *Item {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	return NewItem(v)
}

// lessOnly hides the Keyer of a sort so the heap compares with Less.
type lessOnly struct{ policy.Sort }

// fifo orders by queued time only; unkeyed.
type fifo struct{}

func (fifo) Less(a, b abi.PodView) bool { return a.QueuedTime() < b.QueuedTime() }

func randomItems(t *testing.T, n int, seed uint64) []*Item {
	r := rand.New(rand.NewPCG(seed, seed))
	its := make([]*Item, n)
	for i := range its {
		its[i] = item(t, abi.Pod{Name: string(rune('a' + i%26)), Priority: int32(r.IntN(5)), QueuedTime: int64(i)})
	}
	return its
}

func drain(h *Heap) []int64 {
	var out []int64
	for h.Len() > 0 {
		out = append(out, h.Pop().View().QueuedTime())
	}
	return out
}

func sortedOrder(its []*Item, s policy.Sort) []int64 {
	c := slices.Clone(its)
	slices.SortStableFunc(c, func(a, b *Item) int {
		switch {
		case s.Less(a.view, b.view):
			return -1
		case s.Less(b.view, a.view):
			return 1
		}
		return 0
	})
	var out []int64
	for _, it := range c {
		out = append(out, it.view.QueuedTime())
	}
	return out
}

func TestHeapOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sort  policy.Sort
		keyed bool
	}{
		{"keyed", policy.PrioritySort{}, true},
		{"less", lessOnly{policy.PrioritySort{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			its := randomItems(t, 500, 7)
			h := NewHeap(tc.sort)
			if h.Keyed() != tc.keyed {
				t.Fatalf("Keyed() = %v, want %v", h.Keyed(), tc.keyed)
			}
			for _, it := range its {
				h.Push(it)
			}
			// PrioritySort with distinct queued times is a total order, so the
			// pop order is fully determined.
			if diff := cmp.Diff(sortedOrder(its, policy.PrioritySort{}), drain(h)); diff != "" {
				t.Errorf("pop order (-want, +got):\n%s", diff)
			}
			for _, it := range its {
				if it.index != -1 {
					t.Fatalf("popped item keeps index %d", it.index)
				}
			}
		})
	}
}

func TestHeapRemoveAndFix(t *testing.T) {
	its := randomItems(t, 200, 3)
	h := NewHeap(policy.PrioritySort{})
	for _, it := range its {
		h.Push(it)
	}
	var kept []*Item
	for i, it := range its {
		if i%3 == 0 {
			if !h.Remove(it) {
				t.Fatalf("Remove(%d) = false", i)
			}
			if h.Remove(it) {
				t.Fatalf("second Remove(%d) = true", i)
			}
			continue
		}
		kept = append(kept, it)
	}
	// Raise the priority of some items; Fix must move them.
	for i, it := range kept {
		if i%4 == 0 {
			var p abi.Pod
			if err := it.view.Decode(&p); err != nil {
				t.Fatal(err)
			}
			p.Priority += 10
			v, _ := abi.ReadPod(abi.AppendPod(nil, &p))
			it.SetView(v)
			h.Fix(it)
		}
	}
	if diff := cmp.Diff(sortedOrder(kept, policy.PrioritySort{}), drain(h)); diff != "" {
		t.Errorf("pop order after Remove/Fix (-want, +got):\n%s", diff)
	}
	if h.Pop() != nil || h.Peek() != nil {
		t.Error("empty heap must return nil")
	}
}

func TestHeapSetSortResorts(t *testing.T) {
	its := randomItems(t, 300, 11)
	h := NewHeap(policy.PrioritySort{})
	for _, it := range its {
		h.Push(it)
	}
	h.SetSort(fifo{})
	if h.Keyed() {
		t.Fatal("fifo is not keyed")
	}
	if diff := cmp.Diff(sortedOrder(its, fifo{}), drain(h)); diff != "" {
		t.Errorf("after swapping to FIFO (-want, +got):\n%s", diff)
	}
	for _, it := range its {
		h.Push(it)
	}
	h.SetSort(policy.PrioritySort{})
	if !h.Keyed() {
		t.Fatal("PrioritySort is keyed")
	}
	if diff := cmp.Diff(sortedOrder(its, policy.PrioritySort{}), drain(h)); diff != "" {
		t.Errorf("after swapping back to priority (-want, +got):\n%s", diff)
	}
}
