// Command ceiling is e2e/perf's reference binder, the `ceiling` scheduler
// kind of `make bench-e2e`: it binds each pending pod of its scheduler name
// to the next usable node, round-robin, and writes the Scheduled event
// exactly as kube-scheduler v1.37.1 does, and nothing else. No queue, no
// filters, no scores, no cache of assigned pods: what it costs the
// apiserver, etcd and itself is what any scheduler must spend to place a
// pod through the API, so its throughput is the most a scheduler can reach
// on the machine, and a scheduler's throughput over the ceiling's says how
// much of that it reaches (docs/RATIONALE.md, "The ceiling").
//
//	ceiling -kubeconfig K -listen 127.0.0.1:10361 -scheduler-name perf -qps 5000 -burst 5000
//
// It writes, per pod, what kube-scheduler writes: one pods/binding
// subresource create (DefaultBinder, util.BindPod) and one events.k8s.io/v1
// Event through client-go's event broadcaster adapter (cmd/kube-scheduler's
// options.Config: a second client for events, the recorder named after the
// profile, so reportingController is the scheduler name and
// reportingInstance "<scheduler name>-<hostname>"), with kube-scheduler's
// client settings: protobuf, no compression, the given QPS and burst.
//
// It serves /metrics (Go and process collectors and
// scheduler_schedule_attempts_total{result,profile}: one attempt per bind,
// so no attempt-duration histogram), /readyz once its informers have
// synced, and /debug/pprof/.
//
// # Notes
//
// "Usable" nodes are those not cordoned and without a NoSchedule or
// NoExecute taint: the harness runs no kubelets, so no node is ever Ready,
// and kube-scheduler does not look at the Ready condition either (without
// a kubelet, TaintNodesByCondition adds no not-ready taint).
//
// A pod is bound whatever it asks for: the ceiling is not a scheduler, and
// e2e/perf does not check its placements.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	kubeconfig    string
	listen        string
	schedulerName string
	qps           float64
	burst         int
	workers       int
	contentType   string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("ceiling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (required)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:10361", "address of the plain-HTTP listener: /metrics, /readyz, /debug/pprof/")
	fs.StringVar(&o.schedulerName, "scheduler-name", "default-scheduler", "bind the pods with this spec.schedulerName; also the events' reportingController, as kube-scheduler's profile name is")
	fs.Float64Var(&o.qps, "qps", 50, "client QPS, of each of the two clients (as kube-scheduler's clientConnection.qps)")
	fs.IntVar(&o.burst, "burst", 100, "client burst, of each of the two clients")
	fs.IntVar(&o.workers, "workers", 32, "bindings in flight at once (kube-scheduler binds each pod in a goroutine of its own; enough here that the binder never waits on itself)")
	fs.StringVar(&o.contentType, "content-type", "application/vnd.kubernetes.protobuf", "content type of requests (kube-scheduler's clientConnection.contentType default)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.kubeconfig == "":
		return o, errors.New("-kubeconfig is required")
	case o.qps <= 0 || o.burst <= 0 || o.workers <= 0:
		return o, fmt.Errorf("-qps, -burst and -workers must be > 0 (got %g, %d, %d)", o.qps, o.burst, o.workers)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "ceiling: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := serve(ctx, o, log); err != nil {
		fmt.Fprintf(stderr, "ceiling: %v\n", err)
		return 1
	}
	return 0
}

// serve binds until ctx ends.
func serve(ctx context.Context, o options, log *slog.Logger) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
	}
	// cmd/kube-scheduler's createKubeConfig and createClients.
	cfg.DisableCompression = true
	cfg.ContentType = o.contentType
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "ceiling"))
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	eventClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, eventClient)
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	b := newBinder(client, broadcaster.NewRecorder(o.schedulerName), o.schedulerName, reg, log)

	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: b.mux(reg), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	b.run(ctx, o.workers)

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// mux serves /metrics, /readyz, /healthz and /debug/pprof/.
func (b *binder) mux(reg *prometheus.Registry) *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	m.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !b.ready.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
