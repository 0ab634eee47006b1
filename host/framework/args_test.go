package framework_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeaffinity"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// TestNodeAffinityAddedAffinity checks addedAffinity as upstream's
// node_affinity_test.go: its required selector rejects first, with its own
// reason, for every pod; its preferred terms add to every pod's score.
func TestNodeAffinityAddedAffinity(t *testing.T) {
	pl := builtPlugin(t, "NodeAffinity", &kschedv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "foo", "bar"))}},
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
			{Weight: 5, Preference: ft.LabelTerm(ft.Expr("disk", v1.NodeSelectorOpIn, "ssd"))}},
	}}).(PreFilterPlugin)
	foo := ft.MakeNode("foo", "cpu", "1").Label("zone", "foo").Label("disk", "ssd")
	bar := ft.MakeNode("bar", "cpu", "1").Label("zone", "bar").Label("region", "r1")
	baz := ft.MakeNode("baz", "cpu", "1").Label("zone", "baz").Label("region", "r1")
	for _, tc := range []struct {
		name string
		pod  *ft.PodBuilder
		want []string // each node's reason, "" feasible: foo, bar, baz
	}{
		{"a pod without node affinity meets the added affinity", ft.MakePod(),
			[]string{"", "", nodeaffinity.ReasonEnforcedNodeAffinity}},
		{"the pod's own selector after the added affinity", ft.MakePod().Selector("region", "r1"),
			[]string{nodeaffinity.ReasonNodeAffinity, "", nodeaffinity.ReasonEnforcedNodeAffinity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, st := pl.PreFilter(tc.pod.Info(), nil)
			if st != nil || f == nil {
				t.Fatalf("PreFilter = %v, %+v, want a filter", f, st)
			}
			var got []string
			for _, ni := range ft.Infos(foo, bar, baz) {
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
		pod := ft.MakePod().Preferred(3, ft.LabelTerm(ft.Expr("region", v1.NodeSelectorOpIn, "r1")))
		if diff := cmp.Diff([]int64{5, 3, 3}, rawScores(t, pl, pod, []*ft.NodeBuilder{foo, bar, baz})); diff != "" {
			t.Errorf("raw scores (-want, +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{5, 0, 0}, rawScores(t, pl, ft.MakePod(), []*ft.NodeBuilder{foo, bar, baz})); diff != "" {
			t.Errorf("raw scores of a pod without preferences (-want, +got):\n%s", diff)
		}
	})
	if f, _, _ := pluginOf(abi.PluginNodeAffinity).(PreFilterPlugin).PreFilter(ft.MakePod().Info(), nil); f != nil {
		t.Errorf("without addedAffinity, a pod without node affinity is skipped; got filter %T", f)
	}
}

// TestInterPodAffinityArgs checks hardPodAffinityWeight and
// ignorePreferredTermsOfExistingPods: an existing pod on n1 requires
// affinity to the incoming pod's label in its zone.
func TestInterPodAffinityArgs(t *testing.T) {
	term := ipaTerm("zone", metav1.LabelSelectorRequirement{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}})
	existing := ft.MakePod().Labels("app", "db").PodAffinity(term)
	preferring := ft.MakePod().Labels("app", "db").PreferPodAffinity(4, term)
	n1 := func() *ft.NodeBuilder { return ft.MakeNode("n1", "cpu", "1").Label("zone", "a") }
	n2 := func() *ft.NodeBuilder { return ft.MakeNode("n2", "cpu", "1").Label("zone", "b") }
	for _, tc := range []struct {
		name     string
		args     string
		existing *ft.PodBuilder
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
			nodes := ft.Infos(n1().With(tc.existing), n2())
			sc, st := pl.PreScore(ft.MakePod().Labels("app", "web").Info(), nodes, cache.NewSnapshot(nodes...))
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

// builtPlugin builds a profile with one pluginConfig entry and returns its
// plugin name's plugin.
func builtPlugin(t *testing.T, name string, args runtime.Object) Plugin {
	t.Helper()
	b, err := build(Listers{}, Config{PluginConfig: []kschedv1.PluginConfig{{Name: name, Args: runtime.RawExtension{Object: args}}}})
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

// rawScores are pl's raw scores of nodes for pod.
func rawScores(t *testing.T, pl Plugin, pod *ft.PodBuilder, nodes []*ft.NodeBuilder) []int64 {
	t.Helper()
	nis := ft.Infos(nodes...)
	sc, st := pl.(PreScorePlugin).PreScore(pod.Info(), nis, cache.NewSnapshot(nis...))
	if st != nil {
		t.Fatalf("PreScore: %v", st.Message())
	}
	got := make([]int64, len(nis))
	if sc != nil {
		sc.Score(nis, got)
	}
	return got
}
