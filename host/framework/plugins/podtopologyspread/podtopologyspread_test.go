package podtopologyspread

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

// The PodTopologySpread tests are upstream v1.37.1's (podtopologyspread/
// filtering_test.go and scoring_test.go), case by case with the same
// objects and expectations, less the cases that turn off a feature gate
// locked or on by default (NodeInclusionPolicyInPodTopologySpread,
// MatchLabelKeysInPodTopologySpread). Their objects are built with the
// builders below, after upstream's st.MakePod()/st.MakeNode(): pods in the
// empty namespace, as upstream's.

type spreadPodBuilder struct{ P *v1.Pod }

var spreadPodSeq int

// spod is a pod named name (UID name) in the empty namespace.
func spod(name string) *spreadPodBuilder {
	return &spreadPodBuilder{P: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}}
}

// spodOn is a pod on node with the labels ("key" for an empty value, or
// "key=value"), named uniquely.
func spodOn(node string, kv ...string) *spreadPodBuilder {
	spreadPodSeq++
	b := spod(fmt.Sprintf("spread-%d", spreadPodSeq)).on(node)
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		b.Label(k, v)
	}
	return b
}

func (b *spreadPodBuilder) Info() *cache.PodInfo { return cache.NewPodInfo(b.P) }
func (b *spreadPodBuilder) on(n string) *spreadPodBuilder {
	b.P.Spec.NodeName = n
	return b
}
func (b *spreadPodBuilder) ns(ns string) *spreadPodBuilder { b.P.Namespace = ns; return b }
func (b *spreadPodBuilder) Label(k, v string) *spreadPodBuilder {
	if b.P.Labels == nil {
		b.P.Labels = map[string]string{}
	}
	b.P.Labels[k] = v
	return b
}

// spread is upstream's SpreadConstraint.
func (b *spreadPodBuilder) spread(maxSkew int32, key string, action v1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector,
	minDomains *int32, affinityPolicy, taintsPolicy *v1.NodeInclusionPolicy, matchLabelKeys []string) *spreadPodBuilder {
	b.P.Spec.TopologySpreadConstraints = append(b.P.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: action, LabelSelector: sel, MinDomains: minDomains,
		NodeAffinityPolicy: affinityPolicy, NodeTaintsPolicy: taintsPolicy, MatchLabelKeys: matchLabelKeys})
	return b
}

func (b *spreadPodBuilder) nodeSelector(k, v string) *spreadPodBuilder {
	b.P.Spec.NodeSelector = map[string]string{k: v}
	return b
}

// affinity sets the required node affinity to one term with one expression.
func (b *spreadPodBuilder) Affinity(key string, op v1.NodeSelectorOperator, values ...string) *spreadPodBuilder {
	b.P.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{ft.LabelTerm(ft.Expr(key, op, values...))}}}}
	return b
}

func (b *spreadPodBuilder) tolerate(key string) *spreadPodBuilder {
	b.P.Spec.Tolerations = append(b.P.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists})
	return b
}

func (b *spreadPodBuilder) terminating() *spreadPodBuilder {
	now := metav1.Now()
	b.P.DeletionTimestamp = &now
	return b
}

func (b *spreadPodBuilder) owner(name string, gvk schema.GroupVersionKind) *spreadPodBuilder {
	controller := true
	b.P.OwnerReferences = []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: name, Controller: &controller}}
	return b
}

// snode is a node with the labels ("key=value").
func snode(name string, kv ...string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		n.Labels[k] = v
	}
	return n
}

// tainted adds upstream's test taint: node.kubernetes.io/unschedulable
// NoSchedule.
func tainted(n *v1.Node) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
	return n
}

// spreadNodes4 are upstream's usual four nodes: node-a and node-b in zone1,
// node-x and node-y in zone2, labelled zone and node.
func spreadNodes4() []*v1.Node {
	return []*v1.Node{
		snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
		snode("node-x", "zone=zone2", "node=node-x"), snode("node-y", "zone=zone2", "node=node-y"),
	}
}

// spreadSnapshot places pods (by spec.nodeName) on nodes.
func spreadSnapshot(nodes []*v1.Node, pods []*spreadPodBuilder) *cache.Snapshot {
	return cache.NewSnapshot(spreadInfos(nodes, pods)...)
}

func spreadInfos(nodes []*v1.Node, pods []*spreadPodBuilder) []*cache.NodeInfo {
	out := make([]*cache.NodeInfo, len(nodes))
	for i, n := range nodes {
		var on []*cache.PodInfo
		for _, p := range pods {
			if p.P.Spec.NodeName == n.Name {
				on = append(on, p.Info())
			}
		}
		out[i] = cache.NewNodeInfo(n, on...)
	}
	return out
}

// spreadListers are listers over objs (Services, ReplicationControllers,
// ReplicaSets, StatefulSets), built on client-go indexers.
func spreadListers(t testing.TB, objs ...runtime.Object) framework.Listers {
	t.Helper()
	idx := func() toolscache.Indexer {
		return toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	}
	svc, rc, rs, ss := idx(), idx(), idx(), idx()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *v1.Service:
			err = svc.Add(o)
		case *v1.ReplicationController:
			err = rc.Add(o)
		case *appsv1.ReplicaSet:
			err = rs.Add(o)
		case *appsv1.StatefulSet:
			err = ss.Add(o)
		default:
			t.Fatalf("no lister for %T", o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return framework.Listers{
		Services:               corelisters.NewServiceLister(svc),
		ReplicationControllers: corelisters.NewReplicationControllerLister(rc),
		ReplicaSets:            appslisters.NewReplicaSetLister(rs),
		StatefulSets:           appslisters.NewStatefulSetLister(ss),
	}
}

var (
	spreadFoo    = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}}
	spreadBar    = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "bar", Operator: metav1.LabelSelectorOpExists}}}
	spreadHonor  = ptrTo(v1.NodeInclusionPolicyHonor)
	spreadIgnore = ptrTo(v1.NodeInclusionPolicyIgnore)
)

func ptrTo[T any](v T) *T { return &v }

