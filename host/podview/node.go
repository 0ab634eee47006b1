package podview

import (
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// Node returns the record of node for a policy. requested is the sum of the
// requests of the pods the scheduler has on the node (assumed pods
// included) and pods their number; the cache knows both, the Node object
// does not.
//
// Allocatable is reported as the node declares it, zero amounts included.
// Requested leaves zero amounts out (a running sum keeps entries at zero
// after the last pod using a resource leaves; leaving them out makes equal
// states encode equally) and always has "pods". Both are in record units
// (cpu millicores, base units otherwise) and sorted by name. Taints keep
// the node's order.
func Node(node *v1.Node, requested v1.ResourceList, pods int) abi.Node {
	n := abi.Node{
		Name:          node.Name,
		Unschedulable: node.Spec.Unschedulable,
		Labels:        sortedKVs(node.Labels),
		Allocatable:   quantities(node.Status.Allocatable, false, -1),
		Requested:     quantities(requested, true, int64(max(pods, 0))),
	}
	if len(node.Spec.Taints) > 0 {
		n.Taints = make([]abi.Taint, len(node.Spec.Taints))
		for i := range node.Spec.Taints {
			t := &node.Spec.Taints[i]
			n.Taints[i] = abi.Taint{Key: t.Key, Value: t.Value, Effect: effect(t.Effect)}
		}
	}
	return n
}
