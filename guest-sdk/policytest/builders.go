package policytest

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
	"github.com/wasmsched/wasmsched/host/policy"
)

// Builders of test objects, after kube-scheduler's st.MakePod():
//
//	pod := policytest.MakePod().Name("p").Priority(5).Queued(t0).Request("cpu", 500).Obj()
//
// Methods set a field and return the builder; Obj returns a copy of the
// object, View its encoded record as the slots read it. Times are
// time.Time, stored as Unix nanoseconds (the zero time as 0, "unset").

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// sortedKVs returns m's entries sorted by key, so that encodings are
// deterministic.
func sortedKVs(m map[string]string) []abi.KV {
	var out []abi.KV
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, abi.KV{Key: k, Value: m[k]})
	}
	return out
}

func setKV(kvs []abi.KV, k, v string) []abi.KV {
	for i := range kvs {
		if kvs[i].Key == k {
			kvs[i].Value = v
			return kvs
		}
	}
	return append(kvs, abi.KV{Key: k, Value: v})
}

func setQuantity(qs []abi.Quantity, name string, v int64) []abi.Quantity {
	for i := range qs {
		if qs[i].Name == name {
			qs[i].Value = v
			return qs
		}
	}
	return append(qs, abi.Quantity{Name: name, Value: v})
}

// PodWrapper builds an [abi.Pod].
type PodWrapper struct {
	p abi.Pod
	// minor > 0: View returns the record as a host of ABI minor minor-1
	// sends it (OfMinor).
	minor int
}

// MakePod starts a pod with every field zero.
func MakePod() *PodWrapper { return &PodWrapper{} }

func (w *PodWrapper) Name(s string) *PodWrapper      { w.p.Name = s; return w }
func (w *PodWrapper) Namespace(s string) *PodWrapper { w.p.Namespace = s; return w }
func (w *PodWrapper) UID(s string) *PodWrapper       { w.p.UID = s; return w }

// Node sets the node the pod is bound to (assigned pods, in events).
func (w *PodWrapper) Node(s string) *PodWrapper       { w.p.NodeName = s; return w }
func (w *PodWrapper) Priority(v int32) *PodWrapper    { w.p.Priority = v; return w }
func (w *PodWrapper) PreemptNever() *PodWrapper       { w.p.PreemptNever = true; return w }
func (w *PodWrapper) Created(t time.Time) *PodWrapper { w.p.CreationTime = nanos(t); return w }
func (w *PodWrapper) Queued(t time.Time) *PodWrapper  { w.p.QueuedTime = nanos(t); return w }
func (w *PodWrapper) InitialAttempt(t time.Time) *PodWrapper {
	w.p.InitialAttemptTime = nanos(t)
	return w
}
func (w *PodWrapper) BackoffExpiry(t time.Time) *PodWrapper { w.p.BackoffExpiry = nanos(t); return w }
func (w *PodWrapper) Attempts(n int32) *PodWrapper          { w.p.Attempts = n; return w }

// LastFailureError marks the last attempt as failed with an error (rather
// than rejected by a plugin).
func (w *PodWrapper) LastFailureError() *PodWrapper { w.p.LastFailureError = true; return w }

// UnschedulablePlugins appends plugins that rejected the pod.
func (w *PodWrapper) UnschedulablePlugins(names ...string) *PodWrapper {
	w.p.UnschedulablePlugins = append(w.p.UnschedulablePlugins, names...)
	return w
}

// PendingPlugins appends plugins that left the pod pending.
func (w *PodWrapper) PendingPlugins(names ...string) *PodWrapper {
	w.p.PendingPlugins = append(w.p.PendingPlugins, names...)
	return w
}

// Group puts the pod in PodGroup name with the group's minCount.
func (w *PodWrapper) Group(name string, minCount int32) *PodWrapper {
	w.p.Group.Name, w.p.Group.MinCount = name, minCount
	return w
}
func (w *PodWrapper) GroupPriority(v int32) *PodWrapper { w.p.Group.Priority = v; return w }
func (w *PodWrapper) GroupMembers(n int32) *PodWrapper  { w.p.Group.Members = n; return w }
func (w *PodWrapper) GroupDisruption(m abi.DisruptionMode) *PodWrapper {
	w.p.Group.DisruptionMode = m
	return w
}

// Label sets one label.
func (w *PodWrapper) Label(k, v string) *PodWrapper { w.p.Labels = setKV(w.p.Labels, k, v); return w }

