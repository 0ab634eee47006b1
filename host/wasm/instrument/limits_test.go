package instrument_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// subsec encodes a name section subsection.
func subsec(id byte, content ...[]byte) []byte {
	c := cat(content...)
	return cat([]byte{id}, u32(uint32(len(c))), c)
}

// nameSec names function 0 "f".
var nameSec = custom("name", subsec(1, vec(cat(u32(0), name("f"))))...)

// allFormsSections returns the sections of a module that uses every form of
// the sections Instrument only checks, in three runs: before the global
// section, between export and code, after code.
func allFormsSections() (head, mid, tail [][]byte) {
	types := sec(secType, vec(
		voidTyp,
		// (param i32 (ref null func) (ref 0)) (result i64 v128)
		cat([]byte{0x60}, u32(3), []byte{0x7f, 0x63, 0x70, 0x64, 0x00}, u32(2), []byte{0x7e, 0x7b}),
		cat([]byte{0x4e}, vec(voidTyp, funcType([]byte{0x7f}, nil))), // recursion group
		[]byte{0x4e, 0x00}, // empty recursion group
	))
	funcs := sec(secFunction, vec(u32(0), u32(0)))
	tables := sec(secTable, vec(
		[]byte{0x70, 0x00, 0x01},
		[]byte{0x40, 0x00, 0x64, 0x70, 0x00, 0x01, 0xd2, 0x00, 0x0b}, // with an initializer
		[]byte{0x6f, 0x01, 0x00, 0x10},
	))
	mems := sec(secMemory, vec([]byte{0x01, 0x01, 0x02}))
	tags := sec(secTag, vec([]byte{0x00, 0x00}))
	start := sec(secStart, u32(0))
	elems := sec(secElement, vec(
		cat([]byte{0x00}, i32c0, end, vec(u32(0), u32(1))),
		cat([]byte{0x01, 0x00}, vec(u32(1))),
		cat([]byte{0x02}, u32(0), i32c0, end, []byte{0x00}, vec(u32(0))),
		cat([]byte{0x03, 0x00}, vec(u32(0), u32(1))),
		cat([]byte{0x04}, i32c0, end, vec([]byte{0xd2, 0x00, 0x0b}, []byte{0xd0, 0x70, 0x0b})),
		cat([]byte{0x05, 0x70}, vec([]byte{0xd2, 0x01, 0x0b})),
		cat([]byte{0x06}, u32(2), i32c0, end, []byte{0x6f}, vec([]byte{0xd0, 0x6f, 0x0b})),
		cat([]byte{0x87, 0x00, 0x63, 0x70}, vec([]byte{0xd2, 0x00, 0x0b})), // flags 7 in two bytes
	))
	dataCount := sec(secDataCnt, u32(3))
	data := sec(secData, vec(
		cat([]byte{0x00}, i32c0, end, u32(2), []byte{1, 2}),
		cat([]byte{0x01}, u32(0)),
		cat([]byte{0x02}, u32(0), i32c0, end, u32(3), []byte{1, 2, 3}),
	))
	names := custom("name", cat(
		subsec(0, name("mod")),
		subsec(1, vec(cat(u32(0), name("f0")), cat(u32(1), name("f1")))),
		subsec(2, vec(cat(u32(1), vec(cat(u32(0), name("a")), cat(u32(1), name("b")))), cat(u32(0), vec()))),
		subsec(3, []byte{0xff, 0xff, 0xff}), // labels: not decoded by wazero, skipped by size
	)...)
	return [][]byte{types, funcs, tables, mems, tags}, [][]byte{start, elems, dataCount}, [][]byte{data, names}
}

func allForms() []byte {
	head, mid, tail := allFormsSections()
	return module(cat(head...), sec(secGlobal, vec(cat([]byte{0x7f, 0x00}, i32c0, end))),
		sec(secExport, vec(cat(name("main"), []byte{0x00}, u32(0)))), cat(mid...),
		sec(secCode, vec(body(nil, end), body([][]byte{cat(u32(2), []byte{0x7f})}, loopE, end, end))),
		cat(tail...))
}

func allFormsWant(exportName string) []byte {
	head, mid, tail := allFormsSections()
	return module(cat(head...), sec(secGlobal, vec(cat([]byte{0x7f, 0x00}, i32c0, end), interruptGlobal, counterGlobal)),
		sec(secExport, vec(cat(name("main"), []byte{0x00}, u32(0)), exportGlobal(exportName, 1))), cat(mid...),
		sec(secCode, vec(body(nil, checkYield(1), end),
			body([][]byte{cat(u32(2), []byte{0x7f})}, checkYield(1), loopE, checkYield(1), end, end))),
		cat(tail...))
}

