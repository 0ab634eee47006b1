package framework

import (
	"sync"

	"github.com/wasmsched/wasmsched/host/cache"
)

// MaxNodeScore is the highest score one plugin gives a node (upstream's
// framework.MaxNodeScore).
const MaxNodeScore = 100

// scratchPool holds the slices the scorers write their scores into.
var scratchPool = sync.Pool{New: func() any { return new([]int64) }}

// Score runs the pod's PreScores for nodes (upstream's PreScore), writes
// into out[i] the weighted sum of the pod's scorers for nodes[i] and returns
// out[:len(nodes)], allocating only when out is shorter than nodes.
// Normalising scorers (TaintToleration, NodeAffinity, InterPodAffinity,
// PodTopologySpread) are normalised over nodes, so nodes must be the whole
// list of feasible nodes being compared. A node info without a node scores
// 0 raw with every scorer. A PreScore Error is returned with out all 0.
//
// With the default profile the scorers and weights are upstream's among
// those written: TaintToleration (3), NodeAffinity (2), NodeResourcesFit (1),
// InterPodAffinity (2), NodeResourcesBalancedAllocation (1).
func Score(ps *PodState, nodes []*cache.NodeInfo, out []int64) ([]int64, *Status) {
	if cap(out) < len(nodes) {
		out = make([]int64, len(nodes))
	}
	out = out[:len(nodes)]
	clear(out)
	if len(nodes) == 0 {
		return out, nil
	}
	if st := ps.preScore(nodes); st != nil {
		return out, st
	}
	if len(ps.scorers) == 0 {
		return out, nil
	}
	scratch := scratchPool.Get().(*[]int64)
	if cap(*scratch) < len(nodes) {
		*scratch = make([]int64, len(nodes))
	}
	raw := (*scratch)[:len(nodes)]
	for _, s := range ps.scorers {
		if !ps.scoreMemo(s, nodes, raw) {
			s.scorer.Score(nodes, raw)
		}
		if s.normalize {
			s.scorer.(ScoreNormalizer).NormalizeScores(raw)
		}
		for i, v := range raw {
			out[i] += s.weight * v
		}
	}
	scratchPool.Put(scratch)
	return out, nil
}