// Labels sets labels (added in key order).
func (w *PodWrapper) Labels(m map[string]string) *PodWrapper {
	for _, kv := range sortedKVs(m) {
		w.Label(kv.Key, kv.Value)
	}
	return w
}

// Request sets the pod's request of one resource: cpu in millicores,
// anything else in base units.
func (w *PodWrapper) Request(name string, v int64) *PodWrapper {
	w.p.Requests = setQuantity(w.p.Requests, name, v)
	return w
}

// Requests sets several requests (added in name order).
func (w *PodWrapper) Requests(m map[string]int64) *PodWrapper {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.Request(k, m[k])
	}
	return w
}

// SchedulingGates appends scheduling gates.
func (w *PodWrapper) SchedulingGates(names ...string) *PodWrapper {
	w.p.SchedulingGates = append(w.p.SchedulingGates, names...)
	return w
}

// NodeSelector sets one node selector entry.
func (w *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	w.p.NodeSelector = setKV(w.p.NodeSelector, k, v)
	return w
}

// Toleration appends a toleration.
func (w *PodWrapper) Toleration(key, value string, op abi.TolerationOperator, effect abi.TaintEffect) *PodWrapper {
	w.p.Tolerations = append(w.p.Tolerations, abi.Toleration{Key: key, Value: value, Operator: op, Effect: effect})
	return w
}

// HostPort appends a host port.
func (w *PodWrapper) HostPort(ip string, port int32, proto abi.Protocol) *PodWrapper {
	w.p.HostPorts = append(w.p.HostPorts, abi.HostPort{HostIP: ip, Port: port, Protocol: proto})
	return w
}

// RequiredAffinity appends terms of the required node affinity (ORed).
func (w *PodWrapper) RequiredAffinity(terms ...abi.NodeSelectorTerm) *PodWrapper {
	w.p.RequiredAffinity = append(w.p.RequiredAffinity, terms...)
	return w
}

// Claim appends a PersistentVolumeClaim the pod's volumes name.
func (w *PodWrapper) Claim(name string) *PodWrapper { w.p.Claims = append(w.p.Claims, name); return w }

// EphemeralClaim appends the claim of a generic ephemeral volume (<pod>-<volume>).
func (w *PodWrapper) EphemeralClaim(name string) *PodWrapper {
	w.p.EphemeralClaims = append(w.p.EphemeralClaims, name)
	return w
}

// VolumeDriver appends the CSI driver of an inline volume.
func (w *PodWrapper) VolumeDriver(name string) *PodWrapper {
	w.p.VolumeDrivers = append(w.p.VolumeDrivers, name)
	return w
}

// ResourceClaim appends the name one of the pod's spec.resourceClaims
// resolves to ("" for a claim not generated yet from its template).
func (w *PodWrapper) ResourceClaim(name string) *PodWrapper {
	w.p.ResourceClaims = append(w.p.ResourceClaims, name)
	return w
}

// NamespaceLabel sets one label of the pod's namespace (what the placement
// slots see of it).
func (w *PodWrapper) NamespaceLabel(k, v string) *PodWrapper {
	w.p.NamespaceLabels = setKV(w.p.NamespaceLabels, k, v)
	return w
}

// OwnerKind sets the kind of the pod's controller ("ReplicaSet", "Job").
func (w *PodWrapper) OwnerKind(kind string) *PodWrapper { w.p.OwnerKind = kind; return w }

// Obj returns a copy of the pod.
func (w *PodWrapper) Obj() *abi.Pod {
	p := w.p
	p.Labels = slices.Clone(p.Labels)
	p.Requests = slices.Clone(p.Requests)
	p.UnschedulablePlugins = slices.Clone(p.UnschedulablePlugins)
	p.PendingPlugins = slices.Clone(p.PendingPlugins)
	p.SchedulingGates = slices.Clone(p.SchedulingGates)
	p.NodeSelector = slices.Clone(p.NodeSelector)
	p.Tolerations = slices.Clone(p.Tolerations)
	p.HostPorts = slices.Clone(p.HostPorts)
	p.RequiredAffinity = slices.Clone(p.RequiredAffinity)
	p.Claims = slices.Clone(p.Claims)
	p.EphemeralClaims = slices.Clone(p.EphemeralClaims)
	p.VolumeDrivers = slices.Clone(p.VolumeDrivers)
	p.ResourceClaims = slices.Clone(p.ResourceClaims)
	p.NamespaceLabels = slices.Clone(p.NamespaceLabels)
	return &p
}

