package abi

import (
	"encoding/binary"
	"strconv"
	"unsafe"
)

// Every record starts with an 8-byte header:
//
//	0  u32 size   total bytes of the record, header and variable area included
//	4  u16 tag    which record this is (Tag)
//	6  u16 fixed  bytes of header + fixed part; the variable area follows
//
// A reference inside a record is two u32s, offset and length (strings, nested
// records) or offset and count (lists of fixed-size elements). Offsets are
// relative to the start of the record, so a record can be copied anywhere.
// References never share bytes: the decoders refuse a record whose strings,
// list elements and nested records together span more bytes than the record
// holds (see budget in pod.go), which bounds their work by the record's size.
const headerSize = 8

// refSize is the size of an (offset, length|count) reference.
const refSize = 8

// Tag identifies a record type.
type Tag uint16

const (
	TagPod Tag = iota + 1
	TagNode
	TagPodGroup
	TagEvent
	TagHintBatch
	TagVictimBatch
	TagGate
	TagRegistrations
	// TagStorage (minor 1): a storage object in an event (storage.go).
	TagStorage
	// The placement records (minor 3, placement.go).
	TagPlacement
	TagNodeSync
	TagVerdicts
	TagPlacementOptions
	numTags
)

var tagNames = [numTags]string{"", "pod", "node", "podgroup", "event", "hint batch", "victim batch", "gate", "registrations", "storage object",
	"placement", "node sync", "verdicts", "placement options"}

func (t Tag) String() string {
	if t > 0 && t < numTags {
		return tagNames[t]
	}
	return "tag " + strconv.Itoa(int(t))
}

// Error is returned by every decoder: what was being read and what was wrong.
type Error struct {
	Record  Tag
	Field   string
	Problem string
}

func (e *Error) Error() string {
	where := e.Field
	if e.Record != 0 { // 0: not inside a record (a sort key, hints, a victim order)
		where = e.Record.String()
		if e.Field != "" {
			where += " field " + e.Field
		}
	}
	if where == "" {
		return "abi: " + e.Problem
	}
	return "abi: " + where + ": " + e.Problem
}

// RecordTag reports the tag of the record at the start of b, or an error if b
// does not start with a well-formed header.
func RecordTag(b []byte) (Tag, error) {
	r, err := readRecord(b, 0)
	return Tag(r.tag), err
}

// rec is a validated record header over exactly the record's bytes.
type rec struct {
	b     []byte
	fixed uint32
	tag   Tag
}

// readRecord checks the header of the record at the start of b; want 0 accepts any tag.
func readRecord(b []byte, want Tag) (rec, error) {
	// The check is kept apart from building the error: under TinyGo a
	// function that may concatenate strings costs ~10x more on every call,
	// even when it never does, and this runs once per pod of a batch.
	if len(b) >= headerSize {
		size := binary.LittleEndian.Uint32(b)
		tag := Tag(binary.LittleEndian.Uint16(b[4:]))
		fixed := uint32(binary.LittleEndian.Uint16(b[6:]))
		if (want == 0 || tag == want) && uint64(size) <= uint64(len(b)) && fixed >= headerSize && fixed <= size {
			return rec{b: b[:size], fixed: fixed, tag: tag}, nil
		}
	}
	return rec{}, headerError(b, want)
}

// headerError says why b does not start with a well-formed header.
//
//go:noinline
func headerError(b []byte, want Tag) error {
	if len(b) < headerSize {
		return &Error{Record: want, Problem: "shorter than the 8-byte header (" + strconv.Itoa(len(b)) + " bytes)"}
	}
	size := binary.LittleEndian.Uint32(b)
	tag := Tag(binary.LittleEndian.Uint16(b[4:]))
	fixed := uint32(binary.LittleEndian.Uint16(b[6:]))
	switch {
	case want != 0 && tag != want:
		return &Error{Record: want, Problem: "tag is " + tag.String()}
	case uint64(size) > uint64(len(b)):
		return &Error{Record: tag, Problem: "size " + strconv.FormatUint(uint64(size), 10) + " exceeds the " + strconv.Itoa(len(b)) + " bytes available"}
	}
	return &Error{Record: tag, Problem: "fixed part length " + strconv.FormatUint(uint64(fixed), 10) + " outside [8, size]"}
}

