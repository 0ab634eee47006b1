package queue

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

func heapEntity(t testing.TB, p abi.Pod) *entity {
	t.Helper()
	v, err := abi.ReadPod(abi.AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	e := &entity{view: v}
	e.init()
	return e
}

// lessOnly hides the Keyer of a sort so the heap compares with Less.
type lessOnly struct{ policy.Sort }

// fifo orders by queued time only; unkeyed.
type fifo struct{}

func (fifo) Less(a, b abi.PodView) bool { return a.QueuedTime() < b.QueuedTime() }

// byPriority orders by priority only, so equal priorities tie; unkeyed.
type byPriority struct{}

func (byPriority) Less(a, b abi.PodView) bool { return a.Priority() > b.Priority() }

// byPriorityKey is byPriority with keys.
type byPriorityKey struct{ byPriority }

func (byPriorityKey) Keyed() bool { return true }
func (byPriorityKey) Key(p abi.PodView) abi.SortKey {
	return abi.SortKey{abi.Desc(int64(p.Priority()))}
}

func randomEntities(t *testing.T, n int, seed uint64) []*entity {
	r := rand.New(rand.NewPCG(seed, seed))
	es := make([]*entity, n)
	for i := range es {
		es[i] = heapEntity(t, abi.Pod{Name: string(rune('a' + i%26)), Priority: int32(r.IntN(5)), QueuedTime: int64(i)})
	}
	return es
}

func drain(h *heap) []int64 {
	var out []int64
	for h.len() > 0 {
		out = append(out, h.pop().view.QueuedTime())
	}
	return out
}

func sortedOrder(es []*entity, s ...policy.Sort) []int64 {
	c := slices.Clone(es)
	slices.SortStableFunc(c, func(a, b *entity) int {
		for _, s := range s {
			switch {
			case s.Less(a.view, b.view):
				return -1
			case s.Less(b.view, a.view):
				return 1
			}
		}
		return 0
	})
	var out []int64
	for _, e := range c {
		out = append(out, e.view.QueuedTime())
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
			es := randomEntities(t, 500, 7)
			h := newHeap(tc.sort, nil)
			if h.keyed() != tc.keyed {
				t.Fatalf("keyed() = %v, want %v", h.keyed(), tc.keyed)
			}
			for _, e := range es {
				h.push(e)
			}
			// PrioritySort with distinct queued times is a total order, so the
			// pop order is fully determined.
			if diff := cmp.Diff(sortedOrder(es, policy.PrioritySort{}), drain(h)); diff != "" {
				t.Errorf("pop order (-want, +got):\n%s", diff)
			}
			for _, e := range es {
				if e.hidx != -1 {
					t.Fatalf("popped entity keeps index %d", e.hidx)
				}
			}
		})
	}
}

// TestHeapTieBreak: entries the primary order ranks equal are ordered by the
// tie-break, keyed or not, whichever of the two is keyed.
func TestHeapTieBreak(t *testing.T) {
	for _, tc := range []struct {
		name         string
		primary, tie policy.Sort
	}{
		{"keyed/keyed", byPriorityKey{}, policy.PrioritySort{}},
		{"keyed/less", byPriorityKey{}, fifo{}},
		{"less/keyed", byPriority{}, policy.PrioritySort{}},
		{"less/less", byPriority{}, fifo{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := randomEntities(t, 400, 5)
			h := newHeap(tc.primary, tc.tie)
			for _, e := range es {
				h.push(e)
			}
			if diff := cmp.Diff(sortedOrder(es, byPriority{}, fifo{}), drain(h)); diff != "" {
				t.Errorf("pop order (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestHeapRemoveAndFix(t *testing.T) {
	es := randomEntities(t, 200, 3)
	h := newHeap(policy.PrioritySort{}, nil)
	for _, e := range es {
		h.push(e)
	}
	var kept []*entity
	for i, e := range es {
		if i%3 == 0 {
			if !h.remove(e) {
				t.Fatalf("remove(%d) = false", i)
			}
			if h.remove(e) {
				t.Fatalf("second remove(%d) = true", i)
			}
			continue
		}
		kept = append(kept, e)
	}
	// Raise the priority of some entities; fix must move them.
	for i, e := range kept {
		if i%4 == 0 {
			var p abi.Pod
			if err := e.view.Decode(&p); err != nil {
				t.Fatal(err)
			}
			p.Priority += 10
			e.view, _ = abi.ReadPod(abi.AppendPod(nil, &p))
			h.fix(e)
		}
	}
	if diff := cmp.Diff(sortedOrder(kept, policy.PrioritySort{}), drain(h)); diff != "" {
		t.Errorf("pop order after remove/fix (-want, +got):\n%s", diff)
	}
	if h.pop() != nil || h.peek() != nil {
		t.Error("empty heap must return nil")
	}
}

func TestHeapSetSortsResorts(t *testing.T) {
	es := randomEntities(t, 300, 11)
	h := newHeap(policy.PrioritySort{}, nil)
	for _, e := range es {
		h.push(e)
	}
	h.setSorts(fifo{}, nil)
	if h.keyed() {
		t.Fatal("fifo is not keyed")
	}
	if diff := cmp.Diff(sortedOrder(es, fifo{}), drain(h)); diff != "" {
		t.Errorf("after swapping to FIFO (-want, +got):\n%s", diff)
	}
	for _, e := range es {
		h.push(e)
	}
	h.setSorts(policy.PrioritySort{}, nil)
	if !h.keyed() {
		t.Fatal("PrioritySort is keyed")
	}
	if diff := cmp.Diff(sortedOrder(es, policy.PrioritySort{}), drain(h)); diff != "" {
		t.Errorf("after swapping back to priority (-want, +got):\n%s", diff)
	}
}