// TestInstrumentLimits feeds one tiny module per way of making wazero
// v1.12.0's decoder allocate from a count (or of exceeding an engine limit),
// and checks the specific refusal. The comments name where wazero allocates.
func TestInstrumentLimits(t *testing.T) {
	big := []byte{0xff, 0xff, 0xff, 0xff, 0x0f} // 4294967295
	typeSec := sec(secType, vec(voidTyp))
	funcSec := sec(secFunction, vec(u32(0)))
	oneFunc := func(b []byte) []byte { return module(typeSec, funcSec, sec(secCode, vec(b))) }
	var imports7 [][]byte
	for i := 0; i < 7; i++ {
		imports7 = append(imports7, cat(name("env"), name(string(rune('a'+i))), []byte{0x00}, u32(0)))
	}
	locals := func(n uint32) []byte { return body([][]byte{cat(u32(n), []byte{0x7f})}, end) }
	nfuncs := func(n int, b []byte) []byte {
		fs, bs := make([][]byte, n), make([][]byte, n)
		for i := range fs {
			fs[i], bs[i] = u32(0), b
		}
		return module(typeSec, sec(secFunction, vec(fs...)), sec(secCode, vec(bs...)))
	}
	wide := cat([]byte{0x60}, u32(1000), rep(0x7f, 1000), u32(1000), rep(0x6f, 1000)) // (1000+1000)² = 4M
	type1000 := funcType(rep(0x7f, 1000), nil)
	oversize := cat(module(), custom("pad", make([]byte, instrument.MaxModuleSize)...))

	tests := []struct {
		name string
		in   []byte
		want string
	}{
		// decodeModule: custom section name (decodeUTF8), then every
		// section's vector; anything allocated scales with the module.
		{"oversize module", oversize, "instrument: module is 16777233 bytes, above the limit of 16777216 bytes (MaxModuleSize)"},
		// section.go decodeTypeSection appends; decodeFunctionType ->
		// value.go decodeValueTypes: make([]ValueType, 0, count).
		{"type count", module(sec(secType, big)), "instrument: type section: type count 4294967295 exceeds the 0 remaining bytes at offset 0xa"},
		{"param count", module(sec(secType, vec(cat([]byte{0x60}, big, []byte{0x00})))), "instrument: type section: type 0: param count 4294967295 exceeds the 1 remaining bytes"},
		{"result count", module(sec(secType, vec(cat([]byte{0x60, 0x00}, big)))), "instrument: type section: type 0: result count 4294967295 exceeds the 0 remaining bytes"},
		{"params above the limit", module(sec(secType, vec(funcType(rep(0x7f, 1001), nil)))), "instrument: type section: type 0: param count 1001 is above the limit of 1000"},
		{"results above the limit", module(sec(secType, vec(funcType(nil, rep(0x7f, 1001))))), "instrument: type section: type 0: result count 1001 is above the limit of 1000"},
		{"recursion group size", module(sec(secType, vec(cat([]byte{0x4e}, big)))), "instrument: type section: recursion group at offset 0xb: recursion group size 4294967295 exceeds"},
		// module.go FunctionType.key: the signature string is built by
		// repeated concatenation, quadratic in params+results.
		{"function types too large in total", module(sec(secType, vec(wide, wide))), "instrument: type section: type 1: function types too large in total: the sum of (params+results)² reaches 8000000, at most 4258656 allowed in a module of 4022 bytes (4194304 plus 16 per byte; dropped custom sections not counted)"},
		{"invalid type form", module(sec(secType, vec([]byte{0x5f, 0x00, 0x00}))), "instrument: type section: type 0: invalid type form 0x5f"},
		// decodeImportSection: make([]wasm.Import, count); decodeUTF8 sizes names.
		{"import count", module(sec(secImport, big)), "instrument: import section: import count 4294967295 exceeds the 0 remaining bytes"},
		{"import name", module(sec(secImport, vec(cat(name("env"), big)))), "instrument: import section: import 0: name length 4294967295 exceeds the 0 remaining bytes"},
		// decodeFunctionSection: make([]uint32, count).
		{"function count", module(sec(secFunction, big)), "instrument: function section: function count 4294967295 exceeds"},
		{"function trailing", module(sec(secFunction, vec(u32(0)), []byte{0})), "instrument: function section: 1 trailing bytes"},
		// decodeTableSection: make([]wasm.Table, count).
		{"table count", module(sec(secTable, big)), "instrument: table section: table count 4294967295 exceeds"},
		{"table count per byte", module(sec(secTable, []byte{0x02, 0x70, 0x00, 0x00})), "instrument: table section: table count 2 needs at least 6 bytes, only 3 remain"},
		{"table init prefix", module(sec(secTable, vec([]byte{0x40, 0x01, 0x70, 0x00, 0x00}))), "instrument: table section: table 0: invalid table prefix byte 0x01"},
		{"memory count", module(sec(secMemory, big)), "instrument: memory section: memory count 4294967295 exceeds"},
		// decodeTagSection: make([]wasm.Tag, count).
		{"tag count", module(sec(secTag, big)), "instrument: tag section: tag count 4294967295 exceeds"},
		// decodeGlobalSection: make([]wasm.Global, count).
		{"global count", module(sec(secGlobal, big)), "instrument: global section: global count 4294967295 exceeds"},
		// decodeExportSection: make(map, count) and make([]wasm.Export, count).
		{"export count", module(sec(secExport, big)), "instrument: export section: export count 4294967295 exceeds"},
		{"start trailing", module(sec(secStart, u32(0), []byte{0})), "instrument: start section: 1 trailing bytes"},
		// decodeElementSection: make([]wasm.ElementSegment, count);
		// element.go decodeElementInitValueVector and
		// decodeElementConstExprVector: make([]wasm.ConstantExpression, count).
		{"element segment count", module(sec(secElement, big)), "instrument: element section: element segment count 4294967295 exceeds"},
		{"element init vector", module(sec(secElement, vec(cat([]byte{0x00}, i32c0, end, big)))), "instrument: element section: element segment 0: element count 4294967295 exceeds the 0 remaining bytes"},
		{"element expression vector", module(sec(secElement, vec(cat([]byte{0x05, 0x70}, big)))), "instrument: element section: element segment 0: element count 4294967295 exceeds"},
		{"element flags", module(sec(secElement, vec([]byte{0x08, 0x00, 0x00}))), "instrument: element section: element segment 0: invalid element segment flags 8"},
		{"element kind", module(sec(secElement, vec([]byte{0x01, 0x01, 0x00}))), "instrument: element section: element segment 0: invalid element kind 0x01"},
		{"element offset", module(sec(secElement, vec([]byte{0x00, 0x41, 0x00}))), "instrument: element section: element segment 0: offset: constant expression: unexpected end of input"},
		// decodeDataSection: make([]wasm.DataSegment, count); data.go
		// decodeDataSegment: make([]byte, size).
		{"data segment count", module(sec(secData, big)), "instrument: data section: data segment count 4294967295 exceeds"},
		{"data size", module(sec(secData, vec(cat([]byte{0x01}, big)))), "instrument: data section: data segment 0: data size 4294967295 exceeds the 0 remaining bytes"},
		{"active data size", module(sec(secData, vec(cat([]byte{0x00}, i32c0, end, u32(3), []byte{1, 2})))), "instrument: data section: data segment 0: data size 3 exceeds the 2 remaining bytes"},
		{"data flags", module(sec(secData, vec([]byte{0x03, 0x00}))), "instrument: data section: data segment 0: invalid data segment flags 3"},
		// decodeCodeSection: make([]wasm.Code, count); code.go decodeCode:
		// make([]wasm.ValueType, 0, sum of declared locals).
		{"code count", module(sec(secCode, big)), "instrument: code section: function body count 4294967295 exceeds"},
		{"locals", module(typeSec, sec(secImport, vec(imports7...)), funcSec, sec(secCode, vec(body([][]byte{cat(big, []byte{0x7f})}, end)))),
			"instrument: function 7: 4294967295 locals declared, at most 50000 allowed"},
		{"locals summed", oneFunc(body([][]byte{cat(u32(30000), []byte{0x7f}), cat(u32(20001), []byte{0x7e})}, end)),
			"instrument: function 0: 50001 locals declared, at most 50000 allowed"},
		{"locals in total", nfuncs(3, locals(50000)),
			"instrument: function 1: the functions up to this one have 100000 parameters and locals in total, at most 50044 allowed in a module of 44 bytes (50000 plus 1 per byte; dropped custom sections not counted)"},
		{"locals in total, padded", cat(nfuncs(3, locals(50000)), custom("pad", make([]byte, 100000)...)),
			"instrument: function 1: the functions up to this one have 100000 parameters and locals in total, at most 50044 allowed in a module of 44 bytes"},
		{"parameters in total", module(sec(secType, vec(type1000)), sec(secFunction, vec(slicesRepeat(u32(0), 60)...)),
			sec(secCode, vec(slicesRepeat(body(nil, end), 60)...))),
			"instrument: function 51: the functions up to this one have 52000 parameters and locals in total, at most 51263 allowed"},
		// names.go decodeNameSection: decodeUTF8 for the module name,
		// decodeFunctionNames and decodeLocalNames: make(NameMap, count)
		// and make(IndirectNameMap, count), read past a subsection's size.
		{"name subsection size", module(custom("name", cat([]byte{1}, big)...)), "instrument: name section: subsection 1: subsection size 4294967295 exceeds the 0 remaining bytes"},
		{"module name length", module(custom("name", subsec(0, big)...)), "instrument: name section: module name subsection: name length 4294967295 exceeds the 0 remaining bytes"},
		{"function name count", module(custom("name", subsec(1, big)...)), "instrument: name section: function names subsection: function name count 4294967295 exceeds the 0 remaining bytes"},
		{"local names function count", module(custom("name", subsec(2, big)...)), "instrument: name section: local names subsection: function count 4294967295 exceeds"},
		{"local name count", module(custom("name", subsec(2, vec(cat(u32(0), big)))...)), "instrument: name section: local names subsection: function entry 0: local name count 4294967295 exceeds the 0 remaining bytes"},
		{"function name length", module(custom("name", subsec(1, vec(cat(u32(0), big)))...)), "instrument: name section: function names subsection: entry 0: name length 4294967295 exceeds"},
		{"name subsection trailing", module(custom("name", subsec(1, vec(), []byte{0x02, 0x00})...)), "instrument: name section: function names subsection: 2 trailing bytes"},
		{"name subsection short", module(custom("name", cat([]byte{0, 1}, name("abc"))...)), "instrument: name section: module name subsection: name length 3 exceeds the 0 remaining bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := instrument.Instrument(tc.in, irq)
			if err == nil {
				t.Fatalf("no error; %d-byte output", len(out))
			}
			if out != nil {
				t.Error("output returned with an error")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to start with %q", err, tc.want)
			}
		})
	}
}

