package volumebinding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
	"github.com/wasmsched/wasmsched/host/volume/volumetest"
)

// The objects of upstream's volume_binding_test.go.
const (
	vbWaitSC     = "wait-sc"
	vbWaitHDDSC  = "wait-hdd-sc"
	vbCapacitySC = "wait-sc-with-storage-capacity"
	vbImmediate  = "immediate-sc"
	vbDriver     = "driver-with-storage-capacity"
	vbNodeKey    = "nodeKey"
)

func vbClasses() []runtime.Object {
	wait, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	return []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: vbImmediate}, VolumeBindingMode: &imm},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: vbWaitSC}, VolumeBindingMode: &wait},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: vbWaitHDDSC}, VolumeBindingMode: &wait},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: vbCapacitySC}, VolumeBindingMode: &wait, Provisioner: vbDriver},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: vbDriver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}},
	}
}

func vbNode(name string, labels ...string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}}}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels[labels[i]] = labels[i+1]
	}
	return n
}

type vbPVC struct{ *v1.PersistentVolumeClaim }

func vbMakePVC(name, class string) vbPVC {
	return vbPVC{&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class)}}}
}

func (b vbPVC) boundTo(pv string) vbPVC {
	b.Spec.VolumeName = pv
	metav1.SetMetaDataAnnotation(&b.ObjectMeta, storagehelpers.AnnBindCompleted, "true")
	return b
}

func (b vbPVC) request(q string) vbPVC {
	b.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(q)}
	return b
}

func (b vbPVC) phase(p v1.PersistentVolumeClaimPhase) vbPVC { b.Status.Phase = p; return b }

// vbPV is a PV of class, available, with capacity q, whose node affinity is
// affinity's key=value pairs (none when empty).
func vbPV(name, class, q string, affinity ...string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec:   v1.PersistentVolumeSpec{StorageClassName: class},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable}}
	if q != "" {
		pv.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse(q)}
	}
	if len(affinity) > 0 {
		var reqs []v1.NodeSelectorRequirement
		for i := 0; i+1 < len(affinity); i += 2 {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: affinity[i], Operator: v1.NodeSelectorOpIn, Values: []string{affinity[i+1]}})
		}
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}}}}
	}
	return pv
}

func vbCapacity(node, class, capacity string) *storagev1.CSIStorageCapacity {
	return &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: "default"}, StorageClassName: class,
		NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{vbNodeKey: node}}, Capacity: ptr.To(resource.MustParse(capacity))}
}

