package instrument_test

// A tiny encoder for hand-assembled test modules.

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

// interruptGlobal is the global entry Instrument appends.
var interruptGlobal = []byte{0x7f, 0x01, 0x41, 0x00, 0x0b}

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
