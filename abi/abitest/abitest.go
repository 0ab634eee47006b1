// Package abitest holds the table of representative values that pins the
// wire format of package abi: every record type, the sort key and the victim
// order, each as a named case. The table is encoded by the host tests (Go) and
// by the golden guest (TinyGo) and compared with the committed golden vectors
// in abi/testdata/golden, so both compilers are held to the same bytes.
//
// Like abi, it imports only the standard library and builds under TinyGo. The
// cases are deterministic: no map iteration, no clock.
package abitest

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/wasmsched/wasmsched/abi"
)

// Case is one golden vector: Encode appends the case's wire form to dst.
// Name is a stable file name (lowercase, dashes), without extension.
type Case struct {
	Name   string
	Encode func(dst []byte) []byte
}

// Cases returns the table in a fixed order. Each call builds fresh values.
func Cases() []Case {
	return []Case{
		{"pod-empty", podCase(abi.Pod{})},
		{"pod-minimal", podCase(MinimalPod())},
		{"pod-full", podCase(FullPod())},
		{"pod-gang-member", podCase(GangPod())},

		{"node-minimal", nodeCase(MinimalNode())},
		{"node-full", nodeCase(FullNode())},

		{"podgroup-minimal", groupCase(abi.PodGroup{Namespace: "default", Name: "g"})},
		{"podgroup-full", groupCase(FullPodGroup())},

		{"event-pod-add", eventCase(PodAddEvent)},
		{"event-node-update", eventCase(NodeUpdateEvent)},
		{"event-podgroup-add", eventCase(PodGroupAddEvent)},
		{"event-pod-delete", eventCase(PodDeleteEvent)},

		// Storage objects and events (ABI minor 1).
		{"storage-minimal", storageCase(abi.StorageObject{Name: "pv-1"})},
		{"storage-full", storageCase(FullStorage())},
		{"storage-csinode", storageCase(CSINode())},
		{"event-pvc-add", eventCase(ClaimAddEvent)},
		{"event-csinode-update", eventCase(CSINodeUpdateEvent)},

		// DRA objects and events (ABI minor 2).
		{"event-resourceclaim-deallocate", eventCase(ResourceClaimDeallocateEvent)},
		{"event-resourceslice-add", eventCase(ResourceSliceAddEvent)},

		{"hintbatch-no-pods", func(dst []byte) []byte {
			return abi.AppendHintBatch(dst, abi.AppendEvent(nil, NodeUpdateEvent()), nil)
		}},
		{"hintbatch-3-pods", func(dst []byte) []byte {
			pods := [][]byte{appendPod(MinimalPod()), appendPod(FullPod()), appendPod(GangPod())}
			return abi.AppendHintBatch(dst, abi.AppendEvent(nil, NodeUpdateEvent()), pods)
		}},

		{"victimbatch-no-preemptor", func(dst []byte) []byte {
			return abi.AppendVictimBatch(dst, nil, Victims()[:2])
		}},
		{"victimbatch-preemptor", func(dst []byte) []byte {
			return abi.AppendVictimBatch(dst, appendPod(GangPod()), Victims())
		}},

		{"gate-admit", gateCase(abi.Gate{Code: abi.GateAdmit})},
		{"gate-wait", gateCase(WaitGate())},

		{"registrations-empty", func(dst []byte) []byte { return abi.AppendRegistrations(dst, nil) }},
		{"registrations", func(dst []byte) []byte { return abi.AppendRegistrations(dst, Registrations()) }},

		// Placement records (ABI minor 3).
		{"placement-ids", func(dst []byte) []byte {
			return abi.AppendPlacement(dst, appendPod(GangPod()), []uint32{0, 7, math.MaxUint32}, nil)
		}},
		{"placement-inline", func(dst []byte) []byte {
			return abi.AppendPlacement(dst, appendPod(FullPod()), []uint32{3}, InlineNodes())
		}},
		{"placement-inline-only", func(dst []byte) []byte {
			return abi.AppendPlacement(dst, appendPod(MinimalPod()), nil, InlineNodes()[:1])
		}},
		{"nodesync-reset", func(dst []byte) []byte {
			return abi.AppendNodeSync(dst, true, NodeUpserts(), nil)
		}},
		{"nodesync-delta", func(dst []byte) []byte {
			return abi.AppendNodeSync(dst, false, NodeUpserts()[1:], []uint32{2, math.MaxUint32})
		}},
		{"nodesync-empty", func(dst []byte) []byte { return abi.AppendNodeSync(dst, false, nil, nil) }},
		{"verdicts-all-pass", func(dst []byte) []byte {
			return abi.AppendVerdicts(dst, []uint32{abi.Verdict(abi.FilterPass, 0), abi.Verdict(abi.FilterPass, 0)}, nil)
		}},
		{"verdicts", func(dst []byte) []byte {
			v, r := Verdicts()
			return abi.AppendVerdicts(dst, v, r)
		}},
		{"placementoptions-default", func(dst []byte) []byte {
			return abi.AppendPlacementOptions(dst, &abi.PlacementOptions{})
		}},
		{"placementoptions", func(dst []byte) []byte {
			o := FullPlacementOptions()
			return abi.AppendPlacementOptions(dst, &o)
		}},

		{"sortkey-zero", sortKeyCase(abi.SortKey{})},
		{"sortkey-priority-time", sortKeyCase(abi.SortKey{abi.Desc(100), abi.Asc(1_700_000_000_000_000_000), 0, 0})},
		{"sortkey-negative", sortKeyCase(abi.SortKey{
			abi.Desc(-5), abi.Asc(-1_000), abi.Asc(math.MinInt64), abi.Desc(math.MaxInt64),
		})},
		{"sortkey-max", sortKeyCase(abi.SortKey{math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64})},

		// No order has 8 indices: its 32 bytes would read as a sort key (see RoundTrip).
		{"order-one", orderCase([]uint32{0})},
		{"order-five", orderCase([]uint32{4, 0, 3, 1, 2})},
	}
}

