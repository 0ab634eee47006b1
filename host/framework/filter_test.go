package framework

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

type filterCase struct {
	name string
	pod  *podBuilder
	node *nodeBuilder
	want *Status
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Filter(tc.pod.state(), tc.node.info())
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
		{name: "no node name", pod: makePod(), node: makeNode("n1")},
		{name: "same name", pod: makePod().node("n1"), node: makeNode("n1")},
		{name: "other name", pod: makePod().node("n2"), node: makeNode("n1"),
			want: reject(UnschedulableAndUnresolvable, abi.PluginNodeName, "node(s) didn't match the requested node name")},
	})
}

func TestFilterNodeUnschedulable(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginNodeUnschedulable, "node(s) were unschedulable")
	runFilterCases(t, []filterCase{
		{name: "schedulable", pod: makePod(), node: makeNode("n1")},
		{name: "unschedulable", pod: makePod(), node: makeNode("n1").unschedulable(), want: rejected},
		{name: "tolerates unschedulable NoSchedule",
			pod:  makePod().toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: makeNode("n1").unschedulable()},
		{name: "tolerates every taint (empty key, Exists)",
			pod:  makePod().toleration("", v1.TolerationOpExists, "", ""),
			node: makeNode("n1").unschedulable()},
		{name: "toleration for NoExecute only",
			pod:  makePod().toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoExecute),
			node: makeNode("n1").unschedulable(), want: rejected},
		{name: "the taint alone is TaintToleration's business",
			pod:  makePod(),
			node: makeNode("n1").taint(v1.TaintNodeUnschedulable, "", v1.TaintEffectNoSchedule),
			want: reject(UnschedulableAndUnresolvable, abi.PluginTaintToleration, "node(s) had untolerated taint(s)")},
	})
}

func TestFilterTaintToleration(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginTaintToleration, "node(s) had untolerated taint(s)")
	runFilterCases(t, []filterCase{
		{name: "no taints", pod: makePod(), node: makeNode("n1")},
		{name: "NoSchedule untolerated", pod: makePod(),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "NoExecute untolerated", pod: makePod(),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoExecute), want: rejected},
		{name: "PreferNoSchedule is not filtered", pod: makePod(),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectPreferNoSchedule)},
		{name: "Equal toleration",
			pod:  makePod().toleration("dedicated", v1.TolerationOpEqual, "user1", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "empty operator is Equal",
			pod:  makePod().toleration("dedicated", "", "user1", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "Equal toleration, other value",
			pod:  makePod().toleration("dedicated", v1.TolerationOpEqual, "user2", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "Exists toleration",
			pod:  makePod().toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule)},
		{name: "toleration without effect tolerates every effect",
			pod:  makePod().toleration("dedicated", v1.TolerationOpExists, "", ""),
			node: makeNode("n1").taint("dedicated", "a", v1.TaintEffectNoSchedule).taint("dedicated", "b", v1.TaintEffectNoExecute)},
		{name: "empty key with Exists tolerates everything",
			pod:  makePod().toleration("", v1.TolerationOpExists, "", ""),
			node: makeNode("n1").taint("a", "1", v1.TaintEffectNoSchedule).taint("b", "", v1.TaintEffectNoExecute)},
		{name: "effect mismatch",
			pod:  makePod().toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoExecute),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "a PreferNoSchedule toleration does not tolerate NoSchedule",
			pod:  makePod().toleration("dedicated", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule),
			node: makeNode("n1").taint("dedicated", "user1", v1.TaintEffectNoSchedule), want: rejected},
		{name: "one of two taints untolerated",
			pod:  makePod().toleration("a", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("a", "", v1.TaintEffectNoSchedule).taint("b", "", v1.TaintEffectNoSchedule), want: rejected},
		{name: "Gt is off (TaintTolerationComparisonOperators alpha)",
			pod:  makePod().toleration("level", v1.TolerationOpGt, "1", v1.TaintEffectNoSchedule),
			node: makeNode("n1").taint("level", "5", v1.TaintEffectNoSchedule), want: rejected},
	})
}

