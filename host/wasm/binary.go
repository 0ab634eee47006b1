package wasm

import (
	"bytes"
	"errors"
	"fmt"
)

// This file reads the few facts Load needs before compiling a module (its
// imports of every kind, its memory limits, its exports and whether it has a
// start function), which wazero's CompiledModule either does not expose or
// exposes only after a compilation that may already have failed on them. It
// decodes untrusted bytes, so it returns errors and never panics.

// External kinds of the import and export sections.
const (
	externFunc   byte = 0x00
	externTable  byte = 0x01
	externMemory byte = 0x02
	externGlobal byte = 0x03
	externTag    byte = 0x04
)

var externNames = [...]string{"function", "table", "memory", "global", "tag"}

func externName(k byte) string {
	if int(k) < len(externNames) {
		return externNames[k]
	}
	return fmt.Sprintf("kind 0x%02x", k)
}

type importEntry struct {
	module, name string
	kind         byte
}

type exportEntry struct {
	name string
	kind byte
}

// memLimits are the limits of a memory, in pages.
type memLimits struct {
	min, max uint64
	hasMax   bool
}

// moduleFacts is what parseModule finds.
type moduleFacts struct {
	imports  []importEntry
	exports  []exportEntry
	memories []memLimits // defined (not imported) memories
	hasStart bool
}

var (
	wasmMagic   = []byte{0x00, 'a', 's', 'm'}
	wasmVersion = []byte{0x01, 0x00, 0x00, 0x00}

	errTruncated = errors.New("unexpected end of input")
)

// parseModule walks the section framing of a Wasm binary and decodes the
// import, memory, export and start sections. Everything else (including
// whether the code is valid) is left to wazero's compiler.
func parseModule(b []byte) (*moduleFacts, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], wasmMagic) {
		return nil, errors.New("not a WebAssembly binary (the file does not start with \\0asm)")
	}
	if !bytes.Equal(b[4:8], wasmVersion) {
		return nil, fmt.Errorf("unsupported WebAssembly binary version % x (want 01 00 00 00)", b[4:8])
	}
	facts := &moduleFacts{}
	r := byteReader{b: b, pos: 8, end: len(b)}
	for r.pos < r.end {
		at := r.pos
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("section at offset 0x%x: size: %w", at, err)
		}
		if uint64(size) > uint64(r.end-r.pos) {
			return nil, fmt.Errorf("section %d at offset 0x%x: size %d runs past the end of the file", id, at, size)
		}
		s := byteReader{b: b, pos: r.pos, end: r.pos + int(size)}
		r.pos = s.end
		switch id {
		case 2:
			err = parseImports(&s, facts)
		case 5:
			err = parseMemories(&s, facts)
		case 7:
			err = parseExports(&s, facts)
		case 8:
			facts.hasStart = true
			_, err = s.u32()
		default:
			continue
		}
		if err == nil && s.pos != s.end {
			err = fmt.Errorf("%d trailing bytes", s.end-s.pos)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d at offset 0x%x: %w", id, at, err)
		}
	}
	return facts, nil
}

func parseImports(r *byteReader, facts *moduleFacts) error {
	n, err := r.count(4) // two empty names, kind, one-byte index
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var e importEntry
		if e.module, err = r.name(); err != nil {
			return fmt.Errorf("import %d: module name: %w", i, err)
		}
		if e.name, err = r.name(); err != nil {
			return fmt.Errorf("import %d: name: %w", i, err)
		}
		if e.kind, err = r.byte(); err != nil {
			return fmt.Errorf("import %d: kind: %w", i, err)
		}
		switch e.kind {
		case externFunc:
			_, err = r.u32()
		case externTable:
			if _, err = r.byte(); err == nil { // reference type
				_, err = r.limits()
			}
		case externMemory:
			_, err = r.limits()
		case externGlobal:
			if _, err = r.byte(); err == nil { // value type
				_, err = r.byte() // mutability
			}
		case externTag:
			if _, err = r.byte(); err == nil { // attribute
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("unknown kind 0x%02x", e.kind)
		}
		if err != nil {
			return fmt.Errorf("import %d (%s.%s): %w", i, e.module, e.name, err)
		}
		facts.imports = append(facts.imports, e)
	}
	return nil
}

func parseMemories(r *byteReader, facts *moduleFacts) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		l, err := r.limits()
		if err != nil {
			return fmt.Errorf("memory %d: %w", i, err)
		}
		facts.memories = append(facts.memories, l)
	}
	return nil
}

func parseExports(r *byteReader, facts *moduleFacts) error {
	n, err := r.count(3)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var e exportEntry
		if e.name, err = r.name(); err != nil {
			return fmt.Errorf("export %d: name: %w", i, err)
		}
		if e.kind, err = r.byte(); err == nil {
			_, err = r.u32()
		}
		if err != nil {
			return fmt.Errorf("export %d (%s): %w", i, e.name, err)
		}
		facts.exports = append(facts.exports, e)
	}
	return nil
}

// byteReader decodes b[pos:end]; b is the whole file so offsets are absolute.
type byteReader struct {
	b        []byte
	pos, end int
}

func (r *byteReader) byte() (byte, error) {
	if r.pos >= r.end {
		return 0, errTruncated
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// uleb decodes an unsigned LEB128 integer of at most bits bits.
func (r *byteReader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift+7 >= bits && c>>(bits-shift) != 0 {
			return 0, fmt.Errorf("LEB128 integer overflows %d bits", bits)
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *byteReader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// count reads a vector length and checks that the rest of the section can
// hold that many entries of at least minSize bytes each, so a forged count
// cannot make the parser allocate or loop beyond the input's size.
func (r *byteReader) count(minSize int) (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(minSize) > uint64(r.end-r.pos) {
		return 0, fmt.Errorf("count %d does not fit in the %d bytes left", n, r.end-r.pos)
	}
	return int(n), nil
}

func (r *byteReader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(r.end-r.pos) {
		return "", errTruncated
	}
	s := string(r.b[r.pos : r.pos+int(n)])
	r.pos += int(n)
	return s, nil
}

// limits reads a limits structure: a flags byte (bit 0: has maximum, bit 1:
// shared, bit 2: 64-bit), the minimum and the optional maximum.
func (r *byteReader) limits() (memLimits, error) {
	var l memLimits
	flags, err := r.byte()
	if err != nil {
		return l, err
	}
	if flags > 0x07 {
		return l, fmt.Errorf("unknown limits flags 0x%02x", flags)
	}
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	if l.min, err = r.uleb(bits); err != nil {
		return l, err
	}
	if flags&0x01 != 0 {
		l.hasMax = true
		l.max, err = r.uleb(bits)
	}
	return l, err
}
