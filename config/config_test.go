package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const pin = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// defaults is the configuration Load returns with no file, environment or
// overrides; tests change what they expect to differ.
func defaults() *Config {
	return &Config{
		SchedulerName: "wasmsched",
		Client:        Client{QPS: 50, Burst: 100},
		Queue: Queue{
			InitialBackoff:     time.Second,
			MaxBackoff:         10 * time.Second,
			MaxInUnschedulable: 5 * time.Minute,
			PopFromBackoffQ:    true,
		},
		Scheduling: Scheduling{PercentageOfNodesToScore: 0, Parallelism: 16, AssumedPodTTL: 30 * time.Second},
		LeaderElection: LeaderElection{
			Enabled:       false,
			Namespace:     "kube-system",
			Name:          "wasmsched",
			LeaseDuration: 15 * time.Second,
			RenewDeadline: 10 * time.Second,
			RetryPeriod:   2 * time.Second,
		},
		Metrics:       Metrics{BindAddress: "127.0.0.1:10351"},
		SecureServing: SecureServing{BindAddress: "0.0.0.0:10359"},
		Logging:       Logging{Format: LogFormatText, Level: slog.LevelInfo},
		Sandbox: Sandbox{MemoryPages: 256, Deadline: 100 * time.Millisecond, PoolSize: 4, WatchdogTick: time.Millisecond,
			BreakerFailures: 5, BreakerWindow: 10 * time.Second},
		Policies:      map[abi.Slot]Module{},
		AdminEndpoint: false,
		PolicyAPI:     PolicyAPI{Enabled: true, Namespace: "wasmsched", StatusInterval: 30 * time.Second},
		Profiles:      []Profile{{SchedulerName: "wasmsched", Policies: map[abi.Slot]Module{}}},
	}
}

