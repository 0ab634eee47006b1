package volume

import (
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// Informer is what the assume caches need of a shared informer: its store,
// read in place, and its events, which end assumptions the API has caught
// up with. A toolscache.SharedIndexInformer is one.
type Informer interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
	AddIndexers(toolscache.Indexers) error
	GetIndexer() toolscache.Indexer
}

// assumeCache is upstream's passive assume cache: the informer's objects,
// each possibly shadowed by an assumed copy (a PV with the claimRef a
// reserved pod will write, a claim with the selected-node annotation). An
// assumed copy is seen while the informer still holds the version it was
// made from; a newer version from the informer (or a deletion) ends it, as
// does Restore.
type assumeCache[T metav1.Object] struct {
	store toolscache.Indexer
	gr    schema.GroupResource
	// notify is told of every informer event (Caches.Changed).
	notify func()

	// mu guards assumed; it is held while the store is read together with
	// assumed, so that an assumption and the version it shadows are seen
	// together.
	mu      sync.RWMutex
	assumed map[string]T
}

func newAssumeCache[T metav1.Object](inf Informer, gr schema.GroupResource, notify func()) (*assumeCache[T], error) {
	c := &assumeCache[T]{store: inf.GetIndexer(), gr: gr, notify: notify, assumed: map[string]T{}}
	_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.expire(obj) },
		UpdateFunc: func(_, obj any) { c.expire(obj) },
		DeleteFunc: func(obj any) { c.expire(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s for the volume assume cache: %w", gr.Resource, err)
	}
	return c, nil
}

// expire ends the assumption of obj's key unless the informer still holds
// the version it was made from (a resync), and tells the waiters.
func (c *assumeCache[T]) expire(obj any) {
	key, err := toolscache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.mu.Lock()
	if a, ok := c.assumed[key]; ok {
		cur, exists, err := c.store.GetByKey(key)
		if err == nil && (!exists || metaOf(cur).GetResourceVersion() != a.GetResourceVersion()) {
			delete(c.assumed, key)
		}
	}
	c.mu.Unlock()
	c.notify()
}

func metaOf(obj any) metav1.Object {
	m, _ := obj.(metav1.Object)
	if m == nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// GetAPIObj returns the informer's object of key, ignoring assumptions; a
// NotFound error when there is none.
func (c *assumeCache[T]) GetAPIObj(key string) (T, error) {
	var zero T
	obj, ok, err := c.store.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !ok {
		return zero, apierrors.NewNotFound(c.gr, key)
	}
	v, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("%s %q in the informer is a %T", c.gr.Resource, key, obj)
	}
	return v, nil
}

// Get returns the object of key as the scheduler sees it: the assumed copy
// while the informer holds the version it was made from, else the
// informer's.
func (c *assumeCache[T]) Get(key string) (T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.get(key)
}

func (c *assumeCache[T]) get(key string) (T, error) {
	obj, err := c.GetAPIObj(key)
	if err != nil {
		return obj, err
	}
	if a, ok := c.assumed[key]; ok && a.GetResourceVersion() == obj.GetResourceVersion() {
		return a, nil
	}
	return obj, nil
}

// byIndex lists the objects of an index of the store, assumed copies in
// place of the versions they shadow.
func (c *assumeCache[T]) byIndex(index, value string) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	objs, err := c.store.ByIndex(index, value)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		v, ok := o.(T)
		if !ok {
			continue
		}
		if a, ok := c.assumed[keyOf(v)]; ok && a.GetResourceVersion() == v.GetResourceVersion() {
			v = a
		}
		out = append(out, v)
	}
	return out, nil
}

