package preempt

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

type groupCase struct {
	name      string
	nodes     []*v1.Node
	pods      []*v1.Pod
	pg        *schedv1beta1.PodGroup
	members   []*v1.Pod
	pdbs      []*policyv1.PodDisruptionBudget
	groups    []*schedv1beta1.PodGroup // besides pg
	nominated []*v1.Pod
	order     policy.VictimOrder

	wantFound      bool
	wantVictims    []string
	wantPlacements map[string]string // member -> node
	wantViolations int
	wantGroups     int
	wantMessage    string
}

func runGroupCases(t *testing.T, cases []groupCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(tc.nodes, tc.pods...)
			before := podsByNode(snap)
			gens := generations(snap)
			in := Input{Plugins: testProfile(), Snapshot: snap, PDBs: tc.pdbs, Order: tc.order, Group: groups(append(tc.groups, tc.pg)...)}
			if tc.nominated != nil {
				in.Nominated = nominatedMap(tc.nominated...)
			}
			res, found, err := Group(context.Background(), tc.members, tc.pg, in)
			if err != nil {
				t.Fatalf("Group: %v", err)
			}
			type outcome struct {
				Found      bool
				Victims    []string
				Placements map[string]string
				Violations int
				Groups     int
			}
			want := outcome{tc.wantFound, tc.wantVictims, tc.wantPlacements, tc.wantViolations, tc.wantGroups}
			if want.Victims == nil {
				want.Victims = []string{}
			}
			got := outcome{found, names(res.Victims), nil, res.PDBViolations, res.GroupDisruptions}
			for _, p := range res.Placements {
				if got.Placements == nil {
					got.Placements = map[string]string{}
				}
				got.Placements[p.Pod.Name] = p.Node
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Group (-want, +got):\n%s\nmessage: %s", diff, res.Message)
			}
			if tc.wantMessage != "" && res.Message != tc.wantMessage {
				t.Errorf("Message = %q, want %q", res.Message, tc.wantMessage)
			}
			if diff := cmp.Diff(before, podsByNode(snap)); diff != "" {
				t.Errorf("snapshot pods changed (-before, +after):\n%s", diff)
			}
			if diff := cmp.Diff(gens, generations(snap)); diff != "" {
				t.Errorf("node infos changed (-before, +after):\n%s", diff)
			}
		})
	}
}

// members returns n pending members of group g, each requesting cpu.
func members(g string, prio int32, cpu string, names ...string) []*v1.Pod {
	var out []*v1.Pod
	for _, n := range names {
		out = append(out, makePod(n).group(g).priority(prio).cpu(cpu).obj())
	}
	return out
}

