package framework_test

import (
	"sync"
	"testing"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

type filterCase struct {
	name string
	pod  *ft.PodBuilder
	node *ft.NodeBuilder
	want *Status
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Filter(state(tc.pod), tc.node.Info())
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("Filter (-want, +got):\n%s", diff)
			}
		})
	}
}

func reject(code Code, plugin string, reasons ...string) *Status {
	return &Status{Code: code, Plugin: plugin, Reasons: reasons}
}

func TestFilterNodeName(t *testing.T) {
	runFilterCases(t, []filterCase{
		{name: "no node name", pod: ft.MakePod(), node: ft.MakeNode("n1")},
		{name: "same name", pod: ft.MakePod().Node("n1"), node: ft.MakeNode("n1")},
		{name: "other name", pod: ft.MakePod().Node("n2"), node: ft.MakeNode("n1"),
			want: reject(UnschedulableAndUnresolvable, abi.PluginNodeName, "node(s) didn't match the requested node name")},
	})
}

func TestFilterNodeUnschedulable(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginNodeUnschedulable, "node(s) were unschedulable")
	runFilterCases(t, []filterCase{
		{name: "schedulable", pod: ft.MakePod(), node: ft.MakeNode("n1")},
		{name: "unschedulable", pod: ft.MakePod(), node: ft.MakeNode("n1").Unschedulable(), want: rejected},
		{name: "tolerates unschedulable NoSchedule",
			pod:  ft.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Unschedulable()},
		{name: "tolerates every taint (empty key, Exists)",
			pod:  ft.MakePod().Toleration("", v1.TolerationOpExists, "", ""),
			node: ft.MakeNode("n1").Unschedulable()},
		{name: "toleration for NoExecute only",
			pod:  ft.MakePod().Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoExecute),
			node: ft.MakeNode("n1").Unschedulable(), want: rejected},
		{name: "the taint alone is TaintToleration's business",
			pod:  ft.MakePod(),
			node: ft.MakeNode("n1").Taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule),
			want: reject(UnschedulableAndUnresolvable, abi.PluginTaintToleration, "node(s) had untolerated taint(s)")},
	})
}

func TestFilterTaintToleration(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginTaintToleration, "node(s) had untolerated taint(s)")
	runFilterCases(t, []filterCase{
		{name: "no taints", pod: ft.MakePod(), node: ft.MakeNode("n1")},
		{name: "NoSchedule untolerated", pod: ft.MakePod(),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "NoExecute untolerated", pod: ft.MakePod(),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoExecute), want: rejected},
		{name: "PreferNoSchedule is not filtered", pod: ft.MakePod(),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectPreferNoSchedule)},
		{name: "Equal toleration",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpEqual, "user1", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "empty operator is Equal",
			pod:  ft.MakePod().Toleration("dedicated", "", "user1", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "Equal toleration, other value",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpEqual, "user2", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "Exists toleration",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "toleration without effect tolerates every effect",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpExists, "", ""),
			node: ft.MakeNode("n1").Taint("dedicated", "a", v1.TaintEffectNoSchedule).Taint("dedicated", "b", v1.TaintEffectNoExecute)},
		{name: "empty key with Exists tolerates everything",
			pod:  ft.MakePod().Toleration("", v1.TolerationOpExists, "", ""),
			node: ft.MakeNode("n1").Taint("a", "1", v1.TaintEffectNoSchedule).Taint("b", "", v1.TaintEffectNoExecute)},
		{name: "effect mismatch",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoExecute),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "a PreferNoSchedule toleration does not tolerate NoSchedule",
			pod:  ft.MakePod().Toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule),
			node: ft.MakeNode("n1").Taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "one of two taints untolerated",
			pod:  ft.MakePod().Toleration("a", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("a", "", v1.TaintEffectNoSchedule).Taint("b", "", v1.TaintEffectNoSchedule), want: rejected},
		{name: "Gt is off (TaintTolerationComparisonOperators alpha)",
			pod:  ft.MakePod().Toleration("level", v1.TolerationOpGt, "1", v1.TaintEffectNoSchedule),
			node: ft.MakeNode("n1").Taint("level", "5", v1.TaintEffectNoSchedule), want: rejected},
	})
}

