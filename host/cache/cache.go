package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// DefaultAssumedTTL is how long an assumed pod whose binding finished may
// wait for the informer to confirm it before it expires (see WithAssumedTTL).
const DefaultAssumedTTL = 30 * time.Second

// cleanupPeriod is how often Run looks for expired assumed pods, as
// upstream's cleanAssumedPeriod.
const cleanupPeriod = time.Second

type options struct {
	clock  clock.Clock
	ttl    time.Duration
	logger *logr.Logger
}

// Option configures a Cache.
type Option func(*options)

// WithClock sets the clock that assumed-pod deadlines are measured with
// (tests pass k8s.io/utils/clock/testing's fake clock).
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithAssumedTTL sets how long an assumed pod may stay unconfirmed once its
// binding finished (FinishBinding) before Run drops it from the cache; 30 s
// by default. Upstream v1.37 defaults to 0, never: it relies on the binding
// goroutine to forget a pod whose binding failed and on the informer to
// confirm one whose binding succeeded. wasmsched also expires a pod that
// neither happened to (a lost watch event, a binder that died), so that its
// resources are not held on the node for ever. d <= 0 restores upstream's
// "never".
func WithAssumedTTL(d time.Duration) Option { return func(o *options) { o.ttl = d } }

// WithLogger sets the logger for expired pods and for inconsistencies the
// cache repairs. The default writes to slog.Default(), as the rest of
// wasmsched does.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.logger = &l } }

// Stats are the cache's counts.
type Stats struct {
	// Nodes is the number of nodes (node infos with a node object; not the
	// node infos kept for the pods of a deleted node).
	Nodes int
	// Pods is the number of pods on nodes, assumed ones included.
	Pods int
	// AssumedPods is the number of assumed pods not yet confirmed.
	AssumedPods int
	// Expired is the number of assumed pods that expired since New.
	Expired int
}

// Cache holds the node infos of the cluster with the pods bound or assumed
// on them. Informer handlers, the scheduling cycle and binding goroutines
// call it concurrently.
type Cache struct {
	clock  clock.Clock
	ttl    time.Duration
	logger logr.Logger

	// mu guards every field below. Lock order: mu, then the logger's own
	// locks (the cache logs a few repairs while holding mu; nothing it calls
	// under mu calls back into the cache).
	mu sync.RWMutex
	// nodes holds a node info per node name: for every node, and for node
	// names that only assumed or bound pods have named (the node not seen
	// yet, or deleted before all its pods).
	nodes map[string]*nodeItem
	// head is the most recently changed node info. The list from head is in
	// decreasing generation order, so UpdateSnapshot stops at the first node
	// info a snapshot already has.
	head *nodeItem
	// withNode is the number of node infos that have a node object.
	withNode int
	pods     map[types.UID]*podState
	// assumed holds the assumed pods of pods, so the expiry scan does not
	// walk every pod.
	assumed map[types.UID]*podState
	expired int
}

// nodeItem is a node info in the cache's list ordered by change.
type nodeItem struct {
	name string
	info *NodeInfo
	// shared is the clone of info handed to snapshots; nil when info changed
	// since one was made. Every snapshot that needs the node at this
	// generation gets the same clone, so it is cloned once per change.
	shared     *NodeInfo
	prev, next *nodeItem
}

// podState is a pod in the cache.
type podState struct {
	info *PodInfo
	// assumed: placed by the scheduler, not yet confirmed by the informer.
	assumed bool
	// bound: FinishBinding was called; the pod expires at deadline.
	bound    bool
	deadline time.Time
}

func (ps *podState) node() string { return ps.info.Pod.Spec.NodeName }

// New returns an empty cache. Call Run to expire assumed pods.
func New(opts ...Option) *Cache {
	o := options{clock: clock.RealClock{}, ttl: DefaultAssumedTTL}
	for _, opt := range opts {
		opt(&o)
	}
	// logr.Discard() is the zero Logger, so "unset" needs its own marker.
	logger := logr.FromSlogHandler(slog.Default().Handler())
	if o.logger != nil {
		logger = *o.logger
	}
	return &Cache{
		clock:   o.clock,
		ttl:     o.ttl,
		logger:  logger,
		nodes:   make(map[string]*nodeItem),
		pods:    make(map[types.UID]*podState),
		assumed: make(map[types.UID]*podState),
	}
}