// TestLimitsAccept checks modules just inside each limit.
func TestLimitsAccept(t *testing.T) {
	typeSec := sec(secType, vec(voidTyp))
	wide := cat([]byte{0x60}, u32(1000), rep(0x7f, 1000), u32(1000), rep(0x6f, 1000))
	tests := []struct {
		name string
		in   []byte
	}{
		{"module at MaxModuleSize", cat(module(), custom("pad", make([]byte, instrument.MaxModuleSize-8-1-4-4)...))},
		{"1000 params and 1000 results", module(sec(secType, vec(wide)))},
		{"50000 locals", module(typeSec, sec(secFunction, vec(u32(0))),
			sec(secCode, vec(body([][]byte{cat(u32(25000), []byte{0x7f}), cat(u32(25000), []byte{0x7b})}, end))))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := instrument.Instrument(tc.in, irq); err != nil {
				t.Fatal(err)
			}
		})
	}
	if len(tests[0].in) != instrument.MaxModuleSize {
		t.Errorf("padded module is %d bytes", len(tests[0].in))
	}
}

// nameSecModule is (func $inner_helper unreachable) (func $outer_policy
// (export "run") call $inner_helper) with a name section and a producers
// section.
func nameSecModule() []byte {
	return module(sec(secType, vec(voidTyp)), sec(secFunction, vec(u32(0), u32(0))),
		sec(secExport, vec(cat(name("run"), []byte{0x00}, u32(1)))),
		sec(secCode, vec(body(nil, []byte{0x00}, end), body(nil, []byte{0x10, 0x00}, end))),
		custom("producers", 0x00), custom("name", subsec(1, vec(cat(u32(0), name("inner_helper")), cat(u32(1), name("outer_policy"))))...))
}

// TestNameSectionKept checks why the name section is kept: wazero puts its
// function names in trap stack traces.
func TestNameSectionKept(t *testing.T) {
	ctx := context.Background()
	out, info := mustInstrument(t, nameSecModule())
	if info.DroppedCustomSections != 1 {
		t.Errorf("DroppedCustomSections = %d, want 1 (producers)", info.DroppedCustomSections)
	}
	if bytes.Contains(out, []byte("producers")) || !bytes.Contains(out, []byte("outer_policy")) {
		t.Errorf("custom sections not filtered as expected: % x", out)
	}
	mod := instantiate(t, newRuntime(t), out, "named")
	_, err := mod.ExportedFunction("run").Call(ctx)
	if err == nil || !strings.Contains(err.Error(), ".inner_helper()") || !strings.Contains(err.Error(), ".outer_policy()") {
		t.Errorf("trap error without function names: %v", err)
	}
}
