// Package config loads wasmsched's configuration into plain typed structs:
// defaults, then a YAML file, then WASMSCHED_* environment variables, then
// command-line overrides, each layer replacing the one before. Every key is
// known in advance: an unknown key, a value of the wrong type or one out of
// range is an error that names the key, what was wrong and what is allowed.
//
// Only this package imports koanf; subsystems receive the typed values.
//
// # Profiles
//
// A profile is a scheduler name with its own policy slots. The top-level
// policies.<slot>.* keys are the default profile's, named by schedulerName;
// further profiles are profiles.<name>.policies.<slot>.{module,sha256},
// where <name> is a scheduler name (a DNS-1123 subdomain). A profile with no
// policy set runs the built-in policies. In YAML:
//
//	schedulerName: wasmsched
//	profiles:
//	  wasmsched-fifo:
//	    policies:
//	      queueSort: {module: /etc/wasmsched/fifo.wasm}
//	  wasmsched-native: {}
//
// Profile keys come from the file and the command line only: a scheduler
// name may contain '-' and '.', which an environment variable name cannot
// carry unambiguously, so a WASMSCHED_PROFILES_* variable is an error. On
// the command line the name is everything between "profiles." and the last
// three segments (policies.<slot>.<field>), so names with dots work there too.
//
// # Native policies
//
// A slot's module is a file, empty for the built-in reference policy as the
// Wasm module embedded in the binary, or the word native for that same
// reference policy compiled into the binary and called directly, without
// the sandbox (no memory limit, deadline, fallback or circuit breaker):
//
//	policies:
//	  queueSort: {module: native}
//	  queueingHint: {module: ./native}   # a file named native
//
// A native policy has no file, so it cannot be pinned: setting sha256 with
// module native is an error. Native mode exists to measure the cost of the
// sandbox against the same logic (docs/RATIONALE.md) and as an escape hatch.
//
// # Notes
//
//   - The leader-election durations are checked as client-go's
//     leaderelection.NewLeaderElector checks them, whether or not leader
//     election is enabled, so that turning it on cannot fail at run time.
//   - scheduling.assumedPodTTL 0 means assumed pods never expire, as in
//     upstream's scheduler cache.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"k8s.io/apimachinery/pkg/util/validation"

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
	Sandbox        Sandbox
	// Policies holds the default profile's slots whose module comes from a
	// file or is native; a slot not listed uses the Wasm module built into
	// the binary.
	Policies map[abi.Slot]Module
	// AdminEndpoint serves POST /policies/{slot} on the metrics listener, to
	// load a new module into a slot while the scheduler runs
	// (policies.adminEndpoint).
	AdminEndpoint bool
	// Profiles are every scheduler name served. Profiles[0] is the default
	// profile (SchedulerName and Policies); the others follow sorted by name.
	Profiles []Profile
}

