package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cluster"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/metrics"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/shadow"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/queue"
	"github.com/wasmsched/wasmsched/host/secure"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// App is the assembled scheduler of one process: New builds it, Run runs
// it. An App runs once.
type App struct {
	log         *slog.Logger
	client      kubernetes.Interface
	election    config.LeaderElection // Enabled false: no election
	broadcaster broadcaster
	cache       *cache.Cache
	held        *cycle.HeldWriter // PodScheduled of pods held before the queue; runs while leading
	cluster     *cluster.Cluster
	profiles    []*profile
	swap        *swapper
	reload      bool         // WithReload given: watch SIGHUP and the files
	identity    string       // this replica's name (WithIdentity)
	policy      *policyWatch // nil: the policy API is off or not served
	policyKick  chan struct{}
	counters    map[string]*slotCounter // per profile: fallbacks since the module was loaded
	handler     http.Handler            // /metrics, /healthz, /livez, /readyz, /policies, pprof
	ln          net.Listener            // nil when metrics.bindAddress is empty
	secure      *secure.Server          // nil when secureServing.bindAddress is empty

	ready   atomic.Bool // the informers have synced
	leading atomic.Bool // this replica has started scheduling

	closeOnce sync.Once
	closers   []func() // what New built, released by Close in reverse order
}

// broadcaster is what the App uses of client-go's event broadcaster
// adapter (events.k8s.io/v1 when the cluster serves it, core/v1 otherwise).
type broadcaster interface {
	StartRecordingToSink(stopCh <-chan struct{})
	NewRecorder(name string) events.EventRecorderLogger
	Shutdown()
}

// profile is one scheduler name with its queue, cycle and policy set.
type profile struct {
	name  string
	set   *wasmslot.Set
	queue *queue.Queue
	sched *cycle.Scheduler
	// placement is what the profile's WasmFilter and WasmScore call.
	placement *policy.Placement
	// shadow evaluates the Shadows (SchedulingPolicies in spec.mode
	// Shadow) beside the policies serving their slots; shadows holds their
	// modules, apart from set's.
	shadow  *shadow.Evaluator
	shadows *wasmslot.Set
}

// Option configures New.
type Option func(*options)

type options struct {
	log      *slog.Logger
	events   kubernetes.Interface
	auth     kubernetes.Interface
	reg      *prometheus.Registry
	src      *config.Source
	identity string
	dyn      dynamic.Interface
	plugins  []framework.Row
}

// WithIdentity names this replica in the leader-election Lease and in the
// status of SchedulingPolicies. Default: DefaultIdentity.
func WithIdentity(id string) Option { return func(o *options) { o.identity = id } }

