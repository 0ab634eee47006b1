package config

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
)

// TestKeyRoundTrip sets every key on the command line and checks that the
// whole Config is the defaults with that one field changed: a key bound to
// no field, to the wrong field or to a second key's field fails here.
func TestKeyRoundTrip(t *testing.T) {
	type roundTrip struct {
		over map[string]string // the key, and any other key it needs
		want func(*Config)     // what differs from defaults()
	}
	one := func(name, value string, want func(*Config)) (string, roundTrip) {
		return name, roundTrip{over: map[string]string{name: value}, want: want}
	}
	cases := map[string]roundTrip{}
	add := func(name string, rt roundTrip) { cases[name] = rt }
	add(one("schedulerName", "s", func(c *Config) { c.SchedulerName = "s"; c.Profiles[0].SchedulerName = "s" }))
	add(one("client.qps", "7.5", func(c *Config) { c.Client.QPS = 7.5 }))
	add(one("client.burst", "7", func(c *Config) { c.Client.Burst = 7 }))
	add(one("client.kubeconfig", "/k", func(c *Config) { c.Client.Kubeconfig = "/k" }))
	add(one("client.contentType", "application/json", func(c *Config) { c.Client.ContentType = "application/json" }))
	add(one("client.acceptContentTypes", "application/vnd.kubernetes.protobuf,application/json", func(c *Config) {
		c.Client.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}))
	add(one("queue.initialBackoff", "3s", func(c *Config) { c.Queue.InitialBackoff = 3 * time.Second }))
	add(one("queue.maxBackoff", "11s", func(c *Config) { c.Queue.MaxBackoff = 11 * time.Second }))
	add(one("queue.maxInUnschedulable", "7m", func(c *Config) { c.Queue.MaxInUnschedulable = 7 * time.Minute }))
	add(one("queue.popFromBackoffQ", "false", func(c *Config) { c.Queue.PopFromBackoffQ = false }))
	add(one("scheduling.percentageOfNodesToScore", "42", func(c *Config) { c.Scheduling.PercentageOfNodesToScore = 42 }))
	add(one("scheduling.parallelism", "3", func(c *Config) { c.Scheduling.Parallelism = 3 }))
	add(one("scheduling.assumedPodTTL", "7s", func(c *Config) { c.Scheduling.AssumedPodTTL = 7 * time.Second }))
	add(one("leaderElection.enabled", "true", func(c *Config) { c.LeaderElection.Enabled = true }))
	add(one("leaderElection.namespace", "ns", func(c *Config) { c.LeaderElection.Namespace = "ns" }))
	add(one("leaderElection.name", "lease", func(c *Config) { c.LeaderElection.Name = "lease" }))
	add(one("leaderElection.leaseDuration", "17s", func(c *Config) { c.LeaderElection.LeaseDuration = 17 * time.Second }))
	add(one("leaderElection.renewDeadline", "9s", func(c *Config) { c.LeaderElection.RenewDeadline = 9 * time.Second }))
	add(one("leaderElection.retryPeriod", "1s", func(c *Config) { c.LeaderElection.RetryPeriod = time.Second }))
	add(one("metrics.bindAddress", "127.0.0.1:9", func(c *Config) { c.Metrics.BindAddress = "127.0.0.1:9" }))
	add(one("metrics.profiling", "true", func(c *Config) { c.Metrics.Profiling = true }))
	add(one("secureServing.bindAddress", "127.0.0.1:9", func(c *Config) { c.SecureServing.BindAddress = "127.0.0.1:9" }))
	tls := map[string]string{"secureServing.certFile": "tls.crt", "secureServing.keyFile": "tls.key"}
	bothFiles := func(c *Config) { c.SecureServing.CertFile, c.SecureServing.KeyFile = "tls.crt", "tls.key" }
	add("secureServing.certFile", roundTrip{over: tls, want: bothFiles})
	add("secureServing.keyFile", roundTrip{over: tls, want: bothFiles})
	add(one("logging.format", "json", func(c *Config) { c.Logging.Format = "json" }))
	add(one("logging.level", "warn", func(c *Config) { c.Logging.Level = slog.LevelWarn }))
	add(one("logging.verbosity", "4", func(c *Config) { c.Logging.Verbosity = 4 }))
	add(one("metrics.contentionProfiling", "true", func(c *Config) { c.Metrics.ContentionProfiling = true }))
	add(one("sandbox.memoryPages", "32768", func(c *Config) { c.Sandbox.MemoryPages = 32768 }))
	add(one("sandbox.deadline", "7s", func(c *Config) { c.Sandbox.Deadline = 7 * time.Second }))
	add(one("sandbox.poolSize", "0", func(c *Config) { c.Sandbox.PoolSize = 0 }))
	add(one("sandbox.watchdogTick", "3ms", func(c *Config) { c.Sandbox.WatchdogTick = 3 * time.Millisecond }))
	add(one("sandbox.breakerFailures", "9", func(c *Config) { c.Sandbox.BreakerFailures = 9 }))
	add(one("sandbox.breakerWindow", "9s", func(c *Config) { c.Sandbox.BreakerWindow = 9 * time.Second }))
	add(one("sandbox.compilationCacheDir", "/var/cache/wasmsched", func(c *Config) { c.Sandbox.CompilationCacheDir = "/var/cache/wasmsched" }))
	add(one("policies.adminEndpoint", "true", func(c *Config) { c.AdminEndpoint = true }))
	add(one("policyAPI.enabled", "false", func(c *Config) { c.PolicyAPI.Enabled = false }))
	add(one("policyAPI.namespace", "kube-system", func(c *Config) { c.PolicyAPI.Namespace = "kube-system" }))
	add(one("policyAPI.statusInterval", "5s", func(c *Config) { c.PolicyAPI.StatusInterval = 5 * time.Second }))
	for _, s := range abi.Slots {
		module, sha := "policies."+s.String()+".module", "policies."+s.String()+".sha256"
		path := s.String() + ".wasm"
		add(one(module, path, func(c *Config) {
			c.Policies[s] = Module{Path: path}
			c.Profiles[0].Policies[s] = Module{Path: path}
		}))
		add(sha, roundTrip{over: map[string]string{module: path, sha: pin}, want: func(c *Config) {
			c.Policies[s] = Module{Path: path, SHA256: pin}
			c.Profiles[0].Policies[s] = Module{Path: path, SHA256: pin}
		}})
		if s.Placement() {
			fp := "policies." + s.String() + ".failurePolicy"
			add(fp, roundTrip{over: map[string]string{module: path, fp: "Ignore"}, want: func(c *Config) {
				c.Policies[s] = Module{Path: path, FailurePolicy: "Ignore"}
				c.Profiles[0].Policies[s] = Module{Path: path, FailurePolicy: "Ignore"}
			}})
		}
	}

	var names []string
	for name := range cases {
		names = append(names, name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(KeyNames())), slices.Sorted(slices.Values(names))); diff != "" {
		t.Errorf("keys without a round trip here (-KeyNames, +cases):\n%s", diff)
	}
	for _, name := range KeyNames() {
		rt, ok := cases[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			got, err := Load(Source{Overrides: rt.over})
			if err != nil {
				t.Fatal(err)
			}
			want := defaults()
			rt.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want, +got):\n%s", diff)
			}
			if cmp.Equal(defaults(), got) {
				t.Errorf("%s=%v left the defaults unchanged", name, rt.over)
			}
		})
	}
}

