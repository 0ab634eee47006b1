// Package wasmplacement is the two plugins that run the profile's placement
// policies, wasmsched.io/WasmFilter and wasmsched.io/WasmScore: registry rows
// like the native plugins, which call whatever the profile's filter and
// score slots serve (framework.Handle.Placement), or do nothing when a slot
// is empty.
//
// The filter is a framework.BatchFilter: the framework runs it after the
// native filters, once per pod over the nodes they accepted, so a module
// only sees nodes the built-in constraints allow and can reject, never
// admit. The score runs in PreScore, once per pod over the feasible nodes.
// Node records are built once per node generation and shared by every
// profile's plugins (Handle.Shared); each Wasm instance is sent only the
// records it has not seen (host/policy/wasmslot).
//
// A failure is handled as the slot's failure policy says: the filter's
// default, Fail, rejects the nodes it was asked about for this attempt
// (Unschedulable, naming the error), so the pod retries with backoff and is
// never placed where the policy did not approve; Ignore skips the plugin.
// The policies are read once per cycle, in PreFilter and PreScore: a swap
// takes effect between cycles.
package wasmplacement

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

// Names of the plugins, as a KubeSchedulerConfiguration names them.
const (
	FilterName = abi.PluginWasmFilter
	ScoreName  = abi.PluginWasmScore
)

// scoreWeight is WasmScore's default weight.
const scoreWeight = 1

// FilterRow is WasmFilter's registry row: in the default profile, after
// the native filters; a no-op while the filter slot is empty.
func FilterRow() framework.Row {
	return framework.Row{Name: FilterName, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(h framework.Handle, _ any) (framework.Plugin, error) { return newFilter(h), nil }}
}

// ScoreRow is WasmScore's registry row: in the default profile with weight
// 1; a no-op while the score slot is empty.
func ScoreRow() framework.Row {
	return framework.Row{Name: ScoreName, Points: framework.PointsOf(framework.PointPreScore, framework.PointScore), Default: true, Weight: scoreWeight,
		New: func(h framework.Handle, _ any) (framework.Plugin, error) { return newScore(h), nil }}
}

// base is what both plugins share: the profile's slots, and the
// scheduler's node records and last pod record.
type base struct {
	h     framework.Handle
	nodes *nodeRecords
	pods  *podRecords
}

type (
	nodesKey struct{}
	podsKey  struct{}
)

func newBase(h framework.Handle) base {
	return base{h: h,
		nodes: h.Shared(nodesKey{}, func() any { return newNodeRecords() }).(*nodeRecords),
		pods:  h.Shared(podsKey{}, func() any { return &podRecords{} }).(*podRecords)}
}

// podRecord is the pod's record for a placement call: the queue's fields
// and, as the placement slots promise, its namespace's labels. It is built
// once per cycle: WasmScore reads the one WasmFilter built for the same
// pod info.
func (b *base) podRecord(pod *cache.PodInfo) abi.PodView {
	return b.pods.get(pod, func() abi.PodView {
		p := podview.Pod(pod.Pod, nil, abi.PodQueueState{}, podview.Plugins{})
		if l := b.h.Listers().Namespaces; l != nil {
			if ns, err := l.Get(pod.Pod.Namespace); err == nil {
				p.NamespaceLabels = podview.NamespaceLabels(ns.Labels)
			}
		}
		v, err := abi.ReadPod(abi.AppendPod(nil, &p))
		if err != nil {
			panic("wasmplacement: encoding a pod record: " + err.Error()) // abi's own encoding: a bug
		}
		return v
	})
}

// podRecords remembers the last pod record built, by pod info: a cycle's
// PreFilter and PreScore see the same pod info.
type podRecords struct {
	mu   sync.Mutex
	last *cache.PodInfo
	rec  abi.PodView
}

func (c *podRecords) get(pod *cache.PodInfo, build func() abi.PodView) abi.PodView {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != pod {
		c.last, c.rec = pod, build()
	}
	return c.rec
}

// failure is the status of the nodes a failed filter call was asked about:
// Unschedulable, so they are not used, but with no plugin named, so that
// the attempt does not count as the filter's rejection: a pod no plugin
// rejected backs off and is retried (the queue's error backoff), where one
// the filter rejected would wait for the events it declared, which a
// module's failure does not wait for.
func failure(err error) *framework.Status {
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return &framework.Status{Code: framework.Unschedulable,
		Reasons: []string{fmt.Sprintf("node(s) were not judged: the filter policy failed (%s) (%s)", msg, FilterName)}}
}

// noModule reports whether err says the slot lost its module while the
// call was on its way: the slot is empty now, so the plugin does nothing.
func noModule(err error) bool { return errors.Is(err, policy.ErrNoModule) }

// filterPlugin is WasmFilter.
type filterPlugin struct {
	base
	statuses statusCache
}

var _ framework.PreFilterPlugin = (*filterPlugin)(nil)

func newFilter(h framework.Handle) *filterPlugin { return &filterPlugin{base: newBase(h)} }

func (p *filterPlugin) Name() string { return FilterName }

