package frameworktest

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// The volume plugins' fixtures (VolumeRestrictions, NodeVolumeLimits,
// VolumeZone, VolumeBinding): listers over fixed objects, builders of pods
// with volumes and of storage objects, and a run of one PreFilter plugin.

// StorageListers returns listers holding objs (claims, PVs, classes,
// CSINodes, CSIDrivers, VolumeAttachments).
func StorageListers(objs ...any) framework.Listers {
	idx := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	pvcs, pvs, scs, nodes, drivers, vas := idx(), idx(), idx(), idx(), idx(), idx()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.PersistentVolumeClaim:
			err = pvcs.Add(o)
		case *v1.PersistentVolume:
			err = pvs.Add(o)
		case *storagev1.StorageClass:
			err = scs.Add(o)
		case *storagev1.CSINode:
			err = nodes.Add(o)
		case *storagev1.CSIDriver:
			err = drivers.Add(o)
		case *storagev1.VolumeAttachment:
			err = vas.Add(o)
		default:
			panic(fmt.Sprintf("StorageListers: unexpected %T", o))
		}
		if err != nil {
			panic(err)
		}
	}
	return framework.Listers{
		PersistentVolumeClaims: corelisters.NewPersistentVolumeClaimLister(pvcs),
		PersistentVolumes:      corelisters.NewPersistentVolumeLister(pvs),
		StorageClasses:         storagelisters.NewStorageClassLister(scs),
		CSINodes:               storagelisters.NewCSINodeLister(nodes),
		CSIDrivers:             storagelisters.NewCSIDriverLister(drivers),
		VolumeAttachments:      storagelisters.NewVolumeAttachmentLister(vas),
	}
}

// MountVolumes adds volumes with sources srcs to the pod, named v0, v1...
func (b *PodBuilder) MountVolumes(srcs ...v1.VolumeSource) *PodBuilder {
	for _, s := range srcs {
		b.P.Spec.Volumes = append(b.P.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", len(b.P.Spec.Volumes)), VolumeSource: s})
	}
	return b
}

// MountClaims adds persistentVolumeClaim volumes of the claims named.
func (b *PodBuilder) MountClaims(names ...string) *PodBuilder {
	for _, n := range names {
		b.MountVolumes(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: n}})
	}
	return b
}

// MakeClaim is claim name in namespace default bound to PV volume ("" for
// unbound) of class ("" for none), with access modes.
func MakeClaim(name, volume, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume, AccessModes: modes}}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	return c
}

// MakePV is PV name with labels (key, value pairs).
func MakePV(name string, labels ...string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i < len(labels); i += 2 {
		pv.Labels[labels[i]] = labels[i+1]
	}
	return pv
}

// MakeClass is a class of provisioner with binding mode (nil: unset).
func MakeClass(name, provisioner string, mode *storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: mode}
}

// MakeCSINode is the CSINode of node with drivers (name, limit pairs; a
// limit < 0 for none).
func MakeCSINode(node string, drivers ...any) *storagev1.CSINode {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for i := 0; i < len(drivers); i += 2 {
		d := storagev1.CSINodeDriver{Name: drivers[i].(string), NodeID: node}
		if limit := int32(drivers[i+1].(int)); limit >= 0 {
			d.Allocatable = &storagev1.VolumeNodeResources{Count: &limit}
		}
		n.Spec.Drivers = append(n.Spec.Drivers, d)
	}
	return n
}

// RunPlugin runs pl's PreFilter for pod on snap and, when it neither
// rejects nor skips, its filter on ni; skipped reports a nil filter.
func RunPlugin(t *testing.T, pl framework.PreFilterPlugin, pod *cache.PodInfo, snap *cache.Snapshot, ni *cache.NodeInfo) (pre, filter *framework.Status, skipped bool) {
	t.Helper()
	if snap == nil {
		snap = cache.NewSnapshot()
	}
	f, nodes, st := pl.PreFilter(pod, snap)
	if nodes != nil {
		t.Errorf("PreFilter restricted the nodes to %v", nodes)
	}
	if st != nil {
		return st, nil, false
	}
	if f == nil {
		return nil, nil, true
	}
	return nil, f.Filter(ni), false
}
