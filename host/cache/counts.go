package cache

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"
)

// Bounds of the selector indexes (Snapshot.PodCounts): at most
// maxPodCounts at once, the least recently read evicted first, and one
// unread for idleUpdates snapshot updates is dropped. Each index holds an
// entry per node with its topology key and per domain, so the memory is at
// most maxPodCounts times twice the number of nodes in map entries, and a
// changed node costs at most maxPodCounts matches per pod on it.
const (
	maxPodCounts = 64
	idleUpdates  = 64
)

// Domain is what a selector index holds for one topology domain: the
// snapshot's nodes in it and the matching pods on them.
type Domain struct{ Nodes, Pods int }

// PodCounts is a selector index: the pods on a snapshot's nodes that one
// matcher selects, counted per node and per topology domain of one key.
// Nodes without the key are in no domain and are not counted. It is the
// snapshot's, read-only for its user and valid until the snapshot next
// changes (UpdateSnapshot, Assume, Forget).
type PodCounts struct {
	key   string
	match func(*PodInfo) bool
	// nodes holds the nodes with the key and at least one matching pod.
	nodes   map[string]int
	domains map[string]Domain
	// pods is the sum of the domains' pods.
	pods int
	// read is the snapshot's update count when the index was last read.
	read uint64
}

// emptyCounts is what an empty snapshot answers; never written to.
var emptyCounts = &PodCounts{}

// Node is the number of matching pods on node name; 0 for a node without
// the topology key.
func (c *PodCounts) Node(name string) int { return c.nodes[name] }

// Pods is the number of matching pods on the nodes with the topology key.
func (c *PodCounts) Pods() int { return c.pods }

// Domains maps each topology value of the snapshot's nodes to its nodes and
// matching pods. The map belongs to the index: do not modify it.
func (c *PodCounts) Domains() map[string]Domain { return c.domains }

// countKey identifies a selector index.
type countKey struct{ id, topologyKey string }

// PodCounts returns the selector index of id for topologyKey: the pods
// match selects, per node and domain. id must determine match entirely
// (same id, same pods selected, whoever asks): the first caller's match is
// kept and used for every later change. The first read counts every pod of
// the snapshot (build); then replace, Assume and Forget keep the counts up
// to date, so a scheduling cycle reads them instead of walking every pod.
//
// Counts live in the snapshot rather than in the cache because the
// snapshot already sees each change once, node info by node info, both
// from the cache (UpdateSnapshot) and from a pod group's Assume and Forget;
// and because a cycle reads them without a lock.
func (s *Snapshot) PodCounts(id, topologyKey string, match func(*PodInfo) bool) *PodCounts {
	if len(s.list) == 0 {
		return emptyCounts
	}
	k := countKey{id, topologyKey}
	c := s.counts[k]
	if c == nil {
		if s.counts == nil {
			s.counts = make(map[countKey]*PodCounts)
		}
		if len(s.counts) >= maxPodCounts {
			s.evictCounts()
		}
		c = &PodCounts{key: topologyKey, match: match, nodes: map[string]int{}, domains: map[string]Domain{}}
		for _, n := range s.list {
			c.addNode(n)
		}
		s.counts[k] = c
	}
	c.read = s.updates
	return c
}

// evictCounts drops the least recently read selector index.
func (s *Snapshot) evictCounts() {
	var oldest countKey
	first := true
	for k, c := range s.counts {
		if first || c.read < s.counts[oldest].read {
			oldest, first = k, false
		}
	}
	delete(s.counts, oldest)
}

// dropIdle drops the indexes not read for idleUpdates updates; called once
// per UpdateSnapshot.
func (s *Snapshot) dropIdle() {
	s.updates++
	for k, c := range s.counts {
		if c.read+idleUpdates < s.updates {
			delete(s.counts, k)
		}
	}
	if s.terms != nil && s.terms.read+idleUpdates < s.updates {
		s.terms = nil
	}
}

