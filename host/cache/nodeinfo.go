package cache

import (
	"maps"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Resource is an amount of every resource the scheduler accounts for: cpu in
// millicores, the others in base units. Scalar holds extended resources and
// hugepages, keyed by resource name; it is nil when there are none.
//
// Resource is a value, but Scalar is a map: Clone a Resource before you
// mutate one you did not build (a PodInfo's, a NodeInfo's).
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
	// Affinity is the pod's inter-pod affinity, parsed; nil when it has
	// none.
	Affinity *PodAffinity
	// Claims are the "namespace/name" keys of the claims of the pod's
	// persistentVolumeClaim volumes, once per volume (upstream's
	// PodPVCKeys; generic ephemeral volumes are not counted, as upstream);
	// nil when it has none.
	Claims []string
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
	// withAffinity are the pods with any inter-pod affinity term: the
	// only pods the snapshot's term index (AffinityTerms) reads.
	withAffinity []*PodInfo
	// images maps every name of every image in node.status.images to its
	// size (nil for a node without images), derived from the node object
	// and shared by clones.
	images map[string]int64
	// claims counts the pods on the node using each claim, by
	// "namespace/name" (PodInfo.Claims; upstream's PVCRefCounts); nil when
	// no pod uses one.
	claims map[string]int
	// generation changes on every change, so a snapshot copies only the
	// node infos that changed since it was last updated.
	generation int64
}

// Node is the node object; nil for a node info that only holds pods whose
// node the cache has not seen (yet).
func (n *NodeInfo) Node() *v1.Node { return n.node }

// Pods are the pods on the node. The slice must not be modified.
func (n *NodeInfo) Pods() []*PodInfo { return n.pods }

// PodsWithAffinity are the pods on the node with any pod affinity or
// anti-affinity term. The slice must not be modified.
func (n *NodeInfo) PodsWithAffinity() []*PodInfo { return n.withAffinity }

// ImageSize is the size of image on the node, by any of the names
// node.status.images gives it, and whether the node has it.
func (n *NodeInfo) ImageSize(image string) (int64, bool) {
	size, ok := n.images[image]
	return size, ok
}

// imageSizes maps the names of node's images to their sizes (upstream's
// node image states, less the node count, which Snapshot.ImageNodes keeps).
func imageSizes(node *v1.Node) map[string]int64 {
	if len(node.Status.Images) == 0 {
		return nil
	}
	out := make(map[string]int64, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			out[name] = img.SizeBytes
		}
	}
	return out
}

// ClaimUsers is the number of pods on the node using claim key
// ("namespace/name").
func (n *NodeInfo) ClaimUsers(key string) int { return n.claims[key] }

// Requested is the sum of the pods' requests (Pods = number of pods).
func (n *NodeInfo) Requested() Resource { return n.requested }

// NonZeroRequested is the sum of the pods' NonZero requests.
func (n *NodeInfo) NonZeroRequested() Resource { return n.nonZero }

// Allocatable is the node's status.allocatable (Pods = allowed pod number).
func (n *NodeInfo) Allocatable() Resource { return n.allocatable }

// Generation identifies the node info's contents; it changes on every change.
func (n *NodeInfo) Generation() int64 { return n.generation }

// generation is the last generation handed out; see nextGeneration.
var generation atomic.Int64

// nextGeneration returns a generation no node info has had. It is
// process-wide, as upstream's, so that a node removed and added again under
// the same name can never look unchanged to a snapshot.
func nextGeneration() int64 { return generation.Add(1) }

// NewNodeInfo returns a node info for node (nil for one that holds pods of a
// node not seen yet) with pods on it. The pods slice is copied.
func NewNodeInfo(node *v1.Node, pods ...*PodInfo) *NodeInfo {
	n := &NodeInfo{}
	if node != nil {
		n.node = node
		n.allocatable = NewResource(node.Status.Allocatable)
		n.images = imageSizes(node)
	}
	if len(pods) > 0 {
		n.pods = make([]*PodInfo, 0, len(pods))
	}
	for _, pi := range pods {
		n.add(pi)
	}
	n.generation = nextGeneration()
	return n
}

// Name is the node's name, or "" when the node info has no node.
func (n *NodeInfo) Name() string {
	if n.node == nil {
		return ""
	}
	return n.node.Name
}

// AddPod adds pi to the node and its requests, non-zero requests and host
// ports to the sums. The caller makes sure the pod is not on the node already.
func (n *NodeInfo) AddPod(pi *PodInfo) {
	n.add(pi)
	n.generation = nextGeneration()
}

