package preempt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/policy"
)

type podCase struct {
	name      string
	nodes     []*v1.Node
	pods      []*v1.Pod
	preemptor *v1.Pod
	pdbs      []*policyv1.PodDisruptionBudget
	groups    []*schedv1beta1.PodGroup
	nominated []*v1.Pod
	order     policy.VictimOrder

	wantFound      bool
	wantNode       string
	wantVictims    []string // in Result order
	wantViolations int
	wantClear      bool
	wantMessage    string // checked when set
}

// runPodCases runs each case on the deterministic path and with parallel
// dry runs: both must give the case's outcome.
func runPodCases(t *testing.T, cases []podCase) {
	t.Helper()
	for _, par := range []int{0, 8} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/parallelism=%d", tc.name, par), func(t *testing.T) { runPodCase(t, tc, par) })
		}
	}
}

func runPodCase(t *testing.T, tc podCase, parallelism int) {
	t.Helper()
	snap := snapshot(tc.nodes, tc.pods...)
	var nom func(string) []*cache.PodInfo
	if tc.nominated != nil {
		nom = nominatedMap(tc.nominated...)
	}
	in := Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diagnose(t, tc.preemptor, snap, nom), PDBs: tc.pdbs, Order: tc.order, Nominated: nom,
		Parallelism: parallelism}
	if tc.groups != nil {
		in.Group = groups(tc.groups...)
	}
	res, found, err := Pod(context.Background(), tc.preemptor, in)
	if err != nil {
		t.Fatalf("Pod: %v", err)
	}
	type outcome struct {
		Found      bool
		Node       string
		Victims    []string
		Violations int
		Clear      bool
	}
	want := outcome{tc.wantFound, tc.wantNode, tc.wantVictims, tc.wantViolations, tc.wantClear}
	got := outcome{found, res.Node, names(res.Victims), res.PDBViolations, res.ClearNomination}
	if want.Victims == nil {
		want.Victims = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Pod (-want, +got):\n%s\nmessage: %s", diff, res.Message)
	}
	if tc.wantMessage != "" && res.Message != tc.wantMessage {
		t.Errorf("Message = %q, want %q", res.Message, tc.wantMessage)
	}
}

