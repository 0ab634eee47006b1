package logic

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
)

// errAffinitySyntax stands for the parse errors upstream's
// nodeaffinity.LazyErrorNodeSelector reports when no term matches. Upstream's
// hint returns it with Queue; here it becomes abi.HintError, which the host
// also treats as Queue.
var errAffinitySyntax = errors.New("hints: the pod's required node affinity has a malformed term and no well-formed term matches")

// nodeNameField is the one field a node selector term's matchFields can
// name (fields other than metadata.name read as "").
const nodeNameField = "metadata.name"

// errAddedAffinitySyntax: the profile's addedAffinity has a malformed term
// (the host validates it, so only a crafted record has one).
var errAddedAffinitySyntax = errors.New("hints: the profile's addedAffinity has a malformed term")

// nodeAffinityAfterNodeChange mirrors nodeaffinity's
// isSchedulableAfterNodeChange: Skip a node that does not match the
// profile's addedAffinity; Queue when the added node matches the pod's
// spec.nodeSelector and required node affinity, or when an update made a
// node that did not match match. Upstream compares the pod's own affinity
// before and after an update; here the addedAffinity counts before as after
// (an update that made the node match the addedAffinity may admit the pod).
// A record of an older host says nothing of the addedAffinity: an update
// then queues whenever the node matches the pod's own affinity.
func nodeAffinityAfterNodeChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	match, err := nodeMatches(p, node)
	if err != nil || !match {
		return queueIf(err != nil), err
	}
	if !hasOld || !p.TermsKnown() {
		return abi.HintQueue, nil
	}
	was, err := nodeMatches(p, old)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(!was), nil
}

// nodeMatches is the NodeAffinity filter's test: the profile's
// addedAffinity (when the record has one), then the pod's own.
func nodeMatches(p abi.PodView, n abi.NodeView) (bool, error) {
	if p.HasAddedAffinity() {
		match, malformed := anyTermMatches(p.AddedAffinity(), n)
		if !match {
			if malformed {
				return false, errAddedAffinitySyntax
			}
			return false, nil
		}
	}
	return requiredAffinityMatches(p, n)
}

// requiredAffinityMatches is upstream's
// nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): every
// spec.nodeSelector entry must be a label of the node, then one term of the
// required node affinity must match (none required: any node matches).
// Terms without requirements match nothing; a malformed term matches nothing,
// and makes the result an error when no other term matches.
func requiredAffinityMatches(p abi.PodView, n abi.NodeView) (bool, error) {
	labels := n.Labels()
	sel := p.NodeSelector()
	for i := range sel.Len() {
		k, want := sel.At(i)
		if v, ok := labels.Get(k); !ok || v != want {
			return false, nil
		}
	}
	terms := p.RequiredAffinity()
	if terms.Len() == 0 {
		return true, nil
	}
	match, malformed := anyTermMatches(terms, n)
	if !match && malformed {
		return false, errAffinitySyntax
	}
	return match, nil
}

// anyTermMatches is nodeaffinity.NodeSelector.Match: whether some term
// matches the node (a term without requirements matches nothing, nor does
// a malformed one), and whether a malformed term was skipped.
func anyTermMatches(terms abi.TermList, n abi.NodeView) (match, malformed bool) {
	labels := n.Labels()
	for i := range terms.Len() {
		exprs, fields := terms.MatchExpressions(i), terms.MatchFields(i)
		if exprs.Len() == 0 && fields.Len() == 0 {
			continue
		}
		if !wellFormedExpressions(exprs) || !wellFormedFields(fields) {
			malformed = true
			continue
		}
		if expressionsMatch(exprs, labels) && fieldsMatch(fields, n.Name()) {
			return true, malformed
		}
	}
	return false, malformed
}

// wellFormedExpressions applies labels.NewRequirement's checks: a valid
// label key, values fitting the operator (In and NotIn: some; Exists and
// DoesNotExist: none; Gt and Lt: exactly one integer), every value a valid
// label value, and a known operator.
func wellFormedExpressions(rs abi.RequirementList) bool {
	for i := range rs.Len() {
		if !isLabelKey(rs.Key(i)) {
			return false
		}
		vals := rs.Values(i)
		switch rs.Operator(i) {
		case abi.SelectorIn, abi.SelectorNotIn:
			if vals.Len() == 0 {
				return false
			}
		case abi.SelectorExists, abi.SelectorDoesNotExist:
			if vals.Len() != 0 {
				return false
			}
		case abi.SelectorGt, abi.SelectorLt:
			if vals.Len() != 1 {
				return false
			}
			if _, ok := parseInt(vals.At(0)); !ok {
				return false
			}
		default: // abi.SelectorUnknown and anything newer
			return false
		}
		for j := range vals.Len() {
			if !isLabelValue(vals.At(j)) {
				return false
			}
		}
	}
	return true
}

// wellFormedFields applies nodeSelectorRequirementsAsFieldSelector's checks:
// In or NotIn with exactly one value.
func wellFormedFields(rs abi.RequirementList) bool {
	for i := range rs.Len() {
		if op := rs.Operator(i); op != abi.SelectorIn && op != abi.SelectorNotIn || rs.Values(i).Len() != 1 {
			return false
		}
	}
	return true
}

// expressionsMatch reports whether the node's labels satisfy every
// requirement (labels.Requirement.Matches).
func expressionsMatch(rs abi.RequirementList, labels abi.KVList) bool {
	for i := range rs.Len() {
		if !requirementMatches(rs, i, labels) {
			return false
		}
	}
	return true
}

func requirementMatches(rs abi.RequirementList, i int, labels abi.KVList) bool {
	v, has := labels.Get(rs.Key(i))
	vals := rs.Values(i)
	switch op := rs.Operator(i); op {
	case abi.SelectorIn:
		return has && vals.Has(v)
	case abi.SelectorNotIn:
		return !has || !vals.Has(v)
	case abi.SelectorExists:
		return has
	case abi.SelectorDoesNotExist:
		return !has
	case abi.SelectorGt, abi.SelectorLt:
		if !has || vals.Len() != 1 {
			return false
		}
		nv, ok := parseInt(v)
		if !ok {
			return false
		}
		rv, ok := parseInt(vals.At(0))
		if !ok {
			return false
		}
		if op == abi.SelectorGt {
			return nv > rv
		}
		return nv < rv
	}
	return false
}

// fieldsMatch reports whether the node's fields satisfy every matchFields
// requirement. As upstream, a node without a name skips the fields.
func fieldsMatch(rs abi.RequirementList, nodeName string) bool {
	if rs.Len() == 0 || nodeName == "" {
		return true
	}
	for i := range rs.Len() {
		field := ""
		if rs.Key(i) == nodeNameField {
			field = nodeName
		}
		want := rs.Values(i).At(0)
		switch rs.Operator(i) {
		case abi.SelectorIn:
			if field != want {
				return false
			}
		case abi.SelectorNotIn:
			if field == want {
				return false
			}
		default:
			return false
		}
	}
	return true
}
