package abi_test

import (
	"encoding"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
)

// textEnum is an enumeration value and a pointer to decode into.
type textEnum interface {
	encoding.TextMarshaler
}

// TestTextRoundTrip: every named value marshals to its name and reads back.
func TestTextRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		v    textEnum
		name string
		back func(text string) (any, error)
	}{
		{abi.SlotQueueSort, "queueSort", unmarshal[abi.Slot]},
		{abi.SlotVictimOrder, "victimOrder", unmarshal[abi.Slot]},
		{abi.SlotFilter, "filter", unmarshal[abi.Slot]},
		{abi.SlotScore, "score", unmarshal[abi.Slot]},
		{abi.HintSkip, "skip", unmarshal[abi.Hint]},
		{abi.HintQueue, "queue", unmarshal[abi.Hint]},
		{abi.HintError, "error", unmarshal[abi.Hint]},
		{abi.GateAdmit, "admit", unmarshal[abi.GateCode]},
		{abi.GateWait, "wait", unmarshal[abi.GateCode]},
		{abi.ResourcePod, "Pod", unmarshal[abi.EventResource]},
		{abi.ResourceUnscheduledPod, "UnscheduledPod", unmarshal[abi.EventResource]},
		{abi.ResourceNode, "Node", unmarshal[abi.EventResource]},
		{abi.ResourcePodGroup, "PodGroup", unmarshal[abi.EventResource]},
		{abi.ResourceWildcard, "*", unmarshal[abi.EventResource]},
		{abi.ActionAdd, "Add", unmarshal[abi.ActionType]},
		{abi.ActionAdd | abi.ActionUpdateNodeLabel, "Add|UpdateNodeLabel", unmarshal[abi.ActionType]},
		{abi.ActionAll, "All", unmarshal[abi.ActionType]},
		{abi.ActionUpdateNodeDeclaredFeature, "UpdateNodeDeclaredFeature", unmarshal[abi.ActionType]},
		{abi.EffectNone, "", unmarshal[abi.TaintEffect]},
		{abi.EffectNoSchedule, "NoSchedule", unmarshal[abi.TaintEffect]},
		{abi.EffectPreferNoSchedule, "PreferNoSchedule", unmarshal[abi.TaintEffect]},
		{abi.EffectNoExecute, "NoExecute", unmarshal[abi.TaintEffect]},
		{abi.TolerationEqual, "Equal", unmarshal[abi.TolerationOperator]},
		{abi.TolerationExists, "Exists", unmarshal[abi.TolerationOperator]},
		{abi.TolerationLt, "Lt", unmarshal[abi.TolerationOperator]},
		{abi.TolerationGt, "Gt", unmarshal[abi.TolerationOperator]},
		{abi.SelectorIn, "In", unmarshal[abi.SelectorOperator]},
		{abi.SelectorNotIn, "NotIn", unmarshal[abi.SelectorOperator]},
		{abi.SelectorExists, "Exists", unmarshal[abi.SelectorOperator]},
		{abi.SelectorDoesNotExist, "DoesNotExist", unmarshal[abi.SelectorOperator]},
		{abi.SelectorGt, "Gt", unmarshal[abi.SelectorOperator]},
		{abi.SelectorLt, "Lt", unmarshal[abi.SelectorOperator]},
		{abi.ProtocolTCP, "TCP", unmarshal[abi.Protocol]},
		{abi.ProtocolUDP, "UDP", unmarshal[abi.Protocol]},
		{abi.ProtocolSCTP, "SCTP", unmarshal[abi.Protocol]},
		{abi.DisruptionSingle, "Single", unmarshal[abi.DisruptionMode]},
		{abi.DisruptionAll, "All", unmarshal[abi.DisruptionMode]},
		{abi.VictimPod, "Pod", unmarshal[abi.VictimKind]},
		{abi.VictimGroup, "Group", unmarshal[abi.VictimKind]},
		{abi.ResourcePersistentVolumeClaim, "PersistentVolumeClaim", unmarshal[abi.EventResource]},
		{abi.ResourceCSIStorageCapacity, "CSIStorageCapacity", unmarshal[abi.EventResource]},
		{abi.PhaseNone, "", unmarshal[abi.VolumePhase]},
		{abi.PhaseBound, "Bound", unmarshal[abi.VolumePhase]},
		{abi.PhaseLost, "Lost", unmarshal[abi.VolumePhase]},
		{abi.BindingImmediate, "Immediate", unmarshal[abi.BindingMode]},
		{abi.BindingWaitForFirstConsumer, "WaitForFirstConsumer", unmarshal[abi.BindingMode]},
	} {
		b, err := tc.v.MarshalText()
		if err != nil || string(b) != tc.name {
			t.Errorf("%T(%v).MarshalText() = %q, %v; want %q", tc.v, tc.v, b, err, tc.name)
			continue
		}
		back, err := tc.back(tc.name)
		if err != nil || back != any(tc.v) {
			t.Errorf("%T.UnmarshalText(%q) = %v, %v; want %v", tc.v, tc.name, back, err, tc.v)
		}
	}
}

