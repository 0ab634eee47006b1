package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

const modulePath = "github.com/wasmsched/wasmsched"

// Binaries needed by this package, built by hack/cluster.sh.
const (
	binEtcd      = "etcd"
	binAPIServer = "kube-apiserver"
	binKWOK      = "kwok"
	kwokStages   = "kwok-stages.yaml"
	// binControllerManager is built by `make cluster` (so `make test` and
	// CI have it) but not by EnsureBinaries: only the tests that start it
	// need it (ControllerManagerBinary).
	binControllerManager = "kube-controller-manager"
)

var (
	binMu  sync.Mutex
	binDir string // set once a build succeeded
)

// EnsureBinaries runs `hack/cluster.sh build` (which builds only what is
// missing from its versioned cache, and waits for a concurrent build) and
// returns the directory holding etcd, kube-apiserver, kwok and the KWOK
// stages. Build progress is copied to progress (os.Stderr when nil). The
// script runs once per process; later calls return the cached directory.
//
// There is no skip path: when a binary is missing it is built, under CI or
// not, and a failed build is an error.
func EnsureBinaries(ctx context.Context, progress io.Writer) (string, error) {
	binMu.Lock()
	defer binMu.Unlock()
	if binDir != "" {
		return binDir, nil
	}
	if progress == nil {
		progress = os.Stderr
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "cluster.sh")
	cmd := exec.CommandContext(ctx, "bash", script, "build", binAPIServer, binEtcd, binKWOK)
	cmd.Dir = root
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s build: %w (its progress above says why)", script, err)
	}
	dir := strings.TrimSpace(stdout.String())
	for _, b := range []string{binEtcd, binAPIServer, binKWOK, kwokStages} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s build printed %q, but: %w", script, dir, err)
		}
	}
	binDir = dir
	return dir, nil
}

// ControllerManagerBinary returns the path of kube-controller-manager in
// binDir. When it is missing there, under CI=true it is an error (CI runs
// `make test`, whose cluster target builds it beforehand, so its absence is
// a broken build setup, not something to mend inside a test's timeout);
// otherwise `hack/cluster.sh build kube-controller-manager` builds it into
// its cache (about 2 min with a warm Go build cache, progress to progress,
// os.Stderr when nil).
func ControllerManagerBinary(ctx context.Context, binDir string, progress io.Writer) (string, error) {
	bin := filepath.Join(binDir, binControllerManager)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if os.Getenv("CI") == "true" {
		return "", fmt.Errorf("%s is missing and CI=true: `make cluster` (run by `make test`) builds it; "+
			"run it, or hack/cluster.sh build %s, before the tests", bin, binControllerManager)
	}
	if progress == nil {
		progress = os.Stderr
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "cluster.sh")
	cmd := exec.CommandContext(ctx, "bash", script, "build", binControllerManager)
	cmd.Dir = root
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s build %s: %w (its progress above says why)", script, binControllerManager, err)
	}
	// The script builds into its versioned cache, which is binDir unless the
	// Env was given another (WithBinDir).
	bin = filepath.Join(strings.TrimSpace(stdout.String()), binControllerManager)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s build %s: %w", script, binControllerManager, err)
	}
	return bin, nil
}

// RepoRoot returns the root of the wasmsched checkout: the directory of this
// source file's module when the package was built from source (the usual
// case: go test, go run), else the first directory upwards from the working
// directory whose go.mod declares the wasmsched module.
func RepoRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if root, ok := findModuleRoot(filepath.Dir(file)); ok {
			return root, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if root, ok := findModuleRoot(wd); ok {
		return root, nil
	}
	return "", errors.New("cannot find the wasmsched repository (a go.mod declaring module " + modulePath +
		") above this package's source or the working directory; run from inside the checkout")
}

func findModuleRoot(dir string) (string, bool) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && moduleLine(b) == modulePath {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func moduleLine(gomod []byte) string {
	for line := range strings.SplitSeq(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
