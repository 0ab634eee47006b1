package framework_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/wasmsched/wasmsched/abi"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	intree "github.com/wasmsched/wasmsched/host/framework/plugins"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// TestDefaultProfile pins the default profile to upstream v1.37.1's
// default_plugins.go: the order (less the plugins that live elsewhere) and
// the weights.
// pkgPrefix is the package of a type name, which the plugins' packages
// add: the tests name the types alone.
var pkgPrefix = regexp.MustCompile(`^(\*?)\w+\.`)

func TestDefaultProfile(t *testing.T) {
	wantPlugins := []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
		"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
		"InterPodAffinity", "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality", "NodeDeclaredFeatures"}
	if diff := cmp.Diff(wantPlugins, defaultProfile().Plugins()); diff != "" {
		t.Errorf("plugins (-want, +got):\n%s", diff)
	}
	wantFilters := []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
		"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
		"InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"}
	if diff := cmp.Diff(wantFilters, defaultProfile().FilterPlugins()); diff != "" {
		t.Errorf("filter plugins (-want, +got):\n%s", diff)
	}
	got := map[string]int64{}
	for _, e := range defaultProfile().ScorePlugins() {
		got[e.Plugin.Name()] = e.Weight
	}
	wantWeights := map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 2,
		"PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2}
	if diff := cmp.Diff(wantWeights, got); diff != "" {
		t.Errorf("score weights (-want, +got):\n%s", diff)
	}
}