// matchLabels is a selector of one key=value label.
func matchLabels(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

// spreadConstraintView is a spreadConstraint with its selector as text
// ("<nothing>" for a nil labelSelector), for cmp.
type spreadConstraintView struct {
	MaxSkew            int32
	Key                string
	Selector           string
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// sc is a constraint with upstream's defaults: minDomains 1, node affinity
// Honor, node taints Ignore.
func sc(maxSkew int32, key, sel string) spreadConstraintView {
	return spreadConstraintView{MaxSkew: maxSkew, Key: key, Selector: sel, MinDomains: 1,
		NodeAffinityPolicy: v1.NodeInclusionPolicyHonor, NodeTaintsPolicy: v1.NodeInclusionPolicyIgnore}
}

func (c spreadConstraintView) policies(affinity, taints v1.NodeInclusionPolicy) spreadConstraintView {
	c.NodeAffinityPolicy, c.NodeTaintsPolicy = affinity, taints
	return c
}

func viewConstraints(cs []spreadConstraint) []spreadConstraintView {
	var out []spreadConstraintView
	for _, c := range cs {
		sel := "<nothing>"
		if _, ok := c.selector.Selector().Requirements(); ok {
			sel = c.selector.Selector().String()
		}
		out = append(out, spreadConstraintView{MaxSkew: c.maxSkew, Key: c.key, Selector: sel, MinDomains: c.minDomains,
			NodeAffinityPolicy: c.nodeAffinityPolicy, NodeTaintsPolicy: c.nodeTaintsPolicy})
	}
	return out
}

type spreadPath struct {
	Value string
	Num   int
}

// pp is a constraint's critical paths.
func pp(v0 string, n0 int, v1 string, n1 int) [2]spreadPath {
	return [2]spreadPath{{v0, n0}, {v1, n1}}
}

// noPaths are the critical paths of a constraint without domains.
var noPaths = pp("", math.MaxInt32, "", math.MaxInt32)

// spreadFilterView is upstream's preFilterState: the constraints, the
// critical paths (the domains of a tie sorted by name, as upstream's
// comparer does, since map order picks them) and the counts.
type spreadFilterView struct {
	Constraints []spreadConstraintView
	Paths       [][2]spreadPath
	Counts      []map[string]int
}

func viewSpreadFilter(f *spreadFilter) *spreadFilterView {
	v := &spreadFilterView{Constraints: viewConstraints(f.constraints), Counts: f.counts}
	for _, p := range f.paths {
		v.Paths = append(v.Paths, pp(p[0].value, p[0].num, p[1].value, p[1].num))
	}
	v.sortTies()
	return v
}

func (v *spreadFilterView) sortTies() {
	for i, p := range v.Paths {
		if p[0].Num == p[1].Num && p[0].Value > p[1].Value {
			v.Paths[i][0].Value, v.Paths[i][1].Value = p[1].Value, p[0].Value
		}
	}
}

func (v *spreadFilterView) sorted() *spreadFilterView {
	if v != nil {
		v.sortTies()
	}
	return v
}

func TestPodTopologySpreadPreFilterState(t *testing.T) {
	hard, soft := v1.DoNotSchedule, v1.ScheduleAnyway
	zoneFoo, nodeFoo := sc(1, "zone", "foo"), sc(1, "node", "foo")
	nodeBar := sc(1, "node", "bar")
	// existing pods of the "normal case": 3 in zone1, 2 in zone2.
	normal := func(kv ...string) []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", kv...), spodOn("node-a", kv...), spodOn("node-b", kv...),
			spodOn("node-y", kv...), spodOn("node-y", kv...)}
	}
	// 2/1/0/4 over the four nodes.
	twoOneZeroFour := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-b", "foo"),
			spodOn("node-y", "foo"), spodOn("node-y", "foo"), spodOn("node-y", "foo"), spodOn("node-y", "foo")}
	}
	// The nodes and pods of the node inclusion policy cases on "node".
	policyNodes := func(taint bool) []*v1.Node {
		if taint {
			return []*v1.Node{snode("node-a", "node=node-a"), snode("node-b", "node=node-b"),
				tainted(snode("node-c", "node=node-c", "bar="))}
		}
		return []*v1.Node{snode("node-a", "node=node-a", "foo="), snode("node-b", "node=node-b", "foo="),
			snode("node-c", "node=node-c", "bar=")}
	}
	policyPods := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "bar"), spodOn("node-b", "bar"), spodOn("node-b", "bar"), spodOn("node-c")}
	}
	tests := []struct {
		name     string
		pod      *spreadPodBuilder
		nodes    []*v1.Node
		existing []*spreadPodBuilder
		objs     []runtime.Object
		defaults []v1.TopologySpreadConstraint
		want     *spreadFilterView // nil: PreFilter skips the pod
	}{
		{name: "clean cluster with one spreadConstraint",
			pod:   spod("p").Label("foo", "").spread(5, "zone", hard, matchLabels("foo", "bar"), nil, nil, nil, nil),
			nodes: spreadNodes4(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(5, "zone", "foo=bar")},
				Paths: [][2]spreadPath{pp("zone1", 0, "zone2", 0)}, Counts: []map[string]int{{"zone1": 0, "zone2": 0}}}},
		{name: "normal case with one spreadConstraint",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: normal("foo"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 2, "zone1", 3)}, Counts: []map[string]int{{"zone1": 3, "zone2": 2}}}},
		{name: "normal case with null label selector",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, nil, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: normal("foo"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(1, "zone", "<nothing>")},
				Paths: [][2]spreadPath{pp("zone2", 0, "zone1", 0)}, Counts: []map[string]int{{"zone1": 0, "zone2": 0}}}},
		{name: "normal case with one spreadConstraint, on a 3-zone cluster",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: append(spreadNodes4(), snode("node-o", "zone=zone3", "node=node-o"),
				snode("node-p", "zone=zone3", "node=node-p")),
			existing: normal("foo"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone3", 0, "zone2", 2)}, Counts: []map[string]int{{"zone1": 3, "zone2": 2, "zone3": 0}}}},
		{name: "namespace mismatch doesn't count",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo").ns("ns1"), spodOn("node-b", "foo"),
				spodOn("node-y", "foo").ns("ns2"), spodOn("node-y", "foo")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 1, "zone1", 2)}, Counts: []map[string]int{{"zone1": 2, "zone2": 1}}}},
		{name: "normal case with two spreadConstraints",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroFour(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths: [][2]spreadPath{pp("zone1", 3, "zone2", 4), pp("node-x", 0, "node-b", 1)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}}}},
		{name: "soft spreadConstraints should be bypassed",
			pod: spod("p").Label("foo", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-y", "zone=zone2", "node=node-y")},
			existing: twoOneZeroFour(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths: [][2]spreadPath{pp("zone1", 3, "zone2", 4), pp("node-b", 1, "node-a", 2)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-y": 4}}}},
		{name: "different labelSelectors - simple version",
			pod: spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-y", "zone=zone2", "node=node-y")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "bar")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeBar},
				Paths: [][2]spreadPath{pp("zone2", 0, "zone1", 1), pp("node-a", 0, "node-y", 0)},
				Counts: []map[string]int{{"zone1": 1, "zone2": 0},
					{"node-a": 0, "node-b": 1, "node-y": 0}}}},
		{name: "different labelSelectors - complex pods",
			pod: spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-y", "zone=zone2", "node=node-y")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo", "bar"), spodOn("node-b", "foo"),
				spodOn("node-y", "foo"), spodOn("node-y", "foo", "bar"), spodOn("node-y", "foo"), spodOn("node-y", "foo", "bar")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeBar},
				Paths: [][2]spreadPath{pp("zone1", 3, "zone2", 4), pp("node-b", 0, "node-a", 1)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 4},
					{"node-a": 1, "node-b": 0, "node-y": 2}}}},
		{name: "two spreadConstraints, and with podAffinity",
			pod: spod("p").Label("foo", "").Affinity("node", v1.NodeSelectorOpNotIn, "node-x").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroFour(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths: [][2]spreadPath{pp("zone1", 3, "zone2", 4), pp("node-b", 1, "node-a", 2)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-y": 4}}}},
		{name: "default constraints and a service",
			pod: spod("p").Label("foo", "bar").Label("baz", "kar"),
			defaults: []v1.TopologySpreadConstraint{
				{MaxSkew: 3, TopologyKey: "node", WhenUnsatisfiable: hard},
				{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: soft},
				{MaxSkew: 5, TopologyKey: "rack", WhenUnsatisfiable: hard},
			},
			objs: []runtime.Object{&v1.Service{Spec: v1.ServiceSpec{Selector: map[string]string{"foo": "bar"}}}},
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(3, "node", "foo=bar"), sc(5, "rack", "foo=bar")},
				Paths: [][2]spreadPath{noPaths, noPaths}, Counts: []map[string]int{{}, {}}}},
		{name: "default constraints and a service that doesn't match",
			pod:      spod("p").Label("foo", "bar"),
			defaults: []v1.TopologySpreadConstraint{{MaxSkew: 3, TopologyKey: "node", WhenUnsatisfiable: hard}},
			objs:     []runtime.Object{&v1.Service{Spec: v1.ServiceSpec{Selector: map[string]string{"baz": "kep"}}}}},
		{name: "default constraints and a service, but pod has constraints",
			pod: spod("p").Label("foo", "bar").Label("baz", "tar").
				spread(1, "zone", hard, matchLabels("baz", "tar"), nil, nil, nil, nil).
				spread(2, "planet", soft, matchLabels("fot", "rok"), nil, nil, nil, nil),
			defaults: []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: hard}},
			objs:     []runtime.Object{&v1.Service{Spec: v1.ServiceSpec{Selector: map[string]string{"foo": "bar"}}}},
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(1, "zone", "baz=tar")},
				Paths: [][2]spreadPath{noPaths}, Counts: []map[string]int{{}}}},
		{name: "default soft constraints and a service",
			pod:      spod("p").Label("foo", "bar"),
			defaults: []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: soft}},
			objs:     []runtime.Object{&v1.Service{Spec: v1.ServiceSpec{Selector: map[string]string{"foo": "bar"}}}}},
		{name: "TpKeyToDomainsNum is calculated when MinDomains is enabled",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroFour(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths: [][2]spreadPath{pp("zone1", 3, "zone2", 4), pp("node-x", 0, "node-b", 1)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}}}},
		{name: "NodeAffinityPolicy honored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar},
				Paths: [][2]spreadPath{pp("node-a", 1, "node-b", 2)}, Counts: []map[string]int{{"node-a": 1, "node-b": 2}}}},
		{name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "node", hard, spreadBar, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar.policies("Ignore", "Ignore")},
				Paths:  [][2]spreadPath{pp("node-c", 0, "node-a", 1)},
				Counts: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}}}},
		{name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar},
				Paths: [][2]spreadPath{pp("node-a", 1, "node-b", 2)}, Counts: []map[string]int{{"node-a": 1, "node-b": 2}}}},
		{name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", hard, spreadBar, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar.policies("Ignore", "Ignore")},
				Paths:  [][2]spreadPath{pp("node-c", 0, "node-a", 1)},
				Counts: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}}}},
		{name: "NodeTaintsPolicy ignored",
			pod:   spod("p").Label("foo", "").spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(true), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar},
				Paths:  [][2]spreadPath{pp("node-c", 0, "node-a", 1)},
				Counts: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}}}},
		{name: "NodeTaintsPolicy honored",
			pod:   spod("p").Label("foo", "").spread(1, "node", hard, spreadBar, nil, nil, spreadHonor, nil),
			nodes: policyNodes(true), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar.policies("Honor", "Honor")},
				Paths: [][2]spreadPath{pp("node-a", 1, "node-b", 2)}, Counts: []map[string]int{{"node-a": 1, "node-b": 2}}}},
		{name: "NodeTaintsPolicy honored with tolerated taints",
			pod: spod("p").Label("foo", "").tolerate(v1.TaintNodeUnschedulable).
				spread(1, "node", hard, spreadBar, nil, nil, spreadHonor, nil),
			nodes: policyNodes(true), existing: policyPods(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeBar.policies("Honor", "Honor")},
				Paths:  [][2]spreadPath{pp("node-c", 0, "node-a", 1)},
				Counts: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}}}},
		{name: "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-x", "zone=zone2", "node=node-x", "foo=")},
			existing: []*spreadPodBuilder{spodOn("node-b", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo.policies("Ignore", "Ignore")},
				Paths: [][2]spreadPath{pp("zone1", 0, "zone2", 1), pp("node-a", 0, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 0, "zone2": 1},
					{"node-a": 0, "node-b": 2, "node-x": 1}}}},
		{name: "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, spreadHonor, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="),
				tainted(snode("node-b", "zone=zone1", "node=node-b")), snode("node-x", "zone=zone2", "node=node-x", "foo=")},
			existing: []*spreadPodBuilder{spodOn("node-b", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo.policies("Honor", "Honor"), nodeFoo},
				Paths: [][2]spreadPath{pp("zone1", 0, "zone2", 1), pp("node-a", 0, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 0, "zone2": 1},
					{"node-a": 0, "node-b": 2, "node-x": 1}}}},
		{name: "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"),
				tainted(snode("node-b", "zone=zone1", "node=node-b", "foo=")),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), snode("node-y", "zone=zone2", "node=node-y")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-x", "foo"),
				spodOn("node-y", "foo")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths:  [][2]spreadPath{pp("zone1", 0, "zone2", 1), pp("node-b", 0, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}}}},
		{name: "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "zone", hard, spreadFoo, nil, spreadIgnore, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, spreadHonor, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"),
				tainted(snode("node-b", "zone=zone1", "node=node-b", "foo=")),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), snode("node-y", "zone=zone2", "node=node-y", "foo=")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-x", "foo"),
				spodOn("node-x", "foo"), spodOn("node-y", "foo")},
			want: &spreadFilterView{
				Constraints: []spreadConstraintView{zoneFoo.policies("Ignore", "Ignore"), nodeFoo.policies("Honor", "Honor")},
				Paths:       [][2]spreadPath{pp("zone1", 2, "zone2", 3), pp("node-y", 1, "node-x", 2)},
				Counts:      []map[string]int{{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}}}},
		{name: "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
			pod: spod("p").Label("foo", "").Label("bar", "a").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, []string{"bar"}),
			nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo", "bar=a"), spodOn("node-b", "foo"),
				spodOn("node-y", "foo", "bar=a"), spodOn("node-y", "bar")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(1, "zone", "bar=a,foo")},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 1)}, Counts: []map[string]int{{"zone1": 1, "zone2": 1}}}},
		{name: "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
			pod:   spod("p").Label("foo", "a").spread(1, "zone", hard, &metav1.LabelSelector{}, nil, nil, nil, []string{"foo"}),
			nodes: spreadNodes4(), existing: normal("foo=a"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(1, "zone", "foo=a")},
				Paths: [][2]spreadPath{pp("zone2", 2, "zone1", 3)}, Counts: []map[string]int{{"zone1": 3, "zone2": 2}}}},
		{name: "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, nil, nil, nil, nil, []string{"bar"}),
			nodes: spreadNodes4(), existing: normal("foo=a"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{sc(1, "zone", "<nothing>")},
				Paths: [][2]spreadPath{pp("zone2", 0, "zone1", 0)}, Counts: []map[string]int{{"zone1": 0, "zone2": 0}}}},
		{name: "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, []string{"bar"}),
			nodes: spreadNodes4(), existing: normal("foo=a"),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 2, "zone1", 3)}, Counts: []map[string]int{{"zone1": 3, "zone2": 2}}}},
		{name: "two spreadConstraints with the same topologyKey",
			pod: spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "zone", hard, spreadBar, nil, nil, nil, nil),
			nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "bar"), spodOn("node-b", "foo"), spodOn("node-x", "bar"),
				spodOn("node-y", "foo", "bar"), spodOn("node-y", "bar")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, sc(1, "zone", "bar")},
				Paths:  [][2]spreadPath{pp("zone2", 1, "zone1", 2), pp("zone1", 1, "zone2", 3)},
				Counts: []map[string]int{{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}}}},
		{name: "skip if not specified",
			pod:   spod("p").Label("foo", ""),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &podTopologySpread{defaults: tc.defaults, listers: spreadListers(t, tc.objs...)}
			f, names, st := pl.PreFilter(tc.pod.Info(), spreadSnapshot(tc.nodes, tc.existing))
			if st != nil || names != nil {
				t.Fatalf("PreFilter = %v, %+v, want no node restriction and no status", names, st)
			}
			var got *spreadFilterView
			if f != nil {
				got = viewSpreadFilter(f.(*spreadFilter))
			}
			if diff := cmp.Diff(tc.want.sorted(), got); diff != "" {
				t.Errorf("PreFilter state (-want, +got):\n%s", diff)
			}
		})
	}
}