func keyOf(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Assume makes obj the scheduler's view of its key until the informer
// brings a newer version or Restore(obj). It fails when obj is not made
// from the version the informer holds, or when check, given the current
// view (assumption included), refuses: the check and the assumption are
// atomic, so two pods cannot both assume what check reserves.
func (c *assumeCache[T]) Assume(obj T, check func(cur T) error) error {
	key := keyOf(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	stored, err := c.GetAPIObj(key)
	if err != nil {
		return err
	}
	if stored.GetResourceVersion() != obj.GetResourceVersion() {
		return fmt.Errorf("%q is out of sync (stored: %s, assume: %s)", key, stored.GetResourceVersion(), obj.GetResourceVersion())
	}
	if check != nil {
		cur, err := c.get(key)
		if err != nil {
			return err
		}
		if err := check(cur); err != nil {
			return err
		}
	}
	c.assumed[key] = obj
	return nil
}

// Restore ends the assumption of obj, when obj (the very copy Assume was
// given) is still the one assumed: another pod's later assumption of the
// same key is left alone.
func (c *assumeCache[T]) Restore(obj T) {
	key := keyOf(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.assumed[key]; ok && any(a) == any(obj) {
		delete(c.assumed, key)
	}
}

// assumedCount is the number of live assumptions (tests).
func (c *assumeCache[T]) assumedCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.assumed)
}

// storageClassIndex indexes PersistentVolumes by class name ("" for none),
// as upstream's PV assume cache does.
const storageClassIndex = "wasmsched-storageclass"

func pvClassIndex(obj any) ([]string, error) {
	pv, ok := obj.(*v1.PersistentVolume)
	if !ok {
		return nil, fmt.Errorf("index a %T as a PersistentVolume", obj)
	}
	return []string{storagehelpers.GetPersistentVolumeClass(pv)}, nil
}

// Caches are the PersistentVolume and PersistentVolumeClaim assume caches.
// One pair serves every profile of a scheduler (framework.Handle.Volumes), so that a
// PersistentVolume reserved by a pod of one profile is taken for all.
type Caches struct {
	pvs  *assumeCache[*v1.PersistentVolume]
	pvcs *assumeCache[*v1.PersistentVolumeClaim]

	// changedMu guards changed, closed and replaced on every event.
	changedMu sync.Mutex
	changed   chan struct{}
}

// NewCaches builds the caches over the two informers, which must not have
// started yet (the PV informer gets a storage class index). nil informers
// stand for an API without volumes or claims (tests and tools): the caches
// are then empty and stay so.
func NewCaches(pvInformer, pvcInformer Informer) (*Caches, error) {
	if pvInformer == nil {
		pvInformer = newStaticInformer()
	}
	if pvcInformer == nil {
		pvcInformer = newStaticInformer()
	}
	if err := pvInformer.AddIndexers(toolscache.Indexers{storageClassIndex: pvClassIndex}); err != nil {
		if _, ok := pvInformer.GetIndexer().GetIndexers()[storageClassIndex]; !ok {
			return nil, fmt.Errorf("index PersistentVolumes by storage class: %w", err)
		}
	}
	c := &Caches{changed: make(chan struct{})}
	var err error
	if c.pvs, err = newAssumeCache[*v1.PersistentVolume](pvInformer, v1.Resource("persistentvolume"), c.notify); err != nil {
		return nil, err
	}
	if c.pvcs, err = newAssumeCache[*v1.PersistentVolumeClaim](pvcInformer, v1.Resource("persistentvolumeclaim"), c.notify); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Caches) notify() {
	c.changedMu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.changedMu.Unlock()
}

// Changed returns a channel closed at the next informer event of either
// cache: what PreBind's wait sleeps on between checks.
func (c *Caches) Changed() <-chan struct{} {
	c.changedMu.Lock()
	defer c.changedMu.Unlock()
	return c.changed
}

// compareVersions is upstream's APIObjectVersioner.CompareResourceVersion:
// -1, 0 or 1 as a's resourceVersion is older, the same or newer than b's;
// 0 when either does not parse.
func compareVersions(a, b metav1.Object) int {
	x, err1 := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	y, err2 := strconv.ParseUint(b.GetResourceVersion(), 10, 64)
	switch {
	case err1 != nil || err2 != nil || x == y:
		return 0
	case x < y:
		return -1
	}
	return 1
}

// staticInformer is an informer that never has an event: an empty store
// for the caches of a scheduler without an API.
type staticInformer struct{ store toolscache.Indexer }

func newStaticInformer() *staticInformer {
	return &staticInformer{store: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})}
}

func (s *staticInformer) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}
func (s *staticInformer) AddIndexers(ix toolscache.Indexers) error { return s.store.AddIndexers(ix) }
func (s *staticInformer) GetIndexer() toolscache.Indexer           { return s.store }