// MinimalPod is a pod with only its identity, priority and creation time.
func MinimalPod() abi.Pod {
	return abi.Pod{
		UID: "0b5e4b0e-0000-4000-8000-000000000001", Namespace: "default", Name: "web-0",
		Priority: 0, CreationTime: 1_700_000_000_000_000_000,
	}
}

// FullPod sets every field of abi.Pod, with extreme numbers (negative
// priority, max and min int64 times and quantities) and non-ASCII strings.
func FullPod() abi.Pod {
	return abi.Pod{
		UID:       "6f1c3c2e-8a1b-4d5e-9f00-1234567890ab",
		Namespace: "équipe-données",
		Name:      "trainer-ß-🚀-0",
		NodeName:  "node-α",

		Priority:     math.MinInt32,
		PreemptNever: true,

		CreationTime:       math.MaxInt64,
		QueuedTime:         math.MaxInt64 - 1,
		InitialAttemptTime: 1_700_000_000_123_456_789,
		BackoffExpiry:      math.MinInt64,

		Attempts:             math.MaxInt32,
		LastFailureError:     true,
		UnschedulablePlugins: []string{"NodeAffinity", "TaintToleration"},
		PendingPlugins:       []string{"NodeResourcesFit"},

		Group: abi.PodGroupRef{Name: "gang-日本", MinCount: 4, Priority: -5, DisruptionMode: abi.DisruptionAll, Members: 3},

		Labels: []abi.KV{
			{Key: "app", Value: "trainer"}, {Key: "team", Value: "ml"},
			{Key: "emoji", Value: "🚀"}, {Key: "empty-value", Value: ""},
		},
		Requests: []abi.Quantity{
			{Name: "cpu", Value: 1500}, {Name: "memory", Value: 8 << 30}, {Name: "nvidia.com/gpu", Value: 2},
			{Name: "ephemeral-storage", Value: math.MaxInt64}, {Name: "example.com/negative", Value: -1},
		},
		SchedulingGates: []string{"example.com/quota", "ünïcödé/gate"},
		NodeSelector: []abi.KV{
			{Key: "kubernetes.io/os", Value: "linux"}, {Key: "topology.kubernetes.io/zone", Value: "eu-west-1a"},
		},
		Tolerations: []abi.Toleration{
			{Key: "dedicated", Value: "gpu", Operator: abi.TolerationEqual, Effect: abi.EffectNoSchedule},
			{Key: "node.kubernetes.io/not-ready", Operator: abi.TolerationExists, Effect: abi.EffectNoExecute},
			{Operator: abi.TolerationExists}, // tolerates everything
		},
		HostPorts: []abi.HostPort{
			{HostIP: "0.0.0.0", Port: 8080, Protocol: abi.ProtocolTCP},
			{HostIP: "::1", Port: 53, Protocol: abi.ProtocolUDP},
			{Port: 65535, Protocol: abi.ProtocolSCTP},
		},
		RequiredAffinity: []abi.NodeSelectorTerm{
			{
				MatchExpressions: []abi.Requirement{
					{Key: "topology.kubernetes.io/zone", Operator: abi.SelectorIn, Values: []string{"eu-west-1a", "eu-west-1b", "ζώνη-γ"}},
					{Key: "nvidia.com/gpu.present", Operator: abi.SelectorExists},
				},
				MatchFields: []abi.Requirement{
					{Key: "metadata.name", Operator: abi.SelectorNotIn, Values: []string{"node-1"}},
				},
			},
			{MatchExpressions: []abi.Requirement{{Key: "cpu-generation", Operator: abi.SelectorGt, Values: []string{"5"}}}},
			{MatchFields: []abi.Requirement{{Key: "metadata.name", Operator: abi.SelectorIn, Values: []string{"node-α"}}}},
		},
		Claims:          []string{"data-trainer-0", "données"},
		EphemeralClaims: []string{"trainer-ß-🚀-0-scratch"},
		VolumeDrivers:   []string{"ebs.csi.aws.com"},
		ResourceClaims:  []string{"gpu-trainer-0", "", "nic-ß"},

		NamespaceLabels: []abi.KV{
			{Key: "kubernetes.io/metadata.name", Value: "équipe-données"}, {Key: "pool", Value: "gpu"},
			{Key: "zz-empty", Value: ""},
		},
		OwnerKind: "StatefulSet",

		PodAffinity: []abi.PodAffinityTerm{{
			Selector: []abi.Requirement{
				{Key: "app", Operator: abi.SelectorIn, Values: []string{"param-server"}},
				{Key: "tier", Operator: abi.SelectorNotIn, Values: []string{"α", "β"}},
			},
			NoNamespaceSelector: true,
			TopologyKey:         "topology.kubernetes.io/zone",
		}},
		PodAntiAffinity: []abi.PodAffinityTerm{
			{Selector: []abi.Requirement{{Key: "app", Operator: abi.SelectorIn, Values: []string{"trainer"}}},
				Namespaces: []string{"équipe-données", "other"}, NoNamespaceSelector: true, TopologyKey: "kubernetes.io/hostname"},
			{NoSelector: true, NamespaceSelector: []abi.Requirement{{Key: "pool", Operator: abi.SelectorExists}},
				TopologyKey: "rack"},
		},
		PreferredPodAffinity: []abi.PodAffinityTerm{
			{Selector: []abi.Requirement{{Key: "cache", Operator: abi.SelectorDoesNotExist}}, TopologyKey: "kubernetes.io/hostname", Weight: 100},
		},
		PreferredPodAntiAffinity: []abi.PodAffinityTerm{
			{NoNamespaceSelector: true, TopologyKey: "zone", Weight: 1},
		},
		SpreadConstraints: []abi.SpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: abi.SpreadDoNotSchedule,
				Selector: []abi.Requirement{
					{Key: "app", Operator: abi.SelectorIn, Values: []string{"trainer"}},
					{Key: "pod-template-hash", Operator: abi.SelectorIn, Values: []string{"5d9f"}},
				},
				MatchLabelKeys: []string{"pod-template-hash"}, MinDomains: 3,
				NodeAffinityPolicy: abi.InclusionIgnore, NodeTaintsPolicy: abi.InclusionHonor},
			{MaxSkew: math.MaxInt32, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: abi.SpreadScheduleAnyway,
				NoSelector: true, MinDomains: 1, NodeAffinityPolicy: abi.InclusionHonor, NodeTaintsPolicy: abi.InclusionIgnore},
		},
		AddedAffinity: []abi.NodeSelectorTerm{
			{MatchExpressions: []abi.Requirement{{Key: "scheduler", Operator: abi.SelectorIn, Values: []string{"wasmsched"}}}},
		},
		HasAddedAffinity: true,
		RequiredFeatures: []string{"InPlacePodResize", "RestartAllContainers"},
	}
}