func TestPodEligibility(t *testing.T) {
	two := []*v1.Node{makeNode("node1", "2"), makeNode("node2", "1")}
	runPodCases(t, []podCase{
		{
			name:        "preemptionPolicy Never is not eligible",
			nodes:       []*v1.Node{makeNode("node1", "1")},
			pods:        []*v1.Pod{makePod("victim").node("node1").priority(lowPriority).cpu("1").obj()},
			preemptor:   makePod("p").priority(highPriority).cpu("1").never().obj(),
			wantMessage: "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:  "a preempted lower-priority pod terminating on the nominated node blocks preemption",
			nodes: two,
			pods: []*v1.Pod{
				makePod("t").node("node1").priority(lowPriority).cpu("1").preempted().obj(),
				makePod("v").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("w").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("1").nominated("node1").obj(),
			wantMessage: "preemption: not eligible due to a terminating pod on the nominated node.",
		},
		{
			name:  "a terminating pod without the scheduler's DisruptionTarget does not block",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("t").node("node1").priority(lowPriority).cpu("1").started(0).terminating().obj(),
				makePod("v").node("node1").priority(lowPriority).cpu("1").started(time.Hour).obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("1").nominated("node1").obj(),
			wantFound:   true,
			wantNode:    "node1",
			wantVictims: []string{"v"},
		},
		{
			name:  "a preempted pod of higher priority on the nominated node does not block",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("t").node("node1").priority(highPriority + 1).cpu("1").preempted().obj(),
				makePod("v").node("node1").priority(lowPriority).cpu("1").obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("1").nominated("node1").obj(),
			wantFound:   true,
			wantNode:    "node1",
			wantVictims: []string{"v"},
		},
		{
			name:  "a preempted pod on a node other than the nominated one does not block",
			nodes: two,
			pods: []*v1.Pod{
				makePod("t").node("node2").priority(lowPriority).cpu("1").preempted().obj(),
				makePod("v").node("node1").priority(lowPriority).cpu("2").obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("2").nominated("node1").obj(),
			wantFound:   true,
			wantNode:    "node1",
			wantVictims: []string{"v"},
		},
		{
			name:  "the nominated node rejected as UnschedulableAndUnresolvable does not block",
			nodes: []*v1.Node{taint(makeNode("node1", "2")), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("t").node("node1").priority(lowPriority).cpu("1").preempted().obj(),
				makePod("w").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("1").nominated("node1").obj(),
			wantFound:   true,
			wantNode:    "node2",
			wantVictims: []string{"w"},
		},
	})
}

func TestPodVictimSelection(t *testing.T) {
	node1 := func(cpu string) []*v1.Node { return []*v1.Node{makeNode("node1", cpu)} }
	runPodCases(t, []podCase{
		{
			name:      "preempt a single lower priority pod",
			nodes:     node1("1"),
			pods:      []*v1.Pod{makePod("victim").node("node1").priority(lowPriority).cpu("1").obj()},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"victim"},
			wantMessage: "preemption: found a potential placement for pod on node node1, preempting 1 victims",
		},
		{
			name:  "the lowest priority victim is chosen; equal priority is never a victim",
			nodes: node1("3"),
			pods: []*v1.Pod{
				makePod("high-prio").node("node1").priority(highPriority).cpu("1").obj(),
				makePod("mid-prio").node("node1").priority(midPriority).cpu("1").obj(),
				makePod("low-prio").node("node1").priority(lowPriority).cpu("1").obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"low-prio"},
		},
		{
			name:  "at equal priority the later started pod is chosen",
			nodes: node1("2"),
			pods: []*v1.Pod{
				makePod("older").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("newer").node("node1").priority(lowPriority).cpu("1").started(time.Hour).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"newer"},
		},
		{
			name:  "a pod that has not started is the least important",
			nodes: node1("2"),
			pods: []*v1.Pod{
				makePod("pending").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("running").node("node1").priority(lowPriority).cpu("1").started(time.Hour).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"pending"},
		},
		{
			name:  "only as many victims as needed, most important first",
			nodes: node1("4"),
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("d").node("node1").priority(lowPriority).cpu("1").started(3 * time.Hour).obj(),
				makePod("b").node("node1").priority(lowPriority).cpu("1").started(time.Hour).obj(),
				makePod("c").node("node1").priority(lowPriority).cpu("1").started(2 * time.Hour).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("2").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"c", "d"},
		},
		{
			name:  "victims are ordered by priority, then start",
			nodes: node1("3"),
			pods: []*v1.Pod{
				makePod("low").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("mid").node("node1").priority(midPriority).cpu("1").started(time.Hour).obj(),
				makePod("mid-old").node("node1").priority(midPriority).cpu("1").started(0).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("3").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"mid-old", "mid", "low"},
		},
	})
}

func TestPodPDB(t *testing.T) {
	node1 := []*v1.Node{makeNode("node1", "2")}
	runPodCases(t, []podCase{
		{
			name:  "a non-violating victim of higher priority is preferred to a violating one",
			nodes: node1,
			pods: []*v1.Pod{
				makePod("victim-pdb").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("victim-no-pdb").node("node1").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"victim-no-pdb"},
		},
		{
			name:  "when every victim violates, the lower priority one goes",
			nodes: node1,
			pods: []*v1.Pod{
				makePod("v1").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("v2").node("node1").label("app", "foo").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"v1"}, wantViolations: 1,
		},
		{
			name:  "a pod the budget already lists as disrupted does not violate it",
			nodes: node1,
			pods: []*v1.Pod{
				makePod("victim-pdb").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("victim-no-pdb").node("node1").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0, "victim-pdb")},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"victim-pdb"},
		},
		{
			name:  "the budget is spent victim by victim, most important first",
			nodes: node1,
			pods: []*v1.Pod{
				makePod("v1").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("v2").node("node1").label("app", "foo").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 1)},
			preemptor: makePod("p").priority(highPriority).cpu("2").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"v2", "v1"}, wantViolations: 1,
		},
		{
			name:  "a budget of another namespace does not apply",
			nodes: node1,
			pods: []*v1.Pod{
				makePod("victim-pdb").node("node1").ns("other").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("victim-no-pdb").node("node1").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"victim-pdb"},
		},
	})
}