// Client configures the connection to the API server.
type Client struct {
	// QPS and Burst rate-limit the client (client-go's rest.Config fields).
	QPS   float32
	Burst int
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
	// Parallelism bounds the goroutines filtering and scoring nodes.
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

// Metrics configures the HTTP listener of /metrics, /healthz and /readyz.
type Metrics struct {
	// BindAddress is host:port; empty disables the listener.
	BindAddress string
	// Profiling serves net/http/pprof under /debug/pprof/ on the listener,
	// as kube-scheduler's enableProfiling does. Off by default: the listener
	// has no authentication.
	Profiling bool
}

// Sandbox are the limits every policy module runs under.
type Sandbox struct {
	// MemoryPages caps a module's linear memory in 64 KiB pages.
	MemoryPages uint32
	// Deadline bounds one call into a module.
	Deadline time.Duration
	// PoolSize is how many idle instances of a module are kept for reuse.
	PoolSize int
	// WatchdogTick is how often the watchdog checks for overrunning calls; a
	// call is stopped within Deadline plus two ticks.
	WatchdogTick time.Duration
	// BreakerFailures failed calls within BreakerWindow open a slot's
	// circuit breaker: the slot then answers with its native default, without
	// calling its module, until a new module is loaded. 0 disables it.
	BreakerFailures int
	BreakerWindow   time.Duration
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
}

// NativeModule is the value of policies.<slot>.module that selects the
// native reference policy; a file of that name is written ./native.
const NativeModule = "native"

// Profile is one scheduler name and its policy slots.
type Profile struct {
	SchedulerName string
	// Policies holds the slots whose module comes from a file or is native;
	// a slot not listed uses the built-in Wasm module. Never nil.
	Policies map[abi.Slot]Module
}

// EnvPrefix starts every environment variable the configuration reads.
const EnvPrefix = "WASMSCHED_"

// maxMemoryPages matches the runtime's bound: an output pointer must stay
// below 2 GiB.
const maxMemoryPages = 32768

// leaderElectionJitter is client-go's leaderelection.JitterFactor: a
// renewDeadline must exceed retryPeriod times it.
const leaderElectionJitter = 1.2

type kind int

const (
	kindInt kind = iota
	kindDuration
	kindString
	kindBool
	kindFloat
)

// key describes one configuration key.
type key struct {
	name  string
	kind  kind
	def   any
	help  string
	check func(v any) error // nil: any value of the kind
}

func intRange(lo, hi int64) func(any) error {
	return func(v any) error {
		if n := v.(int64); n < lo || n > hi {
			return fmt.Errorf("%d is out of range: allowed %d to %d", n, lo, hi)
		}
		return nil
	}
}

// floatAbove allows more than lo, up to hi.
func floatAbove(lo, hi float64) func(any) error {
	return func(v any) error {
		if f := v.(float64); f <= lo || f > hi {
			return fmt.Errorf("%s is out of range: allowed more than %s, up to %s", fmtFloat(f), fmtFloat(lo), fmtFloat(hi))
		}
		return nil
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func durationRange(lo, hi time.Duration) func(any) error {
	return func(v any) error {
		if d := v.(time.Duration); d < lo || d > hi {
			return fmt.Errorf("%v is out of range: allowed %v to %v", d, lo, hi)
		}
		return nil
	}
}

func checkSHA256(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 || strings.ToLower(s) != s {
		return fmt.Errorf("%q is not a sha256: want 64 lowercase hex digits (sha256sum FILE prints it)", s)
	}
	return nil
}

// dnsName checks a name as Kubernetes checks a name of its kind:
// validation.IsDNS1123Subdomain or IsDNS1123Label.
func dnsName(what string, is func(string) []string) func(any) error {
	return func(v any) error {
		s := v.(string)
		if s == "" {
			return fmt.Errorf("empty: set a %s", what)
		}
		if msgs := is(s); len(msgs) > 0 {
			return fmt.Errorf("%q is not a valid %s: %s", s, what, strings.Join(msgs, "; "))
		}
		return nil
	}
}

var checkSchedulerName = dnsName("scheduler name (pods name it in spec.schedulerName)", validation.IsDNS1123Subdomain)

// checkHostPort allows "" (disabled) or host:port with a numeric port and a
// host that is empty (every interface), an IP address or a host name.
func checkHostPort(v any) error {
	s := v.(string)
	if s == "" {
		return nil
	}
	const allowed = "write it like 127.0.0.1:10351, 0.0.0.0:10351, [::]:10351 or :10351, or leave it empty to disable the listener"
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %s", s, allowed)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535: %s", s, port, allowed)
	}
	if host != "" && net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
		return fmt.Errorf("%q: host %q is neither an IP address nor a host name: %s", s, host, allowed)
	}
	return nil
}

// policyFields are the keys of one slot under policies.<slot>.
var policyFields = []string{"module", "sha256"}

