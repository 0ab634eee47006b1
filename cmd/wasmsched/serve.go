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
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cluster"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/metrics"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/queue"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// serveCmd is `wasmsched run`: schedule pods of the configured profiles
// until ctx ends (SIGINT, SIGTERM) or, with leader election, the lease is
// lost.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file of the cluster (empty: the in-cluster service account)")
	cfgFile := fs.String("config", "", "configuration file (YAML); `wasmsched help config` lists the keys")
	name := fs.String("scheduler-name", "", "scheduler name of the default profile: pods with this spec.schedulerName are scheduled (default from the config, wasmsched)")
	metricsAddr := fs.String("metrics-bind-address", "", "address of /metrics, /healthz and /readyz (default from the config, 127.0.0.1:10351; empty string in the config disables)")
	leaderElect := fs.Bool("leader-elect", false, "acquire a Lease before scheduling, so that only one replica schedules")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	var sets setFlags
	fs.Var(&sets, "set", "override a configuration key, key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: run takes no arguments, got %q", errUsage, fs.Args())
	}
	level, err := parseLogLevel(*logLevel)
	if err != nil {
		return err
	}
	overrides := sets.overrides()
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "scheduler-name":
			overrides["schedulerName"] = *name
		case "metrics-bind-address":
			overrides["metrics.bindAddress"] = *metricsAddr
		case "leader-elect":
			overrides["leaderElection.enabled"] = strconv.FormatBool(*leaderElect)
		}
	})
	src := config.Source{File: *cfgFile, Environ: os.Environ(), Overrides: overrides}
	cfg, err := config.Load(src)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	restCfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	restCfg.QPS, restCfg.Burst = cfg.Client.QPS, cfg.Client.Burst
	restCfg.UserAgent = "wasmsched"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	// Events get a client of their own, as upstream's eventClient: a burst
	// of FailedScheduling events must not queue bindings behind it in the
	// client's rate limiter.
	eventClient, err := kubernetes.NewForConfig(rest.CopyConfig(restCfg))
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	return serve(ctx, cfg, src, client, eventClient, log)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig given and not running in a cluster (%v): pass --kubeconfig FILE", err)
		}
		return c, nil
	}
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	return c, nil
}

// profile is one scheduler name with its queue and cycle.
type profile struct {
	name    string
	set     *policy.Set
	victims *victimOrder
	queue   *queue.Queue
	sched   *cycle.Scheduler
}

// serve runs the scheduler against client.
func serve(ctx context.Context, cfg *config.Config, src config.Source, client, eventClient kubernetes.Interface, log *slog.Logger) error {
	return serveWith(ctx, cfg, src, client, eventClient, log, serveOptions{})
}

// serveOptions is what an in-process caller (wasmsched bench) adds to
// serve; the zero value is `wasmsched run`.
type serveOptions struct {
	// registry, if not nil, receives the collectors instead of a registry
	// of serve's own, so that the caller can gather them.
	registry *prometheus.Registry
	// loaded, if not nil, is told the module serving each slot of a
	// profile once the profile's policies are loaded.
	loaded func(profile string, modules map[abi.Slot]policy.ModuleInfo)
}

