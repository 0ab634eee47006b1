package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// TestNodeAffinityAddedAffinity checks addedAffinity as upstream's
// node_affinity_test.go: its required selector rejects first, with its own
// reason, for every pod; its preferred terms add to every pod's score.
func TestNodeAffinityAddedAffinity(t *testing.T) {
	pl := builtPlugin(t, "NodeAffinity", &kschedv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			labelTerm(expr("zone", v1.NodeSelectorOpIn, "foo", "bar"))}},
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: 5, Preference: labelTerm(expr("disk", v1.NodeSelectorOpIn, "ssd"))}},
	}}).(nodeAffinity)
	foo := makeNode("foo", "cpu", "1").label("zone", "foo").label("disk", "ssd")
	bar := makeNode("bar", "cpu", "1").label("zone", "bar").label("region", "r1")
	baz := makeNode("baz", "cpu", "1").label("zone", "baz").label("region", "r1")
	for _, tc := range []struct {
		name string
		pod  *podBuilder
		want []string // each node's reason, "" feasible: foo, bar, baz
	}{
		{"a pod without node affinity meets the added affinity", makePod(),
			[]string{"", "", ReasonEnforcedNodeAffinity}},
		{"the pod's own selector after the added affinity", makePod().selector("region", "r1"),
			[]string{ReasonNodeAffinity, "", ReasonEnforcedNodeAffinity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, st := pl.PreFilter(tc.pod.info(), nil)
			if st != nil || f == nil {
				t.Fatalf("PreFilter = %v, %+v, want a filter", f, st)
			}
			var got []string
			for _, ni := range infos(foo, bar, baz) {
				r := ""
				if st := f.Filter(ni); st != nil {
					r = st.Message()
				}
				got = append(got, r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reasons (-want, +got):\n%s", diff)
			}
		})
	}
	t.Run("score", func(t *testing.T) {
		pod := makePod().preferred(3, labelTerm(expr("region", v1.NodeSelectorOpIn, "r1")))
		if diff := cmp.Diff([]int64{5, 3, 3}, rawScores(t, pl, pod, []*nodeBuilder{foo, bar, baz})); diff != "" {
			t.Errorf("raw scores (-want, +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{5, 0, 0}, rawScores(t, pl, makePod(), []*nodeBuilder{foo, bar, baz})); diff != "" {
			t.Errorf("raw scores of a pod without preferences (-want, +got):\n%s", diff)
		}
	})
	if f, _, _ := (nodeAffinity{}).PreFilter(makePod().info(), nil); f != nil {
		t.Errorf("without addedAffinity, a pod without node affinity is skipped; got filter %T", f)
	}
}

// TestInterPodAffinityArgs checks hardPodAffinityWeight and
// ignorePreferredTermsOfExistingPods: an existing pod on n1 requires
// affinity to the incoming pod's label in its zone.
func TestInterPodAffinityArgs(t *testing.T) {
	term := ipaTerm("zone", metav1.LabelSelectorRequirement{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}})
	existing := makePod().labels("app", "db").podAffinity(term)
	preferring := makePod().labels("app", "db").preferPodAffinity(4, term)
	n1 := func() *nodeBuilder { return makeNode("n1", "cpu", "1").label("zone", "a") }
	n2 := func() *nodeBuilder { return makeNode("n2", "cpu", "1").label("zone", "b") }
	for _, tc := range []struct {
		name     string
		args     string
		existing *podBuilder
		want     []int64 // raw; nil when PreScore skips
	}{
		{"default weight 1", ``, existing, []int64{1, 0}},
		{"weight 5", `hardPodAffinityWeight: 5`, existing, []int64{5, 0}},
		{"weight 0 leaves the required terms out", `hardPodAffinityWeight: 0`, existing, nil},
		{"existing pods' preferred terms count by default", ``, preferring, []int64{4, 0}},
		{"ignorePreferredTermsOfExistingPods skips a pod without preferred terms", `ignorePreferredTermsOfExistingPods: true`, preferring, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{rawArgs("InterPodAffinity", tc.args)}})
			if err != nil {
				t.Fatal(err)
			}
			var pl PreScorePlugin
			for _, e := range b.Entries {
				if e.Plugin.Name() == "InterPodAffinity" {
					pl = e.Plugin.(PreScorePlugin)
				}
			}
			nodes := infos(n1().with(tc.existing), n2())
			sc, st := pl.PreScore(makePod().labels("app", "web").info(), nodes, cache.NewSnapshot(nodes...))
			if st != nil {
				t.Fatal(st.Message())
			}
			if tc.want == nil {
				if sc != nil {
					t.Errorf("PreScore returned a scorer, want the pod skipped")
				}
				return
			}
			if sc == nil {
				t.Fatalf("PreScore skipped the pod, want raw scores %v", tc.want)
			}
			got := make([]int64, len(nodes))
			sc.Score(nodes, got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("raw scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPodTopologySpreadList checks defaultingType List: the given
// constraints spread a pod without its own, hard ones filtering.
func TestPodTopologySpreadList(t *testing.T) {
	b, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{rawArgs("PodTopologySpread",
		`{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.Entries {
		if pl, ok := e.Plugin.(*podTopologySpread); ok {
			want := []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}}
			if diff := cmp.Diff(want, pl.defaults); diff != "" || pl.systemDefaulted {
				t.Errorf("defaults (-want, +got):\n%s; systemDefaulted %v", diff, pl.systemDefaulted)
			}
			return
		}
	}
	t.Fatal("no PodTopologySpread in the built profile")
}

// TestFitIgnoredResources checks that ignoredResources and
// ignoredResourceGroups take extended resources out of the filter.
func TestFitIgnoredResources(t *testing.T) {
	node := makeNode("n1", "cpu", "4", "memory", "1Gi").info()
	pod := makePod().req("cpu", "1", "example.com/foo", "1", "other.io/bar", "1", "hugepages-2Mi", "2Mi")
	for _, tc := range []struct {
		args, want string
	}{
		{``, "Insufficient example.com/foo, Insufficient hugepages-2Mi, Insufficient other.io/bar"},
		{`ignoredResources: [example.com/foo]`, "Insufficient hugepages-2Mi, Insufficient other.io/bar"},
		{`{ignoredResources: [example.com/foo], ignoredResourceGroups: [other.io, hugepages-2Mi]}`, "Insufficient hugepages-2Mi"},
	} {
		pl := builtPluginRaw(t, "NodeResourcesFit", tc.args).(nodeResourcesFit)
		f, _, st := pl.PreFilter(pod.info(), nil)
		if st != nil {
			t.Fatal(st.Message())
		}
		got := ""
		if st := f.Filter(node); st != nil {
			got = st.Message()
		}
		if got != tc.want {
			t.Errorf("args %q: Filter = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func builtPluginRaw(t *testing.T, name, args string) Plugin {
	t.Helper()
	b, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{rawArgs(name, args)}})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for _, e := range b.Entries {
		if e.Plugin.Name() == name {
			return e.Plugin
		}
	}
	t.Fatalf("no %s in the built profile", name)
	return nil
}
