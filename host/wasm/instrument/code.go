package instrument

import "fmt"

// functionTypes yields the parameter count of each defined function in turn,
// reading its type index from the function section. A function without a
// valid type counts no parameters: wazero rejects the module before it
// compiles any function.
type functionTypes struct {
	r      reader   // the function section's entries not yet read
	params []uint16 // parameter count per type index
}

func (f *functionTypes) next() uint64 {
	if f.r.pos >= f.r.end {
		return 0
	}
	t, err := f.r.u32()
	if err != nil || uint64(t) >= uint64(len(f.params)) {
		return 0
	}
	return uint64(f.params[t])
}

// appendYield appends the countdown that follows the interrupt check when
// the module has a memory: decrement the counter global c and, when it
// reaches 0, reset it to YieldPeriod and execute `memory.grow 0` on memory 0,
// which wazero's compiler runs as a call into Go (where the goroutine can be
// preempted) and which changes nothing. mem64 selects the i64 operand of a
// 64-bit memory.
//
// wazero's compiler keeps the value of a global stored earlier in the same
// basic block, so the second global.get costs no load: the common path is a
// load, a subtraction, a store and a branch that is not taken.
func appendYield(b []byte, c uint32, mem64 bool) []byte {
	b = appendU32(append(b, 0x23), c)           // global.get $c
	b = append(b, 0x41, 0x01, 0x6b)             // i32.const 1; i32.sub
	b = appendU32(append(b, 0x24), c)           // global.set $c
	b = appendU32(append(b, 0x23), c)           // global.get $c
	b = append(b, 0x45, 0x04, 0x40)             // i32.eqz; if
	b = appendS32(append(b, 0x41), YieldPeriod) // i32.const YieldPeriod
	b = appendU32(append(b, 0x24), c)           // global.set $c
	if mem64 {
		b = append(b, 0x42, 0x00) // i64.const 0
	} else {
		b = append(b, 0x41, 0x00) // i32.const 0
	}
	return append(b, 0x40, 0x00, 0x1a, 0x0b) // memory.grow 0; drop; end
}

// rewriteCode returns the code section payload with check inserted at every
// function entry and after every loop's block type, updating info. It
// refuses a function that declares more than MaxFunctionLocals locals, and a
// module whose functions' parameters and declared locals add up to more than
// localsBudget(moduleSize).
func rewriteCode(b []byte, s *section, check []byte, importedFuncs uint32, fs functionTypes, moduleSize int, info *Info) ([]byte, error) {
	budget := localsBudget(moduleSize)
	r := reader{b: b, pos: s.payload, end: s.end}
	n, err := r.count("function body count", 3) // size, locals count, end
	if err != nil {
		return nil, fmt.Errorf("instrument: code section: %w", err)
	}
	out := make([]byte, 0, s.end-s.payload+(n+1)*(len(check)+1))
	out = appendU32(out, uint32(n))
	var body []byte  // reused across functions
	var total uint64 // parameters and declared locals so far
	for i := 0; i < n; i++ {
		fn := uint64(importedFuncs) + uint64(i)
		at := r.pos
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("instrument: function %d: body size: %w", fn, err)
		}
		if int64(size) > int64(r.remaining()) {
			return nil, fmt.Errorf("instrument: function %d: body size %d at offset 0x%x runs past the code section (%d bytes left)",
				fn, size, at, r.remaining())
		}
		br := reader{b: b, pos: r.pos, end: r.pos + int(size)}
		locals, err := br.locals()
		if err != nil {
			return nil, fmt.Errorf("instrument: function %d: %w", fn, err)
		}
		if locals > MaxFunctionLocals {
			return nil, fmt.Errorf("instrument: function %d: %d locals declared, at most %d allowed", fn, locals, MaxFunctionLocals)
		}
		if total += locals + fs.next(); total > budget {
			return nil, fmt.Errorf("instrument: function %d: the functions up to this one have %d parameters and locals in total, "+
				"at most %d allowed in a module of %d bytes (%d plus 1 per byte; dropped custom sections not counted)",
				fn, total, budget, moduleSize, MaxFunctionLocals)
		}
		body = append(body[:0], b[r.pos:br.pos]...)
		var loops int
		if body, loops, err = rewriteBody(&br, body, check); err != nil {
			return nil, fmt.Errorf("instrument: function %d: %w", fn, err)
		}
		r.pos = br.end
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
		info.Functions++
		info.Loops += loops
	}
	if err := r.trailing(); err != nil {
		return nil, fmt.Errorf("instrument: code section: %w", err)
	}
	return out, nil
}

