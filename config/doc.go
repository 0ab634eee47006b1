// Package config loads wasmsched's configuration into plain typed structs:
// defaults, then a YAML file, then WASMSCHED_* environment variables, then
// command-line overrides, each layer replacing the one before. Every key is
// known in advance: an unknown key, a value of the wrong type or one out of
// range is an error that names the key, what was wrong and what is allowed.
//
// Only this package imports koanf; subsystems receive the typed values.
//
// # KubeSchedulerConfiguration files
//
// A file with apiVersion kubescheduler.config.k8s.io/v1 and kind
// KubeSchedulerConfiguration is read as upstream kube-scheduler reads it
// (kubescheduler.go): decoded strictly with the k8s.io/kube-scheduler
// types, defaulted and validated as upstream for the top-level fields, and
// mapped onto the same keys as the file layer, so that the environment and
// the command line apply on top of either form. Its profiles keep their
// plugins and pluginConfig for the scheduler's plugin registry, which checks
// them at load (Source.Plugins) to refuse what wasmsched cannot run; a profile's pluginConfig entry
// named PoliciesPlugin holds its policy slots (and, in the first profile,
// the sandbox limits). What wasmsched cannot honour is refused, never
// ignored: extenders, delayCacheUntilActive, removed fields.
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
