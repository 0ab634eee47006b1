// Package cluster connects the scheduler to the apiserver: client-go shared
// informers for pods, nodes, PodGroups, Workloads and PodDisruptionBudgets,
// and the handlers that turn their changes into cache updates and queue
// events, as upstream kube-scheduler's eventhandlers.go does.
//
// Unassigned pods whose schedulerName is one of the profiles go to that
// profile's queue; assigned pods go to the cache. Every change that may
// make a pending pod schedulable (a node added or changed, an assigned pod
// deleted, a PodGroup created...) becomes one abi.Event offered to every
// profile's queue, whose QueueingHint slot decides which pods move.
//
// When the cluster does not serve scheduling.k8s.io/v1beta1 PodGroups, this
// is logged once and pods are scheduled without gangs.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	schedlisters "k8s.io/client-go/listers/scheduling/v1beta1"
	"k8s.io/client-go/tools/cache"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
)

// Queue is what the handlers need of one profile's scheduling queue.
type Queue interface {
	Add(pod *v1.Pod)
	Update(oldPod, newPod *v1.Pod)
	Delete(pod *v1.Pod)
	AddPodGroup(pg *schedv1beta1.PodGroup)
	UpdatePodGroup(pg *schedv1beta1.PodGroup)
	DeletePodGroup(pg *schedv1beta1.PodGroup)
	MoveOnEvent(ev abi.Event)
	// MoveOnEventFor is MoveOnEvent for the entities with a pod only
	// accepts (upstream's PreEnqueueCheck).
	MoveOnEventFor(ev abi.Event, only func(abi.PodView) bool)
	// MoveOnLazyEvent is MoveOnEvent of the event build returns, built
	// only if the queue reads it.
	MoveOnLazyEvent(res abi.EventResource, act abi.ActionType, build func() abi.Event)
}

// Cache is what the handlers need of the scheduler cache.
type Cache interface {
	AddNode(node *v1.Node)
	UpdateNode(oldNode, newNode *v1.Node)
	RemoveNode(node *v1.Node) error
	AddPod(pod *v1.Pod) error
	UpdatePod(oldPod, newPod *v1.Pod) error
	RemovePod(pod *v1.Pod) error
	IsAssumed(uid types.UID) bool
	// NodeUsage is what the pods on a node request, and how many there are.
	NodeUsage(name string) (requested v1.ResourceList, pods int)
}

// Nominator is told about every pod change, so that nominations made by
// preemption (status.nominatedNodeName) are known, also after a restart.
type Nominator interface {
	Observe(old, pod *v1.Pod)
}

// Option configures a Cluster.
type Option func(*Cluster)

// WithPodGroupsServed tells New whether the cluster serves PodGroups, when
// the caller has asked discovery already (ServesPodGroups), so that New does
// not ask again.
func WithPodGroupsServed(served bool) Option { return func(cl *Cluster) { cl.podGroups = &served } }

// WithNominator feeds n with every pod change.
func WithNominator(n Nominator) Option { return func(cl *Cluster) { cl.nominator = n } }

// WithInformerFactory has the cluster watch through f (not started yet,
// made by NewInformerFactory) instead of an informer factory of its own:
// the scheduler's plugins read the same informers (framework.Handle's
// listers).
func WithInformerFactory(f informers.SharedInformerFactory) Option {
	return func(cl *Cluster) { cl.factory = f }
}

// ClaimEvents hands on the ResourceClaim informer's events once the DRA
// state has applied them (host/dra's Manager): a pod an event moves must
// not find the device the event frees still taken.
type ClaimEvents interface {
	Subscribe(h cache.ResourceEventHandler)
	// Synced reports whether the source has seen every claim the
	// informer listed at start.
	Synced() bool
}

// WithClaimEvents has the queues hear of claim changes through src, built
// over the cluster's informer factory (WithInformerFactory). Without it
// they hear of them from the claim informer directly.
func WithClaimEvents(src ClaimEvents) Option { return func(cl *Cluster) { cl.claimEvents = src } }