// GangPod is a queued member of the pod group FullPodGroup.
func GangPod() abi.Pod {
	return abi.Pod{
		UID: "0b5e4b0e-0000-4000-8000-0000000000aa", Namespace: "training", Name: "llm-worker-3",
		Priority: 1000, CreationTime: 1_700_000_000_000_000_000, QueuedTime: 1_700_000_100_000_000_000,
		InitialAttemptTime: 1_700_000_100_500_000_000, BackoffExpiry: 1_700_000_102_000_000_000, Attempts: 2,
		UnschedulablePlugins: []string{"GangScheduling"},
		Group: abi.PodGroupRef{
			Name: "llm", MinCount: 8, Priority: 1000, DisruptionMode: abi.DisruptionAll, Members: 5,
		},
		Labels:   []abi.KV{{Key: "job", Value: "llm"}},
		Requests: []abi.Quantity{{Name: "cpu", Value: 4000}, {Name: "nvidia.com/gpu", Value: 1}},
	}
}

// MinimalNode is a schedulable node with a name only.
func MinimalNode() abi.Node { return abi.Node{Name: "node-1"} }

// FullNode sets every field of abi.Node.
func FullNode() abi.Node {
	return abi.Node{
		Name:          "node-α",
		Unschedulable: true,
		Labels: []abi.KV{
			{Key: "kubernetes.io/hostname", Value: "node-α"}, {Key: "topology.kubernetes.io/zone", Value: "eu-west-1a"},
			{Key: "nvidia.com/gpu.present", Value: "true"},
		},
		Taints: []abi.Taint{
			{Key: "dedicated", Value: "gpu", Effect: abi.EffectNoSchedule},
			{Key: "node.kubernetes.io/unreachable", Effect: abi.EffectNoExecute},
			{Key: "spot", Value: "true", Effect: abi.EffectPreferNoSchedule},
		},
		Allocatable: []abi.Quantity{
			{Name: "cpu", Value: 64000}, {Name: "memory", Value: 256 << 30}, {Name: "pods", Value: 110},
			{Name: "nvidia.com/gpu", Value: 8},
		},
		Requested: []abi.Quantity{{Name: "cpu", Value: 63500}, {Name: "memory", Value: 200 << 30}, {Name: "pods", Value: 109}},
		Images: []abi.Image{
			{Name: "registry.k8s.io/pause:3.10", Size: 320_368},
			{Name: "ghcr.io/équipe/trainer@sha256:0123456789abcdef", Size: math.MaxInt64},
			{Name: "example.com/unknown-size", Size: 0},
		},
	}
}

// InlineNodes are node records a placement sends whole (preemption's dry
// run of a node without its victims): a minimal and a full node.
func InlineNodes() [][]byte {
	m, f := MinimalNode(), FullNode()
	return [][]byte{abi.AppendNode(nil, &m), abi.AppendNode(nil, &f)}
}

// NodeUpserts are the nodes of a node sync: ids 0 and 1, then the highest id.
func NodeUpserts() []abi.NodeUpsert {
	m, f := MinimalNode(), FullNode()
	return []abi.NodeUpsert{
		{ID: 0, Node: abi.AppendNode(nil, &m)},
		{ID: 1, Node: abi.AppendNode(nil, &f)},
		{ID: math.MaxUint32, Node: abi.AppendNode(nil, &m)},
	}
}

// Verdicts are a filter's answer for five nodes: every code, a reason
// shared by two nodes and a non-ASCII reason.
func Verdicts() (verdicts []uint32, reasons []string) {
	return []uint32{
			abi.Verdict(abi.FilterPass, 0),
			abi.Verdict(abi.FilterUnschedulable, 0),
			abi.Verdict(abi.FilterUnresolvable, 1),
			abi.Verdict(abi.FilterUnschedulable, 0),
			abi.Verdict(abi.FilterPass, 0),
		}, []string{
			"node is reserved for pool gpu",
			"image ghcr.io/équipe/trainer is not on the node — 不在",
		}
}

// FullPlacementOptions sets every field of abi.PlacementOptions: normalised
// scores and filter events on several resources, a wildcard among them.
func FullPlacementOptions() abi.PlacementOptions {
	return abi.PlacementOptions{
		ScoreNormalized: true,
		FilterEvents: []abi.FilterEvent{
			{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel},
			{Resource: abi.ResourcePod, Actions: abi.ActionDelete},
			{Resource: abi.ResourceResourceClaim, Actions: abi.ActionUpdateOther},
			{Resource: abi.ResourceWildcard, Actions: abi.ActionAll},
		},
	}
}

// FullPodGroup sets every field of abi.PodGroup.
func FullPodGroup() abi.PodGroup {
	return abi.PodGroup{
		Namespace: "training", Name: "llm", MinCount: 8, Priority: -3, PreemptNever: true,
		DisruptionMode: abi.DisruptionAll, Members: 5,
	}
}

// PodAddEvent: an unscheduled pod was added (new object only).
func PodAddEvent() *abi.Event {
	return &abi.Event{Resource: abi.ResourceUnscheduledPod, Action: abi.ActionAdd, New: appendPod(MinimalPod())}
}

// NodeUpdateEvent: a node's taints and allocatable changed (old and new).
func NodeUpdateEvent() *abi.Event {
	o, n := MinimalNode(), FullNode()
	return &abi.Event{
		Resource: abi.ResourceNode, Action: abi.ActionUpdateNodeTaint | abi.ActionUpdateNodeAllocatable,
		Old: abi.AppendNode(nil, &o), New: abi.AppendNode(nil, &n),
	}
}

// PodGroupAddEvent: a pod group was created.
func PodGroupAddEvent() *abi.Event {
	g := FullPodGroup()
	return &abi.Event{Resource: abi.ResourcePodGroup, Action: abi.ActionAdd, New: abi.AppendPodGroup(nil, &g)}
}

// PodDeleteEvent: a bound pod was deleted (old object only).
func PodDeleteEvent() *abi.Event {
	return &abi.Event{Resource: abi.ResourcePod, Action: abi.ActionDelete, Old: appendPod(FullPod())}
}

// Victims are preemption candidates: pods and a pod group, one violating a PDB.
func Victims() []abi.Victim {
	return []abi.Victim{
		{Kind: abi.VictimPod, Priority: -10, StartTime: 1_700_000_000_000_000_000, Members: 1,
			UID: "0b5e4b0e-0000-4000-8000-0000000000b1", Namespace: "batch", Name: "etl-7"},
		{Kind: abi.VictimPod, Priority: 0, StartTime: math.MaxInt64, Members: 1, PDBViolating: true,
			UID: "0b5e4b0e-0000-4000-8000-0000000000b2", Namespace: "web", Name: "frontend-ø"},
		{Kind: abi.VictimGroup, Priority: 50, StartTime: 1_699_999_999_000_000_000, Members: 4,
			Namespace: "training", Name: "small-gang"},
		{Kind: abi.VictimGroup, Priority: math.MinInt32, StartTime: 0, Members: 2, PDBViolating: true,
			Namespace: "research", Name: "実験"},
	}
}

// WaitGate gates a pod with a plugin and a non-ASCII reason.
func WaitGate() abi.Gate {
	return abi.Gate{Code: abi.GateWait, Plugin: "GangQuota", Reason: "waiting for 3 more members — 等待"}
}

// Registrations cover every resource, a wildcard and multi-bit actions.
func Registrations() []abi.Registration {
	return []abi.Registration{
		{Plugin: "GangQuota", Resource: abi.ResourcePodGroup, Actions: abi.ActionAdd | abi.ActionUpdateOther},
		{Plugin: "VolumeBinding", Resource: abi.ResourcePersistentVolumeClaim, Actions: abi.ActionAdd | abi.ActionUpdateOther},
		{Plugin: "GangQuota", Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: "GangQuota", Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionAdd | abi.ActionUpdatePodLabel},
		{Plugin: "NodeFit", Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable | abi.ActionUpdateNodeTaint},
		{Plugin: "Everything", Resource: abi.ResourceWildcard, Actions: abi.ActionAll},
	}
}

// FullStorage sets every field of abi.StorageObject, with extreme numbers
// and non-ASCII strings (no real object fills every field).
func FullStorage() abi.StorageObject {
	return abi.StorageObject{
		Namespace: "équipe-données", Name: "pv-ß-0", StorageClass: "local-wffc",
		VolumeName: "pv-🚀", ClaimNamespace: "équipe-données", ClaimName: "data-trainer-0",
		NodeName: "node-α", Driver: "ebs.csi.aws.com", MigratedPlugins: "kubernetes.io/aws-ebs,kubernetes.io/gce-pd",
		Phase: abi.PhaseBound, BindingMode: abi.BindingWaitForFirstConsumer,
		NodeAffinity: true, CapacityTracking: true, HasCapacity: true, Capacity: math.MaxInt64,
		Labels: []abi.KV{{Key: "topology.kubernetes.io/zone", Value: "eu-west-1a"}, {Key: "empty", Value: ""}},
		Topology: []abi.NodeSelectorTerm{
			{MatchExpressions: []abi.Requirement{{Key: "kubernetes.io/hostname", Operator: abi.SelectorIn, Values: []string{"node-α", "node-β"}}}},
			{MatchFields: []abi.Requirement{{Key: "metadata.name", Operator: abi.SelectorNotIn, Values: []string{"node-1"}}}},
		},
		Drivers: []abi.CSIDriverLimit{
			{Name: "ebs.csi.aws.com", Allocatable: math.MaxInt32, HasAllocatable: true},
			{Name: "hostpath.csi.k8s.io"},
		},
		Allocated: true, ReservedFor: math.MaxInt32, Pool: "pool-🚀",
		DeviceClasses: []string{"gpu.example.com", "nic-ß"},
	}
}

// CSINode is a node's CSINode with two drivers, one without a limit.
func CSINode() abi.StorageObject {
	return abi.StorageObject{
		Name: "node-1", NodeName: "node-1", MigratedPlugins: "kubernetes.io/aws-ebs",
		Drivers: []abi.CSIDriverLimit{
			{Name: "ebs.csi.aws.com", Allocatable: 25, HasAllocatable: true},
			{Name: "hostpath.csi.k8s.io"},
		},
	}
}

// ClaimAddEvent: a PersistentVolumeClaim of a WaitForFirstConsumer class was created.
func ClaimAddEvent() *abi.Event {
	c := abi.StorageObject{Namespace: "default", Name: "data-web-0", StorageClass: "local-wffc", Phase: abi.PhasePending}
	return &abi.Event{Resource: abi.ResourcePersistentVolumeClaim, Action: abi.ActionAdd, New: abi.AppendStorage(nil, &c)}
}

// CSINodeUpdateEvent: a driver's allocatable count went up.
func CSINodeUpdateEvent() *abi.Event {
	old, n := CSINode(), CSINode()
	old.Drivers[0].Allocatable = 24
	return &abi.Event{Resource: abi.ResourceCSINode, Action: abi.ActionUpdateOther,
		Old: abi.AppendStorage(nil, &old), New: abi.AppendStorage(nil, &n)}
}

// ResourceClaimDeallocateEvent: a claim's allocation and reservation were removed.
func ResourceClaimDeallocateEvent() *abi.Event {
	old := abi.StorageObject{Namespace: "default", Name: "gpu-web-0-abc12", Allocated: true, ReservedFor: 1,
		DeviceClasses: []string{"gpu.example.com"}}
	n := old
	n.Allocated, n.ReservedFor = false, 0
	return &abi.Event{Resource: abi.ResourceResourceClaim, Action: abi.ActionUpdateOther,
		Old: abi.AppendStorage(nil, &old), New: abi.AppendStorage(nil, &n)}
}

// ResourceSliceAddEvent: a driver published a node's devices.
func ResourceSliceAddEvent() *abi.Event {
	s := abi.StorageObject{Name: "node-1-gpu.example.com-x7k2p", Driver: "gpu.example.com", Pool: "node-1", NodeName: "node-1"}
	return &abi.Event{Resource: abi.ResourceResourceSlice, Action: abi.ActionAdd, New: abi.AppendStorage(nil, &s)}
}

func storageCase(o abi.StorageObject) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendStorage(dst, &o) }
}

func appendPod(p abi.Pod) []byte { return abi.AppendPod(nil, &p) }

func podCase(p abi.Pod) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendPod(dst, &p) }
}

func nodeCase(n abi.Node) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendNode(dst, &n) }
}

func groupCase(g abi.PodGroup) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendPodGroup(dst, &g) }
}

func eventCase(e func() *abi.Event) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendEvent(dst, e()) }
}

func gateCase(g abi.Gate) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendGate(dst, &g) }
}

func sortKeyCase(k abi.SortKey) func([]byte) []byte {
	return func(dst []byte) []byte {
		var w [abi.SortKeySize]byte
		abi.PutSortKey(w[:], k)
		return append(dst, w[:]...)
	}
}

func orderCase(order []uint32) func([]byte) []byte {
	return func(dst []byte) []byte { return abi.AppendOrder(dst, order) }
}

// podFixedOfMinor is the pod record's fixed part (header included) as a host
// of each older minor wrote it.
var podFixedOfMinor = [...]int{0: 184, 1: 208, 2: 216, 3: 232}

// PodOfMinor returns a copy of the encoded pod record rec as a host of an
// older ABI minor would have sent it: the fixed part cut before that minor's
// unknown fields (their variable bytes stay, unreferenced). It panics for a
// minor without an older layout.
func PodOfMinor(rec []byte, minor int) []byte {
	if minor < 0 || minor >= len(podFixedOfMinor) {
		panic("abitest: no older pod layout for minor " + strconv.Itoa(minor))
	}
	c := bytes.Clone(rec)
	binary.LittleEndian.PutUint16(c[6:], uint16(podFixedOfMinor[minor]))
	return c
}
