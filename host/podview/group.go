package podview

import (
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
)

// Group returns what a member pod's record carries about pg; members is the
// number of pg's pods the scheduler knows about. A nil pg (the PodGroup not
// seen yet) gives only the member count.
func Group(pg *schedv1beta1.PodGroup, members int32) GroupInfo {
	if pg == nil {
		return GroupInfo{Members: members}
	}
	return GroupInfo{
		MinCount:       MinCount(pg),
		Priority:       groupPriority(pg),
		DisruptionMode: disruptionMode(pg),
		Members:        members,
	}
}

// PodGroup returns the record of pg for a policy; members is the number of
// pg's pods the scheduler knows about.
func PodGroup(pg *schedv1beta1.PodGroup, members int32) abi.PodGroup {
	return abi.PodGroup{
		Namespace:      pg.Namespace,
		Name:           pg.Name,
		MinCount:       MinCount(pg),
		Priority:       groupPriority(pg),
		PreemptNever:   pg.Spec.PreemptionPolicy != nil && *pg.Spec.PreemptionPolicy == schedv1beta1.PreemptNever,
		DisruptionMode: disruptionMode(pg),
		Members:        members,
	}
}

// MinCount is the gang policy's minCount, and 1 for a basic (non-gang)
// group, as upstream's gangscheduling getMinCount: a basic group's pods need
// no quorum. It is 1 for a nil pg too (the scheduling cycle treats an
// unknown PodGroup as a basic group); in a record, 0 is left to mean "the
// PodGroup is not known yet" (Group(nil) does not call it).
func MinCount(pg *schedv1beta1.PodGroup) int32 {
	if pg == nil {
		return 1
	}
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
		return g.MinCount
	}
	return 1
}

// groupPriority is spec.priority, 0 when unset (as upstream's
// util.PodGroupPriority).
func groupPriority(pg *schedv1beta1.PodGroup) int32 {
	if pg.Spec.Priority != nil {
		return *pg.Spec.Priority
	}
	return 0
}

// disruptionMode is All iff spec.disruptionMode.all is set; the API's
// default (unset, or single) is Single.
func disruptionMode(pg *schedv1beta1.PodGroup) abi.DisruptionMode {
	if d := pg.Spec.DisruptionMode; d != nil && d.All != nil {
		return abi.DisruptionAll
	}
	return abi.DisruptionSingle
}