// serveWith is serve with opts.
func serveWith(ctx context.Context, cfg *config.Config, src config.Source, client, eventClient kubernetes.Interface, log *slog.Logger, opts serveOptions) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	reg := opts.registry
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	policyRec, err := metrics.NewPolicy(reg)
	if err != nil {
		return err
	}
	queueRec, err := metrics.NewQueue(reg)
	if err != nil {
		return err
	}
	cycleRec, err := metrics.NewCycle(reg)
	if err != nil {
		return err
	}

	rt, err := wasm.NewRuntime(ctx, wasm.WithLogger(log.With("component", "wasm")), wasm.WithWatchdogTick(cfg.Sandbox.WatchdogTick))
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())

	broadcaster := events.NewEventBroadcasterAdapter(eventClient)
	defer broadcaster.Shutdown()

	gangs, err := cluster.ServesPodGroups(client)
	if err != nil {
		return err
	}
	c := cache.New(cache.WithAssumedTTL(cfg.Scheduling.AssumedPodTTL))
	members := cluster.NewMembers()
	var profiles []*profile
	queues := map[string]cluster.Queue{}
	for _, pc := range cfg.Profiles {
		// The queue starts on the native defaults; loading the profile's
		// modules installs them (the same path as a swap later).
		qopts := []queue.Option{
			queue.WithBackoff(cfg.Queue.InitialBackoff, cfg.Queue.MaxBackoff),
			queue.WithMaxInUnschedulable(cfg.Queue.MaxInUnschedulable),
			queue.WithPopFromBackoffQ(cfg.Queue.PopFromBackoffQ),
			queue.WithRecorder(queueRec), queue.WithGroupMembers(members.Count),
		}
		if !gangs {
			qopts = append(qopts, queue.WithoutGroups())
		}
		q := queue.New(qopts...)
		victims := newVictimOrder()
		set := policy.NewSet(rt, sandboxLimits(cfg.Sandbox), policyRec, policy.Installer{
			Sort: q.SetSort, BackoffSort: q.SetBackoffSort, PreEnqueue: q.SetPreEnqueue,
			QueueingHint: q.SetQueueingHint, VictimOrder: victims.set,
		}, policy.WithBreaker(cfg.Sandbox.BreakerFailures, cfg.Sandbox.BreakerWindow))
		p := &profile{name: pc.SchedulerName, set: set, victims: victims, queue: q}
		profiles = append(profiles, p)
		queues[pc.SchedulerName] = q
		if err := loadSlots(ctx, set, pc.Policies); err != nil {
			return fmt.Errorf("profile %s: %w", pc.SchedulerName, err)
		}
		for slot, m := range set.Current() {
			log.Info("policy loaded", "profile", pc.SchedulerName, "slot", slot.String(), "module", m.Name, "sha256", m.SHA256)
		}
		if opts.loaded != nil {
			opts.loaded(pc.SchedulerName, set.Current())
		}
	}
	defer func() {
		for _, p := range profiles {
			p.queue.Close()
			_ = p.set.Close(context.Background())
		}
	}()

	nominator := cycle.NewNominator()
	cl, err := cluster.New(ctx, client, c, queues, members, log.With("component", "cluster"), cluster.WithNominator(nominator),
		cluster.WithPodGroupsServed(gangs))
	if err != nil {
		return err
	}
	defer cl.Shutdown()
	api := cycle.NewAPI(client, cl.PodLister())
	pdbs := func() []*policyv1.PodDisruptionBudget {
		list, err := cl.PDBLister().List(labels.Everything())
		if err != nil {
			log.Error("list PodDisruptionBudgets", "err", err)
		}
		return list
	}
	var groups func(namespace, name string) *schedv1beta1.PodGroup
	if pgl := cl.PodGroupLister(); pgl != nil {
		groups = func(namespace, name string) *schedv1beta1.PodGroup {
			pg, err := pgl.PodGroups(namespace).Get(name)
			if err != nil {
				return nil
			}
			return pg
		}
	}
	for _, p := range profiles {
		p.sched = cycle.New(p.queue, c, api, broadcaster.NewRecorder(p.name),
			cycle.WithProfile(p.name),
			cycle.WithPercentageOfNodesToScore(cfg.Scheduling.PercentageOfNodesToScore),
			cycle.WithParallelism(cfg.Scheduling.Parallelism),
			cycle.WithRecorder(cycleRec),
			cycle.WithNominator(nominator),
			cycle.WithPreemption(cycle.Preemption{PDBs: pdbs, Group: groups, Order: p.victims}),
			cycle.WithLogger(log.With("component", "cycle", "profile", p.name)))
	}

	sw := &swapper{profiles: profiles, src: src, log: log.With("component", "swap"), current: cfg, admin: cfg.AdminEndpoint}
	var ready, leading atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	if addr := cfg.Metrics.BindAddress; addr != "" {
		srv, err := listen(addr, cfg.Metrics.Profiling, reg, &ready, sw)
		if err != nil {
			return err
		}
		log.Info("serving /metrics, /healthz and /readyz", "address", srv.Addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ctx.Done()
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer scancel()
			_ = srv.Shutdown(sctx)
		}()
	}

	// Policies can change while the scheduler runs: SIGHUP or an edit of
	// the configuration or a module file reloads them.
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := sw.watch(ctx); err != nil {
			log.Warn("policy reloads on file changes are off; SIGHUP and the admin endpoint still work", "err", err)
		}
	}()

	// Informers start before the election, as upstream's do, so that a
	// replica that becomes leader schedules from a warm cache at once.
	if err := cl.Start(ctx); err != nil {
		return err
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	ready.Store(true)

	schedule := func(ctx context.Context) {
		leading.Store(true)
		var swg sync.WaitGroup
		swg.Add(1)
		go func() { defer swg.Done(); c.Run(ctx) }()
		for _, p := range profiles {
			swg.Add(2)
			go func() { defer swg.Done(); p.queue.Run(ctx) }()
			go func() { defer swg.Done(); p.sched.Run(ctx) }()
		}
		log.Info("scheduling", "profiles", len(profiles), "gangs", cl.Gangs())
		<-ctx.Done()
		for _, p := range profiles {
			p.queue.Close()
		}
		swg.Wait()
	}
	if !cfg.LeaderElection.Enabled {
		schedule(ctx)
		return ignoreCanceled(ctx)
	}
	return elect(ctx, cfg.LeaderElection, client, log, schedule, &leading)
}

// elect runs schedule while this replica holds the Lease. Losing it ends
// the process with an error, as upstream does: another replica may be
// scheduling already, and a fresh start rebuilds the state from the
// apiserver.
func elect(ctx context.Context, le config.LeaderElection, client kubernetes.Interface, log *slog.Logger,
	schedule func(context.Context), leading *atomic.Bool) error {
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, le.Namespace, le.Name,
		client.CoreV1(), client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	lost := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            le.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("became leader", "lease", le.Namespace+"/"+le.Name, "identity", id)
				schedule(ctx)
			},
			OnStoppedLeading: func() {
				if leading.Load() {
					close(lost)
				}
			},
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("another replica leads", "lease", le.Namespace+"/"+le.Name, "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("waiting for the lease", "lease", le.Namespace+"/"+le.Name, "identity", id)
	elector.Run(ctx)
	select {
	case <-lost:
		if ctx.Err() == nil {
			return errors.New("lost the leader election lease: exiting so that only one replica schedules")
		}
	default:
	}
	return ignoreCanceled(ctx)
}

func ignoreCanceled(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// listen serves the metrics and health endpoints on addr.
func listen(addr string, profiling bool, reg *prometheus.Registry, ready *atomic.Bool, sw *swapper) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics.bindAddress %s: %w (choose a free address with --metrics-bind-address)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "informers not synced yet", http.StatusServiceUnavailable)
			return
		}
		// Open breakers do not make the scheduler unready (it schedules on
		// the native defaults), but they are reported.
		for _, line := range sw.readyDetail() {
			_, _ = io.WriteString(w, "[!] "+line+"\n")
		}
		_, _ = io.WriteString(w, "ok")
	})
	sw.register(mux)
	if profiling {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