// keys is every fixed key the configuration knows, in documentation order.
// The keys of additional profiles repeat the policies.* keys under
// profiles.<name>. (see profileKeyPattern).
var keys = func() []key {
	ks := []key{
		{name: "schedulerName", kind: kindString, def: "wasmsched", check: checkSchedulerName,
			help: "scheduler name of the default profile: the pods whose spec.schedulerName it is are scheduled with the policies.* slots"},

		{name: "client.qps", kind: kindFloat, def: float64(50), check: floatAbove(0, 1e6),
			help: "queries per second to the API server (kube-scheduler's default)"},
		{name: "client.burst", kind: kindInt, def: int64(100), check: intRange(1, 1e6),
			help: "burst of queries to the API server above client.qps (kube-scheduler's default)"},

		{name: "queue.initialBackoff", kind: kindDuration, def: time.Second, check: durationRange(time.Millisecond, 24*time.Hour),
			help: "backoff of a pod after its first failed attempt; it doubles per attempt"},
		{name: "queue.maxBackoff", kind: kindDuration, def: 10 * time.Second, check: durationRange(time.Millisecond, 24*time.Hour),
			help: "longest backoff of a pod (at least queue.initialBackoff)"},
		{name: "queue.maxInUnschedulable", kind: kindDuration, def: 5 * time.Minute, check: durationRange(time.Second, 24*time.Hour),
			help: "how long an unschedulable pod waits for a cluster event before it is retried anyway (podMaxInUnschedulablePodsDuration)"},
		{name: "queue.popFromBackoffQ", kind: kindBool, def: true,
			help: "KEP-5142: order backoffQ in 1s windows and pop from it when activeQ is empty"},

		{name: "scheduling.percentageOfNodesToScore", kind: kindInt, def: int64(0), check: intRange(0, 100),
			help: "share of the nodes to find feasible before scoring, in percent (0: adaptive, as upstream)"},
		{name: "scheduling.parallelism", kind: kindInt, def: int64(16), check: intRange(1, 1024),
			help: "goroutines filtering and scoring nodes (upstream's default)"},
		{name: "scheduling.assumedPodTTL", kind: kindDuration, def: 30 * time.Second, check: durationRange(0, time.Hour),
			help: "how long an assumed pod whose binding finished waits for its informer update before it expires (0: never)"},

		{name: "leaderElection.enabled", kind: kindBool, def: false,
			help: "run only while holding the Lease, so that one of several replicas schedules"},
		{name: "leaderElection.namespace", kind: kindString, def: "kube-system", check: dnsName("namespace", validation.IsDNS1123Label),
			help: "namespace of the leader-election Lease"},
		{name: "leaderElection.name", kind: kindString, def: "wasmsched", check: dnsName("Lease name", validation.IsDNS1123Subdomain),
			help: "name of the leader-election Lease"},
		{name: "leaderElection.leaseDuration", kind: kindDuration, def: 15 * time.Second, check: durationRange(time.Second, time.Hour),
			help: "how long non-leaders wait after the last renewal before taking the Lease (more than leaderElection.renewDeadline)"},
		{name: "leaderElection.renewDeadline", kind: kindDuration, def: 10 * time.Second, check: durationRange(time.Second, time.Hour),
			help: "how long the leader keeps retrying a renewal before it stops scheduling (more than 1.2 x leaderElection.retryPeriod)"},
		{name: "leaderElection.retryPeriod", kind: kindDuration, def: 2 * time.Second, check: durationRange(100*time.Millisecond, time.Hour),
			help: "time between attempts to take or renew the Lease"},

		{name: "metrics.bindAddress", kind: kindString, def: "127.0.0.1:10351", check: checkHostPort,
			help: "host:port serving /metrics, /healthz and /readyz (empty: no listener)"},
		{name: "metrics.profiling", kind: kindBool, def: false,
			help: "also serve Go's profiles under /debug/pprof/ on metrics.bindAddress (the listener has no authentication: keep it on loopback)"},

		{name: "sandbox.memoryPages", kind: kindInt, def: int64(256), check: intRange(2, maxMemoryPages),
			help: "memory limit of a policy module, in 64 KiB pages"},
		{name: "sandbox.deadline", kind: kindDuration, def: 100 * time.Millisecond, check: durationRange(time.Millisecond, time.Minute),
			help: "deadline of one call into a policy module"},
		{name: "sandbox.poolSize", kind: kindInt, def: int64(4), check: intRange(0, 1024),
			help: "idle instances kept per policy module"},
		{name: "sandbox.watchdogTick", kind: kindDuration, def: time.Millisecond, check: durationRange(100*time.Microsecond, time.Second),
			help: "how often the watchdog looks for calls past their deadline"},
		{name: "sandbox.breakerFailures", kind: kindInt, def: int64(5), check: intRange(0, 1000),
			help: "failed calls within sandbox.breakerWindow that open a slot's circuit breaker: the native default then answers, without calling the module, until a new module is loaded (0: no breaker)"},
		{name: "sandbox.breakerWindow", kind: kindDuration, def: 10 * time.Second, check: durationRange(time.Second, time.Hour),
			help: "window in which sandbox.breakerFailures failed calls open a slot's circuit breaker"},

		{name: "policies.adminEndpoint", kind: kindBool, def: false,
			help: "serve POST /policies/{slot} on the metrics listener, which loads a new module into a slot of a running scheduler; it has no authentication, so it is refused unless metrics.bindAddress is a loopback address (reach it with kubectl port-forward)"},
	}
	for _, s := range abi.Slots {
		ks = append(ks,
			key{name: "policies." + s.String() + ".module", kind: kindString, def: "",
				help: "file of the " + s.String() + " policy module (empty: the built-in policy as Wasm; " + NativeModule +
					": the built-in policy compiled into the binary, called without the sandbox (no memory limit, deadline or circuit breaker); a file named native is ./native)"},
			key{name: "policies." + s.String() + ".sha256", kind: kindString, def: "", check: checkSHA256,
				help: "sha256 the " + s.String() + " module file must have (empty: not pinned; not allowed with module " + NativeModule + ")"},
		)
	}
	return ks
}()

