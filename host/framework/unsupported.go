package framework

import (
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// The reasons of a pod refused for a constraint no native filter checks yet.
// Each names what the pod asks for and the upstream plugin that checks it.
const (
	ReasonUnsupportedClaim = "wasmsched does not support PersistentVolumeClaim or ephemeral volumes yet " +
		"(upstream plugins " + abi.PluginVolumeBinding + ", VolumeZone, " + abi.PluginVolumeRestrictions + ", " + abi.PluginNodeVolumeLimits + ")"
	// ReasonUnsupportedInTreeVolume and ReasonUnsupportedCSIVolume are no
	// longer returned (VolumeRestrictions and NodeVolumeLimits check those
	// volumes); they stay until e2e/unsupported_test.go drops its in-tree
	// and inline-CSI cases.
	ReasonUnsupportedInTreeVolume = "wasmsched does not support gcePersistentDisk, awsElasticBlockStore, rbd or iscsi " +
		"volumes yet (upstream plugin " + abi.PluginVolumeRestrictions + ")"
	ReasonUnsupportedCSIVolume = "wasmsched does not support inline CSI volumes yet (upstream plugin " +
		abi.PluginNodeVolumeLimits + ")"
	ReasonUnsupportedResourceClaim = "wasmsched does not support resourceClaims (dynamic resource allocation) yet " +
		"(upstream plugin " + abi.PluginDynamicResources + ")"
)

// unsupportedPlugin stands in the profile for an upstream plugin not
// written yet, and keeps the rule "never place a pod while ignoring a
// constraint it carries": a pod with a hard constraint that only such a
// plugin checks is refused before any node is looked at (refuseUnsupported).
// It implements no extension point; the profile runs the placeholders
// itself, first. Writing the plugin replaces its placeholder in the profile.
type unsupportedPlugin struct {
	name   string
	checks []unsupportedCheck
}

// unsupportedCheck is one constraint a placeholder refuses: the reason and
// whether a pod carries it.
type unsupportedCheck struct {
	reason  string
	carries func(*v1.Pod) bool
}

func (u *unsupportedPlugin) Name() string { return u.name }

// The constraints the placeholders refuse.
var (
	checkClaim         = unsupportedCheck{ReasonUnsupportedClaim, func(p *v1.Pod) bool { return hasVolume(p, volumeClaim) }}
	checkResourceClaim = unsupportedCheck{ReasonUnsupportedResourceClaim,
		func(p *v1.Pod) bool { return len(p.Spec.ResourceClaims) > 0 }}
)

// volumePlaceholder is the placeholder of the volume plugin name
// (VolumeBinding), which refuses claims when claims is set (Build).
func volumePlaceholder(name string, claims bool) *unsupportedPlugin {
	u := &unsupportedPlugin{name: name}
	if claims {
		u.checks = append(u.checks, checkClaim)
	}
	return u
}

// unsupportedDynamicResources is DynamicResources' placeholder.
var unsupportedDynamicResources = &unsupportedPlugin{abi.PluginDynamicResources, []unsupportedCheck{checkResourceClaim}}

// The kinds of volume a placeholder refuses; a volume is of the first kind
// it matches.
const (
	volumeOther = iota
	volumeClaim
)

func volumeKind(vs *v1.VolumeSource) int {
	switch {
	case vs.PersistentVolumeClaim != nil, vs.Ephemeral != nil:
		return volumeClaim
	}
	return volumeOther
}

func hasVolume(p *v1.Pod, kind int) bool {
	for i := range p.Spec.Volumes {
		if volumeKind(&p.Spec.Volumes[i].VolumeSource) == kind {
			return true
		}
	}
	return false
}

// refuseUnsupported runs the profile's placeholders: a pod carrying a
// constraint one of them stands for is rejected UnschedulableAndUnresolvable
// (preemption cannot help), with one reason per placeholder, in profile
// order, the first naming the status's plugin. It returns nil for every
// other pod, at the cost of a few nil checks and walks over the pod's
// volumes.
func (p *Profile) refuseUnsupported(pod *v1.Pod) *Status {
	var st *Status
	for _, u := range p.unsupported {
		for _, c := range u.checks {
			if !c.carries(pod) {
				continue
			}
			if st == nil {
				st = &Status{Code: UnschedulableAndUnresolvable, Plugin: u.name}
			}
			st.Reasons = append(st.Reasons, c.reason)
		}
	}
	return st
}
