package framework

import (
	"fmt"
	"maps"
	"slices"

	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/dra"
)

// Config is one profile's plugin configuration as a KubeSchedulerConfiguration
// v1 profile gives it, before defaulting: Plugins nil means upstream's
// default plugin set; PluginConfig holds args (Args.Raw JSON, or
// Args.Object already decoded as a *kschedv1.XxxArgs).
type Config struct {
	Plugins      *kschedv1.Plugins
	PluginConfig []kschedv1.PluginConfig
	// Claims counts the ResourceClaims DynamicResources creates; nil
	// counts nothing.
	Claims ClaimRecorder
}

// Built is what a profile's plugin configuration builds.
type Built struct {
	// Entries are the profile's plugins, for cycle.WithPluginEntries (or
	// NewProfile) and so preemption's dry runs.
	Entries []Entry
	// Preemption is DefaultPreemption's args, defaulted.
	Preemption PreemptionArgs
	// PreemptionDisabled is set when DefaultPreemption's postFilter is
	// disabled: a pod that fits nowhere is not preempted for (pods nor
	// pod groups), as upstream without a PostFilter plugin.
	PreemptionDisabled bool
}

// PreemptionArgs are DefaultPreemption's args (upstream's
// DefaultPreemptionArgs): preemption dry-runs at least
// MinCandidateNodesPercentage percent of the nodes where it might help, and
// at least MinCandidateNodesAbsolute of them. The zero value stands for
// upstream's defaults (10 and 100), which Build returns when the args leave
// them out; both 0 is invalid in a configuration.
type PreemptionArgs struct {
	MinCandidateNodesPercentage, MinCandidateNodesAbsolute int32
}

// Upstream's DefaultPreemptionArgs defaults.
const (
	DefaultMinCandidateNodesPercentage = 10
	DefaultMinCandidateNodesAbsolute   = 100
)

// Defaulted returns a with the zero value replaced by upstream's defaults.
func (a PreemptionArgs) Defaulted() PreemptionArgs {
	if a == (PreemptionArgs{}) {
		return PreemptionArgs{DefaultMinCandidateNodesPercentage, DefaultMinCandidateNodesAbsolute}
	}
	return a
}

// Upstream's extension points, as KubeSchedulerConfiguration names them.
const (
	ptPreEnqueue = iota
	ptQueueSort
	ptPreFilter
	ptFilter
	ptPostFilter
	ptPreScore
	ptScore
	ptReserve
	ptPermit
	ptPreBind
	ptBind
	ptPostBind
	ptPlacementGenerate
	ptPlacementScore
	ptPodGroupPostFilter
	numPoints
)

var pointNames = [numPoints]string{"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
	"score", "reserve", "permit", "preBind", "bind", "postBind", "placementGenerate", "placementScore",
	"podGroupPostFilter"}

// pointSets returns p's plugin sets by extension point.
func pointSets(p *kschedv1.Plugins) [numPoints]*kschedv1.PluginSet {
	return [numPoints]*kschedv1.PluginSet{&p.PreEnqueue, &p.QueueSort, &p.PreFilter, &p.Filter, &p.PostFilter,
		&p.PreScore, &p.Score, &p.Reserve, &p.Permit, &p.PreBind, &p.Bind, &p.PostBind, &p.PlacementGenerate,
		&p.PlacementScore, &p.PodGroupPostFilter}
}

// points is a set of extension points (bit i: point i).
type points uint32

func pts(ps ...int) points {
	var out points
	for _, p := range ps {
		out |= 1 << p
	}
	return out
}

func (s points) has(p int) bool { return s&(1<<p) != 0 }

// Names of upstream's in-tree plugins that abi/ has no constant for.
const (
	pluginPrioritySort               = "PrioritySort"
	pluginDefaultBinder              = "DefaultBinder"
	pluginDeferredPodScheduling      = "DeferredPodScheduling"
	pluginTopologyPlacementGenerator = "TopologyPlacementGenerator"
	pluginPodGroupPodsCount          = "PodGroupPodsCount"
)

