// Package benchcli is the wasmsched-bench command: the scheduler's whole
// pipeline in one process against client-go's fake clientset (package
// host/app/bench). It is a command of its own, not a subcommand of
// wasmsched, so that the production binary does not link the fake
// clientset; cmd/wasmsched-bench is its main.
package benchcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/app/bench"
	"github.com/wasmsched/wasmsched/host/app/cli/internal/flags"
)

// benchUsage is what a usage error prints; -h prints benchHelp.
const benchUsage = `usage: wasmsched-bench [-nodes N] [-init-pods N] [-pods N] [-config FILE]
                       [-set key=value]... [-json] [-timeout D] [-log-level L]
`

const benchHelp = benchUsage + `
wasmsched-bench measures what the scheduler itself costs: the pipeline of
'wasmsched run' (informers, cache, queue, policy modules, scheduling cycles,
binding), in this process, against an in-memory cluster of N Ready nodes
(4 cpu, 32Gi, 110 pods each, spread over zones) served by client-go's fake
clientset. A binding sets spec.nodeName on the fake's copy of the pod, so
the informer sees the pod bound and the cache confirms it, as in a real
cluster; nothing leaves the process. It creates the -init-pods and waits
for them to be bound, then creates the -pods as fast as the fake takes them
and samples the number bound every second until all are bound.

It reports the pods bound in each one-second sample (the first is dropped, as
scheduler_perf does, since creating and sampling start independently), the
average pods/s (pods / elapsed, from the first create to the last bind), the
p50/p90/p99 of scheduler_scheduling_attempt_duration_seconds over the
measured pods, the CPU time of the process and its peak resident memory.
Use it to compare policy modules on a synthetic cluster, with no cluster:
-set policies.<slot>.module=FILE for a module of yours, =native for the
reference policy compiled into the binary, unset for the built-in Wasm one.
Run it on a quiet machine and more than once: it is a wall-clock measure.

What it does not measure: the apiserver, etcd, the network, TLS, and the
encoding and decoding of objects (the fake hands Go objects to the informers),
nor client-side rate limits. The CPU time and peak memory are the whole
process's, so they include the fake's object store, its deep copies and the
creating of pods: an upper bound on the scheduler's own. The peak memory is
the process's lifetime peak, setup included.

flags:
`

// errUsage marks errors whose remedy is the usage text.
var errUsage = flags.ErrUsage

// Run is the whole wasmsched-bench command: args are the arguments after
// the program name, and it returns the exit code (0, 1 on failure, 2 on a
// usage error). opts are passed to app.New after the command's own.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...app.Option) int {
	return flags.Exit(benchCmd(ctx, args, stdout, stderr, opts), stderr, "wasmsched-bench", benchUsage+"(wasmsched-bench -h says what it measures and lists the flags)\n")
}

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer, extra []app.Option) error {
	fs := flag.NewFlagSet("wasmsched-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchHelp)
		fs.PrintDefaults()
	}
	nodes := fs.Int("nodes", 5000, "nodes of the synthetic cluster")
	initPods := fs.Int("init-pods", 500, "pods bound before the measured phase")
	pods := fs.Int("pods", 5000, "pods created and bound in the measured phase")
	cfgFile := fs.String("config", "", "configuration file (YAML); 'wasmsched help config' lists the keys")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout instead of a summary")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up if the pods are not all bound within this time")
	logLevel := fs.String("log-level", "warn", "log level of the scheduler (on stderr): debug, info, warn or error")
	workload := fs.String("workload", "plain", "the pods: plain (100m cpu, no constraint) or mix (e2e/perf's ConstraintMix: a third plain, a third preferred anti-affinity on the hostname, a third zone spread, every tenth a required anti-affinity on the hostname)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (Go's pprof format) of the whole run, setup and both phases, to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile (Go's pprof format, allocations since the start in alloc_space) at the end of the run to this file")
	var sets flags.Sets
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable), e.g. -set policies.queueSort.module=FILE")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() != 0:
		return fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, fs.Args())
	case *nodes < 1:
		return fmt.Errorf("%w: -nodes %d: want at least 1", errUsage, *nodes)
	case *initPods < 0:
		return fmt.Errorf("%w: -init-pods %d: want 0 or more", errUsage, *initPods)
	case *pods < 1:
		return fmt.Errorf("%w: -pods %d: want at least 1", errUsage, *pods)
	case *timeout <= 0:
		return fmt.Errorf("%w: -timeout %v: want a positive duration", errUsage, *timeout)
	case *workload != "plain" && *workload != "mix":
		return fmt.Errorf("%w: -workload %q: want plain or mix", errUsage, *workload)
	case *workload == "mix" && *nodes*10 < *initPods+*pods:
		return fmt.Errorf("%w: -workload mix: %d pods need at least %d nodes (every tenth pod wants a node of its own)", errUsage, *initPods+*pods, (*initPods+*pods+9)/10)
	}
	if *initPods+*pods > *nodes*bench.PodsPerNode {
		return fmt.Errorf("%w: %d pods do not fit on %d nodes (%d pods each): raise -nodes or lower -pods",
			errUsage, *initPods+*pods, *nodes, bench.PodsPerNode)
	}
	level, err := flags.LogLevel(*logLevel)
	if err != nil {
		return err
	}
	overrides := sets.Overrides()
	// Nothing listens and nothing is elected: the process is alone with its
	// fake cluster.
	overrides["metrics.bindAddress"] = ""
	overrides["secureServing.bindAddress"] = ""
	overrides["leaderElection.enabled"] = "false"
	plugins, err := app.Registry()
	if err != nil {
		return err
	}
	src := config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: overrides, Plugins: plugins}
	cfg, err := config.Load(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithTimeoutCause(ctx, *timeout, fmt.Errorf("-timeout %v reached", *timeout))
	defer cancel()
	size := bench.Size{Nodes: *nodes, InitPods: *initPods, Pods: *pods, Mix: *workload == "mix"}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	opts := append([]app.Option{app.WithLogger(log), app.WithReload(src)}, extra...)
	res, err := bench.Run(ctx, cfg, size, stderr, opts...)
	if err == nil && *memProfile != "" {
		err = writeHeapProfile(*memProfile)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.Summary(stdout)
}

// writeHeapProfile writes the heap profile to file, after a collection so
// that its in-use figures are the live heap.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("-memprofile: %w", err)
	}
	return f.Close()
}