func TestPodNodeChoice(t *testing.T) {
	two := func(cpu string) []*v1.Node { return []*v1.Node{makeNode("node1", cpu), makeNode("node2", cpu)} }
	runPodCases(t, []podCase{
		{
			name:  "fewest PDB violations first",
			nodes: two("1"),
			pods: []*v1.Pod{
				makePod("a").node("node1").label("app", "foo").priority(lowPriority).cpu("1").obj(),
				makePod("b").node("node2").priority(midPriority).cpu("1").obj(),
			},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"b"},
		},
		{
			name:  "then the lowest highest-victim priority",
			nodes: two("1"),
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(midPriority).cpu("1").obj(),
				makePod("b").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"b"},
		},
		{
			name:  "then the smallest sum of priorities",
			nodes: two("2"),
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(midPriority).cpu("1").obj(),
				makePod("b").node("node1").priority(midPriority).cpu("1").obj(),
				makePod("c").node("node2").priority(midPriority).cpu("1").obj(),
				makePod("d").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("2").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"c", "d"},
		},
		{
			name:  "then the fewest victims",
			nodes: []*v1.Node{makeNode("node1", "3"), makeNode("node2", "3")},
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("b").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("c").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("d").node("node2").priority(lowPriority).cpu("2").obj(),
				makePod("e").node("node2").priority(lowPriority).cpu("1").obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("2").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"d"},
		},
		{
			name:  "then the latest start among the highest priority victims",
			nodes: two("1"),
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("b").node("node2").priority(lowPriority).cpu("1").started(time.Hour).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"b"},
		},
		{
			name:  "then the first node",
			nodes: two("1"),
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("b").node("node2").priority(lowPriority).cpu("1").started(0).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"a"},
		},
	})
}

func TestPodNominatedAndMessages(t *testing.T) {
	nominatedCase := func(name string, nomPriority int32, wantNode string, wantVictims []string) podCase {
		return podCase{
			name:  name,
			nodes: []*v1.Node{makeNode("node1", "2"), makeNode("node2", "2")},
			pods: []*v1.Pod{
				makePod("v1").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("w1").node("node2").priority(midPriority).cpu("1").obj(),
				makePod("w2").node("node2").priority(midPriority).cpu("1").obj(),
			},
			nominated: []*v1.Pod{makePod("n").priority(nomPriority).cpu("1").nominated("node1").obj()},
			preemptor: makePod("p").priority(highPriority).cpu("2").obj(),
			wantFound: true, wantNode: wantNode, wantVictims: wantVictims,
		}
	}
	runPodCases(t, []podCase{
		nominatedCase("a nominated pod of equal priority holds its room on the candidate node", highPriority, "node2", []string{"w1", "w2"}),
		nominatedCase("a nominated pod of higher priority holds its room on the candidate node", highPriority+1, "node2", []string{"w1", "w2"}),
		nominatedCase("a nominated pod of lower priority does not", lowPriority, "node1", []string{"v1"}),
		{
			name: "nodes rejected as UnschedulableAndUnresolvable are skipped",
			nodes: []*v1.Node{
				taint(makeNode("node1", "1")),
				makeNode("node2", "1"),
			},
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("1").obj(),
				makePod("b").node("node2").priority(midPriority).cpu("1").obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node2", wantVictims: []string{"b"},
		},
		{
			name: "no candidate: every node's reason",
			nodes: []*v1.Node{
				taint(makeNode("node1", "2")),
				makeNode("node2", "2"),
				makeNode("node3", "2"),
			},
			pods: []*v1.Pod{
				makePod("a").node("node1").priority(lowPriority).cpu("2").obj(),
				makePod("b").node("node2").priority(highPriority).cpu("2").obj(),
				makePod("c").node("node3").priority(highPriority).cpu("1").obj(),
				makePod("d").node("node3").priority(lowPriority).cpu("1").obj(),
			},
			preemptor:   makePod("p").priority(highPriority).cpu("2").obj(),
			wantClear:   true,
			wantMessage: "preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
		},
		{
			name:        "no node where preemption might help",
			nodes:       []*v1.Node{taint(makeNode("node1", "2")), makeNode("node2", "1")},
			pods:        []*v1.Pod{makePod("a").node("node1").priority(lowPriority).cpu("2").obj()},
			preemptor:   makePod("p").priority(highPriority).cpu("2").obj(),
			wantClear:   true,
			wantMessage: "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
		},
	})
}