// Run expires assumed pods every second until ctx is done: a pod whose
// binding finished more than the TTL ago and that the informer never
// confirmed is removed from its node, logged ("Pod expired") and counted in
// Stats.Expired. A pod whose binding has not finished never expires; the
// binder forgets it if binding fails.
func (c *Cache) Run(ctx context.Context) {
	t := c.clock.NewTimer(cleanupPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.cleanupExpired()
			t.Reset(cleanupPeriod)
		}
	}
}

// cleanupExpired removes the assumed pods past their deadline.
func (c *Cache) cleanupExpired() {
	if c.ttl <= 0 {
		return
	}
	now := c.clock.Now()
	var gone []*v1.Pod
	c.mu.Lock()
	for _, ps := range c.assumed {
		if ps.bound && now.After(ps.deadline) {
			gone = append(gone, ps.info.Pod)
			c.deletePod(ps)
			c.expired++
		}
	}
	c.mu.Unlock()
	for _, pod := range gone {
		c.logger.Info("Pod expired", "pod", podRef(pod), "uid", pod.UID, "node", pod.Spec.NodeName, "ttl", c.ttl)
	}
}

// AddNode adds node, or updates it if the cache has it.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setNode(node)
}

// UpdateNode replaces the node object of newNode.Name (adding the node if the
// cache missed its addition).
func (c *Cache) UpdateNode(_, newNode *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setNode(newNode)
}

func (c *Cache) setNode(node *v1.Node) {
	it := c.item(node.Name)
	if it.info.node == nil {
		c.withNode++
	}
	it.info.SetNode(node)
	c.touch(it)
}

// RemoveNode removes node. Pods still on it (their deletions travel on
// another watch and may arrive later) keep its node info, without the node,
// until they are removed; snapshots leave such a node info out, as upstream's
// "ghost" nodes.
func (c *Cache) RemoveNode(node *v1.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.nodes[node.Name]
	if it == nil || it.info.node == nil {
		return fmt.Errorf("remove node %q: not in the cache", node.Name)
	}
	it.info.SetNode(nil)
	c.withNode--
	if len(it.info.pods) == 0 {
		c.drop(it)
	} else {
		c.touch(it)
	}
	return nil
}

// AddPod adds a pod the informer saw bound. If the scheduler assumed it,
// this confirms it: the assumed copy is replaced by pod (which is on another
// node if the binding went elsewhere, say a binder extension's choice).
func (c *Cache) AddPod(pod *v1.Pod) error {
	if err := checkBound(pod, "add"); err != nil {
		return err
	}
	pi := c.infoFor(pod)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	switch {
	case !ok:
		c.pods[pod.UID] = &podState{info: pi}
	case ps.assumed:
		if ps.node() != pod.Spec.NodeName {
			c.logger.Info("Pod was added to a different node than it was assumed on",
				"pod", podRef(pod), "assumedNode", ps.node(), "node", pod.Spec.NodeName)
		}
		c.removeFromNode(ps.info)
		delete(c.assumed, pod.UID)
		*ps = podState{info: pi}
	default:
		return fmt.Errorf("add pod %s: already added, on node %q", podRef(pod), ps.node())
	}
	c.addToNode(pi)
	return nil
}

// infoFor derives the PodInfo of pod, an added pod, outside the write
// lock that the cycles' UpdateSnapshot waits on: from the assumed pod's
// when it is the informer's version of one (PodInfo.Confirmed), new
// otherwise. Either is right for pod whatever happens to the assumed pod
// before AddPod takes the lock.
func (c *Cache) infoFor(pod *v1.Pod) *PodInfo {
	c.mu.RLock()
	var assumed *PodInfo
	if ps, ok := c.pods[pod.UID]; ok && ps.assumed {
		assumed = ps.info
	}
	c.mu.RUnlock()
	if assumed != nil {
		return assumed.Confirmed(pod)
	}
	return NewPodInfo(pod)
}

// UpdatePod replaces an added pod with its new version. An assumed pod
// cannot be updated: the informer adds it (confirming it) first.
func (c *Cache) UpdatePod(oldPod, newPod *v1.Pod) error {
	if err := checkBound(newPod, "update"); err != nil {
		return err
	}
	pi := NewPodInfo(newPod)
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[newPod.UID]
	if !ok {
		return fmt.Errorf("update pod %s: not in the cache", podRef(newPod))
	}
	if ps.assumed {
		return fmt.Errorf("update pod %s: assumed, not added yet", podRef(newPod))
	}
	if ps.node() != newPod.Spec.NodeName {
		// spec.nodeName cannot change, so a missed event is the only way
		// here. Upstream exits; the cache moves the pod and carries on.
		c.logger.Error(nil, "Pod updated on a different node than it was added to; moving it",
			"pod", podRef(newPod), "cachedNode", ps.node(), "node", newPod.Spec.NodeName)
	}
	c.removeFromNode(ps.info)
	ps.info = pi
	c.addToNode(pi)
	return nil
}

