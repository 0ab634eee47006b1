package wasm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmsched/wasmsched/abi"
)

// checkImports refuses every import that is not an allow-listed WASI function.
func checkImports(f *moduleFacts) error {
	var bad []string
	for _, e := range f.imports {
		if e.module == wasiModule && e.kind == externFunc {
			if _, ok := wasiFuncs[e.name]; ok {
				continue
			}
		}
		desc := e.module + "." + e.name
		if e.kind != externFunc {
			desc += " (" + externName(e.kind) + ")"
		}
		bad = append(bad, desc)
	}
	if len(bad) == 0 {
		return nil
	}
	noun := "import"
	if len(bad) > 1 {
		noun = "imports"
	}
	return fmt.Errorf("forbidden %s %s: the sandbox has no filesystem, network or environment, "+
		"and allows only these %s functions: %s; "+
		"remove the dependency (build with the wasm-unknown target, or avoid packages such as os, net and time)",
		noun, strings.Join(bad, ", "), wasiModule, strings.Join(wasiFuncNames(), ", "))
}

// checkStructure checks what the compiler would otherwise report less
// clearly: one memory within the limit, and no start function (it would run
// at instantiation, before the watchdog can reach the instance).
func checkStructure(f *moduleFacts, limits Limits) error {
	if f.hasStart {
		return errors.New("has a start function, which the host cannot bound with a deadline: " +
			"build it as a reactor (-buildmode=c-shared) so that it initialises in _initialize")
	}
	if len(f.memories) != 1 {
		return fmt.Errorf("defines %d memories, want exactly 1 exported as %q: build it with the guest SDK",
			len(f.memories), abi.ExportMemory)
	}
	l := f.memories[0]
	if l.min > uint64(limits.MemoryPages) {
		return classify(ErrTooLarge, fmt.Errorf("initial memory of %d pages (%d KiB) is above the limit of %d pages (%d KiB): "+
			"raise the module's memory limit or shrink its static data and stack",
			l.min, l.min*64, limits.MemoryPages, limits.MemoryPages*64))
	}
	if l.hasMax && l.max > uint64(limits.MemoryPages) {
		return classify(ErrTooLarge, fmt.Errorf("declares a maximum memory of %d pages, above the limit of %d pages: "+
			"raise the module's memory limit or build it without a maximum (the host enforces its own)",
			l.max, limits.MemoryPages))
	}
	for _, e := range f.exports {
		if e.name == abi.ExportMemory && e.kind == externMemory {
			return nil
		}
	}
	return fmt.Errorf("missing required export %q (its linear memory): build it with the guest SDK", abi.ExportMemory)
}

// checkSignatures checks that the module exports every required function
// and that every export the contract defines has the contract's signature. It
// returns the unknown exports with the contract's prefix, which a newer minor
// version may have added.
func checkSignatures(c wazero.CompiledModule) (unknown []string, err error) {
	fns := c.ExportedFunctions()
	var missing []string
	for _, name := range abi.RequiredExports {
		if _, ok := fns[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required export %s: every policy module exports %s, %s; build it with the guest SDK",
			strings.Join(missing, ", "), abi.ExportMemory, strings.Join(abi.RequiredExports, ", "))
	}
	var bad []string
	for name, def := range fns {
		want, ok := abi.ExportSignature(name)
		if !ok {
			if strings.HasPrefix(name, abi.ExportPrefix) {
				unknown = append(unknown, name)
			}
			continue
		}
		got := abi.Signature{Params: valTypes(def.ParamTypes()), Results: valTypes(def.ResultTypes())}
		if !slices.Equal(got.Params, want.Params) || !slices.Equal(got.Results, want.Results) {
			bad = append(bad, fmt.Sprintf("export %s has signature %s, the contract requires %s",
				name, formatSig(got.Params, got.Results), formatSig(want.Params, want.Results)))
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("%s: rebuild it with the current guest SDK", strings.Join(bad, "; "))
	}
	for _, def := range c.ImportedFunctions() {
		module, name, _ := def.Import()
		want := wasiFuncs[name] // checkImports let through only known names
		if !slices.Equal(def.ParamTypes(), want.params) || !slices.Equal(def.ResultTypes(), want.results) {
			return nil, fmt.Errorf("import %s.%s has signature %s, the sandbox provides %s: rebuild it with a supported toolchain",
				module, name, formatSig(valTypes(def.ParamTypes()), valTypes(def.ResultTypes())),
				formatSig(valTypes(want.params), valTypes(want.results)))
		}
	}
	slices.Sort(unknown)
	return unknown, nil
}

func valTypes(ts []api.ValueType) []abi.ValType {
	out := make([]abi.ValType, len(ts))
	for i, t := range ts {
		out[i] = abi.ValType(t)
	}
	return out
}

func formatSig(params, results []abi.ValType) string {
	return "(" + formatTypes(params) + ") -> (" + formatTypes(results) + ")"
}

func formatTypes(ts []abi.ValType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = api.ValueTypeName(api.ValueType(t))
	}
	return strings.Join(s, ", ")
}