// View returns the pod's encoded record.
func (w *PodWrapper) View() abi.PodView {
	if w.minor > 0 {
		v, err := abi.ReadPod(abitest.PodOfMinor(abi.AppendPod(nil, &w.p), w.minor-1))
		if err != nil {
			panic("policytest: encoding a pod: " + err.Error())
		}
		return v
	}
	return PodView(&w.p)
}

// OfMinor makes View return the pod's record as a host of an older ABI
// minor (0-3) sends it, without the fields that minor lacks: a policy must
// keep working for it.
func (w *PodWrapper) OfMinor(minor int) *PodWrapper { w.minor = minor + 1; return w }

// PodAffinity appends required pod affinity terms (ABI minor 4).
func (w *PodWrapper) PodAffinity(terms ...abi.PodAffinityTerm) *PodWrapper {
	w.p.PodAffinity = append(w.p.PodAffinity, terms...)
	return w
}

// PodAntiAffinity appends required pod anti-affinity terms (ABI minor 4).
func (w *PodWrapper) PodAntiAffinity(terms ...abi.PodAffinityTerm) *PodWrapper {
	w.p.PodAntiAffinity = append(w.p.PodAntiAffinity, terms...)
	return w
}

// SpreadConstraint appends topology spread constraints (ABI minor 4).
func (w *PodWrapper) SpreadConstraint(cs ...abi.SpreadConstraint) *PodWrapper {
	w.p.SpreadConstraints = append(w.p.SpreadConstraints, cs...)
	return w
}

// AddedAffinity sets the profile's NodeAffinity addedAffinity terms (ABI
// minor 4).
func (w *PodWrapper) AddedAffinity(terms ...abi.NodeSelectorTerm) *PodWrapper {
	w.p.AddedAffinity, w.p.HasAddedAffinity = append(w.p.AddedAffinity, terms...), true
	return w
}

// RequiredFeatures sets the node features the pod needs (ABI minor 4).
func (w *PodWrapper) RequiredFeatures(names ...string) *PodWrapper {
	w.p.RequiredFeatures = names
	return w
}

// PodView encodes p and returns a view of the record.
func PodView(p *abi.Pod) abi.PodView {
	v, err := abi.ReadPod(abi.AppendPod(nil, p))
	if err != nil {
		panic("policytest: encoding a pod: " + err.Error()) // abi's own encoding: a bug
	}
	return v
}

// NodeWrapper builds an [abi.Node].
type NodeWrapper struct{ n abi.Node }

// MakeNode starts a node with every field zero.
func MakeNode() *NodeWrapper { return &NodeWrapper{} }

func (w *NodeWrapper) Name(s string) *NodeWrapper  { w.n.Name = s; return w }
func (w *NodeWrapper) Unschedulable() *NodeWrapper { w.n.Unschedulable = true; return w }
func (w *NodeWrapper) Label(k, v string) *NodeWrapper {
	w.n.Labels = setKV(w.n.Labels, k, v)
	return w
}

// Labels sets labels (added in key order).
func (w *NodeWrapper) Labels(m map[string]string) *NodeWrapper {
	for _, kv := range sortedKVs(m) {
		w.Label(kv.Key, kv.Value)
	}
	return w
}

// Taint appends a taint.
func (w *NodeWrapper) Taint(key, value string, effect abi.TaintEffect) *NodeWrapper {
	w.n.Taints = append(w.n.Taints, abi.Taint{Key: key, Value: value, Effect: effect})
	return w
}

// Allocatable sets the node's allocatable amount of one resource (cpu in
// millicores, anything else in base units).
func (w *NodeWrapper) Allocatable(name string, v int64) *NodeWrapper {
	w.n.Allocatable = setQuantity(w.n.Allocatable, name, v)
	return w
}

// Requested sets the sum of the requests of the pods on the node for one
// resource.
func (w *NodeWrapper) Requested(name string, v int64) *NodeWrapper {
	w.n.Requested = setQuantity(w.n.Requested, name, v)
	return w
}

// Image appends a container image the node has, of size bytes.
func (w *NodeWrapper) Image(name string, size int64) *NodeWrapper {
	w.n.Images = append(w.n.Images, abi.Image{Name: name, Size: size})
	return w
}

