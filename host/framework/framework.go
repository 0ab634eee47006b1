package framework

import (
	"github.com/wasmsched/wasmsched/host/cache"
)

// Plugin is a native plugin of the profile, named after the upstream plugin
// it reimplements (abi.Plugin*). It implements the extension points below
// that it needs; the Profile finds them by type assertion once, when it is
// built, never per pod or per node.
type Plugin interface {
	Name() string
}

// PreFilterPlugin is a plugin with a Filter: upstream's PreFilter and Filter
// extension points. PreFilter runs once per pod and cycle (Prepare), in the
// profile's order; the filters it returns run on every node looked at, in the
// same order.
type PreFilterPlugin interface {
	Plugin
	// PreFilter works out what the plugin's filter needs from pod and the
	// cycle's snapshot (the cluster the pod is placed in; plugins that
	// count pods on other nodes read it here, once) and returns:
	//   - filter, the plugin's filter bound to the pod's state, or nil to
	//     skip the plugin for the pod on every node (upstream's Skip
	//     status): a pod without the constraint pays nothing for it;
	//   - nodeNames, nil for every node, or the only nodes worth filtering
	//     (sorted, non-empty; upstream's PreFilterResult), which the
	//     framework intersects over the plugins;
	//   - st, nil, or a rejection of the pod before any node is looked at
	//     (UnschedulableAndUnresolvable) or an Error failing the cycle; the
	//     other results are ignored then.
	//
	// Three results rather than a result struct: Go copies a returned
	// struct through memory, which made Prepare a third slower.
	PreFilter(pod *cache.PodInfo, snap *cache.Snapshot) (filter PodFilter, nodeNames []string, st *Status)
}

// PodFilter is a plugin's filter for one pod (upstream's Filter with the
// pod's CycleState already looked up). It must be safe for concurrent use
// (FindFeasible filters nodes in parallel), must not allocate for a node that
// passes, and returns nil for a node that passes or a rejection: Unschedulable
// when removing pods from the node could make the pod fit (preemption tries
// it), UnschedulableAndUnresolvable when not, Error for an internal failure.
// ni.Node() is not nil. Return shared Status values (treated as read-only by
// everyone) rather than new ones where the reasons allow.
type PodFilter interface {
	Filter(ni *cache.NodeInfo) *Status
}

// BatchFilter is a PodFilter that judges many nodes in one call: a Wasm
// filter, which pays per call rather than per node. The profile runs it
// after the other filters, whatever its place in the plugin list, so it only
// sees the nodes they accepted: FindFeasible calls FilterBatch once over
// the nodes that passed them (again over more nodes only when it rejected
// too many to reach the number wanted); Filter, for one node (preemption's
// dry runs, the cycle's check of a nominated node), calls the PodFilter's
// Filter.
type BatchFilter interface {
	PodFilter
	// FilterBatch writes into out[i] the verdict on nodes[i]: nil for a
	// node that passes, or a rejection as a PodFilter's; an Error fails the
	// search.
	FilterBatch(nodes []*cache.NodeInfo, out []*Status)
}

// Releaser is implemented by a PodFilter that holds something for the
// pod's scheduling cycle (WasmFilter holds the module it began with, so a
// swap mid-cycle does not change the judge): PodState.Done releases it.
type Releaser interface {
	Release()
}

// PodUpdater is implemented by a PodFilter whose pre-filter state counts
// pods on other nodes (upstream's PreFilterExtensions: InterPodAffinity and
// PodTopologySpread). Preemption's dry runs add and remove pods on a copy of
// a node, and the cycle adds the pods nominated to a node; such a filter must
// see the same changes in a copy of its state: host/preempt and the cycle
// call PodState.Clone, AddPod and RemovePod, which call it for every filter
// of the pod that implements it and cost nothing when none does.
type PodUpdater interface {
	PodFilter
	// Clone returns a copy of the filter that AddPod and RemovePod may
	// change without affecting the original.
	Clone() PodFilter
	// AddPod and RemovePod update the state as if pod were added to or
	// removed from the node of ni (already changed). Upstream's return a
	// Status only to report a missing CycleState, which cannot happen here.
	AddPod(pod *cache.PodInfo, ni *cache.NodeInfo)
	RemovePod(pod *cache.PodInfo, ni *cache.NodeInfo)
}

// Detacher is implemented by a PodFilter that reads the snapshot's
// indexes in place rather than copying them per pod (InterPodAffinity):
// it is valid only while the snapshot does not change, which holds for a
// cycle's filters. Detach copies what it reads, so that the filter keeps
// its answers while its caller changes the snapshot (Assume, Forget):
// PodState.Detach, which group preemption calls. A filter used on a
// changed snapshot without it fails closed (an Error status).
type Detacher interface {
	Detach()
}

// PreScorePlugin is a plugin with a Score: upstream's PreScore, Score and
// NormalizeScore extension points. PreScore runs once per pod and scoring,
// in Score, after the filters, as upstream's: InterPodAffinity and
// PodTopologySpread count over the feasible nodes.
type PreScorePlugin interface {
	Plugin
	// PreScore returns the plugin's scorer bound to pod's state for the
	// feasible nodes (those Score is about to score, in that order) in
	// snap, nil to skip the plugin for the pod (upstream's Skip: it adds
	// nothing to any node's score), or an Error.
	PreScore(pod *cache.PodInfo, nodes []*cache.NodeInfo, snap *cache.Snapshot) (PodScorer, *Status)
}

// StatePreScorePlugin is a PreScorePlugin whose scores come from what its
// filter worked out per node (VolumeBinding scores the volumes its filter
// found on each node): the profile calls PreScoreState, which reaches the
// filter through ps.PluginFilter, instead of PreScore. Its filter is kept
// for that (PodState.PluginFilter) while its score is on.
type StatePreScorePlugin interface {
	PreScorePlugin
	PreScoreState(ps *PodState, nodes []*cache.NodeInfo) (PodScorer, *Status)
}

// PodScorer is a plugin's scorer for one pod. Score writes into scores[i]
// the plugin's score of nodes[i] (len(scores) == len(nodes)): 0 to
// MaxNodeScore, or a raw count when the scorer also implements
// ScoreNormalizer; 0 for a node info without a node. It must not allocate.
//
// Unlike upstream's per-node Score, it scores the whole list in one call:
// one dynamic call per plugin and cycle, not per node, so that the loop over
// the nodes is the plugin's own, with static calls the compiler inlines.
type PodScorer interface {
	Score(nodes []*cache.NodeInfo, scores []int64)
}

// ScoreNormalizer is implemented by a PodScorer whose raw scores are
// normalised over the feasible nodes into 0 to MaxNodeScore before they are
// weighted (upstream's ScoreExtensions.NormalizeScore), in place.
type ScoreNormalizer interface {
	NormalizeScores(scores []int64)
}

// DefaultNormalizeScore is upstream's helper of the same name: each score
// scaled so that the highest becomes MaxNodeScore (all MaxNodeScore when
// every score is 0 and reverse is set), then reversed (MaxNodeScore minus
// it) when reverse is set.
func DefaultNormalizeScore(reverse bool, scores []int64) {
	var highest int64
	for _, s := range scores {
		highest = max(highest, s)
	}
	if highest == 0 {
		if reverse {
			for i := range scores {
				scores[i] = MaxNodeScore
			}
		}
		return
	}
	for i, s := range scores {
		s = MaxNodeScore * s / highest
		if reverse {
			s = MaxNodeScore - s
		}
		scores[i] = s
	}
}
