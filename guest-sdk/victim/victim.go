// Package victim implements the victim-order slot of preemption in a policy
// module. Importing it makes the module export [abi.ExportVictimOrder];
// [Register] gives the importance relation it sorts by.
//
// The host sends all candidate victims in one batch; the module answers with
// their indices, most important (preempted last, reprieved first) first.
package victim

import "github.com/wasmsched/wasmsched/abi"

// More reports whether victim a is more important than victim b. It must be
// a strict weak order; victims neither of which is more important keep their
// batch order.
type More func(a, b abi.Victim) bool

var registered More

// Register makes more the module's importance relation, replacing any
// earlier one. Call it from an init function. It panics if more is nil.
func Register(more More) {
	if more == nil {
		panic("victim.Register: nil func")
	}
	registered = more
}

// Order writes into order the indices 0..len(order)-1 of the batch's
// victims, stable-sorted by importance, most important first; order must
// have batch.Len() entries. The victims are read once, into scratch (grown
// when too short; their strings alias the batch), which Order returns for
// reuse: reading a victim costs far more than comparing two, so sorting does
// not read them per comparison. With a reused scratch Order does not
// allocate. This is the logic of the [abi.ExportVictimOrder] export.
func Order(more More, batch abi.VictimBatchView, order []uint32, scratch []abi.Victim) []abi.Victim {
	scratch = scratch[:0]
	for i := range batch.Len() {
		scratch = append(scratch, batch.At(i))
	}
	OrderVictims(more, scratch, order)
	return scratch
}

// OrderVictims is [Order] for victims already read (the host's native
// VictimOrder interface); order has len(victims) entries.
func OrderVictims(more More, victims []abi.Victim, order []uint32) {
	sortStable(sorter{victims, more, order[:min(len(order), len(victims))]})
}

type sorter struct {
	victims []abi.Victim
	more    More
	order   []uint32
}

// less reports whether the victim at position i of order sorts before the
// one at position j.
func (s sorter) less(i, j int) bool {
	return s.more(s.victims[s.order[i]], s.victims[s.order[j]])
}

func (s sorter) swap(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] }

// reverse reverses order[a:b].
func (s sorter) reverse(a, b int) {
	for b--; a < b; a, b = a+1, b-1 {
		s.swap(a, b)
	}
}

// block is the length of the runs sorted by insertion before merging.
const block = 16

// sortStable initialises order to the identity and stable-sorts it in place
// without allocating: binary insertion sort of short runs (few comparisons,
// which are the costly part: each decodes two victims and calls the policy),
// then in-place stable merges of runs of doubling length (SymMerge, Kim and
// Kutzner 2004), like the standard library's stable sort, which cannot be
// used here: its closure-based API may allocate under TinyGo.
func sortStable(s sorter) {
	n := len(s.order)
	for i := range s.order {
		s.order[i] = uint32(i)
	}
	for a := 0; a < n; a += block {
		s.insertion(a, min(a+block, n))
	}
	for size := block; size < n; size *= 2 {
		for a := 0; a+size < n; a += 2 * size {
			s.symMerge(a, a+size, min(a+2*size, n))
		}
	}
}

// insertion sorts order[a:b] by binary insertion, stably.
func (s sorter) insertion(a, b int) {
	for i := a + 1; i < b; i++ {
		// The first position in [a, i) whose victim sorts after order[i]:
		// inserting there keeps equal victims in their order.
		lo, hi := a, i
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if s.less(i, h) {
				hi = h
			} else {
				lo = h + 1
			}
		}
		if lo < i {
			x := s.order[i]
			copy(s.order[lo+1:i+1], s.order[lo:i])
			s.order[lo] = x
		}
	}
}

// symMerge merges the sorted runs order[a:m] and order[m:b] in place, stably.
func (s sorter) symMerge(a, m, b int) {
	if a >= m || m >= b {
		return
	}
	if !s.less(m, m-1) {
		return // already in order
	}
	if m-a == 1 {
		// Move order[a] after every element of [m, b) that does not sort after it.
		lo, hi := m, b
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if s.less(h, a) {
				lo = h + 1
			} else {
				hi = h
			}
		}
		s.rotate(a, m, lo)
		return
	}
	if b-m == 1 {
		// Move order[m] before the first element of [a, m) that sorts after it.
		lo, hi := a, m
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if s.less(m, h) {
				hi = h
			} else {
				lo = h + 1
			}
		}
		s.rotate(lo, m, b)
		return
	}
	mid := int(uint(a+b) >> 1)
	n := mid + m
	var start, r int
	if m > mid {
		start, r = n-b, mid
	} else {
		start, r = a, m
	}
	p := n - 1
	for start < r {
		c := int(uint(start+r) >> 1)
		if !s.less(p-c, c) {
			start = c + 1
		} else {
			r = c
		}
	}
	end := n - start
	if start < m && m < end {
		s.rotate(start, m, end)
	}
	if a < start && start < mid {
		s.symMerge(a, start, mid)
	}
	if mid < end && end < b {
		s.symMerge(mid, end, b)
	}
}

// rotate swaps the blocks order[a:m] and order[m:b].
func (s sorter) rotate(a, m, b int) {
	s.reverse(a, m)
	s.reverse(m, b)
	s.reverse(a, b)
}
