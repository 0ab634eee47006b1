package abi

import (
	"errors"
	"strconv"
	"strings"
)

// Text forms of the enumerations, for case files, configuration and messages:
// each type implements encoding.TextMarshaler and encoding.TextUnmarshaler
// with the names Kubernetes uses (NoSchedule, TCP, In, ...), the camel-case
// slot names, and lower case for the answers a policy gives (queue, admit).
//
// MarshalText fails for a value without a name (an Unknown value the host
// could not map, a value newer than this ABI), so that whatever it writes
// UnmarshalText reads back. Where Kubernetes defaults an empty string (a
// port's protocol, a toleration's operator and effect, a group's disruption
// mode), UnmarshalText reads "" as that default.
//
// The methods are plain loops over the name tables, without reflection or
// fmt: abi builds under TinyGo, and a guest that never calls them does not
// link them.

var (
	hintNames      = [...]string{HintSkip: "skip", HintQueue: "queue", HintError: "error"}
	gateCodeNames  = [...]string{GateAdmit: "admit", GateWait: "wait"}
	effectNames    = [...]string{EffectNone: "", EffectNoSchedule: "NoSchedule", EffectPreferNoSchedule: "PreferNoSchedule", EffectNoExecute: "NoExecute"}
	tolOpNames     = [...]string{TolerationEqual: "Equal", TolerationExists: "Exists", TolerationLt: "Lt", TolerationGt: "Gt"}
	selOpNames     = [...]string{SelectorUnknown: "", SelectorIn: "In", SelectorNotIn: "NotIn", SelectorExists: "Exists", SelectorDoesNotExist: "DoesNotExist", SelectorGt: "Gt", SelectorLt: "Lt"}
	protocolNames  = [...]string{ProtocolTCP: "TCP", ProtocolUDP: "UDP", ProtocolSCTP: "SCTP"}
	disruptNames   = [...]string{DisruptionSingle: "Single", DisruptionAll: "All"}
	spreadNames    = [...]string{SpreadUnknown: "", SpreadDoNotSchedule: "DoNotSchedule", SpreadScheduleAnyway: "ScheduleAnyway"}
	inclusionNames = [...]string{InclusionUnknown: "", InclusionHonor: "Honor", InclusionIgnore: "Ignore"}
	victimKindName = [...]string{VictimPod: "Pod", VictimGroup: "Group"}
	phaseNames     = [...]string{PhaseNone: "", PhasePending: "Pending", PhaseAvailable: "Available", PhaseBound: "Bound",
		PhaseReleased: "Released", PhaseFailed: "Failed", PhaseLost: "Lost"}
	bindingNames = [...]string{BindingImmediate: "Immediate", BindingWaitForFirstConsumer: "WaitForFirstConsumer"}
	// resources are the EventResource values with a name (EventResource.String).
	resources = [...]EventResource{ResourcePod, ResourceUnscheduledPod, ResourceNode, ResourcePodGroup,
		ResourcePersistentVolume, ResourcePersistentVolumeClaim, ResourceStorageClass, ResourceCSINode,
		ResourceCSIDriver, ResourceCSIStorageCapacity, ResourceVolumeAttachment,
		ResourceResourceClaim, ResourceResourceSlice, ResourceDeviceClass, ResourceDeviceTaintRule, ResourceWildcard}
)

// enum is the underlying type of the enumerations with a name table.
type enum interface {
	~uint8 | ~uint32
}

// marshalName returns v's name in names, indexed by value; an empty name
// (or a value past the table) is no name.
func marshalName[T enum](what string, v T, names []string) ([]byte, error) {
	if uint64(v) < uint64(len(names)) && names[v] != "" {
		return []byte(names[v]), nil
	}
	return nil, errors.New(what + " " + strconv.FormatUint(uint64(v), 10) + " has no name")
}

