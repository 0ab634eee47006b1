// Package logic is a score policy that packs pods requesting GPUs
// ([GPU]) onto the nodes that already run some, keeping whole nodes free
// for the pods that need many.
//
// The score is normalised (0 to 100, used by the host as it is): for a node
// that would have g GPUs free and a fraction c of its CPU free once the pod
// runs there,
//
//	score = 100 - 10*min(g, 9) - floor(9*c)
//
// so fewer free GPUs always win (a node left with none scores 91 to 100,
// one left with 9 or more 1 to 10), and among nodes left with as many GPUs
// the one left with less of its CPU free wins: packing CPU too keeps the
// GPU nodes' CPU for the GPU pods that come next. A node where the pod
// does not fit scores 0 (the scheduler's resource filter has already
// removed such nodes; the policy does not rely on it).
//
// Pods that request no GPU are none of the policy's business: the pre-step
// skips them, and the host adds nothing to their nodes' scores.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/placement"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
)

// GPU is the resource the policy packs.
const GPU = "nvidia.com/gpu"

// Options are the policy's options: the pre-step, and normalised scores.
var Options = []score.Option{score.Pre(Concerns), score.Normalized()}

// Concerns is the pre-step: pods that request a GPU.
func Concerns(pod abi.PodView) bool { return placement.Request(pod, GPU) > 0 }

// Score scores node for pod as the package documentation says.
func Score(pod abi.PodView, node abi.NodeView) int64 {
	gpus := placement.FreeAfter(pod, node, GPU)
	if gpus < 0 {
		return 0
	}
	s := abi.MaxNodeScore - 10*min(gpus, 9)
	if alloc := node.Allocatable().Get(placement.CPU); alloc > 0 {
		cpu := min(max(placement.FreeAfter(pod, node, placement.CPU), 0), alloc)
		s -= int64(9 * float64(cpu) / float64(alloc))
	}
	return s
}