func TestPodGroupVictims(t *testing.T) {
	single := makeGroup("g", lowPriority, 2, false)
	all := makeGroup("g", lowPriority, 2, true)
	runPodCases(t, []podCase{
		{
			// KEP-5710 case 3: a single pod preempts a DisruptionMode single
			// group member by member, only as many as it needs.
			name:  "a single group loses only the members needed",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("m1").node("node1").group("g").priority(lowPriority).cpu("1").started(0).obj(),
				makePod("m2").node("node1").group("g").priority(lowPriority).cpu("1").started(time.Hour).obj(),
			},
			groups:    []*schedv1beta1.PodGroup{single},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"m2"},
		},
		{
			// KEP-5710 case 4: a DisruptionMode all group goes as a whole,
			// its members on other nodes included.
			name:  "an all group is preempted as a whole",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("m1").node("node1").group("g").priority(lowPriority).cpu("1").obj(),
				makePod("m2").node("node2").group("g").priority(lowPriority).cpu("1").obj(),
			},
			groups:    []*schedv1beta1.PodGroup{all},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"m1", "m2"},
			wantMessage: "preemption: found a potential placement for pod on node node1, preempting 2 victims",
		},
		{
			name:  "a single pod is preferred to an all group of the same priority",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1"), makeNode("node3", "1")},
			pods: []*v1.Pod{
				makePod("m1").node("node1").group("g").priority(lowPriority).cpu("1").obj(),
				makePod("m2").node("node2").group("g").priority(lowPriority).cpu("1").obj(),
				makePod("s").node("node3").priority(lowPriority).cpu("1").obj(),
			},
			groups:    []*schedv1beta1.PodGroup{all},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node3", wantVictims: []string{"s"},
		},
		{
			name:  "a member of a single group ranks above a pod at equal priority",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("m").node("node1").group("g").priority(lowPriority).cpu("1").started(time.Hour).obj(),
				makePod("s").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
			},
			groups:    []*schedv1beta1.PodGroup{single},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"s"},
		},
		{
			name:  "without Input.Group members are plain pods",
			nodes: []*v1.Node{makeNode("node1", "2")},
			pods: []*v1.Pod{
				makePod("m").node("node1").group("g").priority(lowPriority).cpu("1").started(time.Hour).obj(),
				makePod("s").node("node1").priority(lowPriority).cpu("1").started(0).obj(),
			},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"m"},
		},
		{
			name:  "a member is preempted by its group's priority, not its own (higher)",
			nodes: []*v1.Node{makeNode("node1", "1")},
			pods: []*v1.Pod{
				makePod("m").node("node1").group("g").priority(highPriority).cpu("1").obj(),
			},
			groups:    []*schedv1beta1.PodGroup{single},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"m"},
		},
		{
			name:  "a member is preempted by its group's priority, not its own (lower)",
			nodes: []*v1.Node{makeNode("node1", "1")},
			pods: []*v1.Pod{
				makePod("m").node("node1").group("g").priority(lowPriority).cpu("1").obj(),
			},
			groups:      []*schedv1beta1.PodGroup{makeGroup("g", highPriority, 1, true)},
			preemptor:   makePod("p").priority(highPriority).cpu("1").obj(),
			wantClear:   true,
			wantMessage: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		},
		{
			name:  "an all group violates its budgets if any member does",
			nodes: []*v1.Node{makeNode("node1", "1"), makeNode("node2", "1")},
			pods: []*v1.Pod{
				makePod("m1").node("node1").group("g").priority(lowPriority).cpu("1").obj(),
				makePod("m2").node("node2").group("g").label("app", "foo").priority(lowPriority).cpu("1").obj(),
			},
			groups:    []*schedv1beta1.PodGroup{all},
			pdbs:      []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
			preemptor: makePod("p").priority(highPriority).cpu("1").obj(),
			wantFound: true, wantNode: "node1", wantVictims: []string{"m1", "m2"}, wantViolations: 1,
		},
	})
}