// WithDynamicClient lets the App watch SchedulingPolicies (policyAPI.enabled)
// and write their status. Without it the policy API is off: the slots come
// from the configuration only.
func WithDynamicClient(dyn dynamic.Interface) Option { return func(o *options) { o.dyn = dyn } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithEventClient sends the events through a client of their own, as
// upstream's eventClient: a burst of FailedScheduling events must not queue
// bindings behind it in the client's rate limiter. Default: the client.
func WithEventClient(c kubernetes.Interface) Option { return func(o *options) { o.events = c } }

// WithAuthClient sends the TokenReviews and SubjectAccessReviews of the
// secure listener through a client of their own, as upstream's delegated
// authentication and authorization clients: scrapes must not wait behind
// bindings in the client's rate limiter, nor bindings behind them.
// Default: the client.
func WithAuthClient(c kubernetes.Interface) Option { return func(o *options) { o.auth = c } }

// WithRegistry registers the collectors on reg, for a caller that gathers
// them itself. Default: a registry of the App's own, served on /metrics
// either way.
func WithRegistry(reg *prometheus.Registry) Option { return func(o *options) { o.reg = reg } }

// WithReload reloads the policies of the running scheduler from src, where
// the configuration of New came from: on SIGHUP, and when the configuration
// file or a module file changes. Without it, the policies change only
// through the admin endpoint.
func WithReload(src config.Source) Option { return func(o *options) { o.src = &src } }

// WithPlugin adds native plugins to the scheduler's registry, after
// upstream's in-tree ones: a Go program builds its own wasmsched binary
// with its plugins this way, as upstream's app.WithPlugin, and a
// KubeSchedulerConfiguration enables them by name. A row's plugin is off
// by default unless the row says otherwise.
func WithPlugin(rows ...framework.Row) Option {
	return func(o *options) { o.plugins = append(o.plugins, rows...) }
}

// Registry is the plugin registry New builds its profiles from with opts:
// upstream's in-tree plugins and those of WithPlugin. A command checks a
// configuration against it when it loads one (config.Source.Plugins).
func Registry(opts ...Option) (*framework.Registry, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return registry(o)
}

func registry(o options) (*framework.Registry, error) {
	r, err := plugins.InTree().With(o.plugins...)
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	return r, nil
}

// runtimeOptions are the Wasm runtime's options from the sandbox settings
// that are the runtime's rather than a module's.
func runtimeOptions(s config.Sandbox, log *slog.Logger) []wasm.Option {
	opts := []wasm.Option{wasm.WithLogger(log), wasm.WithWatchdogTick(s.WatchdogTick)}
	if s.CompilationCacheDir != "" {
		opts = append(opts, wasm.WithCompilationCacheDir(s.CompilationCacheDir))
	}
	return opts
}

// Limits maps the sandbox configuration onto the runtime's limits.
func Limits(s config.Sandbox) wasm.Limits {
	return wasm.Limits{MemoryPages: s.MemoryPages, Deadline: s.Deadline, PoolSize: s.PoolSize}
}

// New builds the scheduler of cfg against client, in the order the package
// documentation gives, and loads the policy modules of every profile: a
// module that cannot be loaded is an error (at start-up the operator gets
// it at once, rather than a scheduler on native defaults). ctx bounds the
// construction only. On an error, what was built is released.
func New(ctx context.Context, cfg *config.Config, client kubernetes.Interface, opts ...Option) (_ *App, err error) {
	o := options{log: slog.New(slog.DiscardHandler), events: client, auth: client}
	for _, opt := range opts {
		opt(&o)
	}
	log := o.log
	if o.identity == "" {
		o.identity = DefaultIdentity()
	}
	a := &App{log: log, client: client, election: cfg.LeaderElection, reload: o.src != nil, identity: o.identity,
		policyKick: make(chan struct{}, 1), counters: map[string]*slotCounter{}}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	reg := o.reg
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	policyRec, err := metrics.NewPolicy(reg)
	if err != nil {
		return nil, err
	}
	queueRec, err := metrics.NewQueue(reg)
	if err != nil {
		return nil, err
	}
	cycleRec, err := metrics.NewCycle(reg)
	if err != nil {
		return nil, err
	}
	draRec, err := metrics.NewDRA(reg)
	if err != nil {
		return nil, err
	}
	shadowRec, err := metrics.NewShadow(reg)
	if err != nil {
		return nil, err
	}

	rt, err := wasm.NewRuntime(ctx, runtimeOptions(cfg.Sandbox, log.With("component", "wasm"))...)
	if err != nil {
		return nil, err
	}
	a.onClose(func() { rt.Close(context.Background()) })
	a.broadcaster = newBroadcaster(o.events)
	a.onClose(a.broadcaster.Shutdown)

	gangs, err := cluster.ServesPodGroups(client)
	if err != nil {
		return nil, err
	}
	plugins, err := registry(o)
	if err != nil {
		return nil, err
	}
	// What the profiles' plugins share, over the informers the cluster
	// watches through: built once, here, before the informers start.
	informerFactory := cluster.NewInformerFactory(client)
	handle := framework.NewHandle(framework.HandleOptions{Listers: Listers(informerFactory, client), Claims: draRec,
		Parallelism: cfg.Scheduling.Parallelism})
	claimEvents, err := handle.DRA()
	if err != nil {
		return nil, err
	}
	a.cache = cache.New(cache.WithAssumedTTL(cfg.Scheduling.AssumedPodTTL),
		cache.WithLogger(logr.FromSlogHandler(log.With("component", "cache").Handler())))
	members := cluster.NewMembers()
	queues := map[string]cluster.Queue{}
	// The queues tell a.held, built below with the API, which pods they
	// hold and why; they hold none before the informers start (Run).
	heldNote := func(h queue.Held) { a.held.Note(h) }
	for _, pc := range cfg.Profiles {
		// The queue starts on the native defaults; loading the profile's
		// modules installs them (the same path as a swap later).
		qopts := []queue.Option{
			queue.WithBackoff(cfg.Queue.InitialBackoff, cfg.Queue.MaxBackoff),
			queue.WithMaxInUnschedulable(cfg.Queue.MaxInUnschedulable),
			queue.WithPopFromBackoffQ(cfg.Queue.PopFromBackoffQ),
			queue.WithRecorder(queueRec), queue.WithGroupMembers(members.Count),
			queue.WithProfile(pc.SchedulerName), queue.WithLogger(log.With("component", "queue")),
			queue.WithHeldNotify(heldNote),
		}
		if !gangs {
			qopts = append(qopts, queue.WithoutGroups())
		}
		p := &profile{name: pc.SchedulerName, queue: queue.New(qopts...), placement: &policy.Placement{}}
		a.profiles = append(a.profiles, p)
		queues[p.name] = p.queue
	}
	a.onClose(func() {
		for _, p := range a.profiles {
			p.queue.Close()
			if p.set != nil {
				_ = p.set.Close(context.Background())
			}
			if p.shadows != nil {
				_ = p.shadows.Close(context.Background())
			}
		}
	})

	nominator, preBindings := cycle.NewNominator(), cycle.NewPreBindings()
	a.cluster, err = cluster.New(ctx, client, a.cache, queues, members, log.With("component", "cluster"),
		cluster.WithNominator(nominator), cluster.WithPodGroupsServed(gangs),
		cluster.WithInformerFactory(informerFactory), cluster.WithClaimEvents(claimEvents))
	if err != nil {
		return nil, err
	}
	a.onClose(a.cluster.Shutdown)
	preemption := cycle.Preemption{PDBs: a.pdbs, Group: a.podGroups()}
	// A pod forgotten after its binding failed frees room for every
	// profile's pods, as in upstream's one queue.
	moves := func(ev abi.Event, only func(abi.PodView) bool) {
		for _, p := range a.profiles {
			if only == nil {
				p.queue.MoveOnEvent(ev)
			} else {
				p.queue.MoveOnEventFor(ev, only)
			}
		}
	}
	api := cycle.NewAPI(client, a.cluster.PodLister())
	if a.held, err = cycle.NewHeldWriter(api, queueRec, log.With("component", "held")); err != nil {
		return nil, err
	}
	for i, p := range a.profiles {
		// The profile's plugins (upstream's defaults unless a
		// KubeSchedulerConfiguration changed them) reading the informers;
		// the scheduler also builds them timed, for the sampled cycles of
		// scheduler_plugin_execution_duration_seconds.
		pc := cfg.Profiles[i]
		built, err := plugins.Build(handle.WithPlacement(p.placement), framework.Config{Plugins: pc.Plugins, PluginConfig: pc.PluginConfig})
		if err != nil {
			return nil, fmt.Errorf("profile %s: plugins: %w", p.name, err)
		}
		if err := installPreEnqueue(p.queue, built); err != nil {
			return nil, fmt.Errorf("profile %s: plugins: %w", p.name, err)
		}
		installAddedAffinity(p.queue, built)
		p.sched = cycle.New(p.queue, a.cache, api, a.broadcaster.NewRecorder(p.name),
			cycle.WithProfile(p.name),
			cycle.WithPercentageOfNodesToScore(pc.Percentage(cfg.Scheduling.PercentageOfNodesToScore)),
			cycle.WithParallelism(cfg.Scheduling.Parallelism),
			cycle.WithRecorder(cycleRec),
			cycle.WithNominator(nominator),
			cycle.WithPreBindings(preBindings),
			cycle.WithClusterMoves(moves),
			cycle.WithPreemption(preemption),
			cycle.WithBuilt(built),
			cycle.WithLogger(log.With("component", "cycle", "profile", p.name)))
		counter := &slotCounter{Recorder: policyRec, tripped: a.kickPolicies}
		a.counters[p.name] = counter
		p.shadow = shadow.New(shadow.WithRecorder(shadowRec.For(p.name)), shadow.WithLogger(log.With("component", "shadow", "profile", p.name)))
		p.shadows = wasmslot.NewSet(rt, Limits(cfg.Sandbox), p.shadow.Recorder(), p.shadow.Installer(),
			wasmslot.WithBreaker(cfg.Sandbox.BreakerFailures, cfg.Sandbox.BreakerWindow), wasmslot.WithEmptySlots())
		p.queue.SetObserver(p.shadow)
		p.set = wasmslot.NewSet(rt, Limits(cfg.Sandbox), counter, p.shadow.Tee(policy.Installer{
			Sort: p.queue.SetSort, BackoffSort: p.queue.SetBackoffSort, PreEnqueue: p.queue.SetPreEnqueue,
			QueueingHint: p.queue.SetQueueingHint, VictimOrder: p.sched.SetVictimOrder,
			Filter: p.placement.SetFilter, Score: p.placement.SetScore,
		}), wasmslot.WithBreaker(cfg.Sandbox.BreakerFailures, cfg.Sandbox.BreakerWindow))
		p.placement.OnFilterSwap(filterSwapped(p, log))
		if err := loadSlots(ctx, p.set, p.placement, cfg.Profiles[i].Policies); err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.name, err)
		}
		for slot, m := range p.set.Current() {
			log.Info("policy loaded", "profile", p.name, "slot", slot.String(), "module", m.Name, "sha256", m.SHA256)
		}
	}

	a.swap = &swapper{profiles: a.profiles, log: log.With("component", "swap"), current: cfg, admin: cfg.AdminEndpoint}
	if o.src != nil {
		a.swap.src = *o.src
	}
	if cfg.PolicyAPI.Enabled && o.dyn != nil {
		served, err := servesPolicyAPI(client)
		switch {
		case err != nil:
			return nil, err
		case !served:
			log.Warn("the SchedulingPolicy API (wasmsched.io/v1alpha1) is not installed, so the policies come from the configuration only: "+
				"install deploy/crd.yaml and restart to manage them with kubectl, or set policyAPI.enabled=false to silence this", "identity", a.identity)
		default:
			a.policy = newPolicyWatch(log.With("component", "policyapi"), client, o.dyn, cfg.PolicyAPI, a, Limits(cfg.Sandbox))
		}
	}
	a.handler = a.mux(reg, cfg.Metrics.Profiling, true)
	if addr := cfg.Metrics.BindAddress; addr != "" {
		a.ln, err = net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("metrics.bindAddress %s: %w (choose a free address with --metrics-bind-address)", addr, err)
		}
		a.onClose(func() { _ = a.ln.Close() })
		log.Info("serving /metrics, /healthz, /livez and /readyz", "address", a.ln.Addr().String())
	}
	// The secure listener serves the same reads, never the module upload:
	// a policy changes through the files (or the plain loopback listener
	// in development), not through a scraper's credentials.
	if ss := cfg.SecureServing; ss.BindAddress != "" {
		a.secure, err = secure.New(ss.BindAddress, o.auth, a.mux(reg, cfg.Metrics.Profiling, false),
			secure.WithCertFiles(ss.CertFile, ss.KeyFile), secure.WithPublicPaths(probePaths...),
			secure.WithLogger(log.With("component", "secure")))
		if err != nil {
			return nil, err
		}
		a.onClose(a.secure.Close)
	}
	return a, nil
}

