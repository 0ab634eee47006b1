package cache

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Snapshot is the cluster as one scheduling cycle sees it: the node infos of
// the cache's nodes at one generation, readable without locks while the cache
// keeps changing. Build one with NewSnapshot (or use a zero Snapshot) and
// refresh it with Cache.UpdateSnapshot at the start of every cycle.
//
// A snapshot's node infos are immutable: the cache hands the same clone to
// every snapshot that asks for a node at the same generation, and
// NewSnapshot's caller may keep using the node infos it passed. Assume and
// Forget therefore change a node copy-on-write: the first change to a node in
// a snapshot replaces its node info with a private clone, and the next
// UpdateSnapshot puts the shared one back (see there).
//
// A Snapshot is used by one goroutine at a time (the cycle); its methods do
// not lock. A node info obtained from it never changes while it is held,
// with one exception: the private clone of a node the snapshot already
// changed, which later Assume and Forget calls on that node change in place.
type Snapshot struct {
	// nodes holds the node infos that have a node, by name.
	nodes map[string]*NodeInfo
	// list is nodes' values sorted by node name, so that List does not
	// allocate and its order does not depend on the order of updates.
	list []*NodeInfo
	// generation is the cache generation the snapshot reflects: every node
	// info the cache changed after it is stale here.
	generation int64
	// shared maps each node this snapshot changed with Assume or Forget to
	// the shared node info its private clone replaced.
	shared map[string]*NodeInfo
	// assumed maps the pods placed with Assume to their node.
	assumed map[types.UID]string

	// images counts the nodes of list that have each image (by every name
	// node.status.images gives it), for ImageLocality's spread; rebuilt on
	// first use after a node object changed (imagesStale).
	images      map[string]int
	imagesStale bool
	// claims counts the pods of list using each claim, by
	// "namespace/name" (upstream's usedPVCRefCounts, for
	// VolumeRestrictions' ReadWriteOncePod check): counted on first use
	// after nodes came or went (nil or claimsStale), then kept up to date
	// by replace, Assume and Forget, at no cost for pods without claims.
	claims      map[string]int
	claimsStale bool
	// counts are the selector indexes (PodCounts) and terms the term index
	// (AffinityTerms): built on first read, then kept up to date by
	// replace, Assume and Forget; dropped when nodes come or go, and when
	// unread for idleUpdates updates (updates counts UpdateSnapshot calls).
	counts  map[countKey]*PodCounts
	terms   *termIndex
	updates uint64
	// changes counts the calls that may change the node infos and the
	// indexes: UpdateSnapshot, Assume and Forget (Changes).
	changes uint64
}

// NewSnapshot returns a snapshot of nodes. Node infos without a node are left
// out, and of two node infos for one node name the later wins. The node infos
// are not copied (Assume and Forget never change them).
func NewSnapshot(nodes ...*NodeInfo) *Snapshot {
	s := &Snapshot{nodes: make(map[string]*NodeInfo, len(nodes))}
	for _, n := range nodes {
		if n != nil && n.node != nil {
			s.nodes[n.node.Name] = n
		}
	}
	s.rebuildList()
	return s
}

// List returns the node infos that have a node, sorted by node name (upstream
// interleaves zones with its node tree; the cycle rotates its starting node,
// so a fixed order spreads pods as well). The slice belongs to the snapshot:
// it must not be modified, and Assume, Forget and UpdateSnapshot change its
// elements.
func (s *Snapshot) List() []*NodeInfo { return s.list }

// HasImages reports whether any node of the snapshot lists an image.
func (s *Snapshot) HasImages() bool {
	s.refreshImages()
	return len(s.list) > 0 && len(s.images) > 0
}

// ImageNodes is how many nodes of the snapshot list image among
// node.status.images (under any of its names).
func (s *Snapshot) ImageNodes(image string) int {
	if len(s.list) == 0 {
		return 0
	}
	s.refreshImages()
	return s.images[image]
}