func TestGroupKEP5710(t *testing.T) {
	preemptor := makeGroup("p", highPriority, 2, false)
	two := []*v1.Node{makeNode("node1", "2"), makeNode("node2", "2")}
	fourMembers := func(g string) []*v1.Pod {
		return []*v1.Pod{
			makePod("m1").node("node1").group(g).priority(lowPriority).cpu("1").started(0).obj(),
			makePod("m2").node("node1").group(g).priority(lowPriority).cpu("1").started(time.Hour).obj(),
			makePod("m3").node("node2").group(g).priority(lowPriority).cpu("1").started(2 * time.Hour).obj(),
			makePod("m4").node("node2").group(g).priority(lowPriority).cpu("1").started(3 * time.Hour).obj(),
		}
	}
	runGroupCases(t, []groupCase{
		{
			// KEP-5710 case 1: a DisruptionMode single group is preempted
			// pod by pod, only as many members as the preemptor needs.
			// The members are placed node1, node2 (the emptier node
			// scores higher); each node keeps its more important member.
			name:           "a single group loses only the members needed",
			nodes:          two,
			pods:           fourMembers("v"),
			groups:         []*schedv1beta1.PodGroup{makeGroup("v", lowPriority, 4, false)},
			pg:             preemptor,
			members:        members("p", highPriority, "1", "p1", "p2"),
			wantFound:      true,
			wantVictims:    []string{"m2", "m4"},
			wantPlacements: map[string]string{"p1": "node1", "p2": "node2"},
			wantGroups:     2,
			wantMessage:    "pod group preemption: found a placement for podgroup, preempting 2 victims",
		},
		{
			// KEP-5710 case 2: a DisruptionMode all group is preempted as a
			// whole, though one member's room would do.
			name:           "an all group is preempted as a whole",
			nodes:          two,
			pods:           fourMembers("v"),
			groups:         []*schedv1beta1.PodGroup{makeGroup("v", lowPriority, 4, true)},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"m1", "m2", "m3", "m4"},
			wantPlacements: map[string]string{"p1": "node1"},
			wantGroups:     1,
		},
		{
			name:  "a pod group is reprieved before a single pod of the same priority",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1"), makeNode("node3", "1")},
			pods: []*v1.Pod{
				makePod("s").node("node1").priority(midPriority).cpu("1").started(0).obj(),
				makePod("g1").node("node2").group("v").priority(midPriority).cpu("1").obj(),
				makePod("g2").node("node3").group("v").priority(midPriority).cpu("1").obj(),
			},
			groups:         []*schedv1beta1.PodGroup{makeGroup("v", midPriority, 2, true)},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"s"},
			wantPlacements: map[string]string{"p1": "node1"},
		},
		{
			// A reprieved victim is added to the placed members' states
			// (upstream's AddPod extension) before they are filtered
			// again: x, reprieved first (more important), would break
			// p1's anti-affinity, so it goes and y stays.
			name:  "a victim a member's pod anti-affinity rejects is not reprieved",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("x").node("node1").label("app", "x").priority(midPriority).cpu("1").obj(),
				makePod("y").node("node1").priority(lowPriority).cpu("1").obj(),
			},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        []*v1.Pod{makePod("p1").group("p").priority(highPriority).cpu("1").antiAffinity("app", "x").obj()},
			wantFound:      true,
			wantVictims:    []string{"x"},
			wantPlacements: map[string]string{"p1": "node1"},
		},
		{
			name:  "victims of the group's priority or higher are kept",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("high").node("node1").priority(highPriority).cpu("1").obj(),
				makePod("low").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"low"},
			wantPlacements: map[string]string{"p1": "node2"},
		},
	})
}

func TestGroupFailures(t *testing.T) {
	never := makeGroup("p", highPriority, 1, false)
	lower := schedv1beta1.PreemptLowerPriority
	overrides := makeGroup("p", highPriority, 1, false)
	overrides.Spec.PreemptionPolicy = &lower
	groupNeverPolicy := makeGroup("p", highPriority, 1, false)
	n := schedv1beta1.PreemptNever
	groupNeverPolicy.Spec.PreemptionPolicy = &n
	node1 := []*v1.Node{makeNode("node1", "1")}
	victim := []*v1.Pod{makePod("v").node("node1").priority(lowPriority).cpu("1").obj()}
	runGroupCases(t, []groupCase{
		{
			name:        "a member with preemptionPolicy Never makes the group not eligible",
			nodes:       node1,
			pods:        victim,
			pg:          never,
			members:     []*v1.Pod{makePod("p1").group("p").priority(highPriority).cpu("1").never().obj()},
			wantMessage: "pod group preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:        "the PodGroup's preemptionPolicy Never",
			nodes:       node1,
			pods:        victim,
			pg:          groupNeverPolicy,
			members:     members("p", highPriority, "1", "p1"),
			wantMessage: "pod group preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:           "the PodGroup's preemptionPolicy overrides its members'",
			nodes:          node1,
			pods:           victim,
			pg:             overrides,
			members:        []*v1.Pod{makePod("p1").group("p").priority(highPriority).cpu("1").never().obj()},
			wantFound:      true,
			wantVictims:    []string{"v"},
			wantPlacements: map[string]string{"p1": "node1"},
		},
		{
			name:        "no victims",
			nodes:       node1,
			pods:        []*v1.Pod{makePod("v").node("node1").priority(highPriority).cpu("1").obj()},
			pg:          makeGroup("p", highPriority, 1, false),
			members:     members("p", highPriority, "1", "p1"),
			wantMessage: "pod group preemption: No preemption victims found for incoming preemptor",
		},
		{
			name:        "the group does not fit even without its victims",
			nodes:       node1,
			pods:        victim,
			pg:          makeGroup("p", highPriority, 2, false),
			members:     members("p", highPriority, "1", "p1", "p2"),
			wantMessage: "pod group preemption: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining",
		},
		{
			name:  "the group's running pods count in the message",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("running").node("node1").group("p").priority(highPriority).cpu("1").obj(),
				makePod("v").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			pg:          makeGroup("p", highPriority, 4, false),
			members:     members("p", highPriority, "1", "p1", "p2", "p3"),
			wantMessage: "pod group preemption: minCount (4) cannot be satisfied: 2 scheduled, 1 remaining",
		},
		{
			name:  "an earlier preemption still in progress: wait",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("t").node("node1").priority(lowPriority).cpu("1").preempted().obj(),
				makePod("v").node("node1").priority(lowPriority).cpu("1").obj(),
			},
			pg: makeGroup("p", highPriority, 2, false),
			members: []*v1.Pod{
				makePod("p1").group("p").priority(highPriority).cpu("1").nominated("node1").obj(),
				makePod("p2").group("p").priority(highPriority).cpu("1").obj(),
			},
			wantFound:      true,
			wantPlacements: map[string]string{"p1": "node1", "p2": ""},
			wantMessage:    "pod group preemption: ongoing preemption on nominated nodes",
		},
	})
}

