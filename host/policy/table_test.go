package policy_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// TestTable checks the slot table: every slot has its row, whose native
// default implements the slot's interface and installs through the
// Installer's function of the slot, and only that one.
func TestTable(t *testing.T) {
	for _, slot := range abi.Slots {
		spec, ok := policy.SpecOf(slot)
		if !ok {
			t.Fatalf("slot %s has no row", slot)
		}
		if spec.Slot != slot {
			t.Errorf("the row of slot %s describes %s", slot, spec.Slot)
		}
		if spec.Interface == "" || spec.SDK == "" {
			t.Errorf("slot %s: interface %q, SDK package %q: want both", slot, spec.Interface, spec.SDK)
		}
		if !spec.Implements(spec.Default) {
			t.Errorf("slot %s: the native default %T does not implement policy.%s", slot, spec.Default, spec.Interface)
		}
		var got []string
		in := policy.Installer{
			Sort:         func(policy.Sort) { got = append(got, "Sort") },
			BackoffSort:  func(policy.BackoffSort) { got = append(got, "BackoffSort") },
			PreEnqueue:   func(policy.PreEnqueue) { got = append(got, "PreEnqueue") },
			QueueingHint: func(policy.QueueingHint) { got = append(got, "QueueingHint") },
			VictimOrder:  func(policy.VictimOrder) { got = append(got, "VictimOrder") },
			Filter:       func(policy.Filter) { got = append(got, "Filter") },
			Score:        func(policy.Score) { got = append(got, "Score") },
		}
		if !spec.Wired(in) || !spec.Install(in, spec.Default) || len(got) != 1 || got[0] != spec.Interface {
			t.Errorf("slot %s: installing its default called %v, want [%s]", slot, got, spec.Interface)
		}
		if spec.Wired(policy.Installer{}) || spec.Install(policy.Installer{}, spec.Default) {
			t.Errorf("slot %s: an empty Installer is wired", slot)
		}
		if spec.Implements(struct{}{}) || spec.Install(in, struct{}{}) {
			t.Errorf("slot %s: struct{} implements the slot", slot)
		}
	}
	if _, ok := policy.SpecOf(abi.Slot(len(abi.Slots))); ok {
		t.Errorf("SpecOf(%d) found a row", len(abi.Slots))
	}
}