// Cluster owns the informers.
type Cluster struct {
	client  kubernetes.Interface
	factory informers.SharedInformerFactory
	cache   Cache
	queues  map[string]Queue // by scheduler name
	members *Members
	log     *slog.Logger
	gangs   bool
	pods    corelisters.PodLister
	pdbs    policylisters.PodDisruptionBudgetLister
	groups  schedlisters.PodGroupLister
	// claimEvents delivers the claim informer's events (WithClaimEvents);
	// nil: the informer does.
	claimEvents ClaimEvents
	synced      []func() bool // the event handlers' HasSynced
	nominator   Nominator
	podGroups   *bool // WithPodGroupsServed; nil: ask discovery
}

// New prepares the informers of client for the given profiles' queues
// (keyed by scheduler name) and the shared cache. members is the group
// member count the queues were built with (queue.WithGroupMembers). It
// asks the apiserver once whether PodGroups are served.
func New(ctx context.Context, client kubernetes.Interface, c Cache, queues map[string]Queue, members *Members, log *slog.Logger, opts ...Option) (*Cluster, error) {
	if len(queues) == 0 {
		return nil, fmt.Errorf("no profile to schedule for: at least one scheduler name is needed")
	}
	cl := &Cluster{client: client, cache: c, queues: queues, members: members, log: log}
	for _, o := range opts {
		o(cl)
	}
	if cl.factory == nil {
		cl.factory = NewInformerFactory(client)
	}
	if cl.podGroups == nil {
		served, err := ServesPodGroups(client)
		if err != nil {
			return nil, err
		}
		cl.podGroups = &served
	}
	cl.gangs = *cl.podGroups
	if !cl.gangs {
		log.Warn("the cluster does not serve scheduling.k8s.io/v1beta1 podgroups: scheduling without gangs " +
			"(start kube-apiserver with --runtime-config=scheduling.k8s.io/v1beta1=true --feature-gates=GenericWorkload=true to use them)")
	}
	if err := cl.register(); err != nil {
		return nil, err
	}
	return cl, nil
}

// NewInformerFactory returns the informer factory the scheduler watches
// through. Its pod informer is upstream's (kube-scheduler's
// newPodInformer): it leaves out pods that have finished, so a pod that
// succeeds or fails leaves the cache (a Delete) and frees its node's room
// for the pods waiting on it, and it drops managedFields, which nothing in
// the scheduler reads, from every pod it keeps. Every user of the
// factory's pod informer or lister gets this one.
func NewInformerFactory(client kubernetes.Interface) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactory(client, 0)
	f.InformerFor(&v1.Pod{}, newPodInformer)
	return f
}

// notFinished is the pod informer's field selector, upstream's.
const notFinished = "status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed)

func newPodInformer(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
	inf := coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, resync,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.FieldSelector = notFinished })
	if err := inf.SetTransform(dropManagedFields); err != nil {
		panic(fmt.Sprintf("pod informer: set its transform before it starts: %v", err)) // a new informer has not started
	}
	return inf
}

// dropManagedFields is the pod informer's transform: the informer's store
// and the cache would otherwise keep every pod's managedFields, which
// nothing in the scheduler reads.
func dropManagedFields(o any) (any, error) {
	if p, ok := o.(*v1.Pod); ok {
		p.ManagedFields = nil
	}
	return o, nil
}

// ServesPodGroups asks discovery whether scheduling.k8s.io/v1beta1 serves
// podgroups. Only "not found" means no; any other error is returned.
func ServesPodGroups(client kubernetes.Interface) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(schedv1beta1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discover %s: %w", schedv1beta1.SchemeGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "podgroups" {
			return true, nil
		}
	}
	return false, nil
}

// Gangs reports whether PodGroups are watched.
func (cl *Cluster) Gangs() bool { return cl.gangs }

// PodLister reads pods from the informer cache.
func (cl *Cluster) PodLister() corelisters.PodLister { return cl.pods }

// PDBLister reads PodDisruptionBudgets from the informer cache.
func (cl *Cluster) PDBLister() policylisters.PodDisruptionBudgetLister { return cl.pdbs }

// Informers is the informer factory the cluster watches through: the
// scheduler builds its plugins' listers over it (host/app), so that every
// object is watched once.
func (cl *Cluster) Informers() informers.SharedInformerFactory { return cl.factory }

// PodGroupLister reads PodGroups; nil when the cluster does not serve them.
func (cl *Cluster) PodGroupLister() schedlisters.PodGroupLister { return cl.groups }

