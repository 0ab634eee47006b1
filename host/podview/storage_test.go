package podview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func TestStorageRecords(t *testing.T) {
	wffc, imm, weird := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate, storagev1.VolumeBindingMode("Later")
	class := "fast"
	gib := resource.MustParse("1Gi")
	for _, tc := range []struct {
		name string
		obj  any
		res  abi.EventResource
		want abi.StorageObject
	}{
		{"pv with claimRef, CSI and node affinity", &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv1", Labels: map[string]string{"topology.kubernetes.io/zone": "a"}},
			Spec: v1.PersistentVolumeSpec{StorageClassName: class,
				ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "c"},
				PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "d"}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}}}}}},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound}},
			abi.ResourcePersistentVolume,
			abi.StorageObject{Name: "pv1", StorageClass: class, ClaimNamespace: "ns", ClaimName: "c", Driver: "d", Phase: abi.PhaseBound,
				Labels: []abi.KV{{Key: "topology.kubernetes.io/zone", Value: "a"}}, NodeAffinity: true,
				Topology: []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{{Key: "kubernetes.io/hostname", Operator: abi.SelectorIn, Values: []string{"n1"}}}}}}},
		{"pv without class or phase", &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv2"}},
			abi.ResourcePersistentVolume, abi.StorageObject{Name: "pv2"}},
		{"pvc with selected node", &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Annotations: map[string]string{"volume.kubernetes.io/selected-node": "n1"}},
			Spec:       v1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: "pv1"},
			Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimLost}},
			abi.ResourcePersistentVolumeClaim,
			abi.StorageObject{Namespace: "ns", Name: "c", StorageClass: class, VolumeName: "pv1", NodeName: "n1", Phase: abi.PhaseLost}},
		{"class WaitForFirstConsumer with topologies", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "wffc"},
			Provisioner: "p", VolumeBindingMode: &wffc, AllowedTopologies: []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
				{Key: "zone", Values: []string{"a", "b"}}}}}},
			abi.ResourceStorageClass,
			abi.StorageObject{Name: "wffc", Driver: "p", BindingMode: abi.BindingWaitForFirstConsumer,
				Topology: []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{{Key: "zone", Operator: abi.SelectorIn, Values: []string{"a", "b"}}}}}}},
		{"class Immediate", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "i"}, VolumeBindingMode: &imm},
			abi.ResourceStorageClass, abi.StorageObject{Name: "i"}},
		{"class with an unknown mode", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "w"}, VolumeBindingMode: &weird},
			abi.ResourceStorageClass, abi.StorageObject{Name: "w", BindingMode: abi.BindingUnknown}},
		{"csinode", &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
				{Name: "a", Allocatable: &storagev1.VolumeNodeResources{Count: new(int32(3))}}, {Name: "b"}}}},
			abi.ResourceCSINode,
			abi.StorageObject{Name: "n1", NodeName: "n1", MigratedPlugins: "kubernetes.io/aws-ebs",
				Drivers: []abi.CSIDriverLimit{{Name: "a", Allocatable: 3, HasAllocatable: true}, {Name: "b"}}}},
		{"csidriver tracking capacity", &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: new(true)}},
			abi.ResourceCSIDriver, abi.StorageObject{Name: "d", CapacityTracking: true}},
		{"capacity prefers maximumVolumeSize", &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"},
			StorageClassName: class, Capacity: new(resource.MustParse("5Gi")), MaximumVolumeSize: &gib},
			abi.ResourceCSIStorageCapacity,
			abi.StorageObject{Namespace: "ns", Name: "c", StorageClass: class, Capacity: 1 << 30, HasCapacity: true}},
		{"capacity without a limit", &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, StorageClassName: class},
			abi.ResourceCSIStorageCapacity, abi.StorageObject{Namespace: "ns", Name: "c", StorageClass: class}},
		{"volume attachment", &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "d", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv1")}}},
			abi.ResourceVolumeAttachment, abi.StorageObject{Name: "va", NodeName: "n1", Driver: "d", VolumeName: "pv1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, got, ok := Storage(tc.obj)
			if !ok || res != tc.res {
				t.Fatalf("Storage: resource %v, ok %v; want %v", res, ok, tc.res)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("record (-want, +got):\n%s", diff)
			}
			// The event carries exactly that record.
			ev, ok := StorageEvent(abi.ActionAdd, nil, tc.obj)
			if !ok || ev.Resource != tc.res || ev.Old != nil {
				t.Fatalf("StorageEvent: %v %v, old %d bytes, ok %v", ev.Resource, ev.Action, len(ev.Old), ok)
			}
			v, err := abi.ReadStorage(ev.New)
			if err != nil {
				t.Fatal(err)
			}
			var dec abi.StorageObject
			if err := v.Decode(&dec); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dec, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("event record (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestStorageEventObjects(t *testing.T) {
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	if ev, ok := StorageEvent(abi.ActionDelete, pvc, (*v1.PersistentVolumeClaim)(nil)); !ok || ev.New != nil || ev.Old == nil ||
		ev.Resource != abi.ResourcePersistentVolumeClaim || ev.Action != abi.ActionDelete {
		t.Errorf("delete with a typed nil new: %+v, ok %v", ev, ok)
	}
	if _, ok := StorageEvent(abi.ActionAdd, nil, &v1.Pod{}); ok {
		t.Error("StorageEvent accepted a pod")
	}
	if _, ok := StorageEvent(abi.ActionAdd, nil, nil); ok {
		t.Error("StorageEvent accepted an event without objects")
	}
}

func TestStorageUpdateActions(t *testing.T) {
	old := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", ResourceVersion: "1",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "a"}}}}
	resync := old.DeepCopy()
	resync.ResourceVersion, resync.ManagedFields = "2", []metav1.ManagedFieldsEntry{{Manager: "b"}}
	resync.TypeMeta = metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"}
	bound := resync.DeepCopy()
	bound.Spec.VolumeName = "pv1"
	annotated := resync.DeepCopy()
	annotated.Annotations = map[string]string{"x": "y"}
	csi := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "1"}}
	csi2 := csi.DeepCopy()
	csi2.Spec.Drivers = []storagev1.CSINodeDriver{{Name: "d"}}
	for _, tc := range []struct {
		name     string
		old, new any
		want     abi.ActionType
	}{
		{"resourceVersion, managedFields and type meta only", old, resync, 0},
		{"spec changed", old, bound, abi.ActionUpdateOther},
		{"annotation changed", old, annotated, abi.ActionUpdateOther},
		{"csinode drivers changed", csi, csi2, abi.ActionUpdateOther},
		{"csinode resync", csi, csi.DeepCopy(), 0},
		{"types differ", old, csi, abi.ActionUpdateOther},
	} {
		if got := StorageUpdateActions(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if old.ResourceVersion != "1" || len(old.ManagedFields) != 1 {
		t.Error("StorageUpdateActions changed the informer's object")
	}
}

func TestPodVolumes(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0"}, Spec: v1.PodSpec{Volumes: []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}},
		{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "hostpath.csi.k8s.io"}}},
		{Name: "ebs", VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}},
		{Name: "tmp", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}}}
	p := Pod(pod, nil, abi.PodQueueState{}, Plugins{})
	want := abi.Pod{Claims: []string{"data-web-0"}, EphemeralClaims: []string{"web-0-scratch"},
		VolumeDrivers: []string{"hostpath.csi.k8s.io", "ebs.csi.aws.com"}}
	if diff := cmp.Diff(want, abi.Pod{Claims: p.Claims, EphemeralClaims: p.EphemeralClaims, VolumeDrivers: p.VolumeDrivers}); diff != "" {
		t.Errorf("volumes of the pod record (-want, +got):\n%s", diff)
	}
	v, err := abi.ReadPod(abi.AppendPod(nil, &p))
	if err != nil {
		t.Fatal(err)
	}
	if !v.UsesClaim("ns", "data-web-0") || !v.UsesClaim("ns", "web-0-scratch") || v.UsesClaim("other", "data-web-0") || v.UsesClaim("ns", "tmp") {
		t.Error("UsesClaim disagrees with the pod's volumes")
	}
}
