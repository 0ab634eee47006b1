package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/abi"
)

// A configuration file is either wasmsched's own keys or an upstream
// KubeSchedulerConfiguration; apiVersion and kind tell them apart.
const (
	KubeSchedulerAPIVersion = "kubescheduler.config.k8s.io/v1"
	KubeSchedulerKind       = "KubeSchedulerConfiguration"
	// PoliciesPlugin is the pluginConfig entry of a KubeSchedulerConfiguration
	// profile that holds wasmsched's own settings: the profile's policy slots
	// and, in the first profile, the sandbox limits. Upstream kube-scheduler
	// keeps the args of a plugin it does not run without reading them, so a
	// file with this entry still loads there.
	PoliciesPlugin = "wasmsched.io/Policies"
)

// Upstream v1 defaults (pkg/scheduler/apis/config/v1/defaults.go) that
// differ from wasmsched's own.
const (
	upstreamSchedulerName = corev1.DefaultSchedulerName // the one profile's name when unset
	upstreamContentType   = "application/vnd.kubernetes.protobuf"
	leasesLock            = "leases"
)

// kubeSchedulerLayer is what a KubeSchedulerConfiguration file sets.
type kubeSchedulerLayer struct {
	// values are the fixed keys the file sets, in their defaults' types,
	// each already checked by its key.
	values map[string]any
	// defaultProfile is the first profile's plugins: the default profile's
	// whatever its final name (schedulerName may be overridden).
	defaultProfile profilePlugins
	// others are the further profiles' plugins by scheduler name; their
	// slots go to the profileValues of the file.
	others map[string]profilePlugins
	// lock is leaderElection.resourceLock when it is not leases and leader
	// election is off in the file: upstream allows that, so it is refused
	// only if leader election is turned on over the file.
	lock string
}

// profilePlugins is what a KubeSchedulerConfiguration profile adds to a
// Profile.
type profilePlugins struct {
	percentage   *int32
	plugins      *kschedv1.Plugins
	pluginConfig []kschedv1.PluginConfig
}

func (pp profilePlugins) apply(p *Profile) {
	p.PercentageOfNodesToScore, p.Plugins, p.PluginConfig = pp.percentage, pp.plugins, pp.pluginConfig
}

// fileHeader is what tells the two formats apart.
type fileHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// isKubeSchedulerFile reports whether data is a KubeSchedulerConfiguration
// v1. A file naming another apiVersion or kind is an error; one naming
// neither is wasmsched's format (and YAML that does not parse is left to
// its loader to report).
func isKubeSchedulerFile(data []byte) (bool, error) {
	var h fileHeader
	if err := yaml.Unmarshal(data, &h); err != nil || h.APIVersion == "" && h.Kind == "" {
		return false, nil
	}
	switch {
	case h.APIVersion == KubeSchedulerAPIVersion && h.Kind == KubeSchedulerKind:
		return true, nil
	case strings.HasPrefix(h.APIVersion, kschedv1.GroupName+"/") && h.Kind == KubeSchedulerKind:
		return false, fmt.Errorf("apiVersion %s: wasmsched reads %s %s only (upstream removed the beta versions too): convert the file to v1",
			h.APIVersion, KubeSchedulerKind, KubeSchedulerAPIVersion)
	default:
		return false, fmt.Errorf("apiVersion %q, kind %q: not a configuration wasmsched reads: write either apiVersion %s with kind %s, "+
			"or wasmsched's own keys with neither (wasmsched help config describes both)", h.APIVersion, h.Kind, KubeSchedulerAPIVersion, KubeSchedulerKind)
	}
}