// RemovePod removes a pod, added or assumed, from the cache. The cached
// copy is removed from the node it is on, whatever pod's spec.nodeName says
// (it is "" when the informer missed the deletion and replays the last known
// state).
func (c *Cache) RemovePod(pod *v1.Pod) error {
	if pod.UID == "" {
		return fmt.Errorf("remove pod %s: no uid", podRef(pod))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return fmt.Errorf("remove pod %s: not in the cache", podRef(pod))
	}
	if n := pod.Spec.NodeName; n != "" && n != ps.node() {
		c.logger.Error(nil, "Pod removed from a different node than the cache has it on",
			"pod", podRef(pod), "cachedNode", ps.node(), "node", n)
	}
	c.deletePod(ps)
	return nil
}

// AssumePod places pod on node pod.Spec.NodeName (set by the caller) before
// its binding is sent, so that the next cycles see its resources used. It
// fails if the pod is in the cache already.
func (c *Cache) AssumePod(pod *v1.Pod) error { return c.AssumePodInfo(NewPodInfo(pod)) }

// AssumePodInfo is AssumePod with the pod's PodInfo built by the caller
// (PodInfo.Assumed), so that it is not derived again.
func (c *Cache) AssumePodInfo(pi *PodInfo) error {
	pod := pi.Pod
	if err := checkBound(pod, "assume"); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok {
		state := "added"
		if ps.assumed {
			state = "assumed"
		}
		return fmt.Errorf("assume pod %s: already %s, on node %q", podRef(pod), state, ps.node())
	}
	ps := &podState{info: pi, assumed: true}
	c.pods[pod.UID] = ps
	c.assumed[pod.UID] = ps
	c.addToNode(pi)
	return nil
}

// FinishBinding records that the binding of an assumed pod was sent; the
// pod expires if the informer does not confirm it within the TTL. A pod that
// is not assumed (the informer may confirm it before the binder gets here)
// is left alone.
func (c *Cache) FinishBinding(pod *v1.Pod) error {
	if pod.UID == "" {
		return fmt.Errorf("finish binding of pod %s: no uid", podRef(pod))
	}
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps := c.assumed[pod.UID]; ps != nil {
		ps.bound = true
		ps.deadline = now.Add(c.ttl)
	}
	return nil
}

// ForgetPod undoes AssumePod, when the binding failed or a later step of the
// cycle rejected the pod. It fails for a pod that is added (bound) rather
// than assumed, or assumed on another node than pod.Spec.NodeName (when set).
// A pod no longer in the cache (removed, or expired) is not an error.
func (c *Cache) ForgetPod(pod *v1.Pod) error {
	if pod.UID == "" {
		return fmt.Errorf("forget pod %s: no uid", podRef(pod))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return nil
	}
	if !ps.assumed {
		return fmt.Errorf("forget pod %s: not assumed (added on node %q)", podRef(pod), ps.node())
	}
	if n := pod.Spec.NodeName; n != "" && n != ps.node() {
		return fmt.Errorf("forget pod %s: assumed on node %q, not %q", podRef(pod), ps.node(), n)
	}
	c.deletePod(ps)
	return nil
}

// IsAssumed reports whether the pod with uid is assumed and not yet confirmed.
func (c *Cache) IsAssumed(uid types.UID) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.assumed[uid]
	return ok
}

// GetPod returns the cached pod with uid (the assumed copy, or the
// informer's object), even when its node was deleted.
func (c *Cache) GetPod(uid types.UID) (*v1.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.pods[uid]
	if !ok {
		return nil, false
	}
	return ps.info.Pod, true
}

// Stats returns the cache's counts.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{Nodes: c.withNode, Pods: len(c.pods), AssumedPods: len(c.assumed), Expired: c.expired}
}

// NodeCount is the number of node infos, including those kept for the pods
// of deleted nodes (upstream's NodeCount).
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.nodes)
}