func TestFilterNodeAffinity(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginNodeAffinity, "node(s) didn't match Pod's node affinity/selector")
	node := func() *ft.NodeBuilder { return ft.MakeNode("n1").Label("zone", "a").Label("gen", "5") }
	runFilterCases(t, []filterCase{
		{name: "no selector, no affinity", pod: ft.MakePod(), node: node()},
		{name: "nodeSelector matches", pod: ft.MakePod().Selector("zone", "a"), node: node()},
		{name: "nodeSelector does not match", pod: ft.MakePod().Selector("zone", "b"), node: node(), want: rejected},
		{name: "nodeSelector with a missing label", pod: ft.MakePod().Selector("zone", "a", "disk", "ssd"), node: node(), want: rejected},
		{name: "In", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "a", "b"))), node: node()},
		{name: "In, no match", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "b", "c"))), node: node(), want: rejected},
		{name: "NotIn", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpNotIn, "b"))), node: node()},
		{name: "NotIn, excluded", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpNotIn, "a"))), node: node(), want: rejected},
		{name: "Exists", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpExists))), node: node()},
		{name: "DoesNotExist", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpDoesNotExist))), node: node(), want: rejected},
		{name: "Gt", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpGt, "4"))), node: node()},
		{name: "Gt, equal", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpGt, "5"))), node: node(), want: rejected},
		{name: "Lt", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpLt, "6"))), node: node()},
		{name: "Lt, greater", pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpLt, "3"))), node: node(), want: rejected},
		{name: "expressions of a term are ANDed",
			pod:  ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "a"), ft.Expr("gen", v1.NodeSelectorOpGt, "7"))),
			node: node(), want: rejected},
		{name: "terms are ORed",
			pod: ft.MakePod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "b")),
				ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node()},
		{name: "matchFields metadata.name", pod: ft.MakePod().Required(ft.NameTerm("n1")), node: node()},
		{name: "matchFields metadata.name, other node", pod: ft.MakePod().Required(ft.NameTerm("n2")), node: node(), want: rejected},
		{name: "nodeSelector and affinity: both must match",
			pod:  ft.MakePod().Selector("zone", "a").Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpIn, "4"))),
			node: node(), want: rejected},
		{name: "nodeSelector and affinity: selector fails",
			pod:  ft.MakePod().Selector("zone", "b").Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node(), want: rejected},
		{name: "nodeSelector and affinity both match",
			pod:  ft.MakePod().Selector("zone", "a").Required(ft.LabelTerm(ft.Expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node()},
		{name: "no terms match nothing", pod: ft.MakePod().Required(), node: node(), want: rejected},
		{name: "an empty term matches nothing", pod: ft.MakePod().Required(v1.NodeSelectorTerm{}), node: node(), want: rejected},
		{name: "preferred only does not filter",
			pod:  ft.MakePod().Preferred(10, ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "b"))),
			node: node()},
	})
}

func TestFilterNodePorts(t *testing.T) {
	rejected := reject(Unschedulable, abi.PluginNodePorts, "node(s) didn't have free ports for the requested pod ports")
	runFilterCases(t, []filterCase{
		{name: "no ports", pod: ft.MakePod(), node: ft.MakeNode("n1").With(ft.MakePod().Port("", v1.ProtocolTCP, 80))},
		{name: "free port", pod: ft.MakePod().Port("", "", 8080), node: ft.MakeNode("n1").With(ft.MakePod().Port("", v1.ProtocolTCP, 80))},
		{name: "same port, both on 0.0.0.0", pod: ft.MakePod().Port("", "", 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("0.0.0.0", v1.ProtocolTCP, 80)), want: rejected},
		{name: "same port, other protocol", pod: ft.MakePod().Port("", v1.ProtocolUDP, 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("", v1.ProtocolTCP, 80))},
		{name: "specific IP against 0.0.0.0", pod: ft.MakePod().Port("10.0.0.1", v1.ProtocolTCP, 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("", v1.ProtocolTCP, 80)), want: rejected},
		{name: "0.0.0.0 against a specific IP", pod: ft.MakePod().Port("", v1.ProtocolTCP, 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("10.0.0.1", v1.ProtocolTCP, 80)), want: rejected},
		{name: "two specific IPs", pod: ft.MakePod().Port("10.0.0.2", v1.ProtocolTCP, 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("10.0.0.1", v1.ProtocolTCP, 80))},
		{name: "same specific IP", pod: ft.MakePod().Port("10.0.0.1", v1.ProtocolSCTP, 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("10.0.0.1", v1.ProtocolSCTP, 80)), want: rejected},
		{name: "second port conflicts", pod: ft.MakePod().Port("", v1.ProtocolTCP, 81).Port("", v1.ProtocolUDP, 53),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("", v1.ProtocolUDP, 53)), want: rejected},
	})
}

