package config

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
)

// upstreamDefaulted is what upstream's v1 defaulting makes of an empty
// KubeSchedulerConfiguration, less plugins (the registry's, Source.Plugins) and
// enableProfiling (left unset: see defaultKubeScheduler).
func upstreamDefaulted() *kschedv1.KubeSchedulerConfiguration {
	return &kschedv1.KubeSchedulerConfiguration{
		Parallelism: ptr.To[int32](16),
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect:       ptr.To(true),
			LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
			ResourceLock:      "leases",
			ResourceNamespace: "kube-system",
			ResourceName:      "kube-scheduler",
		},
		ClientConnection: componentbaseconfig.ClientConnectionConfiguration{
			QPS:         50,
			Burst:       100,
			ContentType: "application/vnd.kubernetes.protobuf",
		},
		PercentageOfNodesToScore: ptr.To[int32](0),
		PodInitialBackoffSeconds: ptr.To[int64](1),
		PodMaxBackoffSeconds:     ptr.To[int64](10),
		Profiles:                 []kschedv1.KubeSchedulerProfile{{SchedulerName: ptr.To("default-scheduler")}},
	}
}

// TestKubeSchedulerDefaults ports the top-level cases of upstream's
// pkg/scheduler/apis/config/v1 TestSchedulerDefaults.
func TestKubeSchedulerDefaults(t *testing.T) {
	with := func(f func(c *kschedv1.KubeSchedulerConfiguration)) *kschedv1.KubeSchedulerConfiguration {
		c := upstreamDefaulted()
		f(c)
		return c
	}
	tests := []struct {
		name   string
		config *kschedv1.KubeSchedulerConfiguration
		want   *kschedv1.KubeSchedulerConfiguration
	}{
		{"empty config", &kschedv1.KubeSchedulerConfiguration{}, upstreamDefaulted()},
		{"no scheduler name", &kschedv1.KubeSchedulerConfiguration{Profiles: []kschedv1.KubeSchedulerProfile{{}}}, upstreamDefaulted()},
		{"two profiles",
			&kschedv1.KubeSchedulerConfiguration{Profiles: []kschedv1.KubeSchedulerProfile{{}, {SchedulerName: ptr.To("custom-scheduler")}}},
			with(func(c *kschedv1.KubeSchedulerConfiguration) {
				// Only a single profile gets a default name.
				c.Profiles = []kschedv1.KubeSchedulerProfile{{}, {SchedulerName: ptr.To("custom-scheduler")}}
			})},
		{"Prallelism with no port", &kschedv1.KubeSchedulerConfiguration{Parallelism: ptr.To[int32](16)}, upstreamDefaulted()},
		{"set non default parallelism", &kschedv1.KubeSchedulerConfiguration{Parallelism: ptr.To[int32](8)},
			with(func(c *kschedv1.KubeSchedulerConfiguration) { c.Parallelism = ptr.To[int32](8) })},
		{"set non default delayCacheUntilActive", &kschedv1.KubeSchedulerConfiguration{DelayCacheUntilActive: true},
			with(func(c *kschedv1.KubeSchedulerConfiguration) { c.DelayCacheUntilActive = true })},
		{"set non default global percentageOfNodesToScore", &kschedv1.KubeSchedulerConfiguration{PercentageOfNodesToScore: ptr.To[int32](50)},
			with(func(c *kschedv1.KubeSchedulerConfiguration) { c.PercentageOfNodesToScore = ptr.To[int32](50) })},
		{"set non default profile percentageOfNodesToScore",
			&kschedv1.KubeSchedulerConfiguration{Profiles: []kschedv1.KubeSchedulerProfile{{PercentageOfNodesToScore: ptr.To[int32](50)}}},
			with(func(c *kschedv1.KubeSchedulerConfiguration) {
				c.Profiles[0].PercentageOfNodesToScore = ptr.To[int32](50)
			})},
		{"set non default global and profile percentageOfNodesToScore",
			&kschedv1.KubeSchedulerConfiguration{PercentageOfNodesToScore: ptr.To[int32](10),
				Profiles: []kschedv1.KubeSchedulerProfile{{PercentageOfNodesToScore: ptr.To[int32](50)}}},
			with(func(c *kschedv1.KubeSchedulerConfiguration) {
				c.PercentageOfNodesToScore = ptr.To[int32](10)
				c.Profiles[0].PercentageOfNodesToScore = ptr.To[int32](50)
			})},
		// Contention profiling defaults to on when profiling is set on, as upstream.
		{"profiling on", &kschedv1.KubeSchedulerConfiguration{DebuggingConfiguration: componentbaseconfig.DebuggingConfiguration{EnableProfiling: ptr.To(true)}},
			with(func(c *kschedv1.KubeSchedulerConfiguration) {
				c.EnableProfiling, c.EnableContentionProfiling = ptr.To(true), ptr.To(true)
			})},
		{"profiling off", &kschedv1.KubeSchedulerConfiguration{DebuggingConfiguration: componentbaseconfig.DebuggingConfiguration{EnableProfiling: ptr.To(false)}},
			with(func(c *kschedv1.KubeSchedulerConfiguration) { c.EnableProfiling = ptr.To(false) })},
		{"explicit client and leader election values",
			&kschedv1.KubeSchedulerConfiguration{
				ClientConnection: componentbaseconfig.ClientConnectionConfiguration{QPS: 5, Burst: 7, ContentType: "application/json"},
				LeaderElection: componentbaseconfig.LeaderElectionConfiguration{LeaderElect: ptr.To(false),
					LeaseDuration: metav1.Duration{Duration: time.Minute}, ResourceNamespace: "ns", ResourceName: "n"},
			},
			with(func(c *kschedv1.KubeSchedulerConfiguration) {
				c.ClientConnection = componentbaseconfig.ClientConnectionConfiguration{QPS: 5, Burst: 7, ContentType: "application/json"}
				c.LeaderElection.LeaderElect = ptr.To(false)
				c.LeaderElection.LeaseDuration.Duration = time.Minute
				c.LeaderElection.ResourceNamespace, c.LeaderElection.ResourceName = "ns", "n"
			})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defaultKubeScheduler(tc.config)
			if diff := cmp.Diff(tc.want, tc.config); diff != "" {
				t.Errorf("defaulted (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestValidateKubeScheduler ports the cases of upstream's
// TestValidateKubeSchedulerConfigurationV1 for the fields wasmsched
// supports (extenders are refused whole; plugin args are the registry's).
func TestValidateKubeScheduler(t *testing.T) {
	valid := &kschedv1.KubeSchedulerConfiguration{
		Parallelism: ptr.To[int32](8),
		ClientConnection: componentbaseconfig.ClientConnectionConfiguration{
			AcceptContentTypes: "application/json", ContentType: "application/json", QPS: 10, Burst: 10,
		},
		LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
			ResourceLock: "leases", LeaderElect: ptr.To(true),
			LeaseDuration: metav1.Duration{Duration: 30 * time.Second}, RenewDeadline: metav1.Duration{Duration: 15 * time.Second},
			RetryPeriod: metav1.Duration{Duration: 5 * time.Second}, ResourceNamespace: "name", ResourceName: "name",
		},
		PercentageOfNodesToScore: ptr.To[int32](0),
		PodInitialBackoffSeconds: ptr.To[int64](1),
		PodMaxBackoffSeconds:     ptr.To[int64](1),
		Profiles: []kschedv1.KubeSchedulerProfile{{
			SchedulerName:            ptr.To("me"),
			PercentageOfNodesToScore: ptr.To[int32](35),
			Plugins: &kschedv1.Plugins{
				QueueSort: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: "CustomSort"}}},
				Score:     kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: "*"}}},
			},
			PluginConfig: []kschedv1.PluginConfig{{Name: "DefaultPreemption"}},
		}, {
			SchedulerName:            ptr.To("other"),
			PercentageOfNodesToScore: ptr.To[int32](35),
			Plugins: &kschedv1.Plugins{
				QueueSort: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: "CustomSort"}}},
				Bind:      kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: "CustomBind"}}},
			},
		}},
	}
	type wantErr struct {
		Type  field.ErrorType
		Field string
	}
	cases := map[string]struct {
		change func(c *kschedv1.KubeSchedulerConfiguration)
		want   []wantErr
	}{
		"good":                          {func(*kschedv1.KubeSchedulerConfiguration) {}, nil},
		"bad-parallelism-invalid-value": {func(c *kschedv1.KubeSchedulerConfiguration) { c.Parallelism = ptr.To[int32](0) }, []wantErr{{field.ErrorTypeInvalid, "parallelism"}}},
		"bad-resource-name-not-set": {func(c *kschedv1.KubeSchedulerConfiguration) { c.LeaderElection.ResourceName = "" },
			[]wantErr{{field.ErrorTypeRequired, "leaderElection.resourceName"}}},
		"bad-resource-namespace-not-set": {func(c *kschedv1.KubeSchedulerConfiguration) { c.LeaderElection.ResourceNamespace = "" },
			[]wantErr{{field.ErrorTypeRequired, "leaderElection.resourceNamespace"}}},
		"bad-resource-lock-not-leases": {func(c *kschedv1.KubeSchedulerConfiguration) { c.LeaderElection.ResourceLock = "configmap" },
			[]wantErr{{field.ErrorTypeInvalid, "leaderElection.resourceLock"}}},
		"resource-lock-without-leader-election": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.LeaderElection.ResourceLock, c.LeaderElection.LeaderElect = "configmap", ptr.To(false)
		}, nil},
		"lease-not-longer-than-renew-deadline": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.LeaderElection.LeaseDuration.Duration = 15 * time.Second
		},
			[]wantErr{{field.ErrorTypeInvalid, "leaderElection.leaseDuration"}}},
		"bad-burst": {func(c *kschedv1.KubeSchedulerConfiguration) { c.ClientConnection.Burst = -1 },
			[]wantErr{{field.ErrorTypeInvalid, "clientConnection.burst"}}},
		"bad-percentage-of-nodes-to-score": {func(c *kschedv1.KubeSchedulerConfiguration) { c.PercentageOfNodesToScore = ptr.To[int32](101) },
			[]wantErr{{field.ErrorTypeInvalid, "percentageOfNodesToScore"}}},
		"negative-percentage-of-nodes-to-score": {func(c *kschedv1.KubeSchedulerConfiguration) { c.PercentageOfNodesToScore = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, "percentageOfNodesToScore"}}},
		"scheduler-name-not-set": {func(c *kschedv1.KubeSchedulerConfiguration) { c.Profiles[1].SchedulerName = ptr.To("") },
			[]wantErr{{field.ErrorTypeRequired, "profiles[1].schedulerName"}}},
		"repeated-scheduler-name": {func(c *kschedv1.KubeSchedulerConfiguration) { c.Profiles[0].SchedulerName = ptr.To("other") },
			[]wantErr{{field.ErrorTypeDuplicate, "profiles[1].schedulerName"}}},
		"greater-than-100-profile-percentage-of-nodes-to-score": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[1].PercentageOfNodesToScore = ptr.To[int32](101)
		},
			[]wantErr{{field.ErrorTypeInvalid, "profiles[1].percentageOfNodesToScore"}}},
		"negative-profile-percentage-of-nodes-to-score": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[1].PercentageOfNodesToScore = ptr.To[int32](-1)
		},
			[]wantErr{{field.ErrorTypeInvalid, "profiles[1].percentageOfNodesToScore"}}},
		"different-queue-sort": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[1].Plugins.QueueSort.Enabled[0].Name = "AnotherSort"
		},
			[]wantErr{{field.ErrorTypeInvalid, "profiles[1].plugins.queueSort"}}},
		"one-empty-queue-sort": {func(c *kschedv1.KubeSchedulerConfiguration) { c.Profiles[0].Plugins = nil },
			[]wantErr{{field.ErrorTypeInvalid, "profiles[1].plugins.queueSort"}}},
		"duplicated-plugin-config": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[0].PluginConfig = []kschedv1.PluginConfig{{Name: "config"}, {Name: "config"}}
		}, []wantErr{{field.ErrorTypeDuplicate, "profiles[0].pluginConfig[1]"}}},
		"mismatch-queue-sort": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles = []kschedv1.KubeSchedulerProfile{{
				SchedulerName: ptr.To("me"),
				Plugins:       &kschedv1.Plugins{QueueSort: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: "PrioritySort"}}}},
				PluginConfig:  []kschedv1.PluginConfig{{Name: "PrioritySort"}},
			}, {
				SchedulerName: ptr.To("other"),
				Plugins:       &kschedv1.Plugins{QueueSort: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{{Name: "CustomSort"}}}},
				PluginConfig:  []kschedv1.PluginConfig{{Name: "CustomSort"}},
			}}
		}, []wantErr{{field.ErrorTypeInvalid, "profiles[1].plugins.queueSort"}}},
		"queue-sort-args-differ": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[0].PluginConfig = []kschedv1.PluginConfig{{Name: "CustomSort", Args: runtime.RawExtension{Raw: []byte(`{"a":1}`)}}}
			c.Profiles[1].PluginConfig = []kschedv1.PluginConfig{{Name: "CustomSort", Args: runtime.RawExtension{Raw: []byte(`{"a":2}`)}}}
		}, []wantErr{{field.ErrorTypeInvalid, "profiles[1].pluginConfig.args"}}},
		"invalid-plugins": {func(c *kschedv1.KubeSchedulerConfiguration) {
			for _, n := range []string{"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"} {
				c.Profiles[0].Plugins.Score.Enabled = append(c.Profiles[0].Plugins.Score.Enabled, kschedv1.Plugin{Name: n})
			}
		}, []wantErr{
			{field.ErrorTypeInvalid, "profiles[0].plugins.score.enabled[0]"},
			{field.ErrorTypeInvalid, "profiles[0].plugins.score.enabled[1]"},
			{field.ErrorTypeInvalid, "profiles[0].plugins.score.enabled[2]"},
			{field.ErrorTypeInvalid, "profiles[0].plugins.score.enabled[3]"},
		}},
		"valid-plugins": {func(c *kschedv1.KubeSchedulerConfiguration) {
			c.Profiles[0].Plugins.Score.Enabled = append(c.Profiles[0].Plugins.Score.Enabled, kschedv1.Plugin{Name: "PodTopologySpread", Weight: ptr.To[int32](2)})
		}, nil},
		"initial-backoff-not-positive": {func(c *kschedv1.KubeSchedulerConfiguration) { c.PodInitialBackoffSeconds = ptr.To[int64](0) },
			[]wantErr{{field.ErrorTypeInvalid, "podInitialBackoffSeconds"}}},
		"max-backoff-below-initial": {func(c *kschedv1.KubeSchedulerConfiguration) { c.PodInitialBackoffSeconds = ptr.To[int64](5) },
			[]wantErr{{field.ErrorTypeInvalid, "podMaxBackoffSeconds"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := valid.DeepCopy()
			tc.change(c)
			var got []wantErr
			for _, e := range validateKubeScheduler(c) {
				got = append(got, wantErr{e.Type, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want, +got):\n%s", diff)
			}
		})
	}
}

const ksHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

// TestKubeSchedulerSameConfig: the same settings written in either format
// load into the same Config.
func TestKubeSchedulerSameConfig(t *testing.T) {
	own := writeFile(t, `
schedulerName: wasmsched
client: {qps: 20, burst: 40, kubeconfig: /etc/kubeconfig, contentType: application/json}
queue: {initialBackoff: 2s, maxBackoff: 30s}
scheduling: {percentageOfNodesToScore: 40, parallelism: 8}
leaderElection: {enabled: true, namespace: wasmsched, name: wasmsched, leaseDuration: 20s, renewDeadline: 15s, retryPeriod: 3s}
metrics: {profiling: true, contentionProfiling: true}
sandbox: {memoryPages: 512, deadline: 200ms}
policies:
  queueSort: {module: /etc/wasmsched/fifo.wasm, sha256: `+pin+`}
  victimOrder: {module: native}
profiles:
  wasmsched-fifo:
    policies:
      backoffSort: {module: b.wasm}
  wasmsched-native: {}
`)
	upstream := writeFile(t, ksHeader+`
clientConnection: {qps: 20, burst: 40, kubeconfig: /etc/kubeconfig, contentType: application/json}
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 30
percentageOfNodesToScore: 40
parallelism: 8
enableProfiling: true
leaderElection:
  leaderElect: true
  resourceNamespace: wasmsched
  resourceName: wasmsched
  leaseDuration: 20s
  renewDeadline: 15s
  retryPeriod: 3s
profiles:
- schedulerName: wasmsched
  pluginConfig:
  - name: wasmsched.io/Policies
    args:
      queueSort: {module: /etc/wasmsched/fifo.wasm, sha256: `+pin+`}
      victimOrder: {module: native}
      sandbox: {memoryPages: 512, deadline: 200ms}
- schedulerName: wasmsched-native
- schedulerName: wasmsched-fifo
  pluginConfig:
  - name: wasmsched.io/Policies
    args:
      backoffSort: {module: b.wasm}
`)
	a, err := Load(Source{File: own})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(Source{File: upstream})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("wasmsched's format vs KubeSchedulerConfiguration (-own, +upstream):\n%s", diff)
	}
	if b.Profiles[1].SchedulerName != "wasmsched-fifo" || b.Profiles[1].Policies[abi.SlotBackoffSort].Path != "b.wasm" {
		t.Errorf("profiles %+v: want wasmsched-fifo second (sorted by name) with its backoffSort", b.Profiles)
	}
}

