package abi

import (
	"strconv"
	"unicode/utf8"
)

// MaxReasonLen bounds a gate reason or error message a guest may return; the
// host refuses longer ones (they end up in pod conditions and logs).
const MaxReasonLen = 1024

// Gate record layout (guest -> host):
//
//	8 u32 code  12 u32 reserved  16 plugin str  24 reason str
const (
	gateCode   = 8
	gatePlugin = 16
	gateReason = 24
	gateFixed  = 32
)

// Gate is a PreEnqueue verdict. A gated pod waits until an event registered
// by Plugin makes a QueueingHint requeue it, so Plugin must be non-empty when
// Code is GateWait.
type Gate struct {
	Code   GateCode
	Plugin string
	Reason string
}

// AppendGate appends the record of g to dst.
func AppendGate(dst []byte, g *Gate) []byte {
	b := beginRecord(dst, TagGate, gateFixed)
	b.putU32(gateCode, uint32(g.Code))
	b.str(gatePlugin, g.Plugin)
	b.str(gateReason, g.Reason)
	return b.finish()
}

// DecodeGate checks a gate record and copies it into dst.
func DecodeGate(b []byte, dst *Gate) error {
	r, err := readRecord(b, TagGate)
	if err != nil {
		return err
	}
	bud := newBudget(r)
	if err := checkRefs(r, TagGate, &bud, strRefs{{"plugin", gatePlugin}, {"reason", gateReason}}); err != nil {
		return err
	}
	g := Gate{Code: GateCode(r.u32(gateCode)), Plugin: r.str(gatePlugin), Reason: r.str(gateReason)}
	switch {
	case g.Code > GateWait:
		return &Error{Record: TagGate, Field: "code", Problem: "unknown code " + strconv.Itoa(int(g.Code))}
	case g.Code == GateWait && g.Plugin == "":
		return &Error{Record: TagGate, Field: "plugin", Problem: "a gated pod needs the gating plugin's name"}
	}
	if err := checkText(TagGate, "plugin", g.Plugin); err != nil {
		return err
	}
	if err := checkText(TagGate, "reason", g.Reason); err != nil {
		return err
	}
	*dst = Gate{Code: g.Code, Plugin: clone(g.Plugin), Reason: clone(g.Reason)}
	return nil
}

// checkText refuses strings from a guest that are too long or not UTF-8.
func checkText(tag Tag, field, s string) error {
	if len(s) > MaxReasonLen {
		return &Error{Record: tag, Field: field, Problem: "longer than " + strconv.Itoa(MaxReasonLen) + " bytes"}
	}
	if !utf8.ValidString(s) {
		return &Error{Record: tag, Field: field, Problem: "not valid UTF-8"}
	}
	return nil
}

// Registrations record layout (guest -> host):
//
//	8 registrations [registration]
//
//	registration 16: plugin str, u32 resource, u32 actions
const (
	regsList  = 8
	regsFixed = 16
	regSize   = 16
)

// MaxRegistrations bounds how many events one module may register.
const MaxRegistrations = 256

// Registration says that Plugin's QueueingHint wants events on Resource with
// any of Actions.
type Registration struct {
	Plugin   string
	Resource EventResource
	Actions  ActionType
}

// AppendRegistrations appends the record of regs to dst.
func AppendRegistrations(dst []byte, regs []Registration) []byte {
	b := beginRecord(dst, TagRegistrations, regsFixed)
	at := b.list(regsList, len(regs), regSize)
	for i := range regs {
		e := at + i*regSize
		b.strAt(e, regs[i].Plugin)
		b.elemU32(e+8, uint32(regs[i].Resource))
		b.elemU32(e+12, uint32(regs[i].Actions))
	}
	return b.finish()
}

// DecodeRegistrations checks a registrations record and returns copies.
func DecodeRegistrations(b []byte) ([]Registration, error) {
	r, err := readRecord(b, TagRegistrations)
	if err != nil {
		return nil, err
	}
	bud := newBudget(r)
	l, err := checkedList(r, &bud, regsList, regSize, "registrations", 0)
	if err != nil {
		return nil, err
	}
	if l.len() > MaxRegistrations {
		return nil, &Error{Record: TagRegistrations, Problem: strconv.Itoa(l.len()) + " registrations, at most " + strconv.Itoa(MaxRegistrations) + " allowed"}
	}
	out := make([]Registration, 0, l.len())
	for i := 0; i < l.len(); i++ {
		reg := Registration{Plugin: l.str(i, 0), Resource: EventResource(l.u32(i, 8)), Actions: ActionType(l.u32(i, 12))}
		field := "registration " + strconv.Itoa(i)
		if reg.Plugin == "" {
			return nil, &Error{Record: TagRegistrations, Field: field, Problem: "empty plugin name"}
		}
		if err := checkText(TagRegistrations, field, reg.Plugin); err != nil {
			return nil, err
		}
		switch {
		case reg.Resource >= ResourcePod && reg.Resource <= ResourcePodGroup, reg.Resource.IsStorage(), reg.Resource.IsDRA(),
			reg.Resource == ResourceWildcard:
		default:
			return nil, &Error{Record: TagRegistrations, Field: field, Problem: "unknown resource " + reg.Resource.String()}
		}
		if reg.Actions == 0 || reg.Actions&^ActionAll != 0 {
			return nil, &Error{Record: TagRegistrations, Field: field, Problem: "invalid actions " + reg.Actions.String()}
		}
		reg.Plugin = clone(reg.Plugin)
		out = append(out, reg)
	}
	return out, nil
}