func TestFilterNodeResourcesFit(t *testing.T) {
	node := func() *ft.NodeBuilder {
		return ft.MakeNode("n1", "cpu", "1", "memory", "1000", "ephemeral-storage", "100", "example.com/foo", "2", "pods", "3")
	}
	fit := func(code Code, reasons ...string) *Status {
		return reject(code, abi.PluginNodeResourcesFit, reasons...)
	}
	runFilterCases(t, []filterCase{
		{name: "no requests", pod: ft.MakePod().Req(), node: node().With(ft.MakePod().Req("cpu", "1", "memory", "1000"))},
		{name: "fits", pod: ft.MakePod().Req("cpu", "500m", "memory", "500"), node: node().With(ft.MakePod().Req("cpu", "500m", "memory", "500"))},
		{name: "insufficient cpu", pod: ft.MakePod().Req("cpu", "300m"),
			node: node().With(ft.MakePod().Req("cpu", "800m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "insufficient cpu and memory", pod: ft.MakePod().Req("cpu", "300m", "memory", "600"),
			node: node().With(ft.MakePod().Req("cpu", "800m", "memory", "500")),
			want: fit(Unschedulable, "Insufficient cpu", "Insufficient memory")},
		{name: "more than the node has at all", pod: ft.MakePod().Req("cpu", "2"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient cpu")},
		{name: "one unresolvable reason makes the status unresolvable", pod: ft.MakePod().Req("cpu", "300m", "memory", "2000"),
			node: node().With(ft.MakePod().Req("cpu", "800m")),
			want: fit(UnschedulableAndUnresolvable, "Insufficient cpu", "Insufficient memory")},
		{name: "zero request does not fail a full resource", pod: ft.MakePod().Req("cpu", "0", "memory", "10"),
			node: node().With(ft.MakePod().Req("cpu", "1"))},
		{name: "init container peak counts", pod: ft.MakePod().Req("cpu", "100m").InitReq(false, "cpu", "900m"),
			node: node().With(ft.MakePod().Req("cpu", "200m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "init container peak fits", pod: ft.MakePod().Req("cpu", "100m").InitReq(false, "cpu", "800m"),
			node: node().With(ft.MakePod().Req("cpu", "200m"))},
		{name: "sidecar adds to the containers", pod: ft.MakePod().Req("cpu", "500m").InitReq(true, "cpu", "400m"),
			node: node().With(ft.MakePod().Req("cpu", "200m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "ephemeral storage", pod: ft.MakePod().Req("ephemeral-storage", "60"),
			node: node().With(ft.MakePod().Req("ephemeral-storage", "50")), want: fit(Unschedulable, "Insufficient ephemeral-storage")},
		{name: "extended resource fits", pod: ft.MakePod().Req("example.com/foo", "1"),
			node: node().With(ft.MakePod().Req("example.com/foo", "1"))},
		{name: "extended resource insufficient", pod: ft.MakePod().Req("example.com/foo", "2"),
			node: node().With(ft.MakePod().Req("example.com/foo", "1")), want: fit(Unschedulable, "Insufficient example.com/foo")},
		{name: "extended resource the node lacks", pod: ft.MakePod().Req("example.com/bar", "1"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient example.com/bar")},
		{name: "scalar reasons after the fixed ones, sorted", pod: ft.MakePod().Req("memory", "2000", "example.com/foo", "3", "example.com/bar", "1"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient memory", "Insufficient example.com/bar", "Insufficient example.com/foo")},
		{name: "too many pods", pod: ft.MakePod().Req(),
			node: node().With(ft.MakePod(), ft.MakePod(), ft.MakePod()), want: fit(Unschedulable, "Too many pods")},
		{name: "too many pods comes first", pod: ft.MakePod().Req("cpu", "500m"),
			node: node().With(ft.MakePod().Req("cpu", "600m"), ft.MakePod(), ft.MakePod()), want: fit(Unschedulable, "Too many pods", "Insufficient cpu")},
		{name: "node without pod capacity", pod: ft.MakePod(), node: ft.MakeNode("n1", "pods", "0"), want: fit(Unschedulable, "Too many pods")},
	})
}

func TestFilterOrder(t *testing.T) {
	runFilterCases(t, []filterCase{
		{name: "NodeName before NodeUnschedulable", pod: ft.MakePod().Node("n2"), node: ft.MakeNode("n1").Unschedulable(),
			want: statusNodeName},
		{name: "NodeUnschedulable before TaintToleration", pod: ft.MakePod(),
			node: ft.MakeNode("n1").Unschedulable().Taint("a", "", v1.TaintEffectNoSchedule), want: statusUnschedulable},
		{name: "TaintToleration before NodeAffinity", pod: ft.MakePod().Selector("zone", "a"),
			node: ft.MakeNode("n1").Taint("a", "", v1.TaintEffectNoSchedule), want: statusTaint},
		{name: "NodeAffinity before NodePorts", pod: ft.MakePod().Selector("zone", "a").Port("", "", 80),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("", "", 80)), want: statusNodeAffinity},
		{name: "NodePorts before NodeResourcesFit", pod: ft.MakePod().Port("", "", 80).Req("cpu", "1"),
			node: ft.MakeNode("n1").With(ft.MakePod().Port("", "", 80)), want: statusNodePorts},
	})
}

func TestFilterNoNode(t *testing.T) {
	st := Filter(state(ft.MakePod()), ft.MakeNode("n1").With(ft.MakePod()).InfoWithoutNode())
	if st.Code != Error || st.Err == nil {
		t.Errorf("Filter on a node info without node = %+v, want an Error", st)
	}
}

// TestFilterConcurrent hammers the shared NodeResourcesFit status cache.
func TestFilterConcurrent(t *testing.T) {
	ps := state(ft.MakePod().Req("cpu", "2", "memory", "2000"))
	nodes := ft.Infos(ft.MakeNode("a", "cpu", "1", "memory", "1000"), ft.MakeNode("b", "cpu", "4", "memory", "1000"),
		ft.MakeNode("c", "cpu", "1", "memory", "4000"), ft.MakeNode("d", "cpu", "4", "memory", "4000", "pods", "0"))
	want := []*Status{
		reject(UnschedulableAndUnresolvable, abi.PluginNodeResourcesFit, "Insufficient cpu", "Insufficient memory"),
		reject(UnschedulableAndUnresolvable, abi.PluginNodeResourcesFit, "Insufficient memory"),
		reject(UnschedulableAndUnresolvable, abi.PluginNodeResourcesFit, "Insufficient cpu"),
		reject(Unschedulable, abi.PluginNodeResourcesFit, "Too many pods"),
	}
	var wg sync.WaitGroup
	got := make([][]*Status, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				got[g] = append(got[g], Filter(ps, nodes[i%len(nodes)]))
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for i, st := range got[g] {
			if diff := cmp.Diff(want[i%len(nodes)], st); diff != "" {
				t.Fatalf("goroutine %d call %d (-want, +got):\n%s", g, i, diff)
			}
			if st != got[0][i] {
				t.Fatalf("goroutine %d call %d: status not shared", g, i)
			}
		}
	}
}
