package noderesources

import (
	"math"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// This file is upstream's resourceAllocationScorer (noderesources/
// resource_allocation.go) for a configured resource list: what
// NodeResourcesFit's scoring strategies and NodeResourcesBalancedAllocation
// score with when their args name resources other than cpu and memory of
// weight 1 (the default, which the plugins score on a faster path of their
// own, leastAllocated and balancedAllocation).

// Scoring strategies of NodeResourcesFit (upstream's ScoringStrategyType).
const (
	strategyLeastAllocated = iota
	strategyMostAllocated
	strategyRequestedToCapacityRatio
)

// resourceKind says where a configured resource is read from.
const (
	resCPU = iota
	resMemory
	resEphemeral
	resScalar // Resource.Scalar: extended resources, hugepages, ...
	resOther  // anything else, which upstream never finds on a node
)

// scoredResource is one entry of a configured resource list (upstream's
// ResourceSpec).
type scoredResource struct {
	name   v1.ResourceName
	kind   int
	weight int64
}

func newScoredResource(name string, weight int64) scoredResource {
	r := scoredResource{name: v1.ResourceName(name), weight: weight}
	switch r.name {
	case v1.ResourceCPU:
		r.kind = resCPU
	case v1.ResourceMemory:
		r.kind = resMemory
	case v1.ResourceEphemeralStorage:
		r.kind = resEphemeral
	default:
		r.kind = resOther
		if cache.IsScalarResourceName(r.name) {
			r.kind = resScalar
		}
	}
	return r
}

// podRequest is upstream's calculatePodResourceRequest: the pod's request of
// r, cpu and memory non-zero (100m, 200Mi for a container without) unless
// useRequested.
func (r *scoredResource) podRequest(pod *cache.PodInfo, useRequested bool) int64 {
	switch r.kind {
	case resCPU:
		if useRequested {
			return pod.Requests.MilliCPU
		}
		return pod.NonZero.MilliCPU
	case resMemory:
		if useRequested {
			return pod.Requests.Memory
		}
		return pod.NonZero.Memory
	case resEphemeral:
		return pod.Requests.EphemeralStorage
	case resScalar:
		return pod.Requests.Scalar[r.name]
	}
	return 0
}

// onNode is upstream's calculateResourceAllocatableRequest: the node's
// allocatable of r and what its pods request of it (cpu and memory
// non-zero unless useRequested); allocatable 0 leaves r out of the score.
// A scalar resource the pod does not request is left out too (upstream's
// calculateNodeAllocatableRequest), as is one the node does not list.
func (r *scoredResource) onNode(ni *cache.NodeInfo, podRequest int64, useRequested bool) (allocatable, allocated int64) {
	alloc := ni.Allocatable()
	switch r.kind {
	case resCPU, resMemory:
		used := ni.NonZeroRequested()
		if useRequested {
			used = ni.Requested()
		}
		if r.kind == resCPU {
			return alloc.MilliCPU, used.MilliCPU
		}
		return alloc.Memory, used.Memory
	case resEphemeral:
		return alloc.EphemeralStorage, ni.Requested().EphemeralStorage
	case resScalar:
		if podRequest == 0 {
			return 0, 0
		}
		a, ok := alloc.Scalar[r.name]
		if !ok {
			return 0, 0
		}
		return a, ni.Requested().Scalar[r.name]
	}
	return 0, 0
}

// resourceScorer is a configured NodeResourcesFit scoring strategy over its
// resources. It is read-only once built.
type resourceScorer struct {
	strategy  int
	resources []scoredResource
	shape     []helper.ShapePoint // RequestedToCapacityRatio only
}

// podRequests are the pod's requests of s's resources (upstream's
// preScoreState.podRequests), non-zero.
func podRequests(resources []scoredResource, pod *cache.PodInfo, useRequested bool) []int64 {
	out := make([]int64, len(resources))
	for i := range resources {
		out[i] = resources[i].podRequest(pod, useRequested)
	}
	return out
}

// score is upstream's scorer of s.strategy for one node
// (leastResourceScorer, mostResourceScorer,
// buildRequestedToCapacityRatioScorerFunction), with reqs the pod's
// requests of s.resources.
func (s *resourceScorer) score(ni *cache.NodeInfo, reqs []int64) int64 {
	var nodeScore, weightSum int64
	for i := range s.resources {
		r := &s.resources[i]
		allocatable, allocated := r.onNode(ni, reqs[i], false)
		if allocatable == 0 {
			continue
		}
		requested := allocated + reqs[i]
		var rs int64
		switch s.strategy {
		case strategyLeastAllocated:
			rs = leastRequested(requested, allocatable)
		case strategyMostAllocated:
			rs = mostRequested(requested, allocatable)
		case strategyRequestedToCapacityRatio:
			if requested > allocatable {
				rs = helper.BrokenLinear(s.shape, 100)
			} else {
				rs = helper.BrokenLinear(s.shape, requested*100/allocatable)
			}
			if rs <= 0 {
				// Upstream leaves a resource scoring 0 out of the average.
				continue
			}
		}
		nodeScore += rs * r.weight
		weightSum += r.weight
	}
	if weightSum == 0 {
		return 0
	}
	if s.strategy == strategyRequestedToCapacityRatio {
		return int64(math.Round(float64(nodeScore) / float64(weightSum)))
	}
	return nodeScore / weightSum
}

// mostRequested is upstream's mostRequestedScore: the used fraction on
// 0-100, a request beyond capacity counted as full.
func mostRequested(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	requested = min(requested, capacity)
	return requested * framework.MaxNodeScore / capacity
}

// resourceScorerState is a pod's state for a configured strategy.
type resourceScorerState struct {
	s    *resourceScorer
	reqs []int64
}

// NodeLocal: the score reads the pod's requests and the node alone.
func (*resourceScorerState) NodeLocal() bool { return true }

func (st *resourceScorerState) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() != nil {
			scores[i] = st.s.score(ni, st.reqs)
		}
	}
}

