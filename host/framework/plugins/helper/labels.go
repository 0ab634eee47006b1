package helper

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// LabelMatcher is a label selector compiled for matching the labels of
// many pods: InterPodAffinity and PodTopologySpread match one selector
// against every pod of every node, and a selector of equalities and
// existence checks (matchLabels, matchLabelKeys, most matchExpressions)
// then costs one map index per requirement instead of labels.Selector's
// generic path. Other operators go through the selector itself.
type LabelMatcher struct {
	sel      labels.Selector
	nothing  bool // selects nothing (labels.Nothing())
	fallback bool // an operator compiled matching does not cover
	equal    []labelPair
	exists   []string
}

type labelPair struct{ key, value string }

// CompileLabels compiles sel (nil is labels.Nothing()).
func CompileLabels(sel labels.Selector) LabelMatcher {
	if sel == nil {
		sel = labels.Nothing()
	}
	reqs, selectable := sel.Requirements()
	m := LabelMatcher{sel: sel, nothing: !selectable}
	for _, r := range reqs {
		switch vals := r.ValuesUnsorted(); r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			if len(vals) == 1 {
				m.equal = append(m.equal, labelPair{r.Key(), vals[0]})
				continue
			}
		case selection.Exists:
			m.exists = append(m.exists, r.Key())
			continue
		}
		m.fallback = true
	}
	return m
}

// Selector is the compiled selector.
func (m *LabelMatcher) Selector() labels.Selector { return m.sel }

// Matches reports whether the selector selects l, as labels.Selector's
// Matches does.
func (m *LabelMatcher) Matches(l map[string]string) bool {
	switch {
	case m.nothing:
		return false
	case m.fallback:
		return m.sel.Matches(labels.Set(l))
	}
	for _, p := range m.equal {
		if v, ok := l[p.key]; !ok || v != p.value {
			return false
		}
	}
	for _, k := range m.exists {
		if _, ok := l[k]; !ok {
			return false
		}
	}
	return true
}