// addNode counts n, a node info entering the snapshot.
func (c *PodCounts) addNode(n *NodeInfo) {
	v, ok := n.node.Labels[c.key]
	if !ok {
		return
	}
	cnt := 0
	for _, pi := range n.pods {
		if c.match(pi) {
			cnt++
		}
	}
	if cnt > 0 {
		c.nodes[n.node.Name] = cnt
	}
	d := c.domains[v]
	d.Nodes++
	d.Pods += cnt
	c.domains[v] = d
	c.pods += cnt
}

// removeNode uncounts n, a node info leaving the snapshot, by what addNode
// and addPod recorded for it.
func (c *PodCounts) removeNode(n *NodeInfo) {
	v, ok := n.node.Labels[c.key]
	if !ok {
		return
	}
	cnt := c.nodes[n.node.Name]
	delete(c.nodes, n.node.Name)
	c.pods -= cnt
	d := c.domains[v]
	d.Nodes--
	d.Pods -= cnt
	if d.Nodes > 0 {
		c.domains[v] = d
	} else {
		delete(c.domains, v)
	}
}

// addPod adds delta for pi, a pod added to (1) or removed from (-1) n.
func (c *PodCounts) addPod(n *NodeInfo, pi *PodInfo, delta int) {
	v, ok := n.node.Labels[c.key]
	if !ok || !c.match(pi) {
		return
	}
	name := n.node.Name
	if cnt := c.nodes[name] + delta; cnt > 0 {
		c.nodes[name] = cnt
	} else {
		delete(c.nodes, name)
	}
	d := c.domains[v]
	d.Pods += delta
	c.domains[v] = d
	c.pods += delta
}

// TermKind is the kind of an existing pod's inter-pod affinity term.
type TermKind int8

const (
	RequiredAffinity TermKind = iota
	RequiredAntiAffinity
	PreferredAffinity
	PreferredAntiAffinity
	numTermKinds
)

// TermCounts is one distinct term carried by pods of the snapshot, with
// the number of carriers per topology domain of its key. Term is one
// carrier's copy, read-only.
type TermCounts struct {
	Term   *fwk.AffinityTerm
	Weight int32 // the preferred terms' weight, 0 for required ones
	// Domains maps each value of Term.TopologyKey to the pods carrying the
	// term on nodes with that value (a pod counts once per copy).
	Domains map[string]int
	// pods is the number of carriers on every node, those without the
	// key included: the term leaves the index when it drops to 0; keyed
	// those on nodes with the key (the sum of Domains).
	pods, keyed int
}

// Pods is the number of pods carrying the term on nodes with its topology
// key: the sum of Domains.
func (tc *TermCounts) Pods() int { return tc.keyed }

// termIndex is the distinct terms of the snapshot's pods, per kind and
// key (PodAffinity.keys). A term is matched against the incoming pod at
// read time, with its namespace's labels as they are then, so a term with
// a namespaceSelector needs no invalidation when namespace labels change.
type termIndex struct {
	kinds [numTermKinds]map[string]*TermCounts
	read  uint64
}

// AffinityTerms returns the distinct terms of kind carried by the pods of
// the snapshot (assumed pods included), with their carriers per domain. The
// first read walks the pods with affinity terms; then replace, Assume and
// Forget keep the index up to date. The map and its values belong to the
// snapshot: do not modify them.
func (s *Snapshot) AffinityTerms(kind TermKind) map[string]*TermCounts {
	if len(s.list) == 0 {
		return nil
	}
	if s.terms == nil {
		s.terms = &termIndex{}
		for k := range s.terms.kinds {
			s.terms.kinds[k] = map[string]*TermCounts{}
		}
		for _, n := range s.list {
			for _, pi := range n.withAffinity {
				s.terms.addPod(n, pi, 1)
			}
		}
	}
	s.terms.read = s.updates
	return s.terms.kinds[kind]
}

