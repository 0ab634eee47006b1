// Package nodes is what the two placement slots (packages filter and
// score) share in a module, so that a module importing both links it once:
// the node store behind [abi.ExportNodes] and the module's placement
// options behind [abi.ExportPlacementOptions].
//
// The host sends each instance the node records it lacks ([abi.NodeSync]),
// under ids it assigns, and then names the nodes of a placement call by
// those ids ([abi.Placement]). [Store] keeps the records: a record is
// copied into a buffer of its own, which later records for the same id
// reuse when they fit, so that once every node has been seen, syncing a
// node that changed (its requested resources, most often) does not
// allocate. That matters because a module's memory is never freed (TinyGo's
// leaking collector): an allocation per call is a leak per call.
//
// The logic of this file builds everywhere and is tested natively; the
// //go:wasmexport functions are in exports.go, which builds only for Wasm.
package nodes

import (
	"strconv"

	"github.com/wasmsched/wasmsched/abi"
)

// MaxID bounds the ids a store accepts. The host numbers the node names it
// has seen from 0, so the ids are dense and far below; the bound stops a
// malformed sync from making the store allocate gigabytes.
const MaxID = 1<<22 - 1

// maxFree bounds the buffers of forgotten records kept for reuse.
const maxFree = 64

// Store keeps node records by id. The zero Store is empty and ready. It is
// not safe for concurrent use (a module instance is single-threaded).
type Store struct {
	// views holds the record of each id, a view of its own buffer (whose
	// capacity may exceed the record); a zero view: no record.
	views []abi.NodeView
	n     int      // records held
	free  [][]byte // buffers of forgotten records, for reuse
}

// Held is the module's store, which the exports of the placement slots use.
var Held Store

// Sync applies a NodeSync record: with its reset flag the store first
// forgets every node, then it keeps each upserted record (a copy) under its
// id, replacing the one held there, and forgets the removed ids. It fails on
// a malformed record or an id above [MaxID]; the records applied before the
// failure stay (the host discards an instance whose sync failed).
func (s *Store) Sync(b []byte) error {
	sync, err := abi.ReadNodeSync(b)
	if err != nil {
		return err
	}
	if sync.Reset() {
		s.Reset()
	}
	for i := range sync.NumUpserts() {
		id, rec, err := sync.Upsert(i)
		if err != nil {
			return err
		}
		if err := s.Put(id, rec); err != nil {
			return err
		}
	}
	for i := range sync.NumRemoved() {
		s.Remove(sync.Removed(i))
	}
	return nil
}

// Put keeps a copy of the node record rec under id, replacing the record
// held there. The copy reuses the buffer of the id's previous record when
// it fits, else a forgotten record's, else a new one with a quarter more
// room than rec needs (a node's record grows a little when it gains a
// label or a resource).
func (s *Store) Put(id uint32, rec []byte) error {
	if id > MaxID {
		return errID(id)
	}
	if int(id) >= len(s.views) {
		s.grow(int(id) + 1)
	}
	old := s.views[id].Bytes()
	buf := s.buffer(old, len(rec))
	copy(buf, rec)
	v, err := abi.ReadNode(buf)
	if err != nil {
		s.recycle(buf)
		if old != nil {
			s.views[id] = abi.NodeView{}
			s.n--
		}
		return err
	}
	if old == nil {
		s.n++
	}
	s.views[id] = v
	return nil
}

// grow makes room for ids below n.
func (s *Store) grow(n int) {
	if n <= cap(s.views) {
		s.views = s.views[:n]
		return
	}
	views := make([]abi.NodeView, n, max(n, 2*cap(s.views), 64))
	copy(views, s.views)
	s.views = views
}

// buffer returns n bytes to copy a record into: old's when it has room,
// else a free one that has, else a new one (old is then recycled).
func (s *Store) buffer(old []byte, n int) []byte {
	if cap(old) >= n {
		return old[:n]
	}
	if old != nil {
		defer s.recycle(old)
	}
	for i, b := range s.free {
		if cap(b) >= n {
			last := len(s.free) - 1
			s.free[i], s.free[last] = s.free[last], nil
			s.free = s.free[:last]
			return b[:n]
		}
	}
	return make([]byte, n, n+n/4)
}

// recycle keeps b for reuse, if there is room in the free list.
func (s *Store) recycle(b []byte) {
	if cap(b) > 0 && len(s.free) < maxFree {
		s.free = append(s.free, b[:0])
	}
}

// Remove forgets id's record, if any.
func (s *Store) Remove(id uint32) {
	if int64(id) >= int64(len(s.views)) {
		return
	}
	if b := s.views[id].Bytes(); b != nil {
		s.recycle(b)
		s.views[id] = abi.NodeView{}
		s.n--
	}
}

// Reset forgets every record.
func (s *Store) Reset() {
	for i := range s.views {
		if b := s.views[i].Bytes(); b != nil {
			s.recycle(b)
			s.views[i] = abi.NodeView{}
		}
	}
	s.views, s.n = s.views[:0], 0
}

// Len is the number of records held.
func (s *Store) Len() int { return s.n }

// Get returns the record held under id.
func (s *Store) Get(id uint32) (abi.NodeView, bool) {
	if int64(id) >= int64(len(s.views)) {
		return abi.NodeView{}, false
	}
	v := s.views[id]
	return v, v.Bytes() != nil
}

// Node returns node i of the placement p: the record held under its id for
// i < p.NumIDs(), else the record sent inline (a view of p's bytes, valid
// for the call only). An id the store does not hold is an error: the host
// believes the instance has a record it does not.
func (s *Store) Node(p abi.PlacementView, i int) (abi.NodeView, error) {
	if i >= p.NumIDs() {
		return p.Inline(i)
	}
	id := p.ID(i)
	v, ok := s.Get(id)
	if !ok {
		return abi.NodeView{}, errNotHeld(id)
	}
	return v, nil
}

// The errors are built apart from the functions that return them: under
// TinyGo a function that may concatenate strings costs more on every call.

//go:noinline
func errID(id uint32) error {
	return &abi.Error{Record: abi.TagNodeSync, Field: "upserts", Problem: "node id " + strconv.FormatUint(uint64(id), 10) + " above the largest the guest keeps, " + strconv.Itoa(MaxID)}
}

//go:noinline
func errNotHeld(id uint32) error {
	return &abi.Error{Record: abi.TagPlacement, Field: "ids", Problem: "node id " + strconv.FormatUint(uint64(id), 10) + " is not held by the guest (never synced, or removed)"}
}
