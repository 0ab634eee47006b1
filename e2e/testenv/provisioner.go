package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/storage/volume"
)

// ProvisionerName is the provisioner of the StorageClasses the test
// provisioner serves. It is neither kubernetes.io/no-provisioner nor an
// in-tree plugin, and no CSIDriver object names it, so the scheduler treats
// it as an external provisioner without capacity tracking and
// kube-controller-manager's PV binder waits for an external provisioner to
// create the volume.
const ProvisionerName = "wasmsched.test/local"

// ProvisionerOptions configures StartProvisioner.
type ProvisionerOptions struct {
	// Name is the provisioner name the StorageClasses carry; empty means
	// ProvisionerName.
	Name string
	// OnError receives every failure to provision or delete a volume (each
	// is retried a few times); nil means none is reported.
	OnError func(error)
}

// Provisioner stands in for a CSI external-provisioner of node-local
// volumes, in the process that starts it: for each claim of one of its
// StorageClasses that the scheduler gave a node (the
// volume.kubernetes.io/selected-node annotation, set at pre-bind for
// WaitForFirstConsumer claims) and that is not bound yet, it creates a
// PersistentVolume on that node, pre-bound to the claim, which
// kube-controller-manager's PV binder then binds. Like the real one it
// deletes the Released volumes it provisioned whose reclaim policy is
// Delete. It provisions nothing without selected-node: an Immediate claim of
// its class stays pending, as it would for a node-local driver.
type Provisioner struct {
	name    string
	env     *Env
	onError func(error)
	queue   workqueue.TypedRateLimitingInterface[string]
	claims  cacheLister
	classes cacheLister
	pvs     cacheLister
	cancel  context.CancelFunc
	done    chan struct{}
	stop    sync.Once

	mu          sync.Mutex
	provisioned []string
}

// cacheLister reads an informer's store by key.
type cacheLister interface {
	GetByKey(key string) (any, bool, error)
}

// Work item kinds: a claim to provision for, or a volume to delete.
const (
	itemClaim  = "claim/"
	itemVolume = "volume/"
)

// provisionRetries is how often a failed item is retried before OnError
// hears of it and the item is dropped.
const provisionRetries = 5

// StartProvisioner starts the test provisioner against the Env and returns
// once its informers have synced. It runs until Stop or until ctx ends.
func (e *Env) StartProvisioner(ctx context.Context, o ProvisionerOptions) (*Provisioner, error) {
	if o.Name == "" {
		o.Name = ProvisionerName
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Provisioner{
		name: o.Name, env: e, onError: o.OnError, cancel: cancel, done: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 2*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "test-provisioner"}),
	}
	f := informers.NewSharedInformerFactory(e.Client, 0)
	claimInf := f.Core().V1().PersistentVolumeClaims().Informer()
	classInf := f.Storage().V1().StorageClasses().Informer()
	pvInf := f.Core().V1().PersistentVolumes().Informer()
	p.claims, p.classes, p.pvs = claimInf.GetStore(), classInf.GetStore(), pvInf.GetStore()
	enqueue := func(prefix string) cache.ResourceEventHandlerFuncs {
		add := func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				p.queue.Add(prefix + key)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }}
	}
	for inf, h := range map[cache.SharedIndexInformer]cache.ResourceEventHandlerFuncs{
		claimInf: enqueue(itemClaim),
		pvInf:    enqueue(itemVolume),
		// A class created after its claims: look at every claim again.
		classInf: {AddFunc: func(any) {
			for _, key := range claimInf.GetStore().ListKeys() {
				p.queue.Add(itemClaim + key)
			}
		}},
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			cancel()
			return nil, fmt.Errorf("test provisioner: %w", err)
		}
	}
	f.Start(ctx.Done())
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if !cache.WaitForCacheSync(sctx.Done(), claimInf.HasSynced, classInf.HasSynced, pvInf.HasSynced) {
		cancel()
		p.queue.ShutDown()
		f.Shutdown()
		return nil, errors.New("test provisioner: the informers for claims, classes and volumes did not sync within 30 s")
	}
	go func() {
		defer close(p.done)
		defer f.Shutdown()
		go func() { <-ctx.Done(); p.queue.ShutDown() }()
		for p.next(ctx) {
		}
	}()
	return p, nil
}

