package framework

import (
	"fmt"
	"slices"
	"strings"

	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// Config is one profile's plugin configuration as a KubeSchedulerConfiguration
// v1 profile gives it, before defaulting: Plugins nil means upstream's
// default plugin set; PluginConfig holds args (Args.Raw JSON, or
// Args.Object already decoded as a *kschedv1.XxxArgs).
type Config struct {
	Plugins      *kschedv1.Plugins
	PluginConfig []kschedv1.PluginConfig
}

// Built is what a profile's plugin configuration builds.
type Built struct {
	// Entries are the profile's plugins, for cycle.WithBuilt (or
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

// pointSets returns p's plugin sets by extension point.
func pointSets(p *kschedv1.Plugins) [numPoints]*kschedv1.PluginSet {
	return [numPoints]*kschedv1.PluginSet{&p.PreEnqueue, &p.QueueSort, &p.PreFilter, &p.Filter, &p.PostFilter,
		&p.PreScore, &p.Score, &p.Reserve, &p.Permit, &p.PreBind, &p.Bind, &p.PostBind, &p.PlacementGenerate,
		&p.PlacementScore, &p.PodGroupPostFilter}
}

// wildcard disables every plugin of an extension point.
const wildcard = abi.PluginWildcard

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
	if !disabled[wildcard] {
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
func (r *Registry) expand(merged *kschedv1.Plugins, pt Point) ([]string, error) {
	set := pointSets(merged)[pt]
	var specific []string
	for _, p := range set.Enabled {
		if !r.points(p.Name).Has(pt) {
			return nil, fmt.Errorf("plugins.%s.enabled: plugin %q does not extend %s", pt, p.Name, pt)
		}
		if slices.Contains(specific, p.Name) {
			return nil, fmt.Errorf("plugins.%s.enabled: plugin %q is enabled twice", pt, p.Name)
		}
		specific = append(specific, p.Name)
	}
	disabled := map[string]bool{}
	for _, p := range set.Disabled {
		disabled[p.Name] = true
	}
	if disabled[wildcard] {
		return specific, nil
	}
	var overrides, multi []string
	for _, p := range merged.MultiPoint.Enabled {
		if !r.points(p.Name).Has(pt) || disabled[p.Name] {
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
func (r *Registry) checkNames(c *kschedv1.Plugins) error {
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
				if p.Name == wildcard && field == "disabled" {
					continue
				}
				row, ok := r.Row(p.Name)
				if !ok {
					return fmt.Errorf("%s: unknown plugin %q: wasmsched runs upstream v1.37.1's in-tree plugins and the plugins "+
						"its binary was built with (a Go program adds them with app.WithPlugin; what a running wasmsched lets "+
						"you replace are its Wasm policy slots)", where, p.Name)
				}
				if row.NotImplemented != "" {
					return fmt.Errorf("%s: wasmsched does not implement the in-tree plugin %q (upstream's %s): remove it", where, p.Name, row.NotImplemented)
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

// Build merges c over the registry's default plugins (upstream v1.37.1's) (as upstream's v1
// defaulting and mergePlugins do: multiPoint, per-extension-point enabled
// and disabled, "*" disabling every default of a point, weights from
// multiPoint or score), decodes, defaults and validates each plugin's args,
// builds each plugin the profile runs with its row's factory over h, and
// returns the entries in upstream's order. It refuses, with an error
// naming it, anything wasmsched cannot honour: a plugin name the registry
// does not know, an extension point wasmsched has no configurable equivalent
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
// without them too (Row.FilterAlone, ScoreAlone), when disabling the PreFilter
// (PreScore) alone changes nothing. Disabling a filter while its PreFilter
// stays keeps the PreFilter's node restriction and rejections, as upstream.
// The filter order is upstream's filter order; the PreFilters run in the
// same order.
func (r *Registry) Build(h Handle, c Config) (Built, error) {
	p, err := r.plan(c)
	if err != nil {
		return Built{}, err
	}
	h.enabled = p.on
	b := Built{Preemption: p.preemption, PreemptionDisabled: !p.on(abi.PluginDefaultPreemption, PointPostFilter)}
	for _, name := range p.order {
		row, _ := r.Row(name)
		if row.New == nil {
			continue // served elsewhere in wasmsched (see above)
		}
		pl, err := row.New(h, p.args[name])
		if err != nil {
			return Built{}, fmt.Errorf("plugin %s: %w", name, err)
		}
		if pl.Name() != name {
			return Built{}, fmt.Errorf("plugin %s: its factory built a plugin named %q", name, pl.Name())
		}
		if e, ok := entryFor(pl, p.preFilterOn(row), func(pt Point) bool { return p.on(name, pt) }, p.weights[name]); ok {
			b.Entries = append(b.Entries, e)
		}
	}
	if _, err := NewProfile(b.Entries...); err != nil {
		return Built{}, fmt.Errorf("plugins: %w", err)
	}
	return b, nil
}

// Check is Build without building: it merges c, checks the plugin sets and
// decodes, defaults and validates the args, with Build's errors. config
// checks a KubeSchedulerConfiguration's profiles with it when it loads
// one, before any informer exists.
func (r *Registry) Check(plugins *kschedv1.Plugins, pluginConfig []kschedv1.PluginConfig) error {
	_, err := r.plan(Config{Plugins: plugins, PluginConfig: pluginConfig})
	return err
}

// Default builds the registry's default profile over h (Build of an empty
// configuration).
func (r *Registry) Default(h Handle) (*Profile, error) {
	b, err := r.Build(h, Config{})
	if err != nil {
		return nil, err
	}
	return NewProfile(b.Entries...)
}

// plan is what Build works out before it builds: the merged plugin sets,
// each point's effective plugins, the profile's order, weights and args.
type plan struct {
	eff        [numPoints][]string
	order      []string
	weights    map[string]int64
	args       map[string]any
	preemption PreemptionArgs
}

// on reports whether the plan runs plugin name at pt.
func (p *plan) on(name string, pt Point) bool { return slices.Contains(p.eff[pt], name) }

// preFilterOn: the plugin's PreFilter runs, or its filter runs and
// upstream's runs without it (FilterAlone), so wasmsched runs the PreFilter
// that makes its filter.
func (p *plan) preFilterOn(row Row) bool {
	return p.on(row.Name, PointPreFilter) || (row.FilterAlone && p.on(row.Name, PointFilter))
}

func (r *Registry) plan(c Config) (*plan, error) {
	merged, eff, err := r.effective(c)
	if err != nil {
		return nil, err
	}
	p := &plan{eff: eff}
	if !p.on(abi.PluginSchedulingGates, PointPreEnqueue) {
		return nil, fmt.Errorf("plugins: SchedulingGates is wasmsched's preEnqueue policy slot and cannot be disabled here: " +
			"configure the preEnqueue slot through wasmsched's policies instead")
	}
	if !slices.Equal(eff[PointQueueSort], []string{abi.PluginPrioritySort}) {
		return nil, fmt.Errorf("plugins.queueSort: the queue sort is wasmsched's queueSort policy slot, configured through "+
			"wasmsched's policies; the configuration must keep PrioritySort as its only queueSort plugin, not %v", eff[PointQueueSort])
	}
	if !slices.Equal(eff[PointBind], []string{abi.PluginDefaultBinder}) {
		return nil, fmt.Errorf("plugins.bind: DefaultBinder is the only binder wasmsched has; the configuration must keep it "+
			"as the only bind plugin, not %v", eff[PointBind])
	}
	if p.on(abi.PluginDefaultPreemption, PointPostFilter) && !p.on(abi.PluginDefaultPreemption, PointPreEnqueue) {
		return nil, fmt.Errorf("plugins.preEnqueue: DefaultPreemption's preEnqueue cannot be disabled while its postFilter " +
			"runs (wasmsched's preemption always holds back a pod whose victims are being evicted); disable its postFilter too, " +
			"or neither")
	}
	// By name, so that the first error does not depend on the order.
	for _, row := range slices.SortedFunc(slices.Values(r.rows), func(a, b Row) int { return strings.Compare(a.Name, b.Name) }) {
		name := row.Name
		if row.Points.Has(PointPreFilter) && p.on(name, PointFilter) && !p.preFilterOn(row) {
			return nil, fmt.Errorf("plugins.preFilter: %s's filter cannot run without its preFilter in wasmsched; "+
				"disable its filter too, or neither", name)
		}
		if row.Points.Has(PointPreScore) && p.on(name, PointScore) && !p.on(name, PointPreScore) && !row.ScoreAlone {
			return nil, fmt.Errorf("plugins.preScore: %s's score cannot run without its preScore in wasmsched; "+
				"disable its score too, or neither", name)
		}
	}
	p.weights = r.scoreWeights(merged)
	if p.args, err = r.decodeArgs(c.PluginConfig); err != nil {
		return nil, err
	}
	if a, ok := p.args[abi.PluginDefaultPreemption].(PreemptionArgs); ok {
		p.preemption = a
	}
	p.order = profileOrder(merged, eff[PointFilter])
	return p, nil
}

// effective checks c's plugin names and returns c merged over the default
// plugins and each extension point's effective plugin list, in order.
func (r *Registry) effective(c Config) (*kschedv1.Plugins, [numPoints][]string, error) {
	var eff [numPoints][]string
	if err := r.checkNames(c.Plugins); err != nil {
		return nil, eff, err
	}
	merged := mergePlugins(r.defaultPlugins(), c.Plugins)
	for pt := range eff {
		var err error
		if eff[pt], err = r.expand(merged, Point(pt)); err != nil {
			return nil, eff, err
		}
	}
	return merged, eff, nil
}

// entryFor is p's entry with the extension points on does not enable left
// out (preFilterOn: its PreFilter runs), weight its score weight; ok is
// false when p is disabled at every point it implements.
func entryFor(p Plugin, preFilterOn bool, on func(pt Point) bool, weight int64) (e Entry, ok bool) {
	e = Entry{Plugin: p, NoPreFilter: !preFilterOn, NoFilter: !on(PointFilter), NoScore: !on(PointScore),
		NoReserve: !on(PointReserve), NoPreBind: !on(PointPreBind), NoPostFilter: !on(PointPostFilter), NoPreEnqueue: !on(PointPreEnqueue)}
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
func (r *Registry) scoreWeights(merged *kschedv1.Plugins) map[string]int64 {
	out := map[string]int64{}
	for _, p := range append(slices.Clone(merged.Score.Enabled), merged.MultiPoint.Enabled...) {
		if !r.points(p.Name).Has(PointScore) {
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