func TestPodVictimOrderThroughSlot(t *testing.T) {
	nodes := []*v1.Node{makeNode("node1", "2")}
	pods := []*v1.Pod{
		makePod("low").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("mid").node("node1").priority(midPriority).cpu("1").obj(),
	}
	preemptor := makePod("p").priority(highPriority).cpu("1").obj()
	rev := &reversed{}
	runPodCases(t, []podCase{
		{name: "native order", nodes: nodes, pods: pods, preemptor: preemptor,
			wantFound: true, wantNode: "node1", wantVictims: []string{"low"}},
		{name: "reversed order", nodes: nodes, pods: pods, preemptor: preemptor, order: rev,
			wantFound: true, wantNode: "node1", wantVictims: []string{"mid"}},
	})
	if rev.calls == 0 {
		t.Error("the victim order slot was not called")
	}
}

func TestPodSlotInput(t *testing.T) {
	snap := snapshot([]*v1.Node{makeNode("node1", "3")},
		makePod("s").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("m").node("node1").group("single").priority(lowPriority).cpu("1").started(time.Hour).obj(),
		makePod("a").node("node1").group("all").label("app", "foo").priority(lowPriority).cpu("1").started(2*time.Hour).obj(),
	)
	preemptor := makePod("p").priority(highPriority).cpu("3").obj()
	rec := &recording{}
	in := Input{
		Plugins: testProfile(), Snapshot: snap, Diagnosis: diagnose(t, preemptor, snap, nil), Order: rec,
		PDBs:  []*policyv1.PodDisruptionBudget{pdb("foo", 0)},
		Group: groups(makeGroup("single", 5, 1, false), makeGroup("all", 7, 1, true)),
	}
	if _, found, err := Pod(context.Background(), preemptor, in); err != nil || !found {
		t.Fatalf("Pod = found %v, %v", found, err)
	}
	if diff := cmp.Diff([]string{"p"}, rec.preemptors); diff != "" {
		t.Errorf("preemptor records (-want, +got):\n%s", diff)
	}
	want := []abi.Victim{
		{Kind: abi.VictimPod, Priority: lowPriority, Members: 1, UID: "s", Namespace: "default", Name: "s"},
		{Kind: abi.VictimGroup, Priority: 5, Members: 1, StartTime: epoch.Add(time.Hour).UnixNano(), UID: "m", Namespace: "default", Name: "m"},
		{Kind: abi.VictimGroup, Priority: 7, Members: 1, StartTime: epoch.Add(2 * time.Hour).UnixNano(), PDBViolating: true, UID: "pg-all", Namespace: "default", Name: "all"},
	}
	if len(rec.batches) != 1 {
		t.Fatalf("slot called %d times, want 1", len(rec.batches))
	}
	if diff := cmp.Diff(want, rec.batches[0]); diff != "" {
		t.Errorf("victims the slot saw (-want, +got):\n%s", diff)
	}
}