func (n *NodeInfo) add(pi *PodInfo) {
	n.pods = append(n.pods, pi)
	n.requested.Add(pi.Requests)
	n.nonZero.Add(pi.NonZero)
	if len(pi.HostPorts) > 0 && n.ports == nil {
		n.ports = make(map[HostPort]int, len(pi.HostPorts))
	}
	for _, p := range pi.HostPorts {
		n.ports[p]++
	}
	if pi.Affinity.HasAny() {
		n.withAffinity = append(n.withAffinity, pi)
	}
	if len(pi.Claims) > 0 && n.claims == nil {
		n.claims = make(map[string]int, len(pi.Claims))
	}
	for _, k := range pi.Claims {
		n.claims[k]++
	}
}

// RemovePod removes the pod with uid and subtracts what AddPod added. It
// reports whether the pod was on the node. Pod order is not kept: the last
// pod takes the removed one's place, as upstream does.
func (n *NodeInfo) RemovePod(uid types.UID) bool {
	i := slices.IndexFunc(n.pods, func(pi *PodInfo) bool { return pi.Pod.UID == uid })
	if i < 0 {
		return false
	}
	pi := n.pods[i]
	last := len(n.pods) - 1
	n.pods[i] = n.pods[last]
	n.pods[last] = nil // let the PodInfo go
	n.pods = n.pods[:last]
	if last == 0 {
		n.pods = nil
	}
	n.requested.Sub(pi.Requests)
	n.nonZero.Sub(pi.NonZero)
	for _, p := range pi.HostPorts {
		if c := n.ports[p]; c > 1 {
			n.ports[p] = c - 1
		} else {
			delete(n.ports, p)
		}
	}
	if len(n.ports) == 0 {
		n.ports = nil // as a node info that never had a port
	}
	for _, k := range pi.Claims {
		if c := n.claims[k]; c > 1 {
			n.claims[k] = c - 1
		} else {
			delete(n.claims, k)
		}
	}
	if len(n.claims) == 0 {
		n.claims = nil
	}
	if pi.Affinity.HasAny() {
		n.withAffinity = removePodInfo(n.withAffinity, uid)
	}
	n.generation = nextGeneration()
	return true
}

// SetNode sets the node object and, from it, the allocatable resources. A nil
// node leaves a node info that only holds pods: the node was deleted before
// the deletion of all its pods was seen.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node = node
	n.allocatable = Resource{}
	n.images = nil
	if node != nil {
		n.allocatable = NewResource(node.Status.Allocatable)
		n.images = imageSizes(node)
	}
	n.generation = nextGeneration()
}

// Clone returns a copy of n that can be changed without changing n: the pod
// list, the sums and the port counts are copied. The pods themselves
// (immutable PodInfos) and the node object are shared. The copy has n's
// generation, since it has n's contents.
func (n *NodeInfo) Clone() *NodeInfo {
	return &NodeInfo{
		node:        n.node,
		pods:        slices.Clone(n.pods),
		requested:   n.requested.Clone(),
		nonZero:     n.nonZero.Clone(),
		allocatable: n.allocatable.Clone(),
		ports:       maps.Clone(n.ports),
		claims:      maps.Clone(n.claims),
		generation:  n.generation,
		images:      n.images,

		withAffinity: slices.Clone(n.withAffinity),
	}
}

// removePodInfo removes the pod with uid from pods in place, the last pod
// taking its place; nil when none is left.
func removePodInfo(pods []*PodInfo, uid types.UID) []*PodInfo {
	i := slices.IndexFunc(pods, func(pi *PodInfo) bool { return pi.Pod.UID == uid })
	if i < 0 {
		return pods
	}
	last := len(pods) - 1
	pods[i] = pods[last]
	pods[last] = nil
	if last == 0 {
		return nil
	}
	return pods[:last]
}

// PortConflict reports whether a pod using host port p would conflict with
// the pods on the node, with upstream's HostPortInfo.CheckConflict semantics:
// p is normalised, a port <= 0 never conflicts, 0.0.0.0 conflicts with the
// same protocol and port on any IP, and a specific IP conflicts with itself
// and with 0.0.0.0.
func (n *NodeInfo) PortConflict(p HostPort) bool {
	if p.Port <= 0 || len(n.ports) == 0 {
		return false
	}
	p = normalisePort(p)
	if p.IP == bindAllIP {
		for used := range n.ports {
			if used.Port == p.Port && used.Protocol == p.Protocol {
				return true
			}
		}
		return false
	}
	if _, ok := n.ports[p]; ok {
		return true
	}
	p.IP = bindAllIP
	_, ok := n.ports[p]
	return ok
}