// unmarshalName sets *dst to the value named text in names, indexed by value.
func unmarshalName[T enum](dst *T, text []byte, names []string) error {
	s := string(text)
	for i, n := range names {
		if n != "" && n == s {
			*dst = T(i)
			return nil
		}
	}
	return errors.New(strconv.Quote(s) + ": want one of " + joinNames(names, ", "))
}

// joinNames joins the non-empty names with sep.
func joinNames(names []string, sep string) string {
	var b strings.Builder
	for _, n := range names {
		if n == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(n)
	}
	return b.String()
}

// MarshalText returns the slot's name (queueSort, ...).
func (s Slot) MarshalText() ([]byte, error) { return marshalName("slot", s, slotNames[:]) }

// UnmarshalText reads a slot's name.
func (s *Slot) UnmarshalText(text []byte) error {
	v, ok := ParseSlot(string(text))
	if !ok {
		return errors.New(strconv.Quote(string(text)) + " is not a slot: want one of " + joinNames(slotNames[:], ", "))
	}
	*s = v
	return nil
}

// MarshalText returns skip, queue or error.
func (h Hint) MarshalText() ([]byte, error) { return marshalName("hint", h, hintNames[:]) }

// UnmarshalText reads skip, queue or error.
func (h *Hint) UnmarshalText(text []byte) error { return unmarshalName(h, text, hintNames[:]) }

// MarshalText returns admit or wait.
func (c GateCode) MarshalText() ([]byte, error) { return marshalName("gate code", c, gateCodeNames[:]) }

// UnmarshalText reads admit or wait.
func (c *GateCode) UnmarshalText(text []byte) error { return unmarshalName(c, text, gateCodeNames[:]) }

// MarshalText returns the resource's name, as String does (Pod, Node, *, ...).
func (r EventResource) MarshalText() ([]byte, error) {
	for _, v := range resources {
		if v == r {
			return []byte(r.String()), nil
		}
	}
	return nil, errors.New("event resource " + strconv.FormatUint(uint64(r), 10) + " has no name")
}

// UnmarshalText reads a resource's name as String writes it.
func (r *EventResource) UnmarshalText(text []byte) error {
	s := string(text)
	names := make([]string, len(resources))
	for i, v := range resources {
		if names[i] = v.String(); names[i] == s {
			*r = v
			return nil
		}
	}
	return errors.New(strconv.Quote(s) + ": want one of " + joinNames(names, ", "))
}

// MarshalText returns the action names joined by "|", as String does, or
// All. It fails for no action and for bits this ABI does not define.
func (a ActionType) MarshalText() ([]byte, error) {
	if a == 0 || a&^ActionAll != 0 {
		return nil, errors.New("action type 0x" + strconv.FormatUint(uint64(a), 16) + " has no name")
	}
	return []byte(a.String()), nil
}

// UnmarshalText reads action names joined by "|" (Add|UpdateNodeLabel), each
// an action, All or Update (every update action).
func (a *ActionType) UnmarshalText(text []byte) error {
	var v ActionType
	for _, name := range strings.Split(string(text), "|") {
		name = strings.TrimSpace(name)
		switch name {
		case "All":
			v |= ActionAll
			continue
		case "Update":
			v |= ActionUpdate
			continue
		}
		found := false
		for i, n := range actionNames {
			if n == name {
				v |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return errors.New(strconv.Quote(name) + " is not an action: want names such as Add, Delete, UpdateNodeLabel, joined by |")
		}
	}
	*a = v
	return nil
}

// MarshalText returns NoSchedule, PreferNoSchedule, NoExecute, or "" for
// EffectNone (a toleration of every effect).
func (e TaintEffect) MarshalText() ([]byte, error) {
	if e == EffectNone {
		return []byte{}, nil
	}
	return marshalName("taint effect", e, effectNames[:])
}

// UnmarshalText reads an effect's name; "" is EffectNone.
func (e *TaintEffect) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*e = EffectNone
		return nil
	}
	return unmarshalName(e, text, effectNames[:])
}

