package cycle

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/cache"
)

// Nominator tracks the pods nominated to a node by preemption
// (status.nominatedNodeName) and not bound yet, as upstream's PodNominator:
// while the victims terminate, the room they leave is kept for the
// preemptor, so a lower-priority pod must not take it.
type Nominator struct {
	mu     sync.Mutex
	byNode map[string]map[types.UID]nominated
	nodeOf map[types.UID]string
}

// nominated is a pod nominated to a node, with the PodInfo the cycle adds
// to that node's snapshot: built once per nomination, because a cycle
// consults every nomination on every attempt (while 500 preemptors wait,
// rebuilding them took 40% of the scheduler's CPU).
type nominated struct {
	pod  *v1.Pod
	info *cache.PodInfo // a copy of pod placed on the node; read-only
}

// NewNominator returns an empty Nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string]map[types.UID]nominated{}, nodeOf: map[types.UID]string{}}
}

// Set nominates pod to node; node "" withdraws its nomination.
func (n *Nominator) Set(pod *v1.Pod, node string) {
	var info *cache.PodInfo
	if node != "" {
		placed := pod.DeepCopy()
		placed.Spec.NodeName = node
		info = cache.NewPodInfo(placed)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.removeLocked(pod.UID)
	if node == "" {
		return
	}
	m := n.byNode[node]
	if m == nil {
		m = map[types.UID]nominated{}
		n.byNode[node] = m
	}
	m[pod.UID] = nominated{pod: pod, info: info}
	n.nodeOf[pod.UID] = node
}

// Remove withdraws pod's nomination, if any.
func (n *Nominator) Remove(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.removeLocked(uid)
}

func (n *Nominator) removeLocked(uid types.UID) {
	node, ok := n.nodeOf[uid]
	if !ok {
		return
	}
	delete(n.nodeOf, uid)
	if m := n.byNode[node]; m != nil {
		delete(m, uid)
		if len(m) == 0 {
			delete(n.byNode, node)
		}
	}
}

// Observe follows a pod's changes from the informer (old nil: added; pod
// nil: deleted): a pending pod whose status names a nominated node is
// nominated there (so nominations survive a restart of the scheduler); a
// bound or deleted pod is not nominated anywhere.
func (n *Nominator) Observe(old, pod *v1.Pod) {
	switch {
	case pod == nil:
		n.Remove(old.UID)
	case pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil:
		n.Remove(pod.UID)
	case pod.Status.NominatedNodeName != "":
		n.Set(pod, pod.Status.NominatedNodeName)
	case old != nil && old.Status.NominatedNodeName != "":
		n.Remove(pod.UID)
	}
}

// OnNode returns the pods nominated to node.
func (n *Nominator) OnNode(node string) []*v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.byNode[node]
	if len(m) == 0 {
		return nil
	}
	out := make([]*v1.Pod, 0, len(m))
	for _, p := range m {
		out = append(out, p.pod)
	}
	return out
}

// InfosOn returns the pods nominated to node as pod infos placed there
// (read-only), built when they were nominated: what a preemption dry run
// leaves room for.
func (n *Nominator) InfosOn(node string) []*cache.PodInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.byNode[node]
	if len(m) == 0 {
		return nil
	}
	out := make([]*cache.PodInfo, 0, len(m))
	for _, p := range m {
		out = append(out, p.info)
	}
	return out
}

// infos returns the PodInfos of every nomination by node: one consistent
// view for a whole attempt, taken under one lock.
func (n *Nominator) infos() map[string][]*cache.PodInfo {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string][]*cache.PodInfo, len(n.byNode))
	for node, m := range n.byNode {
		l := make([]*cache.PodInfo, 0, len(m))
		for _, p := range m {
			l = append(l, p.info)
		}
		out[node] = l
	}
	return out
}

// NodeOf returns the node pod is nominated to, or "".
func (n *Nominator) NodeOf(uid types.UID) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodeOf[uid]
}

// empty reports whether no pod is nominated (the cycle's fast path).
func (n *Nominator) empty() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.nodeOf) == 0
}