// decodeKubeScheduler decodes a KubeSchedulerConfiguration v1 strictly, with
// the k8s.io/kube-scheduler types: an unknown field, in the file or in the
// args of an in-tree plugin, is an error naming it. The args of the in-tree
// plugins are decoded into their types (Args.Object); others, wasmsched's
// own entry included, stay raw JSON.
func decodeKubeScheduler(data []byte) (*kschedv1.KubeSchedulerConfiguration, error) {
	scheme := runtime.NewScheme()
	if err := kschedv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	obj, _, err := codecs.UniversalDecoder(kschedv1.SchemeGroupVersion).Decode(data, nil, nil)
	if err != nil {
		return nil, explainRemoved(err)
	}
	c, ok := obj.(*kschedv1.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("decoded a %T, not a %s", obj, KubeSchedulerKind)
	}
	return c, nil
}

// removedFields are top-level fields of earlier versions that v1 no longer
// has, with where their setting went in wasmsched.
var removedFields = map[string]string{
	"healthzBindAddress":                "v1 has no healthzBindAddress (upstream serves /healthz on its secure port); wasmsched serves /healthz on metrics.bindAddress: set it with --metrics-bind-address, -set metrics.bindAddress=ADDR or WASMSCHED_METRICS_BIND_ADDRESS",
	"metricsBindAddress":                "v1 has no metricsBindAddress (upstream serves /metrics on its secure port); wasmsched serves /metrics on metrics.bindAddress: set it with --metrics-bind-address, -set metrics.bindAddress=ADDR or WASMSCHED_METRICS_BIND_ADDRESS",
	"podMaxInUnschedulablePodsDuration": "v1 has no podMaxInUnschedulablePodsDuration; wasmsched's queue.maxInUnschedulable is the same setting: set it with -set queue.maxInUnschedulable=5m or WASMSCHED_QUEUE_MAX_IN_UNSCHEDULABLE",
}

// explainRemoved adds to a strict decoding error what to do about each
// removed field it names.
func explainRemoved(err error) error {
	var hints []string
	for _, f := range slices.Sorted(maps.Keys(removedFields)) {
		if strings.Contains(err.Error(), fmt.Sprintf("unknown field %q", f)) {
			hints = append(hints, removedFields[f])
		}
	}
	if len(hints) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(hints, "; "))
}

// defaultKubeScheduler sets upstream v1's defaults of the top-level fields
// (SetDefaults_KubeSchedulerConfiguration); plugins and their args are
// the plugin registry's (Source.Plugins). One deviation: enableProfiling left
// unset stays unset, which keeps wasmsched's metrics.profiling default
// (off), because wasmsched's listener has no authentication where
// upstream's secure port has (docs/RATIONALE.md).
func defaultKubeScheduler(c *kschedv1.KubeSchedulerConfiguration) {
	if c.Parallelism == nil {
		c.Parallelism = ptr.To[int32](16)
	}
	if len(c.Profiles) == 0 {
		c.Profiles = []kschedv1.KubeSchedulerProfile{{}}
	}
	// Only a single profile gets a default name; validation requires the
	// others'.
	if len(c.Profiles) == 1 && c.Profiles[0].SchedulerName == nil {
		c.Profiles[0].SchedulerName = ptr.To(upstreamSchedulerName)
	}
	if c.PercentageOfNodesToScore == nil {
		c.PercentageOfNodesToScore = ptr.To[int32](0)
	}
	le := &c.LeaderElection
	if le.ResourceLock == "" {
		le.ResourceLock = leasesLock
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = kschedv1.SchedulerDefaultLockObjectNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = kschedv1.SchedulerDefaultLockObjectName
	}
	if le.LeaseDuration.Duration == 0 {
		le.LeaseDuration.Duration = 15 * time.Second
	}
	if le.RenewDeadline.Duration == 0 {
		le.RenewDeadline.Duration = 10 * time.Second
	}
	if le.RetryPeriod.Duration == 0 {
		le.RetryPeriod.Duration = 2 * time.Second
	}
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	cc := &c.ClientConnection
	if cc.ContentType == "" {
		cc.ContentType = upstreamContentType
	}
	if cc.QPS == 0 {
		cc.QPS = 50
	}
	if cc.Burst == 0 {
		cc.Burst = 100
	}
	if c.PodInitialBackoffSeconds == nil {
		c.PodInitialBackoffSeconds = ptr.To[int64](1)
	}
	if c.PodMaxBackoffSeconds == nil {
		c.PodMaxBackoffSeconds = ptr.To[int64](10)
	}
	if c.EnableProfiling != nil && *c.EnableProfiling && c.EnableContentionProfiling == nil {
		c.EnableContentionProfiling = ptr.To(true)
	}
}

