package config

import (
	"log/slog"
	"time"

	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// Config is the validated configuration.
type Config struct {
	// SchedulerName is the default profile's scheduler name: the
	// spec.schedulerName of the pods it schedules.
	SchedulerName  string
	Client         Client
	Queue          Queue
	Scheduling     Scheduling
	LeaderElection LeaderElection
	Metrics        Metrics
	SecureServing  SecureServing
	Logging        Logging
	Sandbox        Sandbox
	// Policies holds the default profile's slots whose module comes from a
	// file or is native; a slot not listed uses the Wasm module built into
	// the binary.
	Policies map[abi.Slot]Module
	// AdminEndpoint serves POST /policies/{slot} on the metrics listener, to
	// load a new module into a slot while the scheduler runs
	// (policies.adminEndpoint).
	AdminEndpoint bool
	// PolicyAPI configures the SchedulingPolicy objects (wasmsched.io),
	// which take precedence over Policies.
	PolicyAPI PolicyAPI
	// Profiles are every scheduler name served. Profiles[0] is the default
	// profile (SchedulerName and Policies; a KubeSchedulerConfiguration's
	// first profile); the others follow sorted by name.
	Profiles []Profile
}

// Client configures the connection to the API server.
type Client struct {
	// QPS and Burst rate-limit the client (client-go's rest.Config fields).
	QPS   float32
	Burst int
	// Kubeconfig is the cluster's kubeconfig file; "" for the in-cluster
	// service account. The run command's -kubeconfig wins over it.
	Kubeconfig string
	// ContentType and AcceptContentTypes are rest.Config's; "" keeps
	// client-go's (JSON).
	ContentType        string
	AcceptContentTypes string
}

// Queue configures the scheduling queue.
type Queue struct {
	// InitialBackoff and MaxBackoff bound a pod's backoff, which doubles per
	// failed attempt.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxInUnschedulable is how long an unschedulable pod waits for an event
	// before it is retried anyway (podMaxInUnschedulablePodsDuration).
	MaxInUnschedulable time.Duration
	// PopFromBackoffQ turns KEP-5142 on: backoffQ ordering windows and popping
	// from backoffQ when activeQ is empty.
	PopFromBackoffQ bool
}

// Scheduling configures the scheduling cycle.
type Scheduling struct {
	// PercentageOfNodesToScore is the share of feasible nodes to find before
	// scoring; 0 is upstream's adaptive default.
	PercentageOfNodesToScore int32
	// Parallelism bounds the goroutines filtering a pod's nodes (and no
	// more than GOMAXPROCS do) and dry-running its preemption.
	Parallelism int
	// AssumedPodTTL is how long an assumed pod whose binding finished stays
	// in the cache without its informer update; 0 keeps it until then.
	AssumedPodTTL time.Duration
}

// LeaderElection configures the Lease that makes one replica active.
type LeaderElection struct {
	Enabled bool
	// Namespace and Name are the Lease's.
	Namespace string
	Name      string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go
	// leaderelection.LeaderElectionConfig's fields.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Metrics configures the plain-HTTP listener of /metrics, the probes and
// /policies, which has no authentication: for development and tests.
type Metrics struct {
	// BindAddress is host:port; empty disables the listener.
	BindAddress string
	// Profiling serves net/http/pprof under /debug/pprof/ on the listener,
	// as kube-scheduler's enableProfiling does. Off by default: the listener
	// has no authentication.
	Profiling bool
	// ContentionProfiling, with Profiling, records where goroutines block
	// (runtime.SetBlockProfileRate(1)), as kube-scheduler's
	// enableContentionProfiling.
	ContentionProfiling bool
}

// SecureServing configures the HTTPS listener, kube-scheduler's secure
// port: the API server authenticates and authorizes its callers.
type SecureServing struct {
	// BindAddress is host:port; empty disables the listener.
	BindAddress string
	// CertFile and KeyFile are the PEM serving certificate and key, both set
	// or both empty; empty: a self-signed certificate made at start.
	CertFile string
	KeyFile  string
}

// The values of logging.format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// Logging configures the log of the run command: wasmsched's own lines
// and, through the same handler, those of client-go and the other
// Kubernetes libraries, which log with klog.
type Logging struct {
	// Format is LogFormatText (slog's key=value lines) or LogFormatJSON (one
	// object a line, with component-base's field names).
	Format string
	// Level is the lowest level logged.
	Level slog.Level
	// Verbosity is klog's -v: the libraries' V(n) messages with n up to
	// Verbosity are logged, V(0) to V(3) at info, V(4) and above at debug.
	Verbosity int
}

// PolicyAPI configures the watch of SchedulingPolicy objects.
type PolicyAPI struct {
	// Enabled: every replica watches SchedulingPolicies and loads their
	// modules, which hold their slots over the configuration's.
	Enabled bool
	// Namespace holds the ConfigMaps that spec.module.configMapRef names:
	// the scheduler's own.
	Namespace string
	// StatusInterval is how often a replica refreshes its entry in each
	// object's status.replicas; entries not refreshed for ten intervals are
	// pruned.
	StatusInterval time.Duration
}

// Sandbox are the limits every policy module runs under.
type Sandbox struct {
	// MemoryPages caps a module's linear memory in 64 KiB pages.
	MemoryPages uint32
	// Deadline bounds one call into a module.
	Deadline time.Duration
	// PoolSize is how many idle instances of a module are kept for reuse
	// (wasm.Limits.PoolSize): a bound on the pool, not on the instances.
	PoolSize int
	// WatchdogTick is the watchdog's finest resolution: it checks for
	// overrunning calls every tenth of the shortest deadline of the modules
	// loaded, or every tick if that is longer; a call is stopped within its
	// deadline plus two such periods.
	WatchdogTick time.Duration
	// BreakerFailures failed calls within BreakerWindow open a slot's
	// circuit breaker: the slot then answers with its native default, without
	// calling its module, until a new module is loaded. 0 disables it.
	BreakerFailures int
	BreakerWindow   time.Duration
	// CompilationCacheDir, when set, keeps the machine code of compiled
	// modules in this directory as well as in memory, so that a restarted
	// scheduler (with a persistent volume there) skips compiling them.
	// "" keeps it in memory only. It is the runtime's, so a change needs a
	// restart.
	CompilationCacheDir string
}

// Module is a slot's configured policy: a module loaded from a file, or the
// native reference policy (policies.<slot>.module: native).
type Module struct {
	// Path is the module file; "" when Native.
	Path string
	// SHA256, when set, pins the file's content (lowercase hex): a file that
	// does not match is refused. Always "" when Native.
	SHA256 string
	// Native selects the slot's built-in reference policy compiled into the
	// binary, run without the Wasm sandbox, instead of a module.
	Native bool
	// FailurePolicy is what a placement slot (filter, score) does when its
	// module fails: "Fail", "Ignore", or "" for the slot's default (Fail for
	// the filter, Ignore for the score). Always "" for the other slots.
	FailurePolicy string
}

// NativeModule is the value of policies.<slot>.module that selects the
// native reference policy; a file of that name is written ./native.
const NativeModule = "native"

// Profile is one scheduler name, its policy slots and its plugins.
type Profile struct {
	SchedulerName string
	// Policies holds the slots whose module comes from a file or is native;
	// a slot not listed uses the built-in Wasm module. Never nil.
	Policies map[abi.Slot]Module
	// PercentageOfNodesToScore is the profile's own share of feasible nodes
	// to find before scoring; nil: Scheduling.PercentageOfNodesToScore.
	PercentageOfNodesToScore *int32
	// Plugins and PluginConfig are the profile's plugin sets and args as a
	// KubeSchedulerConfiguration profile writes them (wasmsched's own
	// PoliciesPlugin entry removed): nil for upstream's default plugins with
	// their default args. host/framework's Registry.Build turns them into plugins.
	Plugins      *kschedv1.Plugins
	PluginConfig []kschedv1.PluginConfig
}

// Percentage is the profile's share of feasible nodes to find before
// scoring, given the global one.
func (p Profile) Percentage(global int32) int32 {
	if p.PercentageOfNodesToScore != nil {
		return *p.PercentageOfNodesToScore
	}
	return global
}
