package config

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wasmsched/wasmsched/abi"
)

// EnvPrefix starts every environment variable the configuration reads.
const EnvPrefix = "WASMSCHED_"

// maxMemoryPages matches the runtime's bound: an output pointer must stay
// below 2 GiB.
const maxMemoryPages = 32768

type kind int

const (
	kindInt kind = iota
	kindDuration
	kindString
	kindBool
	kindFloat
)

// key describes one configuration key and binds it to the field it sets.
// The constructors below (boolKey, intKey, ...) are the only way to make
// one: they tie the key's name, kind, default and checks to a typed pointer
// to its field, so the name is written once and a key bound to a field of
// the wrong type does not compile.
type key struct {
	name string
	kind kind
	// def is the default as the kind's Go type (int64, float64,
	// time.Duration, string or bool): the defaults layer and Help use it.
	def  any
	help string
	// set converts a value from any layer (YAML types, or strings from the
	// environment and the command line) to the key's kind and checks it; it
	// returns what stores the value in the key's field.
	set func(raw any) (store func(*target), err error)
}

// target is what the keys' bindings store into: the Config, and each
// slot's policies.<slot>.{module,sha256} as written, which policies() then
// turns into Config.Policies. An additional profile's keys store into a
// target of their own.
type target struct {
	cfg Config
	// slots is indexed as abi.Slots.
	slots slotValues
}

// slotValues are one profile's policies.<slot>.{module,sha256} values,
// indexed as abi.Slots.
type slotValues [len(abi.Slots)]Module

// bind makes a key whose values parse as V, pass check (nil: any value) and
// are stored, converted by conv, in the field that at returns.
func bind[V, F any](name string, kind kind, def V, help string,
	parse func(any) (V, error), check func(V) error, conv func(V) F, at func(*target) *F) key {
	return key{name: name, kind: kind, def: def, help: help,
		set: func(raw any) (func(*target), error) {
			v, err := parse(raw)
			if err == nil && check != nil {
				err = check(v)
			}
			if err != nil {
				return nil, err
			}
			return func(t *target) { *at(t) = conv(v) }, nil
		},
	}
}

// inConfig selects a field of the target's Config.
func inConfig[F any](field func(*Config) *F) func(*target) *F {
	return func(t *target) *F { return field(&t.cfg) }
}

func same[V any](v V) V { return v }

func boolKey(name string, def bool, field func(*Config) *bool, help string) key {
	return bind(name, kindBool, def, help, toBool, nil, same[bool], inConfig(field))
}

// stringKey makes a string key; check nil allows any string.
func stringKey(name, def string, check func(string) error, field func(*Config) *string, help string) key {
	return bind(name, kindString, def, help, toString, check, same[string], inConfig(field))
}

// intKey makes an integer key allowing lo to hi. The bounds have the
// field's type, so a range the field cannot hold does not compile, and the
// checked value always fits the field.
func intKey[F int | int32 | uint32](name string, def, lo, hi F, field func(*Config) *F, help string) key {
	return bind(name, kindInt, int64(def), help, toInt, intRange(int64(lo), int64(hi)),
		func(n int64) F { return F(n) }, inConfig(field))
}

// floatKey makes a number key allowing more than lo, up to hi.
func floatKey[F float32 | float64](name string, def F, lo, hi float64, field func(*Config) *F, help string) key {
	return bind(name, kindFloat, float64(def), help, toFloat, floatAbove(lo, hi),
		func(f float64) F { return F(f) }, inConfig(field))
}

// durationKey makes a duration key allowing lo to hi.
func durationKey(name string, def, lo, hi time.Duration, field func(*Config) *time.Duration, help string) key {
	return bind(name, kindDuration, def, help, toDuration, durationRange(lo, hi), same[time.Duration], inConfig(field))
}

