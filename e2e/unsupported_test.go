package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/framework"
)

// TestRefusesConstraintsItCannotCheck: a pod carrying a hard constraint that
// only an upstream plugin wasmsched lacks can check (a PersistentVolumeClaim
// or generic ephemeral volume, a volume kind VolumeRestrictions restricts, an
// inline CSI volume, a ResourceClaim) stays pending with
// PodScheduled=False/Unschedulable and a FailedScheduling event naming what is
// missing, instead of being bound as if the constraint were not there. Pod
// (anti-)affinity and topology spreading are checked since issue 14
// (placement_test.go), so they are not here.
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
	volume := func(vs v1.VolumeSource) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: vs}} }
	}
	add("claim", framework.ReasonUnsupportedClaim, volume(v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}))
	add("ephemeral", framework.ReasonUnsupportedClaim, volume(v1.VolumeSource{
		Ephemeral: &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			}}}}))
	add("in-tree", framework.ReasonUnsupportedInTreeVolume, volume(v1.VolumeSource{
		ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}))
	add("inline-csi", framework.ReasonUnsupportedCSIVolume, volume(v1.VolumeSource{
		CSI: &v1.CSIVolumeSource{Driver: "inline.csi.example.com"}}))
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