// Start starts the informers and waits until their caches are in sync (or
// ctx ends).
func (cl *Cluster) Start(ctx context.Context) error {
	cl.factory.Start(ctx.Done())
	start := time.Now()
	for typ, ok := range cl.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %v did not sync: %w", typ, context.Cause(ctx))
		}
	}
	for _, synced := range cl.synced {
		if !cache.WaitForCacheSync(ctx.Done(), synced) {
			return fmt.Errorf("event handlers did not sync: %w", context.Cause(ctx))
		}
	}
	cl.log.Info("informers synced", "after", time.Since(start).Round(time.Millisecond))
	return nil
}

// Shutdown stops the informers and waits for them.
func (cl *Cluster) Shutdown() { cl.factory.Shutdown() }

func (cl *Cluster) register() error {
	podInf := cl.factory.Core().V1().Pods()
	cl.pods = podInf.Lister()
	cl.pdbs = cl.factory.Policy().V1().PodDisruptionBudgets().Lister()
	nodeInf := cl.factory.Core().V1().Nodes().Informer()

	add := func(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return err
		}
		cl.synced = append(cl.synced, reg.HasSynced)
		return nil
	}
	if err := add(nodeInf, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { cl.addNode(o.(*v1.Node)) },
		UpdateFunc: func(o, n any) { cl.updateNode(o.(*v1.Node), n.(*v1.Node)) },
		DeleteFunc: func(o any) {
			if n, ok := unwrap[*v1.Node](o); ok {
				cl.deleteNode(n)
			}
		},
	}); err != nil {
		return err
	}
	// One handler for every pod, so that the member count, the cache and
	// the queues see a pod's changes in one order: the count first (the
	// queue reads it when it encodes a member), then the cache for an
	// assigned pod, the queue for an unassigned one of ours. A pod that gets
	// bound leaves its queue (a Delete) and enters the cache (an Add), as in
	// upstream's two filtered handlers.
	if err := add(podInf.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { cl.podChanged(nil, o.(*v1.Pod)) },
		UpdateFunc: func(o, n any) { cl.podChanged(o.(*v1.Pod), n.(*v1.Pod)) },
		DeleteFunc: func(o any) {
			if p, ok := unwrap[*v1.Pod](o); ok {
				cl.podChanged(p, nil)
			}
		},
	}); err != nil {
		return err
	}
	// PDBs are read by preemption through the lister, the others by the
	// plugins; registering an informer (Lister does) makes the factory
	// start it.
	cl.factory.Policy().V1().PodDisruptionBudgets().Informer()
	if err := cl.registerStorage(add); err != nil {
		return err
	}

	if !cl.gangs {
		return nil
	}
	pgInf := cl.factory.Scheduling().V1beta1().PodGroups()
	cl.groups = pgInf.Lister()
	cl.factory.Scheduling().V1beta1().Workloads().Informer()
	return add(pgInf.Informer(), cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { cl.addGroup(o.(*schedv1beta1.PodGroup)) },
		UpdateFunc: func(o, n any) { cl.updateGroup(o.(*schedv1beta1.PodGroup), n.(*schedv1beta1.PodGroup)) },
		DeleteFunc: func(o any) {
			if g, ok := unwrap[*schedv1beta1.PodGroup](o); ok {
				cl.deleteGroup(g)
			}
		},
	})
}

// storageInformer is a storage resource's informer and the actions whose
// events reach the queues. viaDRA stands for the ResourceClaim informer,
// whose events come through host/dra's Manager instead (registerStorage).
// It is a flag, not a comparison with the listers' informer: client-go's
// typed informers (v0.37) wrap the shared informer anew on every
// Informer() call, so two handles on one informer never compare equal.
type storageInformer struct {
	inf     cache.SharedIndexInformer
	actions abi.ActionType
	viaDRA  bool
}

// storageEvents are the union of what upstream's VolumeBinding,
// VolumeRestrictions, VolumeZone and NodeVolumeLimits register (v1.37.1).
// As upstream's event handlers, an action no plugin registers sends nothing
// (a PVC deleted, a StorageClass deleted, a VolumeAttachment added...).
func (cl *Cluster) storageEvents() []storageInformer {
	core, storage := cl.factory.Core().V1(), cl.factory.Storage().V1()
	addUpdate := abi.ActionAdd | abi.ActionUpdate
	return []storageInformer{
		{inf: core.PersistentVolumes().Informer(), actions: addUpdate},
		{inf: core.PersistentVolumeClaims().Informer(), actions: addUpdate},
		{inf: storage.StorageClasses().Informer(), actions: addUpdate},
		{inf: storage.CSINodes().Informer(), actions: addUpdate},
		{inf: storage.CSIDrivers().Informer(), actions: abi.ActionUpdate},
		{inf: storage.CSIStorageCapacities().Informer(), actions: addUpdate},
		{inf: storage.VolumeAttachments().Informer(), actions: abi.ActionDelete},
	}
}

