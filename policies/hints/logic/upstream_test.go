package logic_test

import (
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies/hints/logic"
)

// The matchers the hints hand-write are checked here against upstream's own
// code (k8s.io/component-helpers v0.37), on random Kubernetes objects turned
// into records by the host's podview, through the native hints.

// noLogger calls f with the zero logger, which discards: it spares this
// test a direct dependency on klog.
func noLogger[L, A, B, C, D, R1, R2 any](f func(L, A, B, C, D) (R1, R2)) func(A, B, C, D) (R1, R2) {
	return func(a A, b B, c C, d D) (R1, R2) {
		var l L
		return f(l, a, b, c, d)
	}
}

var findUntoleratedTaint = noLogger(corev1helpers.FindMatchingUntoleratedTaint)

// doNotSchedule is upstream's helper.DoNotScheduleTaintsFilterFunc.
func doNotSchedule(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}

type k8sGen struct{ r *rand.Rand }

func (g k8sGen) pick(ss ...string) string { return ss[g.r.IntN(len(ss))] }

// pickOr picks from bad one time in eight, else from good.
func (g k8sGen) pickOr(good, bad []string) string {
	if g.r.IntN(8) == 0 {
		return g.pick(bad...)
	}
	return g.pick(good...)
}
func (g k8sGen) upTo(n int) int { return g.r.IntN(n + 1) }

var (
	// Valid names and values, and (picked one time in eight) invalid ones.
	k8sLabelKeys      = []string{"zone", "disk", "cores", "example.com/tier"}
	k8sBadLabelKeys   = []string{"Example.com/tier", "bad key", "a/b/c", "/x", "x/", "-x"}
	k8sLabelValues    = []string{"a", "b", "ssd", "8", "16", "007", "x", "", "a.b_c-d"}
	k8sBadLabelValues = []string{"-3", "+4", "not valid"}
	k8sOperators      = []string{"In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
	k8sBadOperators   = []string{"Foo", ""}
	k8sTaintKeys      = []string{"k1", "k2", "tier", "node.kubernetes.io/unschedulable", ""}
	k8sTaintValues    = []string{"", "v", "5", "05", "-2", "+3", "x", "0", "-0", "9223372036854775808"}
	k8sEffects        = []string{"", "NoSchedule", "NoSchedule", "PreferNoSchedule", "NoExecute", "Foo"}
	k8sTolOps         = []string{"", "Equal", "Exists", "Exists", "Lt", "Gt", "Foo"}
)

func (g k8sGen) labels(n int) map[string]string {
	m := map[string]string{}
	for range g.upTo(n) {
		m[g.pickOr(k8sLabelKeys, k8sBadLabelKeys)] = g.pickOr(k8sLabelValues, k8sBadLabelValues)
	}
	return m
}

func (g k8sGen) requirement(field bool) v1.NodeSelectorRequirement {
	if field {
		r := v1.NodeSelectorRequirement{Key: g.pickOr([]string{"metadata.name"}, []string{"spec.foo"}),
			Operator: v1.NodeSelectorOperator(g.pickOr([]string{"In", "NotIn"}, []string{"Exists", "Gt", "Foo"}))}
		n := 1
		if g.r.IntN(8) == 0 {
			n = 2 * g.upTo(1)
		}
		for range n {
			r.Values = append(r.Values, g.pick("n1", "n2", ""))
		}
		return r
	}
	r := v1.NodeSelectorRequirement{Key: g.pickOr(k8sLabelKeys, k8sBadLabelKeys), Operator: v1.NodeSelectorOperator(g.pickOr(k8sOperators, k8sBadOperators))}
	n := 1 + g.r.IntN(2)
	switch {
	case g.r.IntN(8) == 0:
		n = g.upTo(2) // maybe the wrong number of values
	case r.Operator == v1.NodeSelectorOpExists || r.Operator == v1.NodeSelectorOpDoesNotExist:
		n = 0
	case r.Operator == v1.NodeSelectorOpGt || r.Operator == v1.NodeSelectorOpLt:
		n = 1
	}
	for range n {
		if r.Operator == v1.NodeSelectorOpGt || r.Operator == v1.NodeSelectorOpLt {
			r.Values = append(r.Values, g.pickOr([]string{"4", "8", "16", "007"}, []string{"x", "-3", "+4"}))
		} else {
			r.Values = append(r.Values, g.pickOr(k8sLabelValues, k8sBadLabelValues))
		}
	}
	return r
}

func (g k8sGen) affinityPod() *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
	if g.r.IntN(3) == 0 {
		pod.Spec.NodeSelector = g.labels(2)
	}
	if g.r.IntN(5) > 0 {
		// At least one term, as API validation requires.
		ns := &v1.NodeSelector{}
		for range 1 + g.upTo(2) {
			var term v1.NodeSelectorTerm
			for range g.upTo(3) {
				term.MatchExpressions = append(term.MatchExpressions, g.requirement(false))
			}
			for range g.upTo(1) {
				term.MatchFields = append(term.MatchFields, g.requirement(true))
			}
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term)
		}
		pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: ns}}
	}
	return pod
}

