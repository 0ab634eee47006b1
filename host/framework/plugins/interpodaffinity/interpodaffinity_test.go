package interpodaffinity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

// Builders for the inter-pod affinity tests, after upstream's
// st.PodWrapper.PodAffinity* helpers.

// ipaPod is a pod in namespace "", as upstream's st.MakePod().
func ipaPod() *ft.PodBuilder { return ft.MakePod().Namespace("") }

// ipaTerm is a term on topologyKey whose label selector ANDs reqs.
func ipaTerm(topologyKey string, reqs ...metav1.LabelSelectorRequirement) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchExpressions: reqs}}
}

// ipaNS sets t's namespaces and namespaceSelector (nil: none).
func ipaNS(t v1.PodAffinityTerm, sel *metav1.LabelSelector, namespaces ...string) v1.PodAffinityTerm {
	t.Namespaces, t.NamespaceSelector = namespaces, sel
	return t
}

func ipaIn(key string, vals ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: vals}
}

func ipaNotIn(key string, vals ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpNotIn, Values: vals}
}

func ipaExists(key string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpExists}
}

func ipaNotExist(key string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpDoesNotExist}
}

func ipaSelector(reqs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: reqs}
}

// ipaNode is a node with labels ("region", "r1", ...), room for 32 pods and
// no other resource.
func ipaNode(name string, kv ...string) *v1.Node {
	pods := ft.Res("pods", "32")
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: v1.NodeStatus{Allocatable: pods, Capacity: pods}}
	for i := 0; i < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// ipaSnapshot places pods on nodes by their spec.nodeName; a pod on a node
// not listed is left out.
func ipaSnapshot(nodes []*v1.Node, pods ...*ft.PodBuilder) *cache.Snapshot {
	on := map[string][]*cache.PodInfo{}
	for _, p := range pods {
		on[p.P.Spec.NodeName] = append(on[p.P.Spec.NodeName], p.Info())
	}
	infos := make([]*cache.NodeInfo, len(nodes))
	for i, n := range nodes {
		infos[i] = cache.NewNodeInfo(n, on[n.Name]...)
	}
	return cache.NewSnapshot(infos...)
}

// ipaNamespaces is a namespace lister holding namespaces ("name", labels).
func ipaNamespaces(nss ...*v1.Namespace) corelisters.NamespaceLister {
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, ns := range nss {
		if err := idx.Add(ns); err != nil {
			panic(err)
		}
	}
	return corelisters.NewNamespaceLister(idx)
}

func ipaNamespace(name string, kv ...string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i < len(kv); i += 2 {
		ns.Labels[kv[i]] = kv[i+1]
	}
	return ns
}

// upstreamNamespaces are upstream's test namespaces (scoring_test.go).
func upstreamNamespaces() corelisters.NamespaceLister {
	return ipaNamespaces(ipaNamespace("subteam1.team1", "team", "team1"), ipaNamespace("subteam2.team1", "team", "team1"),
		ipaNamespace("subteam1.team2", "team", "team2"), ipaNamespace("subteam2.team2", "team", "team2"))
}

// ipaFilterCase is one of upstream's filter cases: pod placed among pods on
// nodes; wantPreFilter nil and wantSkip false means PreFilter returns a
// filter, whose statuses on nodes (in order) are want.
type ipaFilterCase struct {
	name          string
	pod           *ft.PodBuilder
	pods          []*ft.PodBuilder
	nodes         []*v1.Node
	wantSkip      bool
	wantPreFilter *framework.Status
	want          []*framework.Status
}

func runIPAFilterCases(t *testing.T, pl interPodAffinity, cases []ipaFilterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := ipaSnapshot(tc.nodes, tc.pods...)
			f, nodeNames, st := pl.PreFilter(tc.pod.Info(), snap)
			if nodeNames != nil {
				t.Errorf("PreFilter restricted the nodes to %v", nodeNames)
			}
			if diff := cmp.Diff(tc.wantPreFilter, st); diff != "" {
				t.Fatalf("PreFilter status (-want, +got):\n%s", diff)
			}
			if st != nil {
				return
			}
			if (f == nil) != tc.wantSkip {
				t.Fatalf("PreFilter skipped = %v, want %v", f == nil, tc.wantSkip)
			}
			if f == nil {
				return
			}
			for i, n := range tc.nodes {
				if diff := cmp.Diff(tc.want[i], f.Filter(snap.Get(n.Name))); diff != "" {
					t.Errorf("Filter on %s (-want, +got):\n%s", n.Name, diff)
				}
			}
		})
	}
}

