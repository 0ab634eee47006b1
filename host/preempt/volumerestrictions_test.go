package preempt

import (
	"context"
	"testing"

	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/volumerestrictions"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// A ReadWriteOncePod claim used by a lower-priority pod is a preemption
// reason (VolumeRestrictions rejects every node Unschedulable): the dry
// runs remove the user through the plugin's PodUpdater, so only the user's
// node is a candidate and the user is the victim. VolumeBinding's
// placeholder, which refuses claims, is disabled, and VolumeZone, which
// would refuse these unbound claims without a class.
func TestPodReadWriteOncePodVictim(t *testing.T) {
	claims := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, name := range []string{"data", "logs"} {
		mode := v1.ReadWriteOncePod
		if name == "logs" {
			mode = v1.ReadWriteMany
		}
		if err := claims.Add(&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{mode}}}); err != nil {
			t.Fatal(err)
		}
	}
	l := framework.Listers{PersistentVolumeClaims: corelisters.NewPersistentVolumeClaimLister(claims)}
	b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{Listers: l}), framework.Config{Plugins: &kschedv1.Plugins{MultiPoint: kschedv1.PluginSet{
		Disabled: []kschedv1.Plugin{{Name: "VolumeBinding"}, {Name: "VolumeZone"}}}}})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	profile, err := framework.NewProfile(b.Entries...)
	if err != nil {
		t.Fatalf("NewProfile: %v", err)
	}
	withClaim := func(p *v1.Pod, claim string) *v1.Pod {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: claim, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		return p
	}
	snap := snapshot([]*v1.Node{makeNode("node1", "4"), makeNode("node2", "4")},
		withClaim(makePod("user").node("node2").priority(lowPriority).cpu("1").obj(), "data"),
		withClaim(makePod("other").node("node2").priority(lowPriority).cpu("1").obj(), "logs"),
		withClaim(makePod("bystander").node("node1").priority(lowPriority).cpu("1").obj(), "logs"))
	preemptor := withClaim(makePod("p").priority(highPriority).cpu("1").obj(), "data")

	ps, st := profile.Prepare(cache.NewPodInfo(preemptor), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	var d framework.Diagnosis
	if feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d); len(feasible) != 0 {
		t.Fatalf("the pod fits %s while another pod uses its ReadWriteOncePod claim", feasible[0].Name())
	}
	want := "0/2 nodes are available: 2 " + volumerestrictions.ReasonReadWriteOncePodConflict + "."
	if got := d.Message(2); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	res, found, err := Pod(context.Background(), preemptor, Input{Snapshot: snap, Plugins: profile, Diagnosis: &d})
	if err != nil || !found {
		t.Fatalf("Pod = %+v, %v, %v: want a placement", res, found, err)
	}
	if diff := cmp.Diff([]string{"user"}, names(res.Victims)); diff != "" || res.Node != "node2" {
		t.Errorf("Pod: node %q (want node2), victims (-want, +got):\n%s", res.Node, diff)
	}
}