// spreadUpdateCase is a case of upstream's TestPreFilterStateAddPod and
// TestPreFilterStateRemovePod.
type spreadUpdateCase struct {
	name     string
	pod      *spreadPodBuilder // the preemptor
	changed  *spreadPodBuilder // the pod added or removed
	existing []*spreadPodBuilder
	nodeIdx  int // the node of changed
	nodes    []*v1.Node
	want     *spreadFilterView
}

// runSpreadUpdate prepares the pod, adds or removes changed on a Clone and
// checks the clone's state, and that the original did not change.
func runSpreadUpdate(t *testing.T, tests []spreadUpdateCase, remove bool) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := spreadSnapshot(tc.nodes, tc.existing)
			f, _, st := (&podTopologySpread{}).PreFilter(tc.pod.Info(), snap)
			if st != nil {
				t.Fatal(st.AsError())
			}
			before := viewSpreadFilter(f.(*spreadFilter))
			c := f.(framework.PodUpdater).Clone().(*spreadFilter)
			ni := snap.Get(tc.nodes[tc.nodeIdx].Name)
			if remove {
				c.RemovePod(tc.changed.Info(), ni)
			} else {
				c.AddPod(tc.changed.Info(), ni)
			}
			if diff := cmp.Diff(tc.want.sorted(), viewSpreadFilter(c)); diff != "" {
				t.Errorf("state after the update (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, viewSpreadFilter(f.(*spreadFilter))); diff != "" {
				t.Errorf("the original changed with its clone (-before, +after):\n%s", diff)
			}
		})
	}
}

func TestPodTopologySpreadAddPod(t *testing.T) {
	hard := v1.DoNotSchedule
	zoneFoo, nodeFoo := sc(1, "zone", "foo"), sc(1, "node", "foo")
	ab := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b")}
	}
	ax := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-x", "zone=zone2", "node=node-x")}
	}
	abx := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
			snode("node-x", "zone=zone2", "node=node-x")}
	}
	// The nodes of the node inclusion cases: node-a does not match the
	// preemptor's "foo NotIn [bar]".
	affinityNodes := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo=bar"), snode("node-b", "zone=zone2", "node=node-b", "foo=")}
	}
	nodeOnly := spod("p").Label("foo", "").spread(1, "node", hard, spreadFoo, nil, nil, nil, nil)
	zoneAndNode := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
			spread(1, "node", hard, spreadFoo, nil, nil, nil, nil)
	}
	fooBar := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
			spread(1, "node", hard, spreadBar, nil, nil, nil, nil)
	}
	runSpreadUpdate(t, []spreadUpdateCase{
		{name: "node a and b both impact current min match",
			pod: nodeOnly, changed: spodOn("node-a", "foo"), nodeIdx: 0, nodes: ab(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeFoo},
				Paths: [][2]spreadPath{pp("node-b", 0, "node-a", 1)}, Counts: []map[string]int{{"node-a": 1, "node-b": 0}}}},
		{name: "only node a impacts current min match",
			pod: nodeOnly, changed: spodOn("node-a", "foo"), existing: []*spreadPodBuilder{spodOn("node-b", "foo")},
			nodeIdx: 0, nodes: ab(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeFoo},
				Paths: [][2]spreadPath{pp("node-a", 1, "node-b", 1)}, Counts: []map[string]int{{"node-a": 1, "node-b": 1}}}},
		{name: "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
			pod: nodeOnly, changed: spodOn("node-a", "foo").ns("ns1"), existing: []*spreadPodBuilder{spodOn("node-b", "foo")},
			nodeIdx: 0, nodes: ab(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeFoo},
				Paths: [][2]spreadPath{pp("node-a", 0, "node-b", 1)}, Counts: []map[string]int{{"node-a": 0, "node-b": 1}}}},
		{name: "add pod on non-critical node won't trigger re-calculation",
			pod: nodeOnly, changed: spodOn("node-b", "foo"), existing: []*spreadPodBuilder{spodOn("node-b", "foo")},
			nodeIdx: 1, nodes: ab(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{nodeFoo},
				Paths: [][2]spreadPath{pp("node-a", 0, "node-b", 2)}, Counts: []map[string]int{{"node-a": 0, "node-b": 2}}}},
		{name: "node a and x both impact topologyKeyToMinPodsMap on zone and node",
			pod: zoneAndNode(), changed: spodOn("node-a", "foo"), nodeIdx: 0, nodes: ax(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths:  [][2]spreadPath{pp("zone2", 0, "zone1", 1), pp("node-x", 0, "node-a", 1)},
				Counts: []map[string]int{{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}}}},
		{name: "only node a impacts topologyKeyToMinPodsMap on zone and node",
			pod: zoneAndNode(), changed: spodOn("node-a", "foo"), existing: []*spreadPodBuilder{spodOn("node-x", "foo")},
			nodeIdx: 0, nodes: ax(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths:  [][2]spreadPath{pp("zone1", 1, "zone2", 1), pp("node-a", 1, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}}}},
		{name: "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
			pod: zoneAndNode(), changed: spodOn("node-a", "foo"),
			existing: []*spreadPodBuilder{spodOn("node-b", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo")},
			nodeIdx:  0, nodes: abx(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths:  [][2]spreadPath{pp("zone2", 1, "zone1", 3), pp("node-a", 1, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}}}},
		{name: "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
			pod: fooBar(), changed: spodOn("node-a", "foo"),
			existing: []*spreadPodBuilder{spodOn("node-b", "foo", "bar"), spodOn("node-x", "foo", "bar"), spodOn("node-x", "bar")},
			nodeIdx:  0, nodes: abx(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, sc(1, "node", "bar")},
				Paths:  [][2]spreadPath{pp("zone2", 1, "zone1", 2), pp("node-a", 0, "node-b", 1)},
				Counts: []map[string]int{{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}}}},
		{name: "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
			pod: fooBar(), changed: spodOn("node-a", "foo", "bar"),
			existing: []*spreadPodBuilder{spodOn("node-b", "bar"), spodOn("node-x", "foo", "bar"), spodOn("node-x", "bar")},
			nodeIdx:  0, nodes: abx(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, sc(1, "node", "bar")},
				Paths:  [][2]spreadPath{pp("zone1", 1, "zone2", 1), pp("node-a", 1, "node-b", 1)},
				Counts: []map[string]int{{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}}}},
		{name: "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpNotIn, "bar").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			changed:  spodOn("node-a", "foo", "zone=zone1"),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodeIdx:  0, nodes: affinityNodes(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 1, "", math.MaxInt32)}, Counts: []map[string]int{{"zone2": 1}}}},
		{name: "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
			pod:      spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			changed:  spodOn("node-b", "foo", "zone=zone2"),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodeIdx:  1, nodes: affinityNodes(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 2)}, Counts: []map[string]int{{"zone1": 1, "zone2": 2}}}},
		{name: "add a label selector not matched pod when with NodeInclusionPolicy enabled",
			pod:      spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			changed:  spodOn("node-b", "zone=zone2"),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodeIdx:  1, nodes: affinityNodes(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 1)}, Counts: []map[string]int{{"zone1": 1, "zone2": 1}}}},
		{name: "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
			pod: spod("p").Label("foo", "").tolerate(v1.TaintNodeUnschedulable).
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			changed:  spodOn("node-b", "foo", "zone=zone2"),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodeIdx:  1,
			nodes:    []*v1.Node{tainted(snode("node-a", "zone=zone1", "node=node-a")), snode("node-b", "zone=zone2", "node=node-b")},
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 2)}, Counts: []map[string]int{{"zone1": 1, "zone2": 2}}}},
	}, false)
}