// profilesKey is the one key whose sub-keys are not fixed.
const profilesKey = "profiles"

// profileKeyPattern names the keys of an additional profile.
const profileKeyPattern = profilesKey + ".<name>.policies.<slot>.{module,sha256}"

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

// isEmpty reports whether a YAML value is null or an empty mapping.
func isEmpty(v any) bool {
	m, ok := v.(map[string]any)
	return v == nil || ok && len(m) == 0
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

// Source says where configuration comes from besides the defaults.
type Source struct {
	// File is a YAML file; empty for none.
	File string
	// Environ is the environment (os.Environ() in the command); only
	// WASMSCHED_* variables are read.
	Environ []string
	// Overrides are key=value settings from the command line, applied last.
	// Profile keys (profiles.<name>.policies.<slot>.module) are allowed.
	Overrides map[string]string
}

// Load reads the layers of src over the defaults and validates the result.
func Load(src Source) (*Config, error) {
	k := koanf.New(".")
	defaults := map[string]any{}
	for _, key := range keys {
		defaults[key.name] = key.def
	}
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return nil, err
	}
	var errs []error
	profiles := profileValues{}
	if src.File != "" {
		if _, err := os.Stat(src.File); err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(src.File), yaml.Parser()); err != nil {
			return nil, fmt.Errorf("config file %s: not valid YAML: %w", src.File, err)
		}
		// Profile names may contain the key delimiter, so the profiles
		// subtree is read as the YAML nests it rather than from flattened keys.
		if raw, ok := fk.Raw()[profilesKey]; ok {
			errs = append(errs, profiles.addFile(raw, "config file "+src.File)...)
			fk.Delete(profilesKey)
		}
		// A null or empty mapping sets nothing: `policies: {}` or a key
		// with no value keeps the defaults below it.
		for _, name := range fk.Keys() {
			if v := fk.Get(name); v == nil && isKnown(name) || isEmpty(v) && isSection(name) {
				fk.Delete(name)
			}
		}
		errs = append(errs, unknownKeys(fk.Keys(), "config file "+src.File)...)
		if err := k.Merge(fk); err != nil {
			return nil, err
		}
	}
	envKeys := map[string]string{}
	for _, key := range keys {
		envKeys[EnvName(key.name)] = key.name
	}
	profilesEnv := EnvName(profilesKey) + "_"
	ek := koanf.New(".")
	if err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return src.Environ },
		TransformFunc: func(name, value string) (string, any) {
			if key, ok := envKeys[name]; ok {
				return key, value
			}
			if strings.HasPrefix(name, profilesEnv) {
				errs = append(errs, fmt.Errorf("environment variable %s: profiles cannot be set from the environment "+
					"(a scheduler name may contain '-' and '.', which a variable name cannot carry): set %s in the config file or on the command line",
					name, profileKeyPattern))
				return "", nil
			}
			errs = append(errs, fmt.Errorf("environment variable %s: unknown; known variables: %s",
				name, strings.Join(slices.Sorted(maps.Keys(envKeys)), ", ")))
			return "", nil
		},
	}), nil); err != nil {
		return nil, err
	}
	if err := k.Merge(ek); err != nil {
		return nil, err
	}
	if len(src.Overrides) > 0 {
		over := map[string]any{}
		for name, v := range src.Overrides {
			if name == profilesKey || strings.HasPrefix(name, profilesKey+".") {
				if err := profiles.addOverride(name, v); err != nil {
					errs = append(errs, fmt.Errorf("command line: %w", err))
				}
				continue
			}
			over[name] = v
		}
		errs = append(errs, unknownKeys(slices.Collect(maps.Keys(over)), "command line")...)
		ok := koanf.New(".")
		if err := ok.Load(confmap.Provider(over, "."), nil); err != nil {
			return nil, err
		}
		if err := k.Merge(ok); err != nil {
			return nil, err
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return build(k, profiles)
}

func unknownKeys(names []string, where string) []error {
	var errs []error
	for _, n := range slices.Sorted(slices.Values(names)) {
		if _, ok := lookup(n); !ok {
			errs = append(errs, fmt.Errorf("%s: unknown key %q; known keys: %s, %s", where, n, strings.Join(KeyNames(), ", "), profileKeyPattern))
		}
	}
	return errs
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

// profileValues are the profile keys set by the file and the command line:
// scheduler name -> policy key (policies.<slot>.<field>) -> raw value. A
// profile present with no keys runs the built-in policies.
type profileValues map[string]map[string]any

func (p profileValues) set(name, sub string, v any) {
	if p[name] == nil {
		p[name] = map[string]any{}
	}
	if sub != "" {
		p[name][sub] = v
	}
}

// unknownProfileKey is the error for a key under profiles.<name> that is not
// policies.<slot>.<field>.
func unknownProfileKey(full string) error {
	slots := make([]string, len(abi.Slots))
	for i, s := range abi.Slots {
		slots[i] = s.String()
	}
	return fmt.Errorf("unknown key %q: a profile's keys are %s, with <slot> one of %s",
		full, profileKeyPattern, strings.Join(slots, ", "))
}

// addFile adds the profiles subtree of the YAML file.
func (p profileValues) addFile(raw any, where string) []error {
	if raw == nil {
		return nil
	}
	byName, ok := raw.(map[string]any)
	if !ok {
		return []error{fmt.Errorf("%s: %s: want a mapping from scheduler name to profile, got %v", where, profilesKey, raw)}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		p.set(name, "", nil)
		var walk func(sub string, v any)
		walk = func(sub string, v any) {
			full := profilesKey + "." + name
			if sub != "" {
				full += "." + sub
			}
			switch m, isMap := v.(map[string]any); {
			case isMap && len(m) > 0:
				for _, kk := range slices.Sorted(maps.Keys(m)) {
					walk(strings.TrimPrefix(sub+"."+kk, "."), m[kk])
				}
			case isProfileField(sub):
				if v != nil { // a key with no value sets nothing
					p.set(name, sub, v)
				}
			case isPolicyPrefix(sub) && isEmpty(v):
				// An empty or null profile, policies or slot sets nothing.
			case isPolicyPrefix(sub):
				errs = append(errs, fmt.Errorf("%s: %s: %v is not a mapping: want %s", where, full, v, profileKeyPattern))
			default:
				errs = append(errs, fmt.Errorf("%s: %w", where, unknownProfileKey(full)))
			}
		}
		walk("", byName[name])
	}
	return errs
}

// isProfileField reports whether sub is a key a profile repeats,
// policies.<slot>.<field> (not policies.adminEndpoint, which is global).
func isProfileField(sub string) bool { return slices.Contains(profileFieldKeys(), sub) }

// isPolicyPrefix reports whether sub is "", "policies" or "policies.<slot>".
func isPolicyPrefix(sub string) bool {
	if sub == "" || sub == "policies" {
		return true
	}
	slot, ok := strings.CutPrefix(sub, "policies.")
	if !ok {
		return false
	}
	_, ok = abi.ParseSlot(slot)
	return ok
}

// addOverride adds one command-line key profiles.<name>.policies.<slot>.<field>.
// The name is everything between "profiles." and the last three segments,
// so it may contain dots.
func (p profileValues) addOverride(full string, v string) error {
	segs := strings.Split(strings.TrimPrefix(full, profilesKey+"."), ".")
	if full == profilesKey || len(segs) < 4 || segs[len(segs)-3] != "policies" {
		return unknownProfileKey(full)
	}
	name := strings.Join(segs[:len(segs)-3], ".")
	sub := strings.Join(segs[len(segs)-3:], ".")
	if !isProfileField(sub) {
		return unknownProfileKey(full)
	}
	p.set(name, sub, v)
	return nil
}

// build converts and validates every key.
func build(k *koanf.Koanf, profiles profileValues) (*Config, error) {
	vals := map[string]any{}
	var errs []error
	for _, key := range keys {
		v, err := convert(key, k.Get(key.name))
		if err == nil && key.check != nil {
			err = key.check(v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key.name, err))
			continue
		}
		vals[key.name] = v
	}
	// Profile values are checked as the policies.* key they repeat.
	profileVals := map[string]map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		pv := map[string]any{}
		for _, field := range profileFieldKeys() {
			key, _ := lookup(field)
			raw, ok := profiles[name][field]
			if !ok {
				pv[field] = key.def
				continue
			}
			v, err := convert(key, raw)
			if err == nil && key.check != nil {
				err = key.check(v)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s.%s: %w", profilesKey, name, field, err))
				continue
			}
			pv[field] = v
		}
		profileVals[name] = pv
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	str := func(name string) string { return vals[name].(string) }
	dur := func(name string) time.Duration { return vals[name].(time.Duration) }
	num := func(name string) int64 { return vals[name].(int64) }
	c := &Config{
		SchedulerName: str("schedulerName"),
		Client: Client{
			QPS:   float32(vals["client.qps"].(float64)),
			Burst: int(num("client.burst")),
		},
		Queue: Queue{
			InitialBackoff:     dur("queue.initialBackoff"),
			MaxBackoff:         dur("queue.maxBackoff"),
			MaxInUnschedulable: dur("queue.maxInUnschedulable"),
			PopFromBackoffQ:    vals["queue.popFromBackoffQ"].(bool),
		},
		Scheduling: Scheduling{
			PercentageOfNodesToScore: int32(num("scheduling.percentageOfNodesToScore")),
			Parallelism:              int(num("scheduling.parallelism")),
			AssumedPodTTL:            dur("scheduling.assumedPodTTL"),
		},
		LeaderElection: LeaderElection{
			Enabled:       vals["leaderElection.enabled"].(bool),
			Namespace:     str("leaderElection.namespace"),
			Name:          str("leaderElection.name"),
			LeaseDuration: dur("leaderElection.leaseDuration"),
			RenewDeadline: dur("leaderElection.renewDeadline"),
			RetryPeriod:   dur("leaderElection.retryPeriod"),
		},
		Metrics: Metrics{BindAddress: str("metrics.bindAddress"), Profiling: vals["metrics.profiling"].(bool)},
		Sandbox: Sandbox{
			MemoryPages:     uint32(num("sandbox.memoryPages")),
			Deadline:        dur("sandbox.deadline"),
			PoolSize:        int(num("sandbox.poolSize")),
			WatchdogTick:    dur("sandbox.watchdogTick"),
			BreakerFailures: int(num("sandbox.breakerFailures")),
			BreakerWindow:   dur("sandbox.breakerWindow"),
		},
		AdminEndpoint: vals["policies.adminEndpoint"].(bool),
	}
	errs = append(errs, crossChecks(c)...)

	var perrs []error
	c.Policies, perrs = policies("", func(name string) string { return str(name) })
	errs = append(errs, perrs...)
	c.Profiles = []Profile{{SchedulerName: c.SchedulerName, Policies: maps.Clone(c.Policies)}}
	for _, name := range slices.Sorted(maps.Keys(profileVals)) {
		full := profilesKey + "." + name
		if err := checkSchedulerName(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", full, err))
			continue
		}
		if name == c.SchedulerName {
			errs = append(errs, fmt.Errorf("%s: duplicate scheduler name %q: schedulerName already names the default profile (the policies.* keys); "+
				"rename the profile, or move its policies to the top-level policies key", full, name))
			continue
		}
		pol, perrs := policies(full+".", func(sub string) string { return profileVals[name][sub].(string) })
		errs = append(errs, perrs...)
		c.Profiles = append(c.Profiles, Profile{SchedulerName: name, Policies: pol})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// profileFieldKeys are the policies.<slot>.<field> keys, which every profile
// repeats.
func profileFieldKeys() []string {
	var out []string
	for _, s := range abi.Slots {
		for _, f := range policyFields {
			out = append(out, "policies."+s.String()+"."+f)
		}
	}
	return out
}

// policies builds one profile's slots from its policies.<slot>.* values;
// prefix is what precedes "policies." in the key names of its errors.
func policies(prefix string, get func(sub string) string) (map[abi.Slot]Module, []error) {
	out := map[abi.Slot]Module{}
	var errs []error
	for _, s := range abi.Slots {
		m := Module{Path: get("policies." + s.String() + ".module"), SHA256: get("policies." + s.String() + ".sha256")}
		switch {
		case m.Path == NativeModule && m.SHA256 != "":
			errs = append(errs, fmt.Errorf("%[1]spolicies.%[2]s.sha256: set with %[1]spolicies.%[2]s.module %[3]s, the policy compiled into the binary, which has no file to pin: "+
				"remove the sha256, or set the module to a file (a file named %[3]s is ./%[3]s)", prefix, s, NativeModule))
		case m.Path == NativeModule:
			out[s] = Module{Native: true}
		case m.Path != "":
			out[s] = m
		case m.SHA256 != "":
			errs = append(errs, fmt.Errorf("%[1]spolicies.%[2]s.sha256: set without %[1]spolicies.%[2]s.module: pin a module file or remove the sha256", prefix, s))
		}
	}
	return out, errs
}

// crossChecks are the checks that involve more than one key; each error
// names every key involved.
func crossChecks(c *Config) []error {
	var errs []error
	if c.Sandbox.WatchdogTick*2 > c.Sandbox.Deadline {
		errs = append(errs, fmt.Errorf("sandbox.watchdogTick: %v is more than half of sandbox.deadline (%v): a call could overrun its deadline by more than the deadline itself; lower the tick or raise the deadline",
			c.Sandbox.WatchdogTick, c.Sandbox.Deadline))
	}
	if q := c.Queue; q.MaxBackoff < q.InitialBackoff {
		errs = append(errs, fmt.Errorf("queue.maxBackoff: %v is less than queue.initialBackoff (%v): set queue.maxBackoff to at least queue.initialBackoff",
			q.MaxBackoff, q.InitialBackoff))
	}
	if c.AdminEndpoint && !isLoopback(c.Metrics.BindAddress) {
		errs = append(errs, fmt.Errorf("policies.adminEndpoint: the endpoint that swaps policy modules has no authentication, and metrics.bindAddress %q is not a loopback address, so any pod that can reach it could change scheduling policy; "+
			"set metrics.bindAddress to 127.0.0.1:PORT (and use kubectl port-forward to reach it) or turn policies.adminEndpoint off",
			c.Metrics.BindAddress))
	}
	// As client-go's leaderelection.NewLeaderElector.
	le := c.LeaderElection
	if le.LeaseDuration <= le.RenewDeadline {
		errs = append(errs, fmt.Errorf("leaderElection.leaseDuration: %v is not more than leaderElection.renewDeadline (%v): "+
			"a leader must give up before its Lease can pass to another replica; raise leaderElection.leaseDuration or lower leaderElection.renewDeadline",
			le.LeaseDuration, le.RenewDeadline))
	}
	if minRenew := time.Duration(leaderElectionJitter * float64(le.RetryPeriod)); le.RenewDeadline <= minRenew {
		errs = append(errs, fmt.Errorf("leaderElection.renewDeadline: %v is not more than %v x leaderElection.retryPeriod (%v x %v = %v): "+
			"the leader needs room for a jittered retry before its deadline; raise leaderElection.renewDeadline or lower leaderElection.retryPeriod",
			le.RenewDeadline, leaderElectionJitter, leaderElectionJitter, le.RetryPeriod, minRenew))
	}
	return errs
}

// isLoopback reports whether a host:port listens on loopback only:
// localhost or a loopback IP, not an empty host (every interface).
func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// convert turns a value from any layer (YAML types or strings from the
// environment and the command line) into the key's kind.
func convert(k key, v any) (any, error) {
	switch k.kind {
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n, nil
			}
		}
		return nil, fmt.Errorf("%v is not an integer", v)
	case kindFloat:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case int:
			f = float64(x)
		case string:
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return nil, fmt.Errorf("%q is not a number: write it like 50 or 12.5", x)
			}
		default:
			return nil, fmt.Errorf("%v is not a number: write it like 50 or 12.5", v)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%v is not a finite number", v)
		}
		return f, nil
	case kindDuration:
		switch x := v.(type) {
		case time.Duration:
			return x, nil
		case string:
			if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
				return d, nil
			}
		}
		return nil, fmt.Errorf("%v is not a duration: write it like 100ms, 2s or 1m", v)
	case kindBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, fmt.Errorf("%v is not a boolean: allowed true or false", v)
	case kindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("%v is not a string", v)
	}
	return nil, fmt.Errorf("unknown kind (bug)")
}

// Help describes every key with its environment variable and default.
func Help() string {
	nameW, envW := 0, 0
	for _, k := range keys {
		nameW, envW = max(nameW, len(k.name)), max(envW, len(EnvName(k.name)))
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-*s %-*s default %v\n      %s\n", nameW, k.name, envW, EnvName(k.name), fmtDefault(k.def), k.help)
	}
	fmt.Fprintf(&b, "  %-*s %-*s default none\n      %s\n", nameW, profileKeyPattern, envW, "(file and command line only)",
		"an additional profile: pods whose spec.schedulerName is <name> are scheduled with these slots, whose values are as the policies.<slot>.* keys' (a profile with none set: the built-in policies)")
	return b.String()
}

func fmtDefault(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}
