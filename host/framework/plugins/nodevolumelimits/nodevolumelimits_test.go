package nodevolumelimits

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

const (
	ebsDriver      = csiplugins.AWSEBSDriverName
	gceDriver      = csiplugins.GCEPDDriverName
	ebsInTree      = csiplugins.AWSEBSInTreePluginName
	hostpathInTree = "kubernetes.io/hostpath"
	limitsNode     = "node-for-max-pd-test-1"
)

// limitsFixture is upstream's csi_test.go fixture: for each driver, PVs
// and bound claims csi-<driver>-0..3 (an EBS volume for the in-tree EBS
// plugin, a hostPath for hostpath, a CSI volume otherwise), claims csi-4
// (unbound, class csi-sc), csi-5 (unbound, no class) and csi-6 (bound to a
// PV that does not exist, class csi-sc); class csi-sc provisioned by the
// first driver; vaCount VolumeAttachments per driver on the node.
func limitsFixture(vaCount int, drivers []string, extra ...any) []any {
	var objs []any
	for _, d := range drivers {
		for j := range 4 {
			name := fmt.Sprintf("csi-%s-%d", d, j)
			pv := ft.MakePV(name)
			switch d {
			case ebsInTree:
				pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: name}
			case hostpathInTree:
				pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: "/tmp"}
			default:
				pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: d, VolumeHandle: name}
			}
			objs = append(objs, pv, ft.MakeClaim(name, name, ""))
		}
		for j := range vaCount {
			pv := fmt.Sprintf("csi-%s-%d", d, j)
			objs = append(objs, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("va-%s-%d", d, j)},
				Spec: storagev1.VolumeAttachmentSpec{NodeName: limitsNode, Attacher: d,
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}})
		}
	}
	missing := ft.MakeClaim("csi-6", "missing-in-action", "csi-sc")
	objs = append(objs, ft.MakeClaim("csi-4", "", "csi-sc"), ft.MakeClaim("csi-5", "", ""), missing,
		ft.MakeClass("csi-sc", drivers[0], nil))
	return append(objs, extra...)
}

// limitsCSINode is the node's CSINode for a limit source of upstream's
// test: "csinode" (each driver with limit), "csinode-with-no-limit",
// "no-csi-driver" (no drivers), "" (none).
func limitsCSINode(source string, limit int, drivers []string) *storagev1.CSINode {
	var args []any
	switch source {
	case "":
		return nil
	case "csinode-with-no-limit":
		limit = -1
		fallthrough
	case "csinode":
		for _, d := range drivers {
			args = append(args, d, limit)
		}
	}
	return ft.MakeCSINode(limitsNode, args...)
}

// ephemeralPod is upstream's pod abc in namespace test with generic
// ephemeral volumes named vols, and ownedClaim its claim for volume vol.
func ephemeralPod(uid string, vols ...string) *ft.PodBuilder {
	b := ft.MakePod().Namespace("test")
	b.P.Name, b.P.UID = "abc", types.UID(uid)
	for _, v := range vols {
		b.P.Spec.Volumes = append(b.P.Spec.Volumes, v1.Volume{Name: v, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
	}
	return b
}

func ownedClaim(pod *ft.PodBuilder, vol string, owned bool) *v1.PersistentVolumeClaim {
	c := ft.MakeClaim(pod.P.Name+"-"+vol, "", "csi-sc")
	c.Namespace = pod.P.Namespace
	if owned {
		yes := true
		c.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: pod.P.Name, UID: pod.P.UID, Controller: &yes}}
	}
	return c
}

