package framework_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeaffinity"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// plugins decodes a KubeSchedulerProfile's plugins from YAML, as a
// configuration file gives them.
func plugins(t *testing.T, y string) *kschedv1.Plugins {
	t.Helper()
	var p kschedv1.Plugins
	if err := yaml.UnmarshalStrict([]byte(y), &p); err != nil {
		t.Fatalf("plugins YAML: %v", err)
	}
	return &p
}

// rawArgs is a pluginConfig entry with args as JSON or YAML text.
func rawArgs(name, text string) kschedv1.PluginConfig {
	return kschedv1.PluginConfig{Name: name, Args: runtime.RawExtension{Raw: []byte(text)}}
}

func mustBuild(t *testing.T, c Config) (Built, *Profile) {
	t.Helper()
	b, err := build(Listers{}, c)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	p, err := NewProfile(b.Entries...)
	if err != nil {
		t.Fatalf("NewProfile: %v", err)
	}
	return b, p
}

func weightsOf(p *Profile) map[string]int64 {
	out := map[string]int64{}
	for _, e := range p.ScorePlugins() {
		out[e.Plugin.Name()] = e.Weight
	}
	return out
}

// withoutVolumeBinding is weights less VolumeBinding's.
func withoutVolumeBinding(weights map[string]int64) map[string]int64 {
	return without(weights, "VolumeBinding")
}

// without is weights less the plugins named.
func without(weights map[string]int64, plugins ...string) map[string]int64 {
	out := maps.Clone(weights)
	for _, p := range plugins {
		delete(out, p)
	}
	return out
}

var defaultWeights = map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 2,
	"PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2}