func TestPodErrors(t *testing.T) {
	snap := snapshot([]*v1.Node{makeNode("node1", "2")},
		makePod("a").node("node1").priority(lowPriority).cpu("1").obj(),
		makePod("b").node("node1").priority(lowPriority).cpu("1").obj(),
	)
	preemptor := makePod("p").priority(highPriority).cpu("1").obj()
	diag := diagnose(t, preemptor, snap, nil)
	ctx := context.Background()
	if _, _, err := Pod(ctx, preemptor, Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diag, Order: broken{}}); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("broken slot: err = %v, want a permutation error", err)
	}
	if _, _, err := Pod(ctx, preemptor, Input{Plugins: testProfile(), Snapshot: snap}); err == nil {
		t.Error("no diagnosis: want an error")
	}
	if _, _, err := Pod(ctx, preemptor, Input{Plugins: testProfile(), Snapshot: cache.NewSnapshot(), Diagnosis: diag}); err == nil {
		t.Error("no nodes: want an error")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Pod(canceled, preemptor, Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diag}); err == nil {
		t.Error("canceled context: want an error")
	}
}

// TestPodLeavesSnapshot checks that a dry run changes neither the snapshot
// nor its node infos.
func TestPodLeavesSnapshot(t *testing.T) {
	snap := snapshot([]*v1.Node{makeNode("node1", "2"), makeNode("node2", "2")},
		makePod("a").node("node1").priority(lowPriority).cpu("2").obj(),
		makePod("b").node("node2").priority(lowPriority).cpu("1").obj(),
		makePod("c").node("node2").priority(lowPriority).cpu("1").obj(),
	)
	before := podsByNode(snap)
	gens := generations(snap)
	preemptor := makePod("p").priority(highPriority).cpu("2").obj()
	nom := nominatedMap(makePod("n").priority(highPriority).cpu("1").nominated("node1").obj())
	in := Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diagnose(t, preemptor, snap, nom), Nominated: nom}
	if _, found, err := Pod(context.Background(), preemptor, in); err != nil || !found {
		t.Fatalf("Pod = found %v, %v", found, err)
	}
	if diff := cmp.Diff(before, podsByNode(snap)); diff != "" {
		t.Errorf("snapshot pods changed (-before, +after):\n%s", diff)
	}
	if diff := cmp.Diff(gens, generations(snap)); diff != "" {
		t.Errorf("node infos changed (-before, +after):\n%s", diff)
	}
}

// TestPodCandidateCount checks upstream's early stop: with more nodes than
// the candidate count, the dry run stops once it has enough, starting at
// the random offset.
func TestPodCandidateCount(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 150 {
		n := makeNode(nodeName(i), "1")
		nodes = append(nodes, n)
		// Later nodes hold victims of lower priority: the best node is the
		// last, which a dry run of the first 100 never sees.
		pods = append(pods, makePod("v-"+n.Name).node(n.Name).priority(int32(200-i)).cpu("1").obj())
	}
	snap := snapshot(nodes, pods...)
	preemptor := makePod("p").priority(highPriority).cpu("1").obj()
	diag := diagnose(t, preemptor, snap, nil)
	res, found, err := Pod(context.Background(), preemptor, Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diag})
	if err != nil || !found {
		t.Fatalf("Pod = found %v, %v", found, err)
	}
	if want := nodeName(99); res.Node != want {
		t.Errorf("Node = %s, want %s (the best of the first 100 candidates)", res.Node, want)
	}
	// From a random offset the dry run wraps around; an offset of 50 or
	// more reaches the last node.
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("no random offset reached the last node in 50 runs")
		}
		res, _, err := Pod(context.Background(), preemptor, Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diag, Rand: rnd})
		if err != nil {
			t.Fatal(err)
		}
		if res.Node == nodeName(149) {
			break
		}
	}
}

func nodeName(i int) string { return "node" + string(rune('a'+i/26)) + string(rune('a'+i%26)) }

func podsByNode(snap *cache.Snapshot) map[string][]string {
	out := map[string][]string{}
	for _, ni := range snap.List() {
		for _, pi := range ni.Pods() {
			out[ni.Name()] = append(out[ni.Name()], pi.Pod.Name)
		}
	}
	return out
}

func generations(snap *cache.Snapshot) map[string]int64 {
	out := map[string]int64{}
	for _, ni := range snap.List() {
		out[ni.Name()] = ni.Generation()
	}
	return out
}