// levelKey makes a key of a log level: debug, info, warn or error (as
// slog.Level's UnmarshalText reads them, in any case).
func levelKey(name, def string, field func(*Config) *slog.Level, help string) key {
	return bind(name, kindString, def, help, toString, checkLevel, parseLevel, inConfig(field))
}

func checkLevel(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("%q: want debug, info, warn or error", s)
	}
	return nil
}

// parseLevel converts a level that checkLevel allowed.
func parseLevel(s string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s))
	return l
}

func checkLogFormat(s string) error {
	if s != LogFormatText && s != LogFormatJSON {
		return fmt.Errorf("%q: want %s or %s", s, LogFormatText, LogFormatJSON)
	}
	return nil
}

// slotKey makes a key of policies.<slot>, stored in the target's slots.
func slotKey(name string, check func(string) error, field func(*target) *string, help string) key {
	return bind(name, kindString, "", help, toString, check, same[string], field)
}

// policyFields are the keys of one slot under policies.<slot>: the
// placement slots also have a failurePolicy.
func policyFields(s abi.Slot) []string {
	if s.Placement() {
		return []string{"module", "sha256", "failurePolicy"}
	}
	return []string{"module", "sha256"}
}

// moduleHelp is the help of policies.<slot>.module.
func moduleHelp(s abi.Slot) string {
	if s.Placement() {
		return "file of the " + s.String() + " policy module (empty: no " + s.String() + " policy, the " + s.String() +
			" plugin does nothing; there is no built-in one to run natively)"
	}
	return "file of the " + s.String() + " policy module (empty: the built-in policy as Wasm; " + NativeModule +
		": the built-in policy compiled into the binary, called without the sandbox (no memory limit, deadline or circuit breaker); a file named native is ./native)"
}

// checkFailurePolicy allows a placement slot's failure policies.
func checkFailurePolicy(v string) error {
	switch v {
	case "", "Fail", "Ignore":
		return nil
	}
	return fmt.Errorf("%q: use Fail (a failing module rejects the nodes for the attempt) or Ignore (a failing module is skipped)", v)
}