// invalidPlugins are the plugins removed in or before v1, which upstream
// refuses by name.
var invalidPlugins = []string{"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"}

// validateKubeScheduler checks a defaulted configuration as upstream's
// ValidateKubeSchedulerConfiguration does, for the fields wasmsched
// supports; plugin args are checked by the plugin registry (Source.Plugins).
func validateKubeScheduler(c *kschedv1.KubeSchedulerConfiguration) field.ErrorList {
	var errs field.ErrorList
	if c.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), c.ClientConnection.Burst, "must be non-negative"))
	}
	le, lePath := c.LeaderElection, field.NewPath("leaderElection")
	if ptr.Deref(le.LeaderElect, false) {
		if le.LeaseDuration.Duration <= 0 {
			errs = append(errs, field.Invalid(lePath.Child("leaseDuration"), le.LeaseDuration, "must be greater than zero"))
		}
		if le.RenewDeadline.Duration <= 0 {
			errs = append(errs, field.Invalid(lePath.Child("renewDeadline"), le.RenewDeadline, "must be greater than zero"))
		}
		if le.RetryPeriod.Duration <= 0 {
			errs = append(errs, field.Invalid(lePath.Child("retryPeriod"), le.RetryPeriod, "must be greater than zero"))
		}
		if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, field.Invalid(lePath.Child("leaseDuration"), le.RenewDeadline, "must be greater than `RenewDeadline`"))
		}
		if le.ResourceLock == "" {
			errs = append(errs, field.Required(lePath.Child("resourceLock"), ""))
		}
		if le.ResourceNamespace == "" {
			errs = append(errs, field.Required(lePath.Child("resourceNamespace"), ""))
		}
		if le.ResourceName == "" {
			errs = append(errs, field.Required(lePath.Child("resourceName"), ""))
		}
		if le.ResourceLock != leasesLock {
			errs = append(errs, field.Invalid(lePath.Child("resourceLock"), le.ResourceLock, `resourceLock value must be "leases"`))
		}
	}
	if p := ptr.Deref(c.Parallelism, 0); p <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), p, "should be an integer value greater than zero"))
	}
	profilesPath := field.NewPath("profiles")
	if len(c.Profiles) == 0 {
		errs = append(errs, field.Required(profilesPath, ""))
	} else {
		seen := map[string]int{}
		for i := range c.Profiles {
			prof, path := &c.Profiles[i], profilesPath.Index(i)
			name := ptr.Deref(prof.SchedulerName, "")
			if name == "" {
				errs = append(errs, field.Required(path.Child("schedulerName"), ""))
			}
			errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), prof.PercentageOfNodesToScore)...)
			errs = append(errs, validatePluginNames(path, prof)...)
			if j, ok := seen[name]; ok {
				errs = append(errs, field.Duplicate(path.Child("schedulerName"), profilesPath.Index(j).Child("schedulerName")))
			}
			seen[name] = i
		}
		errs = append(errs, validateCommonQueueSort(profilesPath, c.Profiles)...)
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), c.PercentageOfNodesToScore)...)
	initial, maxBackoff := ptr.Deref(c.PodInitialBackoffSeconds, 0), ptr.Deref(c.PodMaxBackoffSeconds, 0)
	if initial <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), initial, "must be greater than 0"))
	}
	if maxBackoff < initial {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), maxBackoff, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	return errs
}

