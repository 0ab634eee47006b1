package instrument_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// piece is one instruction of a hand-assembled body; loop marks the
// instructions after which Instrument must insert the check.
type piece struct {
	b    []byte
	loop bool
}

func pieces(ps []piece, g uint32) (in, want []byte) {
	for _, p := range ps {
		in = append(in, p.b...)
		want = append(want, p.b...)
		if p.loop {
			want = append(want, check(g)...)
		}
	}
	return in, want
}

func rep(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

// allOpcodes exercises every supported immediate form, mostly with 0x03 bytes
// (the loop opcode) inside immediates, so that a byte scan would go wrong.
func allOpcodes() []piece {
	p := func(b ...byte) piece { return piece{b: b} }
	l := func(b ...byte) piece { return piece{b: b, loop: true} }
	return []piece{
		p(0x00), p(0x01), p(0x0f), p(0x1a), p(0x1b),
		p(0x41, 0x03), p(0x41, 0x83, 0x80, 0x80, 0x80, 0x00), p(0x41, 0xff, 0xff, 0xff, 0xff, 0x7f),
		piece{b: cat([]byte{0x42}, s64(0x0303030303030303))}, piece{b: cat([]byte{0x42}, s64(-0x0303030303030303))},
		piece{b: cat([]byte{0x43}, rep(0x03, 4))}, piece{b: cat([]byte{0x44}, rep(0x03, 8))},
		p(0x20, 0x03), p(0x21, 0x03), p(0x22, 0x83, 0x03), p(0x23, 0x03), p(0x24, 0x03),
		p(0x0c, 0x03), p(0x0d, 0x03), p(0x0e, 0x03, 0x03, 0x03, 0x03, 0x03), p(0x0e, 0x00, 0x03),
		p(0x10, 0x03), p(0x11, 0x03, 0x03), p(0x12, 0x03), p(0x13, 0x03, 0x03),
		p(0x1c, 0x01, 0x7f), p(0x1c, 0x02, 0x7b, 0x70), p(0x1c, 0x01, 0x63, 0x03),
		p(0x25, 0x03), p(0x26, 0x03),
		p(0x28, 0x02, 0x03), p(0x36, 0x02, 0x83, 0x03), p(0x3e, 0x00, 0x03), p(0x29, 0x43, 0x03, 0x03),
		p(0x3f, 0x00), p(0x40, 0x00),
		p(0x45), p(0x6a), p(0xbf), p(0xc0), p(0xc4),
		p(0xd0, 0x70), p(0xd0, 0x6f), p(0xd0, 0x03), p(0xd1), p(0xd2, 0x03),
		p(0xfc, 0x00), p(0xfc, 0x03), p(0xfc, 0x07), p(0xfc, 0x08, 0x03, 0x00), p(0xfc, 0x09, 0x03),
		p(0xfc, 0x0a, 0x00, 0x00), p(0xfc, 0x0b, 0x00), p(0xfc, 0x0c, 0x03, 0x03), p(0xfc, 0x0d, 0x03),
		p(0xfc, 0x0e, 0x03, 0x03), p(0xfc, 0x0f, 0x03), p(0xfc, 0x10, 0x03), p(0xfc, 0x11, 0x03),
		p(0xfd, 0x00, 0x04, 0x03), p(0xfd, 0x0b, 0x04, 0x03), p(0xfd, 0x5c, 0x02, 0x03), p(0xfd, 0x5d, 0x03, 0x03),
		piece{b: cat([]byte{0xfd, 0x0c}, rep(0x03, 16))}, piece{b: cat([]byte{0xfd, 0x0d}, rep(0x03, 16))},
		p(0xfd, 0x0e), p(0xfd, 0x14), p(0xfd, 0x15, 0x03), p(0xfd, 0x22, 0x03), p(0xfd, 0x23),
		p(0xfd, 0x54, 0x00, 0x03, 0x03), p(0xfd, 0x5b, 0x03, 0x03, 0x03), p(0xfd, 0x5e),
		p(0xfd, 0x99, 0x01), p(0xfd, 0xff, 0x01), p(0xfd, 0x83, 0x80, 0x00, 0x02, 0x03),
		p(0xfe, 0x00, 0x02, 0x03), p(0xfe, 0x02, 0x03, 0x03), p(0xfe, 0x03, 0x00), p(0xfe, 0x10, 0x02, 0x03), p(0xfe, 0x4e, 0x03, 0x03),
		// Structured control with every block type form.
		p(0x02, 0x40), l(0x03, 0x40), p(0x0b), p(0x0b),
		p(0x04, 0x7f), p(0x41, 0x03), p(0x05), p(0x41, 0x03), p(0x0b),
		l(0x03, 0x7f), p(0x41, 0x03), p(0x0b),
		l(0x03, 0x03), l(0x03, 0xc8, 0x01), l(0x03, 0x63, 0x03), l(0x03, 0x64, 0x70), l(0x03, 0x7b),
		p(0x02, 0x70), p(0x0b), p(0x0b), p(0x0b), p(0x0b), p(0x0b), p(0x0b),
		p(0x04, 0x40), l(0x03, 0x40), p(0x0c, 0x00), p(0x0b), p(0x0b),
	}
}

func TestInstrument(t *testing.T) {
	const irq = "irq"
	typeSec := sec(secType, vec(voidTyp))
	funcSec := sec(secFunction, vec(u32(0)))
	ops, opsWant := pieces(allOpcodes(), 0)
	opLoops := 0
	for _, p := range allOpcodes() {
		if p.loop {
			opLoops++
		}
	}

	imports := sec(secImport, vec(
		cat(name("env"), name("f"), []byte{0x00}, u32(0)),
		cat(name("env"), name("g"), []byte{0x03, 0x7f, 0x00}),
		cat(name("env"), name("t"), []byte{0x01, 0x70, 0x00, 0x01}),
		cat(name("env"), name("m"), []byte{0x02, 0x01, 0x01, 0x02}),
		cat(name("env"), name("m64"), []byte{0x02, 0x05, 0x01, 0x02}),
		cat(name("env"), name("h"), []byte{0x03, 0x7e, 0x01}),
		cat(name("env"), name("f2"), []byte{0x00}, u32(0)),
		cat(name("env"), name("r"), []byte{0x03, 0x63, 0x00, 0x00}),
		cat(name("env"), name("tag"), []byte{0x04, 0x00}, u32(0)),
	))
	globals := [][]byte{
		cat([]byte{0x7f, 0x00}, i32c0, end),
		cat([]byte{0x7e, 0x01, 0x42}, s64(-1), end),
		// v128.const whose immediate is all 0x0b (end) bytes.
		cat([]byte{0x7b, 0x00, 0xfd, 0x0c}, rep(0x0b, 16), end),
		// extended const: i32.const 11; global.get 0; i32.add
		{0x7f, 0x00, 0x41, 0x0b, 0x23, 0x00, 0x6a, 0x0b},
		{0x70, 0x00, 0xd2, 0x00, 0x0b},
	}
	mainExport := cat(name("main"), []byte{0x00}, u32(2))
	startSec := sec(secStart, u32(2))
	elemSec := sec(secElement, vec(cat([]byte{0x00}, i32c0, end, vec(u32(2)))))
	dataSec := sec(secData, vec(cat([]byte{0x01}, u32(2), []byte{0xaa, 0xbb})))
	localsDecl := [][]byte{cat(u32(3), []byte{0x7f}), {0x01, 0x7b}, {0x02, 0x63, 0x70}, {0x01, 0x64, 0x03}}

	tests := []struct {
		name string
		in   []byte
		want []byte
		info instrument.Info
	}{{
		name: "empty module",
		in:   module(),
		want: module(sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0)))),
	}, {
		name: "no global or export section, custom section dropped, name section kept in place",
		in: module(typeSec, funcSec, custom("c", 1, 2, 3), nameSec,
			sec(secCode, vec(body(nil, i32c0, drop, loopE, end, end))), custom(".debug_info", 4)),
		want: module(typeSec, funcSec, nameSec,
			sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, check(0), i32c0, drop, loopE, check(0), end, end)))),
		info: instrument.Info{Functions: 1, Loops: 1, DroppedCustomSections: 2},
	}, {
		name: "every section kind, imported and defined globals",
		in: module(custom("first"), typeSec, imports, sec(secFunction, vec(u32(0), u32(0))),
			sec(secTable, vec([]byte{0x70, 0x00, 0x02})), sec(secMemory, vec([]byte{0x00, 0x01})),
			sec(secGlobal, vec(globals...)), sec(secExport, vec(mainExport)), startSec, elemSec,
			sec(secDataCnt, u32(1)),
			sec(secCode, vec(body(localsDecl, nop, end), body(nil, loopE, loopE, end, end, end))),
			dataSec, custom("name", 0, 1, 0)),
		want: module(typeSec, imports, sec(secFunction, vec(u32(0), u32(0))),
			sec(secTable, vec([]byte{0x70, 0x00, 0x02})), sec(secMemory, vec([]byte{0x00, 0x01})),
			sec(secGlobal, vec(append(globals, interruptGlobal, counterGlobal)...)),
			sec(secExport, vec(mainExport, exportGlobal(irq, 8))), startSec, elemSec,
			sec(secDataCnt, u32(1)),
			sec(secCode, vec(body(localsDecl, checkYield(8), nop, end),
				body(nil, checkYield(8), loopE, checkYield(8), loopE, checkYield(8), end, end, end))),
			dataSec, custom("name", 0, 1, 0)),
		info: instrument.Info{GlobalIndex: 8, Functions: 2, Loops: 2, DroppedCustomSections: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		// The imported 32-bit memory is memory 0, before the defined one
		// and the imported 64-bit one.
		name: "imported memory is memory 0",
		in: module(typeSec, sec(secImport, vec(cat(name("env"), name("m"), []byte{0x02, 0x00, 0x01}),
			cat(name("env"), name("m64"), []byte{0x02, 0x04, 0x01}))),
			funcSec, sec(secMemory, vec([]byte{0x04, 0x01})), sec(secCode, vec(body(nil, loopE, end, end)))),
		want: module(typeSec, sec(secImport, vec(cat(name("env"), name("m"), []byte{0x02, 0x00, 0x01}),
			cat(name("env"), name("m64"), []byte{0x02, 0x04, 0x01}))),
			funcSec, sec(secMemory, vec([]byte{0x04, 0x01})),
			sec(secGlobal, vec(interruptGlobal, counterGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, checkYield(0), loopE, checkYield(0), end, end)))),
		info: instrument.Info{Functions: 1, Loops: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		name: "imported 64-bit memory 0 grows by an i64",
		in: module(typeSec, sec(secImport, vec(cat(name("env"), name("m64"), []byte{0x02, 0x05, 0x01, 0x02}))),
			funcSec, sec(secCode, vec(body(nil, end)))),
		want: module(typeSec, sec(secImport, vec(cat(name("env"), name("m64"), []byte{0x02, 0x05, 0x01, 0x02}))),
			funcSec, sec(secGlobal, vec(interruptGlobal, counterGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, check(0), yield64(1), end)))),
		info: instrument.Info{Functions: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		name: "defined 64-bit memory 0 grows by an i64",
		in:   module(typeSec, funcSec, sec(secMemory, vec([]byte{0x04, 0x01}, []byte{0x00, 0x01})), sec(secCode, vec(body(nil, end)))),
		want: module(typeSec, funcSec, sec(secMemory, vec([]byte{0x04, 0x01}, []byte{0x00, 0x01})),
			sec(secGlobal, vec(interruptGlobal, counterGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, check(0), yield64(1), end)))),
		info: instrument.Info{Functions: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		name: "empty memory section: no memory, no yield",
		in:   module(typeSec, funcSec, sec(secMemory, vec()), sec(secCode, vec(body(nil, loopE, end, end)))),
		want: module(typeSec, funcSec, sec(secMemory, vec()),
			sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, check(0), loopE, check(0), end, end)))),
		info: instrument.Info{Functions: 1, Loops: 1},
	}, {
		name: "counter index takes one more LEB128 byte than the interrupt index",
		in: module(typeSec, funcSec, sec(secMemory, vec([]byte{0x00, 0x01})),
			sec(secGlobal, vec(slicesRepeat(globals[0], 127)...)), sec(secCode, vec(body(nil, loopE, end, end)))),
		want: module(typeSec, funcSec, sec(secMemory, vec([]byte{0x00, 0x01})),
			sec(secGlobal, vec(append(slicesRepeat(globals[0], 127), interruptGlobal, counterGlobal)...)),
			sec(secExport, vec(exportGlobal(irq, 127))),
			sec(secCode, vec(body(nil, checkYield(127), loopE, checkYield(127), end, end)))),
		info: instrument.Info{GlobalIndex: 127, Functions: 1, Loops: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		name: "tag section precedes the inserted global section",
		in:   module(typeSec, sec(secTag, vec(cat([]byte{0x00}, u32(0)))), sec(secExport, vec(mainExport))),
		want: module(typeSec, sec(secTag, vec(cat([]byte{0x00}, u32(0)))),
			sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(mainExport, exportGlobal(irq, 0)))),
	}, {
		name: "export section without global section",
		in:   module(typeSec, funcSec, sec(secExport, vec(mainExport)), sec(secCode, vec(body(nil, end)))),
		want: module(typeSec, funcSec, sec(secGlobal, vec(interruptGlobal)),
			sec(secExport, vec(mainExport, exportGlobal(irq, 0))), sec(secCode, vec(body(nil, check(0), end)))),
		info: instrument.Info{Functions: 1},
	}, {
		name: "global section without export section",
		in:   module(typeSec, funcSec, sec(secGlobal, vec(globals[0])), custom("x"), sec(secCode, vec(body(nil, end)))),
		want: module(typeSec, funcSec, sec(secGlobal, vec(globals[0], interruptGlobal)),
			sec(secExport, vec(exportGlobal(irq, 1))), sec(secCode, vec(body(nil, check(1), end)))),
		info: instrument.Info{GlobalIndex: 1, Functions: 1, DroppedCustomSections: 1},
	}, {
		name: "trailing name section after a missing export section",
		in:   module(typeSec, custom("name")),
		want: module(typeSec, custom("name"), sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0)))),
	}, {
		name: "trailing custom section dropped",
		in:   module(typeSec, custom("tail")),
		want: module(typeSec, sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0)))),
		info: instrument.Info{DroppedCustomSections: 1},
	}, {
		name: "every form of the checked sections",
		in:   allForms(),
		want: allFormsWant(irq),
		info: instrument.Info{GlobalIndex: 1, Functions: 2, Loops: 1, YieldPeriod: instrument.YieldPeriod},
	}, {
		name: "every opcode and block type",
		in:   module(typeSec, funcSec, sec(secCode, vec(body(nil, ops, end)))),
		want: module(typeSec, funcSec, sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0))),
			sec(secCode, vec(body(nil, check(0), opsWant, end)))),
		info: instrument.Info{Functions: 1, Loops: opLoops},
	}, {
		name: "multi-byte global index",
		in:   module(sec(secGlobal, vec(slicesRepeat(globals[0], 200)...)), sec(secCode, vec(body(nil, loopE, end, end)))),
		want: module(sec(secGlobal, vec(append(slicesRepeat(globals[0], 200), interruptGlobal)...)),
			sec(secExport, vec(exportGlobal(irq, 200))),
			sec(secCode, vec(body(nil, check(200), loopE, check(200), end, end)))),
		info: instrument.Info{GlobalIndex: 200, Functions: 1, Loops: 1},
	}, {
		name: "empty code section",
		in:   module(sec(secCode, vec())),
		want: module(sec(secGlobal, vec(interruptGlobal)), sec(secExport, vec(exportGlobal(irq, 0))), sec(secCode, vec())),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			got, info, err := instrument.Instrument(in, irq)
			if err != nil {
				t.Fatalf("Instrument: %v", err)
			}
			if !bytes.Equal(in, tc.in) {
				t.Error("Instrument modified its input")
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("output mismatch\n got % x\nwant % x", got, tc.want)
			}
			if info != tc.info {
				t.Errorf("info = %+v, want %+v", info, tc.info)
			}
			again, _, err := instrument.Instrument(in, irq)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("second run differs (err %v)", err)
			}
		})
	}
}