// filterSwapped is what follows a change of p's filter slot: the queue
// requeues the pods the filter rejected on the events the new module
// declares (none when the slot is empty), and moves every pod the previous
// filter rejected, whose verdict the change may undo.
func filterSwapped(p *profile, log *slog.Logger) func() {
	return func() {
		var events []abi.FilterEvent
		if f, _ := p.placement.Filter(); f != nil {
			events = f.Options().FilterEvents
		}
		p.queue.SetPluginEvents(abi.PluginWasmFilter, events)
		if n := p.queue.MovePlugin(abi.PluginWasmFilter, "WasmFilterSwap"); n > 0 {
			log.Info("filter policy changed: pods it had rejected are retried", "profile", p.name, "pods", n)
		}
	}
}

// pdbs lists the PodDisruptionBudgets for preemption.
func (a *App) pdbs() []*policyv1.PodDisruptionBudget {
	list, err := a.cluster.PDBLister().List(labels.Everything())
	if err != nil {
		a.log.Error("list PodDisruptionBudgets", "err", err)
	}
	return list
}

// podGroups reads PodGroups for preemption; nil when the cluster does not
// serve them.
func (a *App) podGroups() func(namespace, name string) *schedv1beta1.PodGroup {
	pgl := a.cluster.PodGroupLister()
	if pgl == nil {
		return nil
	}
	return func(namespace, name string) *schedv1beta1.PodGroup {
		pg, err := pgl.PodGroups(namespace).Get(name)
		if err != nil {
			return nil
		}
		return pg
	}
}