// TestDefaultProfileAddsPlacement: wasmsched's default profile is
// upstream's followed by its two placement plugins (no-ops until their
// slots have modules): WasmFilter after every filter, WasmScore weight 1.
func TestDefaultProfileAddsPlacement(t *testing.T) {
	p, err := intree.InTree().Default(NewHandle(HandleOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	want := append(defaultProfile().Plugins(), abi.PluginWasmFilter, abi.PluginWasmScore)
	if diff := cmp.Diff(want, p.Plugins()); diff != "" {
		t.Errorf("plugins (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(defaultProfile().FilterPlugins(), abi.PluginWasmFilter), p.FilterPlugins()); diff != "" {
		t.Errorf("filter plugins (-want, +got):\n%s", diff)
	}
	var w int64
	for _, e := range p.ScorePlugins() {
		if e.Plugin.Name() == abi.PluginWasmScore {
			w = e.Weight
		}
	}
	if w != 1 {
		t.Errorf("%s weight %d, want 1", abi.PluginWasmScore, w)
	}
}

// TestPrepareSkips checks that a pod keeps only the filters and scorers of
// the plugins that apply to it, in profile order.
func TestPrepareSkips(t *testing.T) {
	tests := []struct {
		name        string
		pod         *ft.PodBuilder
		wantFilters []string
		wantScorers []string
	}{
		{name: "no constraint, no request", pod: ft.MakePod(),
			wantFilters: []string{"nodeUnschedulable", "*taintFilter", "*fitFilter"},
			wantScorers: []string{"*taintScorer", "*leastAllocatedScorer"}},
		{name: "tolerates cordoned nodes", pod: ft.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", ""),
			wantFilters: []string{"*taintFilter", "*fitFilter"},
			wantScorers: []string{"*taintScorer", "*leastAllocatedScorer"}},
		{name: "every filter", pod: benchPod().Node("n1"),
			wantFilters: []string{"*nodeNameFilter", "nodeUnschedulable", "*taintFilter", "*affinityFilter",
				"*nodePortsFilter", "*fitScalarsFilter"},
			wantScorers: []string{"*taintScorer", "*leastAllocatedScorer", "*balancedScorer"}},
		{name: "preferred affinity", pod: ft.MakePod().Req("cpu", "1").Preferred(1, ft.LabelTerm(ft.Expr("a", v1.NodeSelectorOpExists))),
			wantFilters: []string{"nodeUnschedulable", "*taintFilter", "*fitFilter"},
			wantScorers: []string{"*taintScorer", "*affinityScorer", "*leastAllocatedScorer", "*balancedScorer"}},
	}
	typeName := func(v any) string { return pkgPrefix.ReplaceAllString(fmt.Sprintf("%T", v), "$1") }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := state(tc.pod)
			scs, st := ps.Scorers(benchNodes(2))
			if st != nil {
				t.Fatalf("preScore: %v", st.Message())
			}
			var filters, scorers []string
			for _, f := range ps.Filters() {
				filters = append(filters, typeName(f))
			}
			for _, s := range scs {
				scorers = append(scorers, typeName(s.Scorer))
			}
			if diff := cmp.Diff(tc.wantFilters, filters); diff != "" {
				t.Errorf("filters (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantScorers, scorers); diff != "" {
				t.Errorf("scorers (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestFilterFeasibleNodeAllocatesNothing keeps the hot path free of
// allocations: a node that passes every filter of benchPod.
func TestFilterFeasibleNodeAllocatesNothing(t *testing.T) {
	ps := state(benchPod())
	ni := benchNodes(1)[0]
	if st := Filter(ps, ni); st != nil {
		t.Fatalf("Filter = %+v, want the node feasible", st)
	}
	if n := testing.AllocsPerRun(100, func() { Filter(ps, ni) }); n != 0 {
		t.Errorf("Filter on a feasible node allocates %v times, want 0", n)
	}
}

func TestNewProfileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []Entry
	}{
		{"no plugin", []Entry{{}}},
		{"twice", []Entry{{Plugin: pluginOf(abi.PluginNodeName)}, {Plugin: pluginOf(abi.PluginNodeName)}}},
		{"scorer without weight", []Entry{{Plugin: pluginOf(abi.PluginTaintToleration)}}},
		{"PreFilter off, filter on", []Entry{{Plugin: pluginOf(abi.PluginNodeName), NoPreFilter: true}}},
	} {
		if _, err := NewProfile(tc.entries...); err == nil {
			t.Errorf("%s: NewProfile succeeded, want an error", tc.name)
		}
	}
}

// counting is a plugin whose filter keeps state about pods on other nodes
// (as InterPodAffinity will): it rejects a node once the pods it was told
// about reach limit.
type counting struct{ limit int }

func (counting) Name() string { return "Counting" }

func (c counting) PreFilter(*cache.PodInfo, *cache.Snapshot) (PodFilter, []string, *Status) {
	return &countingFilter{limit: c.limit}, nil, nil
}

type countingFilter struct{ limit, pods int }

var statusCounting = &Status{Code: Unschedulable, Plugin: "Counting", Reasons: []string{"too many"}}

func (f *countingFilter) Filter(*cache.NodeInfo) *Status {
	if f.pods >= f.limit {
		return statusCounting
	}
	return nil
}
func (f *countingFilter) Clone() PodFilter                          { c := *f; return &c }
func (f *countingFilter) AddPod(*cache.PodInfo, *cache.NodeInfo)    { f.pods++ }
func (f *countingFilter) RemovePod(*cache.PodInfo, *cache.NodeInfo) { f.pods-- }

// TestPodUpdater checks the hook preemption's dry runs use: a clone's
// updates reach its filters, not the original's, and a pod without such a
// filter clones for free.
func TestPodUpdater(t *testing.T) {
	if ps := state(ft.MakePod()); ps.Clone() != ps {
		t.Errorf("Clone of a state without updaters copied it")
	}
	p, err := NewProfile(Entry{Plugin: pluginOf(abi.PluginNodeUnschedulable)}, Entry{Plugin: counting{limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ps, st := p.Prepare(ft.MakePod().Info(), nil)
	if st != nil {
		t.Fatal(st)
	}
	ni := ft.MakeNode("n1").Info()
	c := ps.Clone()
	c.AddPod(ft.MakePod().Info(), ni)
	if got := Filter(c, ni); got != statusCounting {
		t.Errorf("clone after AddPod: Filter = %+v, want %+v", got, statusCounting)
	}
	if got := Filter(ps, ni); got != nil {
		t.Errorf("original after the clone's AddPod: Filter = %+v, want nil", got)
	}
	c.RemovePod(ft.MakePod().Info(), ni)
	if got := Filter(c, ni); got != nil {
		t.Errorf("clone after RemovePod: Filter = %+v, want nil", got)
	}
	if got := Filter(ps, ft.MakeNode("n2").Unschedulable().Info()); !cmp.Equal(got, statusUnschedulable) {
		t.Errorf("the profile's other filter: Filter = %+v, want %+v", got, statusUnschedulable)
	}
}

// TestStateArraysHoldDefault fails when the default profile outgrows the
// arrays a PodState keeps its filters and scorers in (Prepare would then
// allocate for them): grow filterArr or scorerArr with the plugin.
func TestStateArraysHoldDefault(t *testing.T) {
	filterLimit, scorerLimit := ArrayLimits()
	if n, limit := len(defaultProfile().FilterPlugins()), filterLimit; n > limit {
		t.Errorf("the default profile has %d filters, PodState.filterArr holds %d", n, limit)
	}
	if n, limit := len(defaultProfile().ScorePlugins()), scorerLimit; n > limit {
		t.Errorf("the default profile has %d scorers, PodState.scorerArr holds %d", n, limit)
	}
}

// TestNewProfileNoPoints checks that the No fields of an entry leave its
// extension points out: a score left out needs no weight.
func TestNewProfileNoPoints(t *testing.T) {
	p, err := NewProfile(
		Entry{Plugin: pluginOf(abi.PluginTaintToleration), NoScore: true},
		Entry{Plugin: pluginOf(abi.PluginNodeAffinity), NoFilter: true, Weight: 2},
		Entry{Plugin: pluginOf(abi.PluginNodePorts), NoPreFilter: true, NoFilter: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"TaintToleration"}, p.FilterPlugins()); diff != "" {
		t.Errorf("filters (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"NodeAffinity": 2}, weightsOf(p)); diff != "" {
		t.Errorf("scores (-want, +got):\n%s", diff)
	}
}