// locals walks a function body's local declarations and returns how many
// locals they declare.
func (r *reader) locals() (uint64, error) {
	n, err := r.count("local declaration count", 2)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for i := 0; i < n; i++ {
		c, err := r.u32()
		if err == nil {
			err = r.valType()
		}
		if err != nil {
			return 0, fmt.Errorf("local declaration %d: %w", i, err)
		}
		sum += uint64(c)
	}
	return sum, nil
}

// rewriteBody appends the instrumented instructions of a body (r is past its
// local declarations, already in dst) to dst and returns it with the number
// of loops found.
//
// Block nesting is tracked only to find the `end` that closes the function,
// which must be the last byte of the body.
func rewriteBody(r *reader, dst, check []byte) ([]byte, int, error) {
	dst = append(dst, check...)

	seg := r.pos // start of the bytes not yet copied to dst
	depth, loops := 0, 0
	for {
		at := r.pos
		if at >= r.end {
			return nil, 0, r.errorf(at, "function body ends before its final end")
		}
		op := r.b[at]
		r.pos++
		switch op {
		case 0x02, 0x04: // block, if
			if err := r.blockType(); err != nil {
				return nil, 0, err
			}
			depth++
		case 0x03: // loop
			if err := r.blockType(); err != nil {
				return nil, 0, err
			}
			depth++
			loops++
			dst = append(dst, r.b[seg:r.pos]...)
			dst = append(dst, check...)
			seg = r.pos
		case 0x0b: // end
			if depth > 0 {
				depth--
				continue
			}
			if r.pos != r.end {
				return nil, 0, r.errorf(at, "final end leaves %d byte(s) of the function body unread", r.end-r.pos)
			}
			return append(dst, r.b[seg:r.pos]...), loops, nil
		default:
			if err := r.immediates(op, at); err != nil {
				return nil, 0, err
			}
		}
	}
}

// constExpr skips a constant expression up to and including its `end`.
func (r *reader) constExpr() error {
	for {
		at := r.pos
		op, err := r.byte()
		if err != nil {
			return fmt.Errorf("constant expression: %w", err)
		}
		switch op {
		case 0x0b:
			return nil
		case 0x02, 0x03, 0x04, 0x05:
			return r.errorf(at, "constant expression: unexpected opcode 0x%02x", op)
		}
		if err := r.immediates(op, at); err != nil {
			return fmt.Errorf("constant expression: %w", err)
		}
	}
}

