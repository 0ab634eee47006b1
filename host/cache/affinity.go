package cache

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// PodAffinity is a pod's inter-pod affinity with its label selectors and
// namespaces parsed once (upstream's PodInfo affinity fields, built with
// k8s.io/kube-scheduler/framework's helpers), so that neither the cycle of
// the pod nor the cycles of pods checked against it parse them again.
type PodAffinity struct {
	Required      []fwk.AffinityTerm
	RequiredAnti  []fwk.AffinityTerm
	Preferred     []fwk.WeightedAffinityTerm
	PreferredAnti []fwk.WeightedAffinityTerm
	// Err is the first term that failed to parse; the terms are then
	// incomplete, and the InterPodAffinity plugin fails the pod's cycle
	// with it, as upstream does.
	Err error
	// keys are TermKey of each term, by TermKind, in the order of the
	// terms: the snapshot's term index groups equal terms by them.
	keys [numTermKinds][]string
}

// newPodAffinity parses pod's pod affinity and anti-affinity; nil for a pod
// that has neither (most pods: they pay nothing here).
func newPodAffinity(pod *v1.Pod) *PodAffinity {
	a := pod.Spec.Affinity
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return nil
	}
	pa := &PodAffinity{}
	var err error
	fail := func(what string, e error) {
		if e != nil && pa.Err == nil {
			pa.Err = fmt.Errorf("parsing pod %s/%s %s: %w", pod.Namespace, pod.Name, what, e)
		}
	}
	pa.Required, err = fwk.GetAffinityTerms(pod, fwk.GetPodAffinityTerms(a))
	fail("required affinity terms", err)
	pa.RequiredAnti, err = fwk.GetAffinityTerms(pod, fwk.GetPodAntiAffinityTerms(a))
	fail("required anti-affinity terms", err)
	if a.PodAffinity != nil {
		pa.Preferred, err = fwk.GetWeightedAffinityTerms(pod, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		fail("preferred affinity terms", err)
	}
	if a.PodAntiAffinity != nil {
		pa.PreferredAnti, err = fwk.GetWeightedAffinityTerms(pod, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		fail("preferred anti-affinity terms", err)
	}
	for i := range pa.Required {
		pa.keys[RequiredAffinity] = append(pa.keys[RequiredAffinity], TermKey(&pa.Required[i], 0))
	}
	for i := range pa.RequiredAnti {
		pa.keys[RequiredAntiAffinity] = append(pa.keys[RequiredAntiAffinity], TermKey(&pa.RequiredAnti[i], 0))
	}
	for i := range pa.Preferred {
		pa.keys[PreferredAffinity] = append(pa.keys[PreferredAffinity], TermKey(&pa.Preferred[i].AffinityTerm, pa.Preferred[i].Weight))
	}
	for i := range pa.PreferredAnti {
		pa.keys[PreferredAntiAffinity] = append(pa.keys[PreferredAntiAffinity], TermKey(&pa.PreferredAnti[i].AffinityTerm, pa.PreferredAnti[i].Weight))
	}
	return pa
}

// HasAny reports whether the pod has any pod affinity or anti-affinity term
// (upstream's podWithAffinity: such pods are listed on their node's
// PodsWithAffinity).
func (pa *PodAffinity) HasAny() bool {
	return pa != nil && (len(pa.Required) > 0 || len(pa.RequiredAnti) > 0 ||
		len(pa.Preferred) > 0 || len(pa.PreferredAnti) > 0)
}
