package framework

import (
	"bytes"

	"github.com/wasmsched/wasmsched/host/cache"
)

// NodeLocal is implemented by a PodFilter or PodScorer whose verdict or raw
// score for a node is a function of the pod's spec and of that node's info
// alone: not of other nodes, other pods' placements elsewhere, the list it
// is scored in, or anything outside the cache (a DeviceClass, a claim).
// NodeLocal reports whether this pod's filter or scorer is, since that can
// depend on what the pod asks for. A Memo reuses what such filters and
// scorers found on an unchanged node for the next pod with the same spec.
type NodeLocal interface {
	NodeLocal() bool
}

// ScorerWrapper is implemented by a PodScorer that wraps another (the
// cycle's timed scorers), so that the memo can ask the plugin's own scorer
// whether it is NodeLocal.
type ScorerWrapper interface {
	Unwrap() PodScorer
}

func nodeLocal(v any) bool {
	for {
		switch w := v.(type) {
		case FilterWrapper:
			v = w.Unwrap()
		case ScorerWrapper:
			v = w.Unwrap()
		case NodeLocal:
			return w.NodeLocal()
		default:
			return false
		}
	}
}

// maxMemoSlots bounds the profile's PreScore plugins whose raw scores a
// memo keeps (a bit each in memoEntry.scored).
const maxMemoSlots = 64

// Memo keeps, per node of the snapshot, the verdict of a pod's filters and
// the raw score of each of its scorers, for the next pods with the same
// spec: a node whose info has not changed gets the same verdict and scores
// again without running them. Pods of a Deployment or Job have one spec,
// and placing one changes only its node, so the next pod of the same spec
// filters and scores one node afresh instead of all of them.
//
// It is exact, not a heuristic: it is used only when every filter of the
// pod is NodeLocal (so no inter-pod affinity, spreading, volumes, claims or
// Wasm filter), the pod's nodes are not restricted, it carries no container
// statuses and no emptyDir size limit, and the snapshot is not Altered;
// nodes with nominated pods are filtered afresh; only NodeLocal scorers are
// reused. A snapshot's node infos never change once handed out unless it is
// Altered, so a NodeInfo pointer identifies a node's contents: the memo
// compares pointers and reads no node info (reading each one's generation
// was a cache miss per node, as costly as the filters it saved).
//
// It keeps what it found for the last memoSpecs specs, so that pods of a
// few Deployments arriving interleaved (or the kinds of a mix) do not make
// each other start over; a new spec or profile takes the least recently
// used one's place. It holds on to up to one stale NodeInfo per node and
// spec.
//
// The scheduling loop keeps one Memo and hands it to each pod's state
// (PodState.UseMemo); a Memo is not safe for concurrent use by two cycles.
// Its zero value is ready.
type Memo struct {
	sets [memoSpecs]memoSet
	next []byte // the spec being looked up
	tick uint64 // counts lookups, for the least recently used set
}

// memoSpecs is how many specs a Memo keeps what it found for: a set costs
// about 40 bytes per node plus 8 per node and scorer.
const memoSpecs = 4

// memoSet is what a Memo keeps for one spec.
type memoSet struct {
	prof    *Profile // the profile the entries are for (its results)
	spec    []byte   // the spec the entries are for
	used    uint64   // Memo.tick when last used
	epoch   uint64   // entries of another epoch are empty
	entries []memoEntry
	raw     []int64 // raw scores, one per entry and PreScore of prof

	// at holds, for each feasible node FindFeasible returned, its index
	// in entries; missNodes, missAt and missRaw are Score's scratch.
	at        []int32
	missNodes []*cache.NodeInfo
	missAt    []int32
	missRaw   []int64
}

// memoEntry is what a node's filters and scorers found on one node info
// for the memo's spec.
type memoEntry struct {
	epoch    uint64
	ni       *cache.NodeInfo // kept alive, so no other node info gets its address
	st       *Status         // the filters' verdict when filtered
	filtered bool
	scored   uint64 // bit i: raw score of PreScore slot i is kept
}

// current reports whether e holds what was found on ni in this epoch, and
// makes it empty for ni otherwise.
func (m *memoSet) current(e *memoEntry, ni *cache.NodeInfo) bool {
	if e.epoch == m.epoch && e.ni == ni {
		return true
	}
	*e = memoEntry{epoch: m.epoch, ni: ni}
	return false
}

