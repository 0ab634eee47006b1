// Package instrument rewrites WebAssembly modules so that the host can stop a
// runaway guest cheaply.
//
// wazero's own interruption (RuntimeConfig.WithCloseOnContextDone) costs a
// goroutine per call and a trip to Go on every loop back-edge. Instead,
// Instrument adds a mutable i32 global that the module exports, and makes every
// function entry and every loop header trap (unreachable) while that global is
// non-zero. A host watchdog stops a call that overran its deadline by setting
// the global through api.MutableGlobal.Set; the spinning guest observes it on
// its next iteration or call. The instance stays usable: every call traps at
// entry until the host stores 0 again. The check is a load, a compare and a
// branch that is never taken, so uninterrupted calls stay allocation free.
//
// The interrupt check alone is not enough: Go cannot preempt a goroutine
// while it runs wazero-compiled machine code (its preemption signal finds no
// Go function at the interrupted PC), so a guest spinning in a loop holds off
// every stop-the-world (a GC, runtime.ReadMemStats) and every GC phase that
// waits for all Ps, and the watchdog that would set the interrupt global is
// stopped by that same stop-the-world: the whole process deadlocks. So every
// check site also counts down a second, unexported global and, every
// YieldPeriod checks, executes `memory.grow 0`, which wazero's compiler runs
// as a call into Go (ExitCodeGrowMemory) where the goroutine can be
// preempted. Growing by 0 pages changes nothing: it returns the current size.
//
// Instrument is also the host's guard in front of wazero's decoder. A policy
// module is untrusted, and wazero v1.12.0 sizes slices from counts in the
// input before it reads the elements, so a few crafted bytes could make it
// allocate tens of GiB. Instrument walks every known section and refuses a
// module in which any count exceeds what the bytes after it can hold, or
// which exceeds the engine limits below; see sections.go. Its output is
// therefore safe to hand to wazero's CompileModule: decoding it costs memory
// proportional to its size.
//
// Custom sections other than "name" are dropped: wazero ignores them, and
// those describing code (DWARF, source maps) are stale after
// instrumentation. "name" is kept, and checked, because it gives trap stack
// traces readable function names; function indices do not change.
package instrument

import (
	"bytes"
	"fmt"
	"math"
	"unicode/utf8"
)

// MaxModuleSize is the largest module Instrument accepts, checked before any
// parsing. Policy modules are small: TinyGo builds are 3-60 KB and a
// standard-Go wasip1 build is 2-3 MB. The other limits scale with the module
// size, so this one also caps what compiling a module may cost: wazero's
// decoder and compiler allocate up to ~170x the module inside those limits,
// about 2.7 GB at this size.
const MaxModuleSize = 16 << 20

// YieldPeriod is how many checks (function entries and loop iterations) an
// instrumented guest runs between two exits to Go (`memory.grow 0`), and so
// bounds how long a spinning guest can hold off a Go stop-the-world.
//
// Measured with wazero v1.12.0 on amd64 (BenchmarkMemoryGrow0,
// BenchmarkInstrumentedLoop, TestYieldDuringGC): an exit costs about 55 ns,
// which 1024 checks amortize to 0.05 ns per check, lost in the noise of the
// countdown itself (0.5-1 ns per iteration of the tightest loop, whatever
// the period: a load, subtract and store of the counter global). A period of
// 256 costs +0.8 ns per iteration and 64 costs +3 ns. A tight loop runs 1024
// checks in 2-3 us, so a runtime.GC() while a guest spins takes no longer
// than without it (0.4-0.9 ms on average), where a period of 65536 already
// adds about 1 ms; and a loop with 1 us of straight-line code per iteration
// still yields every millisecond. Longer periods would save nothing
// measurable and only widen that worst case.
const YieldPeriod = 1024

// Info reports what Instrument found and added.
type Info struct {
	GlobalIndex           uint32 // index of the new interrupt global in the global index space
	Functions             int    // defined functions instrumented
	Loops                 int    // loop instructions instrumented
	DroppedCustomSections int    // custom sections removed (all but "name")
	// YieldPeriod is the number of checks between two `memory.grow 0`
	// exits to Go, YieldPeriod when they are emitted (the countdown global
	// then has index GlobalIndex+1), or 0 for a module without memory,
	// which gets the interrupt check only.
	YieldPeriod int
}

// Section ids of the binary format.
const (
	secCustom = 0
	secImport = 2
	secGlobal = 6
	secExport = 7
	secCode   = 10
)

// importKind/exportKind value for globals.
const kindGlobal = 0x03

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// sectionRank returns the position of a non-custom section id in the
// canonical section order, or 0 if the id is unknown. Tag (13) sits between
// memory and global; datacount (12) between element and code.
func sectionRank(id byte) int {
	switch id {
	case 1, 2, 3, 4, 5: // type, import, function, table, memory
		return int(id)
	case 13: // tag
		return 6
	case 6, 7, 8, 9: // global, export, start, element
		return int(id) + 1
	case 12: // datacount
		return 11
	case 10, 11: // code, data
		return int(id) + 2
	}
	return 0
}

