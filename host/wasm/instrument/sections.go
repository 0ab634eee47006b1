package instrument

import "fmt"

// This file walks the sections that Instrument copies unchanged, so that
// every count in them is bounded by the bytes that follow it.
//
// wazero v1.12.0's decoder (internal/wasm/binary) reads each section from a
// reader over the whole module and sizes slices from counts before it reads
// the elements, so a count that the section cannot hold still costs its full
// allocation before the decoder notices. Walking a section here with the same
// grammar (where both accept a construct they read the same bytes for it)
// and checking each count against the bytes left in the section or subsection
// keeps every such allocation within a small constant factor of the module
// size. The walkers are stricter than wazero only where wazero would reject
// the module anyway.
//
// Where wazero v1.12.0 allocates from a count, and what bounds it here:
//   - decoder.go DecodeModule: custom section names (decodeUTF8); custom
//     sections other than "name" are dropped, the rest is framing checked by
//     splitSections.
//   - section.go: make([]T, count) for imports, functions, tables, globals,
//     exports (and a map), elements, code, data and tags: each count is at
//     most the bytes left in the section divided by the smallest encoding of
//     an entry.
//   - function.go decodeFunctionType, value.go decodeValueTypes:
//     make([]ValueType, 0, count) for params and results: bytes left, and
//     MaxParams, MaxResults; module.go FunctionType.key builds a string
//     quadratic in params+results: arityBudget.
//   - value.go decodeUTF8: make([]byte, length) for every name: bytes left.
//   - code.go decodeCode: make([]ValueType, 0, sum of declared locals):
//     MaxFunctionLocals and localsBudget; the body: its size, bounded by the
//     section.
//   - element.go: make([]ConstantExpression, count) for init vectors: bytes
//     left.
//   - data.go decodeDataSegment: make([]byte, size): bytes left.
//   - names.go: make(NameMap, count), make(IndirectNameMap, count) and the
//     nested local maps, read by content past a subsection's declared size:
//     bytes left in the subsection, which must end exactly at its size.

// Engine limits enforced on top of the per-byte bounds. They are the limits
// browsers enforce (the JS API's implementation limits, also used by V8 and
// SpiderMonkey), so toolchains never exceed them.
const (
	// MaxParams and MaxResults bound a function type's parameter and
	// result counts.
	MaxParams  = 1000
	MaxResults = 1000
	// MaxFunctionLocals bounds the locals a function body declares. The JS
	// API counts parameters in this limit too; here they count in
	// localsBudget (and are at most MaxParams). wazero allocates 8 bytes
	// per declared local from a few bytes of input and its compiler does
	// work per local.
	MaxFunctionLocals = 50000
)

// Module-wide budgets, proportional to the module's size so that a module
// cannot multiply a per-function or per-type limit by repeating it. The size
// does not count the custom sections that Instrument drops.
//
// localsBudget bounds the parameters plus declared locals summed over all
// defined functions: wazero keeps 8 bytes per declared local and its compiler
// works per parameter and local of every function, while a function costs as
// little as 4 bytes of input. Real modules stay below 0.2 per byte.
//
// arityBudget bounds the sum over all function types of (params+results)²:
// wazero builds each type's signature string by repeated concatenation, which
// allocates about 6*(params+results)² bytes per type. Real modules stay below
// 30 per byte of module; one type at the MaxParams and MaxResults limits uses
// the constant part.
func localsBudget(moduleSize int) uint64 { return MaxFunctionLocals + uint64(moduleSize) }
func arityBudget(moduleSize int) uint64  { return 1<<22 + 16*uint64(moduleSize) }

// sectionNames names section ids for error messages.
var sectionNames = [...]string{
	"custom", "type", "import", "function", "table", "memory", "global", "export",
	"start", "element", "code", "data", "data count", "tag",
}

func sectionName(id byte) string {
	if int(id) < len(sectionNames) {
		return sectionNames[id] + " section"
	}
	return fmt.Sprintf("section %d", id)
}

