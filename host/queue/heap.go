package queue

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// order is one sort of a heap: a policy.Sort, and its Keyer when the sort
// computes keys (then the heap compares cached keys natively).
type order struct {
	sort  policy.Sort
	keyer policy.Keyer // nil when comparing with Less
}

func newOrder(s policy.Sort) order {
	o := order{sort: s}
	if k, ok := s.(policy.Keyer); ok && k.Keyed() {
		o.keyer = k
	}
	return o
}

// heapEntry keeps the sort keys next to the entity so that a keyed heap
// compares without dereferencing entities (no cache miss per comparison).
type heapEntry struct {
	key abi.SortKey // primary order's key (zero when it is not keyed)
	tie abi.SortKey // tie-break order's key (zero when absent or not keyed)
	e   *entity
}

// heap is a binary min-heap of entities ordered by a primary sort and, for
// entries the primary sort ranks equal, an optional tie-break sort (the
// backoff heap breaks ties inside an ordering window with the queue sort,
// as upstream does). A keyed sort's key is computed once per push or fix,
// so comparisons are native; an unkeyed sort is called per comparison.
//
// An entity is in at most one heap; e.hidx is its position there (-1 when
// in none). Not safe for concurrent use: the queue serialises access under
// Queue.amu.
type heap struct {
	primary order
	tie     order // zero when the heap has no tie-break
	es      []heapEntry
}

func newHeap(primary, tie policy.Sort) *heap {
	h := &heap{primary: newOrder(primary)}
	if tie != nil {
		h.tie = newOrder(tie)
	}
	return h
}

// setSorts switches the orders (a nil tie keeps none) and re-sorts the heap
// in O(n), plus one key computation per entry and keyed order.
func (h *heap) setSorts(primary, tie policy.Sort) {
	h.primary = newOrder(primary)
	h.tie = order{}
	if tie != nil {
		h.tie = newOrder(tie)
	}
	for i := range h.es {
		h.keys(&h.es[i])
	}
	for i := len(h.es)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// keyed reports whether the primary order compares native keys.
func (h *heap) keyed() bool { return h.primary.keyer != nil }

func (h *heap) len() int { return len(h.es) }

func (h *heap) has(e *entity) bool {
	return e.hidx >= 0 && e.hidx < len(h.es) && h.es[e.hidx].e == e
}

func (h *heap) keys(he *heapEntry) {
	v := he.e.view
	if h.primary.keyer != nil {
		he.key = h.primary.keyer.Key(v)
	}
	if h.tie.keyer != nil {
		he.tie = h.tie.keyer.Key(v)
	}
}

// push adds e, which must be in no heap.
func (h *heap) push(e *entity) {
	he := heapEntry{e: e}
	h.keys(&he)
	e.hidx = len(h.es)
	h.es = append(h.es, he)
	h.up(e.hidx)
}

// peek returns the first entity, or nil.
func (h *heap) peek() *entity {
	if len(h.es) == 0 {
		return nil
	}
	return h.es[0].e
}

// pop removes and returns the first entity, or nil.
func (h *heap) pop() *entity {
	if len(h.es) == 0 {
		return nil
	}
	e := h.es[0].e
	h.removeAt(0)
	return e
}

// remove takes e out of the heap; false if it was not in it.
func (h *heap) remove(e *entity) bool {
	if !h.has(e) {
		return false
	}
	h.removeAt(e.hidx)
	return true
}

// fix restores the order after e's record changed.
func (h *heap) fix(e *entity) {
	if !h.has(e) {
		return
	}
	i := e.hidx
	h.keys(&h.es[i])
	if !h.down(i) {
		h.up(i)
	}
}

func (h *heap) removeAt(i int) {
	last := len(h.es) - 1
	h.es[i].e.hidx = -1
	if i != last {
		h.es[i] = h.es[last]
		h.es[i].e.hidx = i
	}
	h.es[last] = heapEntry{}
	h.es = h.es[:last]
	if i != last && !h.down(i) {
		h.up(i)
	}
}

func (h *heap) less(i, j int) bool {
	a, b := &h.es[i], &h.es[j]
	if h.primary.keyer != nil {
		if a.key != b.key {
			return a.key.Less(b.key)
		}
	} else {
		if h.primary.sort.Less(a.e.view, b.e.view) {
			return true
		}
		if h.tie.sort == nil || h.primary.sort.Less(b.e.view, a.e.view) {
			return false
		}
	}
	switch {
	case h.tie.keyer != nil:
		return a.tie.Less(b.tie)
	case h.tie.sort != nil:
		return h.tie.sort.Less(a.e.view, b.e.view)
	}
	return false
}

func (h *heap) swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.es[i].e.hidx = i
	h.es[j].e.hidx = j
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts i down and reports whether it moved.
func (h *heap) down(i int) bool {
	start, n := i, len(h.es)
	for {
		l := 2*i + 1
		if l >= n || l < 0 {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