// addPod adds (delta 1) or removes (-1) the terms of pi, a pod on n.
func (ti *termIndex) addPod(n *NodeInfo, pi *PodInfo, delta int) {
	pa := pi.Affinity
	if !pa.HasAny() {
		return
	}
	for i := range pa.Required {
		ti.add(RequiredAffinity, pa.keys[RequiredAffinity][i], &pa.Required[i], 0, n, delta)
	}
	for i := range pa.RequiredAnti {
		ti.add(RequiredAntiAffinity, pa.keys[RequiredAntiAffinity][i], &pa.RequiredAnti[i], 0, n, delta)
	}
	for i := range pa.Preferred {
		t := &pa.Preferred[i]
		ti.add(PreferredAffinity, pa.keys[PreferredAffinity][i], &t.AffinityTerm, t.Weight, n, delta)
	}
	for i := range pa.PreferredAnti {
		t := &pa.PreferredAnti[i]
		ti.add(PreferredAntiAffinity, pa.keys[PreferredAntiAffinity][i], &t.AffinityTerm, t.Weight, n, delta)
	}
}

func (ti *termIndex) add(kind TermKind, key string, t *fwk.AffinityTerm, weight int32, n *NodeInfo, delta int) {
	m := ti.kinds[kind]
	tc := m[key]
	if tc == nil {
		tc = &TermCounts{Term: t, Weight: weight, Domains: map[string]int{}}
		m[key] = tc
	}
	tc.pods += delta
	if tc.pods <= 0 {
		delete(m, key)
		return
	}
	v, ok := n.node.Labels[t.TopologyKey]
	if !ok {
		return
	}
	tc.keyed += delta
	if c := tc.Domains[v] + delta; c > 0 {
		tc.Domains[v] = c
	} else {
		delete(tc.Domains, v)
	}
}

// countNode adds (sign 1) or removes (-1) everything n contributes to the
// indexes, for replace.
func (s *Snapshot) countNode(n *NodeInfo, sign int) {
	for _, c := range s.counts {
		if sign > 0 {
			c.addNode(n)
		} else {
			c.removeNode(n)
		}
	}
	if s.terms != nil {
		for _, pi := range n.withAffinity {
			s.terms.addPod(n, pi, sign)
		}
	}
}

// countPod adds (delta 1) or removes (-1) pi, a pod of n, in the indexes,
// for Assume and Forget.
func (s *Snapshot) countPod(n *NodeInfo, pi *PodInfo, delta int) {
	for _, c := range s.counts {
		c.addPod(n, pi, delta)
	}
	if s.terms != nil {
		s.terms.addPod(n, pi, delta)
	}
}

// dropCounts drops every index, for nodes that came or went.
func (s *Snapshot) dropCounts() {
	clear(s.counts)
	s.terms = nil
}

// SelectorKey is a canonical form of sel for index ids: equal keys select
// the same labels. Nothing (nil included) and Everything differ.
func SelectorKey(sel labels.Selector) string {
	if sel == nil {
		return "!"
	}
	if _, selectable := sel.Requirements(); !selectable {
		return "!"
	}
	return "=" + sel.String()
}

// TermKey is a canonical form of t and weight for index ids: equal keys
// match the same pods with the same namespace labels.
func TermKey(t *fwk.AffinityTerm, weight int32) string {
	var b strings.Builder
	b.WriteString(t.TopologyKey)
	b.WriteByte('|')
	if weight != 0 {
		b.WriteString(strconv.Itoa(int(weight)))
	}
	b.WriteByte('|')
	ns := t.Namespaces.UnsortedList()
	slices.Sort(ns)
	for i, n := range ns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
	}
	b.WriteByte('|')
	b.WriteString(SelectorKey(t.NamespaceSelector))
	b.WriteByte('|')
	b.WriteString(SelectorKey(t.Selector))
	return b.String()
}