func TestLoadLayers(t *testing.T) {
	file := writeFile(t, `
sandbox:
  memoryPages: 512
  deadline: 250ms
policies:
  queueSort:
    module: /etc/wasmsched/fifo.wasm
    sha256: `+pin+`
`)
	got, err := Load(Source{
		File:      file,
		Environ:   []string{"WASMSCHED_SANDBOX_DEADLINE=300ms", "WASMSCHED_SANDBOX_POOL_SIZE=8", "HOME=/root", "PATH=/bin"},
		Overrides: map[string]string{"sandbox.poolSize": "16", "policies.victimOrder.module": "v.wasm"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.Sandbox = Sandbox{
		MemoryPages:     512,                    // file over default
		Deadline:        300 * time.Millisecond, // env over file
		PoolSize:        16,                     // flag over env
		WatchdogTick:    time.Millisecond,       // default
		BreakerFailures: 5,
		BreakerWindow:   10 * time.Second,
	}
	want.Policies = map[abi.Slot]Module{
		abi.SlotQueueSort:   {Path: "/etc/wasmsched/fifo.wasm", SHA256: pin},
		abi.SlotVictimOrder: {Path: "v.wasm"},
	}
	want.Profiles[0].Policies = want.Policies
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	got, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaults(), got); diff != "" {
		t.Errorf("defaults (-want, +got):\n%s", diff)
	}
}

// yamlFor nests a value under a dotted key: a.b, 1 is "a:\n  b: 1\n".
func yamlFor(name, value string) string {
	var b strings.Builder
	parts := strings.Split(name, ".")
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String()
}

// TestKeyLayers sets every key of the scheduler sections in each layer in
// turn and checks the typed field: default, then file over default, env over
// file, command line over env.
func TestKeyLayers(t *testing.T) {
	cases := []struct {
		key                     string
		file, env, over         string
		get                     func(*Config) any
		def, fileV, envV, overV any
	}{
		{"schedulerName", "one", "two", "three", func(c *Config) any { return c.SchedulerName },
			"wasmsched", "one", "two", "three"},
		{"client.qps", "12.5", "20", "30.25", func(c *Config) any { return c.Client.QPS },
			float32(50), float32(12.5), float32(20), float32(30.25)},
		{"client.burst", "10", "20", "30", func(c *Config) any { return c.Client.Burst },
			100, 10, 20, 30},
		{"queue.initialBackoff", "2s", "3s", "4s", func(c *Config) any { return c.Queue.InitialBackoff },
			time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
		{"queue.maxBackoff", "20s", "30s", "1m", func(c *Config) any { return c.Queue.MaxBackoff },
			10 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute},
		{"queue.maxInUnschedulable", "1m", "2m", "90s", func(c *Config) any { return c.Queue.MaxInUnschedulable },
			5 * time.Minute, time.Minute, 2 * time.Minute, 90 * time.Second},
		{"queue.popFromBackoffQ", "false", "true", "false", func(c *Config) any { return c.Queue.PopFromBackoffQ },
			true, false, true, false},
		{"scheduling.percentageOfNodesToScore", "50", "100", "1", func(c *Config) any { return c.Scheduling.PercentageOfNodesToScore },
			int32(0), int32(50), int32(100), int32(1)},
		{"scheduling.parallelism", "1", "1024", "8", func(c *Config) any { return c.Scheduling.Parallelism },
			16, 1, 1024, 8},
		{"scheduling.assumedPodTTL", "0s", "1m", "15s", func(c *Config) any { return c.Scheduling.AssumedPodTTL },
			30 * time.Second, time.Duration(0), time.Minute, 15 * time.Second},
		{"leaderElection.enabled", "true", "false", "TRUE", func(c *Config) any { return c.LeaderElection.Enabled },
			false, true, false, true},
		{"leaderElection.namespace", "wasmsched", "sched", "default", func(c *Config) any { return c.LeaderElection.Namespace },
			"kube-system", "wasmsched", "sched", "default"},
		{"leaderElection.name", "a", "b.example", "c", func(c *Config) any { return c.LeaderElection.Name },
			"wasmsched", "a", "b.example", "c"},
		{"leaderElection.leaseDuration", "20s", "30s", "1m", func(c *Config) any { return c.LeaderElection.LeaseDuration },
			15 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute},
		{"leaderElection.renewDeadline", "11s", "12s", "13s", func(c *Config) any { return c.LeaderElection.RenewDeadline },
			10 * time.Second, 11 * time.Second, 12 * time.Second, 13 * time.Second},
		{"leaderElection.retryPeriod", "3s", "4s", "500ms", func(c *Config) any { return c.LeaderElection.RetryPeriod },
			2 * time.Second, 3 * time.Second, 4 * time.Second, 500 * time.Millisecond},
		{"metrics.bindAddress", `"0.0.0.0:10351"`, ":9000", "", func(c *Config) any { return c.Metrics.BindAddress },
			"127.0.0.1:10351", "0.0.0.0:10351", ":9000", ""},
		{"secureServing.bindAddress", `"127.0.0.1:10359"`, ":9443", "", func(c *Config) any { return c.SecureServing.BindAddress },
			"0.0.0.0:10359", "127.0.0.1:10359", ":9443", ""},
		{"sandbox.breakerFailures", "0", "1000", "3", func(c *Config) any { return c.Sandbox.BreakerFailures },
			5, 0, 1000, 3},
		{"sandbox.breakerWindow", "1s", "1h", "30s", func(c *Config) any { return c.Sandbox.BreakerWindow },
			10 * time.Second, time.Second, time.Hour, 30 * time.Second},
		{"policies.adminEndpoint", "true", "false", "true", func(c *Config) any { return c.AdminEndpoint },
			false, true, false, true},
		{"logging.format", "json", "text", "json", func(c *Config) any { return c.Logging.Format },
			"text", "json", "text", "json"},
		{"logging.level", "warn", "DEBUG", "error", func(c *Config) any { return c.Logging.Level },
			slog.LevelInfo, slog.LevelWarn, slog.LevelDebug, slog.LevelError},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			file := writeFile(t, yamlFor(c.key, c.file))
			env := []string{EnvName(c.key) + "=" + c.env}
			layers := []struct {
				name string
				src  Source
				want any
			}{
				{"default", Source{}, c.def},
				{"file", Source{File: file}, c.fileV},
				{"env over file", Source{File: file, Environ: env}, c.envV},
				{"override over env", Source{File: file, Environ: env, Overrides: map[string]string{c.key: c.over}}, c.overV},
			}
			for _, l := range layers {
				cfg, err := Load(l.src)
				if err != nil {
					t.Fatalf("%s: %v", l.name, err)
				}
				if diff := cmp.Diff(l.want, c.get(cfg)); diff != "" {
					t.Errorf("%s (-want, +got):\n%s", l.name, diff)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	over := func(kv ...string) Source {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return Source{Overrides: m}
	}
	cases := []struct {
		name string
		src  Source
		want []string // substrings of the error
	}{
		{"unknown file key", Source{File: writeFile(t, "sandbox:\n  memoryPage: 3\n")},
			[]string{`unknown key "sandbox.memoryPage"`, `did you mean "sandbox.memoryPages"?`, profileKeyPattern}},
		{"unknown env var", Source{Environ: []string{"WASMSCHED_SANDBOX_DEADLIN=1s"}},
			[]string{"WASMSCHED_SANDBOX_DEADLIN", "unknown", `did you mean "WASMSCHED_SANDBOX_DEADLINE"?`}},
		{"unknown override", over("policies.queuesort.module", "x"),
			[]string{"command line", `"policies.queuesort.module"`, `did you mean "policies.queueSort.module"?`}},
		{"out of range", over("sandbox.memoryPages", "40000"),
			[]string{"sandbox.memoryPages", "40000 is out of range", "2 to 32768"}},
		{"not an integer", Source{Environ: []string{"WASMSCHED_SANDBOX_MEMORY_PAGES=lots"}},
			[]string{"sandbox.memoryPages", "not an integer"}},
		{"bad duration", Source{File: writeFile(t, "sandbox:\n  deadline: 5 seconds\n")},
			[]string{"sandbox.deadline", "not a duration", "100ms"}},
		{"tick too coarse", over("sandbox.deadline", "10ms", "sandbox.watchdogTick", "8ms"),
			[]string{"sandbox.watchdogTick", "half of sandbox.deadline"}},
		{"breaker failures out of range", over("sandbox.breakerFailures", "1001"),
			[]string{"sandbox.breakerFailures", "1001 is out of range", "0 to 1000"}},
		{"negative breaker failures", over("sandbox.breakerFailures", "-1"),
			[]string{"sandbox.breakerFailures", "-1 is out of range", "0 to 1000"}},
		{"breaker window too short", over("sandbox.breakerWindow", "500ms"),
			[]string{"sandbox.breakerWindow", "500ms is out of range", "1s to 1h0m0s"}},
		{"breaker window too long", Source{File: writeFile(t, "sandbox:\n  breakerWindow: 2h\n")},
			[]string{"sandbox.breakerWindow", "2h0m0s is out of range", "1s to 1h0m0s"}},
		{"admin endpoint not a bool", over("policies.adminEndpoint", "yes"),
			[]string{"policies.adminEndpoint", "not a boolean", "true or false"}},
		{"admin endpoint on every interface", over("policies.adminEndpoint", "true", "metrics.bindAddress", "0.0.0.0:10351"),
			[]string{"policies.adminEndpoint", "no authentication", `metrics.bindAddress "0.0.0.0:10351" is not a loopback address`, "kubectl port-forward"}},
		{"admin endpoint with an empty host", over("policies.adminEndpoint", "true", "metrics.bindAddress", ":10351"),
			[]string{"policies.adminEndpoint", `":10351" is not a loopback address`}},
		{"admin endpoint on a pod IP", over("policies.adminEndpoint", "true", "metrics.bindAddress", "10.1.2.3:10351"),
			[]string{"policies.adminEndpoint", "not a loopback address"}},
		{"admin endpoint without a listener", over("policies.adminEndpoint", "true", "metrics.bindAddress", ""),
			[]string{"policies.adminEndpoint", "not a loopback address"}},
		{"admin endpoint in a profile", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      adminEndpoint: false\n")},
			[]string{`unknown key "profiles.p.policies.adminEndpoint"`, profileKeyPattern}},
		{"bad sha", over("policies.queueSort.module", "m.wasm", "policies.queueSort.sha256", "ABC"),
			[]string{"policies.queueSort.sha256", "64 lowercase hex"}},
		{"sha without module", over("policies.preEnqueue.sha256", pin),
			[]string{"policies.preEnqueue.sha256", "without policies.preEnqueue.module"}},
		{"sha with native", over("policies.queueingHint.module", "native", "policies.queueingHint.sha256", pin),
			[]string{"policies.queueingHint.sha256: set with policies.queueingHint.module native", "no file to pin", "remove the sha256", "./native"}},
		{"missing file", Source{File: "/nonexistent/config.yaml"}, []string{"config file", "no such file"}},
		{"not yaml", Source{File: writeFile(t, "sandbox: [unclosed\n")}, []string{"not valid YAML"}},
		{"several problems at once", over("sandbox.memoryPages", "1", "sandbox.poolSize", "-1"),
			[]string{"sandbox.memoryPages: 1 is out of range", "sandbox.poolSize: -1 is out of range"}},

		// schedulerName
		{"scheduler name uppercase", over("schedulerName", "Wasm"),
			[]string{"schedulerName", `"Wasm" is not a valid scheduler name`, "lower case alphanumeric characters, '-' or '.'"}},
		{"scheduler name empty", Source{File: writeFile(t, "schedulerName: \"\"\n")},
			[]string{"schedulerName: empty", "set a scheduler name"}},
		{"scheduler name not a string", Source{File: writeFile(t, "schedulerName: [a]\n")},
			[]string{"schedulerName", "not a string"}},
		// client
		{"unknown content type", over("client.contentType", "application/yaml"),
			[]string{"client.contentType", `"application/yaml"`, "application/json or application/vnd.kubernetes.protobuf"}},
		{"unknown accepted content type", over("client.acceptContentTypes", "application/json, text/html;q=0.5"),
			[]string{"client.acceptContentTypes", `" text/html;q=0.5" is not a content type the API server serves`}},
		{"qps zero", over("client.qps", "0"),
			[]string{"client.qps", "0 is out of range", "more than 0, up to 1000000"}},
		{"qps negative", Source{File: writeFile(t, "client:\n  qps: -1\n")},
			[]string{"client.qps", "-1 is out of range", "more than 0"}},
		{"qps not a number", Source{Environ: []string{"WASMSCHED_CLIENT_QPS=fast"}},
			[]string{"client.qps", `"fast" is not a number`, "50 or 12.5"}},
		{"qps NaN", over("client.qps", "NaN"),
			[]string{"client.qps", "not a finite number"}},
		{"burst zero", over("client.burst", "0"),
			[]string{"client.burst", "0 is out of range", "1 to 1000000"}},
		{"burst fraction", Source{File: writeFile(t, "client:\n  burst: 1.5\n")},
			[]string{"client.burst", "1.5 is not an integer"}},
		// logging
		{"unknown log format", over("logging.format", "logfmt"),
			[]string{"logging.format", `"logfmt"`, "want text or json"}},
		{"unknown log level", Source{Environ: []string{"WASMSCHED_LOGGING_LEVEL=verbose"}},
			[]string{"logging.level", `"verbose"`, "want debug, info, warn or error"}},
		{"verbosity above 10", over("logging.verbosity", "11"),
			[]string{"logging.verbosity", "11 is out of range", "0 to 10"}},
		// queue
		{"initial backoff zero", over("queue.initialBackoff", "0s"),
			[]string{"queue.initialBackoff", "0s is out of range", "1ms to 24h0m0s"}},
		{"max backoff below initial", over("queue.initialBackoff", "5s", "queue.maxBackoff", "2s"),
			[]string{"queue.maxBackoff: 2s is less than queue.initialBackoff (5s)", "at least queue.initialBackoff"}},
		{"max in unschedulable too short", over("queue.maxInUnschedulable", "500ms"),
			[]string{"queue.maxInUnschedulable", "500ms is out of range", "1s to 24h0m0s"}},
		{"pop from backoffQ not a bool", Source{Environ: []string{"WASMSCHED_QUEUE_POP_FROM_BACKOFF_Q=yes"}},
			[]string{"queue.popFromBackoffQ", "yes is not a boolean", "allowed true or false"}},
		{"pop from backoffQ yaml number", Source{File: writeFile(t, "queue:\n  popFromBackoffQ: 1\n")},
			[]string{"queue.popFromBackoffQ", "1 is not a boolean", "allowed true or false"}},
		// scheduling
		{"percentage above 100", over("scheduling.percentageOfNodesToScore", "101"),
			[]string{"scheduling.percentageOfNodesToScore", "101 is out of range", "0 to 100"}},
		{"parallelism zero", over("scheduling.parallelism", "0"),
			[]string{"scheduling.parallelism", "0 is out of range", "1 to 1024"}},
		{"assumed TTL negative", over("scheduling.assumedPodTTL", "-1s"),
			[]string{"scheduling.assumedPodTTL", "-1s is out of range", "0s to 1h0m0s"}},
		// leader election
		{"leader enabled not a bool", over("leaderElection.enabled", "on"),
			[]string{"leaderElection.enabled", "on is not a boolean", "true or false"}},
		{"lease namespace with dots", over("leaderElection.namespace", "kube.system"),
			[]string{"leaderElection.namespace", `"kube.system" is not a valid namespace`, "must not contain dots"}},
		{"lease name invalid", over("leaderElection.name", "Wasm_Sched"),
			[]string{"leaderElection.name", `"Wasm_Sched" is not a valid Lease name`, "RFC 1123 subdomain"}},
		{"lease not above renew", over("leaderElection.leaseDuration", "10s"),
			[]string{"leaderElection.leaseDuration: 10s is not more than leaderElection.renewDeadline (10s)", "raise leaderElection.leaseDuration or lower leaderElection.renewDeadline"}},
		{"renew not above jittered retry", over("leaderElection.retryPeriod", "9s"),
			[]string{"leaderElection.renewDeadline: 10s is not more than 1.2 x leaderElection.retryPeriod (1.2 x 9s = 10.8s)", "lower leaderElection.retryPeriod"}},
		{"renew equal to jittered retry", over("leaderElection.renewDeadline", "6s", "leaderElection.retryPeriod", "5s"),
			[]string{"leaderElection.renewDeadline: 6s is not more than 1.2 x leaderElection.retryPeriod"}},
		{"retry too short", over("leaderElection.retryPeriod", "10ms"),
			[]string{"leaderElection.retryPeriod", "10ms is out of range", "100ms to 1h0m0s"}},
		// metrics
		{"bind address without port", over("metrics.bindAddress", "127.0.0.1"),
			[]string{"metrics.bindAddress", `"127.0.0.1" is not host:port`, "0.0.0.0:10351", "empty to disable"}},
		{"bind address bad port", over("metrics.bindAddress", "127.0.0.1:http"),
			[]string{"metrics.bindAddress", `port "http" is not a number from 0 to 65535`}},
		{"bind address port too large", over("metrics.bindAddress", ":65536"),
			[]string{"metrics.bindAddress", `port "65536" is not a number`}},
		{"bind address bad host", over("metrics.bindAddress", "not_a host:80"),
			[]string{"metrics.bindAddress", `host "not_a host" is neither an IP address nor a host name`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.src)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestEmptyValues checks that a null or empty section, and a key with no
// value, set nothing, while an empty mapping where a value belongs is an
// error.
func TestEmptyValues(t *testing.T) {
	got, err := Load(Source{File: writeFile(t, `
schedulerName:
client: {}
queue:
sandbox:
  deadline:
policies: {}
profiles: {}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaults(), got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
	got, err = Load(Source{File: writeFile(t, `
policies:
  queueSort:
  victimOrder: {}
  preEnqueue: {module: m.wasm, sha256: }
profiles:
  p:
    policies:
      queueSort: {module: }
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.Policies = map[abi.Slot]Module{abi.SlotPreEnqueue: {Path: "m.wasm"}}
	want.Profiles = []Profile{
		{SchedulerName: "wasmsched", Policies: map[abi.Slot]Module{abi.SlotPreEnqueue: {Path: "m.wasm"}}},
		{SchedulerName: "p", Policies: map[abi.Slot]Module{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
	for _, y := range []string{"sandbox:\n  deadline: {}\n", "profiles:\n  p:\n    policies:\n      queueSort: {module: {}}\n"} {
		if _, err := Load(Source{File: writeFile(t, y)}); err == nil || !strings.Contains(err.Error(), "map[]") {
			t.Errorf("%q: error %v, want one about the empty mapping", y, err)
		}
	}
}

func TestBindAddresses(t *testing.T) {
	for _, a := range []string{"", "127.0.0.1:10351", "0.0.0.0:10351", ":10351", "[::]:10351", "[::1]:0", "localhost:8080", "metrics.example.com:443"} {
		c, err := Load(Source{Overrides: map[string]string{"metrics.bindAddress": a, "secureServing.bindAddress": a}})
		if err != nil {
			t.Errorf("%q: %v", a, err)
			continue
		}
		if c.Metrics.BindAddress != a || c.SecureServing.BindAddress != a {
			t.Errorf("%q: got %q and %q", a, c.Metrics.BindAddress, c.SecureServing.BindAddress)
		}
	}
}

// TestSecureServing: the HTTPS listener's keys, checked alone and together.
func TestSecureServing(t *testing.T) {
	for _, c := range []struct {
		name string
		over map[string]string
		want SecureServing
		errs []string // substrings of the error; none: loads
	}{
		{"default", nil, SecureServing{BindAddress: "0.0.0.0:10359"}, nil},
		{"disabled", map[string]string{"secureServing.bindAddress": ""}, SecureServing{}, nil},
		{"certificate and key", map[string]string{"secureServing.certFile": "tls.crt", "secureServing.keyFile": "tls.key"},
			SecureServing{BindAddress: "0.0.0.0:10359", CertFile: "tls.crt", KeyFile: "tls.key"}, nil},
		{"certificate without key", map[string]string{"secureServing.certFile": "tls.crt"}, SecureServing{},
			[]string{`secureServing.certFile "tls.crt" and secureServing.keyFile ""`, "set both", "or neither (a self-signed certificate)"}},
		{"key without certificate", map[string]string{"secureServing.keyFile": "tls.key"}, SecureServing{},
			[]string{`secureServing.certFile "" and secureServing.keyFile "tls.key"`, "set both"}},
		{"no port", map[string]string{"secureServing.bindAddress": "0.0.0.0"}, SecureServing{},
			[]string{"secureServing.bindAddress", `"0.0.0.0" is not host:port`, "0.0.0.0:10359", "leave it empty to disable"}},
		{"port out of range", map[string]string{"secureServing.bindAddress": ":70000"}, SecureServing{},
			[]string{"secureServing.bindAddress", `port "70000" is not a number from 0 to 65535`}},
		{"bad host", map[string]string{"secureServing.bindAddress": "not_a_host:10359"}, SecureServing{},
			[]string{"secureServing.bindAddress", `host "not_a_host" is neither an IP address nor a host name`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Load(Source{Overrides: c.over})
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(c.want, got.SecureServing); diff != "" {
					t.Errorf("SecureServing (-want, +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded %+v, want an error", got.SecureServing)
			}
			for _, w := range c.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestProfiles(t *testing.T) {
	const pin2 = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
	file := writeFile(t, `
schedulerName: wasmsched
policies:
  queueSort: {module: /etc/wasmsched/fifo.wasm}
profiles:
  wasmsched-fifo:
    policies:
      queueSort: {module: /etc/wasmsched/fifo.wasm, sha256: `+pin+`}
      victimOrder:
        module: /etc/wasmsched/victims.wasm
  a.example.com:
    policies:
      preEnqueue: {module: gate.wasm}
  wasmsched-native: {}
  wasmsched-null:
  wasmsched-empty-policies:
    policies:
  wasmsched-empty-slot:
    policies:
      queueSort: {}
`)
	got, err := Load(Source{
		File: file,
		Overrides: map[string]string{
			"profiles.wasmsched-fifo.policies.victimOrder.module":  "v2.wasm", // over the file
			"profiles.wasmsched-fifo.policies.queueSort.sha256":    pin2,
			"profiles.b.example.com.policies.queueingHint.module":  "hint.wasm", // new, dotted name
			"profiles.b.example.com.policies.queueingHint.sha256":  pin,
			"profiles.wasmsched-cli.policies.backoffSort.module":   "", // a profile of built-ins
			"profiles.policies.policies.policies.queueSort.module": "odd.wasm",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.Policies = map[abi.Slot]Module{abi.SlotQueueSort: {Path: "/etc/wasmsched/fifo.wasm"}}
	none := map[abi.Slot]Module{}
	want.Profiles = []Profile{
		{SchedulerName: "wasmsched", Policies: map[abi.Slot]Module{abi.SlotQueueSort: {Path: "/etc/wasmsched/fifo.wasm"}}},
		{SchedulerName: "a.example.com", Policies: map[abi.Slot]Module{abi.SlotPreEnqueue: {Path: "gate.wasm"}}},
		{SchedulerName: "b.example.com", Policies: map[abi.Slot]Module{abi.SlotQueueingHint: {Path: "hint.wasm", SHA256: pin}}},
		{SchedulerName: "policies.policies", Policies: map[abi.Slot]Module{abi.SlotQueueSort: {Path: "odd.wasm"}}},
		{SchedulerName: "wasmsched-cli", Policies: none},
		{SchedulerName: "wasmsched-empty-policies", Policies: none},
		{SchedulerName: "wasmsched-empty-slot", Policies: none},
		{SchedulerName: "wasmsched-fifo", Policies: map[abi.Slot]Module{
			abi.SlotQueueSort:   {Path: "/etc/wasmsched/fifo.wasm", SHA256: pin2},
			abi.SlotVictimOrder: {Path: "v2.wasm"},
		}},
		{SchedulerName: "wasmsched-native", Policies: none},
		{SchedulerName: "wasmsched-null", Policies: none},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}

	// The default profile follows schedulerName and owns its own map.
	got, err = Load(Source{File: file, Overrides: map[string]string{"schedulerName": "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Profiles[0].SchedulerName != "other" {
		t.Errorf("Profiles[0].SchedulerName = %q, want other", got.Profiles[0].SchedulerName)
	}
	got.Profiles[0].Policies[abi.SlotBackoffSort] = Module{Path: "x"}
	if _, ok := got.Policies[abi.SlotBackoffSort]; ok {
		t.Error("Profiles[0].Policies aliases Config.Policies")
	}
}

func TestProfileErrors(t *testing.T) {
	cases := []struct {
		name string
		src  Source
		want []string
	}{
		{"duplicate of schedulerName", Source{File: writeFile(t, "schedulerName: s\nprofiles:\n  s: {}\n")},
			[]string{`profiles.s: duplicate scheduler name "s"`, "schedulerName already names the default profile"}},
		{"duplicate of the default schedulerName", Source{Overrides: map[string]string{"profiles.wasmsched.policies.queueSort.module": "m.wasm"}},
			[]string{`profiles.wasmsched: duplicate scheduler name "wasmsched"`}},
		{"duplicate after schedulerName override", Source{
			File:      writeFile(t, "profiles:\n  x: {}\n"),
			Overrides: map[string]string{"schedulerName": "x"}},
			[]string{`profiles.x: duplicate scheduler name "x"`}},
		{"invalid name", Source{File: writeFile(t, "profiles:\n  Bad_Name: {}\n")},
			[]string{"profiles.Bad_Name", `"Bad_Name" is not a valid scheduler name`, "RFC 1123 subdomain"}},
		{"unknown sub-key in file", Source{File: writeFile(t, "profiles:\n  p:\n    policy:\n      queueSort: {module: m.wasm}\n")},
			[]string{"config file", `unknown key "profiles.p.policy.queueSort.module"`, profileKeyPattern, "queueSort, backoffSort, preEnqueue, queueingHint, victimOrder"}},
		{"unknown field in file", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      queueSort: {path: m.wasm}\n")},
			[]string{`unknown key "profiles.p.policies.queueSort.path"`}},
		{"bad slot in file", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      queuesort: {module: m.wasm}\n")},
			[]string{`unknown key "profiles.p.policies.queuesort.module"`, "<slot> one of queueSort, backoffSort"}},
		{"bad slot on command line", Source{Overrides: map[string]string{"profiles.p.policies.sort.module": "m.wasm"}},
			[]string{"command line", `unknown key "profiles.p.policies.sort.module"`, "<slot> one of"}},
		{"too short on command line", Source{Overrides: map[string]string{"profiles.p.module": "m.wasm"}},
			[]string{"command line", `unknown key "profiles.p.module"`}},
		{"bare profiles on command line", Source{Overrides: map[string]string{"profiles": "x"}},
			[]string{"command line", `unknown key "profiles"`}},
		{"no name on command line", Source{Overrides: map[string]string{"profiles.policies.queueSort.module": "m.wasm"}},
			[]string{`unknown key "profiles.policies.queueSort.module"`}},
		{"slot not a mapping", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      queueSort: m.wasm\n")},
			[]string{"profiles.p.policies.queueSort: m.wasm is not a mapping", profileKeyPattern}},
		{"profile not a mapping", Source{File: writeFile(t, "profiles:\n  p: fifo\n")},
			[]string{"profiles.p: fifo is not a mapping"}},
		{"profiles not a mapping", Source{File: writeFile(t, "profiles: [a, b]\n")},
			[]string{"profiles: want a mapping from scheduler name to profile"}},
		{"module not a string", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      queueSort: {module: [a]}\n")},
			[]string{"profiles.p.policies.queueSort.module", "not a string"}},
		{"bad sha", Source{Overrides: map[string]string{"profiles.p.policies.queueSort.module": "m.wasm", "profiles.p.policies.queueSort.sha256": "abc"}},
			[]string{"profiles.p.policies.queueSort.sha256", `"abc" is not a sha256`}},
		{"sha without module", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      victimOrder: {sha256: "+pin+"}\n")},
			[]string{"profiles.p.policies.victimOrder.sha256: set without profiles.p.policies.victimOrder.module"}},
		{"sha with native", Source{File: writeFile(t, "profiles:\n  p:\n    policies:\n      victimOrder: {module: native, sha256: "+pin+"}\n")},
			[]string{"profiles.p.policies.victimOrder.sha256: set with profiles.p.policies.victimOrder.module native", "remove the sha256"}},
		{"from the environment", Source{Environ: []string{"WASMSCHED_PROFILES_FIFO_POLICIES_QUEUE_SORT_MODULE=m.wasm"}},
			[]string{"WASMSCHED_PROFILES_FIFO_POLICIES_QUEUE_SORT_MODULE", "profiles cannot be set from the environment", "config file or on the command line"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.src)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestEnvNames(t *testing.T) {
	for name, want := range map[string]string{
		"sandbox.memoryPages":                 "WASMSCHED_SANDBOX_MEMORY_PAGES",
		"sandbox.deadline":                    "WASMSCHED_SANDBOX_DEADLINE",
		"policies.queueSort.module":           "WASMSCHED_POLICIES_QUEUE_SORT_MODULE",
		"policies.queueingHint.sha256":        "WASMSCHED_POLICIES_QUEUEING_HINT_SHA256",
		"schedulerName":                       "WASMSCHED_SCHEDULER_NAME",
		"client.qps":                          "WASMSCHED_CLIENT_QPS",
		"queue.popFromBackoffQ":               "WASMSCHED_QUEUE_POP_FROM_BACKOFF_Q",
		"scheduling.assumedPodTTL":            "WASMSCHED_SCHEDULING_ASSUMED_POD_TTL",
		"scheduling.percentageOfNodesToScore": "WASMSCHED_SCHEDULING_PERCENTAGE_OF_NODES_TO_SCORE",
		"leaderElection.enabled":              "WASMSCHED_LEADER_ELECTION_ENABLED",
		"metrics.bindAddress":                 "WASMSCHED_METRICS_BIND_ADDRESS",
		"logging.format":                      "WASMSCHED_LOGGING_FORMAT",
		"logging.level":                       "WASMSCHED_LOGGING_LEVEL",
		"logging.verbosity":                   "WASMSCHED_LOGGING_VERBOSITY",
		"a.TTLSeconds":                        "WASMSCHED_A_TTL_SECONDS",
	} {
		if got := EnvName(name); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", name, got, want)
		}
	}
	// Every key is reachable from the environment, under a distinct name.
	seen := map[string]string{}
	for _, name := range KeyNames() {
		env := EnvName(name)
		if other, dup := seen[env]; dup {
			t.Errorf("%s and %s share %s", name, other, env)
		}
		seen[env] = name
		if _, err := Load(Source{Environ: []string{env + "=" + sample(name)}}); err != nil {
			t.Errorf("%s via %s: %v", name, env, err)
		}
	}
}

func TestHelp(t *testing.T) {
	h := Help()
	for _, name := range KeyNames() {
		k, _ := lookup(name)
		if !strings.Contains(h, name) || !strings.Contains(h, EnvName(name)) || !strings.Contains(h, k.help) {
			t.Errorf("Help lacks %s, %s or its help", name, EnvName(name))
		}
	}
	for _, w := range []string{"default 256", "default wasmsched", "default 127.0.0.1:10351", "default 0.0.0.0:10359", "default 50", profileKeyPattern, "file and command line only"} {
		if !strings.Contains(h, w) {
			t.Errorf("Help lacks %q:\n%s", w, h)
		}
	}
}

func sample(name string) string {
	// Each value is valid alone, against the other keys' defaults.
	if v, ok := map[string]string{
		"sandbox.deadline":             "1s",
		"sandbox.watchdogTick":         "2ms",
		"queue.initialBackoff":         "2s",
		"queue.maxBackoff":             "20s",
		"leaderElection.leaseDuration": "20s",
		"leaderElection.renewDeadline": "5s",
		"leaderElection.retryPeriod":   "1s",
		"metrics.bindAddress":          ":8080",
		"secureServing.bindAddress":    ":8443",
		// Alone, either would be refused: both or neither.
		"secureServing.certFile":    "",
		"secureServing.keyFile":     "",
		"client.contentType":        "application/json",
		"client.acceptContentTypes": "application/json",
		"logging.format":            "json",
		"logging.level":             "debug",
	}[name]; ok {
		return v
	}
	switch {
	case strings.HasSuffix(name, "sha256"), strings.HasSuffix(name, "failurePolicy"):
		// Either alone, without a module, is refused.
		return ""
	case strings.HasSuffix(name, "module"):
		return "m.wasm"
	}
	k, _ := lookup(name)
	switch k.kind {
	case kindDuration:
		return "1m"
	case kindBool:
		return "true"
	case kindString:
		return "name"
	case kindFloat:
		return "7.5"
	}
	return "8"
}

// TestNative: module native selects the native reference policy in every
// layer and in profiles; ./native is a file; other values stay paths.
func TestNative(t *testing.T) {
	file := writeFile(t, `
policies:
  queueSort: {module: native}
  backoffSort: {module: ./native, sha256: `+pin+`}
profiles:
  p:
    policies:
      queueingHint: {module: native}
      victimOrder: {module: Native}
`)
	got, err := Load(Source{
		File:      file,
		Environ:   []string{"WASMSCHED_POLICIES_PRE_ENQUEUE_MODULE=native"},
		Overrides: map[string]string{"profiles.p.policies.queueSort.module": "native"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.Policies = map[abi.Slot]Module{
		abi.SlotQueueSort:   {Native: true},
		abi.SlotBackoffSort: {Path: "./native", SHA256: pin},
		abi.SlotPreEnqueue:  {Native: true},
	}
	want.Profiles = []Profile{
		{SchedulerName: "wasmsched", Policies: want.Policies},
		{SchedulerName: "p", Policies: map[abi.Slot]Module{
			abi.SlotQueueSort:    {Native: true},
			abi.SlotQueueingHint: {Native: true},
			abi.SlotVictimOrder:  {Path: "Native"}, // the word is case-sensitive
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want, +got):\n%s", diff)
	}
	for _, slot := range abi.Slots {
		if !strings.Contains(Help(), "policies."+slot.String()+".module") {
			t.Errorf("Help lacks policies.%s.module", slot)
		}
	}
	if !strings.Contains(Help(), NativeModule+": the built-in policy compiled into the binary") {
		t.Errorf("Help does not describe module %s:\n%s", NativeModule, Help())
	}
}

func TestAdminEndpointOnLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:10351", "127.0.0.2:1", "[::1]:10351", "localhost:10351"} {
		cfg, err := Load(Source{Overrides: map[string]string{"policies.adminEndpoint": "true", "metrics.bindAddress": addr}})
		if err != nil || !cfg.AdminEndpoint {
			t.Errorf("admin endpoint on %s: %v, want it served", addr, err)
		}
	}
}
