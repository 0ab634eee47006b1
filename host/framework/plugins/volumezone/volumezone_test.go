package volumezone

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

// The cases of upstream's TestSingleZone, TestMultiZone and TestWithBinding,
// and the claims, classes and PVs that cannot be found.
func TestVolumeZone(t *testing.T) {
	wait, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	l := ft.StorageListers(
		ft.MakePV("Vol_1", v1.LabelFailureDomainBetaZone, "us-west1-a"),
		ft.MakePV("Vol_2", v1.LabelFailureDomainBetaRegion, "us-west1", "uselessLabel", "none"),
		ft.MakePV("Vol_Stable_1", v1.LabelTopologyZone, "us-west1-a"),
		ft.MakePV("Vol_Stable_2", v1.LabelTopologyRegion, "us-west1", "uselessLabel", "none"),
		ft.MakePV("Vol_Stable_3", v1.LabelTopologyZone, "us-west1-a", v1.LabelTopologyRegion, "us-west1-a"),
		ft.MakePV("Vol_Multi_1", v1.LabelFailureDomainBetaZone, "us-west1-c__us-west1-a"),
		ft.MakePV("Vol_Multi_2", v1.LabelTopologyZone, "us-west1-c__us-west1-a"),
		ft.MakePV("Vol_Bad", v1.LabelTopologyZone, "us-west1-c____"),
		ft.MakeClaim("PVC_1", "Vol_1", ""),
		ft.MakeClaim("PVC_2", "Vol_2", ""),
		ft.MakeClaim("PVC_4", "Vol_not_exist", ""),
		ft.MakeClaim("PVC_Stable_1", "Vol_Stable_1", ""),
		ft.MakeClaim("PVC_Stable_2", "Vol_Stable_2", ""),
		ft.MakeClaim("PVC_Stable_3", "Vol_Stable_3", ""),
		ft.MakeClaim("PVC_Multi_1", "Vol_Multi_1", ""),
		ft.MakeClaim("PVC_Multi_2", "Vol_Multi_2", ""),
		ft.MakeClaim("PVC_Bad", "Vol_Bad", ""),
		ft.MakeClaim("PVC_NoSC", "", "Class_0"),
		ft.MakeClaim("PVC_EmptySC", "", ""),
		ft.MakeClaim("PVC_WaitSC", "", "Class_Wait"),
		ft.MakeClaim("PVC_UnsetSC", "", "Class_Unset"),
		ft.MakeClaim("PVC_ImmediateSC", "", "Class_Immediate"),
		ft.MakeClass("Class_Unset", "p", nil),
		ft.MakeClass("Class_Wait", "p", &wait),
		ft.MakeClass("Class_Immediate", "p", &immediate),
	)
	rejected := func(reason string) *framework.Status {
		return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: "VolumeZone", Reasons: []string{reason}}
	}
	conflict := rejected(ReasonVolumeZone)
	betaZone, betaRegion := v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
	zone, region := v1.LabelTopologyZone, v1.LabelTopologyRegion
	tests := []struct {
		name       string
		claims     []string
		nodeLabels []string
		wantPre    *framework.Status
		wantSkip   bool
		want       *framework.Status
	}{
		{name: "pod without volume", nodeLabels: []string{betaZone, "us-west1-a"}, wantSkip: true},
		{name: "node without labels", claims: []string{"PVC_1"}},
		{name: "beta zone label matched", claims: []string{"PVC_1"}, nodeLabels: []string{betaZone, "us-west1-a", "uselessLabel", "none"}},
		{name: "beta region label matched", claims: []string{"PVC_2"}, nodeLabels: []string{betaRegion, "us-west1"}},
		{name: "beta region label doesn't match", claims: []string{"PVC_2"}, nodeLabels: []string{betaRegion, "no_us-west1"},
			want: conflict},
		{name: "beta zone label doesn't match", claims: []string{"PVC_1"}, nodeLabels: []string{betaZone, "no_us-west1-a"},
			want: conflict},
		{name: "zone label matched", claims: []string{"PVC_Stable_1"}, nodeLabels: []string{zone, "us-west1-a"}},
		{name: "region label matched", claims: []string{"PVC_Stable_2"}, nodeLabels: []string{region, "us-west1"}},
		{name: "region label doesn't match", claims: []string{"PVC_Stable_2"}, nodeLabels: []string{region, "no_us-west1"},
			want: conflict},
		{name: "zone label doesn't match", claims: []string{"PVC_Stable_1"}, nodeLabels: []string{zone, "no_us-west1-a"},
			want: conflict},
		{name: "pv with zone and region, node with only zone", claims: []string{"PVC_Stable_3"},
			nodeLabels: []string{zone, "us-west1-a"}, want: conflict},
		{name: "pv with zone, node with beta zone", claims: []string{"PVC_Stable_1"}, nodeLabels: []string{betaZone, "us-west1-a"},
			want: conflict},
		{name: "pv with beta label, node with ga label, matched", claims: []string{"PVC_1"}, nodeLabels: []string{zone, "us-west1-a"}},
		{name: "pv with beta label, node with ga label, don't match", claims: []string{"PVC_1"},
			nodeLabels: []string{zone, "us-west1-b"}, want: conflict},
		{name: "multi zone: node without labels", claims: []string{"PVC_Multi_1"}},
		{name: "multi zone: beta zone label matched", claims: []string{"PVC_Multi_1"}, nodeLabels: []string{betaZone, "us-west1-a"}},
		{name: "multi zone: zone label matched", claims: []string{"PVC_Multi_2"}, nodeLabels: []string{zone, "us-west1-a"}},
		{name: "multi zone: zone label doesn't match", claims: []string{"PVC_Multi_2"}, nodeLabels: []string{zone, "us-west1-b"},
			want: conflict},
		{name: "a label value that does not parse is ignored", claims: []string{"PVC_Bad"}, wantSkip: true},
		{name: "every PV must match", claims: []string{"PVC_Stable_1", "PVC_Multi_2"}, nodeLabels: []string{zone, "us-west1-c"},
			want: conflict},
		{name: "missing claim", claims: []string{"PVC_missing"}, wantPre: rejected(`persistentvolumeclaim "PVC_missing" not found`)},
		{name: "claim without a name", claims: []string{""}, wantPre: rejected("PersistentVolumeClaim had no name")},
		{name: "missing PV", claims: []string{"PVC_4"}, wantPre: rejected(`persistentvolume "Vol_not_exist" not found`)},
		{name: "unbound volume empty storage class", claims: []string{"PVC_EmptySC"},
			wantPre: rejected("PersistentVolumeClaim had no pv name and storageClass name")},
		{name: "unbound volume no storage class", claims: []string{"PVC_NoSC"},
			wantPre: rejected(`storageclass.storage.k8s.io "Class_0" not found`)},
		{name: "unbound volume binding mode not set", claims: []string{"PVC_UnsetSC"},
			wantPre: rejected(`VolumeBindingMode not set for StorageClass "Class_Unset"`)},
		{name: "unbound volume immediate binding mode", claims: []string{"PVC_ImmediateSC"},
			wantPre: rejected("PersistentVolume had no name")},
		{name: "unbound volume wait binding mode", claims: []string{"PVC_WaitSC"}, wantSkip: true},
		{name: "wait binding mode beside a bound claim", claims: []string{"PVC_WaitSC", "PVC_1"},
			nodeLabels: []string{betaZone, "us-west1-b"}, want: conflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := ft.MakeNode("host1")
			for i := 0; i < len(tc.nodeLabels); i += 2 {
				node.Label(tc.nodeLabels[i], tc.nodeLabels[i+1])
			}
			pre, st, skipped := ft.RunPlugin(t, volumeZone{listers: l}, ft.MakePod().MountClaims(tc.claims...).Info(), nil, node.Info())
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

// A pod without claims or restricted volumes pays nothing for the plugin:
// its PreFilter skips it without allocating (the same holds of
// VolumeRestrictions and NodeVolumeLimits, tested in their packages).
func TestVolumeZoneSkipsPlainPodsWithoutAllocating(t *testing.T) {
	pi := ft.MakePod().Req("cpu", "100m").MountVolumes(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}).Info()
	snap := cache.NewSnapshot(ft.MakeNode("n1").With(ft.MakePod().MountClaims("data")).Info())
	for _, pl := range []framework.PreFilterPlugin{volumeZone{}} {
		if f, _, st := pl.PreFilter(pi, snap); f != nil || st != nil {
			t.Errorf("%s: PreFilter = %v, %+v, want a skip", pl.Name(), f, st)
		}
		if n := testing.AllocsPerRun(100, func() { pl.PreFilter(pi, snap) }); n != 0 {
			t.Errorf("%s: PreFilter allocates %v times for a pod without volume constraints, want 0", pl.Name(), n)
		}
	}
}
