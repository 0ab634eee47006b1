package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/host/volume"
)

// This file decodes, defaults (upstream's pkg/scheduler/apis/config/v1
// defaults.go) and validates (validation_pluginargs.go) the pluginConfig
// args of the plugins wasmsched implements, into the plugins' fields.

// maxCustomPriorityScore is upstream's config.MaxCustomPriorityScore: the
// top of RequestedToCapacityRatio's shape scores, scaled to MaxNodeScore.
const maxCustomPriorityScore = 10

// defaultResources is upstream's defaultResourceSpec.
var defaultResources = []kschedv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}

// decodeArgs decodes, defaults and validates configs through the rows'
// Args, each plugin with args but without a config getting upstream's
// defaults, by plugin name.
func (r *Registry) decodeArgs(configs []kschedv1.PluginConfig) (map[string]any, error) {
	out := map[string]any{}
	for i := range configs {
		pc := &configs[i]
		entry := field.NewPath("pluginConfig").Index(i)
		if _, dup := out[pc.Name]; dup {
			return nil, field.Duplicate(entry, pc.Name)
		}
		row, ok := r.Row(pc.Name)
		switch {
		case !ok || row.NotImplemented != "":
			return nil, field.Invalid(entry.Child("name"), pc.Name,
				"args for a plugin wasmsched does not know: it runs upstream v1.37.1's in-tree plugins and those its binary was built with")
		case row.Args == nil:
			return nil, field.Invalid(entry.Child("name"), pc.Name, "this plugin takes no args: remove its pluginConfig entry")
		}
		a, err := row.Args(pc, entry.Child("args"))
		if err != nil {
			return nil, err
		}
		out[pc.Name] = a
	}
	for _, row := range r.rows {
		if _, ok := out[row.Name]; ok || row.Args == nil || row.NotImplemented != "" {
			continue
		}
		a, err := row.Args(nil, field.NewPath("pluginConfig").Key(row.Name).Child("args"))
		if err != nil {
			return nil, fmt.Errorf("plugin %s: default args: %w", row.Name, err)
		}
		out[row.Name] = a
	}
	return out, nil
}

// preemptionArgs is DefaultPreemption's Row.Args: a PreemptionArgs.
func preemptionArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.DefaultPreemptionArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsPreemption(&args)
	if err := validatePreemption(path, &args); err != nil {
		return nil, err
	}
	return PreemptionArgs{*args.MinCandidateNodesPercentage, *args.MinCandidateNodesAbsolute}, nil
}

// fitArgs is NodeResourcesFit's Row.Args: the plugin, configured.
func fitArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeResourcesFitArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsFit(&args)
	if err := validateFit(path, &args); err != nil {
		return nil, err
	}
	return newNodeResourcesFit(&args), nil
}

// balancedArgs is NodeResourcesBalancedAllocation's Row.Args.
func balancedArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeResourcesBalancedAllocationArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsBalanced(&args)
	if err := validateBalanced(path, &args); err != nil {
		return nil, err
	}
	return newBalancedAllocation(&args), nil
}

// spreadArgs is PodTopologySpread's Row.Args.
func spreadArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.PodTopologySpreadArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	if args.DefaultingType == "" {
		args.DefaultingType = kschedv1.SystemDefaulting
	}
	if err := validateSpread(path, &args); err != nil {
		return nil, err
	}
	if args.DefaultingType == kschedv1.ListDefaulting {
		return podTopologySpread{defaults: args.DefaultConstraints}, nil
	}
	return podTopologySpread{defaults: systemDefaultConstraints, systemDefaulted: true}, nil
}

// interPodAffinityArgs is InterPodAffinity's Row.Args.
func interPodAffinityArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.InterPodAffinityArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	if args.HardPodAffinityWeight == nil {
		w := int32(defaultHardPodAffinityWeight)
		args.HardPodAffinityWeight = &w
	}
	if w := *args.HardPodAffinityWeight; w < 0 || w > 100 {
		return nil, field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")
	}
	return interPodAffinity{hardPodAffinityWeight: int64(*args.HardPodAffinityWeight),
		ignoreExistingPreferred: args.IgnorePreferredTermsOfExistingPods}, nil
}

// nodeAffinityArgs is NodeAffinity's Row.Args.
func nodeAffinityArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeAffinityArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	return newNodeAffinity(path, &args)
}

// volumeBindingArgsOf is VolumeBinding's Row.Args.
func volumeBindingArgsOf(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.VolumeBindingArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	return newVolumeBindingArgs(path, &args)
}

