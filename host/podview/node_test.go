package podview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func TestNode(t *testing.T) {
	tests := []struct {
		name      string
		node      *v1.Node
		requested v1.ResourceList
		pods      int
		want      abi.Node
	}{
		{
			name: "every field",
			node: makeNode("n1").unschedulable(true).
				label("zone", "a").label("kubernetes.io/hostname", "n1").label("arch", "amd64").
				taint("dedicated", "web", v1.TaintEffectNoSchedule).
				taint("node.kubernetes.io/not-ready", "", v1.TaintEffectNoExecute).
				taint("soft", "", v1.TaintEffectPreferNoSchedule).
				allocatable(res("cpu", "3920m", "memory", "15Gi", "pods", "110", "nvidia.com/gpu", "8", "hugepages-1Gi", "0")).
				obj(),
			requested: res("cpu", "1.5", "memory", "512Mi", "nvidia.com/gpu", "0", "ephemeral-storage", "1G"),
			pods:      7,
			want: abi.Node{
				Name: "n1", Unschedulable: true,
				Labels: []abi.KV{{Key: "arch", Value: "amd64"}, {Key: "kubernetes.io/hostname", Value: "n1"}, {Key: "zone", Value: "a"}},
				Taints: []abi.Taint{
					{Key: "dedicated", Value: "web", Effect: abi.EffectNoSchedule},
					{Key: "node.kubernetes.io/not-ready", Effect: abi.EffectNoExecute},
					{Key: "soft", Effect: abi.EffectPreferNoSchedule},
				},
				Allocatable: []abi.Quantity{
					{Name: "cpu", Value: 3920}, {Name: "hugepages-1Gi", Value: 0}, {Name: "memory", Value: 15 << 30},
					{Name: "nvidia.com/gpu", Value: 8}, {Name: "pods", Value: 110},
				},
				Requested: []abi.Quantity{
					{Name: "cpu", Value: 1500}, {Name: "ephemeral-storage", Value: 1_000_000_000},
					{Name: "memory", Value: 512 << 20}, {Name: "pods", Value: 7},
				},
			},
		},
		{
			name: "empty node: requested is just pods 0",
			node: makeNode("n2").obj(),
			want: abi.Node{Name: "n2", Requested: []abi.Quantity{{Name: "pods", Value: 0}}},
		},
		{
			name:      "the caller's pod count wins over a pods entry in requested",
			node:      makeNode("n3").obj(),
			requested: res("pods", "99"),
			pods:      2,
			want:      abi.Node{Name: "n3", Requested: []abi.Quantity{{Name: "pods", Value: 2}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Node(tt.node, tt.requested, tt.pods)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Node (-want, +got):\n%s", diff)
			}
			// The record decodes to the same value.
			v, err := abi.ReadNode(abi.AppendNode(nil, &got))
			if err != nil {
				t.Fatalf("ReadNode: %v", err)
			}
			var back abi.Node
			if err := v.Decode(&back); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(got, back); diff != "" {
				t.Errorf("round trip (-want, +got):\n%s", diff)
			}
		})
	}
}