// balancedResourcesState is a pod's state for
// NodeResourcesBalancedAllocation over configured resources.
type balancedResourcesState struct {
	resources []scoredResource
	reqs      []int64
}

// NodeLocal: the score reads the pod's requests and the node alone.
func (*balancedResourcesState) NodeLocal() bool { return true }

func (st *balancedResourcesState) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() != nil {
			scores[i] = st.score(ni)
		}
	}
}

// score is upstream's balancedResourceScorer over the configured resources:
// the change the pod makes to the standard deviation of the node's requested
// fractions, centred on 50 as balancedAllocation does.
func (st *balancedResourcesState) score(ni *cache.NodeInfo) int64 {
	var withArr, withoutArr [8]float64
	with, without := withArr[:0], withoutArr[:0]
	for i := range st.resources {
		allocatable, allocated := st.resources[i].onNode(ni, st.reqs[i], true)
		if allocatable == 0 {
			continue
		}
		with = append(with, min(float64(allocated+st.reqs[i])/float64(allocatable), 1))
		without = append(without, min(float64(allocated)/float64(allocatable), 1))
	}
	return framework.MaxNodeScore/2 + (framework.MaxNodeScore/2+balancedFractions(with)-balancedFractions(without))/2
}

// balancedFractions is upstream's balancedResourceScore of fractions
// (already capped at 1): one minus their standard deviation, on 0-100, with
// upstream's float operations in upstream's order.
func balancedFractions(fractions []float64) int64 {
	std := 0.0
	switch {
	case len(fractions) == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case len(fractions) > 2:
		var total float64
		for _, f := range fractions {
			total += f
		}
		mean := total / float64(len(fractions))
		var sum float64
		for _, f := range fractions {
			sum = sum + (f-mean)*(f-mean)
		}
		std = math.Sqrt(sum / float64(len(fractions)))
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}
