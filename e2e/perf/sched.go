package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/e2e/perf/report"
	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The three schedulers compared, and two more on request.
const (
	schedUpstream = "upstream" // (a) kube-scheduler v1.37.1
	schedNative   = "native"   // (b) wasmsched, reference policies compiled into the host
	schedWasm     = "wasm"     // (c) wasmsched, reference policies as Wasm modules (its default)
	// schedPlacement is wasm with the placement slots filled by the guest
	// SDK's examples: nodepool as the filter (which judges every node the
	// native filters accept, for every pod outside a pool) and gpupack as
	// the score (whose pre-step skips the pods that request no GPU). Not
	// run unless -schedulers names it.
	schedPlacement = "placement"
	// schedShadow is wasm with two Shadows (SchedulingPolicies in spec.mode
	// Shadow): fifosort beside the queue sort (a tenth of the pops, the
	// default) and the built-in hints module beside itself (every hint
	// call). Its throughput and CPU per pod beside wasm's are what a Shadow
	// costs. Not run unless -schedulers names it.
	schedShadow = "shadow"
	// schedAltHints is wasm with the QueueingHints module given by
	// -hints-module instead of the reference one (e.g. an older build of
	// policies/hints), so that one run measures a hints change before and
	// after under the same load. Not run unless -schedulers names it.
	schedAltHints = "althints"
	// schedCeiling is no scheduler but the measure of the others: the
	// binder of e2e/perf/ceiling, which binds each pod round-robin and
	// writes kube-scheduler's Scheduled event for it, the API writes of a
	// scheduled pod and nothing else. Not run unless -schedulers names it
	// (a full run would take about a third longer), and only on the
	// workloads where those writes are all a scheduler makes
	// (workload.noCeiling).
	schedCeiling = report.Ceiling
)

// schedKinds are the schedulers -schedulers accepts.
var schedKinds = []string{schedUpstream, schedNative, schedWasm, schedPlacement, schedShadow, schedAltHints, schedCeiling}

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

// startScheduler starts implementation kind against h's control plane and
// returns once it is ready.
func (h *harness) startScheduler(ctx context.Context, kind string) (running, error) {
	env := h.env
	switch kind {
	case schedUpstream:
		ks, err := env.StartKubeScheduler(ctx, testenv.KubeSchedulerOptions{
			SchedulerName: schedulerName, QPS: clientQPS, Burst: clientBurst, Verbosity: 1,
		})
		if err != nil {
			return nil, err
		}
		return upstream{ks}, nil
	case schedNative, schedWasm, schedPlacement:
		return startWasmsched(ctx, env, kind, h.wasmsched)
	case schedAltHints:
		return startWasmsched(ctx, env, kind, h.wasmsched, altHintsArgs(h.hintsModule)...)
	case schedShadow:
		return startShadowed(ctx, env, h.wasmsched)
	case schedCeiling:
		return startCeiling(ctx, env, h.ceiling)
	}
	return nil, fmt.Errorf("unknown scheduler %q: use one of %v", kind, schedKinds)
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

type wasmschedProc struct{ w *testenv.Wasmsched }

// wasmschedArgs are the flags of `wasmsched run` for kind, after
// -kubeconfig and -metrics-bind-address (testenv.StartWasmsched): the same
// client limits as upstream, warnings only (upstream logs at -v=1),
// /debug/pprof served (as upstream's enableProfiling, on by default there),
// and for native every slot set to the reference policy compiled into the
// binary.
func wasmschedArgs(kind string) []string {
	args := []string{"-scheduler-name", schedulerName,
		"-log-level", "warn", "-set", "metrics.profiling=true",
		"-set", "client.qps=" + strconv.Itoa(clientQPS), "-set", "client.burst=" + strconv.Itoa(clientBurst)}
	switch kind {
	case schedNative:
		args = append(args, nativeArgs()...)
	case schedPlacement:
		if root, err := testenv.RepoRoot(); err == nil {
			ex := filepath.Join(root, "guest-sdk", "examples")
			args = append(args, "-set", "policies.filter.module="+filepath.Join(ex, "nodepool", "nodepool.wasm"),
				"-set", "policies.score.module="+filepath.Join(ex, "gpupack", "gpupack.wasm"))
		}
	}
	return args
}

// nativeArgs set every slot with a reference policy to it, compiled into
// the binary; the placement slots have none and stay empty.
func nativeArgs() []string {
	var args []string
	for _, s := range abi.Slots {
		if !s.Placement() {
			args = append(args, "-set", "policies."+s.String()+".module=native")
		}
	}
	return args
}

// altHintsArgs set the QueueingHints slot to module, a file (the config
// key of `wasmsched help config`).
func altHintsArgs(module string) []string {
	return []string{"-set", "policies.queueingHint.module=" + module}
}

// startWasmsched runs bin with wasmschedArgs(kind) followed by extra.
func startWasmsched(ctx context.Context, env *testenv.Env, kind, bin string, extra ...string) (running, error) {
	w, err := testenv.StartWasmsched(ctx, testenv.WasmschedOptions{
		Bin: bin, Kubeconfig: env.Kubeconfig, Args: append(wasmschedArgs(kind), extra...),
		LogPath: env.LogPath("wasmsched-" + kind), Dir: env.Dir(),
	})
	if err != nil {
		return nil, fmt.Errorf("wasmsched (%s): %w", kind, err)
	}
	return wasmschedProc{w}, nil
}

func (w wasmschedProc) pid() int { return w.w.Pid() }
func (w wasmschedProc) metrics(ctx context.Context) ([]byte, error) {
	return w.w.Get(ctx, "/metrics")
}
func (w wasmschedProc) cpuProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	return w.w.Get(ctx, profilePath(d))
}
func (w wasmschedProc) stop()             { w.w.Stop(10 * time.Second) }
func (w wasmschedProc) tail(n int) string { return w.w.Tail(n) }

