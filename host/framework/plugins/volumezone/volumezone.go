// Package volumezone is upstream's VolumeZone plugin
// (pkg/scheduler/framework/plugins/volumezone): at PreFilter and Filter, the
// zone and region labels of the PersistentVolumes bound to the pod's claims
// must hold the node's value of the same label (or of its GA equivalent).
// Rejects: UnschedulableAndUnresolvable (ReasonVolumeZone). Default profile,
// filter only.
package volumezone

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonVolumeZone is upstream's VolumeZone reason.
const ReasonVolumeZone = "node(s) had no available volume zone"

var statusVolumeZone = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginVolumeZone,
	Reasons: []string{ReasonVolumeZone}}

// volumeTopologyLabels are the PV labels VolumeZone matches against the
// node's, deprecated ones included (upstream's topologyLabels).
var volumeTopologyLabels = []string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// volumeZone is upstream v1.37's VolumeZone plugin: the zone and region
// labels of the PersistentVolumes bound to the pod's claims
// (topology.kubernetes.io/zone and region, and the deprecated
// failure-domain.beta.kubernetes.io ones; a value may list zones joined by
// "__") must hold the node's value of the same label, or of its GA
// equivalent; a node without any of the four labels passes.
//
// PreFilter reads the pod's PV topology once (persistentVolumeClaim
// volumes only, as upstream): an unbound claim of a WaitForFirstConsumer
// class is left to VolumeBinding; a missing claim, class or PV, an unbound
// claim without a class, a class without a binding mode and an unbound
// claim of an Immediate class reject the pod UnschedulableAndUnresolvable
// with upstream's messages. A pod without PV topology skips the filter.
// Rejects: UnschedulableAndUnresolvable (ReasonVolumeZone).
type volumeZone struct {
	listers framework.Listers
}

var _ framework.PreFilterPlugin = volumeZone{}

func (volumeZone) Name() string { return abi.PluginVolumeZone }

// pvTopology is one topology label of a PV: its key and the values it
// allows.
type pvTopology struct {
	key    string
	values sets.Set[string]
}

func (pl volumeZone) PreFilter(pi *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	pod := pi.Pod
	var f zoneFilter
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		if src.ClaimName == "" {
			return nil, nil, zoneRejection("PersistentVolumeClaim had no name")
		}
		pvc, err := pl.listers.PVC(pod.Namespace, src.ClaimName)
		if err != nil {
			return nil, nil, framework.LookupStatus(abi.PluginVolumeZone, err)
		}
		if pvc.Spec.VolumeName == "" {
			class := storagehelpers.GetPersistentVolumeClaimClass(pvc)
			if class == "" {
				return nil, nil, zoneRejection("PersistentVolumeClaim had no pv name and storageClass name")
			}
			sc, err := pl.listers.StorageClass(class)
			if err != nil {
				return nil, nil, framework.LookupStatus(abi.PluginVolumeZone, err)
			}
			if sc.VolumeBindingMode == nil {
				return nil, nil, zoneRejection(fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", class))
			}
			if *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, nil, zoneRejection("PersistentVolume had no name")
		}
		pv, err := pl.listers.PV(pvc.Spec.VolumeName)
		if err != nil {
			return nil, nil, framework.LookupStatus(abi.PluginVolumeZone, err)
		}
		f = append(f, pvTopologies(pv)...)
	}
	if len(f) == 0 {
		return nil, nil, nil
	}
	return f, nil, nil
}

func zoneRejection(reason string) *framework.Status {
	return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginVolumeZone, Reasons: []string{reason}}
}

// pvTopologies are pv's topology labels; a label whose value does not
// parse (an empty zone in the list) is ignored, as upstream.
func pvTopologies(pv *v1.PersistentVolume) []pvTopology {
	var out []pvTopology
	for _, key := range volumeTopologyLabels {
		value, ok := pv.Labels[key]
		if !ok {
			continue
		}
		zones, err := volumehelpers.LabelZonesToSet(value)
		if err != nil {
			continue
		}
		out = append(out, pvTopology{key: key, values: sets.Set[string](zones)})
	}
	return out
}

// zoneFilter is the pod's PV topology.
type zoneFilter []pvTopology

func (f zoneFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	labels := ni.Node().Labels
	constrained := false
	for _, k := range volumeTopologyLabels {
		if _, ok := labels[k]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for _, t := range f {
		v, ok := labels[t.key]
		if !ok {
			v, ok = labels[gaTopologyLabel(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return statusVolumeZone
		}
	}
	return nil
}

// gaTopologyLabel is the GA label of a deprecated failure-domain one.
func gaTopologyLabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return key
}

// Row is VolumeZone's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginVolumeZone, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(h framework.Handle, _ any) (framework.Plugin, error) {
			return volumeZone{listers: h.Listers()}, nil
		}}
}