// Upstream's TestRequiredAffinitySingleNode (filtering_test.go), one node.
func TestInterPodAffinityRequiredSingleNode(t *testing.T) {
	node1 := []*v1.Node{ipaNode("node1", "region", "r1", "zone", "z11")}
	existing := func() *ft.PodBuilder { return ipaPod().Labels("service", "securityscan").Node("node1") }
	// createPodWithAffinityTerms: the pod's PodAffinity and PodAntiAffinity
	// are set even when their lists are empty.
	withTerms := func(ns string, affinity, anti []v1.PodAffinityTerm) *ft.PodBuilder {
		b := ipaPod().Namespace(ns).Labels("security", "S1")
		return b.PodAffinity(affinity...).PodAntiAffinity(anti...)
	}
	team1 := ipaSelector(ipaIn("team", "team1"))
	invalid := `parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
	one := func(st *framework.Status) []*framework.Status { return []*framework.Status{st} }
	runIPAFilterCases(t, interPodAffinity{namespaces: upstreamNamespaces(), hardPodAffinityWeight: 1}, []ipaFilterCase{
		{name: "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
			pod: ipaPod(), nodes: node1, wantSkip: true},
		{name: "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
			pod:  ipaPod().Labels("security", "S1").PodAffinity(ipaTerm("region", ipaIn("service", "securityscan", "value2"))),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(nil)},
		{name: "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
			pod:  ipaPod().Labels("security", "S1").PodAffinity(ipaTerm("region", ipaNotIn("service", "securityscan3", "value3"))),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(nil)},
		{name: "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
			pod:   withTerms("", []v1.PodAffinityTerm{ipaNS(ipaTerm("", ipaIn("service", "securityscan", "value2")), nil, "DiffNameSpace")}, nil),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("ns").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(statusPodAffinity)},
		{name: "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
			pod:  ipaPod().Labels("service", "securityscan").PodAffinity(ipaTerm("", ipaIn("service", "antivirusscan", "value2"))),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(statusPodAffinity)},
		{name: "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution",
			pod: withTerms("", []v1.PodAffinityTerm{
				ipaTerm("region", ipaExists("service"), ipaNotExist("wrongkey")),
				ipaTerm("region", ipaIn("service", "securityscan"), ipaNotIn("service", "WrongValue")),
			}, nil),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(nil)},
		{name: "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
			pod: withTerms("", []v1.PodAffinityTerm{
				ipaTerm("region", ipaExists("service"), ipaNotExist("wrongkey")),
				ipaTerm("region", ipaIn("service", "securityscan2"), ipaNotIn("service", "WrongValue")),
			}, nil),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(statusPodAffinity)},
		{name: "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
			pod: ipaPod().Labels("security", "S1").PodAffinity(ipaTerm("region", ipaIn("service", "securityscan", "value2"))).
				PodAntiAffinity(ipaTerm("node", ipaIn("service", "antivirusscan", "value2"))),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(nil)},
		{name: "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
			pod: ipaPod().Labels("security", "S1").PodAffinity(ipaTerm("region", ipaIn("service", "securityscan", "value2"))).
				PodAntiAffinity(ipaTerm("node", ipaIn("service", "antivirusscan", "value2"))),
			pods:  []*ft.PodBuilder{existing().PodAntiAffinity(ipaTerm("node", ipaIn("service", "antivirusscan", "value2")))},
			nodes: node1, want: one(nil)},
		{name: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
			pod: ipaPod().Labels("security", "S1").PodAffinity(ipaTerm("region", ipaIn("service", "securityscan", "value2"))).
				PodAntiAffinity(ipaTerm("zone", ipaIn("service", "securityscan", "value2"))),
			pods: []*ft.PodBuilder{existing()}, nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod: ipaPod().Labels("service", "securityscan").PodAffinity(ipaTerm("region", ipaIn("service", "securityscan", "value2"))).
				PodAntiAffinity(ipaTerm("node", ipaIn("service", "antivirusscan", "value2"))),
			pods:  []*ft.PodBuilder{existing().PodAntiAffinity(ipaTerm("zone", ipaIn("service", "securityscan", "value2")))},
			nodes: node1, want: one(statusExistingAntiAffinity)},
		{name: "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
			pod:   ipaPod().Labels("service", "securityscan").PodAffinity(ipaTerm("region", ipaNotIn("service", "securityscan", "value2"))),
			pods:  []*ft.PodBuilder{ipaPod().Labels("service", "securityscan").Node("node2")},
			nodes: node1, want: one(statusPodAffinity)},
		{name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod:   ipaPod().Labels("service", "securityscan"),
			pods:  []*ft.PodBuilder{existing().PodAntiAffinity(ipaTerm("zone", ipaIn("service", "securityscan", "value2")))},
			nodes: node1, want: one(statusExistingAntiAffinity)},
		{name: "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
			pod:   ipaPod().Labels("service", "securityscan"),
			pods:  []*ft.PodBuilder{existing().PodAntiAffinity(ipaTerm("zone", ipaNotIn("service", "securityscan", "value2")))},
			nodes: node1, wantSkip: true},
		{name: "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
			pod: ipaPod().Labels("service", "securityscan").
				PodAntiAffinity(ipaTerm("region", ipaExists("service")), ipaTerm("region", ipaExists("security"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("node1").Labels("security", "S1").PodAntiAffinity(ipaTerm("zone", ipaExists("security")))},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: ipaPod().Labels("service", "securityscan").
				PodAntiAffinity(ipaTerm("zone", ipaExists("service")), ipaTerm("zone", ipaExists("security"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("node1").Labels("security", "S1").PodAntiAffinity(ipaTerm("zone", ipaExists("security")))},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: ipaPod().Labels("security", "S1").PodAntiAffinity(ipaTerm("zone", ipaExists("security"))),
			pods: []*ft.PodBuilder{ipaPod().Node("node1").Labels("service", "securityscan").
				PodAntiAffinity(ipaTerm("zone", ipaExists("service")), ipaTerm("zone", ipaExists("security")))},
			nodes: node1, want: one(statusExistingAntiAffinity)},
		{name: "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: ipaPod().Labels("abc", "", "xyz", "").
				PodAntiAffinity(ipaTerm("zone", ipaExists("abc")), ipaTerm("zone", ipaExists("def"))),
			pods: []*ft.PodBuilder{ipaPod().Node("node1").Labels("def", "", "xyz", "").
				PodAntiAffinity(ipaTerm("zone", ipaExists("abc")), ipaTerm("zone", ipaExists("def")))},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: ipaPod().Labels("def", "", "xyz", "").
				PodAntiAffinity(ipaTerm("zone", ipaExists("abc")), ipaTerm("zone", ipaExists("def"))),
			pods: []*ft.PodBuilder{ipaPod().Node("node1").Labels("abc", "", "xyz", "").
				PodAntiAffinity(ipaTerm("zone", ipaExists("abc")), ipaTerm("zone", ipaExists("def")))},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "PodAffinity fails PreFilter with an invalid affinity label syntax",
			pod: ipaPod().Labels("service", "securityscan").
				PodAffinity(ipaTerm("region", ipaIn("service", "{{.bad-value.}}")), ipaTerm("node", ipaIn("service", "antivirusscan", "value2"))),
			nodes:         node1,
			wantPreFilter: &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginInterPodAffinity, Reasons: []string{invalid}}},
		{name: "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
			pod: ipaPod().Labels("service", "securityscan").
				PodAffinity(ipaTerm("region", ipaIn("service", "foo")), ipaTerm("node", ipaIn("service", "{{.bad-value.}}"))),
			nodes:         node1,
			wantPreFilter: &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginInterPodAffinity, Reasons: []string{invalid}}},
		{name: "affinity with NamespaceSelector",
			pod:   withTerms("", []v1.PodAffinityTerm{ipaNS(ipaTerm("region", ipaIn("service", "securityscan", "value2")), team1)}, nil),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("subteam1.team1").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(nil)},
		{name: "affinity with non-matching NamespaceSelector",
			pod:   withTerms("", []v1.PodAffinityTerm{ipaNS(ipaTerm("region", ipaIn("service", "securityscan", "value2")), team1)}, nil),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("subteam1.team2").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(statusPodAffinity)},
		{name: "anti-affinity with matching NamespaceSelector",
			pod:   withTerms("subteam1.team1", nil, []v1.PodAffinityTerm{ipaNS(ipaTerm("zone", ipaIn("service", "securityscan", "value2")), team1)}),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("subteam2.team1").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "anti-affinity with matching all NamespaceSelector",
			pod: withTerms("subteam1.team1", nil, []v1.PodAffinityTerm{
				ipaNS(ipaTerm("zone", ipaIn("service", "securityscan", "value2")), &metav1.LabelSelector{})}),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("subteam2.team1").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(statusPodAntiAffinity)},
		{name: "anti-affinity with non-matching NamespaceSelector",
			pod:   withTerms("subteam1.team1", nil, []v1.PodAffinityTerm{ipaNS(ipaTerm("zone", ipaIn("service", "securityscan", "value2")), team1)}),
			pods:  []*ft.PodBuilder{ipaPod().Namespace("subteam1.team2").Labels("service", "securityscan").Node("node1")},
			nodes: node1, want: one(nil)},
	})
}

// Upstream's TestRequiredAffinityMultipleNodes (filtering_test.go), with
// the InterPodAffinityHostnameFastPath gate off, its v1.37 default (the
// results are the same with it on).
func TestInterPodAffinityRequiredMultipleNodes(t *testing.T) {
	china := func(n string) *v1.Node { return ipaNode(n, "region", "China") }
	chinaAz1 := func(n string) *v1.Node { return ipaNode(n, "region", "China", "az", "az1") }
	india := func(n string) *v1.Node { return ipaNode(n, "region", "India") }
	rz := func(n, region, zone string) *v1.Node {
		return ipaNode(n, "region", region, "zone", zone, "hostname", n)
	}
	host := func(n string) *v1.Node { return ipaNode(n, v1.LabelHostname, n) }
	aff, anti, existing := statusPodAffinity, statusPodAntiAffinity, statusExistingAntiAffinity
	runIPAFilterCases(t, interPodAffinity{namespaces: ipaNamespaces(ipaNamespace("NS1")), hardPodAffinityWeight: 1}, []ipaFilterCase{
		{name: "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
			pod:   ipaPod().PodAffinity(ipaTerm("region", ipaIn("foo", "bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("node1").Labels("foo", "bar")},
			nodes: []*v1.Node{china("node1"), chinaAz1("node2"), india("node3")},
			want:  []*framework.Status{nil, nil, aff}},
		{name: "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection " +
			"should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
			pod: ipaPod().Labels("foo", "bar", "service", "securityscan").
				PodAffinity(ipaTerm("zone", ipaIn("foo", "bar")), ipaTerm("zone", ipaIn("service", "securityscan"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "bar")},
			nodes: []*v1.Node{ipaNode("nodeA", "zone", "az1", "hostname", "h1"), ipaNode("nodeB", "zone", "az2", "hostname", "h2")},
			want:  []*framework.Status{nil, nil}},
		{name: "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
			pod: ipaPod().Labels("foo", "bar", "service", "securityscan").
				PodAffinity(ipaTerm("zone", ipaIn("foo", "bar")), ipaTerm("zone", ipaIn("service", "securityscan"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "bar")},
			nodes: []*v1.Node{ipaNode("nodeA", "zoneLabel", "az1", "hostname", "h1"), ipaNode("nodeB", "zoneLabel", "az2", "hostname", "h2")},
			want:  []*framework.Status{aff, aff}},
		{name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("region", ipaIn("foo", "abc"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "abc")},
			nodes: []*v1.Node{ipaNode("nodeA", "region", "r1", "hostname", "nodeA"), ipaNode("nodeB", "region", "r1", "hostname", "nodeB")},
			want:  []*framework.Status{anti, anti}},
		{name: "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("region", ipaIn("foo", "abc")), ipaTerm("zone", ipaIn("service", "securityscan"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "abc", "service", "securityscan")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{anti, anti}},
		{name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("region", ipaIn("foo", "abc"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "abc")},
			nodes: []*v1.Node{china("nodeA"), chinaAz1("nodeB"), india("nodeC")},
			want:  []*framework.Status{anti, anti, nil}},
		{name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
			pod: ipaPod().Namespace("NS1").Labels("foo", "123").PodAntiAffinity(ipaTerm("region", ipaIn("foo", "bar"))),
			pods: []*ft.PodBuilder{
				ipaPod().Node("nodeA").Namespace("NS1").Labels("foo", "bar"),
				ipaPod().Node("nodeC").Namespace("NS2").PodAntiAffinity(ipaTerm("region", ipaIn("foo", "123"))),
			},
			nodes: []*v1.Node{china("nodeA"), chinaAz1("nodeB"), india("nodeC")},
			want:  []*framework.Status{anti, anti, nil}},
		{name: "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
			pod:      ipaPod().Labels("foo", ""),
			pods:     []*ft.PodBuilder{ipaPod().Node("nodeA").PodAntiAffinity(ipaTerm("invalid-node-label", ipaExists("foo")))},
			nodes:    []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")},
			wantSkip: true},
		{name: "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
			pod:   ipaPod().Node("nodeA").PodAntiAffinity(ipaTerm("invalid-node-label", ipaExists("foo"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")},
			want:  []*framework.Status{nil, nil}},
		{name: "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
			pod: ipaPod().Labels("foo", "", "bar", ""),
			pods: []*ft.PodBuilder{
				ipaPod().Node("nodeA").PodAntiAffinity(ipaTerm("zone", ipaExists("foo"))),
				ipaPod().Node("nodeA").PodAntiAffinity(ipaTerm("region", ipaExists("bar"))),
			},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{existing, existing}},
		{name: "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("zone", ipaExists("foo")), ipaTerm("region", ipaExists("bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", ""), ipaPod().Node("nodeB").Labels("bar", "")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{anti, anti}},
		{name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod: ipaPod().Labels("foo", "", "bar", ""),
			pods: []*ft.PodBuilder{ipaPod().Node("nodeA").
				PodAntiAffinity(ipaTerm("invalid-node-label", ipaExists("foo")), ipaTerm("zone", ipaExists("bar")))},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{existing, nil}},
		{name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("invalid-node-label", ipaExists("foo")), ipaTerm("zone", ipaExists("bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "", "bar", "")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{anti, nil}},
		{name: "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod: ipaPod().Labels("foo", "", "bar", ""),
			pods: []*ft.PodBuilder{ipaPod().Node("nodeA").
				PodAntiAffinity(ipaTerm("region", ipaExists("foo")), ipaTerm("zone", ipaExists("bar")))},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{existing, existing}},
		{name: "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod:   ipaPod().PodAntiAffinity(ipaTerm("region", ipaExists("foo")), ipaTerm("zone", ipaExists("bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", "", "bar", "")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{anti, anti}},
		{name: "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
			pod: ipaPod().Labels("foo", "", "bar", ""),
			pods: []*ft.PodBuilder{
				ipaPod().Node("nodeA").PodAntiAffinity(ipaTerm("zone", ipaExists("foo")), ipaTerm("zone", ipaExists("labelA"))),
				ipaPod().Node("nodeB").PodAntiAffinity(ipaTerm("zone", ipaExists("bar")), ipaTerm("zone", ipaExists("labelB"))),
			},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2"), rz("nodeC", "r1", "z3")},
			want:  []*framework.Status{existing, existing, nil}},
		{name: "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
			pod:   ipaPod().PodAffinity(ipaTerm("region", ipaExists("foo")), ipaTerm("zone", ipaExists("bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Labels("foo", "", "bar", "").Node("nodeA")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z1")},
			want:  []*framework.Status{nil, nil}},
		{name: "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
			pod:   ipaPod().PodAffinity(ipaTerm("region", ipaExists("foo")), ipaTerm("zone", ipaExists("bar"))),
			pods:  []*ft.PodBuilder{ipaPod().Node("nodeA").Labels("foo", ""), ipaPod().Node("nodeB").Labels("bar", "")},
			nodes: []*v1.Node{rz("nodeA", "r1", "z1"), rz("nodeB", "r1", "z2")},
			want:  []*framework.Status{aff, aff}},
		{name: "Test incoming pod's host-scoped affinity (fast path)",
			pod:   ipaPod().PodAffinity(ipaTerm(v1.LabelHostname, ipaExists("foo"))),
			pods:  []*ft.PodBuilder{ipaPod().Labels("foo", "").Node("nodeA")},
			nodes: []*v1.Node{host("nodeA"), host("nodeB")},
			want:  []*framework.Status{nil, aff}},
		{name: "Test incoming pod's host-scoped anti-affinity (fast path)",
			pod:   ipaPod().PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaExists("foo"))),
			pods:  []*ft.PodBuilder{ipaPod().Labels("foo", "").Node("nodeA")},
			nodes: []*v1.Node{host("nodeA"), host("nodeB")},
			want:  []*framework.Status{anti, nil}},
	})
}

// counts are a filter's three count maps, empty ones for a skipped pod.
type ipaCounts struct{ Affinity, Anti, ExistingAnti topologyCounts }

func countsOf(f framework.PodFilter) ipaCounts {
	if f == nil {
		return ipaCounts{topologyCounts{}, topologyCounts{}, topologyCounts{}}
	}
	pf := f.(*podAffinityFilter)
	return ipaCounts{pf.affinity.flatten(), pf.anti.flatten(), pf.existingAnti.flatten()}
}

// flatten is c as one map, the layers and the delta summed, zeros left
// out; it also checks c.sum.
func (c *domainCounts) flatten() topologyCounts {
	m := topologyCounts{}
	add := func(key, v string, n int64) {
		tp := topologyPair{key, v}
		if m[tp] += n; m[tp] == 0 {
			delete(m, tp)
		}
	}
	for _, l := range c.pods {
		for v, d := range l.pc.Domains() {
			add(l.key, v, int64(d.Pods))
		}
	}
	for _, l := range c.terms {
		for v, n := range l.domains {
			add(l.key, v, int64(n))
		}
	}
	for tp, n := range c.delta {
		add(tp.key, tp.value, n)
	}
	var sum int64
	for _, n := range m {
		sum += n
	}
	if sum != c.sum {
		panic(fmt.Sprintf("domainCounts.sum %d, its domains sum to %d", c.sum, sum))
	}
	return m
}

var ipaCmp = cmp.AllowUnexported(topologyPair{})

// Upstream's TestPreFilterStateAddRemovePod: AddPod on the state of the
// pods without addedPod gives the state of all the pods, RemovePod takes
// it back, and RemovePod on the state of all the pods gives the state
// without addedPod.
func TestInterPodAffinityAddRemovePod(t *testing.T) {
	nodes := func() []*v1.Node {
		return []*v1.Node{ipaNode("nodeA", "region", "r1", "zone", "z11"), ipaNode("nodeB", "region", "r1", "zone", "z12"),
			ipaNode("nodeC", "region", "r2", "zone", "z21")}
	}
	fooBar := []v1.PodAffinityTerm{ipaTerm("region", ipaIn("foo", "bar"))}
	complexTerms := []v1.PodAffinityTerm{ipaTerm("region", ipaIn("foo", "bar", "buzz")), ipaTerm("zone", ipaNotIn("service", "bar", "security", "test"))}
	tests := []struct {
		name     string
		pending  *ft.PodBuilder
		existing []*ft.PodBuilder
		added    *ft.PodBuilder
		nodes    []*v1.Node
		// wantAnti and wantAffinity are the counts of the pending pod's
		// terms once added is added.
		wantAnti, wantAffinity topologyCounts
	}{
		{name: "anti-affinity terms are updated correctly after adding and removing a pod",
			pending: ipaPod().Labels("foo", "bar").PodAntiAffinity(fooBar...),
			existing: []*ft.PodBuilder{ipaPod().Labels("foo", "bar").Node("nodeA"),
				ipaPod().Node("nodeC").PodAntiAffinity(fooBar...)},
			added:        ipaPod().Labels("foo", "bar").Node("nodeB").PodAntiAffinity(fooBar...),
			nodes:        nodes(),
			wantAnti:     topologyCounts{{"region", "r1"}: 2},
			wantAffinity: topologyCounts{}},
		{name: "anti-affinity terms are updated correctly after adding and removing a pod (two terms)",
			pending: ipaPod().Labels("foo", "bar").PodAntiAffinity(complexTerms...),
			existing: []*ft.PodBuilder{ipaPod().Labels("foo", "bar").Node("nodeA"),
				ipaPod().Node("nodeC").PodAntiAffinity(fooBar...)},
			added:        ipaPod().Labels("foo", "bar").Node("nodeA").PodAntiAffinity(complexTerms...),
			nodes:        nodes(),
			wantAnti:     topologyCounts{{"region", "r1"}: 2, {"zone", "z11"}: 2, {"zone", "z21"}: 1},
			wantAffinity: topologyCounts{}},
		{name: "matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
			pending: ipaPod().Labels("foo", "bar").PodAffinity(complexTerms...),
			existing: []*ft.PodBuilder{ipaPod().Labels("foo", "bar").Node("nodeA"),
				ipaPod().Node("nodeC").PodAntiAffinity(fooBar...).PodAffinity(complexTerms...)},
			added:        ipaPod().Labels("foo", "bar").Node("nodeA").PodAntiAffinity(complexTerms...),
			nodes:        nodes(),
			wantAnti:     topologyCounts{},
			wantAffinity: topologyCounts{{"region", "r1"}: 2, {"zone", "z11"}: 2}},
		{name: "anti-affinity terms with both hostname and non-hostname are updated correctly after adding and removing a pod",
			pending:  ipaPod().Labels("foo", "bar").PodAntiAffinity(fooBar...),
			existing: []*ft.PodBuilder{ipaPod().Labels("foo", "bar").Node("nodeA")},
			added: ipaPod().Labels("foo", "bar").Node("nodeA").
				PodAntiAffinity(ipaTerm("region", ipaIn("foo", "bar")), ipaTerm(v1.LabelHostname, ipaIn("foo", "bar"))),
			nodes: []*v1.Node{ipaNode("nodeA", "region", "r1", "zone", "z11", v1.LabelHostname, "nodeA"),
				ipaNode("nodeB", "region", "r1", "zone", "z12", v1.LabelHostname, "nodeB")},
			wantAnti:     topologyCounts{{"region", "r1"}: 2},
			wantAffinity: topologyCounts{}},
	}
	pl := interPodAffinity{hardPodAffinityWeight: 1}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pending, added := tc.pending.Info(), tc.added.Info()
			prefilter := func(snap *cache.Snapshot) *podAffinityFilter {
				f, _, st := pl.PreFilter(pending, snap)
				if st != nil || f == nil {
					t.Fatalf("PreFilter = %v, %v: want a filter", f, st)
				}
				return f.(*podAffinityFilter)
			}
			all := prefilter(ipaSnapshot(tc.nodes, append(tc.existing, tc.added)...))
			snap := ipaSnapshot(tc.nodes, tc.existing...)
			before := prefilter(snap)
			f := before.Clone().(*podAffinityFilter)
			ni := snap.Get(tc.added.P.Spec.NodeName)
			f.AddPod(added, ni)
			if diff := cmp.Diff(ipaCounts{tc.wantAffinity, tc.wantAnti, countsOf(all).ExistingAnti}, countsOf(f), ipaCmp); diff != "" {
				t.Errorf("after AddPod (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(countsOf(all), countsOf(f), ipaCmp); diff != "" {
				t.Errorf("after AddPod, against PreFilter with the pod (-want, +got):\n%s", diff)
			}
			f.RemovePod(added, ni)
			if diff := cmp.Diff(countsOf(before), countsOf(f), ipaCmp); diff != "" {
				t.Errorf("after AddPod and RemovePod (-want, +got):\n%s", diff)
			}
			all.RemovePod(added, ni)
			if diff := cmp.Diff(countsOf(before), countsOf(all), ipaCmp); diff != "" {
				t.Errorf("RemovePod on the state with the pod (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestInterPodAffinityDetach: the counts read the snapshot in place, so a
// state used after the snapshot changed fails closed; a detached one keeps
// the counts PreFilter saw and follows only AddPod and RemovePod.
func TestInterPodAffinityDetach(t *testing.T) {
	nodes := []*v1.Node{ipaNode("nodeA", v1.LabelHostname, "nodeA"), ipaNode("nodeB", v1.LabelHostname, "nodeB")}
	fooBar := ipaTerm(v1.LabelHostname, ipaIn("foo", "bar"))
	pending := ipaPod().PodAntiAffinity(fooBar).Info()
	existing := []*ft.PodBuilder{ipaPod().Labels("foo", "bar").Node("nodeA"),
		ipaPod().Node("nodeB").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaExists("never")))}
	onB := ipaPod().Labels("foo", "bar").Node("nodeB").Info()
	pl := interPodAffinity{}
	prefilter := func(snap *cache.Snapshot) *podAffinityFilter {
		f, _, st := pl.PreFilter(pending, snap)
		if st != nil || f == nil {
			t.Fatalf("PreFilter = %v, %v: want a filter", f, st)
		}
		return f.(*podAffinityFilter)
	}
	codes := func(f *podAffinityFilter, snap *cache.Snapshot) []string {
		var out []string
		for _, ni := range snap.List() {
			code := framework.Success
			if st := f.Filter(ni); st != nil {
				code = st.Code
			}
			out = append(out, ni.Node().Name+":"+code.String())
		}
		return out
	}

	snap := ipaSnapshot(nodes, existing...)
	live := prefilter(snap)
	if len(live.anti.pods) == 0 {
		t.Fatal("PreFilter copied the snapshot's counts; the test wants them read in place")
	}
	want := []string{"nodeA:Unschedulable", "nodeB:Success"}
	if diff := cmp.Diff(want, codes(live, snap)); diff != "" {
		t.Fatalf("before any change (-want, +got):\n%s", diff)
	}
	if err := snap.Assume(onB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nodeA:Error", "nodeB:Error"}, codes(live, snap)); diff != "" {
		t.Errorf("after the snapshot changed under the state (-want, +got):\n%s", diff)
	}

	snap = ipaSnapshot(nodes, existing...)
	f := prefilter(snap)
	before := countsOf(f)
	f.Detach()
	if diff := cmp.Diff(before, countsOf(f), ipaCmp); diff != "" {
		t.Errorf("Detach changed the counts (-before, +after):\n%s", diff)
	}
	if len(f.anti.pods)+len(f.existingAnti.terms) != 0 || f.snap != nil {
		t.Errorf("a detached state still reads the snapshot: %+v", f)
	}
	if err := snap.Assume(onB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, codes(f, snap)); diff != "" {
		t.Errorf("detached, after the snapshot changed (-want, +got):\n%s", diff)
	}
	f.AddPod(onB, snap.Get("nodeB"))
	if diff := cmp.Diff([]string{"nodeA:Unschedulable", "nodeB:Unschedulable"}, codes(f, snap)); diff != "" {
		t.Errorf("detached, after AddPod (-want, +got):\n%s", diff)
	}
}

// Upstream's TestPreFilterStateClone: a clone's counts are equal and
// independent.
func TestInterPodAffinityClone(t *testing.T) {
	src := &podAffinityFilter{
		existingAnti: domainCounts{terms: []termLayer{{"name", map[string]int{"node1": 1, "node2": 1}}}, sum: 2},
		affinity:     domainCounts{delta: topologyCounts{{"name", "nodeA"}: 1, {"name", "nodeC"}: 2}, sum: 3},
		anti:         domainCounts{terms: []termLayer{{"name", map[string]int{"nodeN": 3, "nodeM": 1}}}, sum: 4},
	}
	c := src.Clone().(*podAffinityFilter)
	if diff := cmp.Diff(countsOf(src), countsOf(c), ipaCmp); diff != "" {
		t.Fatalf("clone (-want, +got):\n%s", diff)
	}
	node := func(name string) *v1.Node { return ipaNode(name, "name", name) }
	c.affinity.add(node("nodeA"), "name", 1)
	c.anti.add(node("nodeX"), "name", 1)
	c.existingAnti.add(node("node1"), "name", -1)
	want := ipaCounts{
		Affinity:     topologyCounts{{"name", "nodeA"}: 1, {"name", "nodeC"}: 2},
		Anti:         topologyCounts{{"name", "nodeN"}: 3, {"name", "nodeM"}: 1},
		ExistingAnti: topologyCounts{{"name", "node1"}: 1, {"name", "node2"}: 1},
	}
	if diff := cmp.Diff(want, countsOf(src), ipaCmp); diff != "" {
		t.Errorf("changing the clone changed the source (-want, +got):\n%s", diff)
	}
	want.Affinity[topologyPair{"name", "nodeA"}] = 2
	want.Anti[topologyPair{"name", "nodeX"}] = 1
	delete(want.ExistingAnti, topologyPair{"name", "node1"})
	if diff := cmp.Diff(want, countsOf(c), ipaCmp); diff != "" {
		t.Errorf("the clone after its changes (-want, +got):\n%s", diff)
	}
}

// Upstream's TestGetTPMapMatchingIncomingAffinityAntiAffinity: the counts
// of the incoming pod's terms.
func TestInterPodAffinityIncomingCounts(t *testing.T) {
	normal := func(labels ...string) *ft.PodBuilder {
		b := ipaPod().Node("nodeA")
		for _, l := range labels {
			b.Labels(l, "")
		}
		return b
	}
	nodes := []*v1.Node{ipaNode("nodeA", v1.LabelHostname, "nodeA")}
	term := func(key string) v1.PodAffinityTerm { return ipaTerm(v1.LabelHostname, ipaExists(key)) }
	onA := func(n int64) topologyCounts { return topologyCounts{{v1.LabelHostname, "nodeA"}: n} }
	tests := []struct {
		name                   string
		existing               []*ft.PodBuilder
		pod                    *ft.PodBuilder
		wantAffinity, wantAnti topologyCounts
	}{
		{name: "nil test", pod: ipaPod(), wantAffinity: topologyCounts{}, wantAnti: topologyCounts{}},
		{name: "incoming pod without affinity/anti-affinity causes a no-op", existing: []*ft.PodBuilder{normal("aaa")},
			pod: ipaPod(), wantAffinity: topologyCounts{}, wantAnti: topologyCounts{}},
		{name: "no pod has label that violates incoming pod's affinity and anti-affinity", existing: []*ft.PodBuilder{normal("bbb")},
			pod:          ipaPod().PodAffinity(term("aaa")).PodAntiAffinity(term("aaa")),
			wantAffinity: topologyCounts{}, wantAnti: topologyCounts{}},
		{name: "existing pod matches incoming pod's affinity and anti-affinity - single term case", existing: []*ft.PodBuilder{normal("aaa")},
			pod:          ipaPod().PodAffinity(term("aaa")).PodAntiAffinity(term("aaa")),
			wantAffinity: onA(1), wantAnti: onA(1)},
		{name: "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case", existing: []*ft.PodBuilder{normal("aaa", "bbb")},
			pod:          ipaPod().PodAffinity(term("aaa"), term("bbb")).PodAntiAffinity(term("aaa")),
			wantAffinity: onA(2), wantAnti: onA(1)},
		{name: "existing pod not match incoming pod's affinity but matches anti-affinity", existing: []*ft.PodBuilder{normal("aaa")},
			pod:          ipaPod().PodAffinity(term("aaa"), term("bbb")).PodAntiAffinity(term("aaa"), term("bbb")),
			wantAffinity: topologyCounts{}, wantAnti: onA(1)},
		{name: "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1", existing: []*ft.PodBuilder{normal("aaa", "bbb")},
			pod:          ipaPod().PodAffinity(term("aaa"), term("ccc")).PodAntiAffinity(term("aaa"), term("ccc")),
			wantAffinity: topologyCounts{}, wantAnti: onA(1)},
		{name: "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2", existing: []*ft.PodBuilder{normal("bbb")},
			pod:          ipaPod().PodAffinity(term("aaa"), term("bbb")).PodAntiAffinity(term("aaa"), term("bbb")),
			wantAffinity: topologyCounts{}, wantAnti: onA(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _, st := interPodAffinity{hardPodAffinityWeight: 1}.PreFilter(tc.pod.Info(), ipaSnapshot(nodes, tc.existing...))
			if st != nil {
				t.Fatal(st)
			}
			got := countsOf(f)
			if diff := cmp.Diff(tc.wantAffinity, got.Affinity, ipaCmp); diff != "" {
				t.Errorf("affinity counts (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnti, got.Anti, ipaCmp); diff != "" {
				t.Errorf("anti-affinity counts (-want, +got):\n%s", diff)
			}
		})
	}
}

// Upstream's TestRemovePodHostScopedAffinityCount: once the only pod that
// satisfies the pod's affinity is removed (a preemption victim), the pod is
// the first of its group again and fits anywhere.
func TestInterPodAffinityRemoveLastMatchingPod(t *testing.T) {
	pending := ipaPod().Labels("foo", "bar").PodAffinity(ipaTerm(v1.LabelHostname, ipaIn("foo", "bar"))).Info()
	matching := ipaPod().Labels("foo", "bar").Node("nodeA")
	snap := ipaSnapshot([]*v1.Node{ipaNode("nodeA", v1.LabelHostname, "nodeA"), ipaNode("nodeB", v1.LabelHostname, "nodeB")}, matching)
	f, _, st := interPodAffinity{hardPodAffinityWeight: 1}.PreFilter(pending, snap)
	if st != nil || f == nil {
		t.Fatalf("PreFilter = %v, %v", f, st)
	}
	a, b := snap.Get("nodeA"), snap.Get("nodeB")
	if st := f.Filter(a); st != nil {
		t.Errorf("nodeA with the matching pod: %v, want it feasible", st)
	}
	if diff := cmp.Diff(statusPodAffinity, f.Filter(b)); diff != "" {
		t.Errorf("nodeB without it (-want, +got):\n%s", diff)
	}
	c := f.(framework.PodUpdater).Clone().(framework.PodUpdater)
	c.RemovePod(a.Pods()[0], a)
	for _, ni := range []*cache.NodeInfo{a, b} {
		if st := c.Filter(ni); st != nil {
			t.Errorf("%s once the matching pod is removed: %v, want it feasible (self-affinity)", ni.Name(), st)
		}
	}
	if f.Filter(b) == nil {
		t.Error("RemovePod on the clone changed the original filter")
	}
}

// Upstream's TestMultipleAffinityTermsRequireSingleMatchingPod: one pod
// must match every affinity term; pods matching one term each do not
// count, and do not stop the pod from being the first of its group.
func TestInterPodAffinityTermsMatchOnePod(t *testing.T) {
	terms := []v1.PodAffinityTerm{ipaTerm(v1.LabelHostname, ipaIn("foo", "bar")), ipaTerm(v1.LabelHostname, ipaIn("baz", "qux"))}
	podA := ipaPod().Namespace("default").Labels("foo", "bar").Node("node-1")
	podB := ipaPod().Namespace("default").Labels("baz", "qux").Node("node-1")
	podC := ipaPod().Namespace("default").Labels("foo", "bar", "baz", "qux").Node("node-3")
	nodes := []*v1.Node{ipaNode("node-1", v1.LabelHostname, "node-1"), ipaNode("node-2", v1.LabelHostname, "node-2"),
		ipaNode("node-3", v1.LabelHostname, "node-3")}
	pl := interPodAffinity{namespaces: ipaNamespaces(ipaNamespace("default")), hardPodAffinityWeight: 1}

	snap := ipaSnapshot(nodes, podA, podB, podC)
	f, _, st := pl.PreFilter(ipaPod().Namespace("default").PodAffinity(terms...).Info(), snap)
	if st != nil || f == nil {
		t.Fatalf("PreFilter = %v, %v", f, st)
	}
	for node, want := range map[string]*framework.Status{"node-1": statusPodAffinity, "node-2": statusPodAffinity, "node-3": nil} {
		if diff := cmp.Diff(want, f.Filter(snap.Get(node))); diff != "" {
			t.Errorf("%s (-want, +got):\n%s", node, diff)
		}
	}

	self := ipaPod().Namespace("default").Labels("foo", "bar", "baz", "qux").PodAffinity(terms...)
	snap = ipaSnapshot(nodes, podA, podB)
	f, _, st = pl.PreFilter(self.Info(), snap)
	if st != nil || f == nil {
		t.Fatalf("PreFilter (self-affinity) = %v, %v", f, st)
	}
	if st := f.Filter(snap.Get("node-1")); st != nil {
		t.Errorf("node-1 for a pod matching its own terms, none matching elsewhere: %v, want feasible", st)
	}
}

// Upstream's TestFastTrackInterPodAffinity: zone and hostname
// anti-affinity, and a namespaceSelector that leaves out a labelled
// namespace.
func TestInterPodAffinityZoneHostAndNamespaceSelector(t *testing.T) {
	const zone = v1.LabelTopologyZone
	byZone := ipaPod().Namespace("default").Labels("app", "foo").PodAntiAffinity(ipaTerm(zone, ipaIn("app", "foo")))
	byHost := ipaPod().Namespace("default").Labels("app", "bar").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "bar")))
	byNS := ipaPod().Namespace("other").Labels("app", "baz").
		PodAntiAffinity(ipaNS(ipaTerm(zone, ipaIn("app", "blocked")), ipaSelector(ipaNotExist("team"))))
	nodes := []*v1.Node{ipaNode("node-1", v1.LabelHostname, "node-1", zone, "zone-a"), ipaNode("node-2", v1.LabelHostname, "node-2", zone, "zone-b")}
	snap := ipaSnapshot(nodes,
		ipaPod().Namespace("default").Labels("app", "foo").Node("node-1"),
		ipaPod().Namespace("blue-ns").Labels("app", "blocked", "team", "blue").Node("node-1"),
		ipaPod().Namespace("default").Labels("app", "bar").Node("node-2"))
	pl := interPodAffinity{namespaces: ipaNamespaces(ipaNamespace("default"), ipaNamespace("other"), ipaNamespace("blue-ns", "team", "blue")), hardPodAffinityWeight: 1}
	for _, tc := range []struct {
		name string
		pod  *ft.PodBuilder
		want map[string]*framework.Status
	}{
		{"zone anti-affinity", byZone, map[string]*framework.Status{"node-1": statusPodAntiAffinity, "node-2": nil}},
		{"hostname anti-affinity", byHost, map[string]*framework.Status{"node-1": nil, "node-2": statusPodAntiAffinity}},
		{"namespaceSelector leaves out blue-ns", byNS, map[string]*framework.Status{"node-1": nil}},
	} {
		f, _, st := pl.PreFilter(tc.pod.Info(), snap)
		if st != nil || f == nil {
			t.Fatalf("%s: PreFilter = %v, %v", tc.name, f, st)
		}
		for node, want := range tc.want {
			if diff := cmp.Diff(want, f.Filter(snap.Get(node))); diff != "" {
				t.Errorf("%s on %s (-want, +got):\n%s", tc.name, node, diff)
			}
		}
	}
}

// ipaScoreCase is one of upstream's score cases: the normalised scores of
// nodes (in order), or wantSkip (PreScore returns no scorer), or an Error
// containing wantErr.
type ipaScoreCase struct {
	name     string
	pod      *ft.PodBuilder
	pods     []*ft.PodBuilder
	nodes    []*v1.Node
	want     []int64
	wantSkip bool
	wantErr  string
}

func runIPAScoreCases(t *testing.T, pl interPodAffinity, cases []ipaScoreCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := ipaSnapshot(tc.nodes, tc.pods...)
			nodes := make([]*cache.NodeInfo, len(tc.nodes))
			for i, n := range tc.nodes {
				nodes[i] = snap.Get(n.Name)
			}
			sc, st := pl.PreScore(tc.pod.Info(), nodes, snap)
			if tc.wantErr != "" {
				if st == nil || st.Code != framework.Error || !strings.Contains(st.Message(), tc.wantErr) {
					t.Fatalf("PreScore = %+v, want an Error containing %q", st, tc.wantErr)
				}
				return
			}
			if st != nil {
				t.Fatalf("PreScore: %+v", st)
			}
			if (sc == nil) != tc.wantSkip {
				t.Fatalf("PreScore skipped = %v, want %v", sc == nil, tc.wantSkip)
			}
			if sc == nil {
				return
			}
			got := make([]int64, len(nodes))
			sc.Score(nodes, got)
			sc.(framework.ScoreNormalizer).NormalizeScores(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// Upstream's TestPreferredAffinity (scoring_test.go), less "Ignore
// preferred terms of existing pods" (IgnorePreferredTermsOfExistingPods is
// upstream's default, false, here).
func TestInterPodAffinityScore(t *testing.T) {
	china, india := []string{"region", "China"}, []string{"region", "India"}
	az1, az2 := []string{"az", "az1"}, []string{"az", "az2"}
	chinaAz1 := []string{"region", "China", "az", "az1"}
	node := func(name string, kv []string) *v1.Node { return ipaNode(name, kv...) }
	s1 := func() *ft.PodBuilder { return ipaPod().Labels("security", "S1") }
	s2 := func() *ft.PodBuilder { return ipaPod().Labels("security", "S2") }
	weighted := func(w int32, t v1.PodAffinityTerm) []v1.WeightedPodAffinityTerm {
		return []v1.WeightedPodAffinityTerm{{Weight: w, PodAffinityTerm: t}}
	}
	preferAff := func(w []v1.WeightedPodAffinityTerm) *v1.Affinity {
		return &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: w}}
	}
	preferAnti := func(w []v1.WeightedPodAffinityTerm) *v1.Affinity {
		return &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: w}}
	}
	stayWithS1InRegion := preferAff(weighted(5, ipaTerm("region", ipaIn("security", "S1"))))
	stayWithS2InRegion := preferAff(weighted(6, ipaTerm("region", ipaIn("security", "S2"))))
	affinity3 := preferAff([]v1.WeightedPodAffinityTerm{
		{Weight: 8, PodAffinityTerm: ipaTerm("region", ipaNotIn("security", "S1"), ipaIn("security", "S2"))},
		{Weight: 2, PodAffinityTerm: ipaTerm("region", ipaExists("security"), ipaNotExist("wrongkey"))},
	})
	hardAffinity := &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		ipaTerm("region", ipaIn("security", "S1", "value2")), ipaTerm("region", ipaExists("security"), ipaNotExist("wrongkey")),
	}}}
	awayFromS1InAz := preferAnti(weighted(5, ipaTerm("az", ipaIn("security", "S1"))))
	awayFromS2InAz := preferAnti(weighted(5, ipaTerm("az", ipaIn("security", "S2"))))
	stayWithS1InRegionAwayFromS2InAz := &v1.Affinity{
		PodAffinity:     preferAff(weighted(8, ipaTerm("region", ipaIn("security", "S1")))).PodAffinity,
		PodAntiAffinity: awayFromS2InAz.PodAntiAffinity,
	}
	team1 := ipaSelector(ipaIn("team", "team1"))
	nsTerm := ipaNS(ipaTerm("region", ipaIn("security", "S1")), team1, "subteam2.team2")
	negTerm := ipaNS(ipaTerm("region", ipaIn("security", "S1")), ipaSelector(ipaNotIn("team", "team1")))
	affinityNamespaceSelector := preferAff(weighted(5, nsTerm))
	antiAffinityNamespaceSelector := preferAnti(weighted(5, nsTerm))
	affinityNegativeNamespaceSelector := preferAff(weighted(5, negTerm))
	antiAffinityNegativeNamespaceSelector := preferAnti(weighted(5, negTerm))
	invalidAffinityLabels := preferAff(weighted(8, ipaTerm("region", ipaIn("security", "{{.bad-value.}}"))))
	invalidAntiAffinityLabels := preferAnti(weighted(5, ipaTerm("az", ipaIn("security", "{{.bad-value.}}"))))
	const maxScore = framework.MaxNodeScore

	runIPAScoreCases(t, interPodAffinity{namespaces: upstreamNamespaces(), hardPodAffinityWeight: 1}, []ipaScoreCase{
		{name: "all nodes are same priority as Affinity is nil",
			pod:   s1(),
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)}, wantSkip: true},
		{name: "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others which doesn't match either pods in nodes or in topology key",
			pod:   s1().Affinity(stayWithS1InRegion),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s2().Node("node2"), s1().Node("node3")},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{maxScore, 0, 0}},
		{name: "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
			pod:   ipaPod().Affinity(stayWithS1InRegion),
			pods:  []*ft.PodBuilder{s1().Node("node1")},
			nodes: []*v1.Node{node("node1", china), node("node2", chinaAz1), node("node3", india)},
			want:  []int64{maxScore, maxScore, 0}},
		{name: "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
			pod: s1().Affinity(stayWithS2InRegion),
			pods: []*ft.PodBuilder{s2().Node("node1"), s2().Node("node1"), s2().Node("node2"), s2().Node("node3"),
				s2().Node("node4"), s2().Node("node5")},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", china), node("node4", china), node("node5", india)},
			want:  []int64{maxScore, 0, maxScore, maxScore, 0}},
		{name: "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures",
			pod:   s1().Affinity(affinity3),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s2().Node("node2"), s1().Node("node3")},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{20, maxScore, 0}},
		{name: "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:   s2(),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(stayWithS1InRegion), s2().Node("node2").Affinity(stayWithS2InRegion)},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{0, maxScore, 0}},
		{name: "Affinity symmetry with namespace selector",
			pod:   s1().Namespace("subteam1.team1"),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(affinityNamespaceSelector), s2().Node("node2").Affinity(stayWithS2InRegion)},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{maxScore, 0, 0}},
		{name: "AntiAffinity symmetry with namespace selector",
			pod:   s1().Namespace("subteam1.team1"),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(antiAffinityNamespaceSelector), s2().Node("node2").Affinity(stayWithS2InRegion)},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{0, maxScore, maxScore}},
		{name: "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
			pod:   s1(),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(hardAffinity), s2().Node("node2").Affinity(hardAffinity)},
			nodes: []*v1.Node{node("node1", china), node("node2", india), node("node3", az1)},
			want:  []int64{maxScore, maxScore, 0}},
		{name: "Anti Affinity: pod that does not match existing pods in node will get high score",
			pod:   s1().Affinity(awayFromS1InAz),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s2().Node("node2")},
			nodes: []*v1.Node{node("node1", az1), node("node2", china)},
			want:  []int64{0, maxScore}},
		{name: "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others",
			pod:   s1().Affinity(awayFromS1InAz),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s1().Node("node2")},
			nodes: []*v1.Node{node("node1", az1), node("node2", china)},
			want:  []int64{0, maxScore}},
		{name: "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
			pod:   s1().Affinity(awayFromS1InAz),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s1().Node("node1"), s2().Node("node2")},
			nodes: []*v1.Node{node("node1", az1), node("node2", india)},
			want:  []int64{0, maxScore}},
		{name: "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
			pod:   s2(),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(awayFromS2InAz), s2().Node("node2").Affinity(awayFromS1InAz)},
			nodes: []*v1.Node{node("node1", az1), node("node2", az2)},
			want:  []int64{0, maxScore}},
		{name: "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
			pod:   s1().Affinity(stayWithS1InRegionAwayFromS2InAz),
			pods:  []*ft.PodBuilder{s1().Node("node1"), s1().Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", az1)},
			want:  []int64{maxScore, 0}},
		{name: "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
			pod: s1().Affinity(stayWithS1InRegionAwayFromS2InAz),
			pods: []*ft.PodBuilder{s1().Node("node1"), s1().Node("node1"), s1().Node("node2"), s1().Node("node3"), s1().Node("node3"),
				s1().Node("node4"), s1().Node("node5")},
			nodes: []*v1.Node{node("node1", chinaAz1), node("node2", india), node("node3", china), node("node4", china), node("node5", india)},
			want:  []int64{maxScore, 0, maxScore, maxScore, 0}},
		{name: "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
			pod: s1().Affinity(stayWithS1InRegionAwayFromS2InAz),
			pods: []*ft.PodBuilder{s1().Node("node1"), s2().Node("node2"), ipaPod().Node("node3").Affinity(stayWithS1InRegionAwayFromS2InAz),
				ipaPod().Node("node4").Affinity(awayFromS1InAz)},
			nodes: []*v1.Node{node("node1", china), node("node2", az1), node("node3", india), node("node4", az2)},
			want:  []int64{maxScore, 0, maxScore, 0}},
		{name: "Avoid panic when partial nodes in a topology don't have pods with affinity",
			pod:   s1(),
			pods:  []*ft.PodBuilder{s1().Node("node1"), ipaPod().Node("node2").Affinity(stayWithS1InRegionAwayFromS2InAz)},
			nodes: []*v1.Node{node("node1", china), node("node2", china)},
			want:  []int64{0, 0}},
		{name: "invalid Affinity fails PreScore",
			pod:   ipaPod().Affinity(invalidAffinityLabels),
			nodes: []*v1.Node{node("node1", china), node("node2", china)}, wantErr: `Invalid value: "{{.bad-value.}}"`},
		{name: "invalid AntiAffinity fails PreScore",
			pod:   ipaPod().Affinity(invalidAntiAffinityLabels),
			nodes: []*v1.Node{node("node1", china), node("node2", china)}, wantErr: `Invalid value: "{{.bad-value.}}"`},
		{name: "Affinity with pods matching NamespaceSelector",
			pod: s1().Namespace("subteam1.team1").Affinity(affinityNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam1.team2").Node("node1"), s1().Namespace("subteam2.team1").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{maxScore, 0}},
		{name: "Affinity with pods matching both NamespaceSelector and Namespaces fields",
			pod: s1().Namespace("subteam1.team1").Affinity(affinityNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam2.team2").Node("node1"), s1().Namespace("subteam2.team1").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{maxScore, 0}},
		{name: "AntiAffinity with pods matching NamespaceSelector",
			pod: s1().Namespace("subteam1.team1").Affinity(antiAffinityNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam1.team2").Node("node1"), s1().Namespace("subteam2.team1").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{0, maxScore}},
		{name: "AntiAffinity with pods matching both NamespaceSelector and Namespaces fields",
			pod: s1().Namespace("subteam1.team1").Affinity(antiAffinityNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam2.team2").Node("node1"), s1().Namespace("subteam2.team1").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{0, maxScore}},
		{name: "Affinity with pods correctly enforcing negative NamespaceSelector",
			pod: s1().Namespace("subteam1.team1").Affinity(affinityNegativeNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam1.team2").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{0, maxScore}},
		{name: "AntiAffinity with pods correctly enforcing negative NamespaceSelector",
			pod: s1().Namespace("subteam1.team1").Affinity(antiAffinityNegativeNamespaceSelector),
			pods: []*ft.PodBuilder{s1().Namespace("subteam1.team1").Node("node1"), s1().Namespace("subteam1.team1").Node("node1"),
				s1().Namespace("subteam1.team2").Node("node2")},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{maxScore, 0}},
		{name: "Do not ignore preferred terms of existing pods",
			pod:   s2(),
			pods:  []*ft.PodBuilder{s1().Node("node1").Affinity(stayWithS1InRegionAwayFromS2InAz), s2().Node("node2").Affinity(stayWithS2InRegion)},
			nodes: []*v1.Node{node("node1", china), node("node2", india)},
			want:  []int64{0, maxScore}},
		{name: "No nodes to score", pod: s2(), wantSkip: true},
	})
}

// Upstream's TestPreferredAffinityWithHardPodAffinitySymmetricWeight, at
// the default weight (1), the only one here: less "with zero weight".
func TestInterPodAffinityScoreHardAffinitySymmetry(t *testing.T) {
	hard := &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		ipaNS(ipaTerm("region", ipaIn("service", "S1")), ipaSelector(ipaIn("team", "team1")), "", "subteam2.team2"),
	}}}
	nodes := []*v1.Node{ipaNode("node1", "region", "China"), ipaNode("node2", "region", "India"), ipaNode("node3", "az", "az1")}
	existing := func() []*ft.PodBuilder {
		return []*ft.PodBuilder{ipaPod().Node("node1").Affinity(hard), ipaPod().Node("node2").Affinity(hard)}
	}
	runIPAScoreCases(t, interPodAffinity{namespaces: upstreamNamespaces(), hardPodAffinityWeight: 1}, []ipaScoreCase{
		{name: "with default weight", pod: ipaPod().Labels("service", "S1"), pods: existing(), nodes: nodes,
			want: []int64{framework.MaxNodeScore, framework.MaxNodeScore, 0}},
		{name: "with no matching namespace", pod: ipaPod().Namespace("subteam1.team2").Labels("service", "S1"), pods: existing(),
			nodes: nodes, wantSkip: true},
		{name: "with matching NamespaceSelector", pod: ipaPod().Namespace("subteam1.team1").Labels("service", "S1"), pods: existing(),
			nodes: nodes, want: []int64{framework.MaxNodeScore, framework.MaxNodeScore, 0}},
		{name: "with matching Namespaces", pod: ipaPod().Namespace("subteam2.team2").Labels("service", "S1"), pods: existing(),
			nodes: nodes, want: []int64{framework.MaxNodeScore, framework.MaxNodeScore, 0}},
	})
}

// A pod without affinity costs nothing where no pod has affinity: PreFilter
// and PreScore skip it, and they skip it too when the pods with affinity
// have nothing to say about it.
func TestInterPodAffinitySkips(t *testing.T) {
	nodes := []*v1.Node{ipaNode("n1", v1.LabelHostname, "n1"), ipaNode("n2", v1.LabelHostname, "n2")}
	plain := ipaPod().Labels("app", "web")
	for _, tc := range []struct {
		name string
		pods []*ft.PodBuilder
	}{
		{"no pod has affinity", []*ft.PodBuilder{ipaPod().Labels("app", "web").Node("n1")}},
		{"affinity pods that do not match the pod", []*ft.PodBuilder{
			ipaPod().Node("n1").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db"))),
			ipaPod().Node("n2").PreferPodAffinity(10, ipaTerm(v1.LabelHostname, ipaIn("app", "db"))),
		}},
		{"empty cluster", nil},
	} {
		snap := ipaSnapshot(nodes, tc.pods...)
		if tc.pods == nil {
			snap = nil
		}
		pl := interPodAffinity{hardPodAffinityWeight: 1}
		if f, names, st := pl.PreFilter(plain.Info(), orEmpty(snap)); f != nil || names != nil || st != nil {
			t.Errorf("%s: PreFilter = %v, %v, %v, want a skip", tc.name, f, names, st)
		}
		if sc, st := pl.PreScore(plain.Info(), orEmpty(snap).List(), orEmpty(snap)); sc != nil || st != nil {
			t.Errorf("%s: PreScore = %v, %v, want a skip", tc.name, sc, st)
		}
	}
	// Through the profile: TestInterPodAffinitySkipsInProfile
	// (interpodaffinity_profile_test.go).
}

func orEmpty(s *cache.Snapshot) *cache.Snapshot {
	if s == nil {
		return cache.NewSnapshot()
	}
	return s
}

// Resolving a namespaceSelector leaves the cached pod's parsed terms
// alone: they are shared with every later cycle.
func TestInterPodAffinityMergeCopiesTerms(t *testing.T) {
	pi := ipaPod().Namespace("subteam1.team1").
		PodAffinity(ipaNS(ipaTerm("region", ipaIn("app", "x")), ipaSelector(ipaIn("team", "team1")))).Info()
	pl := interPodAffinity{namespaces: upstreamNamespaces(), hardPodAffinityWeight: 1}
	f, _, st := pl.PreFilter(pi, ipaSnapshot([]*v1.Node{ipaNode("n1", "region", "r1")}))
	if st != nil || f == nil {
		t.Fatalf("PreFilter = %v, %v", f, st)
	}
	merged := f.(*podAffinityFilter).required[0]
	if !merged.Namespaces.HasAll("subteam1.team1", "subteam2.team1") || merged.Namespaces.Has("subteam1.team2") {
		t.Errorf("merged namespaces = %v, want the team1 namespaces", merged.Namespaces.UnsortedList())
	}
	cached := pi.Affinity.Required[0]
	if cached.Namespaces.Len() != 0 || !selectsSome(cached.NamespaceSelector) {
		t.Errorf("the cached term changed: namespaces %v, selector %v", cached.Namespaces.UnsortedList(), cached.NamespaceSelector)
	}
}

// TestInterPodAffinityArgsDefaults checks the args' defaults, also written
// out, and ignorePreferredTermsOfExistingPods.
func TestInterPodAffinityArgsDefaults(t *testing.T) {
	argsOf := func(args string) interPodAffinity {
		t.Helper()
		var pc *kschedv1.PluginConfig
		if args != "" {
			pc = &kschedv1.PluginConfig{Name: abi.PluginInterPodAffinity, Args: runtime.RawExtension{Raw: []byte(args)}}
		}
		a, err := Row().Args(pc, field.NewPath("args"))
		if err != nil {
			t.Fatalf("args %q: %v", args, err)
		}
		return a.(interPodAffinity)
	}
	for _, args := range []string{"", `{"hardPodAffinityWeight": 1}`} {
		if pl := argsOf(args); pl.hardPodAffinityWeight != 1 || pl.ignoreExistingPreferred {
			t.Errorf("InterPodAffinity %+v, want the default", pl)
		}
	}
	if pl := argsOf(`ignorePreferredTermsOfExistingPods: true`); pl.hardPodAffinityWeight != 1 || !pl.ignoreExistingPreferred {
		t.Errorf("InterPodAffinity %+v, want weight 1 and ignoring the existing pods' preferred terms", pl)
	}
}
