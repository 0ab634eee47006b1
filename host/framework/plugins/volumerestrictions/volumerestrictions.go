// Package volumerestrictions is upstream's VolumeRestrictions plugin
// (pkg/scheduler/framework/plugins/volumerestrictions): at PreFilter and
// Filter, a GCE PD, EBS, RBD or iSCSI volume of the pod may not conflict
// with one on the node (Unschedulable, ReasonDiskConflict), and a
// ReadWriteOncePod claim may not be in use by another pod (Unschedulable,
// ReasonReadWriteOncePodConflict). Default profile, filter only.
package volumerestrictions

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Upstream's VolumeRestrictions reasons.
const (
	ReasonDiskConflict = "node(s) had no available disk"
	// ReasonReadWriteOncePodConflict rejects every node while another pod
	// uses a ReadWriteOncePod claim of the pod.
	ReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode " +
		"already in-use by another pod"
)

var (
	statusDiskConflict = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginVolumeRestrictions,
		Reasons: []string{ReasonDiskConflict}}
	statusReadWriteOncePodConflict = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginVolumeRestrictions,
		Reasons: []string{ReasonReadWriteOncePodConflict}}
)

// volumeRestrictions is upstream v1.37's VolumeRestrictions plugin:
//   - a gcePersistentDisk, awsElasticBlockStore, rbd or iscsi volume of the
//     pod may not be used by a pod on the node already (the same GCE PD
//     unless both read-only, the same EBS volume, an RBD image of the same
//     pool with a monitor in common unless both read-only, the same iSCSI
//     IQN unless both read-only): Unschedulable (ReasonDiskConflict);
//   - a claim of the pod with the ReadWriteOncePod access mode may not be
//     used by any other pod in the cluster: every node is Unschedulable
//     (ReasonReadWriteOncePodConflict), so that preemption may evict the
//     user, which its dry runs see through PodUpdater.
//
// Every persistentVolumeClaim volume's claim must exist: PreFilter rejects
// the pod UnschedulableAndUnresolvable (`persistentvolumeclaim "x" not
// found`) otherwise. A pod without such volumes, or with no claim in use
// by another pod, skips the filter.
//
// Upstream's PodUpdater counts the pods removed and added by their claim
// names alone; here by namespace and name, so that a victim in another
// namespace using a claim of the same name does not look like a release.
type volumeRestrictions struct {
	listers framework.Listers
}

var (
	_ framework.PreFilterPlugin = volumeRestrictions{}
	_ framework.PodUpdater      = (*restrictionsFilter)(nil)
)

func (volumeRestrictions) Name() string { return abi.PluginVolumeRestrictions }

func (pl volumeRestrictions) PreFilter(pi *cache.PodInfo, snap *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	pod := pi.Pod
	disks := false
	for i := range pod.Spec.Volumes {
		disks = disks || restrictedDisk(&pod.Spec.Volumes[i].VolumeSource)
	}
	var rwop []string
	conflicts := 0
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		pvc, err := pl.listers.PVC(pod.Namespace, src.ClaimName)
		if err != nil {
			return nil, nil, framework.LookupStatus(abi.PluginVolumeRestrictions, err)
		}
		if !slices.Contains(pvc.Spec.AccessModes, v1.ReadWriteOncePod) {
			continue
		}
		key := cache.ClaimKey(pod.Namespace, pvc.Name)
		if slices.Contains(rwop, key) {
			continue
		}
		rwop = append(rwop, key)
		if snap.ClaimInUse(key) {
			conflicts++
		}
	}
	if !disks && conflicts == 0 {
		return nil, nil, nil
	}
	return &restrictionsFilter{pod: pod, disks: disks, rwop: rwop, conflicts: conflicts}, nil, nil
}

// restrictionsFilter is the pod's state: whether it has restricted
// in-tree disks, its ReadWriteOncePod claims and how many of them other
// pods use (upstream's conflictingPVCRefCount).
type restrictionsFilter struct {
	pod       *v1.Pod
	disks     bool
	rwop      []string
	conflicts int
}

func (f *restrictionsFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if f.disks {
		for i := range f.pod.Spec.Volumes {
			v := &f.pod.Spec.Volumes[i].VolumeSource
			if !restrictedDisk(v) {
				continue
			}
			for _, other := range ni.Pods() {
				if diskConflict(v, other.Pod) {
					return statusDiskConflict
				}
			}
		}
	}
	if f.conflicts > 0 {
		return statusReadWriteOncePodConflict
	}
	return nil
}

func (f *restrictionsFilter) Clone() framework.PodFilter {
	c := *f
	return &c
}

func (f *restrictionsFilter) AddPod(pod *cache.PodInfo, _ *cache.NodeInfo) { f.count(pod, 1) }

func (f *restrictionsFilter) RemovePod(pod *cache.PodInfo, _ *cache.NodeInfo) { f.count(pod, -1) }

// count adds sign for every volume of pod that uses one of the pod's
// ReadWriteOncePod claims (upstream's updateWithPod).
func (f *restrictionsFilter) count(pod *cache.PodInfo, sign int) {
	for _, k := range pod.Claims {
		if slices.Contains(f.rwop, k) {
			f.conflicts += sign
		}
	}
}

// restrictedDisk reports whether v is an in-tree volume VolumeRestrictions
// checks for conflicts (upstream's needsRestrictionsCheck).
func restrictedDisk(v *v1.VolumeSource) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// diskConflict reports whether volume v conflicts with a volume of pod
// (upstream's isVolumeConflict).
func diskConflict(v *v1.VolumeSource, pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		e := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case v.GCEPersistentDisk != nil && e.GCEPersistentDisk != nil:
			if v.GCEPersistentDisk.PDName == e.GCEPersistentDisk.PDName && !(v.GCEPersistentDisk.ReadOnly && e.GCEPersistentDisk.ReadOnly) {
				return true
			}
		case v.AWSElasticBlockStore != nil && e.AWSElasticBlockStore != nil:
			if v.AWSElasticBlockStore.VolumeID == e.AWSElasticBlockStore.VolumeID {
				return true
			}
		case v.ISCSI != nil && e.ISCSI != nil:
			if v.ISCSI.IQN == e.ISCSI.IQN && !(v.ISCSI.ReadOnly && e.ISCSI.ReadOnly) {
				return true
			}
		case v.RBD != nil && e.RBD != nil:
			a, b := v.RBD, e.RBD
			if a.RBDPool == b.RBDPool && a.RBDImage == b.RBDImage && !(a.ReadOnly && b.ReadOnly) &&
				slices.ContainsFunc(a.CephMonitors, func(m string) bool { return slices.Contains(b.CephMonitors, m) }) {
				return true
			}
		}
	}
	return false
}

// Row is VolumeRestrictions's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginVolumeRestrictions, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(h framework.Handle, _ any) (framework.Plugin, error) {
			return volumeRestrictions{listers: h.Listers()}, nil
		}}
}
