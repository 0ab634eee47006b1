package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The three schedulers compared.
const (
	schedUpstream = "upstream" // (a) kube-scheduler v1.37.1
	schedNative   = "native"   // (b) wasmsched, reference policies compiled into the host
	schedWasm     = "wasm"     // (c) wasmsched, reference policies as Wasm modules (its default)
)

// schedulerName is the profile every implementation serves: the pods name it.
const schedulerName = "perf"

// clientQPS and clientBurst are every scheduler's client limits. They are
// scheduler_perf's, high enough that neither scheduler is throttled by its
// own client: with kube-scheduler's defaults (50/100) binding alone caps
// both at 50 pods/s and the comparison says nothing.
const (
	clientQPS   = 5000
	clientBurst = 5000
)

// running is a scheduler process under measurement.
type running interface {
	pid() int
	metrics(ctx context.Context) ([]byte, error)
	// cpuProfile records a CPU profile for d (Go's pprof format).
	cpuProfile(ctx context.Context, d time.Duration) ([]byte, error)
	stop()
	tail(n int) string
}

// startScheduler starts implementation kind against env and returns once it
// is ready.
func startScheduler(ctx context.Context, env *testenv.Env, kind, wasmsched string) (running, error) {
	switch kind {
	case schedUpstream:
		ks, err := env.StartKubeScheduler(ctx, testenv.KubeSchedulerOptions{
			SchedulerName: schedulerName, QPS: clientQPS, Burst: clientBurst, Verbosity: 1,
		})
		if err != nil {
			return nil, err
		}
		return upstream{ks}, nil
	case schedNative, schedWasm:
		return startWasmsched(ctx, env, kind, wasmsched)
	}
	return nil, fmt.Errorf("unknown scheduler %q: use %s, %s or %s", kind, schedUpstream, schedNative, schedWasm)
}

type upstream struct{ ks *testenv.KubeScheduler }

func (u upstream) pid() int { return u.ks.Pid() }
func (u upstream) metrics(ctx context.Context) ([]byte, error) {
	return u.ks.Get(ctx, "/metrics")
}
func (u upstream) cpuProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	return u.ks.Get(ctx, profilePath(d))
}
func (u upstream) stop()             { u.ks.Stop(10 * time.Second) }
func (u upstream) tail(n int) string { return u.ks.Tail(n) }

type wasmschedProc struct {
	p    *testenv.Process
	addr string // metrics listener
}

// wasmschedArgs are the flags of `wasmsched run` for kind: the same client
// limits as upstream, warnings only (upstream logs at -v=1), /debug/pprof
// served (as upstream's enableProfiling, on by default there), and for
// native every slot set to the reference policy compiled into the binary.
func wasmschedArgs(kind, kubeconfig, addr string) []string {
	args := []string{"run", "-kubeconfig", kubeconfig, "-scheduler-name", schedulerName,
		"-metrics-bind-address", addr, "-log-level", "warn", "-set", "metrics.profiling=true",
		"-set", "client.qps=" + strconv.Itoa(clientQPS), "-set", "client.burst=" + strconv.Itoa(clientBurst)}
	if kind == schedNative {
		for _, s := range abi.Slots {
			args = append(args, "-set", "policies."+s.String()+".module=native")
		}
	}
	return args
}

func startWasmsched(ctx context.Context, env *testenv.Env, kind, bin string) (running, error) {
	for attempt := 0; ; attempt++ {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p, err := env.StartProcess("wasmsched-"+kind, bin, wasmschedArgs(kind, env.Kubeconfig, addr)...)
		if err != nil {
			return nil, err
		}
		w := &wasmschedProc{p: p, addr: addr}
		err = w.waitReady(ctx, 60*time.Second)
		if err == nil {
			return w, nil
		}
		p.Stop(0)
		if attempt < 2 && strings.Contains(p.Tail(30), "address already in use") {
			continue
		}
		return nil, fmt.Errorf("wasmsched (%s): %w\n--- tail of %s ---\n%s", kind, err, p.LogPath(), p.Tail(40))
	}
}

func (w *wasmschedProc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		if ok, err := w.p.Exited(); ok {
			return fmt.Errorf("exited: %v", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := httpGet(ctx, "http://"+w.addr+"/readyz")
		if err == nil {
			return nil
		}
		last = err.Error()
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/readyz not OK within %v (last: %s)", timeout, last)
}

func (w *wasmschedProc) pid() int { return w.p.Pid() }
func (w *wasmschedProc) metrics(ctx context.Context) ([]byte, error) {
	return httpGet(ctx, "http://"+w.addr+"/metrics")
}
func (w *wasmschedProc) cpuProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	return httpGet(ctx, "http://"+w.addr+profilePath(d))
}
func (w *wasmschedProc) stop() { w.p.Stop(10 * time.Second) }

func profilePath(d time.Duration) string {
	return "/debug/pprof/profile?seconds=" + strconv.Itoa(max(1, int(d.Seconds())))
}
func (w *wasmschedProc) tail(n int) string { return w.p.Tail(n) }

func httpGet(ctx context.Context, url string) ([]byte, error) {
	return testenv.Get(ctx, http.DefaultClient, url)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
