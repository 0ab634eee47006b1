package framework

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/wasmsched/wasmsched/host/cache"
)

// PodState is what the filters and scorers of a profile need from one pod,
// worked out once per scheduling cycle by Prepare (upstream's PreFilter) and
// Score (PreScore), so that looking at a node does not redo it: the filters
// of the plugins that apply to the pod, the scorers with their weights, and
// the nodes the pod is restricted to. It is safe for concurrent use by the
// filters; it must not be copied (Clone does).
type PodState struct {
	pod     *cache.PodInfo
	profile *Profile
	snap    *cache.Snapshot

	// filters are the pod's filters in profile order, the skipped plugins
	// left out; scorers likewise. They point into the arrays below unless
	// a profile has more plugins than those hold, so that Prepare does not
	// allocate for them (TestStateArraysHoldDefault says when to grow
	// them).
	filters   []PodFilter
	scorers   []weightedScorer
	filterArr [15]PodFilter
	scorerArr [10]weightedScorer
	// batch are the pod's BatchFilters, in profile order; they run after
	// filters (nil: none, the usual case).
	batch []BatchFilter
	// updaters are the indexes in filters of the PodUpdaters (nil for
	// none: a pod without inter-pod affinity or spread constraints).
	updaters []int
	// nominated holds, per node with pods nominated to it, the node with
	// them added and a state that saw them added (AddNominated); nil when
	// none.
	nominated map[string]nominatedNode
	// memo is what the scheduling loop's Memo keeps for the pod's spec
	// (UseMemo); nil otherwise.
	memo *memoSet

	// nodeNames restricts the nodes worth filtering (sorted): the
	// intersection of the PreFilters' node names. nil means every node;
	// restrictedBy names the plugins that restricted (sorted), absent is
	// the status of the nodes left out.
	nodeNames    []string
	restrictedBy []string
	absent       *Status

	// kept are the filters of the plugins that also reserve, pre-bind or
	// score what their filter found
	// (PluginFilter); nil when the profile has none.
	kept []keptFilter
	// data is what reserve and preBind plugins store for the pod (Write),
	// from the cycle into the binding goroutine; nil until written.
	dataMu sync.Mutex
	data   map[string]any
	// preBindSkip has bit i set when the profile's i-th preBind plugin
	// answered Skip to PreBindPreFlight (the binding goroutine's alone).
	preBindSkip uint64
}

// skipPreBind records that the i-th preBind plugin has nothing to do.
func (s *PodState) skipPreBind(i int) {
	if s != nil && i < 64 {
		s.preBindSkip |= 1 << i
	}
}

// preBindSkipped reports whether the i-th preBind plugin answered Skip.
func (s *PodState) preBindSkipped(i int) bool {
	return s != nil && i < 64 && s.preBindSkip&(1<<i) != 0
}

type keptFilter struct {
	plugin string
	filter PodFilter
}

type weightedScorer struct {
	scorer    PodScorer
	weight    int64
	normalize bool // scorer is a ScoreNormalizer
	local     bool // a Memo keeps its raw scores: NodeLocal, slot < maxMemoSlots
	slot      int  // index of its plugin in the profile's PreScores
}

// emptySnapshot is what Prepare works with when given no snapshot: a
// cluster without nodes, built on first use and never changed.
var emptySnapshot = sync.OnceValue(func() *cache.Snapshot { return cache.NewSnapshot() })

// Prepare works out pod's state for a cycle on snap (the cluster the pod
// is placed in; nil is an empty one): the unsupported-constraint
// placeholders first, then each PreFilter in profile order. A non-nil Status
// is upstream's PreFilter rejecting the pod before any node is looked at
// (UnschedulableAndUnresolvable: its required node affinity names no node
// any term agrees on, the plugins' node restrictions agree on none, or it
// carries a constraint only an unimplemented plugin checks), or an Error;
// PodState is nil then. The scorers are worked out later, by Score, for the
// nodes found feasible.
func (p *Profile) Prepare(pod *cache.PodInfo, snap *cache.Snapshot) (*PodState, *Status) {
	if pod == nil || pod.Pod == nil {
		return nil, &Status{Code: Error, Err: errors.New("prepare a nil pod")}
	}
	if st := p.refuseUnsupported(pod.Pod); st != nil {
		return nil, st
	}
	if snap == nil {
		snap = emptySnapshot() // tests and tools: a cluster without nodes
	}
	ps := &PodState{pod: pod, profile: p, snap: snap}
	ps.filters, ps.scorers = ps.filterArr[:0], ps.scorerArr[:0]
	var last string // the last plugin that restricted the nodes
	for i, pl := range p.preFilters {
		filter, nodeNames, st := pl.PreFilter(pod, snap)
		if st != nil {
			return nil, st
		}
		if p.keep != nil && p.keep[i] && filter != nil {
			ps.kept = append(ps.kept, keptFilter{pl.Name(), filter})
		}
		if b, ok := filter.(BatchFilter); ok && !p.noFilter[i] {
			ps.batch = append(ps.batch, b)
			filter = nil
		}
		if filter != nil && !p.noFilter[i] {
			if _, ok := filter.(PodUpdater); ok {
				ps.updaters = append(ps.updaters, len(ps.filters))
			}
			ps.filters = append(ps.filters, filter)
		}
		if nodeNames != nil {
			last = pl.Name()
			ps.restrictedBy = append(ps.restrictedBy, last)
			if ps.nodeNames == nil {
				ps.nodeNames = nodeNames
			} else {
				ps.nodeNames = slices.DeleteFunc(slices.Clone(ps.nodeNames), func(n string) bool {
					_, found := slices.BinarySearch(nodeNames, n)
					return !found
				})
			}
		}
	}
	if st := ps.restrict(last); st != nil {
		return nil, st
	}
	return ps, nil
}

