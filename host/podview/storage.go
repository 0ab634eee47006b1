package podview

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"

	"github.com/wasmsched/wasmsched/abi"
)

// podVolumes lists what the pod record says of the pod's volumes: the
// claims its persistentVolumeClaim volumes name, the claims its generic
// ephemeral volumes create (<pod>-<volume>), and the CSI drivers of its
// inline volumes (a csi volume's driver, the driver an in-tree volume
// migrates to), so that a QueueingHint can tell whether a storage event
// concerns the pod.
func podVolumes(pod *v1.Pod) (claims, ephemeralClaims, drivers []string) {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		switch {
		case vol.PersistentVolumeClaim != nil:
			claims = append(claims, vol.PersistentVolumeClaim.ClaimName)
		case vol.Ephemeral != nil:
			ephemeralClaims = append(ephemeralClaims, ephemeral.VolumeClaimName(pod, vol))
		case vol.CSI != nil:
			drivers = append(drivers, vol.CSI.Driver)
		default:
			if d := migratedDriver(&vol.VolumeSource); d != "" {
				drivers = append(drivers, d)
			}
		}
	}
	return claims, ephemeralClaims, drivers
}

// migratedDriver is the CSI driver an in-tree volume source migrates to (CSI
// migration is GA for all of them), "" for other sources. These are the
// names k8s.io/csi-translation-lib translates them to.
func migratedDriver(s *v1.VolumeSource) string {
	switch {
	case s.AWSElasticBlockStore != nil:
		return "ebs.csi.aws.com"
	case s.GCEPersistentDisk != nil:
		return "pd.csi.storage.gke.io"
	case s.AzureDisk != nil:
		return "disk.csi.azure.com"
	case s.AzureFile != nil:
		return "file.csi.azure.com"
	case s.Cinder != nil:
		return "cinder.csi.openstack.org"
	case s.VsphereVolume != nil:
		return "csi.vsphere.vmware.com"
	case s.PortworxVolume != nil:
		return "pxd.portworx.com"
	}
	return ""
}

// StorageEvent builds the event of a change of a storage object: old is nil
// on Add, new on Delete (typed nils count as absent). The objects are
// *v1.PersistentVolume, *v1.PersistentVolumeClaim, *storagev1.StorageClass,
// *storagev1.CSINode, *storagev1.CSIDriver, *storagev1.CSIStorageCapacity or
// *storagev1.VolumeAttachment, or (DRA) *resourceapi.ResourceClaim,
// ResourceSlice, DeviceClass or DeviceTaintRule; ok is false for anything
// else.
func StorageEvent(action abi.ActionType, old, new any) (e abi.Event, ok bool) {
	e.Action = action
	for _, side := range []struct {
		obj any
		out *[]byte
	}{{old, &e.Old}, {new, &e.New}} {
		if side.obj == nil {
			continue
		}
		res, o, ok := Storage(side.obj)
		if !ok {
			return e, false
		}
		if res == 0 {
			continue // a typed nil
		}
		e.Resource = res
		*side.out = abi.AppendStorage(nil, &o)
	}
	return e, e.Resource != 0
}

// StorageUpdateActions classifies an update of a storage object: 0 when
// nothing but metadata.resourceVersion, managedFields and the type meta
// changed (a resync, a no-op apply), else abi.ActionUpdateOther. Upstream's volume plugins
// register the general Update for these resources and their hints compare
// what they need, so one bit is enough; the comparison covers the whole
// object because the filters read more of it than the record carries.
func StorageUpdateActions(old, new any) abi.ActionType {
	if sameStorage(old, new) {
		return 0
	}
	return abi.ActionUpdateOther
}