func validatePercentage(path *field.Path, p *int32) field.ErrorList {
	if p != nil && (*p < 0 || *p > 100) {
		return field.ErrorList{field.Invalid(path, *p, "not in valid range [0-100]")}
	}
	return nil
}

// validatePluginNames refuses the removed plugins and repeated pluginConfig
// names, as upstream's validatePluginConfig.
func validatePluginNames(path *field.Path, prof *kschedv1.KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	invalid := func(name string) bool { return slices.Contains(invalidPlugins, name) }
	const why = `was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")`
	if p := prof.Plugins; p != nil {
		for point, set := range extensionPoints(p) {
			for i, pl := range set.Enabled {
				if invalid(pl.Name) {
					errs = append(errs, field.Invalid(path.Child("plugins", point, "enabled").Index(i), pl.Name, why))
				}
			}
		}
	}
	seen := map[string]bool{}
	for i, pc := range prof.PluginConfig {
		p := path.Child("pluginConfig").Index(i)
		if seen[pc.Name] {
			errs = append(errs, field.Duplicate(p, pc.Name))
		}
		seen[pc.Name] = true
		if invalid(pc.Name) {
			errs = append(errs, field.Invalid(p, pc.Name, why))
		}
	}
	slices.SortFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// extensionPoints are a profile's plugin sets by their field names.
func extensionPoints(p *kschedv1.Plugins) map[string]kschedv1.PluginSet {
	return map[string]kschedv1.PluginSet{
		"preEnqueue": p.PreEnqueue, "queueSort": p.QueueSort, "preFilter": p.PreFilter, "filter": p.Filter,
		"postFilter": p.PostFilter, "preScore": p.PreScore, "score": p.Score, "reserve": p.Reserve,
		"permit": p.Permit, "preBind": p.PreBind, "bind": p.Bind, "postBind": p.PostBind,
		"multiPoint": p.MultiPoint, "placementGenerate": p.PlacementGenerate, "placementScore": p.PlacementScore,
		"podGroupPostFilter": p.PodGroupPostFilter,
	}
}

// validateCommonQueueSort requires every profile's queueSort set to be the
// first profile's, and at most one queue sort plugin, as upstream: one
// queue serves every profile there.
func validateCommonQueueSort(path *field.Path, profiles []kschedv1.KubeSchedulerProfile) field.ErrorList {
	var errs field.ErrorList
	queueSort := func(p kschedv1.KubeSchedulerProfile) kschedv1.PluginSet {
		if p.Plugins == nil {
			return kschedv1.PluginSet{}
		}
		return p.Plugins.QueueSort
	}
	canon := queueSort(profiles[0])
	if n := len(canon.Enabled); n > 1 {
		errs = append(errs, field.Invalid(path.Index(0).Child("plugins", "queueSort", "Enabled"), n, "only one queue sort plugin can be enabled"))
	}
	var name string
	var args runtime.RawExtension
	if len(canon.Enabled) > 0 {
		name = canon.Enabled[0].Name
		for _, pc := range profiles[0].PluginConfig {
			if pc.Name == name {
				args = pc.Args
			}
		}
	}
	for i := 1; i < len(profiles); i++ {
		if cur := queueSort(profiles[i]); !equality.Semantic.DeepEqual(canon, cur) {
			errs = append(errs, field.Invalid(path.Index(i).Child("plugins", "queueSort"), cur, "must be the same for all profiles"))
		}
		for _, pc := range profiles[i].PluginConfig {
			if name != "" && pc.Name == name && string(pc.Args.Raw) != string(args.Raw) {
				errs = append(errs, field.Invalid(path.Index(i).Child("pluginConfig", "args"), string(pc.Args.Raw), "queueSort must be the same for all profiles"))
			}
		}
	}
	return errs
}

// refuseUnsupported names what a KubeSchedulerConfiguration may set that
// wasmsched cannot honour; plugins it does not have are the plugin registry's (Source.Plugins).
func refuseUnsupported(c *kschedv1.KubeSchedulerConfiguration) field.ErrorList {
	var errs field.ErrorList
	if len(c.Extenders) > 0 {
		errs = append(errs, field.Forbidden(field.NewPath("extenders"), fmt.Sprintf(
			"wasmsched does not call scheduler extenders (%d configured, the first at %q): remove them; what an extender decides belongs in a native plugin or a policy module",
			len(c.Extenders), c.Extenders[0].URLPrefix)))
	}
	if c.DelayCacheUntilActive {
		errs = append(errs, field.Forbidden(field.NewPath("delayCacheUntilActive"),
			"wasmsched fills its informer caches before the leader election, so that a new leader schedules at once: remove delayCacheUntilActive or set it to false"))
	}
	return errs
}

// loadKubeScheduler reads a KubeSchedulerConfiguration into a layer: the
// keys it maps to, each checked as the key would be, the profiles' plugins,
// and the further profiles' slots into profiles. Every error names the
// file's field.
func loadKubeScheduler(data []byte, where string, profiles profileValues, plugins PluginChecker) (*kubeSchedulerLayer, []error) {
	c, err := decodeKubeScheduler(data)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", where, err)}
	}
	defaultKubeScheduler(c)
	var errs []error
	for _, e := range append(validateKubeScheduler(c), refuseUnsupported(c)...) {
		errs = append(errs, fmt.Errorf("%s: %w", where, e))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	l := &kubeSchedulerLayer{values: map[string]any{}, others: map[string]profilePlugins{}}
	set := func(fieldName, key string, v any) {
		k, _ := lookup(key)
		if _, err := k.set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w (wasmsched's %s)", where, fieldName, err, key))
			return
		}
		l.values[key] = v
	}
	set("profiles[0].schedulerName", "schedulerName", *c.Profiles[0].SchedulerName)
	cc := c.ClientConnection
	set("clientConnection.qps", "client.qps", float64(cc.QPS))
	set("clientConnection.burst", "client.burst", int64(cc.Burst))
	set("clientConnection.kubeconfig", "client.kubeconfig", cc.Kubeconfig)
	set("clientConnection.contentType", "client.contentType", cc.ContentType)
	set("clientConnection.acceptContentTypes", "client.acceptContentTypes", cc.AcceptContentTypes)
	set("parallelism", "scheduling.parallelism", int64(*c.Parallelism))
	set("percentageOfNodesToScore", "scheduling.percentageOfNodesToScore", int64(*c.PercentageOfNodesToScore))
	for _, b := range []struct {
		field, key string
		seconds    int64
	}{{"podInitialBackoffSeconds", "queue.initialBackoff", *c.PodInitialBackoffSeconds}, {"podMaxBackoffSeconds", "queue.maxBackoff", *c.PodMaxBackoffSeconds}} {
		if b.seconds > int64(24*time.Hour/time.Second) { // and no overflow below
			errs = append(errs, fmt.Errorf("%s: %s: %d is out of range: allowed up to %d (a day)", where, b.field, b.seconds, int64(24*time.Hour/time.Second)))
			continue
		}
		set(b.field, b.key, time.Duration(b.seconds)*time.Second)
	}
	le := c.LeaderElection
	set("leaderElection.leaderElect", "leaderElection.enabled", *le.LeaderElect)
	set("leaderElection.resourceNamespace", "leaderElection.namespace", le.ResourceNamespace)
	set("leaderElection.resourceName", "leaderElection.name", le.ResourceName)
	set("leaderElection.leaseDuration", "leaderElection.leaseDuration", le.LeaseDuration.Duration)
	set("leaderElection.renewDeadline", "leaderElection.renewDeadline", le.RenewDeadline.Duration)
	set("leaderElection.retryPeriod", "leaderElection.retryPeriod", le.RetryPeriod.Duration)
	if le.ResourceLock != leasesLock {
		l.lock = le.ResourceLock
	}
	if c.EnableProfiling != nil {
		set("enableProfiling", "metrics.profiling", *c.EnableProfiling)
	}
	if c.EnableContentionProfiling != nil {
		set("enableContentionProfiling", "metrics.contentionProfiling", *c.EnableContentionProfiling)
	}

	for i := range c.Profiles {
		prof := &c.Profiles[i]
		name := *prof.SchedulerName
		path := field.NewPath("profiles").Index(i)
		pp := profilePlugins{percentage: prof.PercentageOfNodesToScore, plugins: prof.Plugins}
		if i > 0 {
			profiles.set(name, "", nil)
		}
		for j, pc := range prof.PluginConfig {
			if pc.Name != PoliciesPlugin {
				pp.pluginConfig = append(pp.pluginConfig, pc)
				continue
			}
			entry := path.Child("pluginConfig").Index(j).String() + " (" + PoliciesPlugin + ")"
			perrs := decodePolicies(pc.Args.Raw, i == 0, func(key string, v any) error {
				k, _ := lookup(key)
				if _, err := k.set(v); err != nil {
					return err
				}
				if i == 0 || strings.HasPrefix(key, "sandbox.") {
					l.values[key] = v
				} else {
					profiles.set(name, key, v)
				}
				return nil
			})
			for _, err := range perrs {
				errs = append(errs, fmt.Errorf("%s: %s: %w", where, entry, err))
			}
		}
		// The plugins are checked here, where the profile's index is known;
		// the scheduler builds them with its informers (host/app).
		if plugins != nil {
			if err := plugins.Check(pp.plugins, pp.pluginConfig); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s (schedulerName %s): %w", where, path, name, err))
			}
		}
		if i == 0 {
			l.defaultProfile = pp
		} else {
			l.others[name] = pp
		}
	}
	return l, errs
}

