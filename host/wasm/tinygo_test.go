package wasm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tinygoWASIGuest prints through TinyGo's wasip1 runtime, which imports
// fd_write, fd_close, fd_seek and random_get.
const tinygoWASIGuest = `package main

import "unsafe"

var buf [4096]byte

//go:wasmexport wasmsched_abi_version
func abiVersion() int32 { return 0x00010000 }

//go:wasmexport wasmsched_buffer
func buffer(n int32) int32 {
	if n > int32(len(buf)) {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&buf[0])))
}

//go:wasmexport wasmsched_last_error
func lastError() int64 { return 0 }

//go:wasmexport wasmsched_backoff_may_pop
func mayPop(n int32) int32 {
	println("hello from tinygo", n)
	return 1
}

func main() {}
`

// TestTinyGoWASIP1 builds a real TinyGo wasip1 guest and checks that the
// sandbox's allow-list covers its imports and that its output is logged. It
// needs TinyGo (hack/tinygo.sh builds it; TINYGOROOT or the default cache
// location finds it) and is skipped without it, except under CI=true, where
// a missing TinyGo fails the test.
func TestTinyGoWASIP1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a guest with TinyGo")
	}
	root := os.Getenv("TINYGOROOT")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache", "wasmsched", "tinygo-v0.42.0")
	}
	tinygo := filepath.Join(root, "build", "tinygo")
	target := filepath.Join(root, "targets", "wasmsched-wasip1.json")
	for _, p := range []string{tinygo, target} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("TinyGo not available (%v): CI=true needs it; install it with hack/tinygo.sh or set TINYGOROOT", err)
			}
			t.Skipf("TinyGo not available (%v): install it with hack/tinygo.sh or set TINYGOROOT", err)
		}
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module guest\n\ngo 1.26\n",
		"main.go": tinygoWASIGuest,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "guest.wasm")
	cmd := exec.Command(tinygo, "build", "-target="+target, "-buildmode=c-shared", "-no-debug",
		"-scheduler=none", "-gc=conservative", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TINYGOROOT="+root)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tinygo build: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	rt, rec := newTestRuntime(t)
	m, err := rt.Load(context.Background(), "tinygo", bin, testLimits())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("TinyGo wasip1 imports: %s", strings.Join(m.Imports(), ", "))
	inst := acquire(t, m)
	defer m.Release(inst)
	r, err := inst.Call(FuncBackoffMayPop, 42, 0)
	if err != nil || r != 1 {
		t.Fatalf("may_pop = %d, %v; want 1", r, err)
	}
	lines := rec.guestLines()
	if len(lines) != 1 || !strings.HasSuffix(lines[0], ": hello from tinygo 42") || !strings.HasPrefix(lines[0], "tinygo/") {
		t.Errorf("guest output = %q, want one line \"hello from tinygo 42\" from module tinygo", lines)
	}
}
