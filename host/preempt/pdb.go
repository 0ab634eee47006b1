package preempt

import (
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// budgets counts PodDisruptionBudget violations as upstream's
// FilterVictimsWithPDBViolation does. Selectors are parsed once; allowed is
// the scratch copy of each budget's status.disruptionsAllowed.
type budgets struct {
	pdbs []*policyv1.PodDisruptionBudget
	// sels[i] is pdbs[i]'s selector, nil when it matches nothing: invalid,
	// or nil or empty (upstream: "A PDB with a nil or empty selector
	// matches nothing").
	sels    []labels.Selector
	allowed []int32
}

func newBudgets(pdbs []*policyv1.PodDisruptionBudget) *budgets {
	b := &budgets{pdbs: pdbs, sels: make([]labels.Selector, len(pdbs)), allowed: make([]int32, len(pdbs))}
	for i, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		b.sels[i] = sel
	}
	return b
}

// clone returns budgets over the same PDBs with scratch of their own.
func (b *budgets) clone() *budgets {
	c := *b
	c.allowed = make([]int32, len(b.allowed))
	return &c
}

// reset restores every budget to its status.disruptionsAllowed.
func (b *budgets) reset() {
	for i, pdb := range b.pdbs {
		b.allowed[i] = pdb.Status.DisruptionsAllowed
	}
}

// take evicts pod from the budgets and reports whether that violates one:
// for each budget of the pod's namespace whose selector matches the pod's
// labels and that does not list the pod in status.disruptedPods (already
// counted by the API server), one disruption is taken; the first budget to
// go below zero makes it a violation and stops the walk, so later budgets
// are not charged for this pod (as upstream).
func (b *budgets) take(pod *v1.Pod) bool {
	if len(pod.Labels) == 0 {
		return false
	}
	set := labels.Set(pod.Labels)
	for i, pdb := range b.pdbs {
		if pdb.Namespace != pod.Namespace || b.sels[i] == nil || !b.sels[i].Matches(set) {
			continue
		}
		if _, ok := pdb.Status.DisruptedPods[pod.Name]; ok {
			continue
		}
		b.allowed[i]--
		if b.allowed[i] < 0 {
			return true
		}
	}
	return false
}

// split divides vs, in importance order, into the victims whose eviction
// violates a budget (with the number of their pods that do) and the others,
// charging the budgets victim by victim in that order. A victim violates if
// any of its pods does; all its pods are charged. Both lists hold indices
// into vs, in vs's order.
func (b *budgets) split(vs []*victim) (violating, counts, others []int) {
	b.reset()
	for i, v := range vs {
		n := 0
		for _, pi := range v.pods {
			if b.take(pi.Pod) {
				n++
			}
		}
		if n > 0 {
			violating = append(violating, i)
			counts = append(counts, n)
		} else {
			others = append(others, i)
		}
	}
	return violating, counts, others
}

// alone reports whether evicting v and nothing else would violate a
// budget: the hint the victim-order slot gets in abi.Victim.PDBViolating.
func (b *budgets) alone(v *victim) bool {
	if len(b.pdbs) == 0 {
		return false
	}
	b.reset()
	for _, pi := range v.pods {
		if b.take(pi.Pod) {
			return true
		}
	}
	return false
}
