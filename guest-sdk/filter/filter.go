// Package filter implements the filter slot in a policy module: after the
// scheduler's native filters, the module may reject nodes for a pod (it
// cannot admit one they rejected). Importing it makes the module export
// [abi.ExportNodes], [abi.ExportFilter], [abi.ExportPreFilter] and
// [abi.ExportPlacementOptions]; [Register] says what they answer.
//
// A policy is a [Func] that judges one pod on one node:
//
//	func init() {
//		filter.Register(func(pod abi.PodView, node abi.NodeView) filter.Verdict {
//			if placement.Has(node.Labels(), "example.com/draining") {
//				return filter.Reject("node(s) are draining")
//			}
//			return filter.Pass()
//		}, filter.Events(abi.FilterEvent{Resource: abi.ResourceNode, Actions: abi.ActionUpdateNodeLabel}))
//	}
//
// The host calls the module once per pod with every node to judge; the
// module calls the Func once per node. The node records live in the
// module's memory and cross the boundary only when they change (package
// guest-sdk/internal/nodes keeps them). Package placement has helpers for
// labels, taints and resources.
//
// # Reasons
//
// A rejection's reason is what the pod's FailedScheduling event counts:
// "3 node(s) are reserved for pool gpu (wasmsched.io/WasmFilter)". Write it
// to read well after a count, as upstream's are ("node(s) didn't match
// Pod's node affinity/selector"), and keep it one of a few strings: the
// module sends each distinct reason once per call and finds it by
// comparing it with the reasons of the call so far, so a reason that names
// the node defeats that and costs time per node. A reason that names a
// value the pod chose (its pool, its zone) is fine; build it with
// [Reasons], which builds each one once instead of once per node.
//
// # Notes
//
// The pre-step export is always there (an export cannot depend on a
// registration): without [Pre] it answers that every pod concerns the
// filter, which costs the host one small call per pod.
package filter

import (
	"strings"
	"unicode/utf8"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

// Func judges whether pod may run on node. It runs once per node of every
// placement call and should not allocate (a module's memory is never
// freed): read the records in place, return constant reasons or [Reasons].
type Func func(pod abi.PodView, node abi.NodeView) Verdict

// Verdict is a Func's answer for one node.
type Verdict struct {
	code   abi.FilterCode
	reason string
}

// Pass lets the pod run on the node.
func Pass() Verdict { return Verdict{} }

// Reject keeps the pod off the node for now (upstream's Unschedulable):
// preemption may try to make room there by evicting pods.
func Reject(reason string) Verdict { return Verdict{code: abi.FilterUnschedulable, reason: reason} }

// Never keeps the pod off the node whatever runs there (upstream's
// UnschedulableAndUnresolvable): preemption does not try the node.
func Never(reason string) Verdict { return Verdict{code: abi.FilterUnresolvable, reason: reason} }

// Code is the verdict's code.
func (v Verdict) Code() abi.FilterCode { return v.code }

// Reason is a rejection's reason, "" for a pass.
func (v Verdict) Reason() string { return v.reason }

// DefaultReason replaces the empty reason of a rejection.
const DefaultReason = "node(s) were rejected by the filter policy"

// Option configures a filter policy.
type Option func(*Policy)

// Pre sets the policy's pre-step: pods for which concerns returns false
// are none of the filter's business, and the host passes every node for
// them without calling the filter. It runs once per pod.
// It panics if concerns is nil.
func Pre(concerns func(pod abi.PodView) bool) Option {
	if concerns == nil {
		panic("filter.Pre: nil func")
	}
	return func(p *Policy) { p.pre = concerns }
}

// Events sets the events after which a pod the filter rejected may fit:
// the host moves such pods back to the active queue on them. Without
// Events the host uses [abi.DefaultFilterEvents] (nodes added or whose
// labels, taints or allocatable changed, pods deleted).
func Events(events ...abi.FilterEvent) Option {
	return func(p *Policy) { p.events = append(p.events[:len(p.events):len(p.events)], events...) }
}

// Policy is a filter policy: a Func and its options. The module's is set
// by [Register]; package native runs one in the host.
type Policy struct {
	fn     Func
	pre    func(abi.PodView) bool
	events []abi.FilterEvent
}

// New returns the policy of f with opts. It panics if f is nil or the
// events are not ones the host accepts (an event needs a known resource and
// a non-empty set of known actions).
func New(f Func, opts ...Option) *Policy {
	if f == nil {
		panic("filter.New: nil Func")
	}
	p := &Policy{fn: f}
	for _, o := range opts {
		o(p)
	}
	o := abi.PlacementOptions{FilterEvents: p.events}
	if _, err := abi.DecodePlacementOptions(abi.AppendPlacementOptions(nil, &o)); err != nil {
		panic("filter.New: Events: " + err.Error())
	}
	return p
}

var registered *Policy

// Register makes f, with opts, the module's filter policy, replacing any
// earlier one. Call it from an init function. It panics as [New] does.
func Register(f Func, opts ...Option) {
	registered = New(f, opts...)
	nodes.SetFilterEvents(registered.events)
}

// Concerns runs the pre-step: whether the filter concerns pod (true
// without a pre-step).
func (p *Policy) Concerns(pod abi.PodView) bool { return p.pre == nil || p.pre(pod) }

// Events returns the events the policy declares, nil when it declares
// none (the host then uses abi.DefaultFilterEvents).
func (p *Policy) Events() []abi.FilterEvent {
	if len(p.events) == 0 {
		return nil
	}
	return append([]abi.FilterEvent(nil), p.events...)
}

// Judge returns the policy's verdict on pod and node as the host receives
// it: a rejection's reason is made text the host accepts ([DefaultReason]
// when empty, invalid UTF-8 replaced, cut to [abi.MaxReasonLen] bytes on a
// rune boundary). The export and package native's adapter both judge
// through it.
func (p *Policy) Judge(pod abi.PodView, node abi.NodeView) Verdict {
	v := p.fn(pod, node)
	switch v.code {
	case abi.FilterPass:
		return Verdict{}
	case abi.FilterUnschedulable, abi.FilterUnresolvable:
	default:
		v.code = abi.FilterUnschedulable // unreachable: the constructors make the codes
	}
	v.reason = cleanReason(v.reason)
	return v
}

// cleanReason makes r a reason the host accepts. It allocates only for a
// reason that was not.
func cleanReason(r string) string {
	if r == "" {
		return DefaultReason
	}
	if !utf8.ValidString(r) {
		r = strings.ToValidUTF8(r, "\uFFFD")
	}
	if len(r) > abi.MaxReasonLen {
		n := abi.MaxReasonLen
		for n > 0 && !utf8.RuneStart(r[n]) {
			n--
		}
		r = r[:n]
	}
	return r
}
