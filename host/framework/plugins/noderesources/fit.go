// Package noderesources is upstream's noderesources plugins:
// NodeResourcesFit (PreFilter, Filter, PreScore, Score; rejects with
// ReasonTooManyPods and ReasonInsufficient + resource, Unschedulable or,
// past the node's whole allocatable, UnschedulableAndUnresolvable; weight 1)
// and NodeResourcesBalancedAllocation (PreScore, Score; never rejects;
// weight 1).
package noderesources

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/dra"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// Upstream's NodeResourcesFit reasons.
const (
	ReasonTooManyPods = "Too many pods"
	// ReasonInsufficient is followed by the resource name: "Insufficient cpu".
	ReasonInsufficient = "Insufficient "
)

// weightNodeResourcesFit is upstream's default score weight.
const weightNodeResourcesFit = 1

// nodeResourcesFit is upstream's NodeResourcesFit plugin: the pod count,
// cpu, memory, ephemeral-storage and each requested scalar resource must fit
// in the node's allocatable minus what its pods request; among feasible
// nodes, the args' scoring strategy scores (LeastAllocated over cpu and
// memory by default; MostAllocated; RequestedToCapacityRatio with a shape).
//
// An extended resource that a DeviceClass maps (DRAExtendedResource, on by
// default in 1.37) is not checked on a node that does not advertise it:
// DynamicResources allocates devices for it there, when the profile runs
// its filter (otherwise the resource is checked as any other).
//
// Extension points: PreFilter (never skips: the pod count always counts),
// Filter, PreScore, Score. Rejects: Unschedulable (ReasonTooManyPods,
// ReasonInsufficient + resource; preemption may free room),
// UnschedulableAndUnresolvable (the same reasons, when a request exceeds the
// node's whole allocatable). Weight 1.
//
// The zero value is the plugin with upstream's default args.
type nodeResourcesFit struct {
	// ignored and ignoredGroups are the args' ignoredResources and
	// ignoredResourceGroups: extended resources the filter does not check
	// (nil: none). PreFilter looks them up once per pod and requested
	// resource, never per node.
	ignored, ignoredGroups map[string]bool
	// scorer is the args' scoring strategy; nil for LeastAllocated over cpu
	// and memory of weight 1 (the default), which leastAllocated scores
	// without per-pod state.
	scorer *resourceScorer
	// classes resolves the extended resources DeviceClasses back
	// (DRAExtendedResource); nil when the profile's DynamicResources
	// filter is off, so that no request is left to a plugin that does not
	// run.
	classes extendedResourceClasses
}

// extendedResourceClasses maps an extended resource name to the
// DeviceClass that backs it, nil if none (dra.ExtendedResources).
type extendedResourceClasses interface {
	Class(name v1.ResourceName) *resourceapi.DeviceClass
}

var _ interface {
	framework.PreFilterPlugin
	framework.PreScorePlugin
} = nodeResourcesFit{}

func (nodeResourcesFit) Name() string { return abi.PluginNodeResourcesFit }

// isIgnored reports whether the filter skips the extended resource name
// (upstream's fitsRequest with ignoredResources and ignoredResourceGroups).
func (pl nodeResourcesFit) isIgnored(name v1.ResourceName) bool {
	if pl.ignored == nil && pl.ignoredGroups == nil {
		return false
	}
	if !cache.IsExtendedResourceName(name) {
		return false
	}
	group, _, _ := strings.Cut(string(name), "/")
	return pl.ignored[string(name)] || pl.ignoredGroups[group]
}

func (pl nodeResourcesFit) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	var f *fitScalarsFilter
	for name, v := range pod.Requests.Scalar {
		if v != 0 && !pl.isIgnored(name) {
			if f == nil {
				f = &fitScalarsFilter{pod: pod}
				f.scalars = f.arr[:0]
			}
			f.scalars = append(f.scalars, fitScalar{name: name,
				dra: pl.classes != nil && dra.IsExtendedResourceName(name) && pl.classes.Class(name) != nil})
		}
	}
	if f == nil {
		return (*fitFilter)(pod), nil, nil
	}
	// Sorted, so that a node's reasons come in a stable order.
	slices.SortFunc(f.scalars, func(a, b fitScalar) int { return strings.Compare(string(a.name), string(b.name)) })
	return f, nil, nil
}

