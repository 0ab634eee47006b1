package abi_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
)

// TestChange: PodChange, NodeChange and StorageChange tell an Add, an
// update and a Delete apart by the objects present, and fault an object
// that is there but not of the kind asked for, or an event with neither.
func TestChange(t *testing.T) {
	pod := abi.AppendPod(nil, &abi.Pod{Name: "p"})
	node := abi.AppendNode(nil, &abi.Node{Name: "n"})
	storage := abi.AppendStorage(nil, &abi.StorageObject{Name: "s"})
	type got struct {
		HasOld, HasNew bool
		Fault          abi.ChangeFault
	}
	tests := []struct {
		name     string
		old, new []byte
		pod      got
		node     got
		storage  got
	}{
		{"add", nil, pod, got{false, true, abi.ChangeOK}, got{Fault: abi.ChangeBadNew}, got{Fault: abi.ChangeBadNew}},
		{"update", node, node, got{Fault: abi.ChangeBadNew}, got{true, true, abi.ChangeOK}, got{Fault: abi.ChangeBadNew}},
		{"delete", storage, nil, got{Fault: abi.ChangeBadOld}, got{Fault: abi.ChangeBadOld}, got{true, false, abi.ChangeOK}},
		{"bad old", node, pod, got{Fault: abi.ChangeBadOld}, got{Fault: abi.ChangeBadNew}, got{Fault: abi.ChangeBadNew}},
		{"neither", nil, nil, got{Fault: abi.ChangeEmpty}, got{Fault: abi.ChangeEmpty}, got{Fault: abi.ChangeEmpty}},
	}
	for _, tt := range tests {
		ev, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourcePod, Action: abi.ActionUpdate, Old: tt.old, New: tt.new}))
		if err != nil {
			t.Fatal(err)
		}
		var g got
		_, g.HasOld, _, g.HasNew, g.Fault = ev.PodChange()
		if g != tt.pod {
			t.Errorf("%s: PodChange = %+v, want %+v", tt.name, g, tt.pod)
		}
		_, g.HasOld, _, g.HasNew, g.Fault = ev.NodeChange()
		if g != tt.node {
			t.Errorf("%s: NodeChange = %+v, want %+v", tt.name, g, tt.node)
		}
		_, g.HasOld, _, g.HasNew, g.Fault = ev.StorageChange()
		if g != tt.storage {
			t.Errorf("%s: StorageChange = %+v, want %+v", tt.name, g, tt.storage)
		}
	}
	// The views of a change read the objects.
	ev, _ := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourcePod, Action: abi.ActionUpdate, Old: pod, New: abi.AppendPod(nil, &abi.Pod{Name: "q"})}))
	if old, _, p, _, _ := ev.PodChange(); old.Name() != "p" || p.Name() != "q" {
		t.Errorf("PodChange read %q and %q, want p and q", old.Name(), p.Name())
	}
}
