package wasm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseModule(t *testing.T) {
	tests := []struct {
		fixture string
		want    moduleFacts
	}{
		{"forbidden_env", moduleFacts{
			imports: []importEntry{{"env", "socket", externFunc}, {"env", "secret", externGlobal}},
			exports: []exportEntry{{"memory", externMemory}, {"wasmsched_abi_version", externFunc},
				{"wasmsched_buffer", externFunc}, {"wasmsched_last_error", externFunc}},
			memories: []memLimits{{min: 1}},
		}},
		{"maxmem", moduleFacts{
			exports: []exportEntry{{"memory", externMemory}, {"wasmsched_abi_version", externFunc},
				{"wasmsched_buffer", externFunc}, {"wasmsched_last_error", externFunc}},
			memories: []memLimits{{min: 1, max: 1000, hasMax: true}},
		}},
		{"start", moduleFacts{
			exports: []exportEntry{{"memory", externMemory}, {"wasmsched_abi_version", externFunc},
				{"wasmsched_buffer", externFunc}, {"wasmsched_last_error", externFunc}},
			memories: []memLimits{{min: 1}},
			hasStart: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := parseModule(fixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(moduleFacts{}, importEntry{}, exportEntry{}, memLimits{})); diff != "" {
				t.Errorf("parseModule (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestParseModuleErrors(t *testing.T) {
	header := "\x00asm\x01\x00\x00\x00"
	tests := []struct {
		name, bin, wantErr string
	}{
		{"short", "\x00as", "not a WebAssembly binary"},
		{"section size past end", header + "\x02\x10\x01", "size 16 runs past the end"},
		{"overlong LEB", header + "\x02\x80\x80\x80\x80\x80\x01", "LEB128 integer overflows 32 bits"},
		{"forged import count", header + "\x02\x05\xff\xff\xff\xff\x0f", "count 4294967295 does not fit"},
		{"unknown import kind", header + "\x02\x06\x01\x01m\x01n\x09", "unknown kind 0x09"},
		{"truncated name", header + "\x02\x05\x01\x05mod", "unexpected end of input"},
		{"bad limits flags", header + "\x05\x03\x01\x08\x01", "unknown limits flags 0x08"},
		{"trailing bytes", header + "\x08\x02\x00\x00", "1 trailing bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseModule([]byte(tt.bin))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseModule = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzParseModule: the parser of untrusted binaries returns errors, never
// panics, and what it reports stays within the input.
func FuzzParseModule(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.wasm"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add(tryModule)
	f.Fuzz(func(t *testing.T, b []byte) {
		facts, err := parseModule(b)
		if err != nil {
			return
		}
		n := 0
		for _, e := range facts.imports {
			n += len(e.module) + len(e.name)
		}
		for _, e := range facts.exports {
			n += len(e.name)
		}
		if n > len(b) {
			t.Errorf("names total %d bytes, more than the %d-byte input", n, len(b))
		}
	})
}