// draEvents are what upstream's DynamicResources registers (v1.37.1):
// ResourceClaim Add|Update|Delete, ResourceSlice and DeviceClass
// Add|Update. Upstream watches the slices through the ResourceSlice tracker,
// which reports a DeviceTaintRule change as updates of the slices it taints;
// here the rule's own events stand for those. The claims' events come
// through host/dra's Manager once it has applied them (registerStorage);
// the scheduler's in-flight claim changes are not events, as upstream's.
func (cl *Cluster) draEvents() []storageInformer {
	dra := cl.factory.Resource().V1()
	addUpdate := abi.ActionAdd | abi.ActionUpdate
	return []storageInformer{
		{inf: dra.ResourceClaims().Informer(), actions: abi.ActionAll, viaDRA: true},
		{inf: dra.ResourceSlices().Informer(), actions: addUpdate},
		{inf: dra.DeviceClasses().Informer(), actions: addUpdate},
		{inf: dra.DeviceTaintRules().Informer(), actions: abi.ActionAll},
	}
}

// registerStorage turns the storage and DRA informers' changes into queue
// events (podview.StorageEvent), skipping updates no hint can act on
// (podview.StorageUpdateActions).
func (cl *Cluster) registerStorage(add func(cache.SharedIndexInformer, cache.ResourceEventHandler) error) error {
	for _, e := range append(cl.storageEvents(), cl.draEvents()...) {
		h := cache.ResourceEventHandlerFuncs{}
		if e.actions&abi.ActionAdd != 0 {
			h.AddFunc = func(o any) { cl.storageChanged(abi.ActionAdd, nil, o) }
		}
		if e.actions&abi.ActionUpdate != 0 {
			h.UpdateFunc = func(o, n any) {
				if act := podview.StorageUpdateActions(o, n); act != 0 {
					cl.storageChanged(act, o, n)
				}
			}
		}
		if e.actions&abi.ActionDelete != 0 {
			h.DeleteFunc = func(o any) {
				if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
					if c, ok := t.Obj.(*resourceapi.ResourceClaim); ok {
						cl.broadcast(podview.ClaimTombstoneEvent(c))
						return
					}
					o = t.Obj
				}
				cl.storageChanged(abi.ActionDelete, o, nil)
			}
		}
		if e.viaDRA && cl.claimEvents != nil {
			// After the DRA state has the change: a pod the event moves
			// must not find the device it frees still taken. A second
			// handler on the informer would run on a goroutine of its
			// own, in no order with the Manager's.
			cl.claimEvents.Subscribe(h)
			cl.synced = append(cl.synced, cl.claimEvents.Synced)
			continue
		}
		if err := add(e.inf, h); err != nil {
			return err
		}
	}
	return nil
}

func (cl *Cluster) storageChanged(act abi.ActionType, old, new any) {
	ev, ok := podview.StorageEvent(act, old, new)
	if !ok {
		cl.log.Error("unexpected object from a storage informer", "old", fmt.Sprintf("%T", old), "new", fmt.Sprintf("%T", new))
		return
	}
	cl.broadcast(ev)
}

// unwrap returns the object of a delete notification, which may be a
// tombstone when the watch missed the delete.
func unwrap[T any](o any) (T, bool) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	v, ok := o.(T)
	return v, ok
}

func (cl *Cluster) broadcast(ev abi.Event) {
	for _, q := range cl.queues {
		q.MoveOnEvent(ev)
	}
}

// broadcastPod sends the queues a pod's change (old nil: added; new nil:
// deleted) as podview.PodEvent, built only by a queue that reads it: the
// queues record every pod event for the pods in flight, which read it only
// if they fail. The group's state is taken now, the record later.
func (cl *Cluster) broadcastPod(act abi.ActionType, old, new *v1.Pod) {
	cur := new
	if cur == nil {
		cur = old
	}
	group := cl.groupInfo(cur)
	build := func() abi.Event { return podview.PodEvent(act, old, new, group) }
	res := podview.PodEventResource(old, new)
	for _, q := range cl.queues {
		q.MoveOnLazyEvent(res, act, build)
	}
}