// fitScalar is a scalar resource the pod requests; dra is true when a
// DeviceClass backs it, so that a node not advertising it leaves it to
// DynamicResources (upstream's shouldDelegateResourceToDRA).
type fitScalar struct {
	name v1.ResourceName
	dra  bool
}

// fitFilter is the filter of a pod without scalar requests: its state is
// the pod itself.
type fitFilter cache.PodInfo

// NodeLocal: the verdict reads the pod's requests and the node's
// allocatable and requested resources alone.
func (*fitFilter) NodeLocal() bool { return true }

func (f *fitFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	return fit((*cache.PodInfo)(f), nil, ni)
}

// fitScalarsFilter is the filter of a pod with scalar requests.
type fitScalarsFilter struct {
	pod     *cache.PodInfo
	scalars []fitScalar // requested, sorted by name; in arr for up to two
	arr     [2]fitScalar
}

// NodeLocal reports whether no requested resource is left to a DeviceClass:
// whether one is depends on the DeviceClasses, not on the node.
func (f *fitScalarsFilter) NodeLocal() bool {
	return !slices.ContainsFunc(f.scalars, func(s fitScalar) bool { return s.dra })
}

func (f *fitScalarsFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	return fit(f.pod, f.scalars, ni)
}

// fitMask bits: which of the fixed NodeResourcesFit reasons apply, and
// whether any insufficiency exceeds the node's whole allocatable.
const (
	fitPods = 1 << iota
	fitCPU
	fitMemory
	fitEphemeral
	fitUnresolvable
	fitMaskLen = 1 << iota
)

// fitStatuses are the NodeResourcesFit verdicts without scalar reasons,
// indexed by fitMask, shared by every pod and node, so that rejecting
// thousands of nodes for the same reasons allocates nothing.
var fitStatuses = func() (out [fitMaskLen]*framework.Status) {
	for mask := range out {
		out[mask] = newFitStatus(mask)
	}
	return out
}()

// fit is upstream's NodeResourcesFit filter: the pod count, then cpu,
// memory, ephemeral-storage and each requested scalar resource against the
// node's allocatable minus what its pods request. A resource the pod does not
// request never fails, nor does one a DeviceClass backs on a node whose
// allocatable lacks it (DynamicResources allocates devices for it). The verdict is UnschedulableAndUnresolvable when a
// request exceeds the node's whole allocatable (preemption cannot help),
// Unschedulable otherwise.
func fit(pod *cache.PodInfo, scalars []fitScalar, ni *cache.NodeInfo) *framework.Status {
	req := &pod.Requests
	alloc, used := ni.Allocatable(), ni.Requested()
	var mask int
	if int64(len(ni.Pods()))+1 > alloc.Pods {
		mask |= fitPods
	}
	check := func(bit int, want, allocatable, requested int64) {
		if want > 0 && want > allocatable-requested {
			mask |= bit
			if want > allocatable {
				mask |= fitUnresolvable
			}
		}
	}
	check(fitCPU, req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check(fitMemory, req.Memory, alloc.Memory, used.Memory)
	check(fitEphemeral, req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)

	var scalarReasons []string
	for _, sc := range scalars {
		name := sc.name
		want, allocatable := req.Scalar[name], alloc.Scalar[name]
		if sc.dra && allocatable <= 0 {
			continue
		}
		if want > allocatable-used.Scalar[name] {
			scalarReasons = append(scalarReasons, ReasonInsufficient+string(name))
			if want > allocatable {
				mask |= fitUnresolvable
			}
		}
	}
	if mask == 0 && scalarReasons == nil {
		return nil
	}
	if scalarReasons != nil {
		st := newFitStatus(mask)
		st.Reasons = append(st.Reasons, scalarReasons...)
		return st
	}
	return fitStatuses[mask]
}

// newFitStatus builds the NodeResourcesFit status of mask's reasons, in
// upstream's order.
func newFitStatus(mask int) *framework.Status {
	st := &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginNodeResourcesFit}
	if mask&fitUnresolvable != 0 {
		st.Code = framework.UnschedulableAndUnresolvable
	}
	if mask&fitPods != 0 {
		st.Reasons = append(st.Reasons, ReasonTooManyPods)
	}
	if mask&fitCPU != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceCPU))
	}
	if mask&fitMemory != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceMemory))
	}
	if mask&fitEphemeral != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceEphemeralStorage))
	}
	return st
}

