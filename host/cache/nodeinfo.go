package cache

import (
	v1 "k8s.io/api/core/v1"
)

// Resource is an amount of every resource the scheduler accounts for: cpu in
// millicores, the others in base units. Scalar holds extended resources and
// hugepages, keyed by resource name; it is nil when there are none.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Pods is a pod count: the node's allocatable pod number, or in a sum of
	// requests the number of pods.
	Pods   int64
	Scalar map[v1.ResourceName]int64
}

// HostPort is one host port a pod uses. IP "" is normalised to 0.0.0.0,
// which conflicts with every IP of the same protocol and port.
type HostPort struct {
	IP       string
	Protocol v1.Protocol
	Port     int32
}

// PodInfo is a pod with what the cache and the filters derive from it once.
// It is immutable once built: a changed pod gets a new PodInfo.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is upstream's effective request sum (component-helpers
	// resource.PodRequests), with Pods = 1.
	Requests Resource
	// NonZero is Requests with cpu and memory defaulted (100m, 200Mi) when a
	// container asks for none, as upstream's scorers use.
	NonZero Resource
	// HostPorts are the host ports of the pod's containers (normalised).
	HostPorts []HostPort
}

// NodeInfo is a node with the pods assigned to it (bound, or assumed by the
// scheduler and not yet confirmed) and their sums. A NodeInfo held by a
// Snapshot is read-only for its user, except through the methods that say
// otherwise.
type NodeInfo struct {
	node        *v1.Node
	pods        []*PodInfo
	requested   Resource // sum of the pods' Requests
	nonZero     Resource // sum of the pods' NonZero
	allocatable Resource
	ports       map[HostPort]int // used host ports, with the number of pods using each
	// generation changes on every change, so a snapshot copies only the
	// node infos that changed since it was last updated.
	generation int64
}

// Node is the node object; nil for a node info that only holds pods whose
// node the cache has not seen (yet).
func (n *NodeInfo) Node() *v1.Node { return n.node }

// Pods are the pods on the node. The slice must not be modified.
func (n *NodeInfo) Pods() []*PodInfo { return n.pods }

// Requested is the sum of the pods' requests (Pods = number of pods).
func (n *NodeInfo) Requested() Resource { return n.requested }

// NonZeroRequested is the sum of the pods' NonZero requests.
func (n *NodeInfo) NonZeroRequested() Resource { return n.nonZero }

// Allocatable is the node's status.allocatable (Pods = allowed pod number).
func (n *NodeInfo) Allocatable() Resource { return n.allocatable }

// Generation identifies the node info's contents; it changes on every change.
func (n *NodeInfo) Generation() int64 { return n.generation }
