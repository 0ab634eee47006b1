package cycle_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/queue"
)

func (b *podBuilder) nominated(node string) *podBuilder {
	b.p.Status.NominatedNodeName = node
	return b
}

// onNode lists the names of the pods nominated to node, sorted.
func onNode(n *cycle.Nominator, node string) []string {
	var out []string
	for _, p := range n.OnNode(node) {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// TestNominatorObserve feeds one informer history through Observe.
func TestNominatorObserve(t *testing.T) {
	p := makePod("p")
	q := makePod("q")
	steps := []struct {
		name     string
		old, pod *v1.Pod
		want     map[string][]string // node: nominated pods
	}{
		{"p added, nominated to n1", nil, p.nominated("n1").obj(), map[string][]string{"n1": {"p"}}},
		{"q added without a nomination", nil, q.obj(), map[string][]string{"n1": {"p"}}},
		{"q nominated to n1", q.obj(), q.nominated("n1").obj(), map[string][]string{"n1": {"p", "q"}}},
		{"p moved to n2", p.nominated("n1").obj(), p.nominated("n2").obj(), map[string][]string{"n1": {"q"}, "n2": {"p"}}},
		{"q's nomination cleared", q.nominated("n1").obj(), q.nominated("").obj(), map[string][]string{"n1": nil, "n2": {"p"}}},
		{"p bound", p.nominated("n2").obj(), func() *v1.Pod {
			b := p.nominated("n2").obj()
			b.Spec.NodeName = "n2"
			return b
		}(), map[string][]string{"n2": nil}},
		{"q nominated again", q.obj(), q.nominated("n3").obj(), map[string][]string{"n3": {"q"}}},
		{"q being deleted", q.nominated("n3").obj(), q.nominated("n3").deleting().obj(), map[string][]string{"n3": nil}},
		{"r added, nominated to n3", nil, makePod("r").nominated("n3").obj(), map[string][]string{"n3": {"r"}}},
		{"r deleted", makePod("r").nominated("n3").obj(), nil, map[string][]string{"n3": nil}},
	}
	n := cycle.NewNominator()
	for _, s := range steps {
		n.Observe(s.old, s.pod)
		got := map[string][]string{}
		for node := range s.want {
			got[node] = onNode(n, node)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: nominated pods (-want, +got):\n%s", s.name, diff)
		}
	}
	if got := n.NodeOf("uid-p"); got != "" {
		t.Errorf("NodeOf(bound p) = %q, want \"\"", got)
	}
}

func TestNominatorSetAndRemove(t *testing.T) {
	n := cycle.NewNominator()
	p := makePod("p").obj()
	n.Set(p, "n1")
	n.Set(p, "n2")
	if got := n.NodeOf(p.UID); got != "n2" {
		t.Errorf("NodeOf = %q, want n2", got)
	}
	if got := onNode(n, "n1"); len(got) != 0 {
		t.Errorf("n1 still has %v after p moved to n2", got)
	}
	n.Set(p, "")
	if got := n.NodeOf(p.UID); got != "" {
		t.Errorf("NodeOf = %q after Set(\"\")", got)
	}
	n.Set(p, "n1")
	n.Remove(p.UID)
	n.Remove(p.UID) // twice is fine
	if got := onNode(n, "n1"); len(got) != 0 {
		t.Errorf("n1 has %v after Remove", got)
	}
}

// The room preemption made for a nominated pod is kept from pods of lower
// or equal priority, not from more important ones.
func TestNominatedPodHoldsItsRoom(t *testing.T) {
	tests := []struct {
		name     string
		priority int32
		want     string // the node, "" if unschedulable
	}{
		{"lower priority", 5, ""},
		{"the same priority", 10, ""},
		{"higher priority", 20, "n1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := cycle.NewNominator()
			e := newEnv(t, cycle.WithNominator(n))
			e.addNodes(makeNode("n1", "cpu", "2").obj())
			n.Set(makePod("preemptor").priority(10).req("cpu", "2").nominated("n1").obj(), "n1")
			pod := makePod("p").priority(tt.priority).req("cpu", "1").obj()
			e.addPods(pod)

			e.scheduleNext()

			if got := e.cachedNode(pod.UID); got != tt.want {
				t.Errorf("pod placed on %q, want %q", got, tt.want)
			}
			if tt.want != "" {
				return
			}
			conds := e.api.conditions()
			if len(conds) != 1 || conds[0].Message != "0/1 nodes are available: 1 Insufficient cpu." {
				t.Errorf("conditions %+v, want the node short of cpu", conds)
			}
			if got := e.state(pod.UID); got != queue.QueueUnschedulable {
				t.Errorf("pod in %q, want %q", got, queue.QueueUnschedulable)
			}
		})
	}
}

// A nominated pod tries its node first, and loses its nomination once
// assumed there.
func TestNominatedPodTriesItsNodeFirst(t *testing.T) {
	for _, node := range []string{"n1", "n2", "n3"} {
		t.Run(node, func(t *testing.T) {
			n := cycle.NewNominator()
			e := newEnv(t, cycle.WithNominator(n))
			e.addNodes(makeNode("n1", "cpu", "4").obj(), makeNode("n2", "cpu", "4").obj(), makeNode("n3", "cpu", "4").obj())
			pod := makePod("p").req("cpu", "1").nominated(node).obj()
			n.Set(pod, node)
			e.addPods(pod)

			e.scheduleNext()

			if got := e.cachedNode(pod.UID); got != node {
				t.Errorf("pod placed on %q, want its nominated node %q", got, node)
			}
			if got := n.NodeOf(pod.UID); got != "" {
				t.Errorf("still nominated to %q once assumed", got)
			}
		})
	}
}

// A nominated node that no longer fits is not forced: the pod goes
// elsewhere.
func TestNominatedNodeThatNoLongerFits(t *testing.T) {
	n := cycle.NewNominator()
	e := newEnv(t, cycle.WithNominator(n))
	e.addNodes(makeNode("n1", "cpu", "4").taint("k", v1.TaintEffectNoSchedule).obj(), makeNode("n2", "cpu", "4").obj())
	pod := makePod("p").req("cpu", "1").nominated("n1").obj()
	n.Set(pod, "n1")
	e.addPods(pod)

	e.scheduleNext()

	if got := e.cachedNode(pod.UID); got != "n2" {
		t.Errorf("pod placed on %q, want n2", got)
	}
}
