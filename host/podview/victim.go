package podview

import (
	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
)

// PodVictim is a single pod as a preemption candidate: its priority, its
// status.startTime (0 when it has not started), one member, and whether
// evicting it violates a PodDisruptionBudget, which only the caller knows.
func PodVictim(pod *v1.Pod, pdbViolating bool) abi.Victim {
	return abi.Victim{
		Kind:         abi.VictimPod,
		Priority:     podPriority(pod),
		StartTime:    nanos(pod.Status.StartTime),
		Members:      1,
		PDBViolating: pdbViolating,
		UID:          string(pod.UID),
		Namespace:    pod.Namespace,
		Name:         pod.Name,
	}
}

// GroupVictim is a pod group with DisruptionMode all as one preemption
// candidate: the group's priority, the earliest start among pods (members
// that have not started are ignored, as upstream's "now" never wins the
// minimum against a real start; 0 when none has started), len(pods) members,
// and the PodGroup's UID, namespace and name.
func GroupVictim(pg *schedv1beta1.PodGroup, pods []*v1.Pod, pdbViolating bool) abi.Victim {
	var earliest int64
	for _, p := range pods {
		if t := nanos(p.Status.StartTime); t != 0 && (earliest == 0 || t < earliest) {
			earliest = t
		}
	}
	return abi.Victim{
		Kind:         abi.VictimGroup,
		Priority:     groupPriority(pg),
		StartTime:    earliest,
		Members:      int32(len(pods)),
		PDBViolating: pdbViolating,
		UID:          string(pg.UID),
		Namespace:    pg.Namespace,
		Name:         pg.Name,
	}
}
