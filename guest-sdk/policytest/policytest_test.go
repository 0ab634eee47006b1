package policytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestPodBuilder(t *testing.T) {
	w := MakePod().Name("p").Namespace("ns").UID("u").Node("n").Priority(5).PreemptNever().
		Created(t0).Queued(t0.Add(time.Second)).InitialAttempt(t0.Add(2*time.Second)).
		BackoffExpiry(t0.Add(3*time.Second)).Attempts(2).LastFailureError().
		UnschedulablePlugins("A").PendingPlugins("B").Group("g", 3).GroupPriority(7).GroupMembers(2).
		GroupDisruption(abi.DisruptionAll).Labels(map[string]string{"b": "2", "a": "1"}).Label("a", "one").
		Requests(map[string]int64{"memory": 10, "cpu": 500}).Request("cpu", 600).SchedulingGates("gate").
		NodeSelector("zone", "z").Toleration("k", "v", abi.TolerationEqual, abi.EffectNoSchedule).
		HostPort("", 80, abi.ProtocolTCP).
		RequiredAffinity(abi.NodeSelectorTerm{MatchExpressions: []abi.Requirement{{Key: "k", Operator: abi.SelectorIn, Values: []string{"v"}}}})
	want := &abi.Pod{
		UID: "u", Namespace: "ns", Name: "p", NodeName: "n", Priority: 5, PreemptNever: true,
		CreationTime: t0.UnixNano(), QueuedTime: t0.Add(time.Second).UnixNano(),
		InitialAttemptTime: t0.Add(2 * time.Second).UnixNano(), BackoffExpiry: t0.Add(3 * time.Second).UnixNano(),
		Attempts: 2, LastFailureError: true, UnschedulablePlugins: []string{"A"}, PendingPlugins: []string{"B"},
		Group:            abi.PodGroupRef{Name: "g", MinCount: 3, Priority: 7, Members: 2, DisruptionMode: abi.DisruptionAll},
		Labels:           []abi.KV{{Key: "a", Value: "one"}, {Key: "b", Value: "2"}},
		Requests:         []abi.Quantity{{Name: "cpu", Value: 600}, {Name: "memory", Value: 10}},
		SchedulingGates:  []string{"gate"},
		NodeSelector:     []abi.KV{{Key: "zone", Value: "z"}},
		Tolerations:      []abi.Toleration{{Key: "k", Value: "v", Operator: abi.TolerationEqual, Effect: abi.EffectNoSchedule}},
		HostPorts:        []abi.HostPort{{Port: 80, Protocol: abi.ProtocolTCP}},
		RequiredAffinity: []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{{Key: "k", Operator: abi.SelectorIn, Values: []string{"v"}}}}},
	}
	obj := w.Obj()
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("Obj (-want, +got):\n%s", diff)
	}
	var dec abi.Pod
	if err := w.View().Decode(&dec); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &dec); diff != "" {
		t.Errorf("View decoded (-want, +got):\n%s", diff)
	}
	obj.Labels[0].Value = "changed"
	if w.Obj().Labels[0].Value != "one" {
		t.Error("changing an Obj changed the builder")
	}
	if got := MakePod().Obj().QueuedTime; got != 0 {
		t.Errorf("unset queued time = %d, want 0", got)
	}
}