func (a *App) onClose(f func()) { a.closers = append(a.closers, f) }

// Close releases what New built: the listener, the informers, the queues
// and policy sets, the event broadcaster and the Wasm runtime. Run calls
// it on its way out; a caller that does not Run calls it instead. It may be
// called more than once.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		for i := len(a.closers) - 1; i >= 0; i-- {
			a.closers[i]()
		}
	})
}

// Handler serves /metrics, /healthz, /livez, /readyz and /policies (and
// pprof with metrics.profiling): what Run serves on metrics.bindAddress.
func (a *App) Handler() http.Handler { return a.handler }

// Addr is the address the listener is bound to; "" when metrics.bindAddress
// is empty.
func (a *App) Addr() string {
	if a.ln == nil {
		return ""
	}
	return a.ln.Addr().String()
}

// SecureAddr is the address the HTTPS listener is bound to; "" when
// secureServing.bindAddress is empty.
func (a *App) SecureAddr() string {
	if a.secure == nil {
		return ""
	}
	return a.secure.Addr()
}

// Policies is the module serving each slot of the named profile, nil for
// an unknown profile.
func (a *App) Policies(profile string) map[abi.Slot]wasmslot.ModuleInfo {
	for _, p := range a.profiles {
		if p.name == profile {
			return p.set.Current()
		}
	}
	return nil
}