func (cl *Cluster) addNode(n *v1.Node) {
	cl.cache.AddNode(n)
	req, pods := cl.cache.NodeUsage(n.Name)
	cl.broadcast(podview.NodeEvent(abi.ActionAdd, nil, n, req, pods))
}

func (cl *Cluster) updateNode(old, n *v1.Node) {
	cl.cache.UpdateNode(old, n)
	if act := podview.NodeUpdateActions(old, n); act != 0 {
		req, pods := cl.cache.NodeUsage(n.Name)
		cl.broadcast(podview.NodeEvent(act, old, n, req, pods))
	}
}

func (cl *Cluster) deleteNode(n *v1.Node) {
	if err := cl.cache.RemoveNode(n); err != nil {
		cl.log.Error("remove a node from the cache", "node", n.Name, "err", err)
	}
	cl.broadcast(podview.NodeEvent(abi.ActionDelete, n, nil, nil, 0))
}

// groupInfo describes pod's PodGroup for event records; nil without one.
func (cl *Cluster) groupInfo(pod *v1.Pod) *podview.GroupInfo {
	name := podview.GroupName(pod)
	if name == "" || cl.groups == nil {
		return nil
	}
	pg, err := cl.groups.PodGroups(pod.Namespace).Get(name)
	if err != nil {
		return nil
	}
	n, _ := cl.members.Count(pod.Namespace, name)
	g := podview.Group(pg, n)
	return &g
}

// podChanged dispatches one pod change (old nil: added; pod nil: deleted).
func (cl *Cluster) podChanged(old, pod *v1.Pod) {
	if old != nil && pod != nil && old.UID != pod.UID {
		// A pod deleted and created again under its name while the watch
		// was down: the relist delivers an update from one to the other.
		// Everything below keys pods by UID, so it is the old one's
		// deletion and the new one's addition (upstream's cache does the
		// same by key).
		cl.podChanged(old, nil)
		cl.podChanged(nil, pod)
		return
	}
	counted := cl.members.set(old, pod)
	// An assumed pod is binding: its room is held by the cache, and a
	// nomination from a stale status would count it twice.
	if cl.nominator != nil && (pod == nil || !cl.cache.IsAssumed(pod.UID)) {
		cl.nominator.Observe(old, pod)
	}
	wasAssigned, isAssigned := old != nil && old.Spec.NodeName != "", pod != nil && pod.Spec.NodeName != ""
	wasOurs, isOurs := old != nil && !wasAssigned && cl.ours(old), pod != nil && !isAssigned && cl.ours(pod)
	switch {
	case wasAssigned && isAssigned:
		cl.updateAssigned(old, pod)
	case wasAssigned:
		cl.deleteAssigned(old)
	case isAssigned:
		cl.addAssigned(pod)
	}
	switch {
	case wasOurs && isOurs:
		cl.updatePending(old, pod)
	case wasOurs && isAssigned:
		// Bound, not deleted: it leaves its queue, and the assigned pod's
		// Add above is its only event (upstream's deletePodFromSchedulingQueue
		// with inBinding).
		cl.queues[old.Spec.SchedulerName].Delete(old)
	case wasOurs:
		cl.deletePending(old)
	case isOurs:
		cl.addPending(pod)
	}
	if counted && !wasOurs && !isOurs {
		cl.refreshGroup(old, pod)
	}
}

func (cl *Cluster) ours(pod *v1.Pod) bool { return cl.queues[pod.Spec.SchedulerName] != nil }

// refreshGroup tells the queues that the member count of a pod's group
// changed through a pod they do not hold (a bound member, say), so the
// records they hold carry the new count.
func (cl *Cluster) refreshGroup(old, pod *v1.Pod) {
	if cl.groups == nil {
		return
	}
	for _, p := range []*v1.Pod{old, pod} {
		if p == nil || podview.GroupName(p) == "" {
			continue
		}
		pg, err := cl.groups.PodGroups(p.Namespace).Get(podview.GroupName(p))
		if err != nil {
			continue
		}
		for _, q := range cl.queues {
			q.UpdatePodGroup(pg)
		}
	}
}