type section struct {
	id           byte
	start        int  // offset of the id byte
	payload, end int  // payload is b[payload:end]
	data         int  // custom sections: offset after the name
	isName       bool // the "name" custom section
}

// Instrument returns a copy of the Wasm binary in which every function entry and
// every loop header begins with `global.get $g; if; unreachable; end`, where $g is a
// new mutable i32 global (initial value 0) appended after all existing globals and
// exported under exportName. It also reports what it found.
//
// If the module has a memory (imported or defined; with several, memory 0),
// each check is followed by a countdown on a second new mutable i32 global
// $c (not exported, appended after $g, initial value YieldPeriod) that exits
// to Go every YieldPeriod checks (see appendYield):
//
//	global.get $c; i32.const 1; i32.sub; global.set $c
//	global.get $c; i32.eqz
//	if
//	  i32.const YieldPeriod; global.set $c
//	  i32.const 0; memory.grow 0; drop
//	end
//
// A module without memory cannot execute memory.grow and gets the interrupt
// check only (Info.YieldPeriod is 0). The host refuses such modules anyway:
// a policy module must export its memory.
//
// Sections other than global, export and code are copied byte for byte, in
// their original order, except custom sections other than "name", which are
// dropped. Existing indices do not change. The input is not modified;
// malformed input, and input on which wazero's decoder could allocate far
// more than its size, yields an error, never a panic.
func Instrument(wasm []byte, exportName string) ([]byte, Info, error) {
	var info Info
	if len(wasm) > MaxModuleSize {
		return nil, info, fmt.Errorf("instrument: module is %d bytes, above the limit of %d bytes (MaxModuleSize)", len(wasm), MaxModuleSize)
	}
	if !utf8.ValidString(exportName) {
		return nil, info, fmt.Errorf("instrument: export name %q is not valid UTF-8", exportName)
	}
	if len(wasm) < len(wasmHeader) || !bytes.Equal(wasm[:4], wasmHeader[:4]) {
		return nil, info, fmt.Errorf("instrument: not a WebAssembly binary (bad magic)")
	}
	if !bytes.Equal(wasm[4:8], wasmHeader[4:]) {
		return nil, info, fmt.Errorf("instrument: unsupported binary version % x", wasm[4:8])
	}

	sections, err := splitSections(wasm)
	if err != nil {
		return nil, info, err
	}

	// The budgets of sections.go scale with what wazero will decode: the
	// module without the custom sections that are dropped, so that padding
	// cannot raise them.
	size := len(wasm)
	for _, s := range sections {
		if s.id == secCustom && !s.isName {
			size -= s.end - s.start
		}
	}

	var (
		imp                           imports
		definedGlobals                int
		globalSec, exportSec, codeSec *section
		funcSec                       *section
		typeParams                    []uint16
	)
	for i := range sections {
		s := &sections[i]
		switch s.id {
		case secCustom:
			if s.isName {
				err = checkNameSection(wasm, s)
			}
		case secType:
			typeParams, err = checkSection(wasm, s, size)
		case secFunction:
			funcSec = s
			_, err = checkSection(wasm, s, size)
		case secImport:
			if imp, err = countImports(wasm, s); err != nil {
				return nil, info, err
			}
		case secMemory:
			if _, err = checkSection(wasm, s, size); err == nil && imp.memories == 0 {
				imp.memory0, imp.memory64 = firstMemory(wasm, s)
			}
		case secGlobal:
			globalSec = s
			if definedGlobals, err = countGlobals(wasm, s); err != nil {
				return nil, info, err
			}
		case secExport:
			exportSec = s
		case secCode:
			codeSec = s
		default:
			_, err = checkSection(wasm, s, size)
		}
		if err != nil {
			return nil, info, err
		}
	}
	yields := imp.memory0
	added := uint64(1) // globals appended
	if yields {
		added = 2
		info.YieldPeriod = YieldPeriod
	}
	idx := uint64(imp.globals) + uint64(definedGlobals)
	if idx+added > math.MaxUint32 {
		return nil, info, fmt.Errorf("instrument: global index space is full")
	}
	info.GlobalIndex = uint32(idx)

	// The export payload is checked (duplicate names) before any output is built.
	var exportPayload []byte
	if exportSec != nil {
		if exportPayload, err = rewriteExports(wasm, exportSec, exportName, info.GlobalIndex); err != nil {
			return nil, info, err
		}
	} else {
		exportPayload = appendExport([]byte{1}, exportName, info.GlobalIndex)
	}
	var globalPayload []byte
	if globalSec != nil {
		// New count, then the existing entries unchanged, then ours.
		r := reader{b: wasm, pos: globalSec.payload, end: globalSec.end}
		_, _ = r.u32() // already validated by countGlobals
		globalPayload = appendU32(nil, uint32(uint64(definedGlobals)+added))
		globalPayload = append(globalPayload, wasm[r.pos:globalSec.end]...)
	} else {
		globalPayload = appendU32(nil, uint32(added))
	}
	globalPayload = append(globalPayload, 0x7f, 0x01, 0x41, 0x00, 0x0b) // mut i32 = i32.const 0
	if yields {
		globalPayload = append(globalPayload, 0x7f, 0x01, 0x41) // mut i32 = i32.const YieldPeriod
		globalPayload = appendS32(globalPayload, YieldPeriod)
		globalPayload = append(globalPayload, 0x0b)
	}

	check := appendU32([]byte{0x23}, info.GlobalIndex) // global.get $g
	check = append(check, 0x04, 0x40, 0x00, 0x0b)      // if unreachable end
	if yields {
		check = appendYield(check, info.GlobalIndex+1, imp.memory64)
	}

	out := make([]byte, 0, len(wasm)+len(wasm)/8+64)
	out = append(out, wasmHeader...)
	globalDone, exportDone := false, false
	emitMissing := func(rank int) error {
		if !globalDone && rank > sectionRank(secGlobal) {
			globalDone = true
			if out, err = appendSection(out, secGlobal, globalPayload); err != nil {
				return err
			}
		}
		if !exportDone && rank > sectionRank(secExport) {
			exportDone = true
			if out, err = appendSection(out, secExport, exportPayload); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range sections {
		s := &sections[i]
		if s.id != secCustom {
			if err := emitMissing(sectionRank(s.id)); err != nil {
				return nil, info, err
			}
		}
		switch s {
		case globalSec:
			globalDone = true
			out, err = appendSection(out, secGlobal, globalPayload)
		case exportSec:
			exportDone = true
			out, err = appendSection(out, secExport, exportPayload)
		case codeSec:
			var payload []byte
			fs := functionTypes{params: typeParams}
			if funcSec != nil {
				fs.r = reader{b: wasm, pos: funcSec.payload, end: funcSec.end}
				_, _ = fs.r.u32() // the count, already checked
			}
			payload, err = rewriteCode(wasm, s, check, imp.funcs, fs, size, &info)
			if err == nil {
				out, err = appendSection(out, secCode, payload)
			}
		default:
			if s.id == secCustom && !s.isName {
				info.DroppedCustomSections++
				continue
			}
			out = append(out, wasm[s.start:s.end]...)
		}
		if err != nil {
			return nil, info, err
		}
	}
	if err := emitMissing(math.MaxInt); err != nil {
		return nil, info, err
	}
	return out, info, nil
}

// splitSections checks the section framing and the canonical order of the
// non-custom sections (each at most once).
func splitSections(b []byte) ([]section, error) {
	r := reader{b: b, pos: len(wasmHeader), end: len(b)}
	var sections []section
	lastRank := 0
	for r.pos < r.end {
		start := r.pos
		id := b[r.pos]
		r.pos++
		size, err := r.u32()
		if err != nil {
			return nil, fmt.Errorf("instrument: section %d size: %w", id, err)
		}
		if int64(size) > int64(r.remaining()) {
			return nil, fmt.Errorf("instrument: section %d at offset 0x%x: size %d runs past the end of the module (%d bytes left)",
				id, start, size, r.remaining())
		}
		if id != secCustom {
			rank := sectionRank(id)
			if rank == 0 {
				return nil, fmt.Errorf("instrument: unknown section id %d at offset 0x%x", id, start)
			}
			if rank <= lastRank {
				return nil, fmt.Errorf("instrument: section %d at offset 0x%x is duplicated or out of order", id, start)
			}
			lastRank = rank
		}
		s := section{id: id, start: start, payload: r.pos, end: r.pos + int(size)}
		if id == secCustom {
			// A custom section must at least hold its name.
			cr := reader{b: b, pos: r.pos, end: s.end}
			name, err := cr.name()
			if err != nil {
				return nil, fmt.Errorf("instrument: custom section at offset 0x%x: %w", start, err)
			}
			s.data, s.isName = cr.pos, string(name) == "name"
		}
		sections = append(sections, s)
		r.pos += int(size)
	}
	return sections, nil
}

// imports summarizes the import section, and memory 0 wherever it is.
type imports struct {
	funcs, globals uint32
	memories       int  // imported memories
	memory0        bool // the module has a memory (imported or defined)
	memory64       bool // memory 0 is a 64-bit memory (memory64): memory.grow takes an i64
}

// countImports returns how many functions, globals and memories the module
// imports.
func countImports(b []byte, s *section) (imports, error) {
	var imp imports
	r := reader{b: b, pos: s.payload, end: s.end}
	wrap := func(i int, err error) error {
		return fmt.Errorf("instrument: import section: import %d: %w", i, err)
	}
	n, err := r.count("import count", 4)
	if err != nil {
		return imports{}, fmt.Errorf("instrument: import section: %w", err)
	}
	for i := 0; i < n; i++ {
		if _, err := r.name(); err != nil {
			return imports{}, wrap(i, err)
		}
		if _, err := r.name(); err != nil {
			return imports{}, wrap(i, err)
		}
		at := r.pos
		kind, err := r.byte()
		if err != nil {
			return imports{}, wrap(i, err)
		}
		switch kind {
		case 0x00: // func: typeidx
			_, err = r.u32()
			imp.funcs++
		case 0x01: // table: reftype, limits
			if err = r.valType(); err == nil {
				err = r.limits()
			}
		case 0x02: // memory: limits
			if imp.memories == 0 && r.pos < r.end {
				imp.memory0, imp.memory64 = true, r.b[r.pos]&0x04 != 0
			}
			err = r.limits()
			imp.memories++
		case kindGlobal: // global: valtype, mutability
			if err = r.valType(); err == nil {
				err = r.mutability()
			}
			imp.globals++
		case 0x04: // tag: attribute, typeidx
			if _, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		default:
			err = r.errorf(at, "invalid import kind 0x%02x", kind)
		}
		if err != nil {
			return imports{}, wrap(i, err)
		}
	}
	if err := r.trailing(); err != nil {
		return imports{}, fmt.Errorf("instrument: import section: %w", err)
	}
	return imp, nil
}

// firstMemory reports whether a memory section, already checked, defines a
// memory, and whether the first one is 64-bit.
func firstMemory(b []byte, s *section) (ok, is64 bool) {
	r := reader{b: b, pos: s.payload, end: s.end}
	if n, err := r.u32(); err != nil || n == 0 || r.pos >= r.end {
		return false, false
	}
	return true, r.b[r.pos]&0x04 != 0
}

func (r *reader) mutability() error {
	at := r.pos
	m, err := r.byte()
	if err == nil && m > 1 {
		err = r.errorf(at, "invalid global mutability 0x%02x", m)
	}
	return err
}

// countGlobals walks the global section so that the index of the appended
// global is exact.
func countGlobals(b []byte, s *section) (int, error) {
	r := reader{b: b, pos: s.payload, end: s.end}
	n, err := r.count("global count", 3)
	if err != nil {
		return 0, fmt.Errorf("instrument: global section: %w", err)
	}
	for i := 0; i < n; i++ {
		err := r.valType()
		if err == nil {
			err = r.mutability()
		}
		if err == nil {
			err = r.constExpr()
		}
		if err != nil {
			return 0, fmt.Errorf("instrument: global section: global %d: %w", i, err)
		}
	}
	if err := r.trailing(); err != nil {
		return 0, fmt.Errorf("instrument: global section: %w", err)
	}
	return n, nil
}

// rewriteExports returns the export section payload with the new global
// export appended, rejecting a name that is already exported.
func rewriteExports(b []byte, s *section, name string, globalIdx uint32) ([]byte, error) {
	r := reader{b: b, pos: s.payload, end: s.end}
	n, err := r.count("export count", 3)
	if err != nil {
		return nil, fmt.Errorf("instrument: export section: %w", err)
	}
	entries := r.pos
	for i := 0; i < n; i++ {
		at := r.pos
		got, err := r.name()
		if err == nil {
			_, err = r.byte() // kind
		}
		if err == nil {
			_, err = r.u32() // index
		}
		if err != nil {
			return nil, fmt.Errorf("instrument: export section: export %d: %w", i, err)
		}
		if string(got) == name {
			return nil, fmt.Errorf("instrument: export %q already exists (offset 0x%x)", name, at)
		}
	}
	if err := r.trailing(); err != nil {
		return nil, fmt.Errorf("instrument: export section: %w", err)
	}
	out := appendU32(make([]byte, 0, s.end-s.payload+len(name)+16), uint32(n)+1)
	out = append(out, b[entries:s.end]...)
	return appendExport(out, name, globalIdx), nil
}

func appendExport(b []byte, name string, globalIdx uint32) []byte {
	b = appendU32(b, uint32(len(name)))
	b = append(b, name...)
	b = append(b, kindGlobal)
	return appendU32(b, globalIdx)
}

func appendSection(out []byte, id byte, payload []byte) ([]byte, error) {
	if uint64(len(payload)) > math.MaxUint32 {
		return nil, fmt.Errorf("instrument: section %d grew past 4 GiB", id)
	}
	out = append(out, id)
	out = appendU32(out, uint32(len(payload)))
	return append(out, payload...), nil
}