func (g k8sGen) node() *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: g.pick("n1", "n2", ""), Labels: g.labels(4)}}
	for range g.upTo(3) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: g.pick(k8sTaintKeys[:4]...), Value: g.pick(k8sTaintValues...),
			Effect: v1.TaintEffect(g.pick(k8sEffects[1:]...))})
	}
	return n
}

func (g k8sGen) tolerations() []v1.Toleration {
	var out []v1.Toleration
	for range g.upTo(3) {
		out = append(out, v1.Toleration{Key: g.pick(k8sTaintKeys...), Value: g.pick(k8sTaintValues...),
			Operator: v1.TolerationOperator(g.pick(k8sTolOps...)), Effect: v1.TaintEffect(g.pick(k8sEffects...))})
	}
	return out
}

func record(pod *v1.Pod, plugin string) *abi.Pod {
	p := podview.Pod(pod, nil, abi.PodQueueState{}, podview.Plugins{Unschedulable: []string{plugin}})
	return &p
}

func nodeRecord(n *v1.Node) *abi.Node {
	r := podview.Node(n, nil, 0)
	return &r
}

// TestNodeAffinityAgainstUpstream: on a node added, the NodeAffinity hint
// queues exactly when nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
// matches, and fails exactly when that reports a parse error instead.
func TestNodeAffinityAgainstUpstream(t *testing.T) {
	g := k8sGen{rand.New(rand.NewPCG(1, 2))}
	q := policytest.NativeQueueingHint(logic.NodeAffinity)
	var n [3]int
	for i := range 20000 {
		pod, node := g.affinityPod(), g.node()
		match, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
		want := abi.HintSkip
		switch {
		case match:
			want = abi.HintQueue
		case err != nil:
			want = abi.HintError
		}
		got := policytest.Hints(q, policytest.NodeAdd(nodeRecord(node)), record(pod, abi.PluginNodeAffinity))[0]
		n[got]++
		if got != want {
			t.Errorf("case %d: hint %d, upstream Match = %v, %v\nnode %+v\npod nodeSelector %v affinity %+v",
				i, got, match, err, node.ObjectMeta, pod.Spec.NodeSelector, pod.Spec.Affinity)
			if t.Failed() && i > 50 {
				t.FailNow()
			}
		}
	}
	t.Logf("Skip %d, Queue %d, Error %d", n[0], n[1], n[2])
}

// TestTaintTolerationAgainstUpstream: on a node added, the TaintToleration
// hint queues exactly when upstream's FindMatchingUntoleratedTaint finds no
// untolerated NoSchedule/NoExecute taint, with the comparison operators off
// (the host encodes Lt and Gt as unknown) and on (records carrying Lt and
// Gt). NodeUnschedulable's toleration update checks the same matcher.
func TestTaintTolerationAgainstUpstream(t *testing.T) {
	g := k8sGen{rand.New(rand.NewPCG(3, 4))}
	taints := policytest.NativeQueueingHint(logic.TaintToleration)
	unsched := policytest.NativeQueueingHint(logic.NodeUnschedulable)
	unschedTaint := &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
	var n [3]int
	for i := range 20000 {
		node := g.node()
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
		pod.Spec.Tolerations = g.tolerations()
		for _, comparisons := range []bool{false, true} {
			_, untolerated := findUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, doNotSchedule, comparisons)
			want := abi.HintSkip
			if !untolerated {
				want = abi.HintQueue
			}
			rec := record(pod, abi.PluginTaintToleration)
			if comparisons {
				withComparisons(rec, pod)
			}
			got := policytest.Hints(taints, policytest.NodeAdd(nodeRecord(node)), rec)[0]
			n[got]++
			if got != want {
				t.Errorf("case %d (comparison operators %v): hint %d, upstream untolerated %v\ntaints %+v\ntolerations %+v",
					i, comparisons, got, untolerated, node.Spec.Taints, pod.Spec.Tolerations)
			}

			// NodeUnschedulable, the pod's own toleration update.
			want = abi.HintSkip
			if _, untolerated := findUntoleratedTaint([]v1.Taint{*unschedTaint}, pod.Spec.Tolerations, doNotSchedule, comparisons); !untolerated {
				want = abi.HintQueue
			}
			before := record(&v1.Pod{ObjectMeta: pod.ObjectMeta}, "")
			rec.UnschedulablePlugins = []string{abi.PluginNodeUnschedulable}
			ev := policytest.UnscheduledPodUpdate(before, rec, abi.ActionUpdatePodToleration)
			if got := policytest.Hints(unsched, ev, rec)[0]; got != want {
				t.Errorf("case %d (comparison operators %v): NodeUnschedulable hint %d, want %d\ntolerations %+v",
					i, comparisons, got, want, pod.Spec.Tolerations)
			}
		}
		if t.Failed() && i > 50 {
			t.FailNow()
		}
	}
	t.Logf("TaintToleration: Skip %d, Queue %d, Error %d", n[0], n[1], n[2])
}

