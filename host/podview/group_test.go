package podview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
)

func TestGroup(t *testing.T) {
	tests := []struct {
		name      string
		pg        *schedv1beta1.PodGroup
		members   int32
		wantInfo  GroupInfo
		wantGroup abi.PodGroup
	}{
		{
			name:      "gang, priority, disruption all, preempt never",
			pg:        makeGroup("g").gang(4).priority(500).disruptAll().preemption(schedv1beta1.PreemptNever).obj(),
			members:   3,
			wantInfo:  GroupInfo{MinCount: 4, Priority: 500, DisruptionMode: abi.DisruptionAll, Members: 3},
			wantGroup: abi.PodGroup{Namespace: "default", Name: "g", MinCount: 4, Priority: 500, PreemptNever: true, DisruptionMode: abi.DisruptionAll, Members: 3},
		},
		{
			// A basic group needs no quorum: minCount 1, as upstream's
			// getMinCount; 0 stays free to mean "PodGroup not known".
			name:      "basic policy: minCount 1; unset priority: 0; unset disruption mode: single",
			pg:        makeGroup("b").obj(),
			members:   1,
			wantInfo:  GroupInfo{MinCount: 1, Members: 1},
			wantGroup: abi.PodGroup{Namespace: "default", Name: "b", MinCount: 1, Members: 1},
		},
		{
			name:      "explicit single disruption mode, preempt lower priority",
			pg:        makeGroup("s").gang(2).disruptSingle().preemption(schedv1beta1.PreemptLowerPriority).priority(-1).obj(),
			wantInfo:  GroupInfo{MinCount: 2, Priority: -1, DisruptionMode: abi.DisruptionSingle},
			wantGroup: abi.PodGroup{Namespace: "default", Name: "s", MinCount: 2, Priority: -1, DisruptionMode: abi.DisruptionSingle},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantInfo, Group(tt.pg, tt.members)); diff != "" {
				t.Errorf("Group (-want, +got):\n%s", diff)
			}
			got := PodGroup(tt.pg, tt.members)
			if diff := cmp.Diff(tt.wantGroup, got); diff != "" {
				t.Errorf("PodGroup (-want, +got):\n%s", diff)
			}
			v, err := abi.ReadPodGroup(abi.AppendPodGroup(nil, &got))
			if err != nil {
				t.Fatalf("ReadPodGroup: %v", err)
			}
			var back abi.PodGroup
			if err := v.Decode(&back); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(got, back); diff != "" {
				t.Errorf("round trip (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestGroupNil(t *testing.T) {
	if diff := cmp.Diff(GroupInfo{Members: 2}, Group(nil, 2)); diff != "" {
		t.Errorf("Group(nil) (-want, +got):\n%s", diff)
	}
}

func TestPodWithGroup(t *testing.T) {
	pg := makeGroup("g").gang(3).priority(7).disruptAll().obj()
	info := Group(pg, 2)
	got := Pod(makePod("p").group("g").obj(), &info, abi.PodQueueState{}, Plugins{}).Group
	want := abi.PodGroupRef{Name: "g", MinCount: 3, Priority: 7, DisruptionMode: abi.DisruptionAll, Members: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pod(...).Group (-want, +got):\n%s", diff)
	}
}
