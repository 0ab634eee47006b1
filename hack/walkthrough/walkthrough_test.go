package walkthrough

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/host/policyapi"
)

// What the walkthrough makes, relative to the copy's root: a change of the
// README's steps that renames them changes these too.
const (
	moduleFile   = "guest-sdk/examples/mysort/mysort.wasm"
	manifestFile = "mysort.yaml"
	slot         = "queueSort"
)

var (
	fenceOpen  = regexp.MustCompile("^([ \t]*)```sh walkthrough[ \t]*$")
	fenceClose = regexp.MustCompile("^[ \t]*```[ \t]*$")
)

// blocks returns the README's walkthrough blocks, each without the
// indentation of its fence (a block inside a list item is indented).
func blocks(t *testing.T, readme []byte) []string {
	t.Helper()
	var out []string
	var cur *strings.Builder
	indent := ""
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil:
			if m := fenceOpen.FindStringSubmatch(line); m != nil {
				cur, indent = &strings.Builder{}, m[1]
			}
		case fenceClose.MatchString(line):
			out = append(out, cur.String())
			cur = nil
		default:
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, indent) {
				t.Fatalf("README.md:%d: a walkthrough line is indented less than its fence", n)
			}
			cur.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
	}
	if cur != nil {
		t.Fatal("README.md: a walkthrough block is not closed")
	}
	return out
}

func TestBlocks(t *testing.T) {
	readme := "text\n\n1. step\n\n   ```sh walkthrough\n   echo one\n   cat <<'EOF'\n   x\n   EOF\n   ```\n\n```sh\nkubectl apply\n```\n```sh walkthrough\necho two\n```\n"
	got := blocks(t, []byte(readme))
	want := []string{"echo one\ncat <<'EOF'\nx\nEOF\n", "echo two\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blocks %q, want %q", got, want)
	}
}

// TestWalkthrough runs the README's walkthrough on a copy of the checkout's
// files (tracked, and untracked but not ignored: what a fresh clone would
// hold once committed). It needs TinyGo, as make test provides (make tools);
// without it the test is skipped, except under CI=true, where it fails.
func TestWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a guest with TinyGo and the scheduler")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := blocks(t, readme)
	if len(steps) < 5 {
		t.Fatalf("README.md has %d blocks marked ```sh walkthrough, want the 5 steps' commands", len(steps))
	}

	tinygo := tinyGo(t)
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	// One fixed directory per checkout, so that go's build cache, keyed by
	// the package directories, is reused from one run to the next.
	sum := sha256.Sum256([]byte(repo))
	dir := filepath.Join(cache, "wasmsched", "walkthrough", hex.EncodeToString(sum[:6]))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	copyCheckout(t, repo, dir)
	t.Cleanup(func() { os.RemoveAll(dir) })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	script := "set -euo pipefail\nset -x\n" + strings.Join(steps, "")
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TINYGO="+tinygo)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}

	// The manifest is a SchedulingPolicy that the CRD's rules accept, for
	// the slot, with the module built in step 2 inline and pinned.
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		t.Fatalf("the walkthrough wrote no %s: %v\n%s", manifestFile, err, out)
	}
	var p policyapi.SchedulingPolicy
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("%s is not a SchedulingPolicy: %v\n%s", manifestFile, err, b)
	}
	if p.APIVersion != policyapi.GroupVersion.String() || p.Kind != policyapi.Kind || p.Name == "" {
		t.Errorf("%s: apiVersion %q kind %q name %q, want %s %s and a name", manifestFile, p.APIVersion, p.Kind, p.Name, policyapi.GroupVersion, policyapi.Kind)
	}
	if err := p.Spec.Validate(); err != nil {
		t.Errorf("%s: %v", manifestFile, err)
	}
	module, err := os.ReadFile(filepath.Join(dir, moduleFile))
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(module)
	if p.Spec.Slot != slot || !bytes.Equal(p.Spec.Module.Inline, module) || p.Spec.SHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("%s: slot %q, %d inline bytes, sha256 %q; want %s, the %d bytes of %s, %x",
			manifestFile, p.Spec.Slot, len(p.Spec.Module.Inline), p.Spec.SHA256, slot, len(module), moduleFile, want)
	}
}

// tinyGo finds the TinyGo that hack/tinygo.sh builds.
func tinyGo(t *testing.T) string {
	t.Helper()
	root := os.Getenv("TINYGOROOT")
	if root == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		root = filepath.Join(cache, "wasmsched", "tinygo-v0.42.0")
	}
	tinygo := filepath.Join(root, "build", "tinygo")
	if _, err := os.Stat(tinygo); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("TinyGo not available (%v): CI=true needs it; install it with hack/tinygo.sh (make tools) or set TINYGOROOT", err)
		}
		t.Skipf("TinyGo not available (%v): install it with hack/tinygo.sh (make tools) or set TINYGOROOT", err)
	}
	return tinygo
}

// copyCheckout copies the files git knows of (tracked, and untracked but not
// ignored) from repo to dir, keeping modes and symlinks.
func copyCheckout(t *testing.T, repo, dir string) {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repo
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src, dst := filepath.Join(repo, name), filepath.Join(dir, name)
		st, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !st.Mode().IsRegular() {
			continue // a submodule's directory
		}
		copyFile(t, src, dst, st.Mode().Perm())
	}
}

func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