// inTree are upstream v1.37.1's in-tree plugins (names.go) with the
// extension points each implements (a configuration that enables one at
// another point is refused, as upstream's framework refuses it), less those
// wasmsched does not implement at all (notImplemented).
var inTree = map[string]points{
	abi.PluginSchedulingGates:             pts(ptPreEnqueue),
	pluginPrioritySort:                    pts(ptQueueSort),
	abi.PluginNodeName:                    pts(ptPreFilter, ptFilter),
	abi.PluginNodeUnschedulable:           pts(ptPreFilter, ptFilter),
	abi.PluginTaintToleration:             pts(ptPreFilter, ptFilter, ptPreScore, ptScore),
	abi.PluginNodeAffinity:                pts(ptPreFilter, ptFilter, ptPreScore, ptScore),
	abi.PluginNodePorts:                   pts(ptPreFilter, ptFilter),
	abi.PluginNodeResourcesFit:            pts(ptPreFilter, ptFilter, ptPreScore, ptScore, ptPlacementScore),
	abi.PluginVolumeRestrictions:          pts(ptPreFilter, ptFilter),
	abi.PluginNodeVolumeLimits:            pts(ptPreFilter, ptFilter),
	abi.PluginVolumeBinding:               pts(ptPreFilter, ptFilter, ptReserve, ptPreBind, ptPreScore, ptScore),
	abi.PluginVolumeZone:                  pts(ptPreFilter, ptFilter),
	abi.PluginPodTopologySpread:           pts(ptPreFilter, ptFilter, ptPreScore, ptScore),
	abi.PluginInterPodAffinity:            pts(ptPreFilter, ptFilter, ptPreScore, ptScore),
	abi.PluginDynamicResources:            pts(ptPreEnqueue, ptPreFilter, ptFilter, ptPostFilter, ptPodGroupPostFilter, ptScore, ptReserve, ptPreBind),
	abi.PluginDefaultPreemption:           pts(ptPreEnqueue, ptPostFilter),
	pluginNodeResourcesBalancedAllocation: pts(ptPreScore, ptScore),
	pluginImageLocality:                   pts(ptScore),
	pluginDefaultBinder:                   pts(ptBind),
	abi.PluginNodeDeclaredFeatures:        pts(ptPreFilter, ptFilter),
	abi.PluginGangScheduling:              pts(ptPreEnqueue, ptPermit),
}

// filterAlone are the plugins whose upstream filter runs without their
// PreFilter (it needs no state from it, or recomputes it); scoreAlone
// likewise for the score without its PreScore. Disabling such a plugin's
// PreFilter (PreScore) alone changes nothing here, since wasmsched's
// PreFilter is what makes its filter; upstream would still run the filter
// but not the PreFilter's node restriction (NodeName, NodeAffinity), which
// only changes the message of the nodes it leaves out.
var (
	filterAlone = map[string]bool{abi.PluginNodeName: true, abi.PluginNodeUnschedulable: true,
		abi.PluginTaintToleration: true, abi.PluginNodeAffinity: true}
	scoreAlone = map[string]bool{abi.PluginNodeResourcesFit: true, pluginNodeResourcesBalancedAllocation: true,
		abi.PluginNodeAffinity: true}
)

// notImplemented are upstream's in-tree plugins wasmsched does not have,
// off in upstream's default profile (behind alpha or beta gates that are off).
var notImplemented = map[string]string{
	pluginDeferredPodScheduling:      "InPlacePodVerticalScalingSchedulerPreemption, alpha",
	pluginTopologyPlacementGenerator: "TopologyAwareWorkloadScheduling, alpha",
	pluginPodGroupPodsCount:          "TopologyAwareWorkloadScheduling, alpha",
}

