package preempt

import (
	"sync"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/policy"
)

// Test object builders, after upstream's st.MakePod() / st.MakeNode().

const (
	lowPriority  = 0
	midPriority  = 100
	highPriority = 1000
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type podBuilder struct{ p *v1.Pod }

// makePod returns a pod named name (also its UID) in namespace default.
func makePod(name string) *podBuilder {
	return &podBuilder{p: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}}
}

func (b *podBuilder) obj() *v1.Pod                   { return b.p }
func (b *podBuilder) node(n string) *podBuilder      { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) ns(ns string) *podBuilder       { b.p.Namespace = ns; return b }
func (b *podBuilder) nominated(n string) *podBuilder { b.p.Status.NominatedNodeName = n; return b }
func (b *podBuilder) priority(p int32) *podBuilder   { b.p.Spec.Priority = &p; return b }
func (b *podBuilder) label(k, v string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	b.p.Labels[k] = v
	return b
}

// antiAffinity adds a required pod anti-affinity term: no pod labelled
// key=value on the same node (topology key "name", makeNode's label).
func (b *podBuilder) antiAffinity(key, value string) *podBuilder {
	if b.p.Spec.Affinity == nil {
		b.p.Spec.Affinity = &v1.Affinity{}
	}
	if b.p.Spec.Affinity.PodAntiAffinity == nil {
		b.p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a := b.p.Spec.Affinity.PodAntiAffinity
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}},
		TopologyKey:   "name",
	})
	return b
}

// started sets status.startTime to epoch + d.
func (b *podBuilder) started(d time.Duration) *podBuilder {
	t := metav1.NewTime(epoch.Add(d))
	b.p.Status.StartTime = &t
	return b
}

func (b *podBuilder) never() *podBuilder {
	n := v1.PreemptNever
	b.p.Spec.PreemptionPolicy = &n
	return b
}

func (b *podBuilder) group(name string) *podBuilder {
	b.p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return b
}

// cpu adds a container requesting the cpu quantity.
func (b *podBuilder) cpu(q string) *podBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, v1.Container{
		Name:      fmt.Sprintf("c%d", len(b.p.Spec.Containers)),
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)}},
	})
	return b
}

// preempted marks the pod as terminating after the scheduler preempted it.
func (b *podBuilder) preempted() *podBuilder {
	b.terminating()
	b.p.Status.Conditions = append(b.p.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler,
	})
	return b
}

func (b *podBuilder) terminating() *podBuilder {
	t := metav1.NewTime(epoch)
	b.p.DeletionTimestamp = &t
	return b
}

// makeNode returns a node with cpu allocatable and room for 110 pods.
func makeNode(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
}

func taint(n *v1.Node) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule})
	return n
}

// snapshot places pods (spec.nodeName set) on nodes.
func snapshot(nodes []*v1.Node, pods ...*v1.Pod) *cache.Snapshot {
	byNode := map[string][]*cache.PodInfo{}
	for _, p := range pods {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], cache.NewPodInfo(p))
	}
	infos := make([]*cache.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		infos = append(infos, cache.NewNodeInfo(n, byNode[n.Name]...))
	}
	return cache.NewSnapshot(infos...)
}

// diagnoseB is diagnose for a benchmark (no nominated pods).
func diagnoseB(b *testing.B, pod *v1.Pod, snap *cache.Snapshot) *framework.Diagnosis {
	b.Helper()
	ps, st := testProfile().Prepare(cache.NewPodInfo(pod), snap)
	if st != nil {
		b.Fatalf("prepare: %v", st.Message())
	}
	var d framework.Diagnosis
	if feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d); len(feasible) != 0 {
		b.Fatalf("pod %s fits without preemption", pod.Name)
	}
	return &d
}

