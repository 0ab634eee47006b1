package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/component-helpers/storage/volume"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
)

// TestVolumeHintsMoveWhatFits is a differential test of the built-in hints
// module's storage events (ABI minor 1) against the native filters of the
// default profile (the in-tree registry's over fake listers).
//
// Each trial generates a small cluster (nodes in two zones, CSINodes with
// per-driver limits, a CSIDriver with or without capacity tracking,
// StorageClasses Immediate and WaitForFirstConsumer, CSIStorageCapacities,
// local and CSI PersistentVolumes, claims bound or not, VolumeAttachments,
// bound pods using claims) and a pending pod with claims (some missing,
// ReadWriteOncePod, generic ephemeral). If the filters reject the pod on
// every node, one event is applied (a claim or volume added or updated, a
// class added or its topology changed, a CSINode added or changed, the
// driver's capacity tracking turned off, a capacity added or changed, an
// attachment deleted, a node added or relabelled, a bound pod deleted),
// built into an abi.Event as host/cluster builds it, and the hints module is
// asked about the pod with the plugins that rejected it. If the filters now
// accept the pod on some node, the hint must be Queue: a Skip is a false
// negative and fails the test. A Queue for a pod still rejected everywhere
// is a false positive, which KEP-4247 allows; their rate is logged.
func TestVolumeHintsMoveWhatFits(t *testing.T) {
	trials := 3000
	if raceEnabled {
		trials = 600
	}
	// About a third of the transitions the generator makes with the
	// plugins of v1.37.1.
	hintsDiff(t, trials, trials/150, [2]uint64{15, 4247}, func(rng *rand.Rand, i int) diffWorld {
		return newVolumeWorld(rng, i)
	})
}

const (
	volNS     = "ns"
	volDriver = "csi.example.com"
	volWFFC   = "wffc"
	volImm    = "imm"
)

// volumeWorld is one trial's cluster: the objects behind the fake listers,
// the cache's nodes and bound pods, and the pending pod.
type volumeWorld struct {
	rng     *rand.Rand
	idx     map[string]toolscache.Indexer // by kind
	nodes   []*v1.Node
	bound   []*v1.Pod
	pod     *v1.Pod
	claims  []string // claim names the generator draws from
	trialID int
}

func newIndexer() toolscache.Indexer {
	return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
}

func (w *volumeWorld) chance(p float64) bool { return w.rng.Float64() < p }
func (w *volumeWorld) pick(n int) int        { return w.rng.IntN(n) }

