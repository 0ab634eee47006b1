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
	// PreFilter works out what the plugin's filter needs from pod. A
	// non-nil Status rejects the pod before any node is looked at
	// (UnschedulableAndUnresolvable) or fails the cycle (Error); the result
	// is ignored then.
	PreFilter(pod *cache.PodInfo) (PreFilterResult, *Status)
}

// PreFilterResult is what a PreFilter hands the framework for one pod.
type PreFilterResult struct {
	// Filter is the plugin's filter bound to the pod's state. nil skips
	// the plugin for the pod on every node (upstream's Skip status): a pod
	// without the constraint pays nothing for the plugin.
	Filter PodFilter
	// NodeNames restricts the nodes worth filtering to these (sorted,
	// non-empty); nil means every node (upstream's PreFilterResult). The
	// framework intersects the restrictions of all plugins.
	NodeNames []string
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

// PodUpdater is implemented by a PodFilter whose pre-filter state counts
// pods on other nodes (upstream's PreFilterExtensions: InterPodAffinity and
// PodTopologySpread need it). Preemption's dry runs add and remove pods on a
// copy of a node; such a filter must see the same changes in a copy of its
// state. None of the plugins so far keeps such state (their filters read the
// node info, which the dry run copies), so this is the hook the first one
// plugs into: host/preempt calls PodState.Clone, AddPod and RemovePod, which
// call it for every filter of the pod that implements it and cost nothing
// when none does.
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

// PreScorePlugin is a plugin with a Score: upstream's PreScore, Score and
// NormalizeScore extension points. PreScore runs once per pod, in Prepare
// after the pre-filters (no scorer so far needs the feasible nodes; the
// first that does, InterPodAffinity or PodTopologySpread, will get them
// through a second hook run by Score).
type PreScorePlugin interface {
	Plugin
	// PreScore returns the plugin's scorer bound to pod's state, nil to skip
	// the plugin for the pod (upstream's Skip: it adds nothing to any
	// node's score), or an Error.
	PreScore(pod *cache.PodInfo) (PodScorer, *Status)
}

// PodScorer is a plugin's scorer for one pod. Score is the plugin's score of
// a feasible node (ni.Node() is not nil; a node info without a node scores 0
// without asking): 0 to MaxNodeScore, or a raw count when the scorer also
// implements ScoreNormalizer. It must not allocate.
type PodScorer interface {
	Score(ni *cache.NodeInfo) int64
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