func (r rec) has(off, n uint32) bool { return uint64(off)+uint64(n) <= uint64(r.fixed) }

func (r rec) u32(off uint32) uint32 {
	if !r.has(off, 4) {
		return 0
	}
	return binary.LittleEndian.Uint32(r.b[off:])
}

func (r rec) i32(off uint32) int32 { return int32(r.u32(off)) }

func (r rec) i64(off uint32) int64 {
	if !r.has(off, 8) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(r.b[off:]))
}

// ref reads the reference at fixed-part offset off and checks that it spans
// n*elem bytes inside the record.
func (r rec) ref(off uint32, elem uint32) (pos, n uint32, ok bool) {
	if !r.has(off, refSize) {
		return 0, 0, true // absent in an older minor: empty
	}
	return r.refAt(off, elem)
}

// refAt reads a reference at any absolute position (list elements hold refs too).
func (r rec) refAt(at uint32, elem uint32) (pos, n uint32, ok bool) {
	if uint64(at)+refSize > uint64(len(r.b)) {
		return 0, 0, false
	}
	pos = binary.LittleEndian.Uint32(r.b[at:])
	n = binary.LittleEndian.Uint32(r.b[at+4:])
	if n == 0 {
		return 0, 0, true
	}
	if uint64(pos)+uint64(n)*uint64(elem) > uint64(len(r.b)) {
		return 0, 0, false
	}
	return pos, n, true
}

// strAt returns the string referenced at absolute position at, aliasing the
// record's bytes (no copy).
func (r rec) strAt(at uint32) (string, bool) {
	pos, n, ok := r.refAt(at, 1)
	if !ok || n == 0 {
		return "", ok
	}
	return unsafe.String(&r.b[pos], int(n)), true
}

func (r rec) str(off uint32) string {
	if !r.has(off, refSize) {
		return ""
	}
	s, _ := r.strAt(off)
	return s
}

// bytesAt returns the nested bytes referenced at absolute position at.
func (r rec) bytesAt(at uint32) ([]byte, bool) {
	pos, n, ok := r.refAt(at, 1)
	if !ok || n == 0 {
		return nil, ok
	}
	return r.b[pos : pos+n : pos+n], true
}

// list returns a list view of the references at fixed-part offset off.
func (r rec) list(off, elem uint32) list {
	pos, n, ok := r.ref(off, elem)
	if !ok {
		return list{}
	}
	return list{r: r, pos: pos, n: n, elem: elem}
}

// list is a view of n fixed-size elements starting at pos.
type list struct {
	r    rec
	pos  uint32
	n    uint32
	elem uint32
}

func (l list) len() int { return int(l.n) }

// at returns the absolute position of element i, or false if out of range.
func (l list) at(i int) (uint32, bool) {
	if i < 0 || uint32(i) >= l.n {
		return 0, false
	}
	return l.pos + uint32(i)*l.elem, true
}

func (l list) u32(i int, field uint32) uint32 {
	p, ok := l.at(i)
	if !ok || field+4 > l.elem {
		return 0
	}
	return binary.LittleEndian.Uint32(l.r.b[p+field:])
}

func (l list) i64(i int, field uint32) int64 {
	p, ok := l.at(i)
	if !ok || field+8 > l.elem {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(l.r.b[p+field:]))
}

func (l list) str(i int, field uint32) string {
	p, ok := l.at(i)
	if !ok || field+refSize > l.elem {
		return ""
	}
	s, _ := l.r.strAt(p + field)
	return s
}