// defaultPlugins is upstream v1.37.1's getDefaultPlugins with the feature
// gates at their v1.37 defaults: DynamicResourceAllocation and
// NodeDeclaredFeatures on (GA), GenericWorkload, TopologyAware... and
// InPlacePodVerticalScalingSchedulerPreemption off.
func defaultPlugins() *kschedv1.Plugins {
	w := func(n int32) *int32 { return &n }
	return &kschedv1.Plugins{MultiPoint: kschedv1.PluginSet{Enabled: []kschedv1.Plugin{
		{Name: abi.PluginSchedulingGates},
		{Name: pluginPrioritySort},
		{Name: abi.PluginNodeName},
		{Name: abi.PluginNodeUnschedulable},
		{Name: abi.PluginTaintToleration, Weight: w(weightTaintToleration)},
		{Name: abi.PluginNodeAffinity, Weight: w(weightNodeAffinity)},
		{Name: abi.PluginNodePorts},
		{Name: abi.PluginNodeResourcesFit, Weight: w(weightNodeResourcesFit)},
		{Name: abi.PluginVolumeRestrictions},
		{Name: abi.PluginNodeVolumeLimits},
		{Name: abi.PluginVolumeBinding},
		{Name: abi.PluginVolumeZone},
		{Name: abi.PluginPodTopologySpread, Weight: w(weightPodTopologySpread)},
		{Name: abi.PluginInterPodAffinity, Weight: w(weightInterPodAffinity)},
		{Name: abi.PluginDynamicResources, Weight: w(2)},
		{Name: abi.PluginDefaultPreemption},
		{Name: pluginNodeResourcesBalancedAllocation, Weight: w(weightNodeResourcesBalancedAllocation)},
		{Name: pluginImageLocality, Weight: w(weightImageLocality)},
		{Name: pluginDefaultBinder},
		{Name: abi.PluginNodeDeclaredFeatures},
	}}}
}

// mergePlugins is upstream's mergePlugins: custom merged into def point by
// point (mergePluginSet).
func mergePlugins(def, custom *kschedv1.Plugins) *kschedv1.Plugins {
	if custom == nil {
		return def
	}
	def.MultiPoint = mergePluginSet(def.MultiPoint, custom.MultiPoint)
	ds, cs := pointSets(def), pointSets(custom)
	for i := range ds {
		*ds[i] = mergePluginSet(*ds[i], *cs[i])
	}
	return def
}

