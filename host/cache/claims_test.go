package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// claims adds persistentVolumeClaim volumes for the claims named, and an
// ephemeral volume (not counted, as upstream).
func (w *podWrapper) claims(names ...string) *podWrapper {
	for _, n := range names {
		w.p.Spec.Volumes = append(w.p.Spec.Volumes, v1.Volume{Name: "v-" + n, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
	}
	w.p.Spec.Volumes = append(w.p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{
		Ephemeral: &v1.EphemeralVolumeSource{}}})
	return w
}

func TestPodInfoClaims(t *testing.T) {
	p := makePod("a").claims("c1", "c2", "c1").obj()
	p.Namespace = "ns"
	if diff := cmp.Diff([]string{"ns/c1", "ns/c2", "ns/c1"}, NewPodInfo(p).Claims); diff != "" {
		t.Errorf("Claims (-want, +got):\n%s", diff)
	}
	if got := NewPodInfo(podOn("b", "n1", "1")).Claims; got != nil {
		t.Errorf("Claims of a pod without claims = %v, want nil", got)
	}
}

// claimUsers lists the users of each key on n.
func claimUsers(n *NodeInfo, keys ...string) []int {
	out := make([]int, len(keys))
	for i, k := range keys {
		out[i] = n.ClaimUsers(k)
	}
	return out
}

func TestNodeInfoClaimUsers(t *testing.T) {
	a := NewPodInfo(makePod("a").node("n1").claims("c1", "c1").obj())
	b := NewPodInfo(makePod("b").node("n1").claims("c1", "c2").obj())
	plain := NewPodInfo(podOn("p", "n1", "1"))
	n := NewNodeInfo(makeNode("n1", res("cpu", "4")), a, plain)
	keys := []string{"default/c1", "default/c2", "other/c1"}
	if diff := cmp.Diff([]int{2, 0, 0}, claimUsers(n, keys...)); diff != "" {
		t.Errorf("after a (-want, +got):\n%s", diff)
	}
	n.AddPod(b)
	c := n.Clone()
	if diff := cmp.Diff([]int{3, 1, 0}, claimUsers(n, keys...)); diff != "" {
		t.Errorf("after b (-want, +got):\n%s", diff)
	}
	n.RemovePod(a.Pod.UID)
	if diff := cmp.Diff([]int{1, 1, 0}, claimUsers(n, keys...)); diff != "" {
		t.Errorf("after removing a (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 1, 0}, claimUsers(c, keys...)); diff != "" {
		t.Errorf("the clone changed with its original (-want, +got):\n%s", diff)
	}
	n.RemovePod(b.Pod.UID)
	if n.claims != nil {
		t.Errorf("claims = %v after every claim's pod left, want nil", n.claims)
	}
}

// TestSnapshotClaimInUse follows the cluster-wide claim counts through the
// cache's added, assumed, forgotten and removed pods, node removal, and the
// snapshot's own Assume and Forget (undone by the next update).
func TestSnapshotClaimInUse(t *testing.T) {
	c, _, _ := newTestCache(t)
	s := NewSnapshot()
	inUse := func(keys ...string) []bool {
		t.Helper()
		mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
		out := make([]bool, len(keys))
		for i, k := range keys {
			out[i] = s.ClaimInUse(k)
		}
		return out
	}
	check := func(what string, want []bool, got []bool) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: ClaimInUse(c1, c2, c3) (-want, +got):\n%s", what, diff)
		}
	}
	keys := []string{"default/c1", "default/c2", "default/c3"}
	check("empty", []bool{false, false, false}, inUse(keys...))

	a := makePod("a").node("n1").claims("c1").obj()
	mustNil(t, "AddPod a", c.AddPod(a))
	b := makePod("b").node("n2").claims("c1", "c2").obj()
	mustNil(t, "AssumePod b", c.AssumePod(b))
	check("a added, b assumed", []bool{true, true, false}, inUse(keys...))

	mustNil(t, "ForgetPod b", c.ForgetPod(b))
	check("b forgotten", []bool{true, false, false}, inUse(keys...))

	// The snapshot's own changes: an assumed pod group member, a victim.
	d := NewPodInfo(makePod("d").node("n3").claims("c3").obj())
	mustNil(t, "Assume d", s.Assume(d))
	if !s.ClaimInUse("default/c3") {
		t.Errorf("c3 not in use after Snapshot.Assume")
	}
	s.Forget(a.UID, "n1")
	if s.ClaimInUse("default/c1") {
		t.Errorf("c1 in use after Snapshot.Forget of its only user")
	}
	s.Forget(d.Pod.UID, "n3")
	if s.ClaimInUse("default/c3") {
		t.Errorf("c3 in use after Snapshot.Forget of the assumed d")
	}
	mustNil(t, "Assume d again", s.Assume(d))
	check("update undoes the snapshot's changes", []bool{true, false, false}, inUse(keys...))

	// Counts kept up to date across updates of nodes already in the snapshot.
	e := makePod("e").node("n1").claims("c2").obj()
	mustNil(t, "AddPod e", c.AddPod(e))
	check("e added", []bool{true, true, false}, inUse(keys...))
	mustNil(t, "RemovePod e", c.RemovePod(e))
	check("e removed", []bool{true, false, false}, inUse(keys...))

	// A node gone with its pods still in the cache leaves the snapshot, and
	// its pods with it.
	mustNil(t, "RemoveNode n1", c.RemoveNode(makeNode("n1", nil)))
	check("n1 removed", []bool{false, false, false}, inUse(keys...))
	c.AddNode(makeNode("n1", res("cpu", "4")))
	check("n1 back", []bool{true, false, false}, inUse(keys...))
	mustNil(t, "RemovePod a", c.RemovePod(a))
	check("a removed", []bool{false, false, false}, inUse(keys...))
}