// dynamicResourcesArgsOf is DynamicResources' Row.Args: upstream's
// ValidateDynamicResourcesArgs with v1.37's default gates
// (DRASchedulerFilterTimeout, DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus on).
func dynamicResourcesArgsOf(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.DynamicResourcesArgs
	if err := DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	a := defaultDynamicResourcesArgs
	if args.FilterTimeout != nil {
		if args.FilterTimeout.Duration < 0 {
			return nil, field.Invalid(path.Child("filterTimeout"), args.FilterTimeout.Duration.String(), "must be zero or positive")
		}
		a.filterTimeout = args.FilterTimeout.Duration
	}
	if args.BindingTimeout != nil {
		if args.BindingTimeout.Duration < time.Second {
			return nil, field.Invalid(path.Child("bindingTimeout"), args.BindingTimeout.Duration.String(), "must be at least 1 second")
		}
		a.bindingTimeout = args.BindingTimeout.Duration
	}
	return a, nil
}

// DecodeArgs decodes pc's args into into (a pointer to the zero value of
// the plugin's args type), for a Row.Args: an object already decoded as
// that type is copied; raw JSON (or YAML) is decoded strictly, so that an
// unknown or duplicate field is an error naming it. No args, or a nil pc,
// leave into as it is.
func DecodeArgs(pc *kschedv1.PluginConfig, path *field.Path, into runtime.Object) error {
	if pc == nil {
		return nil
	}
	raw := pc.Args.Raw
	switch obj := pc.Args.Object.(type) {
	case nil:
	case *runtime.Unknown:
		raw = obj.Raw
	default:
		if reflect.TypeOf(obj) != reflect.TypeOf(into) {
			return field.Invalid(path, fmt.Sprintf("%T", obj), fmt.Sprintf("has to be %sArgs", pc.Name))
		}
		reflect.ValueOf(into).Elem().Set(reflect.ValueOf(obj.DeepCopyObject()).Elem())
		raw = nil
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if !json.Valid(trimmed) {
			j, err := yaml.YAMLToJSON(trimmed)
			if err != nil {
				return field.Invalid(path, string(raw), fmt.Sprintf("not JSON or YAML: %v", err))
			}
			trimmed = j
		}
		strict, err := sigsjson.UnmarshalStrict(trimmed, into)
		if err != nil {
			return field.Invalid(path, string(trimmed), fmt.Sprintf("decode as %sArgs: %v", pc.Name, err))
		}
		if len(strict) > 0 {
			return field.Invalid(path, string(trimmed), fmt.Sprintf("decode as %sArgs: %v", pc.Name, utilerrors.NewAggregate(strict)))
		}
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	if gvk.Kind != "" && gvk.Kind != pc.Name+"Args" {
		return field.Invalid(path.Child("kind"), gvk.Kind, fmt.Sprintf("has to be %sArgs", pc.Name))
	}
	if v := gvk.GroupVersion().String(); v != "" && v != "/" && v != kschedv1.SchemeGroupVersion.String() {
		return field.Invalid(path.Child("apiVersion"), v, fmt.Sprintf("has to be %s", kschedv1.SchemeGroupVersion))
	}
	return nil
}

func setDefaultsPreemption(a *kschedv1.DefaultPreemptionArgs) {
	if a.MinCandidateNodesPercentage == nil {
		v := int32(DefaultMinCandidateNodesPercentage)
		a.MinCandidateNodesPercentage = &v
	}
	if a.MinCandidateNodesAbsolute == nil {
		v := int32(DefaultMinCandidateNodesAbsolute)
		a.MinCandidateNodesAbsolute = &v
	}
}

func validatePreemption(path *field.Path, a *kschedv1.DefaultPreemptionArgs) error {
	var errs field.ErrorList
	pct, abs := *a.MinCandidateNodesPercentage, *a.MinCandidateNodesAbsolute
	pctPath, absPath := path.Child("minCandidateNodesPercentage"), path.Child("minCandidateNodesAbsolute")
	if pct < 0 || pct > 100 {
		errs = append(errs, field.Invalid(pctPath, pct, "not in valid range [0, 100]"))
	}
	if abs < 0 {
		errs = append(errs, field.Invalid(absPath, abs, "not in valid range [0, inf)"))
	}
	if pct == 0 && abs == 0 {
		errs = append(errs,
			field.Invalid(pctPath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(absPath, abs, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}

func setDefaultsFit(a *kschedv1.NodeResourcesFitArgs) {
	if a.ScoringStrategy == nil {
		a.ScoringStrategy = &kschedv1.ScoringStrategy{Type: kschedv1.LeastAllocated, Resources: slices.Clone(defaultResources)}
	}
	if len(a.ScoringStrategy.Resources) == 0 {
		a.ScoringStrategy.Resources = slices.Clone(defaultResources)
	}
	for i := range a.ScoringStrategy.Resources {
		if a.ScoringStrategy.Resources[i].Weight == 0 {
			a.ScoringStrategy.Resources[i].Weight = 1
		}
	}
}

func validateFit(path *field.Path, a *kschedv1.NodeResourcesFitArgs) error {
	var errs field.ErrorList
	for i, res := range a.IgnoredResources {
		errs = append(errs, metav1validation.ValidateLabelName(res, path.Child("ignoredResources").Index(i))...)
	}
	for i, group := range a.IgnoredResourceGroups {
		p := path.Child("ignoredResourceGroups").Index(i)
		if strings.Contains(group, "/") {
			errs = append(errs, field.Invalid(p, group, "resource group name can't contain '/'"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(group, p)...)
	}
	sp := path.Child("scoringStrategy")
	s := a.ScoringStrategy
	switch s.Type {
	case kschedv1.LeastAllocated, kschedv1.MostAllocated, kschedv1.RequestedToCapacityRatio:
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type,
			[]string{string(kschedv1.LeastAllocated), string(kschedv1.MostAllocated), string(kschedv1.RequestedToCapacityRatio)}))
	}
	for i, r := range s.Resources {
		if r.Weight <= 0 || r.Weight > 100 {
			errs = append(errs, field.Invalid(sp.Child("resources").Index(i).Child("weight"), r.Weight,
				fmt.Sprintf("resource weight of %v not in valid range (0, 100]", r.Name)))
		}
	}
	if s.Type == kschedv1.RequestedToCapacityRatio {
		if s.RequestedToCapacityRatio == nil {
			errs = append(errs, field.Required(sp.Child("requestedToCapacityRatio"), "must be specified when type is RequestedToCapacityRatio"))
		} else {
			errs = append(errs, validateShape(s.RequestedToCapacityRatio.Shape, sp.Child("requestedToCapacityRatio", "shape"))...)
		}
	} else if s.RequestedToCapacityRatio != nil {
		errs = append(errs, field.Forbidden(sp.Child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs.ToAggregate()
}

// validateShape is upstream's validateFunctionShape.
func validateShape(shape []kschedv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	if len(shape) == 0 {
		return field.ErrorList{field.Required(path, "at least one point must be specified")}
	}
	var errs field.ErrorList
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "not in valid range [0, 100]"))
		}
		if p.Score < 0 || p.Score > maxCustomPriorityScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, fmt.Sprintf("not in valid range [0, %d]", maxCustomPriorityScore)))
		}
	}
	return errs
}

// isDefaultResources reports whether rs are cpu and memory of weight 1, in
// either order: the default both resource scorers have a fast path for
// (their results do not depend on the order).
func isDefaultResources(rs []kschedv1.ResourceSpec) bool {
	if len(rs) != 2 || rs[0].Weight != 1 || rs[1].Weight != 1 {
		return false
	}
	a, b := rs[0].Name, rs[1].Name
	return (a == "cpu" && b == "memory") || (a == "memory" && b == "cpu")
}

func scoredResources(rs []kschedv1.ResourceSpec) []scoredResource {
	out := make([]scoredResource, len(rs))
	for i, r := range rs {
		out[i] = newScoredResource(r.Name, r.Weight)
	}
	return out
}

func newNodeResourcesFit(a *kschedv1.NodeResourcesFitArgs) nodeResourcesFit {
	var pl nodeResourcesFit
	set := func(names []string) map[string]bool {
		if len(names) == 0 {
			return nil
		}
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	pl.ignored, pl.ignoredGroups = set(a.IgnoredResources), set(a.IgnoredResourceGroups)
	s := a.ScoringStrategy
	if s.Type == kschedv1.LeastAllocated && isDefaultResources(s.Resources) {
		return pl
	}
	rs := &resourceScorer{resources: scoredResources(s.Resources)}
	switch s.Type {
	case kschedv1.MostAllocated:
		rs.strategy = strategyMostAllocated
	case kschedv1.RequestedToCapacityRatio:
		rs.strategy = strategyRequestedToCapacityRatio
		for _, p := range s.RequestedToCapacityRatio.Shape {
			rs.shape = append(rs.shape, shapePoint{int64(p.Utilization), int64(p.Score) * (MaxNodeScore / maxCustomPriorityScore)})
		}
	}
	pl.scorer = rs
	return pl
}

func setDefaultsBalanced(a *kschedv1.NodeResourcesBalancedAllocationArgs) {
	if len(a.Resources) == 0 {
		a.Resources = slices.Clone(defaultResources)
		return
	}
	for i := range a.Resources {
		if a.Resources[i].Weight == 0 {
			a.Resources[i].Weight = 1
		}
	}
}

func validateBalanced(path *field.Path, a *kschedv1.NodeResourcesBalancedAllocationArgs) error {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range a.Resources {
		p := path.Child("resources").Index(i)
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen[r.Name] = true
		if r.Weight != 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
		}
	}
	return errs.ToAggregate()
}

func newBalancedAllocation(a *kschedv1.NodeResourcesBalancedAllocationArgs) nodeResourcesBalancedAllocation {
	if isDefaultResources(a.Resources) {
		return nodeResourcesBalancedAllocation{}
	}
	return nodeResourcesBalancedAllocation{resources: scoredResources(a.Resources)}
}

// validateSpread is upstream's ValidatePodTopologySpreadArgs.
func validateSpread(path *field.Path, a *kschedv1.PodTopologySpreadArgs) error {
	var errs field.ErrorList
	tp := path.Child("defaultingType")
	switch a.DefaultingType {
	case kschedv1.SystemDefaulting:
		if len(a.DefaultConstraints) > 0 {
			errs = append(errs, field.Invalid(tp, a.DefaultingType, "when .defaultConstraints are not empty"))
		}
	case kschedv1.ListDefaulting:
	default:
		errs = append(errs, field.NotSupported(tp, a.DefaultingType,
			[]string{string(kschedv1.SystemDefaulting), string(kschedv1.ListDefaulting)}))
	}
	cp := path.Child("defaultConstraints")
	for i, c := range a.DefaultConstraints {
		p := cp.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch wp := p.Child("whenUnsatisfiable"); c.WhenUnsatisfiable {
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		case "":
			errs = append(errs, field.Required(wp, "can not be empty"))
		default:
			errs = append(errs, field.NotSupported(wp, c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range a.DefaultConstraints[:i] {
			o := &a.DefaultConstraints[j]
			if c.TopologyKey == o.TopologyKey && c.WhenUnsatisfiable == o.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs.ToAggregate()
}

// newNodeAffinity is upstream's NodeAffinity constructor with
// ValidateNodeAffinityArgs: addedAffinity parsed once.
func newNodeAffinity(path *field.Path, a *kschedv1.NodeAffinityArgs) (nodeAffinity, error) {
	var pl nodeAffinity
	if a.AddedAffinity == nil {
		return pl, nil
	}
	var errs []error
	if ns := a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		sel, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution")))
		if err != nil {
			errs = append(errs, err)
		}
		pl.added = sel
	}
	if terms := a.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		pref, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")))
		if err != nil {
			errs = append(errs, err)
		}
		pl.addedPref = pref
	}
	if err := utilerrors.Flatten(utilerrors.NewAggregate(errs)); err != nil {
		return nodeAffinity{}, err
	}
	return pl, nil
}

// newVolumeBindingArgs defaults a as upstream's SetDefaults_VolumeBindingArgs
// (bindTimeoutSeconds 600; the default shape, StorageCapacityScoring being
// on in v1.37) and validates it as ValidateVolumeBindingArgs.
func newVolumeBindingArgs(path *field.Path, a *kschedv1.VolumeBindingArgs) (volumeBindingArgs, error) {
	if a.BindTimeoutSeconds == nil {
		t := int64(volume.DefaultBindTimeout / time.Second)
		a.BindTimeoutSeconds = &t
	}
	if len(a.Shape) == 0 {
		a.Shape = slices.Clone(defaultVolumeShape)
	}
	var errs field.ErrorList
	if t := *a.BindTimeoutSeconds; t < 0 {
		errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), t, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	errs = append(errs, validateShape(a.Shape, path.Child("shape"))...)
	if err := errs.ToAggregate(); err != nil {
		return volumeBindingArgs{}, err
	}
	timeout := time.Duration(math.MaxInt64) // beyond 292 years: no timeout
	if t := *a.BindTimeoutSeconds; t <= math.MaxInt64/int64(time.Second) {
		timeout = time.Duration(t) * time.Second
	}
	return volumeBindingArgs{bindTimeout: timeout, shape: a.Shape}, nil
}