// Section ids of the sections that are only checked.
const (
	secType      = 1
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secStart     = 8
	secElement   = 9
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// checkSection walks a section that Instrument copies unchanged (known,
// non-custom, other than import, global, export and code). For the type
// section it returns the parameter count of each type, in type index order.
func checkSection(b []byte, s *section, moduleSize int) (params []uint16, err error) {
	r := reader{b: b, pos: s.payload, end: s.end}
	switch s.id {
	case secType:
		params, err = r.types(moduleSize)
	case secFunction:
		err = r.vector("function count", 1, "function", func() error { _, err := r.u32(); return err })
	case secTable:
		err = r.vector("table count", 3, "table", r.table)
	case secMemory:
		err = r.vector("memory count", 2, "memory", r.limits)
	case secTag:
		err = r.vector("tag count", 2, "tag", func() error {
			if _, err := r.byte(); err != nil { // attribute
				return err
			}
			_, err := r.u32() // type index
			return err
		})
	case secStart, secDataCount:
		_, err = r.u32()
	case secElement:
		err = r.vector("element segment count", 3, "element segment", r.elementSegment)
	case secData:
		err = r.vector("data segment count", 2, "data segment", r.dataSegment)
	default:
		return nil, fmt.Errorf("instrument: %s: no decoder", sectionName(s.id)) // unreachable
	}
	if err == nil {
		err = r.trailing()
	}
	if err != nil {
		return nil, fmt.Errorf("instrument: %s: %w", sectionName(s.id), err)
	}
	return params, nil
}

// vector reads a count, bounded by the remaining bytes at minSize bytes per
// entry, and calls entry that many times. Entry errors name the entry.
func (r *reader) vector(what string, minSize int, entryName string, entry func() error) error {
	n, err := r.count(what, minSize)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := entry(); err != nil {
			return fmt.Errorf("%s %d: %w", entryName, i, err)
		}
	}
	return nil
}

