package cycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/volume"
	"github.com/wasmsched/wasmsched/host/volume/volumetest"
)

// volumeGangEnv is an env with the default profile reading a fake API that
// holds a WaitForFirstConsumer class "local", a 1Gi local PV on each node
// of pvNodes (pv-<node>), and a claim claim-<member> per member; nodes n1
// and n2 with room for every member; and a PodGroup "g" of the members,
// each using its claim.
func volumeGangEnv(t *testing.T, pvNodes []string, members ...string) (*env, *fake.Clientset, framework.Handle) {
	t.Helper()
	objs := []runtime.Object{&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"},
		Provisioner: storagehelpers.NotSupportedProvisioner, VolumeBindingMode: &waitForFirstConsumer}}
	for _, n := range pvNodes {
		objs = append(objs, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-" + n, ResourceVersion: "1"},
			Spec: v1.PersistentVolumeSpec{StorageClassName: "local", AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/data"}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{n}}}}}}}},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		})
	}
	for _, m := range members {
		objs = append(objs, claim("claim-"+m))
	}
	client := volumetest.NewClientset(objs...)
	f := informers.NewSharedInformerFactory(client, 0)
	l := framework.Listers{
		PersistentVolumes:      f.Core().V1().PersistentVolumes().Lister(),
		PersistentVolumeClaims: f.Core().V1().PersistentVolumeClaims().Lister(),
		PVInformer:             f.Core().V1().PersistentVolumes().Informer(),
		PVCInformer:            f.Core().V1().PersistentVolumeClaims().Informer(),
		StorageClasses:         f.Storage().V1().StorageClasses().Lister(),
		CSINodes:               f.Storage().V1().CSINodes().Lister(),
		CSIDrivers:             f.Storage().V1().CSIDrivers().Lister(),
		CSIStorageCapacities:   f.Storage().V1().CSIStorageCapacities().Lister(),
		Client:                 client,
	}
	h := framework.NewHandle(framework.HandleOptions{Listers: l})
	e := newEnv(t, cycle.WithBuilt(framework.Built{Entries: handleEntries(h)}), cycle.WithPluginMetricsSample(10))
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	for _, n := range []string{"n1", "n2"} {
		e.addNodes(makeNode(n, "cpu", "4").label(v1.LabelHostname, n).obj())
	}
	e.q.AddPodGroup(makePodGroup("g", int32(len(members))))
	for _, m := range members {
		e.addPods(withClaim(member(m), "claim-"+m))
	}
	return e, client, h
}

var (
	waitForFirstConsumer = storagev1.VolumeBindingWaitForFirstConsumer
	localClass           = "local"
)

func claim(name string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &localClass,
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
}

func withClaim(b *podBuilder, claim string) *v1.Pod {
	p := b.obj()
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return p
}

// TestGroupMembersCompeteForOnePV: two members of a gang each need a PV and
// only one exists. The first member reserves it; the second, placed after
// that reservation, finds none; the gang misses its quorum, so the first
// member's reservation is undone and nothing is written to the API.
func TestGroupMembersCompeteForOnePV(t *testing.T) {
	e, client, h := volumeGangEnv(t, []string{"n1"}, "m1", "m2")

	e.scheduleNext()

	if got := e.api.bindCalls(); len(got) != 0 {
		t.Errorf("binds: %+v; want none", got)
	}
	const m2msg = "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
	var m2 string
	for _, c := range e.api.conditions() {
		if c.Pod == "default/m2" {
			m2 = c.Message
		}
	}
	if m2 != m2msg {
		t.Errorf("m2's condition = %q, want %q (pv-n1 reserved by m1 before m2 was placed)", m2, m2msg)
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(context.Background(), "pv-n1", metav1.GetOptions{})
	if err != nil || pv.Spec.ClaimRef != nil {
		t.Errorf("pv-n1 in the API = %v, %v; want it unwritten", pv.Spec.ClaimRef, err)
	}
	// Unreserved: a third claim finds pv-n1 free in the shared caches.
	caches, err := h.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().PersistentVolumeClaims("default").Create(context.Background(), claim("claim-x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := volume.New(caches, volume.Options{Classes: h.Listers().StorageClasses})
	x := withClaim(makePod("x"), "claim-x")
	var pc *volume.PodClaims
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if pc, err = b.Claims(x); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	found, reasons, err := b.FindPodVolumes(x, pc, makeNode("n1").label(v1.LabelHostname, "n1").obj())
	if err != nil || len(reasons) > 0 || len(found.Static) != 1 {
		t.Errorf("another claim on n1 after the gang failed: reasons %v, error %v; want pv-n1 free", reasons, err)
	}
}

// TestGroupMembersBindTheirPVs: with a PV on each node, both members are
// placed, each on the node of a different PV; PreBind writes each PV's
// claimRef and waits for the PV controller (played here) to bind the
// claims; then the members are bound.
func TestGroupMembersBindTheirPVs(t *testing.T) {
	e, client, _ := volumeGangEnv(t, []string{"n1", "n2"}, "m1", "m2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go pvController(ctx, t, client)

	e.scheduleNext()

	bound := e.api.boundTo()
	if len(bound) != 2 || bound["default/m1"] == bound["default/m2"] {
		t.Fatalf("bound = %v, want m1 and m2 on different nodes", bound)
	}
	got := map[string]string{}
	for _, n := range []string{"n1", "n2"} {
		pv, err := client.CoreV1().PersistentVolumes().Get(ctx, "pv-"+n, metav1.GetOptions{})
		if err != nil || pv.Spec.ClaimRef == nil {
			t.Fatalf("pv-%s = %v, %v; want a claimRef", n, pv, err)
		}
		got[pv.Spec.ClaimRef.Name] = n
	}
	want := map[string]string{"claim-m1": bound["default/m1"], "claim-m2": bound["default/m2"]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claim -> node of its PV (-want, +got):\n%s", diff)
	}
}

// pvController binds each claim a PV's claimRef names, as the PV
// controller completes a binding the scheduler started.
func pvController(ctx context.Context, t *testing.T, client *fake.Clientset) {
	done := map[string]bool{}
	for ctx.Err() == nil {
		pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, pv := range pvs.Items {
			ref := pv.Spec.ClaimRef
			if ref == nil || done[ref.Name] {
				continue
			}
			pvc, err := client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			pvc = pvc.DeepCopy()
			pvc.Spec.VolumeName = pv.Name
			metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
			if _, err := client.CoreV1().PersistentVolumeClaims(ref.Namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
				t.Errorf("bind claim %s: %v", ref.Name, err)
				continue
			}
			done[ref.Name] = true
		}
		time.Sleep(5 * time.Millisecond)
	}
}