// withComparisons sets the Lt and Gt operators the host encodes as unknown
// while TaintTolerationComparisonOperators is off.
func withComparisons(rec *abi.Pod, pod *v1.Pod) {
	for i, tol := range pod.Spec.Tolerations {
		switch tol.Operator {
		case v1.TolerationOpLt:
			rec.Tolerations[i].Operator = abi.TolerationLt
		case v1.TolerationOpGt:
			rec.Tolerations[i].Operator = abi.TolerationGt
		}
	}
}

// TestUnchangedAgainstUpstream: for a pod record of an older host (ABI
// minor 3), the InterPodAffinity and PodTopologySpread hints cannot match
// the pod's terms or constraints, so on an update they Skip only when
// nothing upstream's hints compare changed.
// On random revisions of Kubernetes objects turned into records by the
// host's podview, they Skip exactly when upstream's comparisons
// (equality.Semantic.DeepEqual of labels, taints and tolerations) find the
// two revisions equal. The generator keeps to values the records hold
// faithfully: no timeAdded or tolerationSeconds, no empty, Lt/Gt or unknown
// operators or effects (the records merge those; README, "Where it
// differs").
func TestUnchangedAgainstUpstream(t *testing.T) {
	g := k8sGen{rand.New(rand.NewPCG(5, 6))}
	ipa := policytest.NativeQueueingHint(logic.InterPodAffinity)
	pts := policytest.NativeQueueingHint(logic.PodTopologySpread)
	pendingRec := func(plugin string) *abi.Pod {
		return record(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}, plugin)
	}
	ipaPod, ptsPod := pendingRec(abi.PluginInterPodAffinity), pendingRec(abi.PluginPodTopologySpread)
	minor3 := func(p *abi.Pod) abi.PodView {
		v, err := abi.ReadPod(abitest.PodOfMinor(abi.AppendPod(nil, p), 3))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ipaView, ptsView := minor3(ipaPod), minor3(ptsPod)
	hints := func(q policy.QueueingHint, ev abi.EventView, p abi.PodView) []abi.Hint {
		out := []abi.Hint{0}
		q.Hints(ev, []abi.PodView{p}, out)
		return out
	}
	want := func(same bool) abi.Hint {
		if same {
			return abi.HintSkip
		}
		return abi.HintQueue
	}
	var nodes, bound, own [2]int // PodTopologySpread's Skip and Queue
	for i := range 20000 {
		// Nodes: labels (both plugins) and taints (PodTopologySpread).
		oldNode, newNode := g.revisedNode()
		sameLabels := equality.Semantic.DeepEqual(oldNode.Labels, newNode.Labels)
		sameTaints := equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints)
		ev := policytest.NodeUpdate(nodeRecord(oldNode), nodeRecord(newNode), abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint)
		if got := hints(ipa, ev, ipaView)[0]; got != want(sameLabels) {
			t.Errorf("case %d: InterPodAffinity node hint %d, labels equal %v\nold %v\nnew %v", i, got, sameLabels, oldNode.Labels, newNode.Labels)
		}
		got := hints(pts, ev, ptsView)[0]
		nodes[got]++
		if got != want(sameLabels && sameTaints) {
			t.Errorf("case %d: PodTopologySpread node hint %d, labels equal %v, taints equal %v\nold %+v\nnew %+v",
				i, got, sameLabels, sameTaints, oldNode, newNode)
		}

		// Bound pods: labels (both plugins).
		oldPod, newPod := g.revisedPod()
		oldPod.Spec.NodeName, newPod.Spec.NodeName = "n1", "n1"
		sameLabels = equality.Semantic.DeepEqual(oldPod.Labels, newPod.Labels)
		ev = policytest.PodUpdate(record(oldPod, ""), record(newPod, ""), abi.ActionUpdatePodLabel)
		if got := hints(ipa, ev, ipaView)[0]; got != want(sameLabels) {
			t.Errorf("case %d: InterPodAffinity bound pod hint %d, labels equal %v\nold %v\nnew %v", i, got, sameLabels, oldPod.Labels, newPod.Labels)
		}
		got = hints(pts, ev, ptsView)[0]
		bound[got]++
		if got != want(sameLabels) {
			t.Errorf("case %d: PodTopologySpread bound pod hint %d, labels equal %v\nold %v\nnew %v", i, got, sameLabels, oldPod.Labels, newPod.Labels)
		}

		// The pod itself: labels and tolerations (PodTopologySpread).
		for _, q := range []*v1.Pod{oldPod, newPod} {
			q.Name, q.UID, q.Spec.NodeName = "p", "uid-p", ""
		}
		sameTols := equality.Semantic.DeepEqual(oldPod.Spec.Tolerations, newPod.Spec.Tolerations)
		ev = policytest.UnscheduledPodUpdate(record(oldPod, ""), record(newPod, ""), abi.ActionUpdatePodLabel|abi.ActionUpdatePodToleration)
		got = hints(pts, ev, ptsView)[0]
		own[got]++
		if got != want(sameLabels && sameTols) {
			t.Errorf("case %d: PodTopologySpread own update hint %d, labels equal %v, tolerations equal %v\nold %+v\nnew %+v",
				i, got, sameLabels, sameTols, oldPod, newPod)
		}
		if t.Failed() && i > 50 {
			t.FailNow()
		}
	}
	t.Logf("PodTopologySpread Skip/Queue: node updates %v, bound pod updates %v, own updates %v", nodes, bound, own)
}