func slicesRepeat(b []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// TestInstrumentTwice checks that output is valid input: a second export
// name gets the next index, the same name is refused.
func TestInstrumentTwice(t *testing.T) {
	in := module(sec(secType, vec(voidTyp)), sec(secFunction, vec(u32(0))), sec(secCode, vec(body(nil, loopE, end, end))))
	once, info1, err := instrument.Instrument(in, "a")
	if err != nil {
		t.Fatal(err)
	}
	twice, info2, err := instrument.Instrument(once, "b")
	if err != nil {
		t.Fatal(err)
	}
	if info1.GlobalIndex != 0 || info2.GlobalIndex != 1 || info2.Loops != 1 {
		t.Errorf("infos %+v then %+v", info1, info2)
	}
	if len(twice) != len(once)+len(check(1))*2+len(exportGlobal("b", 1))+len(interruptGlobal) {
		t.Errorf("unexpected size %d after %d", len(twice), len(once))
	}
	if _, _, err := instrument.Instrument(once, "a"); err == nil || !strings.Contains(err.Error(), `export "a" already exists`) {
		t.Errorf("same name again: err = %v", err)
	}
}

func TestInstrumentErrors(t *testing.T) {
	hdr := module()
	typeSec := sec(secType, vec(voidTyp))
	funcSec := sec(secFunction, vec(u32(0)))
	big := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
	// fn wraps raw body bytes (locals included) in a one-function module.
	fn := func(raw ...byte) []byte {
		return module(typeSec, funcSec, sec(secCode, vec(cat(u32(uint32(len(raw))), raw))))
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"nil", nil, "bad magic"},
		{"short", []byte("\x00asm"), "bad magic"},
		{"wrong magic", []byte("\x00wasm\x01\x00\x00"), "bad magic"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "unsupported binary version"},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), "unsupported binary version"},
		{"section size missing", cat(hdr, []byte{1}), "section 1 size: unexpected end of input"},
		{"section size truncated", cat(hdr, []byte{1, 0x80}), "unexpected end of input in LEB128"},
		{"section size overflow", cat(hdr, []byte{1, 0x80, 0x80, 0x80, 0x80, 0x10}), "overflows 32 bits"},
		{"section size too long", cat(hdr, []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), "longer than 32 bits"},
		{"section past end", cat(hdr, []byte{1, 5, 0}), "runs past the end of the module"},
		{"huge section", cat(hdr, []byte{1}, big), "runs past the end of the module"},
		{"unknown section", cat(hdr, sec(14)), "unknown section id 14 at offset 0x8"},
		{"duplicate section", module(typeSec, typeSec), "section 1 at offset 0x"},
		{"out of order", module(sec(secCode, vec()), funcSec), "duplicated or out of order"},
		{"tag after global", module(sec(secGlobal, vec()), sec(secTag, vec())), "duplicated or out of order"},
		{"datacount after code", module(sec(secCode, vec()), sec(secDataCnt, u32(0))), "duplicated or out of order"},
		{"custom name truncated", cat(hdr, sec(0, []byte{5, 'a'})), "custom section at offset 0x8"},
		{"empty custom section", cat(hdr, sec(0)), "custom section"},
		{"import count", module(sec(secImport, big)), "import count 4294967295 exceeds"},
		{"import kind", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x05, 0x00})))), "invalid import kind 0x05"},
		{"import mutability", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x03, 0x7f, 0x02})))), "invalid global mutability 0x02"},
		{"import valtype", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x03, 0x50, 0x00})))), "invalid value type 0x50"},
		{"import heaptype", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x03, 0x63, 0x50, 0x00})))), "invalid heap type 0x50"},
		{"import limits", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x02, 0x10, 0x00})))), "invalid limits flags 0x10"},
		{"import limits truncated", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x02, 0x01, 0x00})))), "limits maximum"},
		{"import name", module(sec(secImport, vec(cat([]byte{0x7f}, name("b"), []byte{0x02, 0x00, 0x00})))), "name length 127 exceeds"},
		{"import trailing", module(sec(secImport, vec(cat(name("a"), name("b"), []byte{0x02, 0x00, 0x00})), []byte{0})), "import section: 1 trailing bytes"},
		{"global count", module(sec(secGlobal, big)), "global count 4294967295 exceeds"},
		{"global expr truncated", module(sec(secGlobal, vec(cat([]byte{0x7f, 0x00}, i32c0)))), "global 0: constant expression: unexpected end of input"},
		{"global expr block", module(sec(secGlobal, vec([]byte{0x7f, 0x00, 0x02, 0x40, 0x0b}))), "constant expression: unexpected opcode 0x02"},
		{"global expr opcode", module(sec(secGlobal, vec([]byte{0x7f, 0x00, 0x06, 0x0b}))), "unsupported opcode 0x06"},
		{"global trailing", module(sec(secGlobal, vec(cat([]byte{0x7f, 0x00}, i32c0, end)), []byte{0})), "global section: 1 trailing bytes"},
		{"export count", module(sec(secExport, big)), "export count 4294967295 exceeds"},
		{"export truncated", module(sec(secExport, vec(cat(name("a"), []byte{0x00})))), "export section: export 0:"},
		{"export trailing", module(sec(secExport, vec(cat(name("a"), []byte{0x00, 0x00})), []byte{0})), "export section: 1 trailing bytes"},
		{"export exists", module(sec(secExport, vec(cat(name("main"), []byte{0x00, 0x00}), exportGlobal("irq", 0)))), `export "irq" already exists`},
		{"code count", module(sec(secCode, big)), "function body count 4294967295 exceeds"},
		{"body past section", module(sec(secCode, []byte{0x01, 0x05, 0x00, 0x0b})), "instrument: function 0: body size 5 at offset 0x"},
		{"code trailing", module(sec(secCode, vec(body(nil, end)), []byte{0})), "code section: 1 trailing bytes"},
		{"locals count", fn(cat(big, []byte{0x7f, 0x0b})...), "local declaration count 4294967295 exceeds"},
		{"locals type", fn(0x01, 0x01, 0x50, 0x0b), "local declaration 0: invalid value type 0x50"},
		{"no end", fn(0x00, 0x01), "function body ends before its final end"},
		{"empty body", module(typeSec, funcSec, sec(secCode, []byte{0x01, 0x00, 0x00, 0x00})), "function 0: local declaration count: unexpected end of input"},
		{"end too early", fn(0x00, 0x0b, 0x01), "final end leaves 1 byte(s) of the function body unread"},
		{"extra end", fn(0x00, 0x0b, 0x0b), "final end leaves 1 byte(s) of the function body unread"},
		{"unclosed loop", fn(0x00, 0x03, 0x40, 0x0b), "function body ends before its final end"},
		{"i32.const overflow", fn(0x00, 0x41, 0x80, 0x80, 0x80, 0x80, 0x40, 0x0b), "immediate of opcode 0x41 at offset 0x"},
		{"i32.const too long", fn(0x00, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b), "LEB128 integer longer than 32 bits"},
		{"i64.const overflow", fn(0x00, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x0b), "overflows 64 bits"},
		{"f64.const truncated", fn(0x00, 0x44, 0, 0, 0, 0, 0x0b), "need 8 bytes, have 5"},
		{"v128.const truncated", fn(0x00, 0xfd, 0x0c, 0, 0, 0x0b), "need 16 bytes"},
		{"br_table count", fn(cat([]byte{0x00, 0x0e}, big, []byte{0x00, 0x0b})...), "br_table label count 4294967295 exceeds"},
		{"select type count", fn(cat([]byte{0x00, 0x1c}, big, []byte{0x0b})...), "select type count"},
		{"block type", fn(0x00, 0x02, 0x50, 0x0b, 0x0b), "invalid block type 0x50"},
		{"negative block type", fn(0x00, 0x03, 0xff, 0x7f, 0x0b, 0x0b), "invalid block type 0xff"},
		{"block type overflow", fn(0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0x4f, 0x0b, 0x0b), "block type: LEB128 integer overflows 33 bits"},
		{"memarg truncated", fn(0x00, 0x28, 0x42, 0x00), "immediate of opcode 0x28"},
		{"atomic.fence byte", fn(0x00, 0xfe, 0x03, 0x01, 0x0b), "atomic.fence reserved byte 0x01 is not zero"},
		{"0xfc unknown", fn(0x00, 0xfc, 0x12, 0x0b), "unsupported opcode 0xfc 0x12 at offset 0x"},
		{"0xfc truncated", fn(0x00, 0xfc, 0x08, 0x00), "immediate of opcode 0xfc 0x08"},
		{"0xfd gap", fn(0x00, 0xfd, 0x9a, 0x01, 0x0b), "unsupported opcode 0xfd 0x9a"},
		{"0xfd relaxed", fn(0x00, 0xfd, 0x80, 0x02, 0x0b), "unsupported opcode 0xfd 0x100"},
		{"0xfd sub-opcode", fn(0x00, 0xfd, 0x80), "opcode 0xfd at offset 0x"},
		{"0xfe unknown", fn(0x00, 0xfe, 0x04, 0x0b), "unsupported opcode 0xfe 0x04"},
		{"0xfe past end", fn(0x00, 0xfe, 0x4f, 0x00, 0x00, 0x0b), "unsupported opcode 0xfe 0x4f"},
		{"invalid export name", nil, "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "irq"
			if tc.name == "invalid export name" {
				tc.in, name = module(), "\xff"
			}
			out, _, err := instrument.Instrument(tc.in, name)
			if err == nil {
				t.Fatalf("no error; output % x", out)
			}
			if out != nil {
				t.Error("output returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "instrument: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestUnsupportedOpcode checks the exact message: function index (imports
// included), opcode and absolute offset.
func TestUnsupportedOpcode(t *testing.T) {
	for _, op := range []byte{0x06, 0x07, 0x08, 0x09, 0x0a, 0x14, 0x15, 0x17, 0x18, 0x19, 0x1f, 0x27, 0xc5, 0xcf, 0xd3, 0xd6, 0xfb, 0xff} {
		in := module(sec(secType, vec(voidTyp)),
			sec(secImport, vec(cat(name("env"), name("f"), []byte{0x00, 0x00}))),
			sec(secFunction, vec(u32(0), u32(0))),
			sec(secCode, vec(body(nil, end), body(nil, nop, loopE, []byte{op, 0x00}, end, end))))
		at := bytes.LastIndex(in, []byte{0x01, 0x03, 0x40, op}) + 3
		want := fmt.Sprintf("instrument: function 2: unsupported opcode 0x%02x at offset 0x%x", op, at)
		if _, _, err := instrument.Instrument(in, "irq"); err == nil || err.Error() != want {
			t.Errorf("opcode 0x%02x: err = %v, want %s", op, err, want)
		}
	}
}

// TestTruncations cuts a valid module at every length: each prefix must fail
// cleanly or, where the cut falls between sections, succeed.
func TestTruncations(t *testing.T) {
	ops, _ := pieces(allOpcodes(), 0)
	full := module(sec(secType, vec(voidTyp)), sec(secFunction, vec(u32(0))),
		sec(secGlobal, vec(cat([]byte{0x7f, 0x00}, i32c0, end))),
		sec(secCode, vec(body(nil, ops, end))))
	for n := 0; n < len(full); n++ {
		_, _, err := instrument.Instrument(full[:n], "irq")
		if err != nil && !strings.HasPrefix(err.Error(), "instrument: ") {
			t.Fatalf("prefix %d: %v", n, err)
		}
	}
	if _, _, err := instrument.Instrument(full, "irq"); err != nil {
		t.Fatal(err)
	}
}
