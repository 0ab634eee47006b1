package helper

import (
	"fmt"
	"math/rand/v2"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestLabelMatcher: the compiled matcher answers as labels.Selector on
// random selectors (every operator, empty, nil) and random label sets.
func TestLabelMatcher(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys, values := []string{"app", "tier", "zone", "x"}, []string{"a", "b", "c", ""}
	ops := []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist}
	randLabels := func() map[string]string {
		l := map[string]string{}
		for _, k := range keys {
			if r.IntN(2) == 0 {
				l[k] = values[r.IntN(len(values)-1)]
			}
		}
		return l
	}
	sels := []labels.Selector{nil, labels.Nothing(), labels.Everything()}
	for range 400 {
		ls := &metav1.LabelSelector{}
		if r.IntN(2) == 0 {
			ls.MatchLabels = map[string]string{keys[r.IntN(len(keys))]: values[r.IntN(3)]}
		}
		for range r.IntN(3) {
			e := metav1.LabelSelectorRequirement{Key: keys[r.IntN(len(keys))], Operator: ops[r.IntN(len(ops))]}
			if e.Operator == metav1.LabelSelectorOpIn || e.Operator == metav1.LabelSelectorOpNotIn {
				for range 1 + r.IntN(2) {
					e.Values = append(e.Values, values[r.IntN(3)])
				}
			}
			ls.MatchExpressions = append(ls.MatchExpressions, e)
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatal(err)
		}
		sels = append(sels, sel)
	}
	for _, sel := range sels {
		m := CompileLabels(sel)
		want := sel
		if want == nil {
			want = labels.Nothing()
		}
		for range 50 {
			l := randLabels()
			if got, w := m.Matches(l), want.Matches(labels.Set(l)); got != w {
				t.Fatalf("selector %q on %v: compiled %v, labels.Selector %v", fmt.Sprint(want), l, got, w)
			}
		}
	}
}

func BenchmarkLabelMatcher(b *testing.B) {
	sel, _ := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	l := map[string]string{"app": "db", "pod-template-hash": "abc", "tier": "back"}
	m := CompileLabels(sel)
	b.Run("selector", func(b *testing.B) {
		for b.Loop() {
			sel.Matches(labels.Set(l))
		}
	})
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			m.Matches(l)
		}
	})
}
