package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
)

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("policy ABI 1.%d", abi.VersionMinor)) {
		t.Errorf("version: code %d, output %q", code, out)
	}

	// What the Makefile's -ldflags -X set (hack/version.sh) is what it prints.
	defer func(v, c string) { buildVersion, buildCommit = v, c }(buildVersion, buildCommit)
	buildVersion, buildCommit = "v0.0.0-20261128124632-afc75eab868f", "afc75eab868fddd34638106ce8cffd3b74179147"
	_, out, _ = runCLI("version")
	want := fmt.Sprintf("wasmsched v0.0.0-20261128124632-afc75eab868f\ncommit afc75eab868fddd34638106ce8cffd3b74179147\npolicy ABI %d.%d\n", abi.VersionMajor, abi.VersionMinor)
	if out != want {
		t.Errorf("version with linker-set values: %q, want %q", out, want)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"frobnicate"}, {"policy"}, {"policy", "validate"}, {"policy", "validate", "a", "b"}} {
		code, _, errOut := runCLI(args...)
		if code != 2 || !strings.Contains(errOut, "usage: wasmsched") {
			t.Errorf("%q: code %d, stderr %q; want 2 and the usage", args, code, errOut)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	example := filepath.Join("..", "..", "..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm")
	code, out, errOut := runCLI("policy", "validate", example)
	if code != 0 {
		t.Fatalf("validate %s: code %d, stderr %q", example, code, errOut)
	}
	for _, want := range []string{fmt.Sprintf("ABI        1.%[1]d (host speaks 1.%[1]d)", abi.VersionMinor), "slots      queueSort (with sort key)", "imports    none", "wasmsched_queue_sort_less"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("not wasm at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI("policy", "validate", bad)
	if code != 1 || !strings.Contains(errOut, "bad.wasm") {
		t.Errorf("garbage module: code %d, stderr %q; want 1 and a message naming the module", code, errOut)
	}
	forbidden := filepath.Join("..", "..", "..", "host", "wasm", "testdata", "forbidden_wasi.wasm")
	code, _, errOut = runCLI("policy", "validate", forbidden)
	if code != 1 || !strings.Contains(errOut, "forbidden") {
		t.Errorf("forbidden import: code %d, stderr %q", code, errOut)
	}
}

func TestPolicyValidateUsesConfig(t *testing.T) {
	example := filepath.Join("..", "..", "..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm")
	code, out, errOut := runCLI("policy", "validate", "-set", "sandbox.memoryPages=64", example)
	if code != 0 || !strings.Contains(out, "limit 64 pages") {
		t.Errorf("-set sandbox.memoryPages=64: code %d, out %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runCLI("policy", "validate", "-set", "sandbox.memoryPagez=64", example)
	if code != 1 || !strings.Contains(errOut, `unknown key "sandbox.memoryPagez"`) {
		t.Errorf("unknown key: code %d, stderr %q", code, errOut)
	}
	// A module whose initial memory is above the configured limit is refused.
	code, _, errOut = runCLI("policy", "validate", "-set", "sandbox.memoryPages=2", filepath.Join("..", "..", "..", "host", "wasm", "testdata", "bigmem.wasm"))
	if code != 1 || !strings.Contains(errOut, "bigmem") {
		t.Errorf("module over the memory limit: code %d, stderr %q", code, errOut)
	}
}

func TestHelpConfigNative(t *testing.T) {
	code, out, _ := runCLI("help", "config")
	for _, want := range []string{"policies.queueSort.module", "native: the built-in policy compiled into the binary", "not allowed with module native"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help config: code %d, output lacks %q", code, want)
		}
	}
}

// TestBenchMoved: `wasmsched bench` says where the benchmark went.
func TestBenchMoved(t *testing.T) {
	code, _, errOut := runCLI("bench", "-nodes", "10")
	if code != 2 || !strings.Contains(errOut, "wasmsched-bench") {
		t.Errorf("bench: code %d, stderr %q; want 2 and a pointer to wasmsched-bench", code, errOut)
	}
}
