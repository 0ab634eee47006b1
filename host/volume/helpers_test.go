package volume

import (
	"context"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/host/volume/volumetest"
)

// The test cluster of upstream's binder_test.go: classes, nodes, claims and
// PVs in namespace testns, node label nodeKey.
const (
	ns             = "testns"
	nodeKey        = "nodeKey"
	provisioner    = "test-provisioner"
	waitClass      = "waitClass"
	immediateClass = "immediateClass"
	provClass      = "waitClassWithProvisioner"
	topoClass      = "topoMismatchClass"
)

func testClasses() []*storagev1.StorageClass {
	wait, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	topo := func(values ...string) []v1.TopologySelectorTerm {
		return []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: nodeKey, Values: values}}}}
	}
	return []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: provClass}, VolumeBindingMode: &wait, Provisioner: provisioner,
			AllowedTopologies: topo("node1", "reference-value")},
		{ObjectMeta: metav1.ObjectMeta{Name: immediateClass}, VolumeBindingMode: &imm},
		{ObjectMeta: metav1.ObjectMeta{Name: waitClass}, VolumeBindingMode: &wait, Provisioner: storagehelpers.NotSupportedProvisioner},
		{ObjectMeta: metav1.ObjectMeta{Name: topoClass}, VolumeBindingMode: &wait, Provisioner: provisioner,
			AllowedTopologies: topo("reference-value")},
	}
}

func testNode(name string, labels ...string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels[labels[i]] = labels[i+1]
	}
	return n
}

var node1 = testNode("node1", nodeKey, "node1")

// Claim states of makePVC.
const (
	unbound = iota
	prebound
	bound
	selected // selected-node set to node1
)

func makePVC(name, size string, state int, pvName, class string) *v1.PersistentVolumeClaim {
	fs := v1.PersistentVolumeFilesystem
	pvc := &v1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
			StorageClassName: ptr.To(class),
			VolumeMode:       &fs,
		},
	}
	switch state {
	case selected:
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnSelectedNode, "node1")
	case bound:
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
		pvc.Spec.VolumeName = pvName
	case prebound:
		pvc.Spec.VolumeName = pvName
	}
	return pvc
}

// makePV is a PV of class with node affinity nodeKey=node (none for ""),
// optionally bound to claim.
func makePV(name, node, capacity string, claim *v1.PersistentVolumeClaim, class string) *v1.PersistentVolume {
	fs := v1.PersistentVolumeFilesystem
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(capacity)},
			StorageClassName: class,
			VolumeMode:       &fs,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if node != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: nodeKey, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	}
	if claim != nil {
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Name: claim.Name,
			Namespace: claim.Namespace, UID: claim.UID, ResourceVersion: claim.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagehelpers.AnnBoundByController, "yes")
	}
	return pv
}

func makePod(name string, claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: "node1"}}
	for i, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "vol" + strconv.Itoa(i),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func makeCapacity(name, class string, node *v1.Node, capacity, maxSize string) *storagev1.CSIStorageCapacity {
	c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StorageClassName: class,
		NodeTopology: &metav1.LabelSelector{}}
	if node != nil {
		c.NodeTopology.MatchLabels = map[string]string{nodeKey: node.Labels[nodeKey]}
	}
	if capacity != "" {
		c.Capacity = ptr.To(resource.MustParse(capacity))
	}
	if maxSize != "" {
		c.MaximumVolumeSize = ptr.To(resource.MustParse(maxSize))
	}
	return c
}

func makeDriver(name string, capacity bool) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{StorageCapacity: &capacity}}
}

// env is a binder over a fake clientset's informers. The clientset keeps
// resourceVersions as the API server does for PVs and claims: an update
// must carry the stored version (else Conflict) and bumps it.
type env struct {
	client *fake.Clientset
	binder *Binder
	caches *Caches
}

func newEnv(t *testing.T, opts Options, objs ...runtime.Object) *env {
	t.Helper()
	client := volumetest.NewClientset()
	for _, c := range testClasses() {
		objs = append(objs, c)
	}
	for _, o := range objs {
		if err := client.Tracker().Add(o); err != nil {
			t.Fatalf("add %T: %v", o, err)
		}
	}
	f := informers.NewSharedInformerFactory(client, 0)
	pvInf, pvcInf := f.Core().V1().PersistentVolumes().Informer(), f.Core().V1().PersistentVolumeClaims().Informer()
	caches, err := NewCaches(pvInf, pvcInf)
	if err != nil {
		t.Fatal(err)
	}
	opts.Client = client
	opts.Classes = f.Storage().V1().StorageClasses().Lister()
	opts.CSINodes = f.Storage().V1().CSINodes().Lister()
	opts.CSIDrivers = f.Storage().V1().CSIDrivers().Lister()
	opts.Capacities = f.Storage().V1().CSIStorageCapacities().Lister()
	if opts.BindTimeout == 0 {
		opts.BindTimeout = 30 * time.Second
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); f.Shutdown() })
	f.Start(stop)
	for typ, ok := range f.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	return &env{client: client, binder: New(caches, opts), caches: caches}
}

// waitFor polls cond until it holds (the informers are asynchronous),
// failing the test after 30 s. Not for other goroutines than the test's:
// they use poll.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// poll reports whether cond came to hold within 30 s.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// updatePVC changes the claim name through the client (with its stored
// version) and waits until the informer has it. It may run on another
// goroutine than the test's: it reports with t.Error.
func (e *env) updatePVC(t *testing.T, change func(*v1.PersistentVolumeClaim), name string) {
	t.Helper()
	ctx := context.Background()
	cur, err := e.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	cur = cur.DeepCopy()
	change(cur)
	got, err := e.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	if !poll(func() bool {
		c, err := e.caches.pvcs.GetAPIObj(ns + "/" + name)
		return err == nil && c.ResourceVersion == got.ResourceVersion
	}) {
		t.Error("the claim update did not reach the informer")
	}
}