// Run schedules pods of the configured profiles until ctx ends or, with
// leader election, the lease is lost (an error), then releases everything
// (Close). A context ended with a cause other than context.Canceled is
// returned as an error.
func (a *App) Run(ctx context.Context) error {
	defer a.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil) // before wg.Wait: the goroutines below end with ctx

	if a.ln != nil {
		srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: 10 * time.Second}
		wg.Add(2)
		go func() { defer wg.Done(); _ = srv.Serve(a.ln) }()
		go func() {
			defer wg.Done()
			<-ctx.Done()
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer scancel()
			_ = srv.Shutdown(sctx)
		}()
	}

	if a.secure != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.secure.Serve(ctx); err != nil {
				cancel(err) // the probes would fail: stop rather than run unseen
			}
		}()
	}

	// Policies can change while the scheduler runs: SIGHUP or an edit of
	// the configuration or a module file reloads them.
	if a.reload {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.swap.watch(ctx); err != nil {
				a.log.Warn("policy reloads on file changes are off; SIGHUP and the admin endpoint still work", "err", err)
			}
		}()
	}

	// Informers start before the election, as upstream's do, so that a
	// replica that becomes leader schedules from a warm cache at once.
	if err := a.cluster.Start(ctx); err != nil {
		return err
	}
	// So do the SchedulingPolicies: every replica loads their modules
	// before it reports ready, so that a failover never runs an older
	// policy.
	if a.policy != nil {
		// A replica evaluates its Shadows whether it leads or not: only
		// the leader's queue and cycles hand them decisions.
		for _, p := range a.profiles {
			wg.Add(1)
			go func() { defer wg.Done(); p.shadow.Run(ctx) }()
		}
		a.policy.startAndSync(ctx)
		wg.Add(1)
		go func() { defer wg.Done(); a.policy.run(ctx) }()
	}
	a.broadcaster.StartRecordingToSink(ctx.Done())
	a.ready.Store(true)

	if !a.election.Enabled {
		a.schedule(ctx)
		return ignoreCanceled(ctx)
	}
	return a.elect(ctx)
}

