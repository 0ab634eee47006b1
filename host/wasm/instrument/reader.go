package instrument

import (
	"errors"
	"fmt"
)

var errTruncated = errors.New("unexpected end of input")

// reader decodes the binary format from b[pos:end]. b is always the whole
// module so that error offsets are absolute; end bounds the current section or
// function body so that nothing can be read past it.
type reader struct {
	b   []byte
	pos int
	end int
}

func (r *reader) remaining() int { return r.end - r.pos }

// errorf prefixes an error with the absolute module offset it refers to.
func (r *reader) errorf(at int, format string, args ...any) error {
	return fmt.Errorf(format+" at offset 0x%x", append(args, at)...)
}

func (r *reader) byte() (byte, error) {
	if r.pos >= r.end {
		return 0, r.errorf(r.pos, "%w", errTruncated)
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) skip(n int) error {
	if n < 0 || n > r.remaining() {
		return r.errorf(r.pos, "%w: need %d bytes, have %d", errTruncated, n, r.remaining())
	}
	r.pos += n
	return nil
}

// leb decodes an LEB128 integer of at most bits bits. It rejects encodings
// that are longer than ceil(bits/7) bytes and final bytes whose unused bits
// are not a zero (unsigned) or sign (signed) extension, as the spec requires.
// Signed results are sign-extended to 64 bits.
func (r *reader) leb(bits uint, signed bool) (uint64, error) {
	start := r.pos
	var v uint64
	var shift uint
	for {
		if r.pos >= r.end {
			return 0, r.errorf(start, "%w in LEB128 integer", errTruncated)
		}
		c := r.b[r.pos]
		r.pos++
		if shift+7 >= bits {
			// Last byte allowed for this width.
			rest := bits - shift // payload bits still meaningful
			if c&0x80 != 0 {
				return 0, r.errorf(start, "LEB128 integer longer than %d bits", bits)
			}
			if signed {
				mask := byte(0x7f<<(rest-1)) & 0x7f
				if c&mask != 0 && c&mask != mask {
					return 0, r.errorf(start, "LEB128 integer overflows %d bits", bits)
				}
			} else if c>>rest != 0 {
				return 0, r.errorf(start, "LEB128 integer overflows %d bits", bits)
			}
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if signed && shift < 64 && c&0x40 != 0 {
				v |= ^uint64(0) << shift
			}
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.leb(32, false)
	return uint32(v), err
}

// count reads a vector length and rejects one that the remaining bytes could
// not hold even at minSize bytes per element, so callers may size buffers or
// loop on it safely.
func (r *reader) count(what string, minSize int) (int, error) {
	at := r.pos
	n, err := r.u32()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if uint64(n) > uint64(r.remaining()) {
		return 0, r.errorf(at, "%s %d exceeds the %d remaining bytes", what, n, r.remaining())
	}
	if uint64(n)*uint64(minSize) > uint64(r.remaining()) {
		return 0, r.errorf(at, "%s %d needs at least %d bytes, only %d remain", what, n, uint64(n)*uint64(minSize), r.remaining())
	}
	return int(n), nil
}

// trailing reports bytes left over after the last entry of a section or
// subsection.
func (r *reader) trailing() error {
	if r.pos != r.end {
		return r.errorf(r.pos, "%d trailing bytes", r.remaining())
	}
	return nil
}

// name skips a UTF-8 name (length-prefixed bytes) and returns its bytes.
func (r *reader) name() ([]byte, error) {
	n, err := r.count("name length", 1)
	if err != nil {
		return nil, err
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

// heapType skips a heap type: an abstract type (a negative s33, one byte) or
// a type index (a non-negative s33).
func (r *reader) heapType() error {
	at := r.pos
	v, err := r.leb(33, true)
	if err != nil {
		return err
	}
	if int64(v) < 0 && !isAbstractHeapType(r.b[at]) {
		return r.errorf(at, "invalid heap type 0x%02x", r.b[at])
	}
	return nil
}

// valType skips a value type, including the two-part (ref null? ht) forms.
func (r *reader) valType() error {
	at := r.pos
	c, err := r.byte()
	if err != nil {
		return err
	}
	switch {
	case isNumOrVecType(c), isAbstractHeapType(c):
		return nil
	case c == 0x63 || c == 0x64: // (ref null ht), (ref ht)
		return r.heapType()
	}
	return r.errorf(at, "invalid value type 0x%02x", c)
}

// blockType skips a block type: 0x40 (empty), a value type, or a
// non-negative s33 type index.
func (r *reader) blockType() error {
	at := r.pos
	if r.pos < r.end {
		switch c := r.b[r.pos]; {
		case c == 0x40:
			r.pos++
			return nil
		case c == 0x63 || c == 0x64 || isNumOrVecType(c) || isAbstractHeapType(c):
			return r.valType()
		}
	}
	v, err := r.leb(33, true)
	if err != nil {
		return fmt.Errorf("block type: %w", err)
	}
	if int64(v) < 0 {
		return r.errorf(at, "invalid block type 0x%02x", r.b[at])
	}
	return nil
}

// limits skips table or memory limits. The flag bits are: 0 has max,
// 1 shared (threads), 2 64-bit (memory64), 3 custom page size.
func (r *reader) limits() error {
	at := r.pos
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x0f {
		return r.errorf(at, "invalid limits flags 0x%02x", flags)
	}
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	if _, err := r.leb(bits, false); err != nil {
		return fmt.Errorf("limits minimum: %w", err)
	}
	if flags&0x01 != 0 {
		if _, err := r.leb(bits, false); err != nil {
			return fmt.Errorf("limits maximum: %w", err)
		}
	}
	if flags&0x08 != 0 {
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("limits page size: %w", err)
		}
	}
	return nil
}

func isNumOrVecType(c byte) bool {
	return c >= 0x7b && c <= 0x7f // v128, f64, f32, i64, i32
}

// isAbstractHeapType reports whether c is an abstract heap type, which is also
// the one-byte shorthand for the nullable reference to it (funcref = 0x70...).
func isAbstractHeapType(c byte) bool {
	return c >= 0x69 && c <= 0x74 // exn ... nullexn; includes func 0x70, extern 0x6f
}

// appendU32 appends v as an unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends v as a signed LEB128 (the immediate of i32.const).
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