// ceilingArgs are the ceiling's flags: the scheduler name and client
// limits of the others.
func ceilingArgs(kubeconfig, addr string) []string {
	return []string{"-kubeconfig", kubeconfig, "-listen", addr, "-scheduler-name", schedulerName,
		"-qps", strconv.Itoa(clientQPS), "-burst", strconv.Itoa(clientBurst)}
}

// startCeiling runs the ceiling binary bin, its listener on a free
// loopback port, and returns once /readyz answers.
func startCeiling(ctx context.Context, env *testenv.Env, bin string) (running, error) {
	for attempt := 0; ; attempt++ { // a free port can be taken before the ceiling binds it
		port, err := testenv.FreePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err := testenv.StartProcess(ctx, bin, testenv.ProcessOptions{
			Name: "ceiling", Args: ceilingArgs(env.Kubeconfig, addr), Dir: env.Dir(), LogPath: env.LogPath("ceiling"),
			ReadyURL: "http://" + addr + "/readyz",
		})
		if err != nil {
			if attempt < 2 && strings.Contains(err.Error(), "address already in use") {
				continue
			}
			return nil, err
		}
		return ceilingProc{p, addr}, nil
	}
}

type ceilingProc struct {
	p    *testenv.Process
	addr string
}

func (c ceilingProc) pid() int { return c.p.Pid() }
func (c ceilingProc) metrics(ctx context.Context) ([]byte, error) {
	return testenv.Get(ctx, http.DefaultClient, "http://"+c.addr+"/metrics")
}
func (c ceilingProc) cpuProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	return testenv.Get(ctx, http.DefaultClient, "http://"+c.addr+profilePath(d))
}
func (c ceilingProc) stop()             { c.p.Stop(10 * time.Second) }
func (c ceilingProc) tail(n int) string { return c.p.Tail(n) }

func profilePath(d time.Duration) string {
	return "/debug/pprof/profile?seconds=" + strconv.Itoa(max(1, int(d.Seconds())))
}
