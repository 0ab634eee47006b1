package volumerestrictions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

// The disk conflict cases of upstream's TestGCEDiskConflicts,
// TestAWSDiskConflicts, TestRBDDiskConflicts and TestISCSIDiskConflicts,
// with the read-only rules.
func TestVolumeRestrictionsDiskConflicts(t *testing.T) {
	gce := func(name string, ro bool) v1.VolumeSource {
		return v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: ro}}
	}
	aws := func(id string, ro bool) v1.VolumeSource {
		return v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id, ReadOnly: ro}}
	}
	rbd := func(mons []string, image string, ro bool) v1.VolumeSource {
		return v1.VolumeSource{RBD: &v1.RBDVolumeSource{CephMonitors: mons, RBDPool: "foo", RBDImage: image, FSType: "ext4", ReadOnly: ro}}
	}
	iscsi := func(iqn string, ro bool) v1.VolumeSource {
		return v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: iqn, FSType: "ext4", ReadOnly: ro}}
	}
	const iqn1, iqn2 = "iqn.2016-12.server:storage.target01", "iqn.2017-12.server:storage.target01"
	tests := []struct {
		name        string
		pod         v1.VolumeSource
		existing    []v1.VolumeSource // one pod each on the node
		wantSkip    bool
		wantPodFits bool
	}{
		{name: "no volumes", wantSkip: true},
		{name: "a volume without restrictions", pod: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}},
			existing: []v1.VolumeSource{gce("foo", false)}, wantSkip: true},
		{name: "GCE PD: empty node", pod: gce("foo", false), wantPodFits: true},
		{name: "GCE PD: other disk", pod: gce("foo", false), existing: []v1.VolumeSource{gce("bar", false)}, wantPodFits: true},
		{name: "GCE PD: same disk", pod: gce("foo", false), existing: []v1.VolumeSource{gce("bar", false), gce("foo", false)}},
		{name: "GCE PD: same disk, one read-only", pod: gce("foo", true), existing: []v1.VolumeSource{gce("foo", false)}},
		{name: "GCE PD: same disk, both read-only", pod: gce("foo", true), existing: []v1.VolumeSource{gce("foo", true)},
			wantPodFits: true},
		{name: "EBS: other volume", pod: aws("foo", false), existing: []v1.VolumeSource{aws("bar", false)}, wantPodFits: true},
		{name: "EBS: same volume", pod: aws("foo", false), existing: []v1.VolumeSource{aws("foo", false)}},
		{name: "EBS: same volume, both read-only still conflict", pod: aws("foo", true), existing: []v1.VolumeSource{aws("foo", true)}},
		{name: "RBD: no monitor in common", pod: rbd([]string{"a", "b"}, "bar", false),
			existing: []v1.VolumeSource{rbd([]string{"c", "d"}, "bar", false)}, wantPodFits: true},
		{name: "RBD: a monitor in common, same pool and image", pod: rbd([]string{"a", "b"}, "bar", false),
			existing: []v1.VolumeSource{rbd([]string{"b", "c"}, "bar", false)}},
		{name: "RBD: a monitor in common, other image", pod: rbd([]string{"a", "b"}, "bar", false),
			existing: []v1.VolumeSource{rbd([]string{"a"}, "baz", false)}, wantPodFits: true},
		{name: "RBD: both read-only", pod: rbd([]string{"a"}, "bar", true),
			existing: []v1.VolumeSource{rbd([]string{"a"}, "bar", true)}, wantPodFits: true},
		{name: "ISCSI: other IQN", pod: iscsi(iqn1, false), existing: []v1.VolumeSource{iscsi(iqn2, false)}, wantPodFits: true},
		{name: "ISCSI: same IQN", pod: iscsi(iqn1, false), existing: []v1.VolumeSource{iscsi(iqn1, false)}},
		{name: "ISCSI: same IQN, both read-only", pod: iscsi(iqn1, true), existing: []v1.VolumeSource{iscsi(iqn1, true)},
			wantPodFits: true},
		{name: "kinds do not mix", pod: gce("foo", false), existing: []v1.VolumeSource{aws("foo", false)}, wantPodFits: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := ft.MakePod()
			if tc.pod != (v1.VolumeSource{}) {
				pod.MountVolumes(tc.pod)
			}
			node := ft.MakeNode("n1")
			for _, e := range tc.existing {
				node.With(ft.MakePod().MountVolumes(e))
			}
			pre, st, skipped := ft.RunPlugin(t, volumeRestrictions{}, pod.Info(), nil, node.Info())
			if pre != nil {
				t.Fatalf("PreFilter = %+v", pre)
			}
			if skipped != tc.wantSkip {
				t.Fatalf("skipped = %v, want %v", skipped, tc.wantSkip)
			}
			var want *framework.Status
			if !tc.wantSkip && !tc.wantPodFits {
				want = &framework.Status{Code: framework.Unschedulable, Plugin: "VolumeRestrictions", Reasons: []string{ReasonDiskConflict}}
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

// The cases of upstream's TestAccessModeConflicts: claims are looked up
// (missing: rejected at PreFilter), and a ReadWriteOncePod claim in use by
// any pod of the cluster makes every node Unschedulable.
func TestVolumeRestrictionsReadWriteOncePod(t *testing.T) {
	rwop1 := ft.MakeClaim("claim-with-rwop-1", "", "", v1.ReadWriteOncePod)
	rwop2 := ft.MakeClaim("claim-with-rwop-2", "", "", v1.ReadWriteOncePod)
	rwx := ft.MakeClaim("claim-with-rwx", "", "", v1.ReadWriteMany)
	conflict := &framework.Status{Code: framework.Unschedulable, Plugin: "VolumeRestrictions", Reasons: []string{ReasonReadWriteOncePodConflict}}
	tests := []struct {
		name      string
		pod       *ft.PodBuilder
		elsewhere []*ft.PodBuilder // pods on node n2; n1 is filtered
		claims    []any
		wantPre   *framework.Status
		wantSkip  bool
		want      *framework.Status
	}{
		{name: "nothing", pod: ft.MakePod(), wantSkip: true},
		{name: "failed to get PVC", pod: ft.MakePod().MountClaims("claim-with-rwop-1"),
			wantPre: &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: "VolumeRestrictions",
				Reasons: []string{`persistentvolumeclaim "claim-with-rwop-1" not found`}}},
		{name: "no access mode conflict", pod: ft.MakePod().MountClaims("claim-with-rwop-1"),
			elsewhere: []*ft.PodBuilder{ft.MakePod().MountClaims("claim-with-rwx")},
			claims:    []any{rwop1, rwx}, wantSkip: true},
		{name: "ReadWriteMany claim shared", pod: ft.MakePod().MountClaims("claim-with-rwx"),
			elsewhere: []*ft.PodBuilder{ft.MakePod().MountClaims("claim-with-rwx")},
			claims:    []any{rwx}, wantSkip: true},
		{name: "access mode conflict, on another node", pod: ft.MakePod().MountClaims("claim-with-rwop-1"),
			elsewhere: []*ft.PodBuilder{ft.MakePod().MountClaims("claim-with-rwop-1"), ft.MakePod().MountClaims("claim-with-rwx")},
			claims:    []any{rwop1, rwx}, want: conflict},
		{name: "two conflicts", pod: ft.MakePod().MountClaims("claim-with-rwop-1", "claim-with-rwop-2"),
			elsewhere: []*ft.PodBuilder{ft.MakePod().MountClaims("claim-with-rwop-1", "claim-with-rwop-2")},
			claims:    []any{rwop1, rwop2}, want: conflict},
		{name: "same claim name in another namespace", pod: ft.MakePod().MountClaims("claim-with-rwop-1"),
			elsewhere: []*ft.PodBuilder{ft.MakePod().Namespace("other").MountClaims("claim-with-rwop-1")},
			claims:    []any{rwop1}, wantSkip: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n1, n2 := ft.MakeNode("n1").Info(), ft.MakeNode("n2").With(tc.elsewhere...).Info()
			pl := volumeRestrictions{listers: ft.StorageListers(tc.claims...)}
			pre, st, skipped := ft.RunPlugin(t, pl, tc.pod.Info(), cache.NewSnapshot(n1, n2), n1)
			if diff := cmp.Diff(tc.wantPre, pre); diff != "" {
				t.Fatalf("PreFilter (-want, +got):\n%s", diff)
			}
			if skipped != tc.wantSkip {
				t.Fatalf("skipped = %v, want %v", skipped, tc.wantSkip)
			}
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

// Preemption's dry run removing the pod that uses the ReadWriteOncePod
// claim makes the nodes fit again in the copy of the state only; putting
// it back (a reprieve) restores the conflict. A nominated user counts too.
func TestVolumeRestrictionsReadWriteOncePodUpdater(t *testing.T) {
	l := ft.StorageListers(ft.MakeClaim("data", "", "", v1.ReadWriteOncePod), ft.MakeClaim("logs", "", "", v1.ReadWriteOnce))
	user := ft.MakePod().MountClaims("data", "logs").Node("n2").Info()
	other := ft.MakePod().MountClaims("logs").Node("n2").Info()
	n1 := ft.MakeNode("n1").Info()
	n2 := cache.NewNodeInfo(ft.MakeNode("n2").N, user, other)
	p := ft.MustProfile(framework.Entry{Plugin: volumeRestrictions{listers: l}})
	ps, st := p.Prepare(ft.MakePod().MountClaims("data").Info(), cache.NewSnapshot(n1, n2))
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	if st := framework.Filter(ps, n1); st == nil || st.Code != framework.Unschedulable || st.Message() != ReasonReadWriteOncePodConflict {
		t.Fatalf("Filter = %+v, want the ReadWriteOncePod conflict, Unschedulable", st)
	}

	dry := ps.Clone()
	victims := n2.Clone()
	victims.RemovePod(other.Pod.UID)
	dry.RemovePod(other, victims)
	if st := framework.Filter(dry, victims); st == nil {
		t.Errorf("Filter after removing a pod without the claim = nil, want the conflict")
	}
	victims.RemovePod(user.Pod.UID)
	dry.RemovePod(user, victims)
	if st := framework.Filter(dry, victims); st != nil {
		t.Errorf("Filter after removing the claim's user = %+v, want the node to fit", st)
	}
	if st := framework.Filter(ps, n1); st == nil {
		t.Errorf("the dry run changed the cycle's state: Filter = nil")
	}
	victims.AddPod(user)
	dry.AddPod(user, victims)
	if st := framework.Filter(dry, victims); st == nil {
		t.Errorf("Filter after the user's reprieve = nil, want the conflict")
	}

	// Nobody uses the claim: the pod skips the plugin, and a pod nominated
	// to n1 with the claim does not make it conflict (as upstream's
	// skipped plugin sees no AddPod).
	free := cache.NewSnapshot(n1)
	ps, st = p.Prepare(ft.MakePod().MountClaims("data").Info(), free)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	ps.AddNominated(n1, []*cache.PodInfo{ft.MakePod().MountClaims("data").Node("n1").Info()})
	if st := framework.Filter(ps, n1); st != nil {
		t.Errorf("Filter with a nominated user and no state = %+v, want nil (skipped)", st)
	}
}

// A pod without claims or restricted volumes pays nothing for the plugin:
// its PreFilter skips it without allocating (the same holds of VolumeZone
// and NodeVolumeLimits, tested in their packages).
func TestVolumeRestrictionsSkipsPlainPodsWithoutAllocating(t *testing.T) {
	pi := ft.MakePod().Req("cpu", "100m").MountVolumes(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}).Info()
	snap := cache.NewSnapshot(ft.MakeNode("n1").With(ft.MakePod().MountClaims("data")).Info())
	for _, pl := range []framework.PreFilterPlugin{volumeRestrictions{}} {
		if f, _, st := pl.PreFilter(pi, snap); f != nil || st != nil {
			t.Errorf("%s: PreFilter = %v, %+v, want a skip", pl.Name(), f, st)
		}
		if n := testing.AllocsPerRun(100, func() { pl.PreFilter(pi, snap) }); n != 0 {
			t.Errorf("%s: PreFilter allocates %v times for a pod without volume constraints, want 0", pl.Name(), n)
		}
	}
}
