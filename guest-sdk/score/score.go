// Package score implements the score slot in a policy module: the module
// ranks the nodes a pod may run on, and the host adds its scores to the
// native plugins' (weighted, by default 1). Importing it makes the module
// export [abi.ExportNodes], [abi.ExportScore], [abi.ExportPreScore] and
// [abi.ExportPlacementOptions]; [Register] says what they answer.
//
// A policy is a [Func] that scores one pod on one node:
//
//	func init() {
//		score.Register(func(pod abi.PodView, node abi.NodeView) int64 {
//			return placement.Free(node, placement.Memory) // emptiest first
//		})
//	}
//
// The host calls the module once per pod with every feasible node; the
// module calls the Func once per node. The node records live in the
// module's memory and cross the boundary only when they change (package
// guest-sdk/internal/nodes keeps them).
//
// # Scale
//
// By default the host scales a module's scores linearly so that the lowest
// becomes 0 and the highest [abi.MaxNodeScore] (all 0 when they are
// equal): only the order and the relative gaps of the raw scores count.
// With [Normalized] the module's scores are used as they are and must lie
// in [0, abi.MaxNodeScore]; the SDK clamps them there, since the host
// refuses a batch with one outside.
//
// # Notes
//
// The pre-step export is always there (an export cannot depend on a
// registration): without [Pre] it answers that every pod concerns the
// score, which costs the host one small call per pod.
package score

import "github.com/wasmsched/wasmsched/abi"

// Func scores node for pod; higher is better. It runs once per node of
// every placement call and should not allocate (a module's memory is never
// freed).
type Func func(pod abi.PodView, node abi.NodeView) int64

// Option configures a score policy.
type Option func(*Policy)

// Pre sets the policy's pre-step: pods for which concerns returns false
// are none of the score's business, and the host adds nothing to their
// nodes' scores without calling the score. It runs once per pod. It panics
// if concerns is nil.
func Pre(concerns func(pod abi.PodView) bool) Option {
	if concerns == nil {
		panic("score.Pre: nil func")
	}
	return func(p *Policy) { p.pre = concerns }
}

// Normalized declares that the policy's scores are already in [0,
// abi.MaxNodeScore]: the host uses them as they are instead of scaling
// them (see the package documentation).
func Normalized() Option { return func(p *Policy) { p.normalized = true } }

// Policy is a score policy: a Func and its options. The module's is set by
// [Register]; package native runs one in the host.
type Policy struct {
	fn         Func
	pre        func(abi.PodView) bool
	normalized bool
}

// New returns the policy of f with opts. It panics if f is nil.
func New(f Func, opts ...Option) *Policy {
	if f == nil {
		panic("score.New: nil Func")
	}
	p := &Policy{fn: f}
	for _, o := range opts {
		o(p)
	}
	return p
}

var registered *Policy

// Register makes f, with opts, the module's score policy, replacing any
// earlier one. Call it from an init function. It panics as [New] does.
func Register(f Func, opts ...Option) {
	registered = New(f, opts...)
	setNormalized(registered.normalized)
}

// Concerns runs the pre-step: whether the score concerns pod (true
// without a pre-step).
func (p *Policy) Concerns(pod abi.PodView) bool { return p.pre == nil || p.pre(pod) }

// Normalized reports whether the policy declares normalised scores.
func (p *Policy) Normalized() bool { return p.normalized }

// Score returns the policy's score of node for pod as the host receives
// it: clamped to [0, abi.MaxNodeScore] when the policy is Normalized. The
// export and package native's adapter both score through it.
func (p *Policy) Score(pod abi.PodView, node abi.NodeView) int64 {
	s := p.fn(pod, node)
	if p.normalized {
		s = min(max(s, 0), abi.MaxNodeScore)
	}
	return s
}
