package queue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
)

// TestAffinityHintsMoveWhatFits is a differential test of the built-in
// hints module's InterPodAffinity, PodTopologySpread and NodeAffinity hints,
// which read the pod affinity terms and spread constraints of the pod
// record (ABI minor 4), against the default profile's native filters.
//
// Each trial generates a few nodes (zones, hostnames, a disk label, now and
// then a taint), bound pods with app labels (some with a required
// anti-affinity of their own), and a pending pod with required pod
// affinity or anti-affinity terms, DoNotSchedule spread constraints
// (matchLabelKeys and node inclusion policies now and then) and maybe a
// node selector. If the profile rejects it everywhere, one change is applied
// (a bound pod added, deleted or relabelled; a node added, deleted,
// relabelled or (un)tainted; the pod's own labels or tolerations changed)
// and the module is asked about the pod: a Skip for a pod the profile then
// accepts somewhere is a false negative and fails the test. The log has the
// false-positive rate (Queue for a pod still rejected everywhere) per event;
// with WASMSCHED_HINTS_WASM naming another build of the module (say the
// hints.wasm of an older commit) the same trials measure that one:
//
//	go test ./host/queue -run TestAffinityHintsMoveWhatFits -v
//	git show <commit>:policies/hints/hints.wasm > /tmp/old.wasm
//	WASMSCHED_HINTS_WASM=/tmp/old.wasm go test ./host/queue -run TestAffinityHintsMoveWhatFits -v
func TestAffinityHintsMoveWhatFits(t *testing.T) {
	trials := 3000
	if raceEnabled {
		trials = 500
	}
	hintsDiff(t, trials, trials/40, [2]uint64{30, 4247}, func(rng *rand.Rand, i int) diffWorld {
		return newAffinityWorld(rng, i)
	})
}

const affNS = "default"

var (
	affApps  = []string{"web", "db", "cache"}
	affZones = []string{"a", "b", "c"}
	affKeys  = []string{v1.LabelTopologyZone, v1.LabelHostname}
)

// affinityWorld is one trial's cluster: nodes, bound pods, the pending pod.
type affinityWorld struct {
	rng   *rand.Rand
	nodes []*v1.Node
	bound []*v1.Pod
	pod   *v1.Pod
	seq   int
}

func (w *affinityWorld) chance(p float64) bool { return w.rng.Float64() < p }
func (w *affinityWorld) pick(n int) int        { return w.rng.IntN(n) }
func (w *affinityWorld) app() string           { return affApps[w.pick(len(affApps))] }

func (w *affinityWorld) newNode() *v1.Node {
	w.seq++
	name := fmt.Sprintf("n%d", w.seq)
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"),
			v1.ResourceMemory: resource.MustParse("16Gi"), v1.ResourcePods: resource.MustParse("110")}}}
	if w.chance(0.85) {
		n.Labels[v1.LabelTopologyZone] = affZones[w.pick(len(affZones))]
	}
	if w.chance(0.4) {
		n.Labels["disk"] = "ssd"
	}
	if w.chance(0.15) {
		n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}}
	}
	return n
}

// term is a required pod (anti-)affinity term selecting app=value.
func (w *affinityWorld) term(value string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}},
		TopologyKey: affKeys[w.pick(len(affKeys))]}
}

func (w *affinityWorld) newBoundPod() *v1.Pod {
	w.seq++
	name := fmt.Sprintf("b%d", w.seq)
	ns := affNS
	if w.chance(0.15) {
		ns = "other"
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"app": w.app()}},
		Spec: v1.PodSpec{NodeName: w.nodes[w.pick(len(w.nodes))].Name, Containers: []v1.Container{{Name: "c"}}}}
	if w.chance(0.2) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{w.term(w.app())}}}
	}
	return p
}