// Stop stops the provisioner and waits for its worker. It is idempotent.
func (p *Provisioner) Stop() {
	p.stop.Do(func() {
		p.cancel()
		<-p.done
	})
}

// Provisioned returns the names of the volumes created so far, in order.
func (p *Provisioner) Provisioned() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.provisioned...)
}

// next handles one work item; it returns false once the queue is shut down.
func (p *Provisioner) next(ctx context.Context) bool {
	item, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(item)
	var err error
	if key, ok := strings.CutPrefix(item, itemClaim); ok {
		err = p.provision(ctx, key)
	} else if key, ok := strings.CutPrefix(item, itemVolume); ok {
		err = p.reclaim(ctx, key)
	}
	switch {
	case err == nil || ctx.Err() != nil:
		p.queue.Forget(item)
	case p.queue.NumRequeues(item) < provisionRetries:
		p.queue.AddRateLimited(item)
	default:
		p.queue.Forget(item)
		if p.onError != nil {
			p.onError(fmt.Errorf("test provisioner %s: %s (gave up after %d retries): %w", p.name, item, provisionRetries, err))
		}
	}
	return true
}

// volumeName is the name of the volume provisioned for a claim, as the CSI
// external-provisioner names it.
func volumeName(claim *corev1.PersistentVolumeClaim) string {
	return "pvc-" + string(claim.UID)
}

// provision creates the volume for the claim key if the claim needs one from
// this provisioner on its selected node.
func (p *Provisioner) provision(ctx context.Context, key string) error {
	obj, ok, err := p.claims.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	claim := obj.(*corev1.PersistentVolumeClaim)
	node := claim.Annotations[volume.AnnSelectedNode]
	className := ""
	if claim.Spec.StorageClassName != nil {
		className = *claim.Spec.StorageClassName
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || node == "" || className == "" {
		return nil
	}
	obj, ok, err = p.classes.GetByKey(className)
	if err != nil || !ok {
		return err // a class created later requeues the claim
	}
	class := obj.(*storagev1.StorageClass)
	if class.Provisioner != p.name {
		return nil
	}
	name := volumeName(claim)
	if _, exists, err := p.pvs.GetByKey(name); err != nil || exists {
		return err
	}
	size, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return fmt.Errorf("claim %s requests no storage: nothing to provision", key)
	}
	// The volume's node affinity is on the node's hostname label, as
	// local volume provisioners write it; a node without the label (or
	// not found) is named directly.
	hostname := node
	if n, err := p.env.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err == nil && n.Labels[corev1.LabelHostname] != "" {
		hostname = n.Labels[corev1.LabelHostname]
	} else if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get selected node %s of claim %s: %w", node, key, err)
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{volume.AnnDynamicallyProvisioned: p.name},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			PersistentVolumeReclaimPolicy: reclaim,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: "/mnt/wasmsched-test/" + name},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname},
				}}}},
			}},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
		},
	}
	if _, err := p.env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("create volume %s for claim %s on node %s: %w", name, key, node, err)
	}
	p.mu.Lock()
	p.provisioned = append(p.provisioned, name)
	p.mu.Unlock()
	return nil
}

// reclaim deletes the volume key if this provisioner created it, its claim
// is gone (Released) and its reclaim policy is Delete.
func (p *Provisioner) reclaim(ctx context.Context, key string) error {
	obj, ok, err := p.pvs.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	pv := obj.(*corev1.PersistentVolume)
	if pv.Annotations[volume.AnnDynamicallyProvisioned] != p.name || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.DeletionTimestamp != nil {
		return nil
	}
	err = p.env.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete released volume %s: %w", pv.Name, err)
	}
	return nil
}