// listers returns the world's listers. PersistentVolumes and claims come
// from informers (VolumeBinding's assume caches read them), started on a
// fake clientset holding the world's volumes and claims; stop ends them.
func (w *volumeWorld) listers(t *testing.T) (l framework.Listers, stop func()) {
	t.Helper()
	var objs []runtime.Object
	for _, kind := range []string{"pv", "pvc"} {
		for _, o := range w.idx[kind].List() {
			objs = append(objs, o.(runtime.Object))
		}
	}
	f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	pvs, pvcs := f.Core().V1().PersistentVolumes(), f.Core().V1().PersistentVolumeClaims()
	l = framework.Listers{
		PersistentVolumes:      pvs.Lister(),
		PersistentVolumeClaims: pvcs.Lister(),
		PVInformer:             pvs.Informer(),
		PVCInformer:            pvcs.Informer(),
		StorageClasses:         storagelisters.NewStorageClassLister(w.idx["sc"]),
		CSINodes:               storagelisters.NewCSINodeLister(w.idx["csinode"]),
		CSIDrivers:             storagelisters.NewCSIDriverLister(w.idx["csidriver"]),
		CSIStorageCapacities:   storagelisters.NewCSIStorageCapacityLister(w.idx["capacity"]),
		VolumeAttachments:      storagelisters.NewVolumeAttachmentLister(w.idx["va"]),
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	return l, func() { cancel(); f.Shutdown() }
}

func (w *volumeWorld) add(kind string, obj any) {
	if err := w.idx[kind].Add(obj); err != nil {
		panic(err)
	}
}

func gi(n int64) resource.Quantity { return *resource.NewQuantity(n<<30, resource.BinarySI) }

func newVolumeWorld(rng *rand.Rand, trial int) *volumeWorld {
	w := &volumeWorld{rng: rng, idx: map[string]toolscache.Indexer{}, trialID: trial}
	for _, k := range []string{"pv", "pvc", "sc", "csinode", "csidriver", "capacity", "va"} {
		w.idx[k] = newIndexer()
	}
	for i := range 2 + w.pick(3) {
		w.nodes = append(w.nodes, w.newNode(fmt.Sprintf("n%d", i)))
	}
	for _, n := range w.nodes {
		if w.chance(0.8) {
			w.add("csinode", w.newCSINode(n.Name))
		}
	}
	w.add("csidriver", &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: volDriver},
		Spec: storagev1.CSIDriverSpec{StorageCapacity: new(w.chance(0.5))}})
	if w.chance(0.85) {
		w.add("sc", w.newClass(volWFFC))
	}
	if w.chance(0.85) {
		w.add("sc", w.newClass(volImm))
	}
	for i := range w.pick(3) {
		w.add("capacity", w.newCapacity(fmt.Sprintf("cap%d", i)))
	}
	for i := range 6 {
		w.claims = append(w.claims, fmt.Sprintf("c%d", i))
	}
	for i := range w.pick(5) {
		w.add("pv", w.newPV(fmt.Sprintf("pv%d", i)))
	}
	for _, name := range w.claims {
		if w.chance(0.85) {
			w.add("pvc", w.newPVC(name))
		}
	}
	for i := range w.pick(4) {
		n := w.nodes[w.pick(len(w.nodes))].Name
		w.add("va", &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("va%d", i)},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: volDriver, NodeName: n,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new(fmt.Sprintf("pv%d", w.pick(5)))}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}})
	}
	for i := range w.pick(3) {
		p := w.newPod(fmt.Sprintf("bound%d", i))
		p.Spec.NodeName = w.nodes[w.pick(len(w.nodes))].Name
		w.bound = append(w.bound, p)
	}
	w.pod = w.newPod("pending")
	for _, v := range w.pod.Spec.Volumes {
		if v.Ephemeral != nil && w.chance(0.6) {
			w.add("pvc", w.ephemeralClaim(w.pod, v.Name))
		}
	}
	return w
}

func (w *volumeWorld) newNode(name string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name), Labels: map[string]string{
			v1.LabelHostname: name, v1.LabelTopologyZone: []string{"a", "b"}[w.pick(2)],
		}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("8"), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

func (w *volumeWorld) newCSINode(node string) *storagev1.CSINode {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if w.chance(0.85) {
		d := storagev1.CSINodeDriver{Name: volDriver, NodeID: node}
		if w.chance(0.7) {
			d.Allocatable = &storagev1.VolumeNodeResources{Count: new(int32(w.pick(3)))}
		}
		n.Spec.Drivers = append(n.Spec.Drivers, d)
	}
	return n
}

func (w *volumeWorld) newClass(name string) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingImmediate
	prov := "kubernetes.io/no-provisioner"
	if name == volWFFC {
		mode = storagev1.VolumeBindingWaitForFirstConsumer
		if w.chance(0.5) {
			prov = volDriver
		}
	}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: prov, VolumeBindingMode: &mode}
	if w.chance(0.3) {
		sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: []string{[]string{"a", "b"}[w.pick(2)]}}}}}
	}
	return sc
}

func (w *volumeWorld) newCapacity(name string) *storagev1.CSIStorageCapacity {
	c := &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{Namespace: volNS, Name: name},
		StorageClassName: volWFFC,
		NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: []string{"a", "b"}[w.pick(2)]}},
	}
	if w.chance(0.9) {
		c.Capacity = new(gi(int64(w.pick(8))))
	}
	if w.chance(0.2) {
		c.MaximumVolumeSize = new(gi(int64(w.pick(8))))
	}
	return c
}

func (w *volumeWorld) newPV(name string) *v1.PersistentVolume {
	class := []string{volWFFC, volWFFC, volImm, ""}[w.pick(4)]
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("pv-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: gi(int64(1 + w.pick(6)))},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if w.chance(0.5) {
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: volDriver, VolumeHandle: name}
	} else {
		pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/" + name}
	}
	if pv.Spec.Local != nil || w.chance(0.5) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn,
				Values: []string{w.nodes[w.pick(len(w.nodes))].Name}}}}}}}
	}
	if w.chance(0.3) {
		pv.Labels = map[string]string{v1.LabelTopologyZone: []string{"a", "b"}[w.pick(2)]}
	}
	return pv
}