// TestKubeSchedulerLayers: the environment and the command line override a
// KubeSchedulerConfiguration's values as they do wasmsched's format, and
// reach the settings it has no field for.
func TestKubeSchedulerLayers(t *testing.T) {
	file := writeFile(t, ksHeader+`
parallelism: 4
percentageOfNodesToScore: 20
leaderElection: {leaderElect: false}
profiles:
- schedulerName: one
  percentageOfNodesToScore: 70
  pluginConfig:
  - name: wasmsched.io/Policies
    args:
      sandbox: {poolSize: 2}
- schedulerName: two
`)
	got, err := Load(Source{
		File:    file,
		Environ: []string{"WASMSCHED_SCHEDULING_PARALLELISM=6", "WASMSCHED_QUEUE_MAX_IN_UNSCHEDULABLE=1m"},
		Overrides: map[string]string{
			"sandbox.poolSize":                       "3",
			"metrics.bindAddress":                    "127.0.0.1:9999",
			"profiles.two.policies.queueSort.module": "two.wasm",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.SchedulerName = "one"
	want.Client.ContentType = "application/vnd.kubernetes.protobuf" // upstream's default
	want.LeaderElection.Namespace, want.LeaderElection.Name = "kube-system", "kube-scheduler"
	want.Scheduling.Parallelism = 6               // env over file
	want.Scheduling.PercentageOfNodesToScore = 20 // file
	want.Queue.MaxInUnschedulable = time.Minute   // env; no field upstream
	want.Sandbox.PoolSize = 3                     // command line over the file's entry
	want.Metrics.BindAddress = "127.0.0.1:9999"   // command line; no field upstream
	want.Profiles = []Profile{
		{SchedulerName: "one", Policies: map[abi.Slot]Module{}, PercentageOfNodesToScore: ptr.To[int32](70)},
		{SchedulerName: "two", Policies: map[abi.Slot]Module{abi.SlotQueueSort: {Path: "two.wasm"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
	if p := got.Profiles[0].Percentage(got.Scheduling.PercentageOfNodesToScore); p != 70 {
		t.Errorf("profile one scores %d%% of nodes, want its own 70", p)
	}
	if p := got.Profiles[1].Percentage(got.Scheduling.PercentageOfNodesToScore); p != 20 {
		t.Errorf("profile two scores %d%% of nodes, want the global 20", p)
	}
}

// TestKubeSchedulerUpstreamDefaults: an empty KubeSchedulerConfiguration
// runs as upstream's defaults say, where they differ from wasmsched's.
func TestKubeSchedulerUpstreamDefaults(t *testing.T) {
	got, err := Load(Source{File: writeFile(t, ksHeader)})
	if err != nil {
		t.Fatal(err)
	}
	want := defaults()
	want.SchedulerName = "default-scheduler"
	want.Profiles[0].SchedulerName = "default-scheduler"
	want.Client.ContentType = "application/vnd.kubernetes.protobuf"
	want.LeaderElection = LeaderElection{Enabled: true, Namespace: "kube-system", Name: "kube-scheduler",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want, +got):\n%s", diff)
	}
}

func TestKubeSchedulerErrors(t *testing.T) {
	cases := []struct {
		name string
		file string
		over map[string]string
		want []string // substrings of the error
	}{
		{"unknown top-level field", ksHeader + "parallelismm: 3\n", nil, []string{`unknown field "parallelismm"`}},
		{"unknown profile field", ksHeader + "profiles:\n- schedulerName: a\n  plugin: {}\n", nil, []string{`unknown field "profiles[0].plugin"`}},
		{"unknown field in in-tree args", ksHeader + `profiles:
- schedulerName: a
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {typ: MostAllocated}}
`, nil, []string{"decoding args for plugin NodeResourcesFit", `unknown field "scoringStrategy.typ"`}},
		{"removed field", ksHeader + "metricsBindAddress: 0.0.0.0:10251\n", nil, []string{`unknown field "metricsBindAddress"`, "metrics.bindAddress"}},
		{"extender", ksHeader + "extenders:\n- urlPrefix: http://extender:8888\n  filterVerb: filter\n", nil,
			[]string{"extenders: Forbidden", "does not call scheduler extenders", "http://extender:8888"}},
		{"delayCacheUntilActive", ksHeader + "delayCacheUntilActive: true\n", nil, []string{"delayCacheUntilActive: Forbidden"}},
		{"beta version", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", nil,
			[]string{"apiVersion kubescheduler.config.k8s.io/v1beta3", "convert the file to v1"}},
		{"other kind", "apiVersion: v1\nkind: ConfigMap\n", nil, []string{`kind "ConfigMap": not a configuration wasmsched reads`}},
		{"upstream validation", ksHeader + "parallelism: 0\npodInitialBackoffSeconds: 20\n", nil,
			[]string{"parallelism: Invalid value: 0", "podMaxBackoffSeconds: Invalid value: 10"}},
		{"out of wasmsched's range", ksHeader + "parallelism: 5000\n", nil,
			[]string{"parallelism: 5000 is out of range: allowed 1 to 1024 (wasmsched's scheduling.parallelism)"}},
		{"backoff too long", ksHeader + "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 99999999999\n", nil,
			[]string{"podMaxBackoffSeconds: 99999999999 is out of range"}},
		{"lock not leases with election turned on over the file", ksHeader + "leaderElection: {leaderElect: false, resourceLock: endpointsleases}\n",
			map[string]string{"leaderElection.enabled": "true"}, []string{`resourceLock "endpointsleases"`, "wasmsched holds a Lease only"}},
		{"unknown slot", ksHeader + `profiles:
- schedulerName: a
  pluginConfig:
  - name: wasmsched.io/Policies
    args: {queueSrot: {module: a.wasm}}
`, nil, []string{`profiles[0].pluginConfig[0] (wasmsched.io/Policies): args: unknown field "queueSrot"; did you mean "queueSort"?`}},
		{"unknown slot field", ksHeader + `profiles:
- schedulerName: a
  pluginConfig:
  - name: wasmsched.io/Policies
    args: {queueSort: {modul: a.wasm}}
`, nil, []string{`args.queueSort: unknown field "modul"; did you mean "module"?`}},
		{"bad sha256", ksHeader + `profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: wasmsched.io/Policies
    args: {queueSort: {module: a.wasm, sha256: abc}}
`, nil, []string{`profiles[1].pluginConfig[0] (wasmsched.io/Policies): args.queueSort.sha256: "abc" is not a sha256`}},
		{"sandbox outside the first profile", ksHeader + `profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: wasmsched.io/Policies
    args: {sandbox: {memoryPages: 64}}
`, nil, []string{"profiles[1].pluginConfig[0] (wasmsched.io/Policies): args.sandbox: the sandbox limits apply to every profile"}},
		{"bad sandbox value", ksHeader + `profiles:
- schedulerName: a
  pluginConfig:
  - name: wasmsched.io/Policies
    args: {sandbox: {memoryPages: 1, deadline: soon}}
`, nil, []string{"args.sandbox.memoryPages: 1 is out of range", "args.sandbox.deadline: soon is not a duration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Source{File: writeFile(t, tc.file), Overrides: tc.over})
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestKubeSchedulerPlugins: a profile's plugins and args reach Profile as
// written (wasmsched's own entry removed); what the registry's Check
// refuses stops the load with the profile named.
func TestKubeSchedulerPlugins(t *testing.T) {
	got, err := Load(Source{File: writeFile(t, ksHeader+`
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: NodeResourcesBalancedAllocation}]
      enabled: [{name: TaintToleration, weight: 5}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
  - name: wasmsched.io/Policies
    args: {queueSort: {module: native}}
  - name: DefaultPreemption
    args: {minCandidateNodesAbsolute: 5}
`)})
	if err != nil {
		t.Fatal(err)
	}
	p := got.Profiles[0]
	wantPlugins := &kschedv1.Plugins{Score: kschedv1.PluginSet{
		Disabled: []kschedv1.Plugin{{Name: "NodeResourcesBalancedAllocation"}},
		Enabled:  []kschedv1.Plugin{{Name: "TaintToleration", Weight: ptr.To[int32](5)}},
	}}
	if diff := cmp.Diff(wantPlugins, p.Plugins); diff != "" {
		t.Errorf("plugins (-want, +got):\n%s", diff)
	}
	var names []string
	for _, pc := range p.PluginConfig {
		names = append(names, pc.Name)
	}
	if diff := cmp.Diff([]string{"NodeResourcesFit", "DefaultPreemption"}, names); diff != "" {
		t.Errorf("pluginConfig names (-want, +got):\n%s", diff)
	}
	if a, ok := p.PluginConfig[0].Args.Object.(*kschedv1.NodeResourcesFitArgs); !ok || a.ScoringStrategy == nil || a.ScoringStrategy.Type != kschedv1.MostAllocated {
		t.Errorf("NodeResourcesFit args %#v: want the typed MostAllocated args", p.PluginConfig[0].Args.Object)
	}
	if !p.Policies[abi.SlotQueueSort].Native {
		t.Errorf("queueSort %+v: want native", p.Policies[abi.SlotQueueSort])
	}

	for _, tc := range []struct{ name, profile, want string }{
		{"unknown plugin", "  plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n", "Coscheduling"},
		{"bad args", "  pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Mostallocated}}\n", "Mostallocated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(Source{File: writeFile(t, ksHeader+"profiles:\n- schedulerName: a\n- schedulerName: b\n"+tc.profile),
				Plugins: plugins.InTree()})
			if err == nil {
				t.Fatal("loaded; want an error")
			}
			for _, w := range []string{"profiles[1] (schedulerName b)", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestHelpExamples: both examples of Help load, and describe the same
// profiles and slots.
func TestHelpExamples(t *testing.T) {
	example := func(start string) string {
		i := strings.Index(helpIntro, start)
		if i < 0 {
			t.Fatalf("Help has no example starting %q", start)
		}
		var lines []string
		for _, l := range strings.Split(helpIntro[i:], "\n") {
			if strings.TrimSpace(l) == "" {
				break
			}
			lines = append(lines, strings.TrimPrefix(l, "     "))
		}
		return strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "<64 hex digits>", pin)
	}
	ks, err := Load(Source{File: writeFile(t, example("     apiVersion"))})
	if err != nil {
		t.Fatalf("the KubeSchedulerConfiguration example: %v", err)
	}
	own, err := Load(Source{File: writeFile(t, example("     schedulerName"))})
	if err != nil {
		t.Fatalf("wasmsched's example: %v", err)
	}
	for i, c := range []*Config{ks, own} {
		if len(c.Profiles) != 2 || c.Profiles[0].SchedulerName != "wasmsched" || c.Profiles[1].SchedulerName != "wasmsched-batch" ||
			c.Profiles[0].Policies[abi.SlotQueueSort].Path != "/etc/wasmsched/fifo.wasm" ||
			c.Profiles[1].Policies[abi.SlotBackoffSort].Path != "/etc/wasmsched/batch.wasm" {
			t.Errorf("example %d: profiles %+v", i, c.Profiles)
		}
	}
}