func vbPod(claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-a", Namespace: "default", UID: "uid-pod-a"}}
	for i, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", i),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

// volumeListers are Listers over a fake API holding objs (and upstream's
// test classes), and the clientset. start starts and syncs the informers,
// after the plugins are built (they index the PV informer).
func volumeListers(t *testing.T, objs ...runtime.Object) (l framework.Listers, client *fake.Clientset, start func()) {
	t.Helper()
	client = volumetest.NewClientset(append(vbClasses(), objs...)...)
	f := informers.NewSharedInformerFactory(client, 0)
	l = framework.Listers{
		PersistentVolumes:      f.Core().V1().PersistentVolumes().Lister(),
		PersistentVolumeClaims: f.Core().V1().PersistentVolumeClaims().Lister(),
		PVInformer:             f.Core().V1().PersistentVolumes().Informer(),
		PVCInformer:            f.Core().V1().PersistentVolumeClaims().Informer(),
		StorageClasses:         f.Storage().V1().StorageClasses().Lister(),
		CSINodes:               f.Storage().V1().CSINodes().Lister(),
		CSIDrivers:             f.Storage().V1().CSIDrivers().Lister(),
		CSIStorageCapacities:   f.Storage().V1().CSIStorageCapacities().Lister(),
		Client:                 client,
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	return l, client, func() {
		f.Start(stop)
		f.WaitForCacheSync(stop)
	}
}

// vbProfile is a profile of VolumeBinding alone (weight 1) over l.
func vbProfile(t *testing.T, l framework.Listers, a volumeBindingArgs) *framework.Profile {
	t.Helper()
	pl, err := newVolumeBinding(ft.HandleFor(l), a)
	if err != nil {
		t.Fatal(err)
	}
	p, err := framework.NewProfile(framework.Entry{Plugin: pl, Weight: weightVolumeBinding})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func vbStatus(reasons ...string) *framework.Status {
	return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginVolumeBinding, Reasons: reasons}
}

// TestVolumeBinding is upstream's TestVolumeBinding (StorageCapacityScoring
// on, as in v1.37): PreFilter's rejections, each node's Filter status, and
// the scores of the nodes that passed.
func TestVolumeBinding(t *testing.T) {
	ha := func(n string) []string { return []string{v1.LabelHostname, n} }
	zone := func(r, z string) []string { return []string{v1.LabelTopologyRegion, r, v1.LabelTopologyZone, z} }
	zonal := func(name, z string) *v1.Node {
		return vbNode(name, v1.LabelTopologyRegion, "region-"+z, v1.LabelTopologyZone, "zone-"+z)
	}
	abc := []*v1.Node{vbNode("node-a"), vbNode("node-b"), vbNode("node-c")}
	keyed := []*v1.Node{vbNode("node-a", vbNodeKey, "node-a"), vbNode("node-b", vbNodeKey, "node-b"), vbNode("node-c", vbNodeKey, "node-c")}
	zonalNodes := []*v1.Node{zonal("zone-a-node-a", "a"), zonal("zone-a-node-b", "a"), zonal("zone-b-node-a", "b"),
		zonal("zone-b-node-b", "b"), zonal("zone-c-node-a", "c"), zonal("zone-c-node-b", "c")}
	zonalPVs := []runtime.Object{vbPV("pv-a-0", vbWaitSC, "200Gi", zone("region-a", "zone-a")...),
		vbPV("pv-a-1", vbWaitSC, "200Gi", zone("region-a", "zone-a")...),
		vbPV("pv-b-0", vbWaitSC, "100Gi", zone("region-b", "zone-b")...),
		vbPV("pv-b-1", vbWaitSC, "100Gi", zone("region-b", "zone-b")...)}
	bindConflict := vbStatus(ReasonVolumeBindConflict)
	capacities := func(a, b, c string) []runtime.Object {
		return []runtime.Object{vbCapacity("node-a", vbCapacitySC, a), vbCapacity("node-b", vbCapacitySC, b), vbCapacity("node-c", vbCapacitySC, c)}
	}
	tests := []struct {
		name          string
		pod           *v1.Pod
		nodes         []*v1.Node
		objs          []runtime.Object
		shape         []kschedv1.UtilizationShapePoint // nil: the default
		wantPreFilter *framework.Status
		wantSkip      bool // no filter for the pod
		wantFilter    []*framework.Status
		wantScores    []int64 // of the nodes that passed, in order
	}{
		{name: "pod has no pvcs", pod: vbPod(), nodes: abc[:1], wantSkip: true, wantFilter: []*framework.Status{nil}},
		{name: "all bound", pod: vbPod("pvc-a"), nodes: abc[:1],
			objs:       []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).boundTo("pv-a").PersistentVolumeClaim, vbPV("pv-a", vbWaitSC, "")},
			wantFilter: []*framework.Status{nil}, wantScores: []int64{0}},
		{name: "PVC does not exist", pod: vbPod("pvc-a"), nodes: abc[:1],
			wantPreFilter: vbStatus(`persistentvolumeclaim "pvc-a" not found`)},
		{name: "Part of PVCs do not exist", pod: vbPod("pvc-a", "pvc-b"), nodes: abc[:1],
			objs:          []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).boundTo("pv-a").PersistentVolumeClaim},
			wantPreFilter: vbStatus(`persistentvolumeclaim "pvc-b" not found`)},
		{name: "immediate claims not bound", pod: vbPod("pvc-a"), nodes: abc[:1],
			objs:          []runtime.Object{vbMakePVC("pvc-a", vbImmediate).PersistentVolumeClaim},
			wantPreFilter: vbStatus(ReasonUnboundImmediate)},
		{name: "unbound claims no matches", pod: vbPod("pvc-a"), nodes: abc[:1],
			objs:       []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).PersistentVolumeClaim},
			wantFilter: []*framework.Status{bindConflict}},
		{name: "bound and unbound unsatisfied", pod: vbPod("pvc-a", "pvc-b"), nodes: []*v1.Node{vbNode("node-a", "foo", "barbar")},
			objs: []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).boundTo("pv-a").PersistentVolumeClaim,
				vbMakePVC("pvc-b", vbWaitSC).PersistentVolumeClaim, vbPV("pv-a", vbWaitSC, "", "foo", "bar")},
			wantFilter: []*framework.Status{vbStatus(ReasonVolumeNodeConflict, ReasonVolumeBindConflict)}},
		{name: "pv not found", pod: vbPod("pvc-a"), nodes: abc[:1],
			objs:       []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).boundTo("pv-a").PersistentVolumeClaim},
			wantFilter: []*framework.Status{vbStatus(ReasonVolumePVNotExist)}},
		{name: "pv not found claim lost", pod: vbPod("pvc-a"), nodes: abc[:1],
			objs:          []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).boundTo("pv-a").phase(v1.ClaimLost).PersistentVolumeClaim},
			wantPreFilter: vbStatus(`persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"`)},
		{name: "local volumes with close capacity are preferred", pod: vbPod("pvc-a"), nodes: abc,
			objs: []runtime.Object{vbMakePVC("pvc-a", vbWaitSC).request("50Gi").PersistentVolumeClaim,
				vbPV("pv-a-0", vbWaitSC, "200Gi", ha("node-a")...), vbPV("pv-a-1", vbWaitSC, "200Gi", ha("node-a")...),
				vbPV("pv-b-0", vbWaitSC, "100Gi", ha("node-b")...), vbPV("pv-b-1", vbWaitSC, "100Gi", ha("node-b")...)},
			wantFilter: []*framework.Status{nil, nil, bindConflict}, wantScores: []int64{75, 50}},
		{name: "local volumes with close capacity are preferred (multiple pvcs)", pod: vbPod("pvc-0", "pvc-1"), nodes: abc,
			objs: []runtime.Object{vbMakePVC("pvc-0", vbWaitSC).request("50Gi").PersistentVolumeClaim,
				vbMakePVC("pvc-1", vbWaitHDDSC).request("100Gi").PersistentVolumeClaim,
				vbPV("pv-a-0", vbWaitSC, "200Gi", ha("node-a")...), vbPV("pv-a-1", vbWaitSC, "200Gi", ha("node-a")...),
				vbPV("pv-a-2", vbWaitHDDSC, "200Gi", ha("node-a")...), vbPV("pv-a-3", vbWaitHDDSC, "200Gi", ha("node-a")...),
				vbPV("pv-b-0", vbWaitSC, "100Gi", ha("node-b")...), vbPV("pv-b-1", vbWaitSC, "100Gi", ha("node-b")...),
				vbPV("pv-b-2", vbWaitHDDSC, "100Gi", ha("node-b")...), vbPV("pv-b-3", vbWaitHDDSC, "100Gi", ha("node-b")...)},
			wantFilter: []*framework.Status{nil, nil, bindConflict}, wantScores: []int64{63, 25}},
		{name: "zonal volumes with close capacity are preferred", pod: vbPod("pvc-a"), nodes: zonalNodes,
			objs:       append([]runtime.Object{vbMakePVC("pvc-a", vbWaitSC).request("50Gi").PersistentVolumeClaim}, zonalPVs...),
			wantFilter: []*framework.Status{nil, nil, nil, nil, bindConflict, bindConflict}, wantScores: []int64{75, 75, 50, 50}},
		{name: "zonal volumes with close capacity are preferred (custom shape)", pod: vbPod("pvc-a"), nodes: zonalNodes,
			objs:       append([]runtime.Object{vbMakePVC("pvc-a", vbWaitSC).request("50Gi").PersistentVolumeClaim}, zonalPVs...),
			shape:      []kschedv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 50, Score: 3}, {Utilization: 100, Score: 5}},
			wantFilter: []*framework.Status{nil, nil, nil, nil, bindConflict, bindConflict}, wantScores: []int64{15, 15, 30, 30}},
		{name: "storage capacity score", pod: vbPod("pvc-dynamic"), nodes: keyed,
			objs:       append([]runtime.Object{vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim}, capacities("100Gi", "50Gi", "10Gi")...),
			wantFilter: []*framework.Status{nil, nil, nil}, wantScores: []int64{90, 80, 0}},
		{name: "storage capacity score with static binds", pod: vbPod("pvc-dynamic", "pvc-static"), nodes: keyed,
			objs: append([]runtime.Object{vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim,
				vbMakePVC("pvc-static", vbWaitSC).request("50Gi").PersistentVolumeClaim,
				vbPV("pv-static-a", vbWaitSC, "100Gi", ha("node-a")...), vbPV("pv-static-b", vbWaitSC, "100Gi", ha("node-b")...),
				vbPV("pv-static-c", vbWaitSC, "100Gi", ha("node-c")...)}, capacities("100Gi", "50Gi", "10Gi")...),
			wantFilter: []*framework.Status{nil, nil, nil}, wantScores: []int64{50, 50, 50}},
		{name: "dynamic provisioning with multiple PVCs of the same StorageClass", pod: vbPod("pvc-dynamic-0", "pvc-dynamic-1"), nodes: keyed[:1],
			objs: []runtime.Object{vbMakePVC("pvc-dynamic-0", vbCapacitySC).request("50Gi").PersistentVolumeClaim,
				vbMakePVC("pvc-dynamic-1", vbCapacitySC).request("50Gi").PersistentVolumeClaim, vbCapacity("node-a", vbCapacitySC, "100Gi")},
			wantFilter: []*framework.Status{nil}, wantScores: []int64{0}},
		{name: "prefer node with least allocatable", pod: vbPod("pvc-dynamic"), nodes: keyed,
			objs:       append([]runtime.Object{vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim}, capacities("100Gi", "20Gi", "10Gi")...),
			shape:      []kschedv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: helper.MaxCustomPriorityScore}},
			wantFilter: []*framework.Status{nil, nil, nil}, wantScores: []int64{10, 50, 100}},
		{name: "prefer node with maximum allocatable", pod: vbPod("pvc-dynamic"), nodes: keyed,
			objs:       append([]runtime.Object{vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim}, capacities("100Gi", "20Gi", "10Gi")...),
			wantFilter: []*framework.Status{nil, nil, nil}, wantScores: []int64{90, 50, 0}},
		{name: "not enough free storage", pod: vbPod("pvc-dynamic"), nodes: keyed[:1],
			objs:       []runtime.Object{vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim, vbCapacity("node-a", vbCapacitySC, "5Gi")},
			wantFilter: []*framework.Status{vbStatus(ReasonVolumeNotEnoughSpace)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _, start := volumeListers(t, tc.objs...)
			args := defaultVolumeBindingArgs
			if tc.shape != nil {
				args.shape = tc.shape
			}
			prof := vbProfile(t, l, args)
			start()
			ps, st := prof.Prepare(cache.NewPodInfo(tc.pod), nil)
			if diff := cmp.Diff(tc.wantPreFilter, st); diff != "" {
				t.Fatalf("PreFilter status (-want, +got):\n%s", diff)
			}
			if st != nil {
				return
			}
			if skipped := ps.PluginFilter(abi.PluginVolumeBinding) == nil; skipped != tc.wantSkip {
				t.Errorf("skipped = %v, want %v", skipped, tc.wantSkip)
			}
			var feasible []*cache.NodeInfo
			for i, n := range tc.nodes {
				ni := cache.NewNodeInfo(n)
				st := framework.Filter(ps, ni)
				if diff := cmp.Diff(tc.wantFilter[i], st); diff != "" {
					t.Errorf("Filter(%s) (-want, +got):\n%s", n.Name, diff)
				}
				if st == nil {
					feasible = append(feasible, ni)
				}
			}
			if len(feasible) == 0 {
				return
			}
			scores, st := framework.Score(ps, feasible, nil)
			if st != nil {
				t.Fatalf("Score: %v", st.Message())
			}
			if tc.wantScores == nil {
				tc.wantScores = make([]int64, len(feasible))
			}
			if diff := cmp.Diff(tc.wantScores, scores); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestVolumeBindingReservePreBind follows a pod with a WaitForFirstConsumer
// claim through the profile: Reserve assumes the PV it found on the node
// (another pod's claim then finds none there), Unreserve gives it back,
// PreBind writes the claimRef and returns once the claim is bound.
func TestVolumeBindingReservePreBind(t *testing.T) {
	l, client, start := volumeListers(t, vbMakePVC("pvc-a", vbWaitSC).request("1Gi").PersistentVolumeClaim,
		vbMakePVC("pvc-b", vbWaitSC).request("1Gi").PersistentVolumeClaim, vbPV("pv-a", vbWaitSC, "5Gi", v1.LabelHostname, "node-a"))
	// Two profiles over the same informers share the assume caches.
	prof, other := vbProfile(t, l, defaultVolumeBindingArgs), vbProfile(t, l, defaultVolumeBindingArgs)
	start()
	node := cache.NewNodeInfo(vbNode("node-a"))
	podA := vbPod("pvc-a")
	podB := vbPod("pvc-b")
	podB.Name, podB.UID = "pod-b", "uid-pod-b"

	ps, st := prof.Prepare(cache.NewPodInfo(podA), nil)
	if st != nil {
		t.Fatal(st.Message())
	}
	if st := framework.Filter(ps, node); st != nil {
		t.Fatalf("Filter: %v", st.Message())
	}
	ctx := context.Background()
	assumed := podA.DeepCopy()
	assumed.Spec.NodeName = "node-a"
	if st := prof.Reserve(ctx, ps, assumed, "node-a"); st != nil {
		t.Fatalf("Reserve: %v", st.Message())
	}
	filterB := func() *framework.Status {
		psB, st := other.Prepare(cache.NewPodInfo(podB), nil)
		if st != nil {
			t.Fatal(st.Message())
		}
		return framework.Filter(psB, node)
	}
	if diff := cmp.Diff(vbStatus(ReasonVolumeBindConflict), filterB()); diff != "" {
		t.Errorf("another pod's Filter while pv-a is reserved (-want, +got):\n%s", diff)
	}
	prof.Unreserve(ctx, ps, assumed, "node-a")
	if st := filterB(); st != nil {
		t.Errorf("another pod's Filter after Unreserve = %v, want pv-a free", st.Message())
	}
	prof.Unreserve(ctx, ps, assumed, "node-a") // idempotent
	// Unreserved, a claim to bind has no volume on the node: PreBindPreFlight
	// fails as upstream's.
	if st := prof.PreBindPreFlight(ctx, ps, assumed, "node-a"); st == nil || st.Code != framework.Error ||
		!strings.Contains(st.Message(), `no pod volume found for node "node-a"`) {
		t.Errorf("PreBindPreFlight after Unreserve = %+v, want the missing pod volume's Error", st)
	}

	if st := prof.Reserve(ctx, ps, assumed, "node-a"); st != nil {
		t.Fatalf("Reserve again: %v", st.Message())
	}
	if st := prof.PreBindPreFlight(ctx, ps, assumed, "node-a"); st != nil {
		t.Fatalf("PreBindPreFlight with pv-a reserved = %v, want work", st.Message())
	}
	// A pod without claims has nothing to bind.
	if psNone, st := prof.Prepare(cache.NewPodInfo(vbPod()), nil); st != nil {
		t.Fatal(st.Message())
	} else if st := prof.PreBindPreFlight(ctx, psNone, vbPod(), "node-a"); st == nil || st.Code != framework.Skip {
		t.Errorf("PreBindPreFlight for a pod without claims = %v, want Skip", st)
	}
	done := make(chan *framework.Status)
	go func() { done <- prof.PreBind(ctx, ps, assumed, "node-a") }()
	// The PV controller's part: once the claimRef is written, bind the claim.
	var pv *v1.PersistentVolume
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if pv, err = client.CoreV1().PersistentVolumes().Get(ctx, "pv-a", metav1.GetOptions{}); err == nil && pv.Spec.ClaimRef != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("PreBind did not write pv-a's claimRef")
		}
	}
	if ref := pv.Spec.ClaimRef; ref.Name != "pvc-a" || ref.Namespace != "default" || ref.UID != "uid-pvc-a" {
		t.Errorf("pv-a claimRef = %+v, want default/pvc-a", ref)
	}
	select {
	case st := <-done:
		t.Fatalf("PreBind returned %v before the claim was bound", st)
	default:
	}
	pvc, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "pvc-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc = pvc.DeepCopy()
	pvc.Spec.VolumeName = "pv-a"
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if st != nil {
			t.Fatalf("PreBind: %v", st.Message())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("PreBind did not return after the claim was bound")
	}
}

