package bench

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The constraint mix (issue 31, e2e/perf's ConstraintMix): pod i is, by
// its app label, one of four. Every tenth (i%10 == 9) has a required
// anti-affinity on the hostname among its app's pods; the others cycle by
// i%3 through no constraint, a preferred anti-affinity (weight 100) on the
// hostname, and a DoNotSchedule spread over the zones (maxSkew 1). The
// required pods fit one per node as long as the nodes are at least a tenth
// of the pods.
const (
	mixLabel     = "app"
	MixPlain     = "mix-plain"
	MixPreferred = "mix-preferred"
	MixSpread    = "mix-spread"
	MixRequired  = "mix-required"
)

// MixApp is the app of the mix's pod i.
func MixApp(i int) string {
	if i%10 == 9 {
		return MixRequired
	}
	return [...]string{MixPlain, MixPreferred, MixSpread}[i%3]
}

// MixPod gives p the labels and constraints of the mix's pod i.
func MixPod(p *v1.Pod, i int) {
	app := MixApp(i)
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[mixLabel] = app
	term := func() v1.PodAffinityTerm {
		return v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{mixLabel: app}}}
	}
	switch app {
	case MixPreferred:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term()}}}}
	case MixRequired:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term()}}}
	case MixSpread:
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{mixLabel: app}}}}
	}
}
