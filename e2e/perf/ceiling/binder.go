package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
)

// retryDelay is the wait before a pod is tried again after a failed bind
// or when no node is usable.
const retryDelay = 100 * time.Millisecond

// binder binds the pending pods of one scheduler name round-robin over the
// usable nodes.
type binder struct {
	client   kubernetes.Interface
	rec      events.EventRecorderLogger
	name     string
	log      *slog.Logger
	attempts *prometheus.CounterVec

	pods, nodes informers.SharedInformerFactory
	podStore    cache.Store
	nodeStore   cache.Store
	queue       workqueue.TypedDelayingInterface[string] // namespace/name of pending pods
	ready       atomic.Bool                              // the informers have synced

	mu    sync.Mutex         // guards the fields below
	ring  []string           // usable nodes by name; nil when a node event made it stale
	next  int                // ring index of the next binding
	bound map[types.UID]bool // bound here and not yet gone from the pod informer
}

// newBinder returns a binder of the pods named for scheduler name, its
// counter registered on reg. run starts it.
func newBinder(client kubernetes.Interface, rec events.EventRecorderLogger, name string, reg prometheus.Registerer, log *slog.Logger) *binder {
	b := &binder{
		client: client, rec: rec, name: name, log: log,
		// The family upstream and wasmsched export; here every attempt is
		// a bind.
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Pods the ceiling tried to bind, by result (scheduled or error) and profile: one attempt per bind, nothing to time but the bind.",
		}, []string{"result", "profile"}),
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "ceiling"}),
		bound: map[types.UID]bool{},
	}
	reg.MustRegister(b.attempts)
	// Only the pods still to bind, as the apiserver selects them: bound
	// pods leave the watch (a delete event), and the ceiling never reads
	// them.
	sel := fields.AndSelectors(
		fields.OneTermEqualSelector("spec.schedulerName", name),
		fields.OneTermEqualSelector("spec.nodeName", ""),
		fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed)),
	).String()
	b.pods = informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = sel }))
	b.nodes = informers.NewSharedInformerFactory(client, 0)
	nodes := b.nodes.Core().V1().Nodes().Informer()
	b.nodeStore = nodes.GetStore()
	pods := b.pods.Core().V1().Pods().Informer()
	b.podStore = pods.GetStore()
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			b.queue.Add(key)
		}
	}
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				b.mu.Lock()
				delete(b.bound, p.UID)
				b.mu.Unlock()
			}
		},
	})
	stale := func(any) {
		b.mu.Lock()
		b.ring = nil
		b.mu.Unlock()
	}
	_, _ = nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: stale, UpdateFunc: func(_, obj any) { stale(obj) }, DeleteFunc: stale,
	})
	return b
}

// run starts the informers and workers bindings at a time, and returns
// when ctx ends and the bindings in flight are done.
func (b *binder) run(ctx context.Context, workers int) {
	b.pods.Start(ctx.Done())
	b.nodes.Start(ctx.Done())
	defer b.pods.Shutdown()
	defer b.nodes.Shutdown()
	b.pods.WaitForCacheSync(ctx.Done())
	b.nodes.WaitForCacheSync(ctx.Done())
	if ctx.Err() != nil {
		b.queue.ShutDown()
		return
	}
	b.ready.Store(true)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := b.queue.Get()
				if shutdown {
					return
				}
				b.bind(ctx, key)
				b.queue.Done(key)
			}
		})
	}
	<-ctx.Done()
	b.queue.ShutDown()
	wg.Wait()
}

// bind binds the pod of key, if it is still pending and not bound here
// already, to the next usable node and records kube-scheduler's Scheduled
// event for it.
func (b *binder) bind(ctx context.Context, key string) {
	obj, ok, err := b.podStore.GetByKey(key)
	if err != nil || !ok {
		return // gone: bound (it left the selector) or deleted
	}
	pod := obj.(*v1.Pod)
	if pod.Spec.NodeName != "" || pod.Spec.SchedulerName != b.name {
		return // the selector says so already; the informer's copy may lag
	}
	node, ok := b.claim(pod.UID)
	if !ok {
		return
	}
	if node == "" {
		b.queue.AddAfter(key, retryDelay)
		return
	}
	// pkg/scheduler/framework/plugins/defaultbinder's Bind.
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := b.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		b.attempts.WithLabelValues("error", b.name).Inc()
		b.release(pod.UID)
		switch {
		case ctx.Err() != nil:
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Deleted, or bound already: the informer will say so.
			b.log.Debug("bind", "pod", key, "node", node, "err", err)
		default:
			b.log.Warn("bind", "pod", key, "node", node, "err", err)
			b.queue.AddAfter(key, retryDelay)
		}
		return
	}
	b.attempts.WithLabelValues("scheduled", b.name).Inc()
	// pkg/scheduler/schedule_one.go's finishBinding.
	b.rec.Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", pod.Namespace, pod.Name, node)
}

// claim returns the node to bind uid to and marks uid as being bound here;
// "" (and no mark) when no node is usable; false when uid is bound here
// already (the informer has not yet seen it leave).
func (b *binder) claim(uid types.UID) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bound[uid] {
		return "", false
	}
	if b.ring == nil {
		b.ring = usableNodes(b.nodeStore.List())
	}
	if len(b.ring) == 0 {
		return "", true
	}
	b.bound[uid] = true
	b.next %= len(b.ring)
	node := b.ring[b.next]
	b.next++
	return node, true
}

// release forgets that uid is being bound here: its bind failed.
func (b *binder) release(uid types.UID) {
	b.mu.Lock()
	delete(b.bound, uid)
	b.mu.Unlock()
}

// usableNodes returns the names of the nodes that are not cordoned and have
// no NoSchedule or NoExecute taint, sorted (an empty, non-nil slice when
// there are none).
func usableNodes(objs []any) []string {
	out := []string{}
	for _, obj := range objs {
		n, ok := obj.(*v1.Node)
		if !ok || n.Spec.Unschedulable || slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool {
			return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}) {
			continue
		}
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}
