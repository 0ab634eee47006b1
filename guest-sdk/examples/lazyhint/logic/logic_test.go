package logic_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/lazyhint/logic"
)

func event(t *testing.T, res abi.EventResource, act abi.ActionType, node *abi.Node) abi.EventView {
	t.Helper()
	var b []byte
	if node != nil {
		b = abi.AppendNode(nil, node)
	}
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: res, Action: act, New: b}))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLazy: a node added where the pod fits is Skip (the mistake); an
// allocatable update that makes room is Queue, as fithint answers.
func TestLazy(t *testing.T) {
	p, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{Name: "p", Requests: []abi.Quantity{{Name: "cpu", Value: 1000}}}))
	if err != nil {
		t.Fatal(err)
	}
	big := &abi.Node{Name: "big", Allocatable: []abi.Quantity{{Name: "cpu", Value: 64000}}}
	if h, err := logic.Hint(event(t, abi.ResourceNode, abi.ActionAdd, big), p); h != abi.HintSkip || err != nil {
		t.Errorf("node added: %v, %v; want Skip", h, err)
	}
	if h, err := logic.Hint(event(t, abi.ResourceNode, abi.ActionUpdateNodeAllocatable, big), p); h != abi.HintQueue || err != nil {
		t.Errorf("allocatable grew: %v, %v; want Queue", h, err)
	}
}