// refreshImages recounts the nodes per image if a node object changed
// since the last count. A snapshot without nodes is never written to, so
// that an empty snapshot can be shared between goroutines.
func (s *Snapshot) refreshImages() {
	if len(s.list) == 0 || (!s.imagesStale && s.images != nil) {
		return
	}
	if s.images == nil {
		s.images = make(map[string]int)
	}
	clear(s.images)
	for _, n := range s.list {
		for _, img := range n.node.Status.Images {
			for _, name := range img.Names {
				s.images[name]++
			}
		}
	}
	s.imagesStale = false
}

// ClaimInUse reports whether any pod on a node of the snapshot (assumed
// pods included) uses the claim key ("namespace/name", ClaimKey) as a
// persistentVolumeClaim volume (upstream's IsPVCUsedByPods).
func (s *Snapshot) ClaimInUse(key string) bool {
	if len(s.list) == 0 {
		return false
	}
	if !s.claimsCounted() {
		if s.claims == nil {
			s.claims = make(map[string]int)
		}
		clear(s.claims)
		for _, n := range s.list {
			for k, c := range n.claims {
				s.claims[k] += c
			}
		}
		s.claimsStale = false
	}
	return s.claims[key] > 0
}

// countClaims adds sign times the claims of keys to the snapshot's counts,
// when they are up to date (otherwise the next ClaimInUse recounts).
func (s *Snapshot) countClaims(keys map[string]int, sign int) {
	if !s.claimsCounted() {
		return
	}
	for k, c := range keys {
		s.countClaim(k, sign*c)
	}
}

// countClaim adds delta to the count of claim key; the counts must be up
// to date.
func (s *Snapshot) countClaim(key string, delta int) {
	if c := s.claims[key] + delta; c > 0 {
		s.claims[key] = c
	} else {
		delete(s.claims, key)
	}
}

// claimsCounted reports whether the claim counts are up to date.
func (s *Snapshot) claimsCounted() bool { return s.claims != nil && !s.claimsStale }

// Get returns the node info of node name, or nil.
func (s *Snapshot) Get(name string) *NodeInfo { return s.nodes[name] }

// NumNodes is the number of node infos in List.
func (s *Snapshot) NumNodes() int { return len(s.list) }

// Generation is the cache generation the snapshot was last updated to; 0 for
// a snapshot no cache has updated.
func (s *Snapshot) Generation() int64 { return s.generation }

// Changes counts the calls that may have changed the snapshot since it was
// made (UpdateSnapshot, Assume, Forget). A state that reads the indexes in
// place (PodCounts, AffinityTerms) across calls is valid while it is
// unchanged.
func (s *Snapshot) Changes() uint64 { return s.changes }

// Altered reports whether Assume or Forget changed a node since the last
// UpdateSnapshot: that node's info is then the snapshot's private clone,
// which later calls change in place. Every other node info it hands out
// never changes, so its pointer identifies its contents.
func (s *Snapshot) Altered() bool { return len(s.shared) > 0 }

// Assume places pi on node pi.Pod.Spec.NodeName in this snapshot only, so
// that a pod group's later members are filtered with the earlier ones in
// place before anything is assumed in the cache. The node info the snapshot
// shares is not changed: the node gets a private clone first.
func (s *Snapshot) Assume(pi *PodInfo) error {
	pod := pi.Pod
	name := pod.Spec.NodeName
	if name == "" {
		return fmt.Errorf("assume pod %s/%s in snapshot: spec.nodeName is empty", pod.Namespace, pod.Name)
	}
	if prev, ok := s.assumed[pod.UID]; ok {
		return fmt.Errorf("assume pod %s/%s in snapshot: already assumed on node %q", pod.Namespace, pod.Name, prev)
	}
	n := s.nodes[name]
	if n == nil {
		return fmt.Errorf("assume pod %s/%s in snapshot: node %q is not in the snapshot", pod.Namespace, pod.Name, name)
	}
	if hasPod(n, pod.UID) {
		return fmt.Errorf("assume pod %s/%s in snapshot: already on node %q", pod.Namespace, pod.Name, name)
	}
	s.changes++
	w := s.writable(name)
	w.AddPod(pi)
	s.countPod(w, pi, 1)
	if s.claimsCounted() {
		for _, k := range pi.Claims {
			s.countClaim(k, 1)
		}
	}
	if s.assumed == nil {
		s.assumed = make(map[types.UID]string)
	}
	s.assumed[pod.UID] = name
	return nil
}

