package placement

import "github.com/wasmsched/wasmsched/abi"

// Names of the resources every node has. Amounts are cpu in millicores and
// everything else in base units (bytes, pods, devices), as in the records.
const (
	CPU    = "cpu"
	Memory = "memory"
	Pods   = "pods"
)

// Request returns what pod requests of resource, 0 when it requests none.
func Request(pod abi.PodView, resource string) int64 { return pod.Requests().Get(resource) }

// Free returns what node has free of resource: its allocatable amount minus
// what the pods the scheduler placed there request (assumed pods
// included). A resource the node does not list counts as 0; the result is
// negative on an overcommitted node.
func Free(node abi.NodeView, resource string) int64 {
	return node.Allocatable().Get(resource) - node.Requested().Get(resource)
}

// FreeAfter returns what node would have free of resource once pod runs
// there: Free minus Request, negative when the pod does not fit.
func FreeAfter(pod abi.PodView, node abi.NodeView, resource string) int64 {
	return Free(node, resource) - Request(pod, resource)
}

// Fits reports whether every resource pod requests fits in what node has
// free, as upstream's NodeResourcesFit checks the requests (a request of 0
// always fits). The host's pod records request 1 of "pods", so a full
// node does not fit.
func Fits(pod abi.PodView, node abi.NodeView) bool {
	reqs := pod.Requests()
	for i := range reqs.Len() {
		name, v := reqs.At(i)
		if v > 0 && v > Free(node, name) {
			return false
		}
	}
	return true
}
