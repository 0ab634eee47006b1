package plugins

import (
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// The reasons of a pod refused for a constraint no native filter checks yet.
// Each names what the pod asks for and the upstream plugin that checks it.
const (
	ReasonUnsupportedPodAffinity = "wasmsched does not support required pod affinity or anti-affinity yet " +
		"(upstream plugin " + abi.PluginInterPodAffinity + ")"
	ReasonUnsupportedTopologySpread = "wasmsched does not support topologySpreadConstraints with " +
		"whenUnsatisfiable: DoNotSchedule yet (upstream plugin " + abi.PluginPodTopologySpread + ")"
	ReasonUnsupportedClaim = "wasmsched does not support PersistentVolumeClaim or ephemeral volumes yet " +
		"(upstream plugins " + abi.PluginVolumeBinding + ", VolumeZone, " + abi.PluginVolumeRestrictions + ", " + abi.PluginNodeVolumeLimits + ")"
	ReasonUnsupportedInTreeVolume = "wasmsched does not support gcePersistentDisk, awsElasticBlockStore, rbd or iscsi " +
		"volumes yet (upstream plugin " + abi.PluginVolumeRestrictions + ")"
	ReasonUnsupportedCSIVolume = "wasmsched does not support inline CSI volumes yet (upstream plugin " +
		abi.PluginNodeVolumeLimits + ")"
	ReasonUnsupportedResourceClaim = "wasmsched does not support resourceClaims (dynamic resource allocation) yet " +
		"(upstream plugin " + abi.PluginDynamicResources + ")"
)

// unsupported is the PreFilter that keeps the rule "never place a pod while
// ignoring a constraint it carries": a pod with a hard constraint that only
// an unimplemented upstream plugin checks is rejected before any node is
// looked at, UnschedulableAndUnresolvable (preemption cannot help), with one
// reason per missing plugin, in upstream's filter order. The first of them
// names the status's plugin. It returns nil for every other pod, at the cost
// of a few nil checks and a walk over the pod's volumes.
//
// Soft constraints (preferred pod affinity, ScheduleAnyway spreading, the
// system default spreading, image locality) are scores, not constraints: a
// pod carrying only those is placed, without them. docs/RATIONALE.md says
// why.
func unsupported(pod *v1.Pod) *Status {
	spec := &pod.Spec
	var st *Status
	add := func(plugin, reason string) {
		if st == nil {
			st = &Status{Code: UnschedulableAndUnresolvable, Plugin: plugin}
		}
		st.Reasons = append(st.Reasons, reason)
	}

	var claims, inTree, inlineCSI bool
	for i := range spec.Volumes {
		vs := &spec.Volumes[i].VolumeSource
		switch {
		case vs.PersistentVolumeClaim != nil, vs.Ephemeral != nil:
			claims = true
		case vs.GCEPersistentDisk != nil, vs.AWSElasticBlockStore != nil, vs.RBD != nil, vs.ISCSI != nil:
			inTree = true
		case vs.CSI != nil:
			inlineCSI = true
		}
	}
	// Upstream's filter order: VolumeRestrictions, NodeVolumeLimits,
	// VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity,
	// DynamicResources.
	if inTree {
		add(abi.PluginVolumeRestrictions, ReasonUnsupportedInTreeVolume)
	}
	if inlineCSI {
		add(abi.PluginNodeVolumeLimits, ReasonUnsupportedCSIVolume)
	}
	if claims {
		add(abi.PluginVolumeBinding, ReasonUnsupportedClaim)
	}
	for i := range spec.TopologySpreadConstraints {
		if spec.TopologySpreadConstraints[i].WhenUnsatisfiable == v1.DoNotSchedule {
			add(abi.PluginPodTopologySpread, ReasonUnsupportedTopologySpread)
			break
		}
	}
	if a := spec.Affinity; a != nil &&
		(a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 ||
			a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0) {
		add(abi.PluginInterPodAffinity, ReasonUnsupportedPodAffinity)
	}
	if len(spec.ResourceClaims) > 0 {
		add(abi.PluginDynamicResources, ReasonUnsupportedResourceClaim)
	}
	return st
}
