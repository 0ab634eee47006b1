package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// member is pod name of group (none for ""), in phase, deleting or not.
func member(name, group string, phase v1.PodPhase, deleting bool) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Status:     v1.PodStatus{Phase: phase},
	}
	if group != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

type count struct {
	N  int32
	OK bool
}

// TestMembers feeds one informer history through set, step by step.
func TestMembers(t *testing.T) {
	p1a := member("p1", "a", v1.PodPending, false)
	p1aBound := p1a.DeepCopy()
	p1aBound.Spec.NodeName = "n1"
	p1b := member("p1", "b", v1.PodRunning, false)
	p2a := member("p2", "a", v1.PodPending, false)
	p2aDone := member("p2", "a", v1.PodSucceeded, false)
	p3b := member("p3", "b", v1.PodRunning, false)
	p3bDeleting := member("p3", "b", v1.PodRunning, true)
	p4 := member("p4", "", v1.PodPending, false)
	p5aFailed := member("p5", "a", v1.PodFailed, false)
	other := member("p6", "a", v1.PodPending, false)
	other.Namespace = "other"

	steps := []struct {
		name        string
		old, pod    *v1.Pod
		wantChanged bool
		want        map[string]count // by group name, in namespace default
	}{
		{"p1 added to a", nil, p1a, true, map[string]count{"a": {1, true}, "b": {0, false}}},
		{"p2 added to a", nil, p2a, true, map[string]count{"a": {2, true}}},
		{"a pod without a group", nil, p4, false, map[string]count{"a": {2, true}}},
		{"a member of the same name in another namespace", nil, other, true, map[string]count{"a": {2, true}}},
		{"p1 bound: still a member", p1a, p1aBound, false, map[string]count{"a": {2, true}}},
		{"p2 succeeded", p2a, p2aDone, true, map[string]count{"a": {1, true}}},
		{"p2 deleted once finished", p2aDone, nil, false, map[string]count{"a": {1, true}}},
		{"p1 moved to b", p1aBound, p1b, true, map[string]count{"a": {0, false}, "b": {1, true}}},
		{"p3 added to b", nil, p3b, true, map[string]count{"b": {2, true}}},
		{"p3 being deleted", p3b, p3bDeleting, true, map[string]count{"b": {1, true}}},
		{"p3 deleted", p3bDeleting, nil, false, map[string]count{"b": {1, true}}},
		{"a failed pod added", nil, p5aFailed, false, map[string]count{"a": {0, false}}},
		{"p1 deleted", p1b, nil, true, map[string]count{"b": {0, false}}},
	}
	m := NewMembers()
	for _, s := range steps {
		if got := m.set(s.old, s.pod); got != s.wantChanged {
			t.Errorf("%s: set reported a change %v, want %v", s.name, got, s.wantChanged)
		}
		got := map[string]count{}
		for g := range s.want {
			n, ok := m.Count("default", g)
			got[g] = count{n, ok}
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: counts (-want, +got):\n%s", s.name, diff)
		}
	}
	if n, ok := m.Count("other", "a"); n != 1 || !ok {
		t.Errorf("Count(other, a) = %d, %v; want 1, true", n, ok)
	}
}
