package cache

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// zoneNode is a node in zone.
func zoneNode(name, zone string) *v1.Node {
	n := makeNode(name, res("cpu", "4"))
	n.Labels = map[string]string{v1.LabelTopologyZone: zone}
	return n
}

func TestPodCountsKeptUpToDate(t *testing.T) {
	c := New()
	c.AddNode(zoneNode("n1", "z1"))
	c.AddNode(zoneNode("n2", "z1"))
	c.AddNode(zoneNode("n3", "z2"))
	c.AddNode(makeNode("n4", res("cpu", "4"))) // no zone: in no domain
	for i, node := range []string{"n1", "n1", "n3", "n4"} {
		if err := c.AddPod(podOn(fmt.Sprint("p", i), node, "1")); err != nil {
			t.Fatal(err)
		}
	}
	s := NewSnapshot()
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	all := func(*PodInfo) bool { return true }
	check := func(what string, want map[string]Domain, wantN1 int) {
		t.Helper()
		pc := s.PodCounts("all", v1.LabelTopologyZone, all)
		if diff := cmp.Diff(want, pc.Domains()); diff != "" {
			t.Errorf("%s: domains (-want, +got):\n%s", what, diff)
		}
		if got := pc.Node("n1"); got != wantN1 {
			t.Errorf("%s: n1 has %d pods, want %d", what, got, wantN1)
		}
	}
	check("built", map[string]Domain{"z1": {2, 2}, "z2": {1, 1}}, 2)

	if err := c.AddPod(podOn("p9", "n2", "1")); err != nil {
		t.Fatal(err)
	}
	n1 := zoneNode("n1", "z2")
	c.UpdateNode(nil, n1)
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	check("after a pod added and n1 moved to z2", map[string]Domain{"z1": {1, 1}, "z2": {2, 3}}, 2)

	// Every call that changes the counts in place moves Changes, which a
	// state reading them in place checks.
	changes := s.Changes()
	if err := s.Assume(NewPodInfo(podOn("a", "n1", "1"))); err != nil {
		t.Fatal(err)
	}
	s.Forget("uid-p9", "n2")
	check("after Assume and Forget", map[string]Domain{"z1": {1, 0}, "z2": {2, 4}}, 3)
	if got := s.Changes(); got != changes+2 {
		t.Errorf("Changes after Assume and Forget = %d, want %d", got, changes+2)
	}

	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	check("reverted", map[string]Domain{"z1": {1, 1}, "z2": {2, 3}}, 2)
	if got := s.Changes(); got != changes+3 {
		t.Errorf("Changes after UpdateSnapshot = %d, want %d", got, changes+3)
	}
}

func TestPodCountsBounded(t *testing.T) {
	c := New()
	c.AddNode(zoneNode("n1", "z1"))
	s := NewSnapshot()
	if err := c.UpdateSnapshot(s); err != nil {
		t.Fatal(err)
	}
	none := func(*PodInfo) bool { return false }
	for i := range maxPodCounts + 1 {
		s.PodCounts(fmt.Sprint(i), v1.LabelTopologyZone, none)
		if i == 0 {
			// Read at a later update than the others: id 1 is the
			// least recently read when the cap is reached.
			if err := c.UpdateSnapshot(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(s.counts) != maxPodCounts {
		t.Errorf("%d indexes, want the cap %d", len(s.counts), maxPodCounts)
	}
	if _, ok := s.counts[countKey{"0", v1.LabelTopologyZone}]; ok {
		t.Errorf("index 0, the least recently read, was kept")
	}
	s.PodCounts("kept", v1.LabelTopologyZone, none)
	s.AffinityTerms(RequiredAffinity)
	for range idleUpdates + 1 {
		if err := c.UpdateSnapshot(s); err != nil {
			t.Fatal(err)
		}
		s.PodCounts("kept", v1.LabelTopologyZone, none)
	}
	if len(s.counts) != 1 || s.terms != nil {
		t.Errorf("after %d updates: %d indexes and term index %v, want only the one read", idleUpdates+1, len(s.counts), s.terms != nil)
	}
}

func TestSelectorKey(t *testing.T) {
	a, _ := labels.Parse("app in (b,a),tier")
	b, _ := labels.Parse("tier,app in (a,b)")
	if SelectorKey(a) != SelectorKey(b) {
		t.Errorf("equal selectors: %q and %q", SelectorKey(a), SelectorKey(b))
	}
	if SelectorKey(labels.Nothing()) == SelectorKey(labels.Everything()) {
		t.Errorf("Nothing and Everything have the same key %q", SelectorKey(labels.Nothing()))
	}
}
