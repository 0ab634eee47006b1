package instrument_test

// A tiny encoder for hand-assembled test modules.

import "github.com/wasmsched/wasmsched/host/wasm/instrument"

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func u32(v uint32) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func s64(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// vec prefixes the concatenated items with their count.
func vec(items ...[]byte) []byte { return cat(u32(uint32(len(items))), cat(items...)) }

func name(s string) []byte { return cat(u32(uint32(len(s))), []byte(s)) }

func sec(id byte, payload ...[]byte) []byte {
	p := cat(payload...)
	return cat([]byte{id}, u32(uint32(len(p))), p)
}

func custom(n string, data ...byte) []byte { return sec(0, name(n), data) }

func module(sections ...[]byte) []byte {
	return cat([]byte{0, 'a', 's', 'm', 1, 0, 0, 0}, cat(sections...))
}

// funcType encodes (param params) (result results).
func funcType(params, results []byte) []byte {
	return cat([]byte{0x60}, u32(uint32(len(params))), params, u32(uint32(len(results))), results)
}

// body encodes a size-prefixed function body; locals are (count, type) pairs
// already encoded.
func body(locals [][]byte, code ...[]byte) []byte {
	b := cat(vec(locals...), cat(code...))
	return cat(u32(uint32(len(b))), b)
}

// check is the sequence Instrument inserts for global index g.
func check(g uint32) []byte { return cat([]byte{0x23}, u32(g), []byte{0x04, 0x40, 0x00, 0x0b}) }

// yield is the countdown Instrument appends to every check of a module with
// a 32-bit memory 0, for the counter global c: decrement, and every
// YieldPeriod checks reset and memory.grow 0.
func yield(c uint32) []byte { return yieldWith(c, i32c0) }

// yield64 is yield for a 64-bit memory 0: memory.grow takes an i64.
func yield64(c uint32) []byte { return yieldWith(c, []byte{0x42, 0x00}) }

func yieldWith(c uint32, zero []byte) []byte {
	return cat(
		[]byte{0x23}, u32(c), []byte{0x41, 0x01, 0x6b}, // global.get $c; i32.const 1; i32.sub
		[]byte{0x24}, u32(c), // global.set $c
		[]byte{0x23}, u32(c), []byte{0x45, 0x04, 0x40}, // global.get $c; i32.eqz; if
		[]byte{0x41}, s64(instrument.YieldPeriod), []byte{0x24}, u32(c), // i32.const PERIOD; global.set $c
		zero, []byte{0x40, 0x00, 0x1a, 0x0b}, // memory.grow 0; drop; end
	)
}

// checkYield is the whole sequence for a module with a 32-bit memory: the
// interrupt check on g, then the countdown on g+1.
func checkYield(g uint32) []byte { return cat(check(g), yield(g+1)) }

// interruptGlobal is the global entry Instrument appends.
var interruptGlobal = []byte{0x7f, 0x01, 0x41, 0x00, 0x0b}

// counterGlobal is the countdown global Instrument appends after
// interruptGlobal in a module with memory.
var counterGlobal = cat([]byte{0x7f, 0x01, 0x41}, s64(instrument.YieldPeriod), end)

// exportGlobal is an export entry of kind global.
func exportGlobal(n string, g uint32) []byte { return cat(name(n), []byte{0x03}, u32(g)) }

// Section ids.
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secTable    = 4
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secStart    = 8
	secElement  = 9
	secCode     = 10
	secData     = 11
	secDataCnt  = 12
	secTag      = 13
)

// Common instructions.
var (
	end     = []byte{0x0b}
	nop     = []byte{0x01}
	drop    = []byte{0x1a}
	loopE   = []byte{0x03, 0x40} // loop with empty block type
	blockE  = []byte{0x02, 0x40}
	i32c0   = []byte{0x41, 0x00}
	voidTyp = funcType(nil, nil)
)
