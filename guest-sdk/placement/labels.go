package placement

import "github.com/wasmsched/wasmsched/abi"

// Has reports whether labels has key, whatever its value.
func Has(labels abi.KVList, key string) bool {
	_, ok := labels.Get(key)
	return ok
}

// Equals reports whether labels has key with value.
func Equals(labels abi.KVList, key, value string) bool {
	v, ok := labels.Get(key)
	return ok && v == value
}

// In reports whether labels has key with one of values.
func In(labels abi.KVList, key string, values ...string) bool {
	v, ok := labels.Get(key)
	return ok && contains(values, v)
}

// Subset reports whether labels has every entry of sel with its value: how
// a pod's nodeSelector matches a node's labels. An empty sel matches.
func Subset(labels, sel abi.KVList) bool {
	for i := range sel.Len() {
		k, v := sel.At(i)
		if !Equals(labels, k, v) {
			return false
		}
	}
	return true
}

// Requirement is one requirement of a label selector, with the semantics
// of a node selector requirement (k8s.io/apimachinery labels.Requirement):
//
//   - SelectorIn: the key exists with one of Values;
//   - SelectorNotIn: the key is absent, or its value is none of Values;
//   - SelectorExists, SelectorDoesNotExist: the key exists, is absent;
//   - SelectorGt, SelectorLt: the key exists and its value, read as a
//     decimal integer, is greater (less) than Values[0], which must be
//     the only value and an integer too.
//
// Anything else (SelectorUnknown, Gt with two values, a value that is not
// an integer) matches nothing.
type Requirement struct {
	Key      string
	Operator abi.SelectorOperator
	Values   []string
}

// Matches reports whether labels satisfy r.
func (r Requirement) Matches(labels abi.KVList) bool {
	v, ok := labels.Get(r.Key)
	switch r.Operator {
	case abi.SelectorIn:
		return ok && contains(r.Values, v)
	case abi.SelectorNotIn:
		return !ok || !contains(r.Values, v)
	case abi.SelectorExists:
		return ok
	case abi.SelectorDoesNotExist:
		return !ok
	case abi.SelectorGt, abi.SelectorLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, ok1 := parseInt(v)
		bound, ok2 := parseInt(r.Values[0])
		if !ok1 || !ok2 {
			return false
		}
		if r.Operator == abi.SelectorGt {
			return have > bound
		}
		return have < bound
	}
	return false
}

// Selector is a label selector: its requirements ANDed. The empty selector
// matches every label list.
type Selector []Requirement

// Matches reports whether labels satisfy every requirement of s.
func (s Selector) Matches(labels abi.KVList) bool {
	for i := range s {
		if !s[i].Matches(labels) {
			return false
		}
	}
	return true
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// parseInt reads a decimal integer with an optional sign, without
// allocating (strconv.ParseInt allocates its error), and reports false for
// anything else or a value out of the int64 range.
func parseInt(s string) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	const cutoff = 1 << 63 // magnitude of math.MinInt64
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (cutoff-uint64(c-'0'))/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg:
		return -int64(u), true // -(1<<63) wraps to itself: MinInt64
	case u > cutoff-1:
		return 0, false
	}
	return int64(u), true
}