// PreFilter binds the slot's current filter to the pod, or skips the
// plugin when the slot is empty or the filter's pre-step says the pod is
// none of its business. A failed pre-step fails closed: every node is
// rejected for this attempt.
func (p *filterPlugin) PreFilter(pod *cache.PodInfo, snap *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	f, fp, release := p.current()
	if f == nil {
		return nil, nil, nil
	}
	rec := p.podRecord(pod)
	ok, err := f.PreFilter(rec)
	switch {
	case err != nil && (noModule(err) || fp == policy.Ignore):
		release()
		return nil, nil, nil
	case err != nil:
		release()
		return &podFilter{plugin: p, fail: failure(err)}, nil, nil
	case !ok:
		release()
		return nil, nil, nil
	}
	return &podFilter{plugin: p, policy: f, fp: fp, pod: rec, snap: snap, release: release}, nil, nil
}

// holder is a filter that a cycle can hold (wasmslot's adapters): a swap
// closes its module only once the cycles that began with it are over.
type holder interface {
	Hold() (release func(), ok bool)
}

// current returns the slot's filter, held for the cycle when it can be,
// and the release of the hold (a no-op when none was taken).
func (p *filterPlugin) current() (policy.Filter, policy.FailurePolicy, func()) {
	for {
		f, fp := p.h.Placement().Filter()
		h, ok := f.(holder)
		if !ok {
			return f, fp, func() {}
		}
		if release, held := h.Hold(); held {
			return f, fp, release
		}
		// Retired between the read and the hold: read the slot again.
	}
}

// podFilter is WasmFilter bound to one pod and the filter serving when the
// cycle began.
type podFilter struct {
	plugin *filterPlugin
	policy policy.Filter
	fp     policy.FailurePolicy
	pod    abi.PodView
	snap   *cache.Snapshot
	// fail, when set, is every node's verdict (the pre-step failed).
	fail *framework.Status
	// release lets go of the filter held for the cycle; nil with fail.
	release func()
}

var (
	_ framework.BatchFilter = (*podFilter)(nil)
	_ framework.Releaser    = (*podFilter)(nil)
)

// Release ends the pod's cycle for the filter (PodState.Done).
func (f *podFilter) Release() {
	if f.release != nil {
		f.release()
	}
}

// Filter judges one node: preemption's dry runs (on copies of the
// snapshot's nodes) and nominated nodes.
func (f *podFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	var out [1]*framework.Status
	f.filter([]*cache.NodeInfo{ni}, f.snap, out[:])
	return out[0]
}

// FilterBatch judges the snapshot's nodes FindFeasible found.
func (f *podFilter) FilterBatch(nodes []*cache.NodeInfo, out []*framework.Status) {
	f.filter(nodes, nil, out)
}

// callScratch is a call's reusable buffers.
type callScratch struct {
	nodes    []policy.PlacementNode
	verdicts []policy.FilterVerdict
}

var scratchPool = sync.Pool{New: func() any { return new(callScratch) }}

// filter judges nodes; with snap set, those that are not snap's are sent
// inline.
func (f *podFilter) filter(nodes []*cache.NodeInfo, snap *cache.Snapshot, out []*framework.Status) {
	if f.fail != nil {
		for i := range out[:len(nodes)] {
			out[i] = f.fail
		}
		return
	}
	sc := scratchPool.Get().(*callScratch)
	defer scratchPool.Put(sc)
	sc.nodes = f.plugin.nodes.fill(nodes, snap, sc.nodes[:0])
	sc.verdicts = slices.Grow(sc.verdicts[:0], len(nodes))[:len(nodes)]
	clear(sc.verdicts)
	err := f.policy.Filter(f.pod, sc.nodes, sc.verdicts)
	clear(sc.nodes) // drop the records' references while pooled
	if err != nil {
		clear(sc.verdicts)
		if noModule(err) || f.fp == policy.Ignore {
			clear(out[:len(nodes)])
			return
		}
		st := failure(err)
		for i := range out[:len(nodes)] {
			out[i] = st
		}
		return
	}
	for i, v := range sc.verdicts {
		if v.Code == abi.FilterPass {
			out[i] = nil
			continue
		}
		out[i] = f.plugin.statuses.get(v)
	}
}

// statusCache keeps one status per distinct verdict, so rejected nodes
// share them (statuses are read-only) instead of allocating per node.
type statusCache struct {
	mu sync.Mutex
	m  map[policy.FilterVerdict]*framework.Status
}

const maxStatuses = 4096

func (c *statusCache) get(v policy.FilterVerdict) *framework.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[v]; ok {
		return st
	}
	if c.m == nil || len(c.m) >= maxStatuses {
		c.m = make(map[policy.FilterVerdict]*framework.Status)
	}
	code := framework.Unschedulable
	if v.Code == abi.FilterUnresolvable {
		code = framework.UnschedulableAndUnresolvable
	}
	st := &framework.Status{Code: code, Plugin: FilterName, Reasons: []string{v.Reason + " (" + FilterName + ")"}}
	c.m[v] = st
	return st
}