// kickPolicies asks the policy API for a sync (a breaker opened, the
// replica became leader): its status entries say so at once.
func (a *App) kickPolicies() {
	select {
	case a.policyKick <- struct{}{}:
	default:
	}
}

// Identity is this replica's name (WithIdentity).
func (a *App) Identity() string { return a.identity }

// schedule runs the cache, the queues and the cycles until ctx ends.
func (a *App) schedule(ctx context.Context) {
	a.leading.Store(true)
	a.kickPolicies()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); a.cache.Run(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); a.held.Run(ctx) }()
	for _, p := range a.profiles {
		wg.Add(2)
		go func() { defer wg.Done(); p.queue.Run(ctx) }()
		go func() { defer wg.Done(); p.sched.Run(ctx) }()
	}
	a.log.Info("scheduling", "profiles", len(a.profiles), "gangs", a.cluster.Gangs())
	<-ctx.Done()
	for _, p := range a.profiles {
		p.queue.Close()
	}
	wg.Wait()
}

func ignoreCanceled(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// installPreEnqueue gives q the profile's native PreEnqueue plugins
// (DynamicResources'), which the queue asks before the PreEnqueue slot.
func installPreEnqueue(q *queue.Queue, built framework.Built) error {
	prof, err := framework.NewProfile(built.Entries...)
	if err != nil || !prof.HasPreEnqueue() {
		return err
	}
	q.SetNativePreEnqueue(func(pod *v1.Pod) abi.Gate {
		st := prof.PreEnqueue(pod)
		if st == nil {
			return abi.Gate{}
		}
		return abi.Gate{Code: abi.GateWait, Plugin: st.Plugin, Reason: st.Message()}
	})
	return nil
}

// installAddedAffinity gives the queue the profile's NodeAffinity
// addedAffinity, which its pod records carry for the QueueingHint slot.
func installAddedAffinity(q *queue.Queue, built framework.Built) {
	for _, e := range built.Entries {
		if a, ok := framework.Unwrap(e.Plugin).(interface{ AddedAffinity() *v1.NodeSelector }); ok {
			q.SetAddedAffinity(a.AddedAffinity())
			return
		}
	}
}

// Listers are the plugins' listers over f, the informers the cluster
// watches through (asking for a lister registers its informer, which the
// cluster then starts): namespaces (InterPodAffinity's namespaceSelector),
// the Services and controllers whose selectors PodTopologySpread's system
// default constraints spread by (no event of theirs requeues a pod, as
// upstream's plugins register none), the storage objects of the volume
// plugins and the DRA objects, whose changes are queue events
// (host/cluster). e2e's storm builds the same plugins over its own
// informers with them.
func Listers(f informers.SharedInformerFactory, client kubernetes.Interface) framework.Listers {
	core, apps, storage, dra := f.Core().V1(), f.Apps().V1(), f.Storage().V1(), f.Resource().V1()
	return framework.Listers{
		Namespaces:             core.Namespaces().Lister(),
		Services:               core.Services().Lister(),
		ReplicationControllers: core.ReplicationControllers().Lister(),
		ReplicaSets:            apps.ReplicaSets().Lister(),
		StatefulSets:           apps.StatefulSets().Lister(),
		PersistentVolumes:      core.PersistentVolumes().Lister(),
		PersistentVolumeClaims: core.PersistentVolumeClaims().Lister(),
		PVInformer:             core.PersistentVolumes().Informer(),
		PVCInformer:            core.PersistentVolumeClaims().Informer(),
		StorageClasses:         storage.StorageClasses().Lister(),
		CSINodes:               storage.CSINodes().Lister(),
		CSIDrivers:             storage.CSIDrivers().Lister(),
		CSIStorageCapacities:   storage.CSIStorageCapacities().Lister(),
		VolumeAttachments:      storage.VolumeAttachments().Lister(),
		Nodes:                  core.Nodes().Lister(),
		Pods:                   core.Pods().Lister(),
		Client:                 client,
		DeviceClasses:          dra.DeviceClasses().Lister(),
		ResourceClaims:         dra.ResourceClaims().Lister(),
		ClaimInformer:          dra.ResourceClaims().Informer(),
		ResourceSlices:         dra.ResourceSlices(),
		DeviceTaintRules:       dra.DeviceTaintRules(),
	}
}