func TestNodeAndEventBuilders(t *testing.T) {
	old := MakeNode().Name("n").Allocatable("cpu", 1000).Obj()
	nw := MakeNode().Name("n").Unschedulable().Label("zone", "a").Taint("k", "v", abi.EffectNoExecute).
		Allocatable("cpu", 2000).Requested("cpu", 500).Requested("cpu", 700)
	want := &abi.Node{Name: "n", Unschedulable: true, Labels: []abi.KV{{Key: "zone", Value: "a"}},
		Taints:      []abi.Taint{{Key: "k", Value: "v", Effect: abi.EffectNoExecute}},
		Allocatable: []abi.Quantity{{Name: "cpu", Value: 2000}}, Requested: []abi.Quantity{{Name: "cpu", Value: 700}}}
	if diff := cmp.Diff(want, nw.Obj()); diff != "" {
		t.Errorf("node (-want, +got):\n%s", diff)
	}
	if got := nw.View().Allocatable().Get("cpu"); got != 2000 {
		t.Errorf("View allocatable cpu = %d, want 2000", got)
	}

	p := MakePod().Name("p").Obj()
	g := MakePodGroup().Name("g").Namespace("ns").MinCount(2).Obj()
	cases := []struct {
		name     string
		ev       abi.EventView
		res      abi.EventResource
		act      abi.ActionType
		old, new string // names of the old and new objects, "" when absent
	}{
		{"NodeAdd", NodeAdd(old), abi.ResourceNode, abi.ActionAdd, "", "n"},
		{"NodeUpdate", NodeUpdate(old, nw.Obj(), abi.ActionUpdateNodeAllocatable), abi.ResourceNode, abi.ActionUpdateNodeAllocatable, "n", "n"},
		{"NodeDelete", NodeDelete(old), abi.ResourceNode, abi.ActionDelete, "n", ""},
		{"PodAdd", PodAdd(p), abi.ResourcePod, abi.ActionAdd, "", "p"},
		{"PodUpdate", PodUpdate(p, p, abi.ActionUpdatePodLabel), abi.ResourcePod, abi.ActionUpdatePodLabel, "p", "p"},
		{"PodDelete", PodDelete(p), abi.ResourcePod, abi.ActionDelete, "p", ""},
		{"UnscheduledPodAdd", UnscheduledPodAdd(p), abi.ResourceUnscheduledPod, abi.ActionAdd, "", "p"},
		{"UnscheduledPodUpdate", UnscheduledPodUpdate(p, p, abi.ActionUpdateOther), abi.ResourceUnscheduledPod, abi.ActionUpdateOther, "p", "p"},
		{"UnscheduledPodDelete", UnscheduledPodDelete(p), abi.ResourceUnscheduledPod, abi.ActionDelete, "p", ""},
		{"PodGroupAdd", PodGroupAdd(g), abi.ResourcePodGroup, abi.ActionAdd, "", "g"},
		{"PodGroupUpdate", PodGroupUpdate(g, g, abi.ActionUpdateOther), abi.ResourcePodGroup, abi.ActionUpdateOther, "g", "g"},
		{"PodGroupDelete", PodGroupDelete(g), abi.ResourcePodGroup, abi.ActionDelete, "g", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.ev.Resource() != c.res || c.ev.Action() != c.act {
				t.Errorf("event = (%v, %v), want (%v, %v)", c.ev.Resource(), c.ev.Action(), c.res, c.act)
			}
			var e abi.Event
			if err := c.ev.Decode(&e); err != nil {
				t.Fatalf("the host would refuse the event: %v", err)
			}
			if got := objectName(t, c.ev.OldBytes()); got != c.old {
				t.Errorf("old object = %q, want %q", got, c.old)
			}
			if got := objectName(t, c.ev.NewBytes()); got != c.new {
				t.Errorf("new object = %q, want %q", got, c.new)
			}
		})
	}
}

func objectName(t *testing.T, b []byte) string {
	if b == nil {
		return ""
	}
	tag, err := abi.RecordTag(b)
	if err != nil {
		t.Fatal(err)
	}
	switch tag {
	case abi.TagPod:
		v, _ := abi.ReadPod(b)
		return v.Name()
	case abi.TagNode:
		v, _ := abi.ReadNode(b)
		return v.Name()
	case abi.TagPodGroup:
		v, _ := abi.ReadPodGroup(b)
		return v.Name()
	}
	return "?" + tag.String()
}