// TestVolumeBindingProvisions checks that a claim to provision gets the
// selected-node annotation at PreBind, and that PreBind fails (an Error:
// the pod is retried) when the bind timeout ends first.
func TestVolumeBindingProvisions(t *testing.T) {
	l, client, start := volumeListers(t, vbMakePVC("pvc-dynamic", vbCapacitySC).request("10Gi").PersistentVolumeClaim,
		vbCapacity("node-a", vbCapacitySC, "100Gi"))
	prof := vbProfile(t, l, volumeBindingArgs{bindTimeout: 100 * time.Millisecond, shape: defaultVolumeShape})
	start()
	pod := vbPod("pvc-dynamic")
	ps, st := prof.Prepare(cache.NewPodInfo(pod), nil)
	if st != nil {
		t.Fatal(st.Message())
	}
	if st := framework.Filter(ps, cache.NewNodeInfo(vbNode("node-a", vbNodeKey, "node-a"))); st != nil {
		t.Fatalf("Filter: %v", st.Message())
	}
	ctx := context.Background()
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = "node-a"
	if st := prof.Reserve(ctx, ps, assumed, "node-a"); st != nil {
		t.Fatalf("Reserve: %v", st.Message())
	}
	st = prof.PreBind(ctx, ps, assumed, "node-a")
	if st == nil || st.Code != framework.Error || !strings.Contains(st.Message(), "binding volumes: context deadline exceeded") {
		t.Fatalf("PreBind = %+v, want the bind timeout's Error", st)
	}
	pvc, err := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "pvc-dynamic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Annotations[storagehelpers.AnnSelectedNode]; got != "node-a" {
		t.Errorf("selected-node = %q, want node-a", got)
	}
}

// TestVolumeBindingArgs checks VolumeBinding's args defaults (the built
// profile's entry is TestBuildVolumeBinding's, in
// volumebinding_profile_test.go).
func TestVolumeBindingArgs(t *testing.T) {
	a, err := newVolumeBindingArgs(nil, &kschedv1.VolumeBindingArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if a.bindTimeout != 600*time.Second || !slices.Equal(a.shape, defaultVolumeShape) {
		t.Errorf("defaulted args = %+v, want 600s and the default shape", a)
	}
	a, _ = newVolumeBindingArgs(nil, &kschedv1.VolumeBindingArgs{BindTimeoutSeconds: ptr.To[int64](30)})
	if a.bindTimeout != 30*time.Second {
		t.Errorf("bindTimeout = %v, want 30s", a.bindTimeout)
	}
}