// MarshalText returns Equal, Exists, Lt or Gt.
func (o TolerationOperator) MarshalText() ([]byte, error) {
	return marshalName("toleration operator", o, tolOpNames[:])
}

// UnmarshalText reads an operator's name; "" is Equal, as in Kubernetes.
func (o *TolerationOperator) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*o = TolerationEqual
		return nil
	}
	return unmarshalName(o, text, tolOpNames[:])
}

// MarshalText returns In, NotIn, Exists, DoesNotExist, Gt or Lt.
func (o SelectorOperator) MarshalText() ([]byte, error) {
	return marshalName("selector operator", o, selOpNames[:])
}

// UnmarshalText reads an operator's name; there is no default.
func (o *SelectorOperator) UnmarshalText(text []byte) error {
	return unmarshalName(o, text, selOpNames[:])
}

// MarshalText returns TCP, UDP or SCTP.
func (p Protocol) MarshalText() ([]byte, error) { return marshalName("protocol", p, protocolNames[:]) }

// UnmarshalText reads a protocol's name; "" is TCP, as in Kubernetes.
func (p *Protocol) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*p = ProtocolTCP
		return nil
	}
	return unmarshalName(p, text, protocolNames[:])
}

// MarshalText returns DoNotSchedule or ScheduleAnyway.
func (a SpreadAction) MarshalText() ([]byte, error) {
	return marshalName("whenUnsatisfiable", a, spreadNames[:])
}

// UnmarshalText reads DoNotSchedule or ScheduleAnyway; "" is DoNotSchedule.
func (a *SpreadAction) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*a = SpreadDoNotSchedule
		return nil
	}
	return unmarshalName(a, text, spreadNames[:])
}

// MarshalText returns Honor or Ignore.
func (p InclusionPolicy) MarshalText() ([]byte, error) {
	return marshalName("node inclusion policy", p, inclusionNames[:])
}

// UnmarshalText reads Honor or Ignore; there is no default here (the
// API's depends on the policy: nodeAffinityPolicy Honor, nodeTaintsPolicy
// Ignore).
func (p *InclusionPolicy) UnmarshalText(text []byte) error {
	return unmarshalName(p, text, inclusionNames[:])
}

// MarshalText returns Single or All.
func (d DisruptionMode) MarshalText() ([]byte, error) {
	return marshalName("disruption mode", d, disruptNames[:])
}

// UnmarshalText reads Single or All; "" is Single.
func (d *DisruptionMode) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*d = DisruptionSingle
		return nil
	}
	return unmarshalName(d, text, disruptNames[:])
}

// MarshalText returns the Kubernetes name of the phase (Pending, Bound, ...).
func (p VolumePhase) MarshalText() ([]byte, error) {
	if p == PhaseNone {
		return []byte{}, nil
	}
	return marshalName("volume phase", p, phaseNames[:])
}

// UnmarshalText reads a phase's Kubernetes name; "" is no phase.
func (p *VolumePhase) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*p = PhaseNone
		return nil
	}
	return unmarshalName(p, text, phaseNames[:])
}

// MarshalText returns Immediate or WaitForFirstConsumer.
func (m BindingMode) MarshalText() ([]byte, error) {
	return marshalName("binding mode", m, bindingNames[:])
}

// UnmarshalText reads Immediate or WaitForFirstConsumer; "" is Immediate,
// the API's default.
func (m *BindingMode) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*m = BindingImmediate
		return nil
	}
	return unmarshalName(m, text, bindingNames[:])
}

// MarshalText returns Pod or Group.
func (k VictimKind) MarshalText() ([]byte, error) {
	return marshalName("victim kind", k, victimKindName[:])
}

// UnmarshalText reads Pod or Group.
func (k *VictimKind) UnmarshalText(text []byte) error {
	return unmarshalName(k, text, victimKindName[:])
}