// Forget removes the pod with uid from node nodeName in this snapshot only,
// copy-on-write as Assume. It undoes Assume, and it also removes pods the
// snapshot got from the cache (a preemption dry run removes victims this
// way). Forgetting a pod that is not there does nothing.
func (s *Snapshot) Forget(uid types.UID, nodeName string) {
	n := s.nodes[nodeName]
	if n == nil || !hasPod(n, uid) {
		return
	}
	s.changes++
	w := s.writable(nodeName)
	pi := w.pods[slices.IndexFunc(w.pods, func(pi *PodInfo) bool { return pi.Pod.UID == uid })]
	if s.claimsCounted() {
		for _, k := range pi.Claims {
			s.countClaim(k, -1)
		}
	}
	s.countPod(w, pi, -1)
	w.RemovePod(uid)
	if s.assumed[uid] == nodeName {
		delete(s.assumed, uid)
	}
}

// writable returns the snapshot's private node info for name, cloning the
// shared one on first use.
func (s *Snapshot) writable(name string) *NodeInfo {
	n := s.nodes[name]
	if _, ok := s.shared[name]; ok {
		return n
	}
	if s.shared == nil {
		s.shared = make(map[string]*NodeInfo)
	}
	s.shared[name] = n
	c := n.Clone()
	s.replace(name, c)
	return c
}

// revert drops every change Assume and Forget made, putting the shared node
// infos back. They are the ones of s.generation, which UpdateSnapshot then
// brings up to date like any other.
func (s *Snapshot) revert() {
	for name, n := range s.shared {
		s.replace(name, n)
	}
	clear(s.shared)
	clear(s.assumed)
}

// replace swaps the node info of name, a node in the snapshot, for n.
func (s *Snapshot) replace(name string, n *NodeInfo) {
	old := s.nodes[name]
	if old != nil {
		s.countNode(old, -1)
	}
	s.nodes[name] = n
	s.countNode(n, 1)
	if i, ok := s.index(name); ok {
		s.list[i] = n
	}
	if old == nil || old.node != n.node {
		s.imagesStale = true
	}
	if old == nil {
		s.claimsStale = true
	} else if len(old.claims) > 0 || len(n.claims) > 0 {
		s.countClaims(old.claims, -1)
		s.countClaims(n.claims, 1)
	}
}

// index is the position of node name in the sorted list.
func (s *Snapshot) index(name string) (int, bool) {
	return slices.BinarySearchFunc(s.list, name, func(n *NodeInfo, name string) int {
		return strings.Compare(n.node.Name, name)
	})
}

// rebuildList rebuilds list from nodes, after nodes were added or removed.
func (s *Snapshot) rebuildList() {
	s.list = s.list[:0]
	for _, n := range s.nodes {
		s.list = append(s.list, n)
	}
	clear(s.list[len(s.list):cap(s.list)]) // drop removed node infos
	slices.SortFunc(s.list, func(a, b *NodeInfo) int { return cmp.Compare(a.node.Name, b.node.Name) })
	s.imagesStale, s.claimsStale = true, true
	s.dropCounts()
}

func hasPod(n *NodeInfo, uid types.UID) bool {
	return slices.ContainsFunc(n.pods, func(pi *PodInfo) bool { return pi.Pod.UID == uid })
}
