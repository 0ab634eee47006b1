// Package exportcheck verifies, from the source, that a guest SDK package's
// //go:wasmexport directives name exactly the abi export constants it is meant
// to implement, with the signatures abi requires. The directive needs a
// literal name, so the name is written twice; this check makes abi the one
// definition of the contract.
package exportcheck

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
)

// wasmBuild is the build constraint of every file holding exports: they use
// 32-bit guest addresses and must not build natively.
const wasmBuild = "tinygo.wasm || wasm"

const directive = "//go:wasmexport "

// Export is one //go:wasmexport directive found in the source.
type Export struct {
	Name string // the export name
	Func string // the Go function
	File string
	Sig  abi.Signature
}

// Check parses the non-test Go files of dir and fails t unless its exports
// are exactly want (abi.Export* constants), each with abi's signature, each
// in a file built only for Wasm.
func Check(t *testing.T, dir string, want ...string) {
	t.Helper()
	exports, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range exports {
		got = append(got, e.Name)
		wantSig, ok := abi.ExportSignature(e.Name)
		if !ok {
			t.Errorf("%s: func %s exports %q, which abi does not define", e.File, e.Func, e.Name)
			continue
		}
		if !sameSig(e.Sig, wantSig) {
			t.Errorf("%s: func %s (export %q) has signature %v -> %v; abi wants %v -> %v",
				e.File, e.Func, e.Name, e.Sig.Params, e.Sig.Results, wantSig.Params, wantSig.Results)
		}
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("exports of %s = %q, want %q", dir, got, want)
	}
}

// Parse returns the exports declared in the non-test Go files of dir, and an
// error for a directive in a file without the Wasm-only build constraint or
// with a type that has no Wasm equivalent.
func Parse(dir string) ([]Export, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []Export
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		var found []Export
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			for _, c := range fn.Doc.List {
				exp, ok := strings.CutPrefix(c.Text, directive)
				if !ok {
					continue
				}
				sig, err := signature(fn.Type)
				if err != nil {
					return nil, &parseError{name, fn.Name.Name, err.Error()}
				}
				found = append(found, Export{Name: strings.TrimSpace(exp), Func: fn.Name.Name, File: filepath.Base(name), Sig: sig})
			}
		}
		if len(found) > 0 && !wasmOnly(f) {
			return nil, &parseError{name, found[0].Func, "file with //go:wasmexport lacks the constraint //go:build " + wasmBuild}
		}
		out = append(out, found...)
	}
	return out, nil
}

func wasmOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			return err == nil && expr.String() == wasmBuild
		}
	}
	return false
}

func signature(ft *ast.FuncType) (abi.Signature, error) {
	var sig abi.Signature
	var err error
	if sig.Params, err = valTypes(ft.Params); err != nil {
		return sig, err
	}
	sig.Results, err = valTypes(ft.Results)
	return sig, err
}

func valTypes(fl *ast.FieldList) ([]abi.ValType, error) {
	if fl == nil {
		return nil, nil
	}
	var out []abi.ValType
	for _, f := range fl.List {
		id, ok := f.Type.(*ast.Ident)
		var vt abi.ValType
		switch {
		case ok && (id.Name == "int32" || id.Name == "uint32"):
			vt = abi.I32
		case ok && (id.Name == "int64" || id.Name == "uint64"):
			vt = abi.I64
		default:
			return nil, &typeError{f.Type}
		}
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, vt)
		}
	}
	return out, nil
}

func sameSig(a, b abi.Signature) bool {
	return slices.Equal(a.Params, b.Params) && slices.Equal(a.Results, b.Results)
}

type parseError struct{ file, fn, problem string }

func (e *parseError) Error() string { return e.file + ": func " + e.fn + ": " + e.problem }

type typeError struct{ expr ast.Expr }

func (e *typeError) Error() string {
	return "parameter or result type " + types.ExprString(e.expr) + " is not one of int32, uint32, int64, uint64"
}
