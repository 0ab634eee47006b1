package placement

import "github.com/wasmsched/wasmsched/abi"

// Tolerates reports whether tol tolerates the taint t, as
// v1.Toleration.ToleratesTaint does: the effect matches (a toleration
// without an effect matches every effect), the key matches (a toleration
// without a key matches every key: with Exists it tolerates every taint),
// and the operator accepts the value: Equal compares it, Exists takes any.
// Lt and Gt (Kubernetes 1.37) compare the taint's value with the
// toleration's as canonical decimal integers (no sign but a minus, no
// leading zero): Lt tolerates a taint whose value is less than the
// toleration's. An unknown operator or effect (abi's Unknown values, a
// newer Kubernetes than this ABI) tolerates nothing.
func Tolerates(tol abi.Toleration, t abi.Taint) bool {
	if tol.Effect == abi.EffectUnknown || tol.Effect != abi.EffectNone && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case abi.TolerationEqual:
		return tol.Value == t.Value
	case abi.TolerationExists:
		return true
	case abi.TolerationLt, abi.TolerationGt:
		if !canonicalInt(tol.Value) || !canonicalInt(t.Value) {
			return false
		}
		bound, ok1 := parseInt(tol.Value)
		v, ok2 := parseInt(t.Value)
		if !ok1 || !ok2 {
			return false
		}
		if tol.Operator == abi.TolerationLt {
			return v < bound
		}
		return v > bound
	}
	return false
}

// Tolerated reports whether one of tols tolerates t (upstream's
// TolerationsTolerateTaint).
func Tolerated(tols abi.TolerationList, t abi.Taint) bool {
	for i := range tols.Len() {
		if Tolerates(tols.At(i), t) {
			return true
		}
	}
	return false
}

// UntoleratedTaint returns the first taint of node with effect NoSchedule
// or NoExecute that none of pod's tolerations tolerates, as upstream's
// TaintToleration filter looks for one; ok is false when there is none.
func UntoleratedTaint(pod abi.PodView, node abi.NodeView) (t abi.Taint, ok bool) {
	taints, tols := node.Taints(), pod.Tolerations()
	for i := range taints.Len() {
		t := taints.At(i)
		if t.Effect != abi.EffectNoSchedule && t.Effect != abi.EffectNoExecute {
			continue
		}
		if !Tolerated(tols, t) {
			return t, true
		}
	}
	return abi.Taint{}, false
}

// CountUntolerated counts the taints of node with effect that none of
// pod's tolerations tolerates; upstream's TaintToleration score counts
// them with effect PreferNoSchedule.
func CountUntolerated(pod abi.PodView, node abi.NodeView, effect abi.TaintEffect) int {
	taints, tols := node.Taints(), pod.Tolerations()
	n := 0
	for i := range taints.Len() {
		if t := taints.At(i); t.Effect == effect && !Tolerated(tols, t) {
			n++
		}
	}
	return n
}

// canonicalInt reports whether s is a decimal integer as Kubernetes
// writes one: an optional minus, no leading zero, "0" but not "-0".
func canonicalInt(s string) bool {
	neg := s != "" && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if s == "" || s[0] == '0' && (len(s) > 1 || neg) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
