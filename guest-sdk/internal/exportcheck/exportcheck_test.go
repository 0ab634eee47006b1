package exportcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
)

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParse(t *testing.T) {
	dir := write(t, map[string]string{
		"exports.go": "//go:build tinygo.wasm || wasm\n\npackage x\n\n// doc\n//\n//go:wasmexport wasmsched_queue_sort_less\nfunc less(a, b uint32) int32 { return 0 }\n\n//go:wasmexport wasmsched_queue_sort_key\nfunc key(n int32) int64 { return 0 }\n\nfunc other() {}\n",
		"logic.go":   "package x\n\nfunc Less() {}\n",
		"x_test.go":  "package x\n\n//go:wasmexport ignored\nfunc t() {}\n",
	})
	got, err := Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Export{
		{Name: abi.ExportQueueSortLess, Func: "less", File: "exports.go", Sig: abi.Signature{Params: []abi.ValType{abi.I32, abi.I32}, Results: []abi.ValType{abi.I32}}},
		{Name: abi.ExportQueueSortKey, Func: "key", File: "exports.go", Sig: abi.Signature{Params: []abi.ValType{abi.I32}, Results: []abi.ValType{abi.I64}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want, +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"no build constraint", "package x\n\n//go:wasmexport wasmsched_buffer\nfunc b(n int32) uint32 { return 0 }\n", "lacks the constraint"},
		{"other constraint", "//go:build wasm\n\npackage x\n\n//go:wasmexport wasmsched_buffer\nfunc b(n int32) uint32 { return 0 }\n", "lacks the constraint"},
		{"unsupported type", "//go:build tinygo.wasm || wasm\n\npackage x\n\n//go:wasmexport wasmsched_buffer\nfunc b(n int) abi.Result { return 0 }\n", "type int is not"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(write(t, map[string]string{"e.go": c.src}))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error = %v, want one containing %q", err, c.want)
			}
		})
	}
}
