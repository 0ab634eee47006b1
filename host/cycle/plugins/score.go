package plugins

import (
	"math"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// MaxNodeScore is the highest score one plugin gives a node (upstream's
// framework.MaxNodeScore).
const MaxNodeScore = 100

// Upstream's default score plugin weights.
const (
	weightTaintToleration    = 3
	weightNodeAffinity       = 2
	weightNodeResourcesFit   = 1
	weightBalancedAllocation = 1
)

// Score writes into out[i] the weighted sum of the score plugins for
// nodes[i] and returns out[:len(nodes)], allocating only when out is shorter
// than nodes. TaintToleration and NodeAffinity are normalised over nodes, so
// nodes must be the whole list of feasible nodes being compared.
//
// The plugins and weights are upstream's defaults among those that look at a
// node alone: TaintToleration (3) counts the PreferNoSchedule taints the pod
// does not tolerate, fewer is better; NodeAffinity (2) sums the weights of
// the matching preferred terms; NodeResourcesFit (1) is LeastAllocated over
// cpu and memory with the non-zero requests; NodeResourcesBalancedAllocation
// (1) favours nodes whose cpu and memory fractions stay close.
func Score(ps *PodState, nodes []*cache.NodeInfo, out []int64) []int64 {
	if cap(out) < len(nodes) {
		out = make([]int64, len(nodes))
	}
	out = out[:len(nodes)]

	// First pass: the raw scores of the two normalised plugins, packed into
	// out (taint count high, affinity weight sum low) so that no scratch
	// slice is needed. Both are far below 2^31 for any pod the API accepts.
	var maxTaints, maxAffinity int64
	for i, ni := range nodes {
		node := ni.Node()
		if node == nil {
			out[i] = 0
			continue
		}
		taints := ps.intolerablePreferNoSchedule(node.Spec.Taints)
		var affinity int64
		if ps.preferred != nil {
			affinity = min(ps.preferred.Score(node), math.MaxInt32)
		}
		maxTaints, maxAffinity = max(maxTaints, taints), max(maxAffinity, affinity)
		out[i] = taints<<32 | affinity
	}

	for i, ni := range nodes {
		taints, affinity := out[i]>>32, out[i]&math.MaxUint32
		// DefaultNormalizeScore: reversed for taints (none anywhere is
		// the best score everywhere), plain for affinity.
		taintScore := int64(MaxNodeScore)
		if maxTaints > 0 {
			taintScore = MaxNodeScore - MaxNodeScore*taints/maxTaints
		}
		var affinityScore int64
		if maxAffinity > 0 {
			affinityScore = MaxNodeScore * affinity / maxAffinity
		}
		total := weightTaintToleration*taintScore + weightNodeAffinity*affinityScore
		if ni.Node() != nil {
			total += weightNodeResourcesFit*ps.leastAllocated(ni) + weightBalancedAllocation*ps.balancedAllocation(ni)
		}
		out[i] = total
	}
	return out
}

// intolerablePreferNoSchedule counts the PreferNoSchedule taints none of the
// pod's tolerations tolerates (upstream's TaintToleration Score).
func (ps *PodState) intolerablePreferNoSchedule(taints []v1.Taint) int64 {
	var n int64
	for i := range taints {
		t := &taints[i]
		if t.Effect == v1.TaintEffectPreferNoSchedule &&
			!corev1helpers.TolerationsTolerateTaint(discard, ps.scoreTolerations, t, false) {
			n++
		}
	}
	return n
}

// leastAllocated is upstream's LeastAllocated NodeResourcesFit score with
// its default resources (cpu and memory, weight 1 each): for each resource
// the node has, the free fraction after the pod, on 0-100, averaged. It uses
// the non-zero requests (100m cpu and 200Mi memory for a container that
// requests none), so that pods without requests still spread.
func (ps *PodState) leastAllocated(ni *cache.NodeInfo) int64 {
	alloc, used := ni.Allocatable(), ni.NonZeroRequested()
	var score, weights int64
	if alloc.MilliCPU != 0 {
		score += leastRequested(used.MilliCPU+ps.pod.NonZero.MilliCPU, alloc.MilliCPU)
		weights++
	}
	if alloc.Memory != 0 {
		score += leastRequested(used.Memory+ps.pod.NonZero.Memory, alloc.Memory)
		weights++
	}
	if weights == 0 {
		return 0
	}
	return score / weights
}

func leastRequested(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * MaxNodeScore / capacity
}

// balancedAllocation is upstream v1.37's NodeResourcesBalancedAllocation
// score with its default resources (cpu and memory): how much placing the pod
// changes the balance of the node's requested fractions (one minus their
// standard deviation, on 0-100), centred on 50, so that a pod that evens a
// node out scores above 50 and one that skews it below. It uses the actual
// requests, and gives 0 for a pod that requests neither resource (upstream
// skips the plugin for it).
func (ps *PodState) balancedAllocation(ni *cache.NodeInfo) int64 {
	if !ps.balanced {
		return 0
	}
	alloc, used := ni.Allocatable(), ni.Requested()
	req := &ps.pod.Requests
	with := balance(used.MilliCPU+req.MilliCPU, alloc.MilliCPU, used.Memory+req.Memory, alloc.Memory)
	without := balance(used.MilliCPU, alloc.MilliCPU, used.Memory, alloc.Memory)
	return MaxNodeScore/2 + (MaxNodeScore/2+with-without)/2
}

// balance is upstream's balancedResourceScore for cpu and memory: a resource
// the node has none of is left out; the fractions are capped at 1; with two
// fractions the standard deviation is half their difference, with one it
// is 0. The float operations are upstream's, in upstream's order, so the
// truncated result is the same.
func balance(cpu, cpuAlloc, mem, memAlloc int64) int64 {
	var fractions [2]float64
	n := 0
	if cpuAlloc != 0 {
		fractions[n] = min(float64(cpu)/float64(cpuAlloc), 1)
		n++
	}
	if memAlloc != 0 {
		fractions[n] = min(float64(mem)/float64(memAlloc), 1)
		n++
	}
	std := 0.0
	if n == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	}
	return int64((1 - std) * float64(MaxNodeScore))
}