// UseMemo lets FindFeasible and Score reuse m for the pod over nodes (the
// snapshot's list FindFeasible is given), if the pod qualifies (see Memo);
// it reports whether it does. It costs one encoding of the pod's spec.
func (ps *PodState) UseMemo(memo *Memo, nodes []*cache.NodeInfo) bool {
	ps.memo = nil
	if memo == nil || ps.batch != nil || ps.updaters != nil || ps.nodeNames != nil || ps.pod.Pod == nil || ps.snap.Altered() {
		return false
	}
	st := &ps.pod.Pod.Status
	if len(st.ContainerStatuses)+len(st.InitContainerStatuses)+len(st.EphemeralContainerStatuses) > 0 {
		return false
	}
	for _, f := range ps.filters {
		if !nodeLocal(f) {
			return false
		}
	}
	spec := &ps.pod.Pod.Spec
	// Encoding a resource.Quantity caches its string in it: the requests
	// are encoded from copies (map values), but an emptyDir's size limit
	// is a pointer into the informer's pod, which nothing here may write.
	for i := range spec.Volumes {
		if ed := spec.Volumes[i].EmptyDir; ed != nil && ed.SizeLimit != nil {
			return false
		}
	}
	n := spec.Size()
	if cap(memo.next) < n {
		memo.next = make([]byte, n)
	}
	memo.next = memo.next[:n]
	if _, err := spec.MarshalToSizedBuffer(memo.next); err != nil {
		return false
	}
	prof := ps.profile.results()
	m, found := &memo.sets[0], false
	for i := range memo.sets {
		s := &memo.sets[i]
		if found = s.prof == prof && bytes.Equal(s.spec, memo.next); found {
			m = s
			break
		}
		if s.used < m.used {
			m = s
		}
	}
	if !found {
		// The least recently used set starts over for this spec.
		m.prof = prof
		m.spec, memo.next = memo.next, m.spec
		m.epoch++
	}
	memo.tick++
	m.used = memo.tick
	if more := len(nodes) - len(m.entries); more > 0 {
		m.entries = append(m.entries, make([]memoEntry, more)...)
	}
	if more := len(nodes)*len(prof.preScores) - len(m.raw); more > 0 {
		m.raw = append(m.raw, make([]int64, more)...)
	}
	m.at = m.at[:0]
	ps.memo = m
	return true
}

// filterAt is filterNative for nodes[i] of the list FindFeasible was
// given, through the memo when the pod uses one. Workers call it for
// distinct i at once.
func (ps *PodState) filterAt(i int, ni *cache.NodeInfo) *Status {
	m := ps.memo
	if m == nil {
		return filterNative(ps, ni)
	}
	if ps.nominated != nil && ni.Node() != nil {
		if _, ok := ps.nominated[ni.Node().Name]; ok {
			return filterNative(ps, ni)
		}
	}
	// A verdict is kept only for a node info with a node (without one,
	// filterNative's verdict is an Error).
	e := &m.entries[i]
	if m.current(e, ni) && e.filtered {
		return e.st
	}
	st := filterNative(ps, ni)
	if st == nil || st.Code != Error {
		e.st, e.filtered = st, true
	}
	return st
}

// feasibleAt records that the next feasible node returned is nodes[i].
func (ps *PodState) feasibleAt(i int) {
	if m := ps.memo; m != nil {
		m.at = append(m.at, int32(i))
	}
}

// scoreMemo writes s's raw scores for nodes into raw: those kept for an
// unchanged node, the others from one call of s over the rest, which it
// keeps. It reports false, writing nothing, when s is not NodeLocal or the
// memo cannot say where nodes are (a list FindFeasible did not return); an
// entry is only ever used for the NodeInfo it was found on, so a wrong
// place costs reuse, never a wrong score.
func (ps *PodState) scoreMemo(s weightedScorer, nodes []*cache.NodeInfo, raw []int64) bool {
	m := ps.memo
	if m == nil || !s.local || len(m.at) != len(nodes) {
		return false
	}
	bit, slots := uint64(1)<<s.slot, len(m.prof.preScores)
	m.missNodes, m.missAt = m.missNodes[:0], m.missAt[:0]
	for k, ni := range nodes {
		i := int(m.at[k])
		if e := &m.entries[i]; m.current(e, ni) && e.scored&bit != 0 {
			raw[k] = m.raw[i*slots+s.slot]
			continue
		}
		m.missNodes = append(m.missNodes, ni)
		m.missAt = append(m.missAt, int32(k))
	}
	if len(m.missNodes) == 0 {
		return true
	}
	if cap(m.missRaw) < len(m.missNodes) {
		m.missRaw = make([]int64, len(m.missNodes))
	}
	got := m.missRaw[:len(m.missNodes)]
	s.scorer.Score(m.missNodes, got)
	for j, k := range m.missAt {
		i := int(m.at[k])
		raw[k] = got[j]
		m.raw[i*slots+s.slot] = got[j]
		m.entries[i].scored |= bit
	}
	return true
}
