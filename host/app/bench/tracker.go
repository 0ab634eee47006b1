package bench

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// tracker is the fake clientset's object tracker with watches of its own,
// each a channel of size events. The tracker's own watches are channels of
// watch.DefaultChanSize (100) events that panic when full, where an
// apiserver's watch would just lag; changing that process global would
// change it for every fake in the process. These are sized for every event
// of a run, so that a slow informer cannot bring the benchmark down, and a
// watch that falls further behind still is ended, as an apiserver ends a
// watch that cannot keep up: its informer lists again.
//
// Its watches replay nothing (as the tracker's without list options): an
// object must be created after the watch of its type starts for the
// informer to see it.
type tracker struct {
	k8stesting.ObjectTracker
	size int

	// mu serialises the writes with their events, so that every watch sees
	// the events of an object in the order of its writes.
	mu      sync.Mutex
	watches []*fakeWatch
}

// newTracker serves c's objects through a tracker whose watches hold size
// events each, in front of c's own reactors.
func newTracker(c *fake.Clientset, size int) *tracker {
	t := &tracker{ObjectTracker: c.Tracker(), size: size}
	c.PrependReactor("*", "*", k8stesting.ObjectReaction(t))
	c.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := t.Watch(a.GetResource(), a.GetNamespace())
		return true, w, err
	})
	return t
}

func (t *tracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ObjectTracker.Create(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.notify(watch.Added, gvr, ns, obj)
	return nil
}

func (t *tracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ObjectTracker.Update(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.notify(watch.Modified, gvr, ns, obj)
	return nil
}

func (t *tracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ObjectTracker.Patch(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.notify(watch.Modified, gvr, ns, obj)
	return nil
}

func (t *tracker) Apply(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.ObjectTracker.Apply(gvr, obj, ns, opts...); err != nil {
		return err
	}
	t.notify(watch.Modified, gvr, ns, obj)
	return nil
}

func (t *tracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, getErr := t.ObjectTracker.Get(gvr, ns, name)
	if err := t.ObjectTracker.Delete(gvr, ns, name, opts...); err != nil {
		return err
	}
	if getErr == nil {
		t.send(watch.Deleted, gvr, ns, old)
	}
	return nil
}

// Watch watches the objects of gvr in ns (all namespaces if empty).
func (t *tracker) Watch(gvr schema.GroupVersionResource, ns string, _ ...metav1.ListOptions) (watch.Interface, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := &fakeWatch{t: t, gvr: gvr, ns: ns, ch: make(chan watch.Event, t.size)}
	t.watches = append(t.watches, w)
	return w, nil
}

// notify sends the stored copy of obj, just written, to the watches.
// t.mu is held.
func (t *tracker) notify(typ watch.EventType, gvr schema.GroupVersionResource, ns string, obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	stored, err := t.ObjectTracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return
	}
	t.send(typ, gvr, ns, stored)
}

// send hands each watch of gvr and ns its own copy of obj; a watch whose
// channel is full is ended. t.mu is held.
func (t *tracker) send(typ watch.EventType, gvr schema.GroupVersionResource, ns string, obj runtime.Object) {
	for _, w := range append([]*fakeWatch(nil), t.watches...) {
		if w.gvr != gvr || (w.ns != metav1.NamespaceAll && w.ns != ns) {
			continue
		}
		select {
		case w.ch <- watch.Event{Type: typ, Object: obj.DeepCopyObject()}:
		default:
			t.stop(w)
		}
	}
}

// stop ends w once. t.mu is held.
func (t *tracker) stop(w *fakeWatch) {
	for i, x := range t.watches {
		if x == w {
			t.watches = append(t.watches[:i], t.watches[i+1:]...)
			close(w.ch)
			return
		}
	}
}

// fakeWatch is a watch of the tracker.
type fakeWatch struct {
	t   *tracker
	gvr schema.GroupVersionResource
	ns  string
	ch  chan watch.Event // closed by tracker.stop
}

var _ watch.Interface = (*fakeWatch)(nil)

func (w *fakeWatch) Stop() {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	w.t.stop(w)
}

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }
