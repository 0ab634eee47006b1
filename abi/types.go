package abi

import (
	"encoding/binary"
	"strconv"
)

// SortKeySize is the size of a [SortKey] on the wire.
const SortKeySize = 32

// SortKey orders pods natively: a sort policy computes it once per pod change
// and the host's heaps compare keys word by word, as unsigned integers, without
// calling into the module. Smaller sorts first.
type SortKey [4]uint64

// Less reports whether k sorts before o.
func (k SortKey) Less(o SortKey) bool {
	for i := range k {
		if k[i] != o[i] {
			return k[i] < o[i]
		}
	}
	return false
}

// PutSortKey writes k in its wire form; dst must hold SortKeySize bytes.
func PutSortKey(dst []byte, k SortKey) {
	_ = dst[SortKeySize-1]
	for i, w := range k {
		binary.LittleEndian.PutUint64(dst[i*8:], w)
	}
}

// DecodeSortKey reads a key written by PutSortKey.
func DecodeSortKey(b []byte) (SortKey, error) {
	var k SortKey
	if len(b) != SortKeySize {
		return k, &Error{Field: "sort key", Problem: "want 32 bytes, got " + strconv.Itoa(len(b))}
	}
	for i := range k {
		k[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return k, nil
}

// Asc maps a signed value to a key word that sorts in ascending order.
func Asc(v int64) uint64 { return uint64(v) ^ 1<<63 }

// Desc maps a signed value to a key word that sorts in descending order.
func Desc(v int64) uint64 { return ^Asc(v) }

// Hint is one QueueingHint decision, one byte per pod on the wire.
type Hint uint8

const (
	// HintSkip: the event cannot make the pod schedulable; it stays where it is.
	HintSkip Hint = 0
	// HintQueue: the event may make the pod schedulable; requeue it.
	HintQueue Hint = 1
	// HintError: the policy failed for this pod; the host requeues it (as
	// upstream does for a hint error) and counts the error.
	HintError Hint = 2
)

// GateCode is the PreEnqueue verdict.
type GateCode uint32

const (
	// GateAdmit lets the pod enter activeQ or backoffQ.
	GateAdmit GateCode = 0
	// GateWait keeps the pod out of the queues until an event registered by
	// the gating plugin makes a QueueingHint requeue it.
	GateWait GateCode = 1
)

// EventResource is the kind of object a cluster event is about. Names and
// meanings follow upstream's framework.EventResource.
type EventResource uint32

const (
	// ResourcePod: an assigned (bound) pod.
	ResourcePod EventResource = 1
	// ResourceUnscheduledPod: a pod not yet bound.
	ResourceUnscheduledPod EventResource = 2
	ResourceNode           EventResource = 3
	ResourcePodGroup       EventResource = 4
	// Storage resources (ABI minor 1); their events carry StorageObject
	// records.
	ResourcePersistentVolume      EventResource = 5
	ResourcePersistentVolumeClaim EventResource = 6
	ResourceStorageClass          EventResource = 7
	ResourceCSINode               EventResource = 8
	ResourceCSIDriver             EventResource = 9
	ResourceCSIStorageCapacity    EventResource = 10
	ResourceVolumeAttachment      EventResource = 11
	// Dynamic Resource Allocation resources (resource.k8s.io, ABI minor 2);
	// their events carry StorageObject records too (storage.go).
	ResourceResourceClaim   EventResource = 12
	ResourceResourceSlice   EventResource = 13
	ResourceDeviceClass     EventResource = 14
	ResourceDeviceTaintRule EventResource = 15
	// ResourceWildcard matches every resource in a registration.
	ResourceWildcard EventResource = 255
)

func (r EventResource) String() string {
	switch r {
	case ResourcePod:
		return "Pod"
	case ResourceUnscheduledPod:
		return "UnscheduledPod"
	case ResourceNode:
		return "Node"
	case ResourcePodGroup:
		return "PodGroup"
	case ResourcePersistentVolume:
		return "PersistentVolume"
	case ResourcePersistentVolumeClaim:
		return "PersistentVolumeClaim"
	case ResourceStorageClass:
		return "StorageClass"
	case ResourceCSINode:
		return "CSINode"
	case ResourceCSIDriver:
		return "CSIDriver"
	case ResourceCSIStorageCapacity:
		return "CSIStorageCapacity"
	case ResourceVolumeAttachment:
		return "VolumeAttachment"
	case ResourceResourceClaim:
		return "ResourceClaim"
	case ResourceResourceSlice:
		return "ResourceSlice"
	case ResourceDeviceClass:
		return "DeviceClass"
	case ResourceDeviceTaintRule:
		return "DeviceTaintRule"
	case ResourceWildcard:
		return "*"
	}
	return "Resource(" + strconv.Itoa(int(r)) + ")"
}

// IsStorage reports whether events of r carry [StorageObject] records.
func (r EventResource) IsStorage() bool {
	return r >= ResourcePersistentVolume && r <= ResourceVolumeAttachment
}

// IsDRA reports whether r is a Dynamic Resource Allocation kind (minor 2),
// whose events carry [StorageObject] records too.
func (r EventResource) IsDRA() bool {
	return r >= ResourceResourceClaim && r <= ResourceDeviceTaintRule
}

// PluginWildcard in a registration stands for every plugin: the hint is
// asked about pods whatever rejected them.
const PluginWildcard = "*"

// ActionType is a bit set of what happened, after upstream's framework.ActionType.
type ActionType uint32

const (
	ActionAdd ActionType = 1 << iota
	ActionDelete
	ActionUpdateNodeAllocatable
	ActionUpdateNodeLabel
	// ActionUpdateNodeTaint also covers spec.unschedulable, as upstream does.
	ActionUpdateNodeTaint
	ActionUpdateNodeCondition
	ActionUpdateNodeAnnotation
	ActionUpdatePodLabel
	ActionUpdatePodScaleDown
	ActionUpdatePodToleration
	ActionUpdatePodSchedulingGatesEliminated
	ActionUpdatePodGeneratedResourceClaim
	// ActionUpdateOther: an update none of the specific bits describes.
	ActionUpdateOther
	// ActionUpdatePodScaleUp: a pod's requests grew (in-place resize).
	ActionUpdatePodScaleUp
	// ActionUpdateNodePreemptionPolicy: a node's spec.podPreemptionPolicy changed.
	ActionUpdateNodePreemptionPolicy
	// ActionUpdateNodeDeclaredFeature: a node's status.declaredFeatures changed.
	ActionUpdateNodeDeclaredFeature

	ActionUpdate = ActionUpdateNodeAllocatable | ActionUpdateNodeLabel | ActionUpdateNodeTaint |
		ActionUpdateNodeCondition | ActionUpdateNodeAnnotation | ActionUpdatePodLabel |
		ActionUpdatePodScaleDown | ActionUpdatePodToleration | ActionUpdatePodSchedulingGatesEliminated |
		ActionUpdatePodGeneratedResourceClaim | ActionUpdateOther | ActionUpdatePodScaleUp |
		ActionUpdateNodePreemptionPolicy | ActionUpdateNodeDeclaredFeature
	ActionAll = ActionAdd | ActionDelete | ActionUpdate
)

var actionNames = [...]string{"Add", "Delete", "UpdateNodeAllocatable", "UpdateNodeLabel", "UpdateNodeTaint",
	"UpdateNodeCondition", "UpdateNodeAnnotation", "UpdatePodLabel", "UpdatePodScaleDown", "UpdatePodToleration",
	"UpdatePodSchedulingGatesEliminated", "UpdatePodGeneratedResourceClaim", "UpdateOther", "UpdatePodScaleUp",
	"UpdateNodePreemptionPolicy", "UpdateNodeDeclaredFeature"}

func (a ActionType) String() string {
	if a == ActionAll {
		return "All"
	}
	s := ""
	for i, n := range actionNames {
		if a&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if rest := a &^ ActionAll; rest != 0 {
		if s != "" {
			s += "|"
		}
		s += "0x" + strconv.FormatUint(uint64(rest), 16)
	}
	if s == "" {
		return "None"
	}
	return s
}

// Matches reports whether a registration for (r, a) covers event (er, ea).
func (r EventResource) Matches(er EventResource) bool {
	return r == ResourceWildcard || r == er
}

// Enumerations carry a named Unknown value for what the host could not map
// (a value newer than this ABI): a policy must treat it as matching nothing.

// TaintEffect of a taint or toleration; EffectNone in a toleration means all effects.
type TaintEffect uint32

const (
	EffectNone TaintEffect = iota
	EffectNoSchedule
	EffectPreferNoSchedule
	EffectNoExecute
	EffectUnknown TaintEffect = 0xFFFFFFFF
)

// TolerationOperator of a toleration.
type TolerationOperator uint32

const (
	TolerationEqual TolerationOperator = iota
	TolerationExists
	// TolerationLt and TolerationGt compare the taint's value as an integer
	// (Kubernetes 1.37).
	TolerationLt
	TolerationGt
	TolerationUnknown TolerationOperator = 0xFFFFFFFF
)

// SelectorOperator of a node selector requirement.
type SelectorOperator uint32

const (
	SelectorUnknown SelectorOperator = iota
	SelectorIn
	SelectorNotIn
	SelectorExists
	SelectorDoesNotExist
	SelectorGt
	SelectorLt
)

// SpreadAction is a topology spread constraint's whenUnsatisfiable (ABI
// minor 4).
type SpreadAction uint32

const (
	SpreadUnknown SpreadAction = iota
	SpreadDoNotSchedule
	SpreadScheduleAnyway
)

// InclusionPolicy is a topology spread constraint's nodeAffinityPolicy or
// nodeTaintsPolicy (ABI minor 4).
type InclusionPolicy uint32

const (
	InclusionUnknown InclusionPolicy = iota
	InclusionHonor
	InclusionIgnore
)

// Protocol of a host port.
type Protocol uint32

const (
	ProtocolTCP Protocol = iota
	ProtocolUDP
	ProtocolSCTP
	ProtocolUnknown Protocol = 0xFFFFFFFF
)

// DisruptionMode of a pod group (KEP-5710): whether preemption may take its
// members one by one or only all together.
type DisruptionMode uint32

const (
	DisruptionSingle DisruptionMode = iota
	DisruptionAll
)

// VictimKind says whether a preemption victim is one pod or a whole pod group.
type VictimKind uint32

const (
	VictimPod VictimKind = iota
	VictimGroup
)