func (w *volumeWorld) newPVC(name string) *v1.PersistentVolumeClaim {
	class := []string{volWFFC, volWFFC, volWFFC, volWFFC, volWFFC, volImm, ""}[w.pick(7)]
	mode := v1.ReadWriteOnce
	if w.chance(0.3) {
		mode = v1.ReadWriteOncePod
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: volNS, Name: name, UID: types.UID("pvc-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{mode},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gi(int64(1 + w.pick(4)))}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if w.chance(0.4) {
		w.bindClaim(pvc)
	}
	return pvc
}

// bindClaim binds pvc to a volume of the world (claimRef and volumeName),
// taking one from the listers or making one.
func (w *volumeWorld) bindClaim(pvc *v1.PersistentVolumeClaim) {
	var pv *v1.PersistentVolume
	if objs := w.idx["pv"].List(); len(objs) > 0 && w.chance(0.5) {
		pv = objs[w.pick(len(objs))].(*v1.PersistentVolume).DeepCopy()
	}
	if pv == nil || pv.Spec.ClaimRef != nil {
		pv = w.newPV(fmt.Sprintf("pv-for-%s-%d", pvc.Name, w.pick(1000)))
	}
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID}
	pv.Status.Phase = v1.VolumeBound
	if pvc.Spec.StorageClassName != nil {
		pv.Spec.StorageClassName = *pvc.Spec.StorageClassName
	}
	if err := w.idx["pv"].Update(pv); err != nil {
		panic(err)
	}
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, volume.AnnBindCompleted, "yes")
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.Capacity = pv.Spec.Capacity
	pvc.Status.AccessModes = pvc.Spec.AccessModes
}

func (w *volumeWorld) ephemeralClaim(pod *v1.Pod, vol string) *v1.PersistentVolumeClaim {
	class := volWFFC
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: volNS, Name: pod.Name + "-" + vol, UID: types.UID("pvc-eph-" + vol),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: new(true)}}},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gi(1)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

func (w *volumeWorld) newPod(name string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: volNS, Name: name, UID: types.UID(fmt.Sprintf("%s-%d", name, w.trialID))},
		Spec: v1.PodSpec{SchedulerName: "default-scheduler", Containers: []v1.Container{{Name: "c", Image: "i",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}}},
	}
	n := 1
	if w.chance(0.25) {
		n = 2
	}
	for i := range n {
		claim := w.claims[w.pick(len(w.claims))]
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", i),
			VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
	if w.chance(0.2) {
		class := volWFFC
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &class,
				Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: gi(1)}},
			}}}}})
	}
	return p
}

// filter runs the default profile's filters for the pod over every node:
// whether a node accepts it, and the plugins that rejected it.
func (w *volumeWorld) filter(t *testing.T) (fits bool, rejectors podview.Plugins, message string) {
	t.Helper()
	c := cache.New()
	for _, n := range w.nodes {
		c.AddNode(n)
	}
	for _, p := range w.bound {
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	snap := cache.NewSnapshot()
	if err := c.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	l, stop := w.listers(t)
	defer stop()
	prof := defaultProfileOver(t, framework.NewHandle(framework.HandleOptions{Listers: l}))
	var d framework.Diagnosis
	ps, st := prof.Prepare(cache.NewPodInfo(w.pod), snap)
	if st != nil {
		if st.Code == framework.Error {
			t.Fatalf("Prepare: %v", st.Err)
		}
		d.RecordPreFilter(st)
	} else {
		feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d)
		if err := d.Err(); err != nil {
			t.Fatalf("FindFeasible: %v", err)
		}
		if len(feasible) > 0 {
			return true, podview.Plugins{}, ""
		}
	}
	return false, podview.Plugins{Unschedulable: d.UnschedulablePlugins(), Pending: d.PendingPlugins()}, d.Message(len(w.nodes))
}

// podClaim is the claim of one of the pending pod's volumes.
func (w *volumeWorld) podClaim() string {
	v := w.pod.Spec.Volumes[w.pick(len(w.pod.Spec.Volumes))]
	if v.Ephemeral != nil {
		return w.pod.Name + "-" + v.Name
	}
	return v.PersistentVolumeClaim.ClaimName
}