// Obj returns a copy of the node.
func (w *NodeWrapper) Obj() *abi.Node {
	n := w.n
	n.Labels = slices.Clone(n.Labels)
	n.Taints = slices.Clone(n.Taints)
	n.Allocatable = slices.Clone(n.Allocatable)
	n.Requested = slices.Clone(n.Requested)
	n.Images = slices.Clone(n.Images)
	return &n
}

// Placement returns the node as a placement call names it: its record
// under a new id, at generation 1, held by the module (not inline). Every
// call returns a new id, unique in the process, so that a module instance
// shared by several tests never mistakes one test's node for another's;
// the host would send the record again only for a new generation. Set
// Inline on the result for a node sent whole (preemption's dry run).
func (w *NodeWrapper) Placement() policy.PlacementNode {
	return placementNode(w.View())
}

// PlacementNodes is Placement of each node.
func PlacementNodes(nodes ...*NodeWrapper) []policy.PlacementNode {
	out := make([]policy.PlacementNode, len(nodes))
	for i, n := range nodes {
		out[i] = n.Placement()
	}
	return out
}

// nextNodeID numbers the placement nodes of the process.
var nextNodeID atomic.Uint32

func placementNode(rec abi.NodeView) policy.PlacementNode {
	return policy.PlacementNode{ID: nextNodeID.Add(1) - 1, Gen: 1, Rec: rec}
}

// View returns the node's encoded record.
func (w *NodeWrapper) View() abi.NodeView {
	v, err := abi.ReadNode(abi.AppendNode(nil, &w.n))
	if err != nil {
		panic("policytest: encoding a node: " + err.Error())
	}
	return v
}

// PodGroupWrapper builds an [abi.PodGroup].
type PodGroupWrapper struct{ g abi.PodGroup }

// MakePodGroup starts a pod group with every field zero.
func MakePodGroup() *PodGroupWrapper { return &PodGroupWrapper{} }

func (w *PodGroupWrapper) Name(s string) *PodGroupWrapper      { w.g.Name = s; return w }
func (w *PodGroupWrapper) Namespace(s string) *PodGroupWrapper { w.g.Namespace = s; return w }
func (w *PodGroupWrapper) MinCount(n int32) *PodGroupWrapper   { w.g.MinCount = n; return w }
func (w *PodGroupWrapper) Priority(v int32) *PodGroupWrapper   { w.g.Priority = v; return w }
func (w *PodGroupWrapper) PreemptNever() *PodGroupWrapper      { w.g.PreemptNever = true; return w }
func (w *PodGroupWrapper) Members(n int32) *PodGroupWrapper    { w.g.Members = n; return w }
func (w *PodGroupWrapper) Disruption(m abi.DisruptionMode) *PodGroupWrapper {
	w.g.DisruptionMode = m
	return w
}

// Obj returns a copy of the pod group.
func (w *PodGroupWrapper) Obj() *abi.PodGroup { g := w.g; return &g }

// VictimWrapper builds an [abi.Victim]: a pod unless Group is called.
type VictimWrapper struct{ v abi.Victim }

// MakeVictim starts a pod victim with every field zero.
func MakeVictim() *VictimWrapper { return &VictimWrapper{} }

func (w *VictimWrapper) Name(s string) *VictimWrapper      { w.v.Name = s; return w }
func (w *VictimWrapper) Namespace(s string) *VictimWrapper { w.v.Namespace = s; return w }
func (w *VictimWrapper) UID(s string) *VictimWrapper       { w.v.UID = s; return w }
func (w *VictimWrapper) Priority(v int32) *VictimWrapper   { w.v.Priority = v; return w }

// Started sets the start time (of a group: its earliest member's); the zero
// time means not started.
func (w *VictimWrapper) Started(t time.Time) *VictimWrapper { w.v.StartTime = nanos(t); return w }

// Group makes the victim a pod group (disruption mode all) of members pods.
func (w *VictimWrapper) Group(members int32) *VictimWrapper {
	w.v.Kind, w.v.Members = abi.VictimGroup, members
	return w
}

// PDBViolating marks that preempting the victim would violate a PodDisruptionBudget.
func (w *VictimWrapper) PDBViolating() *VictimWrapper { w.v.PDBViolating = true; return w }

// Obj returns the victim.
func (w *VictimWrapper) Obj() abi.Victim { return w.v }
