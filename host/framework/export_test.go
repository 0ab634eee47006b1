package framework

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Internals the external tests (package framework_test, which runs the
// in-tree plugins) check.

var (
	MustProfile = mustProfile
	EntryFor    = entryFor
	HandOff     = handOff
)

// SetHandOffWorth sets filterParallel's hand-off threshold for t (0: the
// helpers start after the first chunk).
func SetHandOffWorth(t testing.TB, d time.Duration) {
	old := handOffWorth
	handOffWorth = d
	t.Cleanup(func() { handOffWorth = old })
}

// Effective is r's merged plugin sets and each point's effective plugins.
func (r *Registry) Effective(c Config) (eff [numPoints][]string, err error) {
	_, eff, err = r.effective(c)
	return eff, err
}

// ArrayLimits are how many filters and scorers PodState holds without
// allocating.
func ArrayLimits() (filters, scorers int) {
	var ps PodState
	return len(ps.filterArr), len(ps.scorerArr)
}

// Keeps reports whether the profile keeps filters for later points.
func (p *Profile) Keeps() bool { return p.keep != nil }

// NewPlaceholder is an unsupported-plugin placeholder named name refusing
// the pods carries says with reason.
func NewPlaceholder(name, reason string, carries func(*v1.Pod) bool) Plugin {
	return &unsupportedPlugin{name, []unsupportedCheck{{reason, carries}}}
}

// NodeNames and Absent are the pod's node restriction and the status of
// the nodes it leaves out.
func (ps *PodState) NodeNames() []string { return ps.nodeNames }
func (ps *PodState) Absent() *Status     { return ps.absent }

// Rejected reports whether d recorded node name.
func (d *Diagnosis) Rejected(name string) bool { d.index(); _, ok := d.nodes[name]; return ok }

// MemoVerdicts counts the node verdicts m holds for its specs.
func MemoVerdicts(m *Memo) int {
	n := 0
	for _, set := range m.sets {
		for i := range set.entries {
			if e := &set.entries[i]; e.epoch == set.epoch && e.filtered {
				n++
			}
		}
	}
	return n
}