// diagnose runs the cycle's filters for pod over every node, as the failed
// cycle did, with nominated pods added the way the cycle adds them.
func diagnose(t *testing.T, pod *v1.Pod, snap *cache.Snapshot, nominated func(string) []*cache.PodInfo) *framework.Diagnosis {
	t.Helper()
	ps, st := testProfile().Prepare(cache.NewPodInfo(pod), snap)
	var d framework.Diagnosis
	if st != nil {
		d.RecordPreFilter(st)
		return &d
	}
	nodes := snap.List()
	if nominated != nil {
		r := newRun(Input{Plugins: testProfile(), Snapshot: snap, Nominated: nominated})
		withNom := make([]*cache.NodeInfo, len(nodes))
		for i, ni := range nodes {
			c := ni.Clone()
			for _, pi := range r.holding(pod, ni, nil) {
				c.AddPod(pi)
			}
			withNom[i] = c
		}
		nodes = withNom
	}
	feasible, _ := framework.FindFeasible(context.Background(), ps, nodes, 0, 0, 1, &d)
	if len(feasible) != 0 {
		t.Fatalf("pod %s fits node %s without preemption", pod.Name, feasible[0].Name())
	}
	return &d
}

// groups serves PodGroups to Input.Group.
func groups(pgs ...*schedv1beta1.PodGroup) func(namespace, name string) *schedv1beta1.PodGroup {
	return func(namespace, name string) *schedv1beta1.PodGroup {
		for _, pg := range pgs {
			if pg.Namespace == namespace && pg.Name == name {
				return pg
			}
		}
		return nil
	}
}

// makeGroup returns a gang PodGroup with minCount and priority; all makes
// its DisruptionMode all.
func makeGroup(name string, prio int32, minCount int32, all bool) *schedv1beta1.PodGroup {
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("pg-" + name)},
		Spec: schedv1beta1.PodGroupSpec{
			Priority: &prio,
			SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: minCount},
			},
		},
	}
	if all {
		pg.Spec.DisruptionMode = &schedv1beta1.DisruptionMode{All: &schedv1beta1.AllDisruptionMode{}}
	} else {
		pg.Spec.DisruptionMode = &schedv1beta1.DisruptionMode{Single: &schedv1beta1.SingleDisruptionMode{}}
	}
	return pg
}

// pdb selects pods labelled app=value in namespace default and allows
// allowed disruptions.
func pdb(value string, allowed int32, disrupted ...string) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pdb-" + value},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &intstr.IntOrString{IntVal: 1},
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}},
		},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if len(disrupted) > 0 {
		p.Status.DisruptedPods = map[string]metav1.Time{}
		for _, n := range disrupted {
			p.Status.DisruptedPods[n] = metav1.NewTime(epoch)
		}
	}
	return p
}

// nominatedMap serves Input.Nominated from pods with a nominated node, as
// the cycle's Nominator does: placed on the node.
func nominatedMap(pods ...*v1.Pod) func(string) []*cache.PodInfo {
	return func(node string) []*cache.PodInfo {
		var out []*cache.PodInfo
		for _, p := range pods {
			if p.Status.NominatedNodeName == node {
				placed := p.DeepCopy()
				placed.Spec.NodeName = node
				out = append(out, cache.NewPodInfo(placed))
			}
		}
		return out
	}
}

func names(pods []*v1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// reversed is a victim-order slot that answers the native order backwards:
// least important first.
type reversed struct{ calls int }

var _ policy.VictimOrder = (*reversed)(nil)

func (r *reversed) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	r.calls++
	policy.Importance{}.Order(preemptor, victims, order)
	slices.Reverse(order)
}

// recording is the native order, remembering what it was asked.
type recording struct {
	preemptors []string
	batches    [][]abi.Victim
}

func (r *recording) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	r.preemptors = append(r.preemptors, preemptor.Name())
	r.batches = append(r.batches, slices.Clone(victims))
	policy.Importance{}.Order(preemptor, victims, order)
}

// broken answers an order that is not a permutation.
type broken struct{}

func (broken) Order(_ abi.PodView, _ []abi.Victim, order []uint32) { clear(order) }

// testProfile is the default profile without listers, built once for the
// package's tests.
var testProfile = sync.OnceValue(func() *framework.Profile {
	p, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{}))
	if err != nil {
		panic(err)
	}
	return p
})