// revisedNode returns a node and a revision of it with, now and then, its
// labels or taints changed (in place, reordered, or nil for empty).
func (g k8sGen) revisedNode() (old, new *v1.Node) {
	old = g.node()
	for i := range old.Spec.Taints {
		old.Spec.Taints[i].Effect = v1.TaintEffect(g.pick("NoSchedule", "PreferNoSchedule", "NoExecute"))
	}
	new = old.DeepCopy()
	switch g.r.IntN(6) {
	case 0:
		new.Labels = g.labels(4)
	case 1:
		new.Spec.Taints = g.node().Spec.Taints
		for i := range new.Spec.Taints {
			new.Spec.Taints[i].Effect = v1.TaintEffectNoSchedule
		}
	case 2:
		if len(new.Spec.Taints) > 1 {
			ts := new.Spec.Taints
			ts[0], ts[1] = ts[1], ts[0]
		}
	case 3:
		if len(new.Labels) == 0 {
			new.Labels = nil
		}
		if len(new.Spec.Taints) == 0 {
			new.Spec.Taints = []v1.Taint{}
		}
	}
	return old, new
}

// revisedPod returns a pod and a revision of it with, now and then, its
// labels or tolerations changed.
func (g k8sGen) revisedPod() (old, new *v1.Pod) {
	old = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q", UID: "uid-q", Labels: g.labels(3)}}
	tols := func() []v1.Toleration {
		var out []v1.Toleration
		for range g.upTo(2) {
			out = append(out, v1.Toleration{Key: g.pick(k8sTaintKeys[:4]...), Value: g.pick("", "v", "5"),
				Operator: v1.TolerationOperator(g.pick("Equal", "Exists")), Effect: v1.TaintEffect(g.pick("", "NoSchedule", "NoExecute"))})
		}
		return out
	}
	old.Spec.Tolerations = tols()
	new = old.DeepCopy()
	switch g.r.IntN(5) {
	case 0:
		new.Labels = g.labels(3)
	case 1:
		new.Spec.Tolerations = append(new.Spec.Tolerations, tols()...)
	case 2:
		if len(new.Spec.Tolerations) > 0 {
			new.Spec.Tolerations[0].Value += "x"
		}
	}
	return old, new
}
