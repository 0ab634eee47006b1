package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The per-test-binary state behind Main, Shared and Start.
var shared struct {
	mu      sync.Mutex
	enabled bool  // Main is running the tests
	etcd    *Etcd // started by the first Start or Shared call
	env     *Env  // started by the first Shared call
	err     error // the first start failure, reported to every later caller
}

// Main runs the package's tests and then stops what Shared and Start
// started for the whole binary. Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// Main first makes sure the binaries are built (outside the -timeout
// clock). No process starts until a test asks for one, so tests that need no
// control plane (or a -run that selects none) cost nothing more. The after
// functions run once the tests are done and the servers stopped (removing
// what the package built, say).
func Main(m *testing.M, after ...func()) {
	// Build what is missing before m.Run starts the -timeout clock: a cold
	// build (about 10 minutes on 2 cores) would otherwise eat go test's
	// default 10 minute timeout. With the binaries in place this costs a few
	// milliseconds.
	if _, err := EnsureBinaries(context.Background(), os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		os.Exit(1)
	}
	shared.mu.Lock()
	shared.enabled = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	if shared.env != nil {
		shared.env.Stop()
	}
	if shared.etcd != nil {
		shared.etcd.Stop()
	}
	shared.mu.Unlock()
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// Shared returns the test binary's shared control plane, starting it on
// first use; Main stops it. Isolate tests with Namespace. Cluster-scoped
// objects (Nodes, ClusterRoles, PriorityClasses) are visible to every test
// using it, so tests that create Nodes or run a scheduler over all Nodes want
// Start instead. Shared needs Main in TestMain.
func Shared(tb testing.TB) *Env {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.enabled {
		tb.Fatal("testenv.Shared needs `func TestMain(m *testing.M) { testenv.Main(m) }` in this package, " +
			"which stops the shared control plane after the tests; or use testenv.Start")
	}
	if shared.err != nil {
		tb.Fatalf("shared control plane failed to start earlier: %v", shared.err)
	}
	if shared.env == nil {
		var o Options
		o.Etcd, shared.err = sharedEtcdLocked(tb, o)
		if shared.err == nil {
			shared.env, shared.err = New(context.Background(), o)
		}
		if shared.err != nil {
			tb.Fatalf("start the shared control plane: %v", shared.err)
		}
		shared.env.shared = true
		tb.Logf("testenv: shared kube-apiserver %s ready after %v (logs in %s)",
			shared.env.Host(), shared.env.ReadyAfter().Round(time.Millisecond), shared.env.Dir())
	}
	if err := shared.env.exited(); err != nil {
		tb.Fatalf("the shared control plane died: %v", err)
	}
	return shared.env
}

// Start starts a control plane that only this test sees and stops it in
// tb.Cleanup, printing the log tails if the test failed. Under Main it is a
// fresh kube-apiserver on the binary's shared etcd, with its own
// --etcd-prefix, so its Nodes and cluster-scoped objects are its own (about
// 2-4 s per test on 2 cores: the apiserver's start); without Main it also
// starts its own etcd.
func Start(tb testing.TB, opts ...Option) *Env {
	tb.Helper()
	o := options(opts)
	shared.mu.Lock()
	if shared.enabled {
		var err error
		if o.Etcd, err = sharedEtcdLocked(tb, o); err != nil {
			shared.mu.Unlock()
			tb.Fatalf("start the shared etcd: %v", err)
		}
	}
	shared.mu.Unlock()
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	env, err := New(context.Background(), o)
	if err != nil {
		tb.Fatalf("start a private control plane: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("testenv: the test failed; logs of its control plane:\n%s", env.LogTails(30))
		}
		env.Stop()
	})
	tb.Logf("testenv: kube-apiserver %s (etcd prefix %s) ready after %v",
		env.Host(), env.EtcdPrefix(), env.ReadyAfter().Round(time.Millisecond))
	return env
}

// sharedEtcdLocked returns the binary's etcd, starting it on first use.
// shared.mu must be held.
func sharedEtcdLocked(tb testing.TB, o Options) (*Etcd, error) {
	if shared.etcd != nil {
		return shared.etcd, nil
	}
	e, err := StartEtcd(context.Background(), EtcdOptions{BinDir: o.BinDir, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	tb.Logf("testenv: shared etcd %s (log %s)", e.Endpoint(), e.LogPath())
	shared.etcd = e
	return e, nil
}

func options(opts []Option) Options {
	var o Options
	for _, f := range opts {
		f(&o)
	}
	return o
}
