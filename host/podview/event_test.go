package podview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// decoded is an event with its nested records decoded, for comparison.
type decoded struct {
	Resource           abi.EventResource
	Action             abi.ActionType
	OldPod, NewPod     *abi.Pod
	OldNode, NewNode   *abi.Node
	OldGroup, NewGroup *abi.PodGroup
}

// decode encodes e as the host sends it and reads it back as a guest would.
func decode(t *testing.T, e abi.Event) decoded {
	t.Helper()
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &e))
	if err != nil {
		t.Fatalf("ReadEvent: %v", err)
	}
	var check abi.Event
	if err := v.Decode(&check); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	d := decoded{Resource: v.Resource(), Action: v.Action()}
	if pv, ok := v.OldPod(); ok {
		d.OldPod = &abi.Pod{}
		must(t, pv.Decode(d.OldPod))
	}
	if pv, ok := v.NewPod(); ok {
		d.NewPod = &abi.Pod{}
		must(t, pv.Decode(d.NewPod))
	}
	if nv, ok := v.OldNode(); ok {
		d.OldNode = &abi.Node{}
		must(t, nv.Decode(d.OldNode))
	}
	if nv, ok := v.NewNode(); ok {
		d.NewNode = &abi.Node{}
		must(t, nv.Decode(d.NewNode))
	}
	if gv, ok := v.OldPodGroup(); ok {
		d.OldGroup = &abi.PodGroup{}
		must(t, gv.Decode(d.OldGroup))
	}
	if gv, ok := v.NewPodGroup(); ok {
		d.NewGroup = &abi.PodGroup{}
		must(t, gv.Decode(d.NewGroup))
	}
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNodeEvent(t *testing.T) {
	old := makeNode("n").label("zone", "a").allocatable(res("cpu", "4")).obj()
	new := makeNode("n").label("zone", "b").allocatable(res("cpu", "4")).obj()
	requested := res("cpu", "1")
	rec := func(n *v1.Node) *abi.Node { r := Node(n, requested, 2); return &r }

	tests := []struct {
		name     string
		action   abi.ActionType
		old, new *v1.Node
		want     decoded
	}{
		{"add", abi.ActionAdd, nil, new, decoded{Resource: abi.ResourceNode, Action: abi.ActionAdd, NewNode: rec(new)}},
		{"update", abi.ActionUpdateNodeLabel, old, new,
			decoded{Resource: abi.ResourceNode, Action: abi.ActionUpdateNodeLabel, OldNode: rec(old), NewNode: rec(new)}},
		{"delete", abi.ActionDelete, old, nil, decoded{Resource: abi.ResourceNode, Action: abi.ActionDelete, OldNode: rec(old)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(t, NodeEvent(tt.action, tt.old, tt.new, requested, 2))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NodeEvent (-want, +got):\n%s", diff)
			}
		})
	}
	if got := NodeUpdateActions(old, new); got != abi.ActionUpdateNodeLabel {
		t.Errorf("NodeUpdateActions = %v, want %v", got, abi.ActionUpdateNodeLabel)
	}
}

func TestPodEvent(t *testing.T) {
	info := &GroupInfo{MinCount: 2, Members: 1}
	pending := makePod("p").group("g").container(res("cpu", "1")).obj()
	bound := makePod("p").group("g").container(res("cpu", "1")).node("n1").obj()
	relabeled := makePod("p").group("g").container(res("cpu", "1")).node("n1").label("a", "b").obj()
	rec := func(p *v1.Pod) *abi.Pod { r := Pod(p, info, abi.PodQueueState{}, Plugins{}); return &r }

	tests := []struct {
		name     string
		action   abi.ActionType
		old, new *v1.Pod
		want     decoded
	}{
		{"unscheduled pod added", abi.ActionAdd, nil, pending,
			decoded{Resource: abi.ResourceUnscheduledPod, Action: abi.ActionAdd, NewPod: rec(pending)}},
		{"unscheduled pod deleted", abi.ActionDelete, pending, nil,
			decoded{Resource: abi.ResourceUnscheduledPod, Action: abi.ActionDelete, OldPod: rec(pending)}},
		{"assigned pod added (bound)", abi.ActionAdd, nil, bound,
			decoded{Resource: abi.ResourcePod, Action: abi.ActionAdd, NewPod: rec(bound)}},
		{"assigned pod updated", abi.ActionUpdatePodLabel, bound, relabeled,
			decoded{Resource: abi.ResourcePod, Action: abi.ActionUpdatePodLabel, OldPod: rec(bound), NewPod: rec(relabeled)}},
		{"assigned pod deleted", abi.ActionDelete, bound, nil,
			decoded{Resource: abi.ResourcePod, Action: abi.ActionDelete, OldPod: rec(bound)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(t, PodEvent(tt.action, tt.old, tt.new, info))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PodEvent (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestPodGroupEvent(t *testing.T) {
	old := makeGroup("g").gang(4).obj()
	new := makeGroup("g").gang(2).obj()
	rec := func(pg *schedGroup) *abi.PodGroup { r := PodGroup(pg, 3); return &r }
	tests := []struct {
		name     string
		action   abi.ActionType
		old, new *schedGroup
		want     decoded
	}{
		{"add", abi.ActionAdd, nil, new, decoded{Resource: abi.ResourcePodGroup, Action: abi.ActionAdd, NewGroup: rec(new)}},
		{"update", abi.ActionUpdateOther, old, new,
			decoded{Resource: abi.ResourcePodGroup, Action: abi.ActionUpdateOther, OldGroup: rec(old), NewGroup: rec(new)}},
		{"delete", abi.ActionDelete, old, nil, decoded{Resource: abi.ResourcePodGroup, Action: abi.ActionDelete, OldGroup: rec(old)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(t, PodGroupEvent(tt.action, tt.old, tt.new, 3))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PodGroupEvent (-want, +got):\n%s", diff)
			}
		})
	}
}
