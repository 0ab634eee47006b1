package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/framework"
)

// TestRefusesConstraintsItCannotCheck: a pod carrying a hard constraint that
// only an upstream plugin wasmsched lacks can check (a ResourceClaim: dynamic
// resource allocation) stays pending with PodScheduled=False/Unschedulable and
// a FailedScheduling event naming what is missing, instead of being bound as
// if the constraint were not there. Pod (anti-)affinity and topology
// spreading are checked since issue 14 (placement_test.go), claims, generic
// ephemeral volumes, in-tree disk conflicts and CSI volume limits since
// issue 15 (volume_test.go), so they are not here.
func TestRefusesConstraintsItCannotCheck(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "a", cpu: "4", labels: map[string]string{v1.LabelTopologyZone: "z1"}})
	createNode(t, c, nodeSpec{name: "b", cpu: "4", labels: map[string]string{v1.LabelTopologyZone: "z2"}})
	startScheduler(t, env.Kubeconfig)

	refused := map[string]string{}
	add := func(name, reason string, edit func(*v1.Pod)) {
		p := makePod(ns, name, "wasmsched", "100m")
		edit(p)
		createPod(t, c, p)
		refused[name] = reason
	}
	add("device", framework.ReasonUnsupportedResourceClaim, func(p *v1.Pod) {
		name := "gpu-claim"
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &name}}
	})

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