// TestKeyTable checks the table's invariants: names are unique, every
// default is of its kind's type and passes the key's own checks.
func TestKeyTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.name] {
			t.Errorf("%s is in the table twice", k.name)
		}
		seen[k.name] = true
		var ok bool
		switch k.kind {
		case kindInt:
			_, ok = k.def.(int64)
		case kindFloat:
			_, ok = k.def.(float64)
		case kindDuration:
			_, ok = k.def.(time.Duration)
		case kindString:
			_, ok = k.def.(string)
		case kindBool:
			_, ok = k.def.(bool)
		}
		if !ok {
			t.Errorf("%s: default %#v is not of the key's kind %d", k.name, k.def, k.kind)
		}
		if _, err := k.set(k.def); err != nil {
			t.Errorf("%s: default %v is refused: %v", k.name, k.def, err)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	names := KeyNames()
	for _, c := range []struct{ name, want string }{
		{"sandbox.memoryPage", "sandbox.memoryPages"},
		{"sandbox.memoryPagez", "sandbox.memoryPages"},
		{"policies.queuesort.module", "policies.queueSort.module"},
		{"Metrics.BindAddress", "metrics.bindAddress"},
		{"leaderelection.enable", "leaderElection.enabled"},
		{"policies.victimOrder.sha265", "policies.victimOrder.sha256"},
		{"no.such.key", ""},
		{"deadline", ""},
		{"", ""},
	} {
		got := didYouMean(c.name, names)
		want := ""
		if c.want != "" {
			want = `; did you mean "` + c.want + `"?`
		}
		if got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.name, got, want)
		}
	}
	// The error names one key, not all of them.
	_, err := Load(Source{Overrides: map[string]string{"no.such.key": "1"}})
	if err == nil || strings.Contains(err.Error(), "sandbox.breakerWindow") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unknown key far from every key: %v, want no suggestion and no list of keys", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"abc", "abc", 0},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
