// Package logic is a filter policy that reserves pools of nodes for
// namespaces. A pool is a value of the label [PoolLabel]:
//
//   - a pod whose namespace has the label runs only on the nodes that have
//     it with the same value; the others are rejected with "node(s) are not
//     in pool P";
//   - a pod whose namespace has no pool runs only on the nodes that have
//     none; the others are rejected with "node(s) are reserved for pool Q".
//
// An empty value is no pool. Both rejections are unresolvable (evicting
// pods from a node does not change its pool, so preemption does not try),
// and the pod's FailedScheduling event counts them: "3 node(s) are reserved
// for pool gpu (wasmsched.io/WasmFilter)".
//
// Pods of DaemonSets are none of the policy's business (the pre-step skips
// them): a DaemonSet runs a pod on every node its own selector picks, pool
// or not, and a pool that kept out the node's log shipper or network agent
// would break the node.
//
// A pod the policy rejected is retried when a node is added or its labels
// change. A namespace's labels are no scheduler event: after a namespace
// joins or leaves a pool, its rejected pods wait for the queue's periodic
// flush of unschedulable pods (at most five minutes) or a node event.
//
// The policy runs once per node for every pod and does not allocate: the
// reasons are built once per pool ([filter.Reasons]).
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
)

// PoolLabel names a namespace's pool, and the pool a node belongs to.
const PoolLabel = "wasmsched.io/pool"

// Options are the policy's options: the pre-step and the events after which
// a rejected pod may fit.
var Options = []filter.Option{
	filter.Pre(Concerns),
	filter.Events(abi.FilterEvent{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel}),
}

var (
	notInPool   = filter.NewReasons("node(s) are not in pool ")
	reservedFor = filter.NewReasons("node(s) are reserved for pool ")
)

// Concerns is the pre-step: every pod but a DaemonSet's.
func Concerns(pod abi.PodView) bool { return pod.OwnerKind() != "DaemonSet" }

// Filter lets pod run on node when the pod's namespace and the node are in
// the same pool, or both in none.
func Filter(pod abi.PodView, node abi.NodeView) filter.Verdict {
	want, have := pool(pod.NamespaceLabels()), pool(node.Labels())
	switch {
	case want == have:
		return filter.Pass()
	case want == "":
		return filter.Never(reservedFor.For(have))
	}
	return filter.Never(notInPool.For(want))
}

// pool is the pool the labels name, "" for none.
func pool(labels abi.KVList) string {
	v, _ := labels.Get(PoolLabel)
	return v
}
