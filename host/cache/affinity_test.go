package cache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withAnti gives the pod a required anti-affinity term against app=x.
func (w *podWrapper) withAnti() *podWrapper {
	w.p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			TopologyKey:   "kubernetes.io/hostname",
		}}}}
	return w
}

// withPreferred gives the pod a preferred affinity term only.
func (w *podWrapper) withPreferred() *podWrapper {
	w.p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 5,
			PodAffinityTerm: v1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "y"}},
				TopologyKey:   "zone",
			}}}}}
	return w
}

func podUIDs(pods []*PodInfo) []string {
	var out []string
	for _, pi := range pods {
		out = append(out, string(pi.Pod.UID))
	}
	slices.Sort(out)
	return out
}

func TestPodAffinityParsed(t *testing.T) {
	if pi := NewPodInfo(makePod("plain").obj()); pi.Affinity != nil {
		t.Errorf("a pod without pod affinity got %+v", pi.Affinity)
	}
	pi := NewPodInfo(makePod("anti").withAnti().obj())
	if pi.Affinity == nil || len(pi.Affinity.RequiredAnti) != 1 || pi.Affinity.Err != nil {
		t.Fatalf("anti: %+v", pi.Affinity)
	}
	term := pi.Affinity.RequiredAnti[0]
	if !term.Namespaces.Has("default") || term.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("term %+v: want the pod's namespace and the topology key", term)
	}
	bad := makePod("bad").withAnti().obj()
	bad.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions =
		[]metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}
	if pi := NewPodInfo(bad); pi.Affinity == nil || pi.Affinity.Err == nil {
		t.Errorf("a term with a bad operator parsed without error: %+v", pi.Affinity)
	}
}

func TestNodeInfoAffinityLists(t *testing.T) {
	anti := NewPodInfo(makePod("anti").uid("a").node("n1").withAnti().obj())
	pref := NewPodInfo(makePod("pref").uid("p").node("n1").withPreferred().obj())
	plain := NewPodInfo(makePod("plain").uid("x").node("n1").obj())
	n := NewNodeInfo(makeNode("n1", res("cpu", "4")), anti, pref, plain)
	if got := podUIDs(n.PodsWithAffinity()); !slices.Equal(got, []string{"a", "p"}) {
		t.Errorf("PodsWithAffinity = %v", got)
	}
	c := n.Clone()
	c.RemovePod("a")
	if got := podUIDs(c.PodsWithAffinity()); !slices.Equal(got, []string{"p"}) {
		t.Errorf("clone after removing a: PodsWithAffinity = %v", got)
	}
	if got := podUIDs(n.PodsWithAffinity()); !slices.Equal(got, []string{"a", "p"}) {
		t.Errorf("the original changed with its clone: %v", got)
	}
}

func TestSnapshotAffinityTerms(t *testing.T) {
	c := New()
	for _, name := range []string{"n1", "n2", "n3"} {
		n := makeNode(name, res("cpu", "4"))
		n.Labels = map[string]string{"kubernetes.io/hostname": name, "zone": "z1"}
		c.AddNode(n)
	}
	if err := c.AddPod(makePod("anti").uid("a").node("n2").withAnti().obj()); err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{}
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	// terms lists each term of kind as "topology key: domain=carriers".
	terms := func(kind TermKind) []string {
		var out []string
		for _, tc := range s.AffinityTerms(kind) {
			sum := 0
			for v, n := range tc.Domains {
				out = append(out, fmt.Sprintf("%s: %s=%d w%d", tc.Term.TopologyKey, v, n, tc.Weight))
				sum += n
			}
			if tc.Pods() != sum {
				t.Errorf("term %s: Pods() = %d, its domains sum to %d", tc.Term.TopologyKey, tc.Pods(), sum)
			}
		}
		slices.Sort(out)
		return out
	}
	check := func(what string, kind TermKind, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, terms(kind)); diff != "" {
			t.Errorf("%s: terms (-want, +got):\n%s", what, diff)
		}
	}
	check("built", RequiredAntiAffinity, "kubernetes.io/hostname: n2=1 w0")
	// A pod assumed in the snapshot only shows at once; two pods with the
	// same term are one term with two carriers.
	for _, uid := range []string{"p1", "p2"} {
		if err := s.Assume(NewPodInfo(makePod(uid).uid(uid).node("n3").withPreferred().obj())); err != nil {
			t.Fatal(err)
		}
	}
	check("after Assume", PreferredAffinity, "zone: z1=2 w5")
	s.Forget("a", "n2")
	check("after Forget", RequiredAntiAffinity)
	// The next update undoes both.
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	check("after UpdateSnapshot", RequiredAntiAffinity, "kubernetes.io/hostname: n2=1 w0")
	check("after UpdateSnapshot", PreferredAffinity)
	if err := c.RemovePod(makePod("anti").uid("a").node("n2").withAnti().obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	check("after the pod's removal", RequiredAntiAffinity)
}

func TestSnapshotImageNodes(t *testing.T) {
	withImages := func(name string, images ...string) *v1.Node {
		n := makeNode(name, res("cpu", "4"))
		for _, img := range images {
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{img, img + "@sha256:0"}, SizeBytes: 1})
		}
		return n
	}
	c := New()
	c.AddNode(withImages("n1", "a", "b"))
	c.AddNode(withImages("n2", "a"))
	s := &Snapshot{}
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	if a, b, z := s.ImageNodes("a"), s.ImageNodes("b@sha256:0"), s.ImageNodes("z"); a != 2 || b != 1 || z != 0 {
		t.Errorf("ImageNodes a, b@sha256:0, z = %d, %d, %d; want 2, 1, 0", a, b, z)
	}
	c.UpdateNode(nil, withImages("n2", "b"))
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	if a, b := s.ImageNodes("a"), s.ImageNodes("b"); a != 1 || b != 2 {
		t.Errorf("after n2's update: ImageNodes a, b = %d, %d; want 1, 2", a, b)
	}
}