func TestFilterNodeAffinity(t *testing.T) {
	rejected := reject(UnschedulableAndUnresolvable, abi.PluginNodeAffinity, "node(s) didn't match Pod's node affinity/selector")
	node := func() *nodeBuilder { return makeNode("n1").label("zone", "a").label("gen", "5") }
	runFilterCases(t, []filterCase{
		{name: "no selector, no affinity", pod: makePod(), node: node()},
		{name: "nodeSelector matches", pod: makePod().selector("zone", "a"), node: node()},
		{name: "nodeSelector does not match", pod: makePod().selector("zone", "b"), node: node(), want: rejected},
		{name: "nodeSelector with a missing label", pod: makePod().selector("zone", "a", "disk", "ssd"), node: node(), want: rejected},
		{name: "In", pod: makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpIn, "a", "b"))), node: node()},
		{name: "In, no match", pod: makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpIn, "b", "c"))), node: node(), want: rejected},
		{name: "NotIn", pod: makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpNotIn, "b"))), node: node()},
		{name: "NotIn, excluded", pod: makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpNotIn, "a"))), node: node(), want: rejected},
		{name: "Exists", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpExists))), node: node()},
		{name: "DoesNotExist", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpDoesNotExist))), node: node(), want: rejected},
		{name: "Gt", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpGt, "4"))), node: node()},
		{name: "Gt, equal", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpGt, "5"))), node: node(), want: rejected},
		{name: "Lt", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpLt, "6"))), node: node()},
		{name: "Lt, greater", pod: makePod().required(labelTerm(expr("gen", v1.NodeSelectorOpLt, "3"))), node: node(), want: rejected},
		{name: "expressions of a term are ANDed",
			pod:  makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpIn, "a"), expr("gen", v1.NodeSelectorOpGt, "7"))),
			node: node(), want: rejected},
		{name: "terms are ORed",
			pod: makePod().required(labelTerm(expr("zone", v1.NodeSelectorOpIn, "b")),
				labelTerm(expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node()},
		{name: "matchFields metadata.name", pod: makePod().required(nameTerm("n1")), node: node()},
		{name: "matchFields metadata.name, other node", pod: makePod().required(nameTerm("n2")), node: node(), want: rejected},
		{name: "nodeSelector and affinity: both must match",
			pod:  makePod().selector("zone", "a").required(labelTerm(expr("gen", v1.NodeSelectorOpIn, "4"))),
			node: node(), want: rejected},
		{name: "nodeSelector and affinity: selector fails",
			pod:  makePod().selector("zone", "b").required(labelTerm(expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node(), want: rejected},
		{name: "nodeSelector and affinity both match",
			pod:  makePod().selector("zone", "a").required(labelTerm(expr("gen", v1.NodeSelectorOpIn, "5"))),
			node: node()},
		{name: "no terms match nothing", pod: makePod().required(), node: node(), want: rejected},
		{name: "an empty term matches nothing", pod: makePod().required(v1.NodeSelectorTerm{}), node: node(), want: rejected},
		{name: "preferred only does not filter",
			pod:  makePod().preferred(10, labelTerm(expr("zone", v1.NodeSelectorOpIn, "b"))),
			node: node()},
	})
}

func TestFilterNodePorts(t *testing.T) {
	rejected := reject(Unschedulable, abi.PluginNodePorts, "node(s) didn't have free ports for the requested pod ports")
	runFilterCases(t, []filterCase{
		{name: "no ports", pod: makePod(), node: makeNode("n1").with(makePod().port("", v1.ProtocolTCP, 80))},
		{name: "free port", pod: makePod().port("", "", 8080), node: makeNode("n1").with(makePod().port("", v1.ProtocolTCP, 80))},
		{name: "same port, both on 0.0.0.0", pod: makePod().port("", "", 80),
			node: makeNode("n1").with(makePod().port("0.0.0.0", v1.ProtocolTCP, 80)), want: rejected},
		{name: "same port, other protocol", pod: makePod().port("", v1.ProtocolUDP, 80),
			node: makeNode("n1").with(makePod().port("", v1.ProtocolTCP, 80))},
		{name: "specific IP against 0.0.0.0", pod: makePod().port("10.0.0.1", v1.ProtocolTCP, 80),
			node: makeNode("n1").with(makePod().port("", v1.ProtocolTCP, 80)), want: rejected},
		{name: "0.0.0.0 against a specific IP", pod: makePod().port("", v1.ProtocolTCP, 80),
			node: makeNode("n1").with(makePod().port("10.0.0.1", v1.ProtocolTCP, 80)), want: rejected},
		{name: "two specific IPs", pod: makePod().port("10.0.0.2", v1.ProtocolTCP, 80),
			node: makeNode("n1").with(makePod().port("10.0.0.1", v1.ProtocolTCP, 80))},
		{name: "same specific IP", pod: makePod().port("10.0.0.1", v1.ProtocolSCTP, 80),
			node: makeNode("n1").with(makePod().port("10.0.0.1", v1.ProtocolSCTP, 80)), want: rejected},
		{name: "second port conflicts", pod: makePod().port("", v1.ProtocolTCP, 81).port("", v1.ProtocolUDP, 53),
			node: makeNode("n1").with(makePod().port("", v1.ProtocolUDP, 53)), want: rejected},
	})
}

func TestFilterNodeResourcesFit(t *testing.T) {
	node := func() *nodeBuilder {
		return makeNode("n1", "cpu", "1", "memory", "1000", "ephemeral-storage", "100", "example.com/foo", "2", "pods", "3")
	}
	fit := func(code Code, reasons ...string) *Status {
		return reject(code, abi.PluginNodeResourcesFit, reasons...)
	}
	runFilterCases(t, []filterCase{
		{name: "no requests", pod: makePod().req(), node: node().with(makePod().req("cpu", "1", "memory", "1000"))},
		{name: "fits", pod: makePod().req("cpu", "500m", "memory", "500"), node: node().with(makePod().req("cpu", "500m", "memory", "500"))},
		{name: "insufficient cpu", pod: makePod().req("cpu", "300m"),
			node: node().with(makePod().req("cpu", "800m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "insufficient cpu and memory", pod: makePod().req("cpu", "300m", "memory", "600"),
			node: node().with(makePod().req("cpu", "800m", "memory", "500")),
			want: fit(Unschedulable, "Insufficient cpu", "Insufficient memory")},
		{name: "more than the node has at all", pod: makePod().req("cpu", "2"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient cpu")},
		{name: "one unresolvable reason makes the status unresolvable", pod: makePod().req("cpu", "300m", "memory", "2000"),
			node: node().with(makePod().req("cpu", "800m")),
			want: fit(UnschedulableAndUnresolvable, "Insufficient cpu", "Insufficient memory")},
		{name: "zero request does not fail a full resource", pod: makePod().req("cpu", "0", "memory", "10"),
			node: node().with(makePod().req("cpu", "1"))},
		{name: "init container peak counts", pod: makePod().req("cpu", "100m").initReq(false, "cpu", "900m"),
			node: node().with(makePod().req("cpu", "200m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "init container peak fits", pod: makePod().req("cpu", "100m").initReq(false, "cpu", "800m"),
			node: node().with(makePod().req("cpu", "200m"))},
		{name: "sidecar adds to the containers", pod: makePod().req("cpu", "500m").initReq(true, "cpu", "400m"),
			node: node().with(makePod().req("cpu", "200m")), want: fit(Unschedulable, "Insufficient cpu")},
		{name: "ephemeral storage", pod: makePod().req("ephemeral-storage", "60"),
			node: node().with(makePod().req("ephemeral-storage", "50")), want: fit(Unschedulable, "Insufficient ephemeral-storage")},
		{name: "extended resource fits", pod: makePod().req("example.com/foo", "1"),
			node: node().with(makePod().req("example.com/foo", "1"))},
		{name: "extended resource insufficient", pod: makePod().req("example.com/foo", "2"),
			node: node().with(makePod().req("example.com/foo", "1")), want: fit(Unschedulable, "Insufficient example.com/foo")},
		{name: "extended resource the node lacks", pod: makePod().req("example.com/bar", "1"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient example.com/bar")},
		{name: "scalar reasons after the fixed ones, sorted", pod: makePod().req("memory", "2000", "example.com/foo", "3", "example.com/bar", "1"),
			node: node(), want: fit(UnschedulableAndUnresolvable, "Insufficient memory", "Insufficient example.com/bar", "Insufficient example.com/foo")},
		{name: "too many pods", pod: makePod().req(),
			node: node().with(makePod(), makePod(), makePod()), want: fit(Unschedulable, "Too many pods")},
		{name: "too many pods comes first", pod: makePod().req("cpu", "500m"),
			node: node().with(makePod().req("cpu", "600m"), makePod(), makePod()), want: fit(Unschedulable, "Too many pods", "Insufficient cpu")},
		{name: "node without pod capacity", pod: makePod(), node: makeNode("n1", "pods", "0"), want: fit(Unschedulable, "Too many pods")},
	})
}

func TestFilterOrder(t *testing.T) {
	runFilterCases(t, []filterCase{
		{name: "NodeName before NodeUnschedulable", pod: makePod().node("n2"), node: makeNode("n1").unschedulable(),
			want: statusNodeName},
		{name: "NodeUnschedulable before TaintToleration", pod: makePod(),
			node: makeNode("n1").unschedulable().taint("a", "", v1.TaintEffectNoSchedule), want: statusUnschedulable},
		{name: "TaintToleration before NodeAffinity", pod: makePod().selector("zone", "a"),
			node: makeNode("n1").taint("a", "", v1.TaintEffectNoSchedule), want: statusTaint},
		{name: "NodeAffinity before NodePorts", pod: makePod().selector("zone", "a").port("", "", 80),
			node: makeNode("n1").with(makePod().port("", "", 80)), want: statusNodeAffinity},
		{name: "NodePorts before NodeResourcesFit", pod: makePod().port("", "", 80).req("cpu", "1"),
			node: makeNode("n1").with(makePod().port("", "", 80)), want: statusNodePorts},
	})
}

func TestFilterNoNode(t *testing.T) {
	st := Filter(makePod().state(), makeNode("n1").with(makePod()).infoWithoutNode())
	if st.Code != Error || st.Err == nil {
		t.Errorf("Filter on a node info without node = %+v, want an Error", st)
	}
}

// TestFilterConcurrent hammers the shared NodeResourcesFit status cache.
func TestFilterConcurrent(t *testing.T) {
	ps := makePod().req("cpu", "2", "memory", "2000").state()
	nodes := infos(makeNode("a", "cpu", "1", "memory", "1000"), makeNode("b", "cpu", "4", "memory", "1000"),
		makeNode("c", "cpu", "1", "memory", "4000"), makeNode("d", "cpu", "4", "memory", "4000", "pods", "0"))
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
