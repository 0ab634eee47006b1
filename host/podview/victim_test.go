package podview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func TestPodVictim(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		pdb  bool
		want abi.Victim
	}{
		{
			name: "started pod",
			pod:  makePod("p").uid("u1").priority(100).started(t0).obj(),
			pdb:  true,
			want: abi.Victim{Kind: abi.VictimPod, Priority: 100, StartTime: t0.UnixNano(), Members: 1, PDBViolating: true,
				UID: "u1", Namespace: "default", Name: "p"},
		},
		{
			name: "not started, no priority",
			pod:  makePod("q").obj(),
			want: abi.Victim{Kind: abi.VictimPod, Members: 1, UID: "uid-q", Namespace: "default", Name: "q"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PodVictim(tt.pod, tt.pdb)); diff != "" {
				t.Errorf("PodVictim (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestGroupVictim(t *testing.T) {
	pg := makeGroup("g").priority(50).disruptAll().obj()
	early, late := t0, t0.Add(time.Hour)
	tests := []struct {
		name string
		pods []*v1.Pod
		pdb  bool
		want abi.Victim
	}{
		{
			name: "earliest start among members, unstarted ignored",
			pods: []*v1.Pod{
				makePod("a").priority(10).started(late).obj(),
				makePod("b").obj(),
				makePod("c").started(early).obj(),
			},
			pdb: true,
			want: abi.Victim{Kind: abi.VictimGroup, Priority: 50, StartTime: early.UnixNano(), Members: 3, PDBViolating: true,
				UID: "uid-g", Namespace: "default", Name: "g"},
		},
		{
			name: "none started",
			pods: []*v1.Pod{makePod("a").obj(), makePod("b").obj()},
			want: abi.Victim{Kind: abi.VictimGroup, Priority: 50, Members: 2, UID: "uid-g", Namespace: "default", Name: "g"},
		},
		{
			name: "no members",
			want: abi.Victim{Kind: abi.VictimGroup, Priority: 50, UID: "uid-g", Namespace: "default", Name: "g"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, GroupVictim(pg, tt.pods, tt.pdb)); diff != "" {
				t.Errorf("GroupVictim (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestVictimsEncode checks that the victims survive a batch's encoding.
func TestVictimsEncode(t *testing.T) {
	pg := makeGroup("g").priority(50).obj()
	want := []abi.Victim{
		PodVictim(makePod("p").priority(1).started(t0).obj(), false),
		GroupVictim(pg, []*v1.Pod{makePod("a").started(t0).obj()}, true),
	}
	v, err := abi.ReadVictimBatch(abi.AppendVictimBatch(nil, nil, want))
	if err != nil {
		t.Fatalf("ReadVictimBatch: %v", err)
	}
	if diff := cmp.Diff(want, v.Decode(nil)); diff != "" {
		t.Errorf("victims (-want, +got):\n%s", diff)
	}
}