// event applies one random change to the world and returns its event as
// host/cluster builds it, and a label; ok is false when the change was a
// no-op (nothing to change).
func (w *volumeWorld) event() (ev abi.Event, label string, ok bool) {
	store := func(kind string, act abi.ActionType, old, obj any) (abi.Event, string, bool) {
		switch {
		case old == nil:
			w.add(kind, obj)
		case obj == nil:
			if err := w.idx[kind].Delete(old); err != nil {
				panic(err)
			}
		default:
			if err := w.idx[kind].Update(obj); err != nil {
				panic(err)
			}
			if act = podview.StorageUpdateActions(old, obj); act == 0 {
				return abi.Event{}, "", false
			}
		}
		e, ok := podview.StorageEvent(act, old, obj)
		if !ok {
			panic(fmt.Sprintf("no storage event for %T", obj))
		}
		return e, e.Resource.String() + act.String(), true
	}
	get := func(kind string) (any, bool) {
		objs := w.idx[kind].List()
		if len(objs) == 0 {
			return nil, false
		}
		return objs[w.pick(len(objs))], true
	}
	switch w.pick(13) {
	case 0: // a claim the pod (or another) uses is created
		name := w.claims[w.pick(len(w.claims))]
		if w.chance(0.7) {
			name = w.podClaim()
		}
		if _, exists, _ := w.idx["pvc"].GetByKey(volNS + "/" + name); exists {
			return abi.Event{}, "", false
		}
		return store("pvc", abi.ActionAdd, nil, w.newPVC(name))
	case 1: // a claim is bound, or given a selected node
		o, ok := get("pvc")
		if mine, exists, _ := w.idx["pvc"].GetByKey(volNS + "/" + w.podClaim()); exists && w.chance(0.7) {
			o, ok = mine, true
		}
		if !ok {
			return abi.Event{}, "", false
		}
		old := o.(*v1.PersistentVolumeClaim)
		c := old.DeepCopy()
		if c.Spec.VolumeName == "" && w.chance(0.85) {
			w.bindClaim(c)
		} else {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[volume.AnnSelectedNode] = w.nodes[w.pick(len(w.nodes))].Name
		}
		return store("pvc", abi.ActionUpdate, old, c)
	case 2: // a volume is created
		return store("pv", abi.ActionAdd, nil, w.newPV(fmt.Sprintf("pv-new-%d", w.pick(1000))))
	case 3: // a volume changes: labels, size, phase, node affinity
		o, ok := get("pv")
		if !ok {
			return abi.Event{}, "", false
		}
		old := o.(*v1.PersistentVolume)
		c := old.DeepCopy()
		switch w.pick(4) {
		case 0:
			c.Labels = map[string]string{v1.LabelTopologyZone: []string{"a", "b"}[w.pick(2)]}
		case 1:
			c.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: gi(int64(1 + w.pick(6)))}
		case 2:
			c.Spec.ClaimRef, c.Status.Phase = nil, v1.VolumeAvailable
		default:
			c.Spec.NodeAffinity = nil
		}
		return store("pv", abi.ActionUpdate, old, c)
	case 4: // a class is created
		name := []string{volWFFC, volImm}[w.pick(2)]
		if _, exists, _ := w.idx["sc"].GetByKey(name); exists {
			return abi.Event{}, "", false
		}
		return store("sc", abi.ActionAdd, nil, w.newClass(name))
	case 5: // a class's allowed topologies change
		o, ok := get("sc")
		if !ok {
			return abi.Event{}, "", false
		}
		old := o.(*storagev1.StorageClass)
		c := old.DeepCopy()
		c.AllowedTopologies = w.newClass(old.Name).AllowedTopologies
		return store("sc", abi.ActionUpdate, old, c)
	case 6: // a CSINode is created or changes
		n := w.nodes[w.pick(len(w.nodes))].Name
		o, exists, _ := w.idx["csinode"].GetByKey(n)
		if !exists {
			return store("csinode", abi.ActionAdd, nil, w.newCSINode(n))
		}
		return store("csinode", abi.ActionUpdate, o, w.newCSINode(n))
	case 7: // the driver stops (or starts) tracking capacity
		o, _ := get("csidriver")
		old := o.(*storagev1.CSIDriver)
		c := old.DeepCopy()
		c.Spec.StorageCapacity = new(!*old.Spec.StorageCapacity)
		return store("csidriver", abi.ActionUpdate, old, c)
	case 8: // a capacity is created or changes
		if o, ok := get("capacity"); ok && w.chance(0.6) {
			old := o.(*storagev1.CSIStorageCapacity)
			c := w.newCapacity(old.Name)
			c.NodeTopology = old.NodeTopology
			return store("capacity", abi.ActionUpdate, old, c)
		}
		return store("capacity", abi.ActionAdd, nil, w.newCapacity(fmt.Sprintf("cap-new-%d", w.pick(1000))))
	case 9: // an attachment is deleted
		o, ok := get("va")
		if !ok {
			return abi.Event{}, "", false
		}
		return store("va", abi.ActionDelete, o, nil)
	case 10: // a node is added
		n := w.newNode(fmt.Sprintf("n%d", len(w.nodes)))
		w.nodes = append(w.nodes, n)
		return podview.NodeEvent(abi.ActionAdd, nil, n, nil, 0), "NodeAdd", true
	case 11: // a node's zone changes
		i := w.pick(len(w.nodes))
		old, n := w.nodes[i], w.nodes[i].DeepCopy()
		n.Labels[v1.LabelTopologyZone] = map[string]string{"a": "b", "b": "a"}[old.Labels[v1.LabelTopologyZone]]
		w.nodes[i] = n
		return podview.NodeEvent(podview.NodeUpdateActions(old, n), old, n, nil, 0), "NodeUpdateNodeLabel", true
	default: // a bound pod is deleted
		if len(w.bound) == 0 {
			return abi.Event{}, "", false
		}
		i := w.pick(len(w.bound))
		p := w.bound[i]
		w.bound = append(w.bound[:i], w.bound[i+1:]...)
		return podview.PodEvent(abi.ActionDelete, p, nil, nil), "AssignedPodDelete", true
	}
}