func TestPodTopologySpreadRemovePod(t *testing.T) {
	hard := v1.DoNotSchedule
	zoneFoo, nodeFoo := sc(1, "zone", "foo"), sc(1, "node", "foo")
	zoneOnly := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil)
	}
	abx := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
			snode("node-x", "zone=zone2", "node=node-x")}
	}
	affinityNodes := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo=bar"), snode("node-b", "zone=zone2", "node=node-b", "foo=")}
	}
	// existing is the pods of a case; victim picks the removed one.
	type pods = []*spreadPodBuilder
	one := pods{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo")}
	four := pods{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo"), spodOn("node-y", "foo")}
	irrelevant := pods{spodOn("node-a", "bar"), spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo"),
		spodOn("node-y", "foo")}
	two := pods{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo"),
		spodOn("node-x", "foo")}
	runSpreadUpdate(t, []spreadUpdateCase{
		{name: "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
			pod: zoneOnly(), nodes: abx(), existing: one, changed: one[0], nodeIdx: 0,
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 1)}, Counts: []map[string]int{{"zone1": 1, "zone2": 1}}}},
		{name: "one spreadConstraint on node, topologyKeyToMinPodsMap changed",
			pod: zoneOnly(), nodes: spreadNodes4(), existing: four, changed: four[0], nodeIdx: 0,
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 1, "zone2", 2)}, Counts: []map[string]int{{"zone1": 1, "zone2": 2}}}},
		{name: "delete an irrelevant pod won't help",
			pod: zoneOnly(), nodes: spreadNodes4(), existing: irrelevant, changed: irrelevant[0], nodeIdx: 0,
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 2, "zone2", 2)}, Counts: []map[string]int{{"zone1": 2, "zone2": 2}}}},
		{name: "delete a non-existing pod won't help",
			pod: zoneOnly(), nodes: spreadNodes4(), existing: four, changed: spodOn("node-a", "bar"), nodeIdx: 0,
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone1", 2, "zone2", 2)}, Counts: []map[string]int{{"zone1": 2, "zone2": 2}}}},
		{name: "two spreadConstraints",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: abx(), existing: two, changed: two[3], nodeIdx: 2,
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo, nodeFoo},
				Paths:  [][2]spreadPath{pp("zone2", 1, "zone1", 3), pp("node-b", 1, "node-x", 1)},
				Counts: []map[string]int{{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}}}},
		{name: "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpNotIn, "bar").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodeIdx: 0, changed: spodOn("node-a", "foo", "zone=zone1"),
			existing: pods{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodes:    affinityNodes(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 1, "", math.MaxInt32)}, Counts: []map[string]int{{"zone2": 1}}}},
		{name: "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
			pod:     zoneOnly(),
			nodeIdx: 1, changed: spodOn("node-b", "foo", "zone=zone2"),
			existing: pods{spodOn("node-a", "foo", "zone=zone1"), spodOn("node-b", "foo", "zone=zone2")},
			nodes:    affinityNodes(),
			want: &spreadFilterView{Constraints: []spreadConstraintView{zoneFoo},
				Paths: [][2]spreadPath{pp("zone2", 0, "zone1", 1)}, Counts: []map[string]int{{"zone1": 1, "zone2": 0}}}},
	}, true)
}

// spreadFilterCase is a case of upstream's TestSingleConstraint and
// TestMultipleConstraints: the code Filter returns on each node (Success
// for a feasible one).
type spreadFilterCase struct {
	name     string
	pod      *spreadPodBuilder
	nodes    []*v1.Node
	existing []*spreadPodBuilder
	want     map[string]framework.Code
}

func runSpreadFilter(t *testing.T, tests []spreadFilterCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := spreadSnapshot(tc.nodes, tc.existing)
			f, _, st := (&podTopologySpread{}).PreFilter(tc.pod.Info(), snap)
			if st != nil || f == nil {
				t.Fatalf("PreFilter = %v, %+v, want a filter", f, st)
			}
			got := map[string]framework.Code{}
			for _, n := range tc.nodes {
				st := f.Filter(snap.Get(n.Name))
				switch {
				case st == nil:
					got[n.Name] = framework.Success
				case st == statusTopologySpread, st == statusTopologySpreadMissingLabel:
					got[n.Name] = st.Code
				default:
					t.Errorf("%s: Filter = %+v, not one of the plugin's statuses", n.Name, st)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("codes (-want, +got):\n%s", diff)
			}
		})
	}
}

// The shorthands of the filter cases' wanted codes.
const (
	fits    = framework.Success                      // feasible
	skew    = framework.Unschedulable                // ReasonTopologySpread
	nolabel = framework.UnschedulableAndUnresolvable // ReasonTopologySpreadMissingLabel
)

func codes(nodes []string, cs ...framework.Code) map[string]framework.Code {
	m := map[string]framework.Code{}
	for i, n := range nodes {
		m[n] = cs[i]
	}
	return m
}

var abxy = []string{"node-a", "node-b", "node-x", "node-y"}

func TestPodTopologySpreadFilterSingleConstraint(t *testing.T) {
	hard := v1.DoNotSchedule
	twoOneZeroThree := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-b", "foo"),
			spodOn("node-y", "foo"), spodOn("node-y", "foo"), spodOn("node-y", "foo")}
	}
	twoTwoOne := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-b", "foo"),
			spodOn("node-b", "foo"), spodOn("node-c", "foo")}
	}
	abc := func() []*v1.Node {
		return []*v1.Node{snode("node-a", "node=node-a"), snode("node-b", "node=node-b"), snode("node-c", "node=node-c")}
	}
	// The nodes and pods of the node inclusion cases: spread as 1/1/0/1,
	// node-y without label foo (or tainted).
	policyNodes := func(taint bool) []*v1.Node {
		y := snode("node-y", "node=node-y")
		if taint {
			y = tainted(y)
		}
		return []*v1.Node{snode("node-a", "node=node-a", "foo="), snode("node-b", "node=node-b", "foo="),
			snode("node-x", "node=node-x", "foo="), y}
	}
	policyPods := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-y", "foo")}
	}
	runSpreadFilter(t, []spreadFilterCase{
		{name: "no existing pods",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), want: codes(abxy, fits, fits, fits, fits)},
		{name: "no existing pods, incoming pod doesn't match itself",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadBar, nil, nil, nil, nil),
			nodes: spreadNodes4(), want: codes(abxy, fits, fits, fits, fits)},
		{name: "existing pods in a different namespace do not count",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo").ns("ns1"), spodOn("node-a", "foo").ns("ns2"),
				spodOn("node-x", "foo"), spodOn("node-y", "foo")},
			want: codes(abxy, fits, fits, skew, skew)},
		{name: "existing pods do not match null selector",
			pod:      spod("p").Label("foo", "").spread(1, "zone", hard, nil, nil, nil, nil, nil),
			nodes:    spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-x", "foo"), spodOn("node-y", "foo")},
			want:     codes(abxy, fits, fits, fits, fits)},
		{name: "pods spread across zones as 3/3, all nodes fit",
			pod:   spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroThree(), want: codes(abxy, fits, fits, fits, fits)},
		{name: "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zon=zone1", "node=node-b"),
				snode("node-x", "zone=zone2", "node=node-x"), snode("node-y", "zone=zone2", "node=node-y")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-x", "foo"),
				spodOn("node-y", "foo")},
			want: codes(abxy, fits, nolabel, skew, skew)},
		{name: "pod cannot be scheduled as all nodes don't have label 'rack'",
			pod:   spod("p").Label("foo", "").spread(1, "rack", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-x", "zone=zone2", "node=node-x")},
			want:  map[string]framework.Code{"node-a": nolabel, "node-x": nolabel}},
		{name: "pods spread across nodes as 2/1/0/3, only node-x fits",
			pod:   spod("p").Label("foo", "").spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroThree(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
			pod:   spod("p").Label("foo", "").spread(2, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroThree(), want: codes(abxy, skew, fits, fits, skew)},
		{name: "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
			pod:   spod("p").Label("bar", "").spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroThree(), want: codes(abxy, skew, fits, fits, skew)},
		{name: "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
			pod: spod("p").Label("foo", "").Affinity("node", v1.NodeSelectorOpIn, "node-a", "node-y").
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: spreadNodes4(), existing: twoOneZeroThree(),
			// node-b and node-x pass as NodeAffinity is not run here.
			want: codes(abxy, fits, fits, fits, skew)},
		{name: "terminating Pods should be excluded",
			pod:      spod("p").Label("foo", "").spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes:    []*v1.Node{snode("node-a", "node=node-a"), snode("node-b", "node=node-b")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo").terminating(), spodOn("node-b", "foo")},
			want:     map[string]framework.Code{"node-a": fits, "node-b": skew}},
		{name: "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
			pod: spod("p").Label("foo", "").Affinity("node", v1.NodeSelectorOpNotIn, "node-b").
				spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil),
			nodes:    spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-b", "foo"), spodOn("node-b", "foo"), spodOn("node-y", "foo")},
			want:     codes(abxy, fits, fits, skew, skew)},
		{name: "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
			pod:   spod("p").Label("foo", "").spread(2, "node", hard, spreadFoo, ptrTo[int32](4), nil, nil, nil),
			nodes: abc(), existing: twoTwoOne(),
			want: map[string]framework.Code{"node-a": skew, "node-b": skew, "node-c": fits}},
		{name: "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
			pod:   spod("p").Label("foo", "").spread(2, "node", hard, spreadFoo, ptrTo[int32](2), nil, nil, nil),
			nodes: abc(), existing: twoTwoOne(),
			want: map[string]framework.Code{"node-a": fits, "node-b": fits, "node-c": fits}},
		{name: "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
			pod:      spod("p").Label("foo", "").spread(2, "zone", hard, spreadFoo, ptrTo[int32](3), nil, nil, nil),
			nodes:    spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-y", "foo")},
			want:     codes(abxy, skew, skew, fits, fits)},
		{name: "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
			pod:      spod("p").Label("foo", "").spread(2, "zone", hard, spreadFoo, ptrTo[int32](1), nil, nil, nil),
			nodes:    spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-y", "foo")},
			want:     codes(abxy, fits, fits, fits, fits)},
		{name: "NodeAffinityPolicy honored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			// node-y passes as NodeAffinity is not run here.
			want: codes(abxy, skew, skew, fits, fits)},
		{name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "node", hard, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(), want: codes(abxy, skew, skew, fits, fits)},
		{name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", hard, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "NodeTaintsPolicy honored",
			pod:   spod("p").Label("foo", "").spread(1, "node", hard, spreadFoo, nil, nil, spreadHonor, nil),
			nodes: policyNodes(true), existing: policyPods(),
			// node-y passes as TaintToleration is not run here.
			want: codes(abxy, skew, skew, fits, fits)},
		{name: "NodeTaintsPolicy ignored",
			pod:   spod("p").Label("foo", "").spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(true), existing: policyPods(), want: codes(abxy, skew, skew, fits, skew)},
	})
}

func TestPodTopologySpreadFilterMultipleConstraints(t *testing.T) {
	hard := v1.DoNotSchedule
	zoneAndNode := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
			spread(1, "node", hard, spreadFoo, nil, nil, nil, nil)
	}
	fooBar := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
			spread(1, "node", hard, spreadBar, nil, nil, nil, nil)
	}
	twoZones := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", hard, spreadBar, nil, nil, nil, nil).
			spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil)
	}
	// a, b and y each hold a matching pod.
	aby := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo"), spodOn("node-y", "foo")}
	}
	// zone1 3/node-a 2/node-b 1, zone2 node-y n.
	spreadY := func(n int) []*spreadPodBuilder {
		p := []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo"), spodOn("node-b", "foo")}
		for range n {
			p = append(p, spodOn("node-y", "foo"))
		}
		return p
	}
	zonesSpread := func(extra bool) []*spreadPodBuilder {
		p := []*spreadPodBuilder{spodOn("node-a", "foo", "bar"), spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar"),
			spodOn("node-y", "foo"), spodOn("node-y", "foo", "bar"), spodOn("node-y", "foo")}
		if extra {
			p = append(p, spodOn("node-y", "foo"))
		}
		return p
	}
	runSpreadFilter(t, []spreadFilterCase{
		{name: "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
			pod: zoneAndNode(), nodes: spreadNodes4(), existing: spreadY(3), want: codes(abxy, skew, skew, fits, skew)},
		{name: "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
			pod: zoneAndNode(), nodes: spreadNodes4(), existing: spreadY(4), want: codes(abxy, skew, skew, skew, skew)},
		{name: "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
			pod: fooBar(), nodes: spreadNodes4(), existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-y", "bar")},
			want: codes(abxy, skew, skew, fits, skew)},
		{name: "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
			pod: fooBar(), nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-x", "bar"), spodOn("node-y", "bar")},
			want:     codes(abxy, skew, skew, skew, skew)},
		{name: "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
			pod: fooBar(), nodes: spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-a", "foo", "bar"), spodOn("node-y", "foo"),
				spodOn("node-y", "foo", "bar"), spodOn("node-y", "foo")},
			want: codes(abxy, skew, fits, skew, skew)},
		{name: "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
			pod: spod("p").Label("bar", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadBar, nil, nil, nil, nil),
			nodes:    spreadNodes4(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-x", "bar"), spodOn("node-y", "bar")},
			want:     codes(abxy, fits, fits, skew, skew)},
		{name: "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
			pod: zoneAndNode(),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a"), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-x", "zone=zone2"), snode("node-y", "zone=zone2", "node=node-y")},
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-y", "foo")},
			want:     codes(abxy, skew, fits, nolabel, skew)},
		{name: "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="), snode("node-b", "zone=zone1", "node=node-b", "foo="),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), snode("node-y", "zone=zone2", "node=node-y")},
			existing: aby(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
			pod: spod("p").Label("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, spreadHonor, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="), snode("node-b", "zone=zone1", "node=node-b", "foo="),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), tainted(snode("node-y", "zone=zone2", "node=node-y"))},
			existing: aby(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, nil, nil).
				spread(1, "node", hard, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), tainted(snode("node-y", "zone=zone2", "node=node-y", "foo="))},
			existing: aby(), want: codes(abxy, skew, fits, fits, skew)},
		{name: "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").spread(1, "zone", hard, spreadFoo, nil, nil, spreadHonor, nil).
				spread(1, "node", hard, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", "node=node-a", "foo="), snode("node-b", "zone=zone1", "node=node-b"),
				snode("node-x", "zone=zone2", "node=node-x", "foo="), tainted(snode("node-y", "zone=zone2", "node=node-y", "foo="))},
			existing: aby(), want: codes(abxy, skew, skew, fits, skew)},
		{name: "two Constraints on zone, spreads = [3/3, 2/1]",
			pod: twoZones(), nodes: spreadNodes4(), existing: zonesSpread(false), want: codes(abxy, skew, skew, fits, fits)},
		{name: "two Constraints on zone, spreads = [3/4, 2/1]",
			pod: twoZones(), nodes: spreadNodes4(), existing: zonesSpread(true), want: codes(abxy, skew, skew, skew, skew)},
	})
}

// spreadScoreView is upstream's preScoreState: ignored nodes by name, the
// per-domain counts ({} for a hostname constraint, counted in Score) and
// the weights.
type spreadScoreView struct {
	Constraints []spreadConstraintView
	Ignored     []string
	Counts      []map[string]int64
	Weights     []float64
}