// scorePlugin is WasmScore.
type scorePlugin struct{ base }

var _ framework.PreScorePlugin = (*scorePlugin)(nil)

func newScore(h framework.Handle) *scorePlugin { return &scorePlugin{base: newBase(h)} }

func (p *scorePlugin) Name() string { return ScoreName }

// PreScore asks the slot's score about the feasible nodes, in one call,
// and returns the normalised scores: the module's own when it declares them
// normalised, else scaled so the lowest becomes 0 and the highest
// MaxNodeScore. A failure skips the plugin (Ignore, the default) or fails
// the attempt (Fail).
func (p *scorePlugin) PreScore(pod *cache.PodInfo, nodes []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	s, fp := p.h.Placement().Score()
	if s == nil || len(nodes) == 0 {
		return nil, nil
	}
	rec := p.podRecord(pod)
	ok, err := s.PreScore(rec)
	if err == nil && !ok {
		return nil, nil
	}
	scores := make([]int64, len(nodes))
	if err == nil {
		sc := scratchPool.Get().(*callScratch)
		sc.nodes = p.nodes.fill(nodes, nil, sc.nodes[:0]) // the feasible nodes are the snapshot's
		err = s.Score(rec, sc.nodes, scores)
		clear(sc.nodes)
		scratchPool.Put(sc)
	}
	if err == nil {
		err = normalize(s.Options().ScoreNormalized, scores)
	}
	switch {
	case err == nil:
		return precomputed(scores), nil
	case noModule(err) || fp == policy.Ignore:
		return nil, nil
	}
	return nil, &framework.Status{Code: framework.Error, Plugin: ScoreName, Err: fmt.Errorf("score policy: %w", err)}
}

// normalize brings scores into [0, MaxNodeScore]: a module that declares
// its scores normalised must keep them there; otherwise they are scaled
// linearly from the lowest (0) to the highest (MaxNodeScore), all 0 when
// they are equal.
func normalize(declared bool, scores []int64) error {
	if declared {
		for i, s := range scores {
			if s < 0 || s > abi.MaxNodeScore {
				return fmt.Errorf("the module declares normalised scores, but node %d scored %d, outside [0, %d]", i, s, abi.MaxNodeScore)
			}
		}
		return nil
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores[1:] {
		lo, hi = min(lo, s), max(hi, s)
	}
	if lo == hi {
		clear(scores)
		return nil
	}
	span := float64(hi) - float64(lo)
	for i, s := range scores {
		scores[i] = int64(float64(abi.MaxNodeScore) * (float64(s) - float64(lo)) / span)
	}
	return nil
}

// precomputed is a scorer whose scores PreScore already has.
type precomputed []int64

func (p precomputed) Score(_ []*cache.NodeInfo, scores []int64) { copy(scores, p) }

// nodeRecords builds each node's record once per node info generation and
// gives every node name an id for the life of the scheduler (the ids the
// modules keep the records under). Ids are never reused: a node removed
// and added again gets its old id back by name.
type nodeRecords struct {
	mu     sync.Mutex
	byName map[string]*nodeRecord
}

type nodeRecord struct {
	id  uint32
	gen int64
	rec abi.NodeView
}

func newNodeRecords() *nodeRecords { return &nodeRecords{byName: make(map[string]*nodeRecord)} }

// fill appends to out the placement nodes of nodes: node infos by id, and,
// when snap is set, those that are not snap's (a dry run's copies) inline,
// after them. Records are built for node infos whose generation moved.
func (c *nodeRecords) fill(nodes []*cache.NodeInfo, snap *cache.Snapshot, out []policy.PlacementNode) []policy.PlacementNode {
	var inline []policy.PlacementNode
	c.mu.Lock()
	for _, ni := range nodes {
		if snap != nil && snap.Get(ni.Name()) != ni {
			inline = append(inline, policy.PlacementNode{Gen: ni.Generation(), Rec: encodeNode(ni), Inline: true})
			continue
		}
		r := c.byName[ni.Name()]
		if r == nil {
			r = &nodeRecord{id: uint32(len(c.byName))}
			c.byName[ni.Name()] = r
		}
		if r.gen != ni.Generation() || r.rec.Bytes() == nil {
			r.gen, r.rec = ni.Generation(), encodeNode(ni)
		}
		out = append(out, policy.PlacementNode{ID: r.id, Gen: r.gen, Rec: r.rec})
	}
	c.mu.Unlock()
	return append(out, inline...)
}

// encodeNode is the record of ni's node as the cache has it: requested
// counts the pods the scheduler has there, assumed ones included.
func encodeNode(ni *cache.NodeInfo) abi.NodeView {
	node := ni.Node()
	if node == nil {
		node = &v1.Node{}
	}
	n := podview.Node(node, ni.Requested().ResourceList(), len(ni.Pods()))
	n.Images = podview.Images(node)
	v, err := abi.ReadNode(abi.AppendNode(nil, &n))
	if err != nil {
		panic("wasmplacement: encoding a node record: " + err.Error()) // abi's own encoding: a bug
	}
	return v
}