func TestGroupPDBAndNominated(t *testing.T) {
	runGroupCases(t, []groupCase{
		{
			name:  "an all group with one violating member is one violating victim",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("g1").node("node1").group("v").priority(lowPriority).cpu("1").obj(),
				makePod("g2").node("node2").group("v").label("app", "foo").priority(lowPriority).cpu("1").obj(),
			},
			groups:         []*schedv1beta1.PodGroup{makeGroup("v", lowPriority, 2, true)},
			pdbs:           []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"g1", "g2"},
			wantPlacements: map[string]string{"p1": "node1"},
			wantViolations: 1,
			wantGroups:     1,
		},
		{
			name:  "a violating victim is reprieved first",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("violating").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("other").node("node1").priority(midPriority).cpu("1").obj(),
			},
			pdbs:           []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"other"},
			wantPlacements: map[string]string{"p1": "node1"},
		},
		{
			name:  "a nominated pod of higher priority holds its room",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("v1").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("v2").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			nominated:      []*v1.Pod{makePod("n").priority(highPriority).cpu("1").nominated("node1").obj()},
			pg:             makeGroup("p", highPriority, 1, false),
			members:        members("p", highPriority, "1", "p1"),
			wantFound:      true,
			wantVictims:    []string{"v2"},
			wantPlacements: map[string]string{"p1": "node2"},
		},
		{
			name:  "a member's nomination holds room for it against the members placed before it",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("v1").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("v2").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			pg: makeGroup("p", highPriority, 2, false),
			members: []*v1.Pod{
				makePod("p1").group("p").priority(highPriority).cpu("1").obj(),
				makePod("p2").group("p").priority(highPriority).cpu("1").nominated("node1").obj(),
			},
			nominated:      []*v1.Pod{makePod("p2").group("p").priority(highPriority).cpu("1").nominated("node1").obj()},
			wantFound:      true,
			wantVictims:    []string{"v1", "v2"},
			wantPlacements: map[string]string{"p1": "node2", "p2": "node1"},
		},
		{
			name:  "a placed member's nomination no longer counts",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "2")},
			pods: []*v1.Pod{
				makePod("v1").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("v2").node("node2").priority(lowPriority).cpu("2").obj(),
			},
			pg: makeGroup("p", highPriority, 2, false),
			members: []*v1.Pod{
				makePod("p2").group("p").priority(highPriority).cpu("1").nominated("node1").obj(),
				makePod("p1").group("p").priority(highPriority).cpu("1").obj(),
			},
			nominated:      []*v1.Pod{makePod("p2").group("p").priority(highPriority).cpu("1").nominated("node1").obj()},
			wantFound:      true,
			wantVictims:    []string{"v1", "v2"},
			wantPlacements: map[string]string{"p1": "node1", "p2": "node2"},
		},
	})
}