func sameStorage(old, new any) bool {
	switch o := old.(type) {
	case *v1.PersistentVolume:
		n, ok := new.(*v1.PersistentVolume)
		return ok && same(o, n, func(x *v1.PersistentVolume) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *v1.PersistentVolumeClaim:
		n, ok := new.(*v1.PersistentVolumeClaim)
		return ok && same(o, n, func(x *v1.PersistentVolumeClaim) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *storagev1.StorageClass:
		n, ok := new.(*storagev1.StorageClass)
		return ok && same(o, n, func(x *storagev1.StorageClass) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *storagev1.CSINode:
		n, ok := new.(*storagev1.CSINode)
		return ok && same(o, n, func(x *storagev1.CSINode) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *storagev1.CSIDriver:
		n, ok := new.(*storagev1.CSIDriver)
		return ok && same(o, n, func(x *storagev1.CSIDriver) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *storagev1.CSIStorageCapacity:
		n, ok := new.(*storagev1.CSIStorageCapacity)
		return ok && same(o, n, func(x *storagev1.CSIStorageCapacity) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	case *storagev1.VolumeAttachment:
		n, ok := new.(*storagev1.VolumeAttachment)
		return ok && same(o, n, func(x *storagev1.VolumeAttachment) {
			x.TypeMeta, x.ResourceVersion, x.ManagedFields = metav1.TypeMeta{}, "", nil
		})
	}
	same, _ := sameDRA(old, new)
	return same
}

// same compares shallow copies of a and b with the fields strip clears
// cleared; the informer's objects are not touched.
func same[T any](a, b *T, strip func(*T)) bool {
	if a == nil || b == nil {
		return a == b
	}
	ca, cb := *a, *b
	strip(&ca)
	strip(&cb)
	return equality.Semantic.DeepEqual(&ca, &cb)
}

// Storage returns the resource and the record of a storage or DRA object; res is 0
// for a typed nil, ok false for an object of another type.
func Storage(obj any) (res abi.EventResource, o abi.StorageObject, ok bool) {
	switch x := obj.(type) {
	case *v1.PersistentVolume:
		if x != nil {
			o = PersistentVolume(x)
			res = abi.ResourcePersistentVolume
		}
	case *v1.PersistentVolumeClaim:
		if x != nil {
			o = PersistentVolumeClaim(x)
			res = abi.ResourcePersistentVolumeClaim
		}
	case *storagev1.StorageClass:
		if x != nil {
			o = StorageClass(x)
			res = abi.ResourceStorageClass
		}
	case *storagev1.CSINode:
		if x != nil {
			o = CSINode(x)
			res = abi.ResourceCSINode
		}
	case *storagev1.CSIDriver:
		if x != nil {
			o = abi.StorageObject{Name: x.Name, CapacityTracking: x.Spec.StorageCapacity != nil && *x.Spec.StorageCapacity}
			res = abi.ResourceCSIDriver
		}
	case *storagev1.CSIStorageCapacity:
		if x != nil {
			o = CSIStorageCapacity(x)
			res = abi.ResourceCSIStorageCapacity
		}
	case *storagev1.VolumeAttachment:
		if x != nil {
			o = abi.StorageObject{Name: x.Name, NodeName: x.Spec.NodeName, Driver: x.Spec.Attacher}
			if x.Spec.Source.PersistentVolumeName != nil {
				o.VolumeName = *x.Spec.Source.PersistentVolumeName
			}
			res = abi.ResourceVolumeAttachment
		}
	default:
		return draObject(obj)
	}
	return res, o, true
}

// PersistentVolume is the record of a PV.
func PersistentVolume(pv *v1.PersistentVolume) abi.StorageObject {
	o := abi.StorageObject{
		Name: pv.Name, StorageClass: pv.Spec.StorageClassName, Phase: volumePhase(pv.Status.Phase),
		Labels: sortedKVs(pv.Labels),
	}
	if r := pv.Spec.ClaimRef; r != nil {
		o.ClaimNamespace, o.ClaimName = r.Namespace, r.Name
	}
	if pv.Spec.CSI != nil {
		o.Driver = pv.Spec.CSI.Driver
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		o.NodeAffinity = true
		o.Topology = requiredAffinity(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: na.Required}})
	}
	return o
}

// PersistentVolumeClaim is the record of a PVC.
func PersistentVolumeClaim(pvc *v1.PersistentVolumeClaim) abi.StorageObject {
	o := abi.StorageObject{
		Namespace: pvc.Namespace, Name: pvc.Name, VolumeName: pvc.Spec.VolumeName,
		Phase: volumePhase(v1.PersistentVolumePhase(pvc.Status.Phase)), NodeName: pvc.Annotations[volume.AnnSelectedNode],
	}
	if pvc.Spec.StorageClassName != nil {
		o.StorageClass = *pvc.Spec.StorageClassName
	}
	return o
}

// StorageClass is the record of a StorageClass; allowedTopologies become
// terms of In requirements.
func StorageClass(sc *storagev1.StorageClass) abi.StorageObject {
	o := abi.StorageObject{Name: sc.Name, Driver: sc.Provisioner}
	if m := sc.VolumeBindingMode; m != nil {
		switch *m {
		case storagev1.VolumeBindingImmediate:
		case storagev1.VolumeBindingWaitForFirstConsumer:
			o.BindingMode = abi.BindingWaitForFirstConsumer
		default:
			o.BindingMode = abi.BindingUnknown
		}
	}
	for _, t := range sc.AllowedTopologies {
		var term abi.NodeSelectorTerm
		for _, e := range t.MatchLabelExpressions {
			term.MatchExpressions = append(term.MatchExpressions, abi.Requirement{Key: e.Key, Operator: abi.SelectorIn, Values: cloneStrings(e.Values)})
		}
		o.Topology = append(o.Topology, term)
	}
	return o
}

// CSINode is the record of a CSINode.
func CSINode(n *storagev1.CSINode) abi.StorageObject {
	o := abi.StorageObject{Name: n.Name, NodeName: n.Name, MigratedPlugins: n.Annotations[v1.MigratedPluginsAnnotationKey]}
	for _, d := range n.Spec.Drivers {
		l := abi.CSIDriverLimit{Name: d.Name}
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			l.Allocatable, l.HasAllocatable = *d.Allocatable.Count, true
		}
		o.Drivers = append(o.Drivers, l)
	}
	return o
}

// CSIStorageCapacity is the record of a CSIStorageCapacity; its capacity is
// the volume limit upstream's VolumeBinding compares: maximumVolumeSize when
// set, else capacity.
func CSIStorageCapacity(c *storagev1.CSIStorageCapacity) abi.StorageObject {
	o := abi.StorageObject{Namespace: c.Namespace, Name: c.Name, StorageClass: c.StorageClassName}
	switch {
	case c.MaximumVolumeSize != nil:
		o.Capacity, o.HasCapacity = c.MaximumVolumeSize.Value(), true
	case c.Capacity != nil:
		o.Capacity, o.HasCapacity = c.Capacity.Value(), true
	}
	return o
}

func volumePhase(p v1.PersistentVolumePhase) abi.VolumePhase {
	switch p {
	case "":
		return abi.PhaseNone
	case v1.VolumePending:
		return abi.PhasePending
	case v1.VolumeAvailable:
		return abi.PhaseAvailable
	case v1.VolumeBound:
		return abi.PhaseBound
	case v1.VolumeReleased:
		return abi.PhaseReleased
	case v1.VolumeFailed:
		return abi.PhaseFailed
	case v1.PersistentVolumePhase(v1.ClaimLost):
		return abi.PhaseLost
	}
	return abi.PhaseUnknown
}