func unmarshal[T any, P interface {
	*T
	encoding.TextUnmarshaler
}](text string) (any, error) {
	var v T
	err := P(&v).UnmarshalText([]byte(text))
	return v, err
}

// TestTextDefaults: the empty string is Kubernetes' default where it has one.
func TestTextDefaults(t *testing.T) {
	for _, tc := range []struct {
		back func(string) (any, error)
		want any
	}{
		{unmarshal[abi.Protocol], abi.ProtocolTCP},
		{unmarshal[abi.TolerationOperator], abi.TolerationEqual},
		{unmarshal[abi.TaintEffect], abi.EffectNone},
		{unmarshal[abi.DisruptionMode], abi.DisruptionSingle},
	} {
		if got, err := tc.back(""); err != nil || got != tc.want {
			t.Errorf("UnmarshalText(\"\") = %v, %v; want %v", got, err, tc.want)
		}
	}
	for text, want := range map[string]abi.ActionType{
		"Update":       abi.ActionUpdate,
		"Add | Delete": abi.ActionAdd | abi.ActionDelete,
		"All|Add":      abi.ActionAll,
	} {
		if got, err := unmarshal[abi.ActionType](text); err != nil || got != want {
			t.Errorf("ActionType.UnmarshalText(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
}

// TestTextErrors: a name not in the table is an error listing the names; a
// value without a name does not marshal.
func TestTextErrors(t *testing.T) {
	for _, tc := range []struct {
		back func(string) (any, error)
		text string
		want string
	}{
		{unmarshal[abi.Slot], "queueSrot", `"queueSrot" is not a slot: want one of queueSort, backoffSort, preEnqueue, queueingHint, victimOrder`},
		{unmarshal[abi.Hint], "Queue", `"Queue": want one of skip, queue, error`},
		{unmarshal[abi.GateCode], "", `"": want one of admit, wait`},
		{unmarshal[abi.EventResource], "Nodes", `"Nodes": want one of Pod, UnscheduledPod, Node, PodGroup, PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment, ResourceClaim, ResourceSlice, DeviceClass, DeviceTaintRule, *`},
		{unmarshal[abi.ActionType], "Add|UpdateNodeLabels", `"UpdateNodeLabels" is not an action: want names such as Add, Delete, UpdateNodeLabel, joined by |`},
		{unmarshal[abi.ActionType], "", `"" is not an action`},
		{unmarshal[abi.TaintEffect], "noSchedule", `"noSchedule": want one of NoSchedule, PreferNoSchedule, NoExecute`},
		{unmarshal[abi.TolerationOperator], "In", `"In": want one of Equal, Exists, Lt, Gt`},
		{unmarshal[abi.SelectorOperator], "", `"": want one of In, NotIn, Exists, DoesNotExist, Gt, Lt`},
		{unmarshal[abi.Protocol], "HTTP", `"HTTP": want one of TCP, UDP, SCTP`},
		{unmarshal[abi.DisruptionMode], "Some", `"Some": want one of Single, All`},
		{unmarshal[abi.VictimKind], "", `"": want one of Pod, Group`},
	} {
		if _, err := tc.back(tc.text); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("UnmarshalText(%q) = %v, want an error starting %q", tc.text, err, tc.want)
		}
	}
	for _, v := range []textEnum{
		abi.Slot(9), abi.Hint(3), abi.GateCode(2), abi.EventResource(0), abi.ActionType(0),
		abi.ActionAll + 1<<20, abi.EffectUnknown, abi.TolerationUnknown, abi.SelectorUnknown,
		abi.ProtocolUnknown, abi.DisruptionMode(2), abi.VictimKind(2),
	} {
		if b, err := v.MarshalText(); err == nil {
			t.Errorf("%T(%d).MarshalText() = %q, want an error", v, v, b)
		}
	}
}