// sub returns the list referenced by field of element i (nested lists).
func (l list) sub(i int, field, elem uint32) list {
	p, ok := l.at(i)
	if !ok || field+refSize > l.elem {
		return list{}
	}
	pos, n, ok := l.r.refAt(p+field, elem)
	if !ok {
		return list{}
	}
	return list{r: l.r, pos: pos, n: n, elem: elem}
}

// stringBytes reports whether every string reference at the given element
// fields of every element is in bounds, and the sum of their lengths.
func (l list) stringBytes(fields ...uint32) (total uint64, ok bool) {
	for i := 0; i < l.len(); i++ {
		p, _ := l.at(i)
		for _, f := range fields {
			s, ok := l.r.strAt(p + f)
			if !ok {
				return 0, false
			}
			total += uint64(len(s))
		}
	}
	return total, true
}

// builder appends one record to a byte slice. Positions are absolute indices
// into buf so that growth of buf never invalidates them.
type builder struct {
	buf   []byte
	start int
}

func beginRecord(dst []byte, tag Tag, fixed int) builder {
	b := builder{buf: dst, start: len(dst)}
	b.buf = extend(b.buf, fixed)
	h := b.buf[b.start:]
	binary.LittleEndian.PutUint16(h[4:], uint16(tag))
	binary.LittleEndian.PutUint16(h[6:], uint16(fixed))
	return b
}

func (b *builder) putU32(off int, v uint32) {
	binary.LittleEndian.PutUint32(b.buf[b.start+off:], v)
}

func (b *builder) putI64(off int, v int64) {
	binary.LittleEndian.PutUint64(b.buf[b.start+off:], uint64(v))
}

// putRef writes a reference at absolute position at.
func (b *builder) putRef(at, pos, n int) {
	binary.LittleEndian.PutUint32(b.buf[at:], uint32(pos-b.start))
	binary.LittleEndian.PutUint32(b.buf[at+4:], uint32(n))
}

// strAt appends s to the variable area and references it from absolute position at.
func (b *builder) strAt(at int, s string) {
	if len(s) == 0 {
		return // zero ref
	}
	pos := len(b.buf)
	b.buf = append(b.buf, s...)
	b.putRef(at, pos, len(s))
}

func (b *builder) str(off int, s string) { b.strAt(b.start+off, s) }

// bytesAt appends a nested record and references it from absolute position at.
func (b *builder) bytesAt(at int, p []byte) {
	if len(p) == 0 {
		return
	}
	pos := len(b.buf)
	b.buf = append(b.buf, p...)
	b.putRef(at, pos, len(p))
}

// listAt reserves n zeroed elements, references them from absolute position
// at, and returns the absolute position of the first element.
func (b *builder) listAt(at, n, elem int) int {
	if n == 0 {
		return len(b.buf)
	}
	pos := len(b.buf)
	b.buf = extend(b.buf, n*elem)
	b.putRef(at, pos, n)
	return pos
}

func (b *builder) list(off, n, elem int) int { return b.listAt(b.start+off, n, elem) }

func (b *builder) elemU32(at int, v uint32) { binary.LittleEndian.PutUint32(b.buf[at:], v) }
func (b *builder) elemI64(at int, v int64)  { binary.LittleEndian.PutUint64(b.buf[at:], uint64(v)) }

// finish writes the record size and returns the buffer.
func (b *builder) finish() []byte {
	binary.LittleEndian.PutUint32(b.buf[b.start:], uint32(len(b.buf)-b.start))
	return b.buf
}

// extend appends n zero bytes to buf. It is append(buf, make([]byte, n)...)
// written out because TinyGo allocates the zeros on every call, which a
// guest built with its leaking GC never gets back: every record a guest
// appends (gates, verdicts) would grow its memory.
func extend(buf []byte, n int) []byte {
	l := len(buf)
	if cap(buf)-l < n {
		nb := make([]byte, l, max(2*cap(buf), l+n))
		copy(nb, buf)
		buf = nb
	}
	buf = buf[:l+n]
	clear(buf[l:])
	return buf
}

func boolBit(v bool, bit uint32) uint32 {
	if v {
		return bit
	}
	return 0
}