func viewSpreadScorer(s *spreadScorer, nodes []*cache.NodeInfo) *spreadScoreView {
	v := &spreadScoreView{Constraints: viewConstraints(s.constraints), Weights: s.weights}
	for j, ig := range s.ignored {
		if ig {
			v.Ignored = append(v.Ignored, nodes[j].Name())
		}
	}
	for _, m := range s.counts {
		if m == nil {
			m = map[string]int64{}
		}
		v.Counts = append(v.Counts, m)
	}
	return v
}

// weight is upstream's topologyNormalizingWeight.
func weight(size int) float64 { return math.Log(float64(size + 2)) }

func TestPodTopologySpreadPreScoreSkip(t *testing.T) {
	rsKind := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	tests := []struct {
		name     string
		pod      *spreadPodBuilder
		nodes    []*v1.Node
		objs     []runtime.Object
		defaults []v1.TopologySpreadConstraint
	}{
		{name: "the pod doesn't have soft topology spread Constraints",
			pod:   spod("p").ns("default"),
			nodes: []*v1.Node{snode("node-a", v1.LabelHostname+"=node-a"), snode("node-b", v1.LabelHostname+"=node-b")}},
		{name: "default constraints and a replicaset that doesn't match",
			pod:      spod("p").ns("default").Label("foo", "bar").Label("baz", "sup").owner("rs2", rsKind),
			defaults: []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "planet", WhenUnsatisfiable: v1.ScheduleAnyway}},
			nodes:    []*v1.Node{snode("node-a", "planet=mars")},
			objs: []runtime.Object{&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rs1"},
				Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tar", Operator: metav1.LabelSelectorOpExists}}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &podTopologySpread{defaults: tc.defaults, listers: spreadListers(t, tc.objs...)}
			snap := spreadSnapshot(tc.nodes, nil)
			if s, st := pl.PreScore(tc.pod.Info(), snap.List(), snap); s != nil || st != nil {
				t.Errorf("PreScore = %v, %+v, want a skip", s, st)
			}
		})
	}
}

