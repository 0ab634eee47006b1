// Package preenqueue implements the PreEnqueue slot in a policy module: it
// runs before a pod enters activeQ or backoffQ and may hold it back (gates,
// gang quorum). Importing it makes the module export [abi.ExportPreEnqueue];
// [Register] says what it answers.
package preenqueue

import (
	"unicode/utf8"

	"github.com/wasmsched/wasmsched/abi"
)

// Func decides whether p may enter the queues. A gated pod (abi.GateWait)
// must name the gating plugin: it waits until an event registered by that
// plugin makes a QueueingHint requeue it.
type Func func(p abi.PodView) abi.Gate

var registered Func

// Register makes f the module's PreEnqueue policy, replacing any earlier
// one. Call it from an init function. It panics if f is nil.
func Register(f Func) {
	if f == nil {
		panic("preenqueue.Register: nil func")
	}
	registered = f
}

// Decide asks f about p and returns the gate the host will see: a reason
// longer than [abi.MaxReasonLen] bytes is cut on a rune boundary (the host
// refuses longer ones). The export and policytest's native adapter both
// decide through it.
func Decide(f Func, p abi.PodView) abi.Gate {
	g := f(p)
	if len(g.Reason) > abi.MaxReasonLen {
		n := abi.MaxReasonLen
		for n > 0 && !utf8.RuneStart(g.Reason[n]) {
			n--
		}
		g.Reason = g.Reason[:n]
	}
	return g
}