// preScore runs the profile's PreScores for nodes, the feasible nodes about
// to be scored, into ps.scorers.
func (ps *PodState) preScore(nodes []*cache.NodeInfo) *Status {
	ps.scorers = ps.scorerArr[:0]
	for slot, s := range ps.profile.preScores {
		var sc PodScorer
		var st *Status
		if s.state != nil {
			sc, st = s.state.PreScoreState(ps, nodes)
		} else {
			sc, st = s.plugin.PreScore(ps.pod, nodes, ps.snap)
		}
		if st != nil {
			return st
		}
		if sc != nil {
			_, n := sc.(ScoreNormalizer)
			ws := weightedScorer{scorer: sc, weight: s.weight, normalize: n, slot: slot}
			ws.local = ps.memo != nil && slot < maxMemoSlots && nodeLocal(sc)
			ps.scorers = append(ps.scorers, ws)
		}
	}
	return nil
}

// restrict checks the merged node names of the PreFilters, as upstream's
// RunPreFilterPlugins: nodes the restricting plugins agree on none of reject
// the pod (the status names last, the last restricting plugin in profile
// order, for requeueing); otherwise the nodes left out get absent,
// "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]".
func (ps *PodState) restrict(last string) *Status {
	if ps.restrictedBy == nil {
		return nil
	}
	slices.Sort(ps.restrictedBy)
	if len(ps.nodeNames) == 0 {
		msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", ps.restrictedBy)
		if len(ps.restrictedBy) == 1 {
			msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", ps.restrictedBy[0])
		}
		return &Status{Code: UnschedulableAndUnresolvable, Plugin: last, Reasons: []string{msg}}
	}
	ps.absent = &Status{Code: UnschedulableAndUnresolvable,
		Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", ps.restrictedBy)}}
	return nil
}

// Done ends the pod's scheduling cycle for its filters: those that hold
// something for it (Releaser) let go. The cycle calls it once the pod is
// placed or found unschedulable, preemption's dry runs included; Clones
// share the originals' holds. It is nil-safe, and idempotent.
func (ps *PodState) Done() {
	if ps == nil {
		return
	}
	for _, b := range ps.batch {
		if r, ok := b.(Releaser); ok {
			r.Release()
		}
	}
}

// Pod is the pod the state was prepared for.
func (ps *PodState) Pod() *cache.PodInfo { return ps.pod }

// FilterWrapper is implemented by a PodFilter that wraps another (the
// cycle's timed filters): PluginFilter unwraps it.
type FilterWrapper interface {
	Unwrap() PodFilter
}

// PluginFilter returns the filter plugin's PreFilter returned for the pod,
// nil if it skipped the pod: how a plugin's Reserve and PreBind reach what
// its PreFilter and filter worked out (upstream's CycleState data written
// in PreFilter), since the filter is the plugin's per-pod state. Only the
// filters of plugins that also reserve, pre-bind or score what their filter
// found (StatePreScorePlugin) are kept, even when
// their filter is disabled.
func (ps *PodState) PluginFilter(plugin string) PodFilter {
	for _, k := range ps.kept {
		if k.plugin == plugin {
			return Unwrap(k.filter)
		}
	}
	return nil
}

// Write stores v under key for the pod (upstream's CycleState.Write):
// what a reserve or preBind plugin keeps between its points, from the
// scheduling cycle into the pod's binding goroutine. Keys are the plugin's
// name or start with it. Safe for concurrent use.
func (ps *PodState) Write(key string, v any) {
	ps.dataMu.Lock()
	defer ps.dataMu.Unlock()
	if ps.data == nil {
		ps.data = make(map[string]any)
	}
	ps.data[key] = v
}

// Read returns what Write stored under key.
func (ps *PodState) Read(key string) (any, bool) {
	ps.dataMu.Lock()
	defer ps.dataMu.Unlock()
	v, ok := ps.data[key]
	return v, ok
}

// Delete removes key.
func (ps *PodState) Delete(key string) {
	ps.dataMu.Lock()
	defer ps.dataMu.Unlock()
	delete(ps.data, key)
}

// candidates returns the nodes the pod is restricted to, in nodes' order, or
// nodes itself when it is not restricted.
func (ps *PodState) candidates(nodes []*cache.NodeInfo) []*cache.NodeInfo {
	if ps.nodeNames == nil {
		return nodes
	}
	var out []*cache.NodeInfo
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			if _, ok := slices.BinarySearch(ps.nodeNames, n.Name); ok {
				out = append(out, ni)
			}
		}
	}
	return out
}