// keys is every fixed key the configuration knows, in documentation order.
// The keys of additional profiles repeat the policies.* keys under
// profiles.<name>. (see profileKeyPattern).
var keys = func() []key {
	ks := []key{
		stringKey("schedulerName", "wasmsched", checkSchedulerName, func(c *Config) *string { return &c.SchedulerName },
			"scheduler name of the default profile: the pods whose spec.schedulerName it is are scheduled with the policies.* slots"),

		floatKey("client.qps", 50, 0, 1e6, func(c *Config) *float32 { return &c.Client.QPS },
			"queries per second to the API server (kube-scheduler's default)"),
		intKey("client.burst", 100, 1, 1e6, func(c *Config) *int { return &c.Client.Burst },
			"burst of queries to the API server above client.qps (kube-scheduler's default)"),
		stringKey("client.kubeconfig", "", nil, func(c *Config) *string { return &c.Client.Kubeconfig },
			"kubeconfig file of the cluster (empty: the in-cluster service account); the run command's -kubeconfig flag wins over it"),
		stringKey("client.contentType", "", checkContentType, func(c *Config) *string { return &c.Client.ContentType },
			"content type of requests to the API server, "+jsonContentType+" or "+protobufContentType+" (empty: client-go's default, protobuf for built-in kinds and JSON for custom resources; a KubeSchedulerConfiguration defaults it to protobuf, as kube-scheduler)"),
		stringKey("client.acceptContentTypes", "", checkAcceptContentTypes, func(c *Config) *string { return &c.Client.AcceptContentTypes },
			"Accept header of requests to the API server: content types separated by commas (empty: client-go's)"),

		durationKey("queue.initialBackoff", time.Second, time.Millisecond, 24*time.Hour, func(c *Config) *time.Duration { return &c.Queue.InitialBackoff },
			"backoff of a pod after its first failed attempt; it doubles per attempt"),
		durationKey("queue.maxBackoff", 10*time.Second, time.Millisecond, 24*time.Hour, func(c *Config) *time.Duration { return &c.Queue.MaxBackoff },
			"longest backoff of a pod (at least queue.initialBackoff)"),
		durationKey("queue.maxInUnschedulable", 5*time.Minute, time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.Queue.MaxInUnschedulable },
			"how long an unschedulable pod waits for a cluster event before it is retried anyway (podMaxInUnschedulablePodsDuration)"),
		boolKey("queue.popFromBackoffQ", true, func(c *Config) *bool { return &c.Queue.PopFromBackoffQ },
			"KEP-5142: order backoffQ in 1s windows and pop from it when activeQ is empty"),

		intKey("scheduling.percentageOfNodesToScore", 0, 0, 100, func(c *Config) *int32 { return &c.Scheduling.PercentageOfNodesToScore },
			"share of the nodes to find feasible before scoring, in percent (0: adaptive, as upstream)"),
		intKey("scheduling.parallelism", 16, 1, 1024, func(c *Config) *int { return &c.Scheduling.Parallelism },
			"most goroutines filtering a pod's nodes (no more than GOMAXPROCS) and dry-running its preemption (upstream's default)"),
		durationKey("scheduling.assumedPodTTL", 30*time.Second, 0, time.Hour, func(c *Config) *time.Duration { return &c.Scheduling.AssumedPodTTL },
			"how long an assumed pod whose binding finished waits for its informer update before it expires (0: never)"),

		boolKey("leaderElection.enabled", false, func(c *Config) *bool { return &c.LeaderElection.Enabled },
			"run only while holding the Lease, so that one of several replicas schedules"),
		stringKey("leaderElection.namespace", "kube-system", dnsName("namespace", validation.IsDNS1123Label), func(c *Config) *string { return &c.LeaderElection.Namespace },
			"namespace of the leader-election Lease"),
		stringKey("leaderElection.name", "wasmsched", dnsName("Lease name", validation.IsDNS1123Subdomain), func(c *Config) *string { return &c.LeaderElection.Name },
			"name of the leader-election Lease"),
		durationKey("leaderElection.leaseDuration", 15*time.Second, time.Second, time.Hour, func(c *Config) *time.Duration { return &c.LeaderElection.LeaseDuration },
			"how long non-leaders wait after the last renewal before taking the Lease (more than leaderElection.renewDeadline)"),
		durationKey("leaderElection.renewDeadline", 10*time.Second, time.Second, time.Hour, func(c *Config) *time.Duration { return &c.LeaderElection.RenewDeadline },
			"how long the leader keeps retrying a renewal before it stops scheduling (more than 1.2 x leaderElection.retryPeriod)"),
		durationKey("leaderElection.retryPeriod", 2*time.Second, 100*time.Millisecond, time.Hour, func(c *Config) *time.Duration { return &c.LeaderElection.RetryPeriod },
			"time between attempts to take or renew the Lease"),

		stringKey("metrics.bindAddress", "127.0.0.1:10351", hostPort("10351"), func(c *Config) *string { return &c.Metrics.BindAddress },
			"host:port of the plain-HTTP listener, without authentication, serving /metrics, /healthz, /livez, /readyz and /policies, for development and tests (empty: no listener)"),
		boolKey("metrics.profiling", false, func(c *Config) *bool { return &c.Metrics.Profiling },
			"also serve Go's profiles under /debug/pprof/: on secureServing.bindAddress behind authorization, and on metrics.bindAddress without (keep that one on loopback)"),
		boolKey("metrics.contentionProfiling", false, func(c *Config) *bool { return &c.Metrics.ContentionProfiling },
			"with metrics.profiling, also record where goroutines block, for /debug/pprof/block (kube-scheduler's enableContentionProfiling; it costs some speed)"),

		stringKey("secureServing.bindAddress", "0.0.0.0:10359", hostPort("10359"), func(c *Config) *string { return &c.SecureServing.BindAddress },
			"host:port of the HTTPS listener (kube-scheduler's secure port): /metrics, /policies and /debug/pprof/ for callers the API server authenticates (TokenReview, client certificates) and authorizes (SubjectAccessReview on the non-resource URL), /healthz, /livez and /readyz for anyone (empty: no listener)"),
		stringKey("secureServing.certFile", "", nil, func(c *Config) *string { return &c.SecureServing.CertFile },
			"PEM serving certificate (chain) of secureServing.bindAddress, with secureServing.keyFile; reloaded when it changes (empty, with no keyFile: a self-signed certificate made at start)"),
		stringKey("secureServing.keyFile", "", nil, func(c *Config) *string { return &c.SecureServing.KeyFile },
			"PEM private key of secureServing.certFile"),

		stringKey("logging.format", LogFormatText, checkLogFormat, func(c *Config) *string { return &c.Logging.Format },
			"format of the log on stderr, the Kubernetes libraries' lines (client-go, delegated authentication) included: "+LogFormatText+
				" (key=value lines) or "+LogFormatJSON+" (one object a line with component-base's fields: ts in Unix milliseconds, caller, msg, v for info lines' verbosity, err, and the structured fields such as pod and node; plus level); the run command's -logging-format flag"),
		levelKey("logging.level", "info", func(c *Config) *slog.Level { return &c.Logging.Level },
			"lowest level logged: debug, info, warn or error; the run command's -log-level flag"),
		intKey("logging.verbosity", 0, 0, 10, func(c *Config) *int { return &c.Logging.Verbosity },
			"verbosity of the Kubernetes libraries' log (klog's -v, as kube-scheduler's -v): their V(n) messages with n up to this are logged, V(0) to V(3) at info and V(4) and above at debug, so above 3 it needs logging.level debug; the run command's -v flag"),

		intKey("sandbox.memoryPages", 256, 2, maxMemoryPages, func(c *Config) *uint32 { return &c.Sandbox.MemoryPages },
			"memory limit of a policy module, in 64 KiB pages"),
		durationKey("sandbox.deadline", 100*time.Millisecond, time.Millisecond, time.Minute, func(c *Config) *time.Duration { return &c.Sandbox.Deadline },
			"deadline of one call into a policy module"),
		// The default is host/wasm's DefaultPoolSize (host/app's
		// TestConfigDefaultsMatchRuntime holds every sandbox default to the
		// runtime's).
		intKey("sandbox.poolSize", 4, 0, 1024, func(c *Config) *int { return &c.Sandbox.PoolSize },
			"idle instances kept per policy module for the next call; a call that finds none instantiates the module, and an instance released to a full pool is closed (0: a new instance for every call)"),
		durationKey("sandbox.watchdogTick", time.Millisecond, 100*time.Microsecond, time.Second, func(c *Config) *time.Duration { return &c.Sandbox.WatchdogTick },
			"the finest resolution of the watchdog that stops calls past their deadline: it looks for them every tenth of the shortest deadline of the modules loaded, or every tick if that is longer, so a call is stopped within its deadline plus two such periods"),
		intKey("sandbox.breakerFailures", 5, 0, 1000, func(c *Config) *int { return &c.Sandbox.BreakerFailures },
			"failed calls within sandbox.breakerWindow that open a slot's circuit breaker: the native default then answers, without calling the module, until a new module is loaded (0: no breaker)"),
		durationKey("sandbox.breakerWindow", 10*time.Second, time.Second, time.Hour, func(c *Config) *time.Duration { return &c.Sandbox.BreakerWindow },
			"window in which sandbox.breakerFailures failed calls open a slot's circuit breaker"),
		stringKey("sandbox.compilationCacheDir", "", nil, func(c *Config) *string { return &c.Sandbox.CompilationCacheDir },
			"directory that keeps the compiled machine code of policy modules across restarts (wazero's file cache; created if missing), so that a restart skips compiling them: put it on a volume that outlives the process; only the scheduler may write there, since the code in it is run as found (empty: in memory only; a change needs a restart)"),

		boolKey("policies.adminEndpoint", false, func(c *Config) *bool { return &c.AdminEndpoint },
			"serve POST /policies/{slot} on the metrics listener, which loads a new module into a slot of a running scheduler; it has no authentication, so it is refused unless metrics.bindAddress is a loopback address (reach it with kubectl port-forward)"),

		boolKey("policyAPI.enabled", true, func(c *Config) *bool { return &c.PolicyAPI.Enabled },
			"watch SchedulingPolicy objects (wasmsched.io/v1alpha1) and load their modules, on every replica; an object's module holds its slot over the configuration's (off, or the CRD not installed: the configuration's modules only)"),
		stringKey("policyAPI.namespace", "wasmsched", dnsName("namespace", validation.IsDNS1123Label), func(c *Config) *string { return &c.PolicyAPI.Namespace },
			"namespace of the ConfigMaps that a SchedulingPolicy's spec.module.configMapRef names (the scheduler's own)"),
		durationKey("policyAPI.statusInterval", 30*time.Second, time.Second, time.Hour, func(c *Config) *time.Duration { return &c.PolicyAPI.StatusInterval },
			"how often a replica refreshes its entry in each SchedulingPolicy's status.replicas (breaker, fallbacks); entries not refreshed for ten intervals are pruned"),
	}
	for i, s := range abi.Slots {
		ks = append(ks,
			slotKey("policies."+s.String()+".module", nil, func(t *target) *string { return &t.slots[i].Path }, moduleHelp(s)),
			slotKey("policies."+s.String()+".sha256", checkSHA256, func(t *target) *string { return &t.slots[i].SHA256 },
				"sha256 the "+s.String()+" module file must have (empty: not pinned; not allowed with module "+NativeModule+")"),
		)
		if s.Placement() {
			ks = append(ks, slotKey("policies."+s.String()+".failurePolicy", checkFailurePolicy, func(t *target) *string { return &t.slots[i].FailurePolicy },
				"what the "+s.String()+" slot does when its module fails (traps, overruns its deadline, answers garbage, breaker open): Fail "+
					"(rejects the nodes for this attempt, so the pod retries with backoff and never runs where the policy did not approve) or Ignore (the slot is skipped); empty: "+
					map[bool]string{true: "Fail", false: "Ignore"}[s == abi.SlotFilter]))
		}
	}
	return ks
}()