func newAffinityWorld(rng *rand.Rand, _ int) *affinityWorld {
	w := &affinityWorld{rng: rng}
	for range 2 + w.pick(3) {
		w.nodes = append(w.nodes, w.newNode())
	}
	for range w.pick(6) {
		w.bound = append(w.bound, w.newBoundPod())
	}
	w.pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: affNS, Name: "p", UID: "uid-p", Labels: map[string]string{"app": w.app()}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	if w.chance(0.3) {
		w.pod.Labels["version"] = "1"
	}
	a := &v1.Affinity{}
	if w.chance(0.4) {
		a.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{w.term(w.app())}}
	}
	if w.chance(0.4) {
		a.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{w.term(w.app())}}
	}
	if a.PodAffinity != nil || a.PodAntiAffinity != nil {
		w.pod.Spec.Affinity = a
	}
	if w.chance(0.5) {
		for range 1 + w.pick(2) {
			c := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: affKeys[w.pick(len(affKeys))], WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.app()}}}
			if w.chance(0.3) {
				c.MatchLabelKeys = []string{"version"}
			}
			if w.chance(0.3) {
				c.NodeTaintsPolicy = new(v1.NodeInclusionPolicyHonor)
			}
			if w.chance(0.2) {
				c.NodeAffinityPolicy = new(v1.NodeInclusionPolicyIgnore)
			}
			if w.chance(0.2) {
				c.MinDomains = new(int32(3))
			}
			w.pod.Spec.TopologySpreadConstraints = append(w.pod.Spec.TopologySpreadConstraints, c)
		}
	}
	if w.chance(0.25) {
		w.pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	}
	return w
}

// filter runs the default profile over every node.
func (w *affinityWorld) filter(t *testing.T) (fits bool, rejectors podview.Plugins, message string) {
	t.Helper()
	c := cache.New()
	for _, n := range w.nodes {
		c.AddNode(n)
	}
	for _, p := range w.bound {
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	snap := cache.NewSnapshot()
	if err := c.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	var d framework.Diagnosis
	ps, st := testProfile().Prepare(cache.NewPodInfo(w.pod), snap)
	if st != nil {
		if st.Code == framework.Error {
			t.Fatalf("Prepare: %v", st.Err)
		}
		d.RecordPreFilter(st)
	} else {
		feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d)
		if err := d.Err(); err != nil {
			t.Fatalf("FindFeasible: %v", err)
		}
		if len(feasible) > 0 {
			return true, podview.Plugins{}, ""
		}
	}
	return false, podview.Plugins{Unschedulable: d.UnschedulablePlugins(), Pending: d.PendingPlugins()}, d.Message(len(w.nodes))
}