func (cl *Cluster) addAssigned(p *v1.Pod) {
	if err := cl.cache.AddPod(p); err != nil {
		cl.log.Error("add an assigned pod to the cache", "pod", p.Namespace+"/"+p.Name, "err", err)
	}
	cl.broadcastPod(abi.ActionAdd, nil, p)
}

func (cl *Cluster) updateAssigned(old, p *v1.Pod) {
	if err := cl.cache.UpdatePod(old, p); err != nil {
		cl.log.Error("update an assigned pod in the cache", "pod", p.Namespace+"/"+p.Name, "err", err)
	}
	if act := podview.PodUpdateActions(old, p); act != 0 {
		cl.broadcastPod(act, old, p)
	}
}

func (cl *Cluster) deleteAssigned(p *v1.Pod) {
	if err := cl.cache.RemovePod(p); err != nil {
		cl.log.Error("remove an assigned pod from the cache", "pod", p.Namespace+"/"+p.Name, "err", err)
	}
	cl.broadcastPod(abi.ActionDelete, p, nil)
}

func (cl *Cluster) addPending(p *v1.Pod) {
	cl.queues[p.Spec.SchedulerName].Add(p)
	// Upstream (GenericWorkload) treats an unscheduled pod's arrival as an
	// event too: a gang member's arrival may complete its group.
	cl.broadcastPod(abi.ActionAdd, nil, p)
}

func (cl *Cluster) updatePending(old, p *v1.Pod) {
	// An assumed pod's updates (its own status patches while it binds)
	// change nothing the queue needs; upstream skips them as well.
	if cl.cache.IsAssumed(p.UID) {
		return
	}
	q := cl.queues[p.Spec.SchedulerName]
	q.Update(old, p)
	if act := podview.PodUpdateActions(old, p); act != 0 {
		cl.broadcastPod(act, old, p)
	}
	if nn := old.Status.NominatedNodeName; nn != "" && nn != p.Status.NominatedNodeName {
		cl.nominationGone(old)
	}
}

func (cl *Cluster) deletePending(p *v1.Pod) {
	if q := cl.queues[p.Spec.SchedulerName]; q != nil {
		q.Delete(p)
	}
	cl.broadcastPod(abi.ActionDelete, p, nil)
	if p.Status.NominatedNodeName != "" {
		cl.nominationGone(p)
	}
}

// nominationGone tells the queues that the room pod's nomination held on
// its nominated node is free again (the nomination was cleared or moved, or
// the pod deleted), as upstream's handlers do: the pods of lower or equal
// priority counted pod there as if it were assigned, so they are offered
// an assigned pod's deletion on that node. The event carries pod placed on
// the node it was nominated to, so that the QueueingHint slot reads it as
// any assigned pod's deletion; pods of higher priority never counted it and
// are not asked.
func (cl *Cluster) nominationGone(pod *v1.Pod) {
	placed := pod.DeepCopy()
	placed.Spec.NodeName = pod.Status.NominatedNodeName
	ev := podview.PodEvent(abi.ActionDelete, placed, nil, cl.groupInfo(pod))
	prio := corev1helpers.PodPriority(pod)
	lowerOrEqual := func(v abi.PodView) bool { return v.Priority() <= prio }
	for _, q := range cl.queues {
		q.MoveOnEventFor(ev, lowerOrEqual)
	}
}

func (cl *Cluster) addGroup(pg *schedv1beta1.PodGroup) {
	n, _ := cl.members.Count(pg.Namespace, pg.Name)
	for _, q := range cl.queues {
		q.AddPodGroup(pg)
	}
	cl.broadcast(podview.PodGroupEvent(abi.ActionAdd, nil, pg, n))
}

func (cl *Cluster) updateGroup(old, pg *schedv1beta1.PodGroup) {
	for _, q := range cl.queues {
		q.UpdatePodGroup(pg)
	}
	if act := podview.PodGroupUpdateActions(old, pg); act != 0 {
		n, _ := cl.members.Count(pg.Namespace, pg.Name)
		cl.broadcast(podview.PodGroupEvent(act, old, pg, n))
	}
}

func (cl *Cluster) deleteGroup(pg *schedv1beta1.PodGroup) {
	for _, q := range cl.queues {
		q.DeletePodGroup(pg)
	}
	n, _ := cl.members.Count(pg.Namespace, pg.Name)
	cl.broadcast(podview.PodGroupEvent(abi.ActionDelete, pg, nil, n))
}
