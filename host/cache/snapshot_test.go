package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewSnapshot(t *testing.T) {
	n2 := NewNodeInfo(makeNode("n2", res("cpu", "2")), NewPodInfo(podOn("a", "n2", "1")))
	n1 := NewNodeInfo(makeNode("n1", res("cpu", "1")))
	ghost := NewNodeInfo(nil, NewPodInfo(podOn("b", "gone", "1")))
	s := NewSnapshot(n2, ghost, nil, n1)

	if s.NumNodes() != 2 || len(s.List()) != 2 || s.List()[0] != n1 || s.List()[1] != n2 {
		t.Errorf("List = %v, want [n1 n2] (sorted, no node info without a node)", s.List())
	}
	if s.Get("n2") != n2 || s.Get("gone") != nil || s.Get("n9") != nil {
		t.Errorf("Get: n2 %p (want %p), gone %v, n9 %v", s.Get("n2"), n2, s.Get("gone"), s.Get("n9"))
	}
	if s.Generation() != 0 {
		t.Errorf("Generation = %d, want 0", s.Generation())
	}

	var zero Snapshot
	if zero.NumNodes() != 0 || zero.List() != nil || zero.Get("n1") != nil || zero.Generation() != 0 {
		t.Errorf("zero Snapshot not empty")
	}
	if err := zero.Assume(NewPodInfo(podOn("a", "n1", "1"))); err == nil {
		t.Errorf("Assume on a zero Snapshot: no error")
	}
	zero.Forget("uid-a", "n1") // no panic
}

func TestSnapshotAssumeCopyOnWrite(t *testing.T) {
	c, _, _ := newTestCache(t)
	mustNil(t, "AddPod", c.AddPod(podOn("a", "n1", "1")))
	s, other := NewSnapshot(), NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(other))
	shared := s.Get("n1")
	sharedState := sumsOf(shared)
	sharedGen := shared.Generation()

	b := NewPodInfo(podOn("b", "n1", "1"))
	mustNil(t, "Assume b", s.Assume(b))
	own := s.Get("n1")
	if own == shared {
		t.Fatalf("Assume changed the shared node info in place")
	}
	if diff := cmp.Diff(sharedState, sumsOf(shared)); diff != "" {
		t.Errorf("shared node info changed (-want, +got):\n%s", diff)
	}
	if shared.Generation() != sharedGen {
		t.Errorf("shared node info's generation changed")
	}
	if other.Get("n1") != shared {
		t.Errorf("another snapshot's node info changed")
	}
	if diff := cmp.Diff([]string{"uid-a", "uid-b"}, uids(own)); diff != "" {
		t.Errorf("n1 in s (-want, +got):\n%s", diff)
	}
	if own.Requested().MilliCPU != 2000 {
		t.Errorf("n1 in s requests %d cpu, want 2000", own.Requested().MilliCPU)
	}
	if s.List()[0] != own {
		t.Errorf("List still has the shared n1")
	}

	// The second change to n1 reuses the private clone.
	mustNil(t, "Assume d", s.Assume(NewPodInfo(podOn("d", "n1", "1"))))
	if s.Get("n1") != own {
		t.Errorf("second Assume on n1 cloned again")
	}

	for name, pi := range map[string]*PodInfo{
		"assumed twice":       b,
		"already on the node": NewPodInfo(podOn("a", "n1", "1")),
		"unknown node":        NewPodInfo(podOn("x", "n9", "1")),
		"no node":             NewPodInfo(makePod("y").obj()),
	} {
		if err := s.Assume(pi); err == nil {
			t.Errorf("Assume, %s: no error", name)
		}
	}

	// Forget undoes Assume, and removes cache pods (victims) copy-on-write.
	s.Forget("uid-b", "n1")
	s.Forget("uid-d", "n1")
	s.Forget("uid-a", "n1")
	s.Forget("uid-a", "n1") // not there: nothing
	if len(own.Pods()) != 0 || own.Requested().MilliCPU != 0 {
		t.Errorf("n1 in s after Forget: pods %v, cpu %d", uids(own), own.Requested().MilliCPU)
	}
	n2 := s.Get("n2")
	s.Forget("uid-a", "n2") // not on n2: no clone
	if s.Get("n2") != n2 {
		t.Errorf("Forget of a pod not on the node cloned it")
	}
	if diff := cmp.Diff(sharedState, sumsOf(shared)); diff != "" {
		t.Errorf("shared node info changed by Forget (-want, +got):\n%s", diff)
	}
	// b can be assumed again once forgotten.
	mustNil(t, "Assume b again", s.Assume(b))

	// UpdateSnapshot drops the snapshot's changes: back to the shared node
	// info, or to the cache's newer one.
	mustNil(t, "Assume on n2", s.Assume(NewPodInfo(podOn("e", "n2", "1"))))
	mustNil(t, "AddPod", c.AddPod(podOn("f", "n2", "1")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if s.Get("n1") != shared {
		t.Errorf("n1 not reverted to the shared node info")
	}
	if diff := cmp.Diff([]string{"uid-f"}, uids(s.Get("n2"))); diff != "" {
		t.Errorf("n2 after UpdateSnapshot (-want, +got):\n%s", diff)
	}
	if s.List()[0] != shared {
		t.Errorf("List not reverted")
	}
	mustNil(t, "Assume b after the update", s.Assume(b))
}