// event applies one random change and returns its event as host/cluster
// (or, for the pod's own update, host/queue) builds it.
func (w *affinityWorld) event() (abi.Event, string, bool) {
	podEv := func(act abi.ActionType, old, new *v1.Pod, label string) (abi.Event, string, bool) {
		if act == 0 {
			return abi.Event{}, "", false
		}
		return podview.PodEvent(act, old, new, nil), label, true
	}
	nodeEv := func(old, new *v1.Node, label string) (abi.Event, string, bool) {
		act := abi.ActionAdd
		switch {
		case old == nil:
			w.nodes = append(w.nodes, new)
		case new == nil:
			act = abi.ActionDelete
			w.nodes = slices.DeleteFunc(w.nodes, func(n *v1.Node) bool { return n.Name == old.Name })
		default:
			act = podview.NodeUpdateActions(old, new)
			i := slices.IndexFunc(w.nodes, func(n *v1.Node) bool { return n.Name == old.Name })
			w.nodes[i] = new
		}
		if act == 0 {
			return abi.Event{}, "", false
		}
		return podview.NodeEvent(act, old, new, nil, 0), label, true
	}
	switch w.pick(9) {
	case 0:
		p := w.newBoundPod()
		w.bound = append(w.bound, p)
		return podEv(abi.ActionAdd, nil, p, "AssignedPod Add")
	case 1:
		if len(w.bound) > 0 {
			i := w.pick(len(w.bound))
			old := w.bound[i]
			w.bound = slices.Delete(w.bound, i, i+1)
			return podEv(abi.ActionDelete, old, nil, "AssignedPod Delete")
		}
	case 2:
		if len(w.bound) > 0 {
			i := w.pick(len(w.bound))
			old := w.bound[i]
			n := old.DeepCopy()
			n.ResourceVersion = "2"
			n.Labels = map[string]string{"app": w.app()}
			if w.chance(0.3) {
				n.Labels["extra"] = "x"
			}
			w.bound[i] = n
			return podEv(podview.PodUpdateActions(old, n), old, n, "AssignedPod UpdatePodLabel")
		}
	case 3:
		return nodeEv(nil, w.newNode(), "Node Add")
	case 4:
		// A node without pods: the pods of a deleted node go with their
		// own delete events, which one trial does not deliver.
		old := w.nodes[w.pick(len(w.nodes))]
		if len(w.nodes) > 1 && !slices.ContainsFunc(w.bound, func(p *v1.Pod) bool { return p.Spec.NodeName == old.Name }) {
			return nodeEv(old, nil, "Node Delete")
		}
	case 5:
		old := w.nodes[w.pick(len(w.nodes))]
		n := old.DeepCopy()
		label := "Node UpdateNodeLabel"
		switch w.pick(4) {
		case 0:
			n.Labels[v1.LabelTopologyZone] = affZones[w.pick(len(affZones))]
			label += " (zone set)"
		case 1:
			delete(n.Labels, v1.LabelTopologyZone)
			label += " (zone removed)"
		case 2:
			if _, ok := n.Labels["disk"]; ok {
				delete(n.Labels, "disk")
			} else {
				n.Labels["disk"] = "ssd"
			}
			label += " (disk toggled)"
		default:
			n.Labels["unrelated"] = fmt.Sprint(w.pick(3))
			label += " (unrelated label)"
		}
		return nodeEv(old, n, label)
	case 6:
		old := w.nodes[w.pick(len(w.nodes))]
		n := old.DeepCopy()
		if len(n.Spec.Taints) > 0 {
			n.Spec.Taints = nil
		} else {
			n.Spec.Taints = []v1.Taint{{Key: "k", Value: "v", Effect: v1.TaintEffectNoSchedule}}
		}
		return nodeEv(old, n, "Node UpdateNodeTaint")
	case 7:
		old := w.pod.DeepCopy()
		w.pod.ResourceVersion = "2"
		w.pod.Labels = map[string]string{"app": w.app()}
		if w.chance(0.5) {
			w.pod.Labels["version"] = fmt.Sprint(1 + w.pick(2))
		}
		return podEv(podview.PodUpdateActions(old, w.pod), old, w.pod.DeepCopy(), "UnscheduledPod UpdatePodLabel")
	case 8:
		old := w.pod.DeepCopy()
		w.pod.ResourceVersion = "2"
		w.pod.Spec.Tolerations = append(w.pod.Spec.Tolerations, v1.Toleration{Key: "k", Operator: v1.TolerationOpExists})
		return podEv(podview.PodUpdateActions(old, w.pod), old, w.pod.DeepCopy(), "UnscheduledPod UpdatePodToleration")
	}
	return abi.Event{}, "", false
}

func (w *affinityWorld) pending() *v1.Pod { return w.pod }

func (w *affinityWorld) describe() string {
	s := fmt.Sprintf("pod labels %v, affinity %+v, spread %+v, nodeSelector %v\n", w.pod.Labels, w.pod.Spec.Affinity,
		w.pod.Spec.TopologySpreadConstraints, w.pod.Spec.NodeSelector)
	for _, n := range w.nodes {
		s += fmt.Sprintf("  node %s %v taints %v\n", n.Name, n.Labels, n.Spec.Taints)
	}
	for _, p := range w.bound {
		s += fmt.Sprintf("  pod %s/%s on %s %v anti %v\n", p.Namespace, p.Name, p.Spec.NodeName, p.Labels, p.Spec.Affinity != nil)
	}
	return s
}