// mergePluginSet is upstream's: the default set less the disabled plugins
// (all of them for "*"), a default plugin the custom set enables again
// replaced in place by the custom entry (its weight), then the other custom
// plugins in order; disabled lists joined.
func mergePluginSet(def, custom kschedv1.PluginSet) kschedv1.PluginSet {
	disabled := map[string]bool{}
	var out kschedv1.PluginSet
	for _, p := range custom.Disabled {
		out.Disabled = append(out.Disabled, kschedv1.Plugin{Name: p.Name})
		disabled[p.Name] = true
	}
	for _, p := range def.Disabled {
		out.Disabled = append(out.Disabled, kschedv1.Plugin{Name: p.Name})
		disabled[p.Name] = true
	}
	customIndex := map[string]int{}
	for i, p := range custom.Enabled {
		customIndex[p.Name] = i
	}
	replaced := map[int]bool{}
	if !disabled[abi.PluginWildcard] {
		for _, p := range def.Enabled {
			if disabled[p.Name] {
				continue
			}
			if i, ok := customIndex[p.Name]; ok {
				p = custom.Enabled[i]
				replaced[i] = true
			}
			out.Enabled = append(out.Enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !replaced[i] {
			out.Enabled = append(out.Enabled, p)
		}
	}
	return out
}

// expand is upstream's framework building one extension point's plugin list
// from merged (updatePluginList, then expandMultiPointPlugins): the point's
// own enabled plugins, into which multiPoint's are expanded unless the point
// disables "*" or the plugin; a plugin both lists keep is an override and
// comes first, in the point's order, then multiPoint's, then the point's
// others.
func expand(merged *kschedv1.Plugins, pt int) ([]string, error) {
	set := pointSets(merged)[pt]
	var specific []string
	for _, p := range set.Enabled {
		if !inTree[p.Name].has(pt) {
			return nil, fmt.Errorf("plugins.%s.enabled: plugin %q does not extend %s", pointNames[pt], p.Name, pointNames[pt])
		}
		if slices.Contains(specific, p.Name) {
			return nil, fmt.Errorf("plugins.%s.enabled: plugin %q is enabled twice", pointNames[pt], p.Name)
		}
		specific = append(specific, p.Name)
	}
	disabled := map[string]bool{}
	for _, p := range set.Disabled {
		disabled[p.Name] = true
	}
	if disabled[abi.PluginWildcard] {
		return specific, nil
	}
	var overrides, multi []string
	for _, p := range merged.MultiPoint.Enabled {
		if !inTree[p.Name].has(pt) || disabled[p.Name] {
			continue
		}
		if slices.Contains(specific, p.Name) {
			overrides = append(overrides, p.Name)
			continue
		}
		if slices.Contains(multi, p.Name) {
			return nil, fmt.Errorf("plugins.multiPoint.enabled: plugin %q is enabled twice", p.Name)
		}
		multi = append(multi, p.Name)
	}
	var out []string
	for _, n := range specific {
		if slices.Contains(overrides, n) {
			out = append(out, n)
		}
	}
	out = append(out, multi...)
	for _, n := range specific {
		if !slices.Contains(overrides, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// checkNames refuses the plugin names of c wasmsched does not know, and the
// extension points it has nothing to configure at.
func checkNames(c *kschedv1.Plugins) error {
	if c == nil {
		return nil
	}
	sets := pointSets(c)
	all := append([]*kschedv1.PluginSet{&c.MultiPoint}, sets[:]...)
	names := append([]string{"multiPoint"}, pointNames[:]...)
	for i, set := range all {
		for j, list := range [][]kschedv1.Plugin{set.Enabled, set.Disabled} {
			field := [...]string{"enabled", "disabled"}[j]
			for k, p := range list {
				where := fmt.Sprintf("plugins.%s.%s[%d]", names[i], field, k)
				if p.Name == abi.PluginWildcard && field == "disabled" {
					continue
				}
				if gate, ok := notImplemented[p.Name]; ok {
					return fmt.Errorf("%s: wasmsched does not implement the in-tree plugin %q (upstream's %s): remove it", where, p.Name, gate)
				}
				if _, ok := inTree[p.Name]; !ok {
					return fmt.Errorf("%s: unknown plugin %q: wasmsched runs upstream v1.37.1's in-tree plugins only "+
						"(out-of-tree plugins cannot be loaded; what wasmsched lets you replace are its Wasm policy slots)", where, p.Name)
				}
				if field == "enabled" && (names[i] == "placementGenerate" || names[i] == "placementScore") {
					return fmt.Errorf("%s: wasmsched has no %s extension point (upstream's TopologyAwareWorkloadScheduling, alpha): remove %q from it",
						where, names[i], p.Name)
				}
				if p.Weight != nil && *p.Weight < 0 {
					return fmt.Errorf("%s: plugin %q has a negative weight %d: wasmsched takes weights of 1 or more (0 or none is 1)",
						where, p.Name, *p.Weight)
				}
			}
		}
	}
	return nil
}

// Build merges c over upstream v1.37.1's default plugins (as upstream's v1
// defaulting and mergePlugins do: multiPoint, per-extension-point enabled
// and disabled, "*" disabling every default of a point, weights from
// multiPoint or score), decodes, defaults and validates each plugin's args,
// and returns the entries in upstream's order. It refuses, with an error
// naming it, anything wasmsched cannot honour: an unknown or out-of-tree
// plugin name, an extension point wasmsched has no configurable equivalent
// for, args for a plugin it does not know, invalid args (upstream's
// validation messages where practical).
//
// The plugins that live outside this package:
//   - SchedulingGates (preEnqueue) and PrioritySort (queueSort) are
//     wasmsched's Wasm policy slots: enabling them changes nothing;
//     disabling them, or another queueSort plugin, is refused (the slots are
//     configured through wasmsched's policies).
//   - DefaultPreemption is host/preempt: its args come back in
//     Built.Preemption; disabling its postFilter sets
//     Built.PreemptionDisabled. Its preEnqueue (which holds back a pod
//     whose preemption is still evicting) cannot be disabled on its own.
//   - DefaultBinder is the only binder: a profile without it is refused.
//   - GangScheduling (preEnqueue, permit) is wasmsched's pod-group cycle
//     and its gang policy, which serve PodGroups whenever the API serves
//     them: enabling or disabling it changes nothing.
//
// DynamicResources' preEnqueue checks are made by its PreFilter (with the
// same texts): enabling or disabling its preEnqueue changes nothing.
//
// A plugin's reserve, preBind and postFilter points (ReservePlugin,
// PreBindPlugin, PostFilterPlugin) are enabled and disabled like the others
// (Entry.NoReserve, NoPreBind, NoPostFilter); a plugin disabled at every
// point it implements is left out. The postFilter plugins run before
// DefaultPreemption's, whatever their configured order (upstream's default
// order).
//
// A plugin's filter cannot run without its PreFilter (wasmsched's filters
// are what the PreFilters return), nor its score without its PreScore:
// such a configuration is refused, unless upstream's filter (score) runs
// without them too (filterAlone, scoreAlone), when disabling the PreFilter
// (PreScore) alone changes nothing. Disabling a filter while its PreFilter
// stays keeps the PreFilter's node restriction and rejections, as upstream.
// The filter order is upstream's filter order; the PreFilters run in the
// same order.
func Build(l Listers, c Config) (Built, error) {
	merged, eff, err := effective(c)
	if err != nil {
		return Built{}, err
	}
	on := func(name string, pt int) bool { return slices.Contains(eff[pt], name) }

	if !on(abi.PluginSchedulingGates, ptPreEnqueue) {
		return Built{}, fmt.Errorf("plugins: SchedulingGates is wasmsched's preEnqueue policy slot and cannot be disabled here: " +
			"configure the preEnqueue slot through wasmsched's policies instead")
	}
	if !slices.Equal(eff[ptQueueSort], []string{pluginPrioritySort}) {
		return Built{}, fmt.Errorf("plugins.queueSort: the queue sort is wasmsched's queueSort policy slot, configured through "+
			"wasmsched's policies; the configuration must keep PrioritySort as its only queueSort plugin, not %v", eff[ptQueueSort])
	}
	if !slices.Equal(eff[ptBind], []string{pluginDefaultBinder}) {
		return Built{}, fmt.Errorf("plugins.bind: DefaultBinder is the only binder wasmsched has; the configuration must keep it "+
			"as the only bind plugin, not %v", eff[ptBind])
	}
	if on(abi.PluginDefaultPreemption, ptPostFilter) && !on(abi.PluginDefaultPreemption, ptPreEnqueue) {
		return Built{}, fmt.Errorf("plugins.preEnqueue: DefaultPreemption's preEnqueue cannot be disabled while its postFilter " +
			"runs (wasmsched's preemption always holds back a pod whose victims are being evicted); disable its postFilter too, " +
			"or neither")
	}
	// preFilterOn: the plugin's PreFilter runs, or its filter runs and
	// upstream's runs without it (filterAlone), so wasmsched runs the
	// PreFilter that makes its filter.
	preFilterOn := func(name string) bool {
		return on(name, ptPreFilter) || (filterAlone[name] && on(name, ptFilter))
	}
	for _, name := range slices.Sorted(maps.Keys(inTree)) {
		implements := inTree[name]
		if implements.has(ptPreFilter) && on(name, ptFilter) && !preFilterOn(name) {
			return Built{}, fmt.Errorf("plugins.preFilter: %s's filter cannot run without its preFilter in wasmsched; "+
				"disable its filter too, or neither", name)
		}
		if implements.has(ptPreScore) && on(name, ptScore) && !on(name, ptPreScore) && !scoreAlone[name] {
			return Built{}, fmt.Errorf("plugins.preScore: %s's score cannot run without its preScore in wasmsched; "+
				"disable its score too, or neither", name)
		}
	}

	weights := scoreWeights(merged)
	args, err := decodeArgs(c.PluginConfig)
	if err != nil {
		return Built{}, err
	}

	b := Built{Preemption: args.preemption, PreemptionDisabled: !on(abi.PluginDefaultPreemption, ptPostFilter)}
	for _, name := range profileOrder(merged, eff[ptFilter]) {
		var p Plugin
		switch name {
		case abi.PluginNodeName:
			p = nodeName{}
		case abi.PluginNodeUnschedulable:
			p = nodeUnschedulable{}
		case abi.PluginTaintToleration:
			p = taintToleration{}
		case abi.PluginNodeAffinity:
			p = args.nodeAffinity
		case abi.PluginNodePorts:
			p = nodePorts{}
		case abi.PluginNodeResourcesFit:
			fit := args.fit
			if on(abi.PluginDynamicResources, ptFilter) {
				fit.classes = dra.NewExtendedResources(l.DeviceClasses)
			}
			p = fit
		case abi.PluginPodTopologySpread:
			pts := args.spread
			pts.listers = l
			p = &pts
		case abi.PluginInterPodAffinity:
			ipa := args.interPodAffinity
			ipa.namespaces = l.Namespaces
			p = ipa
		case pluginNodeResourcesBalancedAllocation:
			p = args.balanced
		case pluginImageLocality:
			p = imageLocality{}
		case abi.PluginNodeDeclaredFeatures:
			p = nodeDeclaredFeatures{}
		case abi.PluginVolumeBinding:
			vb, err := newVolumeBinding(l, args.volumeBinding)
			if err != nil {
				return Built{}, err
			}
			p = vb
		case abi.PluginVolumeRestrictions:
			p = volumeRestrictions{listers: l}
		case abi.PluginNodeVolumeLimits:
			p = newNodeVolumeLimits(l)
		case abi.PluginVolumeZone:
			p = volumeZone{listers: l}
		case abi.PluginDynamicResources:
			dr, err := newDynamicResources(l, args.dynamicResources)
			if err != nil {
				return Built{}, err
			}
			if c.Claims != nil {
				dr.claims = c.Claims
			}
			p = dr
		default:
			continue // the plugins that live elsewhere (see above)
		}
		if e, ok := entryFor(p, preFilterOn(name), func(pt int) bool { return on(name, pt) }, weights[name]); ok {
			b.Entries = append(b.Entries, e)
		}
	}
	if _, err := NewProfile(b.Entries...); err != nil {
		return Built{}, fmt.Errorf("plugins: %w", err)
	}
	return b, nil
}

// effective checks c's plugin names and returns c merged over the default
// plugins and each extension point's effective plugin list, in order.
func effective(c Config) (*kschedv1.Plugins, [numPoints][]string, error) {
	var eff [numPoints][]string
	if err := checkNames(c.Plugins); err != nil {
		return nil, eff, err
	}
	merged := mergePlugins(defaultPlugins(), c.Plugins)
	for pt := range eff {
		var err error
		if eff[pt], err = expand(merged, pt); err != nil {
			return nil, eff, err
		}
	}
	return merged, eff, nil
}

// entryFor is p's entry with the extension points on does not enable left
// out (preFilterOn: its PreFilter runs), weight its score weight; ok is
// false when p is disabled at every point it implements.
func entryFor(p Plugin, preFilterOn bool, on func(pt int) bool, weight int64) (e Entry, ok bool) {
	e = Entry{Plugin: p, NoPreFilter: !preFilterOn, NoFilter: !on(ptFilter), NoScore: !on(ptScore),
		NoReserve: !on(ptReserve), NoPreBind: !on(ptPreBind), NoPostFilter: !on(ptPostFilter), NoPreEnqueue: !on(ptPreEnqueue)}
	_, filters := p.(PreFilterPlugin)
	_, scores := p.(PreScorePlugin)
	_, reserves := p.(ReservePlugin)
	_, preBinds := p.(PreBindPlugin)
	_, postFilters := p.(PostFilterPlugin)
	if (!filters || e.NoPreFilter) && (!scores || e.NoScore) && (!reserves || e.NoReserve) && (!preBinds || e.NoPreBind) &&
		(!postFilters || e.NoPostFilter) {
		return Entry{}, false
	}
	if scores && !e.NoScore {
		e.Weight = weight
	}
	return e, true
}

// profileOrder is the order of the profile's plugins: multiPoint's merged
// order, then the plugins only a single extension point enables (in
// upstream's point order), with the plugins that filter placed in
// filterOrder, upstream's filter order, which overrides at the filter point
// may have changed.
func profileOrder(merged *kschedv1.Plugins, filterOrder []string) []string {
	var order []string
	add := func(n string) {
		if !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	for _, p := range merged.MultiPoint.Enabled {
		add(p.Name)
	}
	for _, set := range pointSets(merged) {
		for _, p := range set.Enabled {
			add(p.Name)
		}
	}
	next := 0
	for i, n := range order {
		if slices.Contains(filterOrder, n) {
			order[i] = filterOrder[next]
			next++
		}
	}
	return order
}

// scoreWeights is upstream's getValidScoreWeights: each score plugin's
// weight from score's enabled list, else multiPoint's; none or 0 is 1.
func scoreWeights(merged *kschedv1.Plugins) map[string]int64 {
	out := map[string]int64{}
	for _, p := range append(slices.Clone(merged.Score.Enabled), merged.MultiPoint.Enabled...) {
		if !inTree[p.Name].has(ptScore) {
			continue
		}
		if _, ok := out[p.Name]; ok {
			continue
		}
		w := int64(1)
		if p.Weight != nil && *p.Weight != 0 {
			w = int64(*p.Weight)
		}
		out[p.Name] = w
	}
	return out
}