// decodePolicies reads the args of a PoliciesPlugin entry: per slot
// {module, sha256}, and in the first profile sandbox limits; store receives
// each as the key it sets (policies.<slot>.<field>, sandbox.<field>) and
// returns the key's error for a value it refuses. Errors name the field
// under args.
func decodePolicies(raw []byte, first bool, store func(key string, v any) error) []error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return []error{fmt.Errorf("args: want a mapping of slots (and sandbox) to settings: %w", err)}
	}
	var sandboxFields, names []string
	for _, k := range keys {
		if f, ok := strings.CutPrefix(k.name, "sandbox."); ok {
			sandboxFields = append(sandboxFields, f)
		}
	}
	for _, s := range abi.Slots {
		names = append(names, s.String())
	}
	names = append(names, "sandbox")
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(args)) {
		v := args[name]
		if v == nil {
			continue
		}
		fields, ok := v.(map[string]any)
		var allowed []string
		prefix := ""
		slot, isSlot := abi.ParseSlot(name)
		switch {
		case isSlot:
			allowed, prefix = policyFields(slot), "policies."+name+"."
		case name == "sandbox" && !first:
			errs = append(errs, fmt.Errorf("args.sandbox: the sandbox limits apply to every profile: set them in the first profile's %s entry", PoliciesPlugin))
			continue
		case name == "sandbox":
			allowed, prefix = sandboxFields, "sandbox."
		default:
			errs = append(errs, fmt.Errorf("args: unknown field %q%s: want one of %s", name, didYouMean(name, names), strings.Join(names, ", ")))
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("args.%s: %v is not a mapping: want fields %s", name, v, strings.Join(allowed, ", ")))
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if !slices.Contains(allowed, f) {
				errs = append(errs, fmt.Errorf("args.%s: unknown field %q%s: want one of %s", name, f, didYouMean(f, allowed), strings.Join(allowed, ", ")))
				continue
			}
			if fields[f] == nil {
				continue
			}
			if err := store(prefix+f, fields[f]); err != nil {
				errs = append(errs, fmt.Errorf("args.%s.%s: %w", name, f, err))
			}
		}
	}
	return errs
}