func lookup(name string) (key, bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

func isKnown(name string) bool {
	_, ok := lookup(name)
	return ok
}

// isSection reports whether name is a proper prefix of some key, like
// "sandbox" or "policies.queueSort".
func isSection(name string) bool {
	for _, k := range keys {
		if strings.HasPrefix(k.name, name+".") {
			return true
		}
	}
	return false
}

// KeyNames lists every fixed key, in documentation order. The keys of
// additional profiles, profiles.<name>.policies.<slot>.{module,sha256}, are
// not listed (Help describes them).
func KeyNames() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// EnvName is the environment variable of a key: sandbox.memoryPages is
// WASMSCHED_SANDBOX_MEMORY_PAGES and scheduling.assumedPodTTL is
// WASMSCHED_SCHEDULING_ASSUMED_POD_TTL (a run of capitals is one word).
func EnvName(name string) string {
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			b.WriteByte('_')
		case isUpper(c):
			// A capital starts a word unless it continues a run of capitals
			// that the next letter does not end.
			startsWord := i > 0 && name[i-1] != '.' &&
				(!isUpper(name[i-1]) || (i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'))
			if startsWord {
				b.WriteByte('_')
			}
			b.WriteByte(c)
		default:
			b.WriteString(strings.ToUpper(string(c)))
		}
	}
	return b.String()
}