// Clone returns a state that preemption's dry run may update with AddPod and
// RemovePod: ps itself when no filter of the pod keeps state about other
// pods, a copy with those filters cloned otherwise. The copy leaves out the
// nominated pods AddNominated added: a dry run adds those itself.
func (ps *PodState) Clone() *PodState {
	if ps.updaters == nil {
		return ps
	}
	c := &PodState{pod: ps.pod, profile: ps.profile, snap: ps.snap, updaters: ps.updaters, batch: ps.batch,
		nodeNames: ps.nodeNames, restrictedBy: ps.restrictedBy, absent: ps.absent, kept: ps.kept}
	c.filters = append(c.filterArr[:0], ps.filters...)
	c.scorers = append(c.scorerArr[:0], ps.scorers...)
	for _, i := range c.updaters {
		c.filters[i] = c.filters[i].(PodUpdater).Clone()
	}
	return c
}

// Detach makes the pod's filters independent of the snapshot they were
// prepared on (Detacher), for a caller that goes on filtering with the
// state after it changed the snapshot with Assume or Forget.
func (ps *PodState) Detach() {
	for _, f := range ps.filters {
		if d, ok := Unwrap(f).(Detacher); ok {
			d.Detach()
		}
	}
	for _, nn := range ps.nominated {
		if nn.ps != ps { // Clone returns ps when no filter keeps counts
			nn.ps.Detach()
		}
	}
}

// AddPod tells the filters that keep state about other pods that pod was
// added to ni's node (already changed), as preemption's dry run puts back a
// reprieved victim or a nominated pod (upstream's AddPod extension). It does
// nothing when none does. Call it on a Clone, never on the state a cycle
// filters with.
func (ps *PodState) AddPod(pod *cache.PodInfo, ni *cache.NodeInfo) {
	for _, i := range ps.updaters {
		ps.filters[i].(PodUpdater).AddPod(pod, ni)
	}
}

// RemovePod is AddPod for a pod removed from ni's node, a victim
// (upstream's RemovePod extension).
func (ps *PodState) RemovePod(pod *cache.PodInfo, ni *cache.NodeInfo) {
	for _, i := range ps.updaters {
		ps.filters[i].(PodUpdater).RemovePod(pod, ni)
	}
}

// nominatedNode is a node with the pods nominated to it added, and the
// pod's state with them added.
type nominatedNode struct {
	ni *cache.NodeInfo
	ps *PodState
}

// AddNominated makes Filter check ni's node with pods (the pods nominated
// to it that the pod must leave room for) added, as upstream's
// RunFilterPluginsWithNominatedPods: the node must fit the pod with them,
// and, when a filter of the pod keeps state about other pods (inter-pod
// affinity, where a nominated pod may be what satisfies the pod), also
// without them, since a nomination is not a placement. It is called by the
// cycle before filtering, never concurrently with Filter; pods that are
// empty do nothing.
func (ps *PodState) AddNominated(ni *cache.NodeInfo, pods []*cache.PodInfo) {
	if len(pods) == 0 || ni.Node() == nil {
		return
	}
	with := ni.Clone()
	st := ps.Clone()
	for _, pi := range pods {
		with.AddPod(pi)
		st.AddPod(pi, with)
	}
	if ps.nominated == nil {
		ps.nominated = make(map[string]nominatedNode)
	}
	ps.nominated[ni.Name()] = nominatedNode{ni: with, ps: st}
}

// What a pod's state runs, for the plugins' tests and for looking into a
// profile: none of it is on the cycle's path.

// Filters are the pod's filters, in profile order, the plugins it skipped
// left out, its BatchFilters last. The slice is the caller's.
func (ps *PodState) Filters() []PodFilter {
	out := slices.Clone(ps.filters)
	for _, b := range ps.batch {
		out = append(out, b)
	}
	return out
}

// HasUpdaters reports whether one of the pod's filters is a PodUpdater
// (its state counts pods on other nodes).
func (ps *PodState) HasUpdaters() bool { return ps.updaters != nil }

// WeightedScorer is one of a pod's scorers, with its weight, and whether
// its raw scores are normalised.
type WeightedScorer struct {
	Scorer    PodScorer
	Weight    int64
	Normalize bool
}

// Scorers runs the profile's PreScores for nodes, as Score does, and
// returns the pod's scorers in profile order.
func (ps *PodState) Scorers(nodes []*cache.NodeInfo) ([]WeightedScorer, *Status) {
	if st := ps.preScore(nodes); st != nil {
		return nil, st
	}
	out := make([]WeightedScorer, len(ps.scorers))
	for i, s := range ps.scorers {
		out[i] = WeightedScorer{s.scorer, s.weight, s.normalize}
	}
	return out, nil
}