func (w *volumeWorld) pending() *v1.Pod { return w.pod }

func (w *volumeWorld) describe() string { return fmt.Sprintf("pod volumes: %+v", w.pod.Spec.Volumes) }

// TestStorageEventsMovePods: the queue with the built-in hints module moves
// a pod rejected by a volume plugin on a storage event about its claim and
// leaves the others; with the native default every such pod moves. The
// events are labelled as upstream's in scheduler_queue_incoming_pods_total.
func TestStorageEventsMovePods(t *testing.T) {
	m := loadBuiltin(t, abi.SlotQueueingHint)
	hint, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, newSlotRecorder(t))
	if err != nil {
		t.Fatal(err)
	}
	withClaim := func(name, claim string) *v1.Pod {
		p := makePod(name).obj()
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		return p
	}
	claimAdded, ok := podview.StorageEvent(abi.ActionAdd, nil, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"}})
	if !ok {
		t.Fatal("no event for a claim")
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want map[string]string
	}{
		{"hints.wasm", []Option{WithQueueingHint(hint)}, map[string]string{"uses": "backoff", "other": "unschedulable", "fit": "unschedulable"}},
		{"AlwaysQueue", nil, map[string]string{"uses": "backoff", "other": "backoff", "fit": "backoff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			e.failOnce(t, withClaim("uses", "data"), rejectedBy(abi.PluginVolumeBinding))
			e.failOnce(t, withClaim("other", "logs"), rejectedBy(abi.PluginVolumeBinding))
			e.failOnce(t, withClaim("fit", "data"), rejectedBy(abi.PluginNodeResourcesFit))
			e.q.MoveOnEvent(claimAdded)
			for name, want := range tc.want {
				if got := e.where(types.UID("uid-" + name)); got != want {
					t.Errorf("%s is %s, want %s", name, got, want)
				}
			}
			moved := 0
			for _, w := range tc.want {
				if w == "backoff" {
					moved++
				}
			}
			if got := e.rec.incomingOf("backoff", "PersistentVolumeClaimAdd"); got != moved {
				t.Errorf("incoming pods labelled PersistentVolumeClaimAdd: %d, want %d", got, moved)
			}
			e.check(t)
		})
	}
	if got := eventLabel(abi.ResourceCSIStorageCapacity, abi.ActionUpdateOther); got != "storage.k8s.io/CSIStorageCapacityUpdate" {
		t.Errorf("label %q, want upstream's storage.k8s.io/CSIStorageCapacityUpdate", got)
	}
}