// PodCount is the number of pods, assumed ones included.
func (c *Cache) PodCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// UpdateSnapshot brings s up to date with the cache, as upstream's: it
// walks the node infos from the most recently changed one and stops at the
// first that is not newer than s, so an update costs the changes since the
// last one, not the cluster size. Changed nodes get a new node info in s
// (the unchanged keep theirs, pointer for pointer); nodes removed from the
// cache leave s. Assume and Forget calls on s are undone first.
//
// A zero Snapshot is valid. If s turns out inconsistent with the cache (a
// snapshot updated from another cache), it is rebuilt from scratch and the
// error says so; s is usable either way.
func (c *Cache) UpdateSnapshot(s *Snapshot) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.changes++
	s.revert()
	s.dropIdle()
	if s.nodes == nil {
		s.nodes = make(map[string]*NodeInfo, c.withNode)
	}
	if c.update(s) {
		return nil
	}
	had := len(s.nodes)
	clear(s.nodes)
	s.rebuildList()
	s.generation = 0
	c.update(s)
	return fmt.Errorf("update snapshot: it had %d nodes, the cache %d; rebuilt it", had, c.withNode)
}

// update applies the changes after s.generation to s and reports whether s
// then has the cache's nodes.
func (c *Cache) update(s *Snapshot) bool {
	rebuild := false
	for it := c.head; it != nil && it.info.generation > s.generation; it = it.next {
		_, had := s.nodes[it.name]
		if it.info.node == nil { // node deleted, pods remain
			if had {
				delete(s.nodes, it.name)
				rebuild = true
			}
			continue
		}
		if it.shared == nil {
			it.shared = it.info.Clone()
		}
		if had {
			s.replace(it.name, it.shared)
		} else {
			s.nodes[it.name] = it.shared
			rebuild = true
		}
	}
	if c.head != nil {
		s.generation = c.head.info.generation
	}
	// A node info dropped from the cache altogether (node and pods gone) is
	// not on the list any more; s has more nodes than the cache then.
	if len(s.nodes) > c.withNode {
		for name := range s.nodes {
			if it := c.nodes[name]; it == nil || it.info.node == nil {
				delete(s.nodes, name)
			}
		}
		rebuild = true
	}
	if rebuild {
		s.rebuildList()
	}
	return len(s.nodes) == c.withNode && len(s.list) == c.withNode
}

// item returns the node item of name, creating an empty one.
func (c *Cache) item(name string) *nodeItem {
	it := c.nodes[name]
	if it == nil {
		it = &nodeItem{name: name, info: NewNodeInfo(nil)}
		c.nodes[name] = it
	}
	return it
}

// touch records that it changed: it moves to the head of the list, and its
// shared clone is stale.
func (c *Cache) touch(it *nodeItem) {
	it.shared = nil
	if c.head == it {
		return
	}
	c.unlink(it)
	it.next = c.head
	if c.head != nil {
		c.head.prev = it
	}
	c.head = it
}

// unlink takes it off the list (a new item is on no list: a no-op).
func (c *Cache) unlink(it *nodeItem) {
	if it.prev != nil {
		it.prev.next = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	if c.head == it {
		c.head = it.next
	}
	it.prev, it.next = nil, nil
}

// drop removes it from the cache.
func (c *Cache) drop(it *nodeItem) {
	c.unlink(it)
	delete(c.nodes, it.name)
}

func (c *Cache) addToNode(pi *PodInfo) {
	it := c.item(pi.Pod.Spec.NodeName)
	it.info.AddPod(pi)
	c.touch(it)
}

func (c *Cache) removeFromNode(pi *PodInfo) {
	name := pi.Pod.Spec.NodeName
	it := c.nodes[name]
	if it == nil || !it.info.RemovePod(pi.Pod.UID) {
		// Pods and node infos change together under mu; this is a bug.
		c.logger.Error(nil, "Pod not found on its node in the cache", "pod", podRef(pi.Pod), "node", name)
		return
	}
	if len(it.info.pods) == 0 && it.info.node == nil {
		c.drop(it)
	} else {
		c.touch(it)
	}
}

// deletePod removes ps from its node and from the cache.
func (c *Cache) deletePod(ps *podState) {
	c.removeFromNode(ps.info)
	uid := ps.info.Pod.UID
	delete(c.pods, uid)
	delete(c.assumed, uid)
}

// checkBound checks what the cache needs of a pod placed on a node.
func checkBound(pod *v1.Pod, op string) error {
	if pod.UID == "" {
		return fmt.Errorf("%s pod %s: no uid", op, podRef(pod))
	}
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("%s pod %s: spec.nodeName is empty", op, podRef(pod))
	}
	return nil
}

func podRef(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// NodeUsage is what the pods on a node (assumed ones included) request, and
// how many there are: what a node event's record carries, so that a
// QueueingHint can tell whether a pod now fits.
func (c *Cache) NodeUsage(name string) (requested v1.ResourceList, pods int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	it := c.nodes[name]
	if it == nil {
		return nil, 0
	}
	return it.info.requested.ResourceList(), len(it.info.pods)
}
