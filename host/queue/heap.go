// Package queue holds the scheduling queue's data structures. This file has
// the heap that activeQ and the backoff heaps are built on.
package queue

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// Item is one queued entity as a heap sees it: its encoded record, which the
// sort policies read, and its position in the heap that holds it.
type Item struct {
	view  abi.PodView
	index int // position in the holding heap; -1 when in none
}

// NewItem wraps an encoded pod record.
func NewItem(view abi.PodView) *Item { return &Item{view: view, index: -1} }

// View returns the item's record.
func (it *Item) View() abi.PodView { return it.view }

// SetView replaces the record; a heap holding the item must then be told with Fix.
func (it *Item) SetView(v abi.PodView) { it.view = v }

// entry keeps the sort key next to the item so that a keyed heap compares
// without dereferencing items (no cache miss per comparison).
type entry struct {
	key abi.SortKey
	it  *Item
}

// Heap is a binary min-heap of items ordered by a policy.Sort. When the sort
// is a policy.Keyer with Keyed() true, each item's key is computed once when it
// is pushed or fixed and comparisons are native; otherwise every comparison
// calls Less. The zero Heap is not usable; use NewHeap. Not safe for
// concurrent use: the queue serialises access.
type Heap struct {
	sort  policy.Sort
	keyer policy.Keyer // nil when comparing with Less
	es    []entry
}

// NewHeap returns an empty heap ordered by s.
func NewHeap(s policy.Sort) *Heap {
	h := &Heap{}
	h.setSort(s)
	return h
}

func (h *Heap) setSort(s policy.Sort) {
	h.sort, h.keyer = s, nil
	if k, ok := s.(policy.Keyer); ok && k.Keyed() {
		h.keyer = k
	}
}

// SetSort switches the order and re-sorts the heap in O(n) (plus one key
// computation per item for a keyed sort).
func (h *Heap) SetSort(s policy.Sort) {
	h.setSort(s)
	if h.keyer != nil {
		for i := range h.es {
			h.es[i].key = h.keyer.Key(h.es[i].it.view)
		}
	}
	for i := len(h.es)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// Keyed reports whether the heap compares native keys.
func (h *Heap) Keyed() bool { return h.keyer != nil }

// Len is the number of items.
func (h *Heap) Len() int { return len(h.es) }

// Has reports whether it is in this heap.
func (h *Heap) Has(it *Item) bool {
	return it.index >= 0 && it.index < len(h.es) && h.es[it.index].it == it
}

// Push adds it, which must not be in any heap.
func (h *Heap) Push(it *Item) {
	e := entry{it: it}
	if h.keyer != nil {
		e.key = h.keyer.Key(it.view)
	}
	it.index = len(h.es)
	h.es = append(h.es, e)
	h.up(it.index)
}

// Peek returns the first item, or nil.
func (h *Heap) Peek() *Item {
	if len(h.es) == 0 {
		return nil
	}
	return h.es[0].it
}

// Pop removes and returns the first item, or nil.
func (h *Heap) Pop() *Item {
	if len(h.es) == 0 {
		return nil
	}
	it := h.es[0].it
	h.removeAt(0)
	return it
}

// Remove takes it out of the heap; false if it was not in it.
func (h *Heap) Remove(it *Item) bool {
	if !h.Has(it) {
		return false
	}
	h.removeAt(it.index)
	return true
}

// Fix restores the order after it's record changed.
func (h *Heap) Fix(it *Item) {
	if !h.Has(it) {
		return
	}
	i := it.index
	if h.keyer != nil {
		h.es[i].key = h.keyer.Key(it.view)
	}
	if !h.down(i) {
		h.up(i)
	}
}

// Items calls f for every item in heap order of storage (not sorted).
func (h *Heap) Items(f func(*Item)) {
	for _, e := range h.es {
		f(e.it)
	}
}

func (h *Heap) removeAt(i int) {
	last := len(h.es) - 1
	h.es[i].it.index = -1
	if i != last {
		h.es[i] = h.es[last]
		h.es[i].it.index = i
	}
	h.es[last] = entry{}
	h.es = h.es[:last]
	if i != last && !h.down(i) {
		h.up(i)
	}
}

func (h *Heap) less(i, j int) bool {
	if h.keyer != nil {
		return h.es[i].key.Less(h.es[j].key)
	}
	return h.sort.Less(h.es[i].it.view, h.es[j].it.view)
}

func (h *Heap) swap(i, j int) {
	h.es[i], h.es[j] = h.es[j], h.es[i]
	h.es[i].it.index = i
	h.es[j].it.index = j
}

func (h *Heap) up(i int) {
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
func (h *Heap) down(i int) bool {
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