func TestGroupVictimOrderThroughSlot(t *testing.T) {
	nodes := []*v1.Node{makeNode("node1", "2")}
	pods := []*v1.Pod{
		makePod("older").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
		makePod("newer").node("node1").priority(lowPriority).cpu("1").started(time.Hour).obj(),
	}
	rev := &reversed{}
	runGroupCases(t, []groupCase{
		{name: "native order", nodes: nodes, pods: pods, pg: makeGroup("p", highPriority, 1, false),
			members: members("p", highPriority, "1", "p1"), wantFound: true,
			wantVictims: []string{"newer"}, wantPlacements: map[string]string{"p1": "node1"}},
		{name: "reversed order", nodes: nodes, pods: pods, pg: makeGroup("p", highPriority, 1, false),
			members: members("p", highPriority, "1", "p1"), order: rev, wantFound: true,
			wantVictims: []string{"older"}, wantPlacements: map[string]string{"p1": "node1"}},
	})
	if rev.calls == 0 {
		t.Error("the victim order slot was not called")
	}
}

func TestGroupSlotInput(t *testing.T) {
	snap := snapshot([]*v1.Node{makeNode("node1", "2"), makeNode("node2", "1")},
		makePod("s").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("a1").node("node1").group("all").priority(lowPriority).cpu("1").started(time.Hour).obj(),
		makePod("a2").node("node2").group("all").priority(lowPriority).cpu("1").started(2*time.Hour).obj(),
	)
	pg := makeGroup("p", highPriority, 1, false)
	rec := &recording{}
	in := Input{Plugins: testProfile(), Snapshot: snap, Order: rec, Group: groups(pg, makeGroup("all", 3, 2, true))}
	if _, found, err := Group(context.Background(), members("p", highPriority, "1", "p1"), pg, in); err != nil || !found {
		t.Fatalf("Group = found %v, %v", found, err)
	}
	if diff := cmp.Diff([]string{"p"}, rec.preemptors); diff != "" {
		t.Errorf("preemptor records (-want, +got):\n%s", diff)
	}
	want := [][]abi.Victim{{
		{Kind: abi.VictimPod, Priority: lowPriority, Members: 1, UID: "s", Namespace: "default", Name: "s"},
		{Kind: abi.VictimGroup, Priority: 3, Members: 2, StartTime: epoch.Add(time.Hour).UnixNano(), UID: "pg-all", Namespace: "default", Name: "all"},
	}}
	if diff := cmp.Diff(want, rec.batches); diff != "" {
		t.Errorf("victims the slot saw (-want, +got):\n%s", diff)
	}
}

func TestGroupErrors(t *testing.T) {
	snap := snapshot([]*v1.Node{makeNode("node1", "2")},
		makePod("a").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("b").node("node1").priority(lowPriority).cpu("1").obj(),
	)
	pg := makeGroup("p", highPriority, 1, false)
	ms := members("p", highPriority, "1", "p1")
	ctx := context.Background()
	if _, _, err := Group(ctx, ms, pg, Input{Plugins: testProfile(), Snapshot: snap, Order: broken{}}); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("broken slot: err = %v, want a permutation error", err)
	}
	if _, _, err := Group(ctx, nil, pg, Input{Plugins: testProfile(), Snapshot: snap}); err == nil {
		t.Error("no members: want an error")
	}
	if _, _, err := Group(ctx, ms, nil, Input{Plugins: testProfile(), Snapshot: snap}); err == nil {
		t.Error("no pod group: want an error")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Group(canceled, ms, pg, Input{Plugins: testProfile(), Snapshot: snap}); err == nil {
		t.Error("canceled context: want an error")
	}
}
