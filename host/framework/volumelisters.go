package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// Reads of the storage objects for the volume plugins through Listers, a
// nil lister reading as empty: a get returns the lister's NotFound error,
// whose text ("persistentvolumeclaim \"data\" not found") upstream's
// plugins put in their statuses.

// PVC gets a PersistentVolumeClaim.
func (l Listers) PVC(ns, name string) (*v1.PersistentVolumeClaim, error) {
	if l.PersistentVolumeClaims == nil {
		return nil, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
	}
	return l.PersistentVolumeClaims.PersistentVolumeClaims(ns).Get(name)
}

// PV gets a PersistentVolume.
func (l Listers) PV(name string) (*v1.PersistentVolume, error) {
	if l.PersistentVolumes == nil {
		return nil, apierrors.NewNotFound(v1.Resource("persistentvolume"), name)
	}
	return l.PersistentVolumes.Get(name)
}

// StorageClass gets a StorageClass.
func (l Listers) StorageClass(name string) (*storagev1.StorageClass, error) {
	if l.StorageClasses == nil {
		return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
	}
	return l.StorageClasses.Get(name)
}

// CSIDriver gets a CSIDriver.
func (l Listers) CSIDriver(name string) (*storagev1.CSIDriver, error) {
	if l.CSIDrivers == nil {
		return nil, apierrors.NewNotFound(storagev1.Resource("csidriver"), name)
	}
	return l.CSIDrivers.Get(name)
}

// CSINode is the CSINode of node name, nil when there is none or it
// cannot be read (upstream's CSILimits logs the error and goes on without).
func (l Listers) CSINode(name string) *storagev1.CSINode {
	if l.CSINodes == nil {
		return nil
	}
	n, err := l.CSINodes.Get(name)
	if err != nil {
		return nil
	}
	return n
}

// VolumeAttachmentsByNode are the VolumeAttachments by node name.
func (l Listers) VolumeAttachmentsByNode() (map[string][]*storagev1.VolumeAttachment, error) {
	if l.VolumeAttachments == nil {
		return nil, nil
	}
	vas, err := l.VolumeAttachments.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list VolumeAttachments: %w", err)
	}
	var out map[string][]*storagev1.VolumeAttachment
	for _, va := range vas {
		if out == nil {
			out = make(map[string][]*storagev1.VolumeAttachment)
		}
		out[va.Spec.NodeName] = append(out[va.Spec.NodeName], va)
	}
	return out, nil
}

// LookupStatus is upstream's status for a failed get of an object the
// pod needs: UnschedulableAndUnresolvable with the error's text when it
// does not exist (an event for it requeues the pod), Error otherwise.
func LookupStatus(plugin string, err error) *Status {
	if apierrors.IsNotFound(err) {
		return &Status{Code: UnschedulableAndUnresolvable, Plugin: plugin, Reasons: []string{err.Error()}}
	}
	return &Status{Code: Error, Plugin: plugin, Err: err}
}