// types walks the type section: function types (0x60) and recursion groups
// of function types (0x4e, GC proposal; wazero's decoder reads them). It
// returns the parameter count of every type in index order, the members of a
// group flattened as wazero numbers them.
func (r *reader) types(moduleSize int) ([]uint16, error) {
	budget := arityBudget(moduleSize)
	n, err := r.count("type count", 2) // 0x60 0 0 or 0x4e 0
	if err != nil {
		return nil, err
	}
	params := make([]uint16, 0, n)
	var cost uint64
	funcType := func() error {
		idx := len(params)
		p, q, err := r.funcType()
		if err != nil {
			return fmt.Errorf("type %d: %w", idx, err)
		}
		params = append(params, uint16(p))
		cost += uint64(p+q) * uint64(p+q)
		if cost > budget {
			return fmt.Errorf("type %d: function types too large in total: the sum of (params+results)² reaches %d, "+
				"at most %d allowed in a module of %d bytes (%d plus 16 per byte; dropped custom sections not counted)",
				idx, cost, budget, moduleSize, arityBudget(0))
		}
		return nil
	}
	for i := 0; i < n; i++ {
		at := r.pos
		if r.pos < r.end && r.b[r.pos] == 0x4e {
			r.pos++
			m, err := r.count("recursion group size", 3)
			if err != nil {
				return nil, fmt.Errorf("recursion group at offset 0x%x: %w", at, err)
			}
			for j := 0; j < m; j++ {
				if err := funcType(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := funcType(); err != nil {
			return nil, err
		}
	}
	return params, nil
}

// funcType walks 0x60 vec(valtype) vec(valtype).
func (r *reader) funcType() (params, results int, err error) {
	at := r.pos
	form, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if form != 0x60 {
		return 0, 0, r.errorf(at, "invalid type form 0x%02x", form)
	}
	if params, err = r.valTypes("param count", MaxParams); err != nil {
		return 0, 0, err
	}
	if results, err = r.valTypes("result count", MaxResults); err != nil {
		return 0, 0, err
	}
	return params, results, nil
}

// valTypes walks vec(valtype) of at most limit entries.
func (r *reader) valTypes(what string, limit int) (int, error) {
	at := r.pos
	n, err := r.count(what, 1)
	if err != nil {
		return 0, err
	}
	if n > limit {
		return 0, r.errorf(at, "%s %d is above the limit of %d", what, n, limit)
	}
	for i := 0; i < n; i++ {
		if err := r.valType(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// table walks a table type, optionally prefixed by 0x40 0x00 and followed by
// an initializer expression (function references proposal).
func (r *reader) table() error {
	withInit := r.pos < r.end && r.b[r.pos] == 0x40
	if withInit {
		r.pos++
		at := r.pos
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c != 0 {
			return r.errorf(at, "invalid table prefix byte 0x%02x", c)
		}
	}
	if err := r.valType(); err != nil {
		return err
	}
	if err := r.limits(); err != nil {
		return err
	}
	if withInit {
		return r.constExpr()
	}
	return nil
}

// elementSegment walks one element segment; the flags select which fields
// are present.
func (r *reader) elementSegment() error {
	at := r.pos
	flags, err := r.u32()
	if err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	if flags > 7 {
		return r.errorf(at, "invalid element segment flags %d", flags)
	}
	if flags&0x02 != 0 && flags&0x01 == 0 { // active with a table index
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("table index: %w", err)
		}
	}
	if flags&0x01 == 0 { // active: offset
		if err := r.constExpr(); err != nil {
			return fmt.Errorf("offset: %w", err)
		}
	}
	exprs := flags&0x04 != 0
	if flags&0x03 != 0 { // element kind (0x00, funcref) or reference type
		if exprs {
			err = r.valType()
		} else {
			at := r.pos
			var kind byte
			if kind, err = r.byte(); err == nil && kind != 0 {
				err = r.errorf(at, "invalid element kind 0x%02x", kind)
			}
		}
		if err != nil {
			return err
		}
	}
	if exprs {
		return r.vector("element count", 1, "element", r.constExpr) // an expression is at least its end
	}
	return r.vector("element count", 1, "element", func() error { _, err := r.u32(); return err })
}

// dataSegment walks one data segment.
func (r *reader) dataSegment() error {
	at := r.pos
	flags, err := r.u32()
	if err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	switch flags {
	case 0: // active, memory 0
	case 1: // passive
	case 2: // active with a memory index
		if _, err := r.u32(); err != nil {
			return fmt.Errorf("memory index: %w", err)
		}
	default:
		return r.errorf(at, "invalid data segment flags %d", flags)
	}
	if flags != 1 {
		if err := r.constExpr(); err != nil {
			return fmt.Errorf("offset: %w", err)
		}
	}
	n, err := r.count("data size", 1)
	if err != nil {
		return err
	}
	r.pos += n
	return nil
}

// checkNameSection walks the payload of the "name" custom section after its
// name. wazero decodes the module name (0), function names (1) and local
// names (2) subsections, each by its content rather than its declared size,
// and skips the others by their size; each known subsection must therefore
// end exactly where its size says, or wazero would go on reading counts from
// the bytes that follow.
func checkNameSection(b []byte, s *section) error {
	r := reader{b: b, pos: s.data, end: s.end}
	for r.pos < r.end {
		id, _ := r.byte()
		size, err := r.count("subsection size", 1)
		if err != nil {
			return fmt.Errorf("instrument: name section: subsection %d: %w", id, err)
		}
		sub := reader{b: b, pos: r.pos, end: r.pos + size}
		r.pos = sub.end
		var what string
		switch id {
		case 0:
			what = "module name subsection"
			_, err = sub.name()
		case 1:
			what = "function names subsection"
			err = sub.nameMap("function name count")
		case 2:
			what = "local names subsection"
			err = sub.vector("function count", 2, "function entry", func() error {
				if _, err := sub.u32(); err != nil {
					return err
				}
				return sub.nameMap("local name count")
			})
		default:
			continue
		}
		if err == nil {
			err = sub.trailing()
		}
		if err != nil {
			return fmt.Errorf("instrument: name section: %s: %w", what, err)
		}
	}
	return nil
}

// nameMap walks vec(index name).
func (r *reader) nameMap(what string) error {
	return r.vector(what, 2, "entry", func() error {
		if _, err := r.u32(); err != nil {
			return err
		}
		_, err := r.name()
		return err
	})
}