func TestVictimBuilder(t *testing.T) {
	got := MakeVictim().Name("v").Namespace("ns").UID("u").Priority(3).Started(t0).Group(4).PDBViolating().Obj()
	want := abi.Victim{Kind: abi.VictimGroup, Priority: 3, StartTime: t0.UnixNano(), Members: 4, PDBViolating: true, UID: "u", Namespace: "ns", Name: "v"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("victim (-want, +got):\n%s", diff)
	}
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestSorted(t *testing.T) {
	byPriority := func(a, b abi.PodView) bool { return a.Priority() > b.Priority() }
	pods := []*abi.Pod{
		MakePod().Name("a").Priority(1).Queued(t0.Add(time.Second)).Obj(),
		MakePod().Name("b").Priority(2).Obj(),
		MakePod().Name("c").Priority(1).Queued(t0).Obj(),
	}
	cases := []struct {
		name       string
		sort       Sort
		want       []string
		wantErrors int
	}{
		{"less only", NativeSort(queuesort.Policy{Less: byPriority}), []string{"b", "a", "c"}, 0},
		{"agreeing key", NativeSort(queuesort.Policy{Less: byPriority, Key: func(p abi.PodView) abi.SortKey {
			return abi.SortKey{abi.Desc(int64(p.Priority()))}
		}}), []string{"b", "a", "c"}, 0},
		{"key breaking ties that Less does not", NativeSort(queuesort.Policy{Less: byPriority, Key: func(p abi.PodView) abi.SortKey {
			return abi.SortKey{abi.Desc(int64(p.Priority())), abi.Asc(p.QueuedTime())}
		}}), []string{"b", "a", "c"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			if diff := cmp.Diff(c.want, Sorted(r, c.sort, pods...)); diff != "" {
				t.Errorf("Sorted (-want, +got):\n%s", diff)
			}
			if len(r.errors) != c.wantErrors {
				t.Errorf("Sorted reported %q, want %d errors", r.errors, c.wantErrors)
			}
		})
	}
}

func TestNativeAdapters(t *testing.T) {
	b := NativeBackoffSort(backoffsort.Policy{Less: func(a, b abi.PodView) bool { return false }})
	if b.Keyed() {
		t.Error("backoff sort without Key is keyed")
	}
	// Upstream's rule: an unschedulable attempt (a plugin rejected the pod)
	// may pop early; an error, or a failure without a rejecting plugin, may not.
	if !b.MayPop(MakePod().UnschedulablePlugins(abi.PluginNodeResourcesFit).View()) ||
		!b.MayPop(MakePod().PendingPlugins("DynamicResources").View()) ||
		b.MayPop(MakePod().View()) ||
		b.MayPop(MakePod().UnschedulablePlugins(abi.PluginNodeResourcesFit).LastFailureError().View()) {
		t.Error("a nil MayPop does not follow upstream's rule")
	}

	q := NativeQueueingHint(hint.Plugin{Name: "P", Events: []hint.Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}}})
	regs := q.Registrations()
	regs[0].Plugin = "changed"
	if q.Registrations()[0].Plugin != "P" {
		t.Error("Registrations returned the adapter's own slice")
	}
	got := Hints(q, NodeAdd(MakeNode().Name("n").Obj()), MakePod().UnschedulablePlugins("P").Obj(), MakePod().Obj())
	if diff := cmp.Diff([]abi.Hint{abi.HintQueue, abi.HintSkip}, got); diff != "" {
		t.Errorf("Hints (-want, +got):\n%s", diff)
	}

	for name, f := range map[string]func(){
		"NativeSort":        func() { NativeSort(queuesort.Policy{}) },
		"NativeBackoffSort": func() { NativeBackoffSort(backoffsort.Policy{}) },
		"NativePreEnqueue":  func() { NativePreEnqueue(nil) },
		"NativeQueueingHint": func() {
			NativeQueueingHint(hint.Plugin{Events: []hint.Event{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}}})
		},
		"NativeVictimOrder": func() { NativeVictimOrder(nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of an invalid policy did not panic", name)
				}
			}()
			f()
		}()
	}
}