// immediates skips the immediates of op (already consumed, found at offset
// at); structured control opcodes are handled by the callers. Unknown and
// deliberately unsupported opcodes (exception handling) are errors.
func (r *reader) immediates(op byte, at int) error {
	var err error
	switch {
	case op <= 0x01, op == 0x05, op == 0x0f, op == 0x1a, op == 0x1b, op == 0xd1,
		op >= 0x45 && op <= 0xc4:
		// unreachable, nop, else, return, drop, select, ref.is_null, numeric
	case op == 0x0c, op == 0x0d, op == 0x10, op == 0x12, op >= 0x20 && op <= 0x26, op == 0xd2,
		op == 0x3f, op == 0x40:
		// br, br_if, call, return_call, local.*, global.*, table.get/set,
		// ref.func: one index. memory.size/grow: memidx (0x00 in MVP).
		_, err = r.u32()
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		err = r.u32s(2)
	case op == 0x0e: // br_table
		var n int
		if n, err = r.count("br_table label count", 1); err == nil {
			err = r.u32s(n + 1)
		}
	case op == 0x1c: // select t*
		var n int
		if n, err = r.count("select type count", 1); err == nil {
			for i := 0; i < n && err == nil; i++ {
				err = r.valType()
			}
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores
		err = r.memarg()
	case op == 0x41:
		_, err = r.leb(32, true)
	case op == 0x42:
		_, err = r.leb(64, true)
	case op == 0x43:
		err = r.skip(4)
	case op == 0x44:
		err = r.skip(8)
	case op == 0xd0: // ref.null
		err = r.heapType()
	case op == 0xfc:
		return r.miscImmediates(at)
	case op == 0xfd:
		return r.simdImmediates(at)
	case op == 0xfe:
		return r.atomicImmediates(at)
	default:
		// Includes exception handling: try 0x06, catch 0x07, throw 0x08,
		// rethrow 0x09, throw_ref 0x0a, delegate 0x18, catch_all 0x19,
		// try_table 0x1f.
		return r.errorf(at, "unsupported opcode 0x%02x", op)
	}
	if err != nil {
		return fmt.Errorf("immediate of opcode 0x%02x at offset 0x%x: %w", op, at, err)
	}
	return nil
}

func (r *reader) u32s(n int) error {
	for i := 0; i < n; i++ {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// memarg skips align, an optional memory index (bit 6 of align, multi-memory)
// and offset (u64 so that memory64 offsets are accepted too).
func (r *reader) memarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	_, err = r.leb(64, false)
	return err
}

// prefixed reads the u32 sub-opcode that follows a 0xfc/0xfd/0xfe prefix.
func (r *reader) prefixed(prefix byte, at int) (uint32, error) {
	sub, err := r.u32()
	if err != nil {
		return 0, fmt.Errorf("opcode 0x%02x at offset 0x%x: sub-opcode: %w", prefix, at, err)
	}
	return sub, nil
}

func (r *reader) miscImmediates(at int) error {
	sub, err := r.prefixed(0xfc, at)
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // saturating truncation
	case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
		// data.drop, memory.fill, elem.drop, table.grow/size/fill
		err = r.u32s(1)
	case sub == 8, sub == 10, sub == 12, sub == 14:
		// memory.init, memory.copy, table.init, table.copy
		err = r.u32s(2)
	default:
		return r.errorf(at, "unsupported opcode 0xfc 0x%02x", sub)
	}
	if err != nil {
		return fmt.Errorf("immediate of opcode 0xfc 0x%02x at offset 0x%x: %w", sub, at, err)
	}
	return nil
}

func (r *reader) simdImmediates(at int) error {
	sub, err := r.prefixed(0xfd, at)
	if err != nil {
		return err
	}
	switch {
	case sub <= 11, sub == 92, sub == 93: // loads, stores, load_zero
		err = r.memarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		err = r.skip(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		err = r.skip(1)
	case sub >= 84 && sub <= 91: // load/store lane
		if err = r.memarg(); err == nil {
			err = r.skip(1)
		}
	case sub > 0xff, simdUnassigned(sub):
		return r.errorf(at, "unsupported opcode 0xfd 0x%02x", sub)
	}
	if err != nil {
		return fmt.Errorf("immediate of opcode 0xfd 0x%02x at offset 0x%x: %w", sub, at, err)
	}
	return nil
}

// simdUnassigned reports the gaps in the final SIMD opcode space (0x00-0xff).
func simdUnassigned(sub uint32) bool {
	switch sub {
	case 0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee:
		return true
	}
	return false
}

func (r *reader) atomicImmediates(at int) error {
	sub, err := r.prefixed(0xfe, at)
	if err != nil {
		return err
	}
	switch {
	case sub == 0x03: // atomic.fence
		var c byte
		if c, err = r.byte(); err == nil && c != 0 {
			err = r.errorf(r.pos-1, "atomic.fence reserved byte 0x%02x is not zero", c)
		}
	case sub <= 0x02, sub >= 0x10 && sub <= 0x4e: // notify, wait, loads, stores, rmw
		err = r.memarg()
	default:
		return r.errorf(at, "unsupported opcode 0xfe 0x%02x", sub)
	}
	if err != nil {
		return fmt.Errorf("immediate of opcode 0xfe 0x%02x at offset 0x%x: %w", sub, at, err)
	}
	return nil
}