func (pl nodeResourcesFit) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, _ *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	if pl.scorer == nil {
		return (*leastAllocatedScorer)(pod), nil
	}
	return &resourceScorerState{s: pl.scorer, reqs: podRequests(pl.scorer.resources, pod, false)}, nil
}

// leastAllocatedScorer's state is the pod itself.
type leastAllocatedScorer cache.PodInfo

// NodeLocal: the score reads the pod's requests and the node alone.
func (*leastAllocatedScorer) NodeLocal() bool { return true }

func (s *leastAllocatedScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() != nil {
			scores[i] = leastAllocated((*cache.PodInfo)(s), ni)
		}
	}
}

// leastAllocated is upstream's LeastAllocated NodeResourcesFit score with
// its default resources (cpu and memory, weight 1 each): for each resource
// the node has, the free fraction after the pod, on 0-100, averaged. It uses
// the non-zero requests (100m cpu and 200Mi memory for a container that
// requests none), so that pods without requests still spread.
func leastAllocated(pod *cache.PodInfo, ni *cache.NodeInfo) int64 {
	alloc, used := ni.Allocatable(), ni.NonZeroRequested()
	var score, weights int64
	if alloc.MilliCPU != 0 {
		score += leastRequested(used.MilliCPU+pod.NonZero.MilliCPU, alloc.MilliCPU)
		weights++
	}
	if alloc.Memory != 0 {
		score += leastRequested(used.Memory+pod.NonZero.Memory, alloc.Memory)
		weights++
	}
	if weights == 0 {
		return 0
	}
	return score / weights
}

func leastRequested(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// FitRow is NodeResourcesFit's registry row.
func FitRow() framework.Row {
	return framework.Row{Name: abi.PluginNodeResourcesFit, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore, framework.PointPlacementScore),
		Default: true, Weight: weightNodeResourcesFit, ScoreAlone: true, Args: fitArgs,
		New: func(h framework.Handle, args any) (framework.Plugin, error) {
			fit := args.(nodeResourcesFit)
			// The extended resources a DeviceClass maps are DynamicResources'
			// to allocate on nodes that do not advertise them.
			if h.Enabled(abi.PluginDynamicResources, framework.PointFilter) {
				fit.classes = dra.NewExtendedResources(h.Listers().DeviceClasses)
			}
			return fit, nil
		}}
}

// fitArgs is NodeResourcesFit's Row.Args: the plugin, configured.
func fitArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeResourcesFitArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsFit(&args)
	if err := validateFit(path, &args); err != nil {
		return nil, err
	}
	return newNodeResourcesFit(&args), nil
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
			errs = append(errs, helper.ValidateShape(s.RequestedToCapacityRatio.Shape, sp.Child("requestedToCapacityRatio", "shape"))...)
		}
	} else if s.RequestedToCapacityRatio != nil {
		errs = append(errs, field.Forbidden(sp.Child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"))
	}
	return errs.ToAggregate()
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
		rs.shape = helper.Shape(s.RequestedToCapacityRatio.Shape)
	}
	pl.scorer = rs
	return pl
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

// defaultResources is upstream's defaultResourceSpec.
var defaultResources = []kschedv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}
