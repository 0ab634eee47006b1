package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// Test helpers of the volume plugins: listers over fixed objects, and
// builders of pods with volumes and of storage objects.

// storageListers returns listers holding objs (claims, PVs, classes,
// CSINodes, CSIDrivers, VolumeAttachments).
func storageListers(objs ...any) Listers {
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
			panic(fmt.Sprintf("storageListers: unexpected %T", o))
		}
		if err != nil {
			panic(err)
		}
	}
	return Listers{
		PersistentVolumeClaims: corelisters.NewPersistentVolumeClaimLister(pvcs),
		PersistentVolumes:      corelisters.NewPersistentVolumeLister(pvs),
		StorageClasses:         storagelisters.NewStorageClassLister(scs),
		CSINodes:               storagelisters.NewCSINodeLister(nodes),
		CSIDrivers:             storagelisters.NewCSIDriverLister(drivers),
		VolumeAttachments:      storagelisters.NewVolumeAttachmentLister(vas),
	}
}

// mountVolumes adds volumes with sources srcs to the pod, named v0, v1...
func (b *podBuilder) mountVolumes(srcs ...v1.VolumeSource) *podBuilder {
	for _, s := range srcs {
		b.p.Spec.Volumes = append(b.p.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", len(b.p.Spec.Volumes)), VolumeSource: s})
	}
	return b
}

// mountClaims adds persistentVolumeClaim volumes of the claims named.
func (b *podBuilder) mountClaims(names ...string) *podBuilder {
	for _, n := range names {
		b.mountVolumes(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: n}})
	}
	return b
}

// makeClaim is claim name in namespace default bound to PV volume ("" for
// unbound) of class ("" for none), with access modes.
func makeClaim(name, volume, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume, AccessModes: modes}}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	return c
}

// makePV is PV name with labels (key, value pairs).
func makePV(name string, labels ...string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i < len(labels); i += 2 {
		pv.Labels[labels[i]] = labels[i+1]
	}
	return pv
}

// makeClass is a class of provisioner with binding mode (nil: unset).
func makeClass(name, provisioner string, mode *storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: mode}
}

// makeCSINode is the CSINode of node with drivers (name, limit pairs; a
// limit < 0 for none).
func makeCSINode(node string, drivers ...any) *storagev1.CSINode {
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
