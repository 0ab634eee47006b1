package config

import (
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
	want := &Config{
		Sandbox: Sandbox{
			MemoryPages:  512,                    // file over default
			Deadline:     300 * time.Millisecond, // env over file
			PoolSize:     16,                     // flag over env
			WatchdogTick: time.Millisecond,       // default
		},
		Policies: map[abi.Slot]Module{
			abi.SlotQueueSort:   {Path: "/etc/wasmsched/fifo.wasm", SHA256: pin},
			abi.SlotVictimOrder: {Path: "v.wasm"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	got, err := Load(Source{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Sandbox: Sandbox{MemoryPages: 256, Deadline: 100 * time.Millisecond, PoolSize: 4, WatchdogTick: time.Millisecond}, Policies: map[abi.Slot]Module{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want, +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name string
		src  Source
		want []string // substrings of the error
	}{
		{"unknown file key", Source{File: writeFile(t, "sandbox:\n  memoryPage: 3\n")},
			[]string{`unknown key "sandbox.memoryPage"`, "sandbox.memoryPages"}},
		{"unknown env var", Source{Environ: []string{"WASMSCHED_SANDBOX_DEADLIN=1s"}},
			[]string{"WASMSCHED_SANDBOX_DEADLIN", "unknown", "WASMSCHED_SANDBOX_DEADLINE"}},
		{"unknown override", Source{Overrides: map[string]string{"policies.queuesort.module": "x"}},
			[]string{"command line", `"policies.queuesort.module"`, "policies.queueSort.module"}},
		{"out of range", Source{Overrides: map[string]string{"sandbox.memoryPages": "40000"}},
			[]string{"sandbox.memoryPages", "40000 is out of range", "2 to 32768"}},
		{"not an integer", Source{Environ: []string{"WASMSCHED_SANDBOX_MEMORY_PAGES=lots"}},
			[]string{"sandbox.memoryPages", "not an integer"}},
		{"bad duration", Source{File: writeFile(t, "sandbox:\n  deadline: 5 seconds\n")},
			[]string{"sandbox.deadline", "not a duration", "100ms"}},
		{"tick too coarse", Source{Overrides: map[string]string{"sandbox.deadline": "10ms", "sandbox.watchdogTick": "8ms"}},
			[]string{"sandbox.watchdogTick", "half of sandbox.deadline"}},
		{"bad sha", Source{Overrides: map[string]string{"policies.queueSort.module": "m.wasm", "policies.queueSort.sha256": "ABC"}},
			[]string{"policies.queueSort.sha256", "64 lowercase hex"}},
		{"sha without module", Source{Overrides: map[string]string{"policies.preEnqueue.sha256": pin}},
			[]string{"policies.preEnqueue.sha256", "without policies.preEnqueue.module"}},
		{"missing file", Source{File: "/nonexistent/config.yaml"}, []string{"config file", "no such file"}},
		{"not yaml", Source{File: writeFile(t, "sandbox: [unclosed\n")}, []string{"not valid YAML"}},
		{"several problems at once", Source{Overrides: map[string]string{"sandbox.memoryPages": "1", "sandbox.poolSize": "-1"}},
			[]string{"sandbox.memoryPages: 1 is out of range", "sandbox.poolSize: -1 is out of range"}},
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
		"sandbox.memoryPages":          "WASMSCHED_SANDBOX_MEMORY_PAGES",
		"sandbox.deadline":             "WASMSCHED_SANDBOX_DEADLINE",
		"policies.queueSort.module":    "WASMSCHED_POLICIES_QUEUE_SORT_MODULE",
		"policies.queueingHint.sha256": "WASMSCHED_POLICIES_QUEUEING_HINT_SHA256",
	} {
		if got := EnvName(name); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", name, got, want)
		}
	}
	// Every key is reachable from the environment.
	for _, name := range KeyNames() {
		c, err := Load(Source{Environ: []string{EnvName(name) + "=" + sample(name)}})
		if err != nil {
			t.Errorf("%s via %s: %v", name, EnvName(name), err)
			continue
		}
		_ = c
	}
	if h := Help(); !strings.Contains(h, "WASMSCHED_SANDBOX_MEMORY_PAGES") || !strings.Contains(h, "default 256") {
		t.Errorf("Help lacks a key's env var or default:\n%s", h)
	}
}

func sample(name string) string {
	switch {
	case strings.HasSuffix(name, "sha256"):
		return ""
	case strings.HasSuffix(name, "module"):
		return "m.wasm"
	case name == "sandbox.deadline":
		return "1s"
	case name == "sandbox.watchdogTick":
		return "2ms"
	}
	return "8"
}
