package config

import (
	"fmt"
	"strings"
)

// helpIntro describes the two file formats and the layers; Help follows
// it with every key.
const helpIntro = `A configuration file (-config FILE) is one of two forms.

1. A KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1),
   as upstream kube-scheduler reads it, with upstream's defaults:

     apiVersion: kubescheduler.config.k8s.io/v1
     kind: KubeSchedulerConfiguration
     clientConnection: {qps: 50, burst: 100}      # kubeconfig, contentType too
     leaderElection:
       leaderElect: true
       resourceNamespace: wasmsched               # default kube-system
       resourceName: wasmsched                    # default kube-scheduler
     percentageOfNodesToScore: 0
     parallelism: 16
     podInitialBackoffSeconds: 1
     podMaxBackoffSeconds: 10
     profiles:
     - schedulerName: wasmsched                   # the first profile is the default profile
       plugins:
         score:
           disabled: [{name: NodeResourcesBalancedAllocation}]
           enabled: [{name: TaintToleration, weight: 5}]
       pluginConfig:
       - name: NodeResourcesFit
         args:
           scoringStrategy:
             type: MostAllocated
             resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
       - name: wasmsched.io/Policies               # wasmsched's own settings
         args:
           queueSort: {module: /etc/wasmsched/fifo.wasm, sha256: <64 hex digits>}
           victimOrder: {module: native}
           sandbox: {memoryPages: 256, deadline: 100ms}   # first profile only
     - schedulerName: wasmsched-batch
       percentageOfNodesToScore: 50
       pluginConfig:
       - name: wasmsched.io/Policies
         args:
           backoffSort: {module: /etc/wasmsched/batch.wasm}

   Every profile's plugins and pluginConfig apply wherever the plugin runs:
   the scheduling cycle, preemption's dry runs and the pod-group cycle.
   The wasmsched.io/Policies entry holds a profile's policy slots (queueSort,
   backoffSort, preEnqueue, queueingHint, victimOrder, each {module, sha256}
   as the policies.<slot>.* keys below) and, in the first profile only, the
   sandbox limits (the sandbox.* keys below, which apply to every profile).
   Upstream kube-scheduler ignores that entry, so the same file runs there.
   Refused at start, with the field named: extenders, plugins wasmsched
   does not have (out-of-tree ones), extension points it does not run,
   delayCacheUntilActive: true, and the fields v1 removed
   (healthzBindAddress, metricsBindAddress). enableProfiling and
   enableContentionProfiling set metrics.profiling and
   metrics.contentionProfiling; unset, profiling stays off (wasmsched's
   listener has no authentication). Unknown fields are errors.

2. wasmsched's own keys, listed below, as nested YAML (no apiVersion):

     schedulerName: wasmsched
     sandbox: {memoryPages: 256}
     policies:
       queueSort: {module: /etc/wasmsched/fifo.wasm}
     profiles:
       wasmsched-batch:
         policies:
           backoffSort: {module: /etc/wasmsched/batch.wasm}

   It has no plugins or pluginConfig: its profiles run upstream's default
   plugins with their default args.

Precedence, lowest first: defaults, then the file (either form), then
WASMSCHED_* environment variables, then -set key=value and the run
command's flags (-scheduler-name, -metrics-bind-address, -leader-elect,
-kubeconfig, -log-level, -logging-format, -v). The keys below work on
top of either form, so the settings a KubeSchedulerConfiguration has no
field for (queue.maxInUnschedulable, queue.popFromBackoffQ,
scheduling.assumedPodTTL, metrics.*, policies.adminEndpoint, logging.*)
are set through the environment or -set. A profile's own
percentageOfNodesToScore wins over the global one.

Keys, with their environment variable and default:
`

// Help describes both file forms, then every key with its environment
// variable and default.
func Help() string {
	nameW, envW := 0, 0
	for _, k := range keys {
		nameW, envW = max(nameW, len(k.name)), max(envW, len(EnvName(k.name)))
	}
	var b strings.Builder
	b.WriteString(helpIntro)
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
