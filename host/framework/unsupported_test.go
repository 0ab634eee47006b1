package framework_test

import (
	"testing"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
)

func TestPrepareRefusesUnsupportedConstraints(t *testing.T) {
	term := v1.PodAffinityTerm{TopologyKey: v1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	weighted := []v1.WeightedPodAffinityTerm{{Weight: 10, PodAffinityTerm: term}}
	vol := func(src v1.VolumeSource) v1.Volume { return v1.Volume{Name: "v", VolumeSource: src} }
	refused := func(plugin string, reasons ...string) *Status {
		return &Status{Code: UnschedulableAndUnresolvable, Plugin: plugin, Reasons: reasons}
	}
	tests := []struct {
		name string
		spec func(*v1.PodSpec)
		want *Status
	}{
		{name: "plain pod", spec: func(*v1.PodSpec) {}},
		{name: "preferred pod affinity and anti-affinity are scores: placed",
			spec: func(s *v1.PodSpec) {
				s.Affinity = &v1.Affinity{
					PodAffinity:     &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: weighted},
					PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: weighted}}
			}},
		// Claims are VolumeBinding's, not a placeholder's: without an API
		// the default profile finds none.
		{name: "persistent volume claim",
			spec: func(s *v1.PodSpec) {
				s.Volumes = []v1.Volume{vol(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}})}
			},
			want: refused(abi.PluginVolumeRestrictions, `persistentvolumeclaim "data" not found`)},
		{name: "generic ephemeral volume",
			spec: func(s *v1.PodSpec) {
				s.Volumes = []v1.Volume{vol(v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}})}
			},
			want: refused(abi.PluginVolumeBinding, `waiting for ephemeral volume controller to create the persistentvolumeclaim "pod-a-v"`)},
		{name: "in-tree volume with access restrictions: VolumeRestrictions checks it",
			spec: func(s *v1.PodSpec) {
				s.Volumes = []v1.Volume{vol(v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "p", IQN: "q"}})}
			}},
		{name: "inline CSI volume: NodeVolumeLimits does not count it, as upstream",
			spec: func(s *v1.PodSpec) {
				s.Volumes = []v1.Volume{vol(v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}})}
			}},
		{name: "volumes no plugin restricts are placed",
			spec: func(s *v1.PodSpec) {
				s.Volumes = []v1.Volume{
					vol(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}),
					vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}),
					vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}),
					vol(v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/x"}}),
				}
			}},
		// Claims are DynamicResources', no longer a placeholder's: without
		// an API the default profile finds none.
		{name: "resource claim",
			spec: func(s *v1.PodSpec) {
				s.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu")}}
			},
			want: refused(abi.PluginDynamicResources, `could not find ResourceClaim "default/gpu"`)},
		{name: "everything at once: the first PreFilter in profile order refuses",
			spec: func(s *v1.PodSpec) {
				s.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu")}}
				s.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
				s.Volumes = []v1.Volume{
					vol(v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}),
					vol(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "a"}}),
					vol(v1.VolumeSource{RBD: &v1.RBDVolumeSource{}}),
					vol(v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "b"}}),
				}
			},
			want: refused(abi.PluginVolumeRestrictions, `persistentvolumeclaim "a" not found`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := ft.MakePod()
			b.P.Name = "pod-a" // not the sequence's: the texts must not depend on the tests run before
			tc.spec(&b.P.Spec)
			ps, st := prepare(b.Info(), nil)
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Fatalf("Prepare status (-want, +got):\n%s", diff)
			}
			if (st == nil) == (ps == nil) {
				t.Errorf("Prepare = %v, %v: want exactly one of a state and a rejection", ps, st)
			}
		})
	}
}

// A placeholder's FailedScheduling message names what is missing once, as
// a PreFilter rejection, and the rejecting plugin counts as unschedulable
// (so a QueueingHint policy can register for it). No plugin of the default
// profile is a placeholder any more: a test one stands in.
func TestUnsupportedConstraintMessage(t *testing.T) {
	const reason = "wasmsched does not support priorityClassName x yet"
	ph := NewPlaceholder("Placeholder", reason, func(p *v1.Pod) bool { return p.Spec.PriorityClassName == "x" })
	p := MustProfile(Entry{Plugin: ph}, Entry{Plugin: pluginOf(abi.PluginNodeName)})
	b := ft.MakePod()
	b.P.Spec.PriorityClassName = "x"
	_, st := p.Prepare(b.Info(), nil)
	var d Diagnosis
	d.RecordPreFilter(st)
	want := "0/3 nodes are available: " + reason + "."
	if got := d.Message(3); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"Placeholder"}, d.UnschedulablePlugins()); diff != "" {
		t.Errorf("unschedulable plugins (-want, +got):\n%s", diff)
	}
	b.P.Spec.PriorityClassName = ""
	if _, st := p.Prepare(b.Info(), nil); st != nil {
		t.Errorf("Prepare of a pod without the constraint = %v, want nil", st)
	}
}