// TestBuildDefault checks that no configuration, and an empty one, build
// upstream's default profile with upstream's default preemption args.
func TestBuildDefault(t *testing.T) {
	for name, c := range map[string]Config{
		"nil plugins":   {},
		"empty plugins": {Plugins: &kschedv1.Plugins{}},
		"default args given": {PluginConfig: []kschedv1.PluginConfig{
			rawArgs("DefaultPreemption", `{"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}`),
			rawArgs("NodeResourcesFit", `{"scoringStrategy": {"type": "LeastAllocated"}}`),
			rawArgs("InterPodAffinity", `{"hardPodAffinityWeight": 1}`),
			rawArgs("PodTopologySpread", `{"defaultingType": "System"}`),
			rawArgs("NodeResourcesBalancedAllocation", `{"resources": [{"name": "cpu"}, {"name": "memory", "weight": 1}]}`),
			rawArgs("VolumeBinding", `{"bindTimeoutSeconds": 600}`),
			rawArgs("DynamicResources", `{"filterTimeout": "10s"}`),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			b, p := mustBuild(t, c)
			if diff := cmp.Diff(defaultProfile().Plugins(), p.Plugins()); diff != "" {
				t.Errorf("plugins (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(defaultProfile().FilterPlugins(), p.FilterPlugins()); diff != "" {
				t.Errorf("filters (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(defaultWeights, weightsOf(p)); diff != "" {
				t.Errorf("weights (-want, +got):\n%s", diff)
			}
			if want := (PreemptionArgs{10, 100}); b.Preemption != want || b.PreemptionDisabled {
				t.Errorf("preemption %+v disabled %v, want %+v enabled", b.Preemption, b.PreemptionDisabled, want)
			}
		})
	}
	def, err := build(Listers{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(len(def.Entries), len(defaultProfile().Plugins())); diff != "" {
		t.Errorf("default entries (-want, +got):\n%s", diff)
	}
}

// TestBuildMerge checks upstream's merging of plugin sets: multiPoint,
// per-point enabled and disabled, "*", and weights from score or
// multiPoint.
func TestBuildMerge(t *testing.T) {
	tests := []struct {
		name        string
		plugins     string
		wantPlugins []string // nil: the default's
		wantFilters []string // nil: the default's
		wantWeights map[string]int64
		noPreempt   bool
	}{
		{
			name: "disable BalancedAllocation's score, TaintToleration's weight from score",
			plugins: `
score:
  enabled: [{name: TaintToleration, weight: 10}]
  disabled: [{name: NodeResourcesBalancedAllocation}]`,
			wantPlugins: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "ImageLocality", "NodeDeclaredFeatures"},
			wantWeights: map[string]int64{"TaintToleration": 10, "NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 2,
				"PodTopologySpread": 2, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2},
		},
		{
			name: "multiPoint weight replaces the default's in place",
			plugins: `
multiPoint:
  enabled: [{name: NodeResourcesFit, weight: 5}, {name: ImageLocality, weight: 0}]`,
			wantWeights: map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 5, "InterPodAffinity": 2,
				"PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2},
		},
		{
			name: "score's weight wins over multiPoint's",
			plugins: `
multiPoint:
  enabled: [{name: InterPodAffinity, weight: 7}]
score:
  enabled: [{name: InterPodAffinity, weight: 4}]`,
			wantWeights: map[string]int64{"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 4,
				"PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2},
		},
		{
			name: "multiPoint disables every default",
			plugins: `
multiPoint:
  enabled: [{name: SchedulingGates}, {name: PrioritySort}, {name: NodeResourcesFit}, {name: DefaultBinder}, {name: TaintToleration, weight: 2}]
  disabled: [{name: "*"}]`,
			wantPlugins: []string{"NodeResourcesFit", "TaintToleration"},
			wantFilters: []string{"NodeResourcesFit", "TaintToleration"},
			wantWeights: map[string]int64{"NodeResourcesFit": 1, "TaintToleration": 2},
			noPreempt:   true,
		},
		{
			name: "score disables every default: nothing scores",
			plugins: `
score:
  disabled: [{name: "*"}]`,
			wantPlugins: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"},
			wantWeights: map[string]int64{},
		},
		{
			name: "score disables every default and enables one",
			plugins: `
score:
  enabled: [{name: NodeResourcesFit, weight: 3}]
  disabled: [{name: "*"}]`,
			wantPlugins: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"},
			wantWeights: map[string]int64{"NodeResourcesFit": 3},
		},
		{
			name: "a filter enabled again at filter runs first (upstream's override order)",
			plugins: `
filter:
  enabled: [{name: NodePorts}]`,
			wantPlugins: []string{"NodePorts", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality", "NodeDeclaredFeatures"},
			wantFilters: []string{"NodePorts", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"},
			wantWeights: defaultWeights,
		},
		{
			name: "NodeAffinity's filter disabled, its PreFilter kept",
			plugins: `
filter:
  disabled: [{name: NodeAffinity}]`,
			wantFilters: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodePorts",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"},
			wantWeights: defaultWeights,
		},
		{
			name: "TaintToleration's score disabled, its filter kept",
			plugins: `
preScore:
  disabled: [{name: TaintToleration}]
score:
  disabled: [{name: TaintToleration}]`,
			wantWeights: map[string]int64{"NodeAffinity": 2, "NodeResourcesFit": 1, "InterPodAffinity": 2,
				"PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1, "VolumeBinding": 1, "DynamicResources": 2},
		},
		{
			name: "PreFilter and PreScore disabled where upstream's filter and score run without them",
			plugins: `
preFilter:
  disabled: [{name: TaintToleration}, {name: NodeAffinity}]
preScore:
  disabled: [{name: NodeResourcesFit}, {name: NodeResourcesBalancedAllocation}]`,
			wantWeights: defaultWeights,
		},
		{
			name: "DefaultPreemption's postFilter disabled",
			plugins: `
postFilter:
  disabled: [{name: DefaultPreemption}]`,
			wantWeights: defaultWeights,
			noPreempt:   true,
		},
		{
			name: "GangScheduling enabled, SchedulingGates and PrioritySort enabled again: nothing changes",
			plugins: `
multiPoint:
  enabled: [{name: GangScheduling}]
preEnqueue:
  enabled: [{name: SchedulingGates}]
queueSort:
  enabled: [{name: PrioritySort}]`,
			wantWeights: defaultWeights,
		},
		{
			name: "the volume and device plugins disabled",
			plugins: `
multiPoint:
  disabled: [{name: VolumeRestrictions}, {name: NodeVolumeLimits}, {name: VolumeBinding}, {name: VolumeZone}, {name: DynamicResources}]`,
			wantPlugins: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
				"NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation",
				"ImageLocality", "NodeDeclaredFeatures"},
			wantWeights: without(defaultWeights, "VolumeBinding", "DynamicResources"),
		},
		{
			name: "VolumeBinding disabled",
			plugins: `
multiPoint:
  disabled: [{name: VolumeBinding}]`,
			wantPlugins: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts",
				"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone", "PodTopologySpread",
				"InterPodAffinity", "DynamicResources", "NodeResourcesBalancedAllocation", "ImageLocality", "NodeDeclaredFeatures"},
			wantWeights: withoutVolumeBinding(defaultWeights),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, p := mustBuild(t, Config{Plugins: plugins(t, tc.plugins)})
			wantPlugins, wantFilters := tc.wantPlugins, tc.wantFilters
			if wantPlugins == nil {
				wantPlugins = defaultProfile().Plugins()
			}
			if wantFilters == nil {
				wantFilters = slices.DeleteFunc(defaultProfile().FilterPlugins(), func(n string) bool { return !slices.Contains(wantPlugins, n) })
			}
			if diff := cmp.Diff(wantPlugins, p.Plugins()); diff != "" {
				t.Errorf("plugins (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantFilters, p.FilterPlugins()); diff != "" {
				t.Errorf("filters (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWeights, weightsOf(p)); diff != "" {
				t.Errorf("weights (-want, +got):\n%s", diff)
			}
			if b.PreemptionDisabled != tc.noPreempt {
				t.Errorf("PreemptionDisabled = %v, want %v", b.PreemptionDisabled, tc.noPreempt)
			}
		})
	}
}

// TestBuildFilterDisabledKeepsPreFilter checks that NodeAffinity's filter
// disabled still rejects at PreFilter (conflicting metadata.name terms) and
// restricts the nodes, but no longer rejects a node for its labels.
func TestBuildFilterDisabledKeepsPreFilter(t *testing.T) {
	_, p := mustBuild(t, Config{Plugins: plugins(t, "filter: {disabled: [{name: NodeAffinity}]}")})
	conflict := ft.MakePod().Required(ft.LabelTerm(), ft.NameTerm()).Info()
	conflict.Pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms =
		[]v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{ft.Expr(metav1.ObjectNameField, v1.NodeSelectorOpIn, "a"),
			ft.Expr(metav1.ObjectNameField, v1.NodeSelectorOpIn, "b")}}}
	if _, st := p.Prepare(conflict, nil); st == nil || st.Message() != nodeaffinity.ReasonAffinityConflict {
		t.Errorf("Prepare of conflicting terms = %+v, want %q", st, nodeaffinity.ReasonAffinityConflict)
	}
	ps, st := p.Prepare(ft.MakePod().Selector("zone", "a").Info(), nil)
	if st != nil {
		t.Fatalf("Prepare: %v", st.Message())
	}
	if st := Filter(ps, ft.MakeNode("n1", "cpu", "1", "memory", "1Gi").Label("zone", "b").Info()); st != nil {
		t.Errorf("Filter = %q, want the node feasible with NodeAffinity's filter disabled", st.Message())
	}
}

// TestBuildVolumePlugins checks what refuses a pod with a missing claim as
// volume plugins are disabled: the first volume plugin in PreFilter order,
// as upstream (without listers the claim does
// not exist: VolumeRestrictions' PreFilter rejects it, NodeVolumeLimits'
// filter rejects every node).
func TestBuildVolumePlugins(t *testing.T) {
	claimPod := ft.MakePod()
	claimPod.P.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	notFound := `persistentvolumeclaim "c" not found`
	for _, tc := range []struct {
		disabled   string
		wantPlugin string // "" for no refusal
		wantReason string
	}{
		{"", "VolumeRestrictions", notFound},
		{"VolumeRestrictions", "VolumeBinding", notFound},
		{"VolumeRestrictions, VolumeBinding", "VolumeZone", notFound},
		{"VolumeRestrictions, VolumeBinding, VolumeZone", "", ""},
	} {
		t.Run(tc.disabled, func(t *testing.T) {
			var list []string
			for n := range strings.SplitSeq(tc.disabled, ", ") {
				if n != "" {
					list = append(list, "{name: "+n+"}")
				}
			}
			_, p := mustBuild(t, Config{Plugins: plugins(t, "filter: {disabled: ["+strings.Join(list, ", ")+"]}\npreFilter: {disabled: ["+strings.Join(list, ", ")+"]}")})
			ps, st := p.Prepare(claimPod.Info(), nil)
			switch {
			case tc.wantPlugin == "" && st != nil:
				t.Errorf("Prepare = %+v, want the pod prepared", st)
			case tc.wantPlugin != "" && (st == nil || st.Plugin != tc.wantPlugin || st.Message() != tc.wantReason ||
				st.Code != UnschedulableAndUnresolvable):
				t.Errorf("Prepare = %+v, want %s refusing %q", st, tc.wantPlugin, tc.wantReason)
			case tc.wantPlugin == "":
				want := &Status{Code: UnschedulableAndUnresolvable, Plugin: "NodeVolumeLimits",
					Reasons: []string{"looking up PVC default/c: " + notFound}}
				if diff := cmp.Diff(want, Filter(ps, ft.MakeNode("n1").Info())); diff != "" {
					t.Errorf("Filter (-want, +got):\n%s", diff)
				}
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	tests := []struct {
		name    string
		plugins string
		configs []kschedv1.PluginConfig
		want    string // in the error
	}{
		{name: "unknown plugin", plugins: "multiPoint: {enabled: [{name: Coscheduling}]}",
			want: `plugins.multiPoint.enabled[0]: unknown plugin "Coscheduling"`},
		{name: "unknown plugin disabled", plugins: "score: {disabled: [{name: NodeResourceFit}]}",
			want: `plugins.score.disabled[0]: unknown plugin "NodeResourceFit"`},
		{name: "another queue sort", plugins: "queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: '*'}]}",
			want: `unknown plugin "Coscheduling"`},
		{name: "in-tree plugin not implemented", plugins: "multiPoint: {enabled: [{name: DeferredPodScheduling}]}",
			want: `does not implement the in-tree plugin "DeferredPodScheduling"`},
		{name: "placement extension point", plugins: "placementScore: {enabled: [{name: NodeResourcesFit}]}",
			want: "wasmsched has no placementScore extension point"},
		{name: "SchedulingGates disabled", plugins: "preEnqueue: {disabled: [{name: SchedulingGates}]}",
			want: "SchedulingGates is wasmsched's preEnqueue policy slot"},
		{name: "PrioritySort disabled", plugins: "queueSort: {disabled: [{name: '*'}]}",
			want: "the queue sort is wasmsched's queueSort policy slot"},
		{name: "DefaultBinder disabled", plugins: "multiPoint: {disabled: [{name: DefaultBinder}]}",
			want: "DefaultBinder is the only binder"},
		{name: "a plugin at a point it does not extend", plugins: "filter: {enabled: [{name: ImageLocality}]}",
			want: `plugins.filter.enabled: plugin "ImageLocality" does not extend filter`},
		{name: "enabled twice", plugins: "score: {enabled: [{name: ImageLocality}, {name: ImageLocality}]}",
			want: `plugin "ImageLocality" is enabled twice`},
		{name: "filter without PreFilter", plugins: "preFilter: {disabled: [{name: PodTopologySpread}]}",
			want: "PodTopologySpread's filter cannot run without its preFilter"},
		{name: "score without PreScore", plugins: "preScore: {disabled: [{name: '*'}]}",
			want: "InterPodAffinity's score cannot run without its preScore"},
		{name: "filter without PreFilter", plugins: "preFilter: {disabled: [{name: NodePorts}]}",
			want: "NodePorts's filter cannot run without its preFilter"},
		{name: "negative weight", plugins: "score: {enabled: [{name: ImageLocality, weight: -1}]}",
			want: "negative weight -1"},
		{name: "DefaultPreemption's preEnqueue alone", plugins: "preEnqueue: {disabled: [{name: DefaultPreemption}]}",
			want: "DefaultPreemption's preEnqueue cannot be disabled while its postFilter runs"},
		{name: "args for an unknown plugin", configs: []kschedv1.PluginConfig{rawArgs("Coscheduling", `{}`)},
			want: `pluginConfig[0].name: Invalid value: "Coscheduling": args for a plugin wasmsched does not know`},
		{name: "args for a plugin without args", configs: []kschedv1.PluginConfig{rawArgs("NodeName", `{}`)},
			want: "this plugin takes no args"},
		{name: "duplicate args", configs: []kschedv1.PluginConfig{rawArgs("NodeAffinity", `{}`), rawArgs("NodeAffinity", `{}`)},
			want: `pluginConfig[1]: Duplicate value: "NodeAffinity"`},
		{name: "unknown field", configs: []kschedv1.PluginConfig{rawArgs("NodeResourcesFit", `{"scoringStrategy": {"typo": 1}}`)},
			want: `unknown field "scoringStrategy.typo"`},
		{name: "wrong kind", configs: []kschedv1.PluginConfig{rawArgs("NodeResourcesFit", `{"kind": "NodeAffinityArgs"}`)},
			want: "pluginConfig[0].args.kind: Invalid value: \"NodeAffinityArgs\": has to be NodeResourcesFitArgs"},
		{name: "wrong args object", configs: []kschedv1.PluginConfig{{Name: "NodeResourcesFit",
			Args: runtime.RawExtension{Object: &kschedv1.NodeAffinityArgs{}}}},
			want: "has to be NodeResourcesFitArgs"},
		{name: "VolumeBinding negative bindTimeoutSeconds", configs: []kschedv1.PluginConfig{rawArgs("VolumeBinding", `{"bindTimeoutSeconds": -1}`)},
			want: "pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"},
		{name: "VolumeBinding shape unsorted", configs: []kschedv1.PluginConfig{rawArgs("VolumeBinding",
			`{"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]}`)},
			want: "pluginConfig[0].args.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"},
		{name: "VolumeBinding shape score", configs: []kschedv1.PluginConfig{rawArgs("VolumeBinding",
			`{"shape": [{"utilization": 0, "score": 11}]}`)},
			want: "pluginConfig[0].args.shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
		{name: "VolumeBinding unknown field", configs: []kschedv1.PluginConfig{rawArgs("VolumeBinding", `{"bindTimeout": 3}`)},
			want: `unknown field "bindTimeout"`},
		{name: "DynamicResources negative filterTimeout", configs: []kschedv1.PluginConfig{rawArgs("DynamicResources", `{"filterTimeout": "-1s"}`)},
			want: `pluginConfig[0].args.filterTimeout: Invalid value: "-1s": must be zero or positive`},
		{name: "DynamicResources bindingTimeout under a second", configs: []kschedv1.PluginConfig{rawArgs("DynamicResources", `{"bindingTimeout": "500ms"}`)},
			want: `pluginConfig[0].args.bindingTimeout: Invalid value: "500ms": must be at least 1 second`},
		{name: "DynamicResources unknown field", configs: []kschedv1.PluginConfig{rawArgs("DynamicResources", `{"filterTimout": "1s"}`)},
			want: `unknown field "filterTimout"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{PluginConfig: tc.configs}
			if tc.plugins != "" {
				c.Plugins = plugins(t, tc.plugins)
			}
			_, err := build(Listers{}, c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestArgsValidation checks upstream's validation messages
// (validation_pluginargs_test.go's cases), on args given as YAML or JSON.
func TestArgsValidation(t *testing.T) {
	tests := []struct {
		name, plugin, args string
		want               []string // in the error; nil for valid args
	}{
		{"preemption: percentage out of range", "DefaultPreemption", `{minCandidateNodesPercentage: -1, minCandidateNodesAbsolute: 100}`,
			[]string{"pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"}},
		{"preemption: absolute negative", "DefaultPreemption", `minCandidateNodesAbsolute: -1`,
			[]string{"pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"}},
		{"preemption: both zero", "DefaultPreemption", `{"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}`,
			[]string{"cannot be zero at the same time as minCandidateNodesAbsolute", "cannot be zero at the same time as minCandidateNodesPercentage"}},
		{"preemption: percentage zero alone", "DefaultPreemption", `{"minCandidateNodesPercentage": 0}`, nil},
		{"interPodAffinity: weight out of range", "InterPodAffinity", `hardPodAffinityWeight: 101`,
			[]string{"pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"}},
		{"interPodAffinity: weight 0", "InterPodAffinity", `hardPodAffinityWeight: 0`, nil},
		{"fit: unsupported strategy", "NodeResourcesFit", `scoringStrategy: {type: Invalid}`,
			[]string{`pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Invalid": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`}},
		{"fit: weight 0 defaults to 1", "NodeResourcesFit", `scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 0}]}`, nil},
		{"fit: weight out of range", "NodeResourcesFit", `scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 101}]}`,
			[]string{"pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"}},
		{"fit: ratio without shape", "NodeResourcesFit", `scoringStrategy: {type: RequestedToCapacityRatio}`,
			[]string{"pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"}},
		{"fit: shape for another strategy", "NodeResourcesFit", `scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}]}}`,
			[]string{"pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"}},
		{"fit: empty shape", "NodeResourcesFit", `scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}`,
			[]string{"pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"}},
		{"fit: shape out of order and range", "NodeResourcesFit",
			`scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 50, score: 11}, {utilization: 10, score: 2}, {utilization: 101, score: 3}]}}`,
			[]string{"shape[1].utilization: Invalid value: 10: values must be sorted in increasing order",
				"shape[0].score: Invalid value: 11: not in valid range [0, 10]",
				"shape[2].utilization: Invalid value: 101: not in valid range [0, 100]"}},
		{"fit: ignored resource names", "NodeResourcesFit", `{ignoredResources: ["example.com/foo", "-bad"], ignoredResourceGroups: ["example.com/foo"]}`,
			[]string{"pluginConfig[0].args.ignoredResources[1]: Invalid value: \"-bad\"",
				"pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"}},
		{"balanced: weight not 1 and duplicate", "NodeResourcesBalancedAllocation", `resources: [{name: cpu, weight: 2}, {name: cpu}]`,
			[]string{"pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
				`pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"`}},
		{"spread: System with constraints", "PodTopologySpread",
			`{defaultingType: System, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]}`,
			[]string{`pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty`}},
		{"spread: bad constraints", "PodTopologySpread",
			`{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: "", whenUnsatisfiable: Never, labelSelector: {}}, {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}`,
			[]string{"defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
				"defaultConstraints[0].topologyKey: Required value: can not be empty",
				`defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never"`,
				"defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
				`defaultConstraints[2]: Duplicate value: "{zone, DoNotSchedule}"`}},
		{"spread: unknown defaulting type", "PodTopologySpread", `defaultingType: Sometimes`,
			[]string{`pluginConfig[0].args.defaultingType: Unsupported value: "Sometimes"`}},
		{"nodeAffinity: bad added affinity", "NodeAffinity",
			`addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: "a b", operator: In, values: [x]}]}]}}`,
			[]string{"pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{rawArgs(tc.plugin, tc.args)}})
			if tc.want == nil {
				if err != nil {
					t.Errorf("Build: %v, want valid args", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Build succeeded, want errors %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Build error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestArgsDefaults checks upstream's v1 defaulting of DefaultPreemption's
// args through Build (the plugins' own defaults are their packages' tests).
func TestArgsDefaults(t *testing.T) {
	t.Run("Build", func(t *testing.T) {
		b, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{
			rawArgs("DefaultPreemption", `minCandidateNodesAbsolute: 5`),
			rawArgs("InterPodAffinity", `ignorePreferredTermsOfExistingPods: true`),
			rawArgs("PodTopologySpread", `{defaultingType: List}`),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if want := (PreemptionArgs{10, 5}); b.Preemption != want {
			t.Errorf("Preemption = %+v, want %+v", b.Preemption, want)
		}
	})
}