// The cases of upstream's TestCSILimits.
func TestNodeVolumeLimits(t *testing.T) {
	claims := func(names ...string) func() *ft.PodBuilder {
		return func() *ft.PodBuilder { return ft.MakePod().MountClaims(names...) }
	}
	inline := func(id string) func() *ft.PodBuilder {
		return func() *ft.PodBuilder {
			return ft.MakePod().MountVolumes(v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}})
		}
	}
	cm := v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}
	secret := v1.VolumeSource{Secret: &v1.SecretVolumeSource{}}
	var (
		running           = claims("csi-ebs.csi.aws.com-3")
		pending           = claims("csi-4")
		missingPV         = claims("csi-6")
		noSC              = claims("csi-5")
		gceTwo            = claims("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
		inTreeOne         = claims("csi-kubernetes.io/aws-ebs-0")
		inTreeTwo         = claims("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
		ebsOne            = claims("csi-ebs.csi.aws.com-0")
		ebsTwo            = claims("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
		nonMigratable     = claims("csi-kubernetes.io/hostpath-0")
		inlineOne         = inline("aws-inline1")
		inlineSameVolume  = inline("csi-ebs.csi.aws.com-1")
		ephemeralOne      = func() *ft.PodBuilder { return ephemeralPod("12345", "xyz") }
		ephemeralTwo      = func() *ft.PodBuilder { return ephemeralPod("12345II", "x", "y") }
		onlyConfigSecret  = func() *ft.PodBuilder { return ft.MakePod().MountVolumes(cm, secret) }
		claimConfigSecret = func() *ft.PodBuilder {
			return ft.MakePod().MountVolumes(cm, secret).MountClaims("csi-ebs.csi.aws.com-0")
		}
		ephemeralConfig = func() *ft.PodBuilder { return ephemeralPod("12345", "xyz").MountVolumes(cm, secret) }
		inlineConfig    = func() *ft.PodBuilder {
			return ft.MakePod().MountVolumes(cm, secret, v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws-inline1"}})
		}
	)
	ebsOnly, gceEBS := []string{ebsDriver}, []string{ebsDriver, gceDriver}
	migrated := []string{ebsInTree, ebsDriver}
	exceeded := &framework.Status{Code: framework.Unschedulable, Plugin: "NodeVolumeLimits", Reasons: []string{ReasonMaxVolumeCount}}
	ephemeralMissing := &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: "NodeVolumeLimits",
		Reasons: []string{`looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found`}}
	tests := []struct {
		name     string
		pod      func() *ft.PodBuilder
		existing []func() *ft.PodBuilder
		extra    func() []any // more claims
		maxVols  int
		vaCount  int
		drivers  []string
		source   string
		wantSkip bool
		want     *framework.Status
		wantErr  string // an Error status's error
	}{
		{name: "should count VolumeAttachments towards volume limit when no pods exist",
			pod: ebsOne, maxVols: 2, drivers: ebsOnly, vaCount: 2, source: "csinode", want: exceeded},
		{name: "should schedule pod when VolumeAttachments count does not exceed limit",
			pod: ebsOne, maxVols: 2, drivers: ebsOnly, vaCount: 1, source: "csinode"},
		{name: "a VolumeAttachment of a volume a pod on the node uses counts once",
			pod: claims("csi-ebs.csi.aws.com-2"), existing: []func() *ft.PodBuilder{claims("csi-ebs.csi.aws.com-1")}, maxVols: 3,
			drivers: ebsOnly, vaCount: 2, source: "csinode"},
		{name: "fits when node volume limit >= new pods CSI volume",
			pod: ebsOne, existing: []func() *ft.PodBuilder{running, ebsTwo}, maxVols: 4, drivers: ebsOnly, source: "csinode"},
		{name: "doesn't when node volume limit <= pods CSI volume",
			pod: ebsOne, existing: []func() *ft.PodBuilder{running, ebsTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "should when driver does not support volume limits",
			pod: ebsOne, existing: []func() *ft.PodBuilder{running, ebsTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode-with-no-limit"},
		{name: "count pending PVCs towards volume limit <= pods CSI volume",
			pod: ebsOne, existing: []func() *ft.PodBuilder{pending, ebsTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "count multiple pending pvcs towards volume limit >= pods CSI volume",
			pod: ebsOne, existing: []func() *ft.PodBuilder{pending, pending, ebsTwo}, maxVols: 4, drivers: ebsOnly, source: "csinode"},
		{name: "should count PVCs with invalid PV name but valid SC",
			pod: ebsOne, existing: []func() *ft.PodBuilder{missingPV, ebsTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "don't count pvcs with missing SC towards volume limit",
			pod: ebsOne, existing: []func() *ft.PodBuilder{running, noSC}, maxVols: 2, drivers: ebsOnly, source: "csinode"},
		{name: "count pvcs with the same type towards volume limit",
			pod: ebsOne, existing: []func() *ft.PodBuilder{gceTwo, ebsTwo}, maxVols: 2, drivers: gceEBS, source: "csinode", want: exceeded},
		{name: "don't count pvcs with different type towards volume limit",
			pod: gceTwo, existing: []func() *ft.PodBuilder{ebsTwo, running}, maxVols: 2, drivers: gceEBS, source: "csinode"},
		{name: "should count in-tree volumes if migration is enabled",
			pod: inTreeOne, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "nil csi node",
			pod: inlineOne, existing: []func() *ft.PodBuilder{inTreeTwo}, drivers: migrated},
		{name: "should count unbound in-tree volumes if migration is enabled",
			pod: pending, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "should not limit pod if volume used does not report limits",
			pod: inTreeOne, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode-with-no-limit"},
		{name: "should not count non-migratable in-tree volumes",
			pod: nonMigratable, existing: []func() *ft.PodBuilder{ebsTwo}, maxVols: 2, drivers: []string{hostpathInTree, ebsDriver},
			source: "csinode", wantSkip: true},
		{name: "should count in-tree inline volumes if migration is enabled",
			pod: inlineOne, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
			pod: inTreeOne, existing: []func() *ft.PodBuilder{ebsTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
			pod: inlineOne, existing: []func() *ft.PodBuilder{ebsTwo, inTreeOne}, maxVols: 3, drivers: migrated, source: "csinode",
			want: exceeded},
		{name: "should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
			pod: inlineSameVolume, existing: []func() *ft.PodBuilder{ebsTwo, inTreeOne}, maxVols: 3, drivers: migrated, source: "csinode"},
		{name: "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
			pod: ebsOne, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "ephemeral volume missing",
			pod: ephemeralOne, drivers: ebsOnly, source: "csinode-with-no-limit", want: ephemeralMissing},
		{name: "ephemeral volume not owned",
			pod: ephemeralOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", false)} },
			drivers: ebsOnly, source: "csinode-with-no-limit", wantErr: "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
		{name: "ephemeral volume unbound",
			pod: ephemeralOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", true)} },
			drivers: ebsOnly, source: "csinode-with-no-limit"},
		{name: "ephemeral doesn't when node volume limit <= pods CSI volume",
			pod: ephemeralOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", true)} },
			existing: []func() *ft.PodBuilder{running, ebsTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
			pod: ebsOne, extra: func() []any {
				return []any{ownedClaim(ephemeralTwo(), "x", true), ownedClaim(ephemeralTwo(), "y", true)}
			},
			existing: []func() *ft.PodBuilder{running, ephemeralTwo}, maxVols: 2, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
			pod: ebsOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", true)} },
			existing: []func() *ft.PodBuilder{running, ephemeralOne, ebsTwo}, maxVols: 3, drivers: ebsOnly, source: "csinode", want: exceeded},
		{name: "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
			pod: ebsOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", true)} },
			existing: []func() *ft.PodBuilder{running, ephemeralOne, ebsTwo}, maxVols: 5, drivers: ebsOnly, source: "csinode"},
		{name: "a pod on the node with an ephemeral volume it does not own is an error",
			pod: ebsOne, extra: func() []any { return []any{ownedClaim(ephemeralOne(), "xyz", false)} },
			existing: []func() *ft.PodBuilder{ephemeralOne}, maxVols: 5, drivers: ebsOnly, source: "csinode",
			wantErr: "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"},
		{name: "skip Filter when the pod only uses secrets and configmaps",
			pod: onlyConfigSecret, maxVols: 2, drivers: ebsOnly, source: "csinode", wantSkip: true},
		{name: "don't skip Filter when the pod has pvcs",
			pod: claimConfigSecret, maxVols: 2, drivers: ebsOnly, source: "csinode"},
		{name: "don't skip Filter when the pod has ephemeral volumes",
			pod: ephemeralConfig, drivers: ebsOnly, source: "csinode-with-no-limit", want: ephemeralMissing},
		{name: "don't skip Filter when the pod has inline migratable volumes",
			pod: inlineConfig, existing: []func() *ft.PodBuilder{inTreeTwo}, maxVols: 2, drivers: migrated, source: "csinode", want: exceeded},
		{name: "inline CSI volumes are not counted",
			pod: func() *ft.PodBuilder {
				return ft.MakePod().MountVolumes(v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: ebsDriver}})
			},
			maxVols: 0, drivers: ebsOnly, source: "csinode", wantSkip: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var extra []any
			if tc.extra != nil {
				extra = tc.extra()
			}
			objs := limitsFixture(tc.vaCount, tc.drivers, extra...)
			if n := limitsCSINode(tc.source, tc.maxVols, tc.drivers); n != nil {
				objs = append(objs, n)
			}
			node := ft.MakeNode(limitsNode)
			for _, e := range tc.existing {
				node.With(e())
			}
			pl := newNodeVolumeLimits(ft.StorageListers(objs...))
			pre, st, skipped := ft.RunPlugin(t, pl, tc.pod().Info(), nil, node.Info())
			if pre != nil {
				t.Fatalf("PreFilter = %+v", pre)
			}
			if skipped != tc.wantSkip {
				t.Fatalf("skipped = %v, want %v", skipped, tc.wantSkip)
			}
			if tc.wantErr != "" {
				if st == nil || st.Code != framework.Error || st.Err == nil || st.Err.Error() != tc.wantErr {
					t.Errorf("Filter = %+v, want an Error %q", st, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

// The cases of upstream's TestVolumeLimitScalingGate with the gate on (its
// v1.37 default): a CSIDriver with preventPodSchedulingIfMissing keeps pods
// off nodes whose CSINode does not list the driver.
func TestNodeVolumeLimitsDriverMissing(t *testing.T) {
	yes := true
	tests := []struct {
		name    string
		source  string
		limit   int
		driver  *storagev1.CSIDriver
		noCSI   bool // the node has no CSINode
		wantMsg string
	}{
		{name: "CSIDriver without preventPodSchedulingIfMissing", source: "no-csi-driver",
			driver: &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebsDriver}}},
		{name: "driver not installed and preventPodSchedulingIfMissing", source: "no-csi-driver",
			driver: &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebsDriver},
				Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}},
			wantMsg: ebsDriver + " CSI driver is not installed on the node"},
		{name: "no CSINode and preventPodSchedulingIfMissing", source: "",
			driver: &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebsDriver},
				Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}},
			wantMsg: ebsDriver + " CSI driver is not installed on the node"},
		{name: "driver installed within limit", source: "csinode", limit: 2,
			driver: &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebsDriver},
				Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}},
		{name: "CSIDriver object missing", source: "no-csi-driver"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := limitsFixture(0, []string{ebsDriver})
			if n := limitsCSINode(tc.source, tc.limit, []string{ebsDriver}); n != nil {
				objs = append(objs, n)
			}
			if tc.driver != nil {
				objs = append(objs, tc.driver)
			}
			pl := newNodeVolumeLimits(ft.StorageListers(objs...))
			_, st, skipped := ft.RunPlugin(t, pl, ft.MakePod().MountClaims("csi-ebs.csi.aws.com-0").Info(), nil, ft.MakeNode(limitsNode).Info())
			if skipped {
				t.Fatalf("PreFilter skipped the pod")
			}
			var want *framework.Status
			if tc.wantMsg != "" {
				want = &framework.Status{Code: framework.Unschedulable, Plugin: "NodeVolumeLimits", Reasons: []string{tc.wantMsg}}
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

// A node that passes costs no allocation once its CSINode is read: the
// pod's volumes are resolved in PreFilter, and a node without a limit for
// their drivers does not look at its pods.
func TestNodeVolumeLimitsPassingNodeAllocs(t *testing.T) {
	objs := append(limitsFixture(0, []string{ebsDriver}), ft.MakeCSINode(limitsNode, gceDriver, 1))
	pl := newNodeVolumeLimits(ft.StorageListers(objs...))
	f, _, st := pl.PreFilter(ft.MakePod().MountClaims("csi-ebs.csi.aws.com-0", "csi-4").Info(), cache.NewSnapshot())
	if st != nil || f == nil {
		t.Fatalf("PreFilter = %v, %+v", f, st)
	}
	ni := ft.MakeNode(limitsNode).With(ft.MakePod().MountClaims("csi-ebs.csi.aws.com-1")).Info()
	if allocs := testing.AllocsPerRun(100, func() {
		if st := f.Filter(ni); st != nil {
			t.Fatalf("Filter = %+v", st)
		}
	}); allocs != 0 {
		t.Errorf("Filter allocates %v times for a node that passes, want 0", allocs)
	}
}

// Nodes filtered in parallel share the pod's state (the VolumeAttachments
// are listed once, by whichever node counts first): every node at its limit
// is rejected, every node below it is feasible, whatever the workers.
func TestNodeVolumeLimitsParallel(t *testing.T) {
	objs := limitsFixture(0, []string{ebsDriver})
	var nodes []*cache.NodeInfo
	for i := range 40 {
		name := fmt.Sprintf("n%02d", i)
		limit := 2
		if i%2 == 0 {
			limit = 1
		}
		objs = append(objs, ft.MakeCSINode(name, ebsDriver, limit))
		nodes = append(nodes, ft.MakeNode(name).With(ft.MakePod().MountClaims("csi-ebs.csi.aws.com-1")).Info())
	}
	p := ft.MustProfile(framework.Entry{Plugin: newNodeVolumeLimits(ft.StorageListers(objs...))})
	for _, workers := range []int{1, 8} {
		ps, st := p.Prepare(ft.MakePod().MountClaims("csi-ebs.csi.aws.com-0").Info(), cache.NewSnapshot(nodes...))
		if st != nil {
			t.Fatalf("Prepare: %+v", st)
		}
		var d framework.Diagnosis
		feasible, _ := framework.FindFeasible(context.Background(), ps, nodes, 0, len(nodes), workers, &d)
		if len(feasible) != 20 {
			t.Errorf("workers %d: %d feasible nodes, want the 20 with a limit of 2", workers, len(feasible))
		}
		for _, ni := range feasible {
			var i int
			if _, err := fmt.Sscanf(ni.Name(), "n%d", &i); err != nil || i%2 == 0 {
				t.Errorf("workers %d: %s feasible, want it at its limit", workers, ni.Name())
			}
		}
	}
}

// A pod without claims or restricted volumes pays nothing for the plugin:
// its PreFilter skips it without allocating (the same holds of
// VolumeRestrictions and VolumeZone, tested in their packages).
func TestNodeVolumeLimitsSkipsPlainPodsWithoutAllocating(t *testing.T) {
	pi := ft.MakePod().Req("cpu", "100m").MountVolumes(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}).Info()
	snap := cache.NewSnapshot(ft.MakeNode("n1").With(ft.MakePod().MountClaims("data")).Info())
	for _, pl := range []framework.PreFilterPlugin{newNodeVolumeLimits(framework.Listers{})} {
		if f, _, st := pl.PreFilter(pi, snap); f != nil || st != nil {
			t.Errorf("%s: PreFilter = %v, %+v, want a skip", pl.Name(), f, st)
		}
		if n := testing.AllocsPerRun(100, func() { pl.PreFilter(pi, snap) }); n != 0 {
			t.Errorf("%s: PreFilter allocates %v times for a pod without volume constraints, want 0", pl.Name(), n)
		}
	}
}