func TestPodTopologySpreadPreScoreState(t *testing.T) {
	soft := v1.ScheduleAnyway
	host := v1.LabelHostname
	rsKind := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	rs1 := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rs1"},
		Spec: appsv1.ReplicaSetSpec{Selector: spreadFoo}}
	// The nodes of the node inclusion cases: node-x has no label foo (or
	// a taint).
	policyNodes := func(taint bool) []*v1.Node {
		x := snode("node-x", "zone=zone2", host+"=node-x")
		if taint {
			x = tainted(x)
		}
		return []*v1.Node{snode("node-a", "zone=zone1", "foo=", host+"=node-a"), snode("node-b", "zone=zone1", "foo=", host+"=node-b"), x}
	}
	zoneBar := sc(1, "zone", "bar")
	zeroZones := []map[string]int64{{"zone1": 0, "zone2": 0}}
	tests := []struct {
		name     string
		pod      *spreadPodBuilder
		nodes    []*v1.Node
		objs     []runtime.Object
		system   bool
		defaults []v1.TopologySpreadConstraint
		want     *spreadScoreView
	}{
		{name: "normal case",
			pod: spod("p").Label("foo", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, host, soft, spreadFoo, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", host+"=node-a"), snode("node-b", "zone=zone1", host+"=node-b"),
				snode("node-x", "zone=zone2", host+"=node-x")},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(1, "zone", "foo"), sc(1, host, "foo")},
				Counts: []map[string]int64{{"zone1": 0, "zone2": 0}, {}}, Weights: []float64{weight(2), weight(3)}}},
		{name: "null selector",
			pod: spod("p").Label("foo", "").spread(1, "zone", soft, nil, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", host+"=node-a"), snode("node-b", "zone=zone1", host+"=node-b"),
				snode("node-x", "zone=zone2", host+"=node-x")},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(1, "zone", "<nothing>")},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "node-x doesn't have label zone",
			pod: spod("p").Label("foo", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, host, soft, spreadBar, nil, nil, nil, nil),
			nodes: []*v1.Node{snode("node-a", "zone=zone1", host+"=node-a"), snode("node-b", "zone=zone1", host+"=node-b"),
				snode("node-x", host+"=node-x")},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(1, "zone", "foo"), sc(1, host, "bar")},
				Ignored: []string{"node-x"}, Counts: []map[string]int64{{"zone1": 0}, {}},
				Weights: []float64{weight(1), weight(2)}}},
		{name: "system default constraints and a replicaset",
			pod:    spod("p").ns("default").Label("foo", "tar").Label("baz", "sup").owner("rs1", rsKind),
			system: true,
			nodes: []*v1.Node{snode("node-a", host+"=node-a", v1.LabelTopologyZone+"=mars"),
				snode("node-b", host+"=node-b", v1.LabelTopologyZone+"=mars"),
				// Nodes with no zone are not excluded: they are a zone of their own.
				snode("node-c", host+"=node-c"), snode("node-d", host+"=node-d")},
			objs: []runtime.Object{rs1},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(3, host, "foo"), sc(5, v1.LabelTopologyZone, "foo")},
				Counts: []map[string]int64{{}, {"mars": 0, "": 0}}, Weights: []float64{weight(4), weight(2)}}},
		{name: "default constraints and a replicaset",
			pod: spod("p").ns("default").Label("foo", "tar").Label("baz", "sup").owner("rs1", rsKind),
			defaults: []v1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: host, WhenUnsatisfiable: soft},
				{MaxSkew: 2, TopologyKey: "rack", WhenUnsatisfiable: v1.DoNotSchedule},
				{MaxSkew: 2, TopologyKey: "planet", WhenUnsatisfiable: soft},
			},
			nodes: []*v1.Node{snode("node-a", "rack=rack1", host+"=node-a", "planet=mars")},
			objs:  []runtime.Object{rs1},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(1, host, "foo"), sc(2, "planet", "foo")},
				Counts: []map[string]int64{{}, {"mars": 0}}, Weights: []float64{weight(1), weight(1)}}},
		{name: "default constraints and a replicaset, but pod has constraints",
			pod: spod("p").ns("default").Label("foo", "bar").Label("baz", "sup").owner("rs1", rsKind).
				spread(1, "zone", v1.DoNotSchedule, spreadBar, nil, nil, nil, nil).
				spread(2, "planet", soft, matchLabels("baz", "sup"), nil, nil, nil, nil),
			defaults: []v1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "galaxy", WhenUnsatisfiable: soft}},
			nodes:    []*v1.Node{snode("node-a", "planet=mars", "galaxy=andromeda")},
			objs:     []runtime.Object{rs1},
			want: &spreadScoreView{Constraints: []spreadConstraintView{sc(2, "planet", "baz=sup")},
				Counts: []map[string]int64{{"mars": 0}}, Weights: []float64{weight(1)}}},
		{name: "NodeAffinityPolicy honored with labelSelectors",
			pod:   spod("p").Label("foo", "").nodeSelector("foo", "").spread(1, "zone", soft, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(false),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "zone", soft, spreadBar, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar.policies("Ignore", "Ignore")},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "NodeAffinityPolicy honored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "zone", soft, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(false),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "zone", soft, spreadBar, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar.policies("Ignore", "Ignore")},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "NodeTaintsPolicy honored",
			pod:   spod("p").Label("foo", "").spread(1, "zone", soft, spreadBar, nil, nil, spreadHonor, nil),
			nodes: policyNodes(true),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar.policies("Honor", "Honor")},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
		{name: "NodeTaintsPolicy ignored",
			pod:   spod("p").Label("foo", "").spread(1, "zone", soft, spreadBar, nil, nil, nil, nil),
			nodes: policyNodes(true),
			want: &spreadScoreView{Constraints: []spreadConstraintView{zoneBar},
				Counts: zeroZones, Weights: []float64{weight(2)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &podTopologySpread{defaults: tc.defaults, listers: spreadListers(t, tc.objs...)}
			if tc.system {
				pl = newPodTopologySpread(spreadListers(t, tc.objs...))
			}
			snap := spreadSnapshot(tc.nodes, nil)
			s, st := pl.PreScore(tc.pod.Info(), snap.List(), snap)
			if st != nil || s == nil {
				t.Fatalf("PreScore = %v, %+v, want a scorer", s, st)
			}
			if diff := cmp.Diff(tc.want, viewSpreadScorer(s.(*spreadScorer), snap.List())); diff != "" {
				t.Errorf("PreScore state (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestPodTopologySpreadScore(t *testing.T) {
	soft := v1.ScheduleAnyway
	host := v1.LabelHostname
	hostNodes := func(names ...string) []*v1.Node {
		var out []*v1.Node
		for _, n := range names {
			out = append(out, snode(n, host+"="+n))
		}
		return out
	}
	zoned := func(name, zone string) *v1.Node { return snode(name, "zone="+zone, host+"="+name) }
	hostFoo := func(maxSkew int32) *spreadPodBuilder {
		return spod("p").Label("foo", "").spread(maxSkew, host, soft, spreadFoo, nil, nil, nil, nil)
	}
	// pods on nodes: the number of pods labelled foo per node name.
	pods := func(counts ...any) []*spreadPodBuilder {
		var out []*spreadPodBuilder
		for i := 0; i < len(counts); i += 2 {
			for range counts[i+1].(int) {
				out = append(out, spodOn(counts[i].(string), "foo"))
			}
		}
		return out
	}
	twoOneZeroThree := func() []*spreadPodBuilder { return pods("node-a", 2, "node-b", 1, "node-d", 3) }
	fourThreeTwoOne := func() []*spreadPodBuilder { return pods("node-a", 4, "node-b", 3, "node-c", 2, "node-d", 1) }
	diffSelectors := func() *spreadPodBuilder {
		return spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
			spread(1, host, soft, spreadBar, nil, nil, nil, nil)
	}
	// The nodes of the node inclusion cases on "node": node-c has no label
	// foo (or a taint).
	policyNodes := func(taint bool) []*v1.Node {
		if taint {
			return []*v1.Node{snode("node-a", "node=node-a"), snode("node-b", "node=node-b"), tainted(snode("node-c", "node=node-c"))}
		}
		return []*v1.Node{snode("node-a", "node=node-a", "foo="), snode("node-b", "node=node-b", "foo="), snode("node-c", "node=node-c")}
	}
	policyPods := func() []*spreadPodBuilder { return pods("node-a", 2, "node-b", 1, "node-c", 1) }
	matchKeyPods := func() []*spreadPodBuilder {
		return []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar"), spodOn("node-c", "foo"), spodOn("node-c", "bar")}
	}
	tests := []struct {
		name     string
		pod      *spreadPodBuilder
		existing []*spreadPodBuilder
		nodes    []*v1.Node // the feasible nodes
		failed   []*v1.Node // nodes + failed: every node
		objs     []runtime.Object
		want     map[string]int64
	}{
		{name: "one constraint on node, no existing pods",
			pod: hostFoo(1), nodes: hostNodes("node-a", "node-b"),
			want: map[string]int64{"node-a": 100, "node-b": 100}},
		{name: "one constraint on node, only one node is candidate",
			pod: hostFoo(1), existing: pods("node-a", 2, "node-b", 1),
			nodes: hostNodes("node-a"), failed: hostNodes("node-b"),
			want: map[string]int64{"node-a": 100}},
		{name: "one constraint on node, all nodes have the same number of matching pods",
			pod: hostFoo(1), existing: pods("node-a", 1, "node-b", 1), nodes: hostNodes("node-a", "node-b"),
			want: map[string]int64{"node-a": 100, "node-b": 100}},
		{name: "one constraint on node, all 4 nodes are candidates",
			pod: hostFoo(1), existing: twoOneZeroThree(), nodes: hostNodes("node-a", "node-b", "node-c", "node-d"),
			want: map[string]int64{"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}},
		{name: "one constraint on node, null selector",
			pod:      spod("p").Label("foo", "").spread(1, host, soft, nil, nil, nil, nil, nil),
			existing: twoOneZeroThree(), nodes: hostNodes("node-a", "node-b", "node-c", "node-d"),
			want: map[string]int64{"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}},
		{name: "one constraint on node, all 4 nodes are candidates, maxSkew=2",
			pod: hostFoo(2), existing: twoOneZeroThree(), nodes: hostNodes("node-a", "node-b", "node-c", "node-d"),
			want: map[string]int64{"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}},
		{name: "one constraint on node, all 4 nodes are candidates, maxSkew=3",
			pod: hostFoo(3), existing: fourThreeTwoOne(), nodes: hostNodes("node-a", "node-b", "node-c", "node-d"),
			want: map[string]int64{"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}},
		{name: "system defaulting, nodes don't have zone, pods match service",
			pod: spod("p").Label("foo", ""), existing: fourThreeTwoOne(),
			nodes: hostNodes("node-a", "node-b", "node-c", "node-d"),
			objs:  []runtime.Object{&v1.Service{Spec: v1.ServiceSpec{Selector: map[string]string{"foo": ""}}}},
			// The same scores as with one spreading constraint.
			want: map[string]int64{"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}},
		{name: "one constraint on node, 3 out of 4 nodes are candidates",
			pod: hostFoo(1), existing: pods("node-a", 4, "node-b", 2, "node-x", 1, "node-y", 3),
			nodes: hostNodes("node-a", "node-b", "node-x"), failed: hostNodes("node-y"),
			want: map[string]int64{"node-a": 33, "node-b": 83, "node-x": 100}},
		{name: "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
			pod: hostFoo(1), existing: pods("node-a", 4, "node-b", 2, "node-x", 1, "node-y", 3),
			nodes:  []*v1.Node{snode("node-a", host+"=node-a"), snode("node-b", "n=node-b"), snode("node-x", host+"=node-x")},
			failed: hostNodes("node-y"),
			want:   map[string]int64{"node-a": 16, "node-b": 0, "node-x": 100}},
		{name: "one constraint on zone, 3 out of 4 nodes are candidates",
			pod:      spod("p").Label("foo", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil),
			existing: pods("node-a", 4, "node-b", 2, "node-x", 1, "node-y", 3),
			nodes:    []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")},
			failed:   []*v1.Node{zoned("node-y", "zone2")},
			want:     map[string]int64{"node-a": 75, "node-b": 75, "node-x": 100}},
		{name: "two Constraints on zone and node, 2 out of 4 nodes are candidates",
			pod: spod("p").Label("foo", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, host, soft, spreadFoo, nil, nil, nil, nil),
			existing: pods("node-a", 2, "node-b", 1, "node-x", 2, "node-y", 4),
			nodes:    []*v1.Node{zoned("node-a", "zone1"), zoned("node-x", "zone2")},
			failed:   []*v1.Node{zoned("node-b", "zone1"), zoned("node-y", "zone2")},
			want:     map[string]int64{"node-a": 100, "node-x": 63}},
		{name: "two Constraints on zone, 2 out of 4 nodes are candidates",
			pod: spod("p").Label("foo", "").Label("bar", "").spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, "zone", soft, spreadBar, nil, nil, nil, nil),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo", "bar"), spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar"),
				spodOn("node-y", "foo"), spodOn("node-y", "foo", "bar"), spodOn("node-y", "foo")},
			nodes:  []*v1.Node{snode("node-a", "zone=zone1"), snode("node-x", "zone=zone2")},
			failed: []*v1.Node{snode("node-b", "zone=zone1"), snode("node-y", "zone=zone2")},
			want:   map[string]int64{"node-a": 85, "node-x": 100}},
		// zone1: node-a P{foo}, node-b P{foo, bar}; zone2: node-x none,
		// node-y P{foo} P{bar}. Zone spreads 2/2/1/1, node 0/1/0/1.
		{name: "two Constraints on zone and node, with different labelSelectors",
			pod: diffSelectors(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar"), spodOn("node-y", "foo"),
				spodOn("node-y", "bar")},
			nodes: []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"), zoned("node-y", "zone2")},
			want:  map[string]int64{"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}},
		{name: "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
			pod:      diffSelectors(),
			existing: []*spreadPodBuilder{spodOn("node-b", "bar"), spodOn("node-x", "foo"), spodOn("node-y", "foo", "bar")},
			nodes:    []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"), zoned("node-y", "zone2")},
			want:     map[string]int64{"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}},
		{name: "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
			pod: diffSelectors(),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar"), spodOn("node-y", "foo"),
				spodOn("node-y", "bar")},
			nodes:  []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")},
			failed: []*v1.Node{zoned("node-y", "zone2")},
			want:   map[string]int64{"node-a": 50, "node-b": 25, "node-x": 100}},
		{name: "existing pods in a different namespace do not count",
			pod: hostFoo(1),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo").ns("ns1"), spodOn("node-a", "foo"), spodOn("node-b", "foo"),
				spodOn("node-b", "foo")},
			nodes: hostNodes("node-a", "node-b"),
			want:  map[string]int64{"node-a": 100, "node-b": 33}},
		{name: "terminating Pods should be excluded",
			pod: hostFoo(1), nodes: hostNodes("node-a", "node-b"),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo").terminating(), spodOn("node-b", "foo")},
			want:     map[string]int64{"node-a": 100, "node-b": 0}},
		// Artificial: the API refuses minDomains with ScheduleAnyway.
		{name: "minDomains has no effect when ScheduleAnyway",
			pod:      spod("p").Label("foo", "").spread(2, "node", soft, spreadFoo, ptrTo[int32](10), nil, nil, nil),
			nodes:    []*v1.Node{snode("node-a", "node=node-a"), snode("node-b", "node=node-b"), snode("node-c", "node=node-c")},
			existing: pods("node-a", 2, "node-b", 2, "node-c", 1),
			want:     map[string]int64{"node-a": 75, "node-b": 75, "node-c": 100}},
		{name: "NodeAffinityPolicy honoed with labelSelectors",
			pod:   spod("p").Label("foo", "").nodeSelector("foo", "").spread(1, "node", soft, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: map[string]int64{"node-a": 0, "node-b": 33, "node-c": 100}},
		{name: "NodeAffinityPolicy ignored with labelSelectors",
			pod: spod("p").Label("foo", "").nodeSelector("foo", "").
				spread(1, "node", soft, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: map[string]int64{"node-a": 66, "node-b": 100, "node-c": 100}},
		{name: "NodeAffinityPolicy honoed with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", soft, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: map[string]int64{"node-a": 0, "node-b": 33, "node-c": 100}},
		{name: "NodeAffinityPolicy ignored with nodeAffinity",
			pod: spod("p").Label("foo", "").Affinity("foo", v1.NodeSelectorOpIn, "").
				spread(1, "node", soft, spreadFoo, nil, spreadIgnore, nil, nil),
			nodes: policyNodes(false), existing: policyPods(),
			want: map[string]int64{"node-a": 66, "node-b": 100, "node-c": 100}},
		{name: "NodeTaintsPolicy honored",
			pod:   spod("p").Label("foo", "").spread(1, "node", soft, spreadFoo, nil, nil, spreadHonor, nil),
			nodes: policyNodes(true), existing: policyPods(),
			want: map[string]int64{"node-a": 0, "node-b": 33, "node-c": 100}},
		{name: "NodeTaintsPolicy ignored",
			pod:   spod("p").Label("foo", "").spread(1, "node", soft, spreadFoo, nil, nil, nil, nil),
			nodes: policyNodes(true), existing: policyPods(),
			want: map[string]int64{"node-a": 66, "node-b": 100, "node-c": 100}},
		{name: "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
			pod: spod("p").Label("foo", "").Label("bar", "").
				spread(1, "zone", soft, &metav1.LabelSelector{}, nil, nil, nil, []string{"foo"}).
				spread(1, host, soft, &metav1.LabelSelector{}, nil, nil, nil, []string{"bar"}),
			existing: matchKeyPods(),
			nodes:    []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-c", "zone2"), zoned("node-d", "zone2")},
			want:     map[string]int64{"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}},
		{name: "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
			pod: spod("p").Label("foo", "").Label("bar", "").Label("baz", "").
				spread(1, "zone", soft, spreadFoo, nil, nil, nil, nil).
				spread(1, host, soft, spreadBar, nil, nil, nil, []string{"baz"}),
			existing: []*spreadPodBuilder{spodOn("node-a", "foo"), spodOn("node-b", "foo", "bar", "baz"), spodOn("node-c", "foo"),
				spodOn("node-c", "bar"), spodOn("node-c", "bar", "baz")},
			nodes: []*v1.Node{zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-c", "zone2"), zoned("node-d", "zone2")},
			want:  map[string]int64{"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := spreadSnapshot(append(append([]*v1.Node{}, tc.nodes...), tc.failed...), tc.existing)
			var feasible []*cache.NodeInfo
			for _, n := range tc.nodes {
				feasible = append(feasible, snap.Get(n.Name))
			}
			s, st := newPodTopologySpread(spreadListers(t, tc.objs...)).PreScore(tc.pod.Info(), feasible, snap)
			if st != nil || s == nil {
				t.Fatalf("PreScore = %v, %+v, want a scorer", s, st)
			}
			scores := make([]int64, len(feasible))
			s.Score(feasible, scores)
			s.(framework.ScoreNormalizer).NormalizeScores(scores)
			got := map[string]int64{}
			for i, ni := range feasible {
				got[ni.Name()] = scores[i]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// spreadProfileCluster is node-a (zone1) holding one pod labelled app=web
// and node-b (zone2) holding none, and node-c without a zone label.
func spreadProfileCluster() (*cache.Snapshot, *spreadPodBuilder) {
	web := spodOn("node-a", "app=web").ns("default")
	nodes := []*v1.Node{snode("node-a", v1.LabelTopologyZone+"=zone1"), snode("node-b", v1.LabelTopologyZone+"=zone2"),
		snode("node-c")}
	for _, n := range nodes {
		n.Status.Allocatable = ft.Res("cpu", "4", "memory", "8Gi", "pods", "32")
	}
	return spreadSnapshot(nodes, []*spreadPodBuilder{web}), web
}

// spreadWebPod is a web replica that must spread over zones with maxSkew 1.
func spreadWebPod() *spreadPodBuilder {
	return spod("web-new").ns("default").Label("app", "web").
		spread(1, v1.LabelTopologyZone, v1.DoNotSchedule, matchLabels("app", "web"), nil, nil, nil, nil)
}

func TestPodTopologySpreadBadSelector(t *testing.T) {
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	snap, _ := spreadProfileCluster()
	pl := newPodTopologySpread(framework.Listers{})
	hard := spod("p").spread(1, "zone", v1.DoNotSchedule, bad, nil, nil, nil, nil)
	if _, _, st := pl.PreFilter(hard.Info(), snap); st == nil || st.Code != framework.Error {
		t.Errorf("PreFilter = %+v, want an Error", st)
	}
	soft := spod("p").spread(1, "zone", v1.ScheduleAnyway, bad, nil, nil, nil, nil)
	if _, st := pl.PreScore(soft.Info(), snap.List(), snap); st == nil || st.Code != framework.Error {
		t.Errorf("PreScore = %+v, want an Error", st)
	}
}

// TestPodTopologySpreadAllocatesNothing: scoring allocates nothing
// (filtering a feasible node, in the profile:
// TestPodTopologySpreadFilterAllocatesNothing).
func TestPodTopologySpreadAllocatesNothing(t *testing.T) {
	nodes, _ := spreadBenchCluster(60)
	snap := cache.NewSnapshot(nodes...)
	soft := spreadBenchPod(v1.ScheduleAnyway)
	s, st := newPodTopologySpread(framework.Listers{}).PreScore(soft.Info(), nodes, snap)
	if st != nil || s == nil {
		t.Fatalf("PreScore = %v, %+v", s, st)
	}
	scores := make([]int64, len(nodes))
	if n := testing.AllocsPerRun(20, func() {
		s.Score(nodes, scores)
		s.(framework.ScoreNormalizer).NormalizeScores(scores)
	}); n != 0 {
		t.Errorf("Score and NormalizeScores allocate %v times, want 0", n)
	}
}

// spreadBenchCluster is n nodes over three zones, each holding two pods of
// the app the spread pod selects (and one more on every third node), and
// the spread pod: zone maxSkew 1 and hostname maxSkew 2, DoNotSchedule.
func spreadBenchCluster(n int) ([]*cache.NodeInfo, *spreadPodBuilder) {
	nodes := make([]*cache.NodeInfo, n)
	for i := range nodes {
		name := fmt.Sprintf("node-%04d", i)
		node := snode(name, v1.LabelHostname+"="+name, v1.LabelTopologyZone+fmt.Sprintf("=zone-%d", i%3))
		node.Status.Allocatable = ft.Res("cpu", "32", "memory", "128Gi", "pods", "110")
		pods := []*cache.PodInfo{spodOn(name, "app=web").ns("default").Info(), spodOn(name, "app=web").ns("default").Info(),
			spodOn(name, "app=db").ns("default").Info()}
		if i%3 == 0 {
			pods = append(pods, spodOn(name, "app=web").ns("default").Info())
		}
		nodes[i] = cache.NewNodeInfo(node, pods...)
	}
	return nodes, spreadBenchPod(v1.DoNotSchedule)
}

func spreadBenchPod(action v1.UnsatisfiableConstraintAction) *spreadPodBuilder {
	return spod("web-new").ns("default").Label("app", "web").
		spread(1, v1.LabelTopologyZone, action, matchLabels("app", "web"), nil, nil, nil, nil).
		spread(2, v1.LabelHostname, action, matchLabels("app", "web"), nil, nil, nil, nil)
}

// The labels of a pod the selector Matches call gets are a labels.Set: a
// map in an interface, which does not allocate.
var _ labels.Labels = labels.Set(nil)

// spreadArgsOf decodes PodTopologySpread's args (YAML or JSON; "" for no
// pluginConfig entry), as Build does.
func spreadArgsOf(t *testing.T, args string) podTopologySpread {
	t.Helper()
	var pc *kschedv1.PluginConfig
	if args != "" {
		pc = &kschedv1.PluginConfig{Name: abi.PluginPodTopologySpread, Args: runtime.RawExtension{Raw: []byte(args)}}
	}
	a, err := Row().Args(pc, field.NewPath("args"))
	if err != nil {
		t.Fatalf("args %q: %v", args, err)
	}
	return a.(podTopologySpread)
}

// TestSpreadArgs checks the defaulting type: System by default (and
// written out), List without constraints has none, List with constraints
// spreads a pod without its own by them.
func TestSpreadArgs(t *testing.T) {
	for _, args := range []string{"", `{"defaultingType": "System"}`} {
		if pl := spreadArgsOf(t, args); !pl.systemDefaulted {
			t.Errorf("args %q: PodTopologySpread not system-defaulted", args)
		}
	}
	if pl := spreadArgsOf(t, `{defaultingType: List}`); pl.systemDefaulted || len(pl.defaults) != 0 {
		t.Errorf("PodTopologySpread List without constraints: %+v, want no defaults", pl)
	}
	pl := spreadArgsOf(t, `{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}`)
	want := []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}}
	if diff := cmp.Diff(want, pl.defaults); diff != "" || pl.systemDefaulted {
		t.Errorf("defaults (-want, +got):\n%s; systemDefaulted %v", diff, pl.systemDefaulted)
	}
}
