package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/framework"
)

// TestRefusesConstraintsItCannotCheck: a pod carrying a hard constraint that
// only an upstream plugin wasmsched lacks can check (required pod
// anti-affinity, DoNotSchedule spreading, a PersistentVolumeClaim, a
// ResourceClaim) stays pending with PodScheduled=False/Unschedulable and a
// FailedScheduling event naming what is missing, instead of being bound as if
// the constraint were not there. A pod with only soft preferences of those
// kinds is bound.
func TestRefusesConstraintsItCannotCheck(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "a", cpu: "4", labels: map[string]string{v1.LabelTopologyZone: "z1"}})
	createNode(t, c, nodeSpec{name: "b", cpu: "4", labels: map[string]string{v1.LabelTopologyZone: "z2"}})
	startScheduler(t, env.Kubeconfig)

	term := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	refused := map[string]string{}
	add := func(name, reason string, edit func(*v1.Pod)) {
		p := makePod(ns, name, "wasmsched", "100m")
		p.Labels = map[string]string{"app": "web"}
		edit(p)
		createPod(t, c, p)
		refused[name] = reason
	}
	add("anti-affinity", framework.ReasonUnsupportedPodAffinity, func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	})
	add("spread", framework.ReasonUnsupportedTopologySpread, func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: term.LabelSelector}}
	})
	add("claim", framework.ReasonUnsupportedClaim, func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	})
	add("device", framework.ReasonUnsupportedResourceClaim, func(p *v1.Pod) {
		name := "gpu-claim"
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &name}}
	})
	soft := makePod(ns, "soft", "wasmsched", "100m")
	soft.Labels = map[string]string{"app": "web"}
	soft.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: term}}}}
	soft.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
		WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: term.LabelSelector}}
	createPod(t, c, soft)

	waitBound(t, c, ns, "soft", 30*time.Second)
	for name, reason := range refused {
		var cond *v1.PodCondition
		waitFor(t, 30*time.Second, name+"'s PodScheduled condition", func() (bool, error) {
			cond = scheduledCondition(getPod(t, c, ns, name))
			return cond != nil, nil
		})
		if cond.Status != v1.ConditionFalse || cond.Reason != v1.PodReasonUnschedulable {
			t.Errorf("%s: condition %s=%s reason %q, want False/Unschedulable", name, cond.Type, cond.Status, cond.Reason)
		}
		if want := "0/2 nodes are available: " + reason + "."; !strings.HasPrefix(cond.Message, want) {
			t.Errorf("%s: condition message %q, want it to start with %q", name, cond.Message, want)
		}
		if n := getPod(t, c, ns, name).Spec.NodeName; n != "" {
			t.Errorf("%s: bound to %s despite a constraint wasmsched cannot check", name, n)
		}
		waitFor(t, 30*time.Second, name+"'s FailedScheduling event", func() (bool, error) {
			for _, e := range eventsFor(t, c, ns, name) {
				if e.Reason == "FailedScheduling" && e.Type == v1.EventTypeWarning && strings.Contains(e.Note, reason) {
					return true, nil
				}
			}
			return false, nil
		})
	}
}
