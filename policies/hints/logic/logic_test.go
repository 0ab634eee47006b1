package logic_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies/hints/logic"
)

// The cases are upstream's unit tests of the hint functions (Kubernetes
// v1.37, pkg/scheduler/framework/plugins/*/*_test.go), named as there where
// they come from there, adapted to ABI records, plus cases for what the ABI
// adds: requested amounts, combined action bits, unregistered events, the
// pending pod's own updates.

const wasmPath = "../hints.wasm"

var hintsPolicy = policytest.Policy{WasmPath: wasmPath, QueueingHint: logic.Plugins}

const (
	skip  = abi.HintSkip
	queue = abi.HintQueue
	herr  = abi.HintError
)

// hintCase asks the slot about ev for pods.
type hintCase struct {
	name string
	ev   abi.EventView
	pods []*policytest.PodWrapper
	want []abi.Hint
}

func runCases(t *testing.T, q policy.QueueingHint, cases []hintCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.pods) != len(c.want) {
				t.Fatalf("bad case: %d pods, %d hints", len(c.pods), len(c.want))
			}
			views := make([]abi.PodView, len(c.pods))
			for i, p := range c.pods {
				views[i] = p.View()
			}
			got := make([]abi.Hint, len(views))
			q.Hints(c.ev, views, got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("hints (-want, +got):\n%s", diff)
			}
		})
	}
}

// pending is a pod in the queue rejected by plugins.
func pending(name string, plugins ...string) *policytest.PodWrapper {
	return policytest.MakePod().Namespace("ns").Name(name).UID("uid-"+name).UnschedulablePlugins(plugins...).Request("pods", 1)
}

// bound is a pod bound to node n1, as in an assigned-pod event.
func bound(name string) *policytest.PodWrapper {
	return policytest.MakePod().Namespace("ns").Name(name).UID("uid-"+name).Node("n1").Request("pods", 1)
}

// node is n1 with room for pods and, unless set otherwise, nothing else.
func node() *policytest.NodeWrapper {
	return policytest.MakeNode().Name("n1").Allocatable("pods", 32)
}

func req(key string, op abi.SelectorOperator, values ...string) abi.Requirement {
	return abi.Requirement{Key: key, Operator: op, Values: values}
}

func term(exprs ...abi.Requirement) abi.NodeSelectorTerm {
	return abi.NodeSelectorTerm{MatchExpressions: exprs}
}

func fieldTerm(fields ...abi.Requirement) abi.NodeSelectorTerm {
	return abi.NodeSelectorTerm{MatchFields: fields}
}

func TestRegistrations(t *testing.T) {
	const (
		fit   = abi.PluginNodeResourcesFit
		aff   = abi.PluginNodeAffinity
		taint = abi.PluginTaintToleration
		unsch = abi.PluginNodeUnschedulable
		ports = abi.PluginNodePorts
		name  = abi.PluginNodeName
		ndf   = abi.PluginNodeDeclaredFeatures
		gates = abi.PluginSchedulingGates
		gang  = abi.PluginGangScheduling
		ipa   = abi.PluginInterPodAffinity
		pts   = abi.PluginPodTopologySpread
		vr    = abi.PluginVolumeRestrictions
		nvl   = abi.PluginNodeVolumeLimits
		vb    = abi.PluginVolumeBinding
		vz    = abi.PluginVolumeZone
		dra   = abi.PluginDynamicResources
		addUp = abi.ActionAdd | abi.ActionUpdate
	)
	want := []abi.Registration{
		{Plugin: fit, Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: fit, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable},
		{Plugin: fit, Resource: abi.ResourcePod, Actions: abi.ActionUpdatePodScaleDown},
		{Plugin: fit, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodScaleDown},
		{Plugin: aff, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel},
		{Plugin: taint, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeTaint},
		{Plugin: taint, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodToleration},
		{Plugin: unsch, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeTaint},
		{Plugin: unsch, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodToleration},
		{Plugin: ports, Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: ports, Resource: abi.ResourceNode, Actions: abi.ActionAdd},
		{Plugin: name, Resource: abi.ResourceNode, Actions: abi.ActionAdd},
		{Plugin: ndf, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeDeclaredFeature},
		{Plugin: ndf, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdate},
		{Plugin: gates, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodSchedulingGatesEliminated},
		{Plugin: gang, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionAdd},
		{Plugin: gang, Resource: abi.ResourcePod, Actions: abi.ActionAdd},
		{Plugin: gang, Resource: abi.ResourcePodGroup, Actions: abi.ActionAdd},
		{Plugin: gang, Resource: abi.ResourcePodGroup, Actions: abi.ActionUpdate},
		{Plugin: ipa, Resource: abi.ResourcePod, Actions: abi.ActionAdd | abi.ActionUpdatePodLabel | abi.ActionDelete},
		{Plugin: ipa, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodLabel},
		{Plugin: ipa, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel},
		{Plugin: pts, Resource: abi.ResourcePod, Actions: abi.ActionAdd | abi.ActionUpdatePodLabel | abi.ActionDelete},
		{Plugin: pts, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodToleration | abi.ActionUpdatePodLabel},
		{Plugin: pts, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionDelete | abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeTaint},
		{Plugin: vr, Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: vr, Resource: abi.ResourceNode, Actions: abi.ActionAdd},
		{Plugin: vr, Resource: abi.ResourcePersistentVolumeClaim, Actions: abi.ActionAdd},
		{Plugin: nvl, Resource: abi.ResourceCSINode, Actions: abi.ActionAdd},
		{Plugin: nvl, Resource: abi.ResourceCSINode, Actions: abi.ActionUpdate},
		{Plugin: nvl, Resource: abi.ResourcePod, Actions: abi.ActionDelete},
		{Plugin: nvl, Resource: abi.ResourcePersistentVolumeClaim, Actions: abi.ActionAdd},
		{Plugin: nvl, Resource: abi.ResourceVolumeAttachment, Actions: abi.ActionDelete},
		{Plugin: nvl, Resource: abi.ResourceNode, Actions: abi.ActionAdd},
		{Plugin: nvl, Resource: abi.ResourcePersistentVolumeClaim, Actions: abi.ActionUpdate},
		{Plugin: vb, Resource: abi.ResourceStorageClass, Actions: addUp},
		{Plugin: vb, Resource: abi.ResourcePersistentVolumeClaim, Actions: addUp},
		{Plugin: vb, Resource: abi.ResourcePersistentVolume, Actions: addUp},
		{Plugin: vb, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel},
		{Plugin: vb, Resource: abi.ResourceCSINode, Actions: addUp},
		{Plugin: vb, Resource: abi.ResourceCSIDriver, Actions: abi.ActionUpdate},
		{Plugin: vb, Resource: abi.ResourceCSIStorageCapacity, Actions: addUp},
		{Plugin: vz, Resource: abi.ResourceStorageClass, Actions: abi.ActionAdd},
		{Plugin: vz, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel},
		{Plugin: vz, Resource: abi.ResourcePersistentVolumeClaim, Actions: addUp},
		{Plugin: vz, Resource: abi.ResourcePersistentVolume, Actions: addUp},
		{Plugin: dra, Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeAllocatable},
		{Plugin: dra, Resource: abi.ResourceResourceClaim, Actions: abi.ActionAll},
		{Plugin: dra, Resource: abi.ResourceUnscheduledPod, Actions: abi.ActionUpdatePodGeneratedResourceClaim},
		{Plugin: dra, Resource: abi.ResourceDeviceClass, Actions: addUp},
		{Plugin: dra, Resource: abi.ResourceResourceSlice, Actions: addUp},
		{Plugin: dra, Resource: abi.ResourceDeviceTaintRule, Actions: abi.ActionAll},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) {
		if diff := cmp.Diff(want, s.QueueingHint.Registrations()); diff != "" {
			t.Errorf("Registrations (-want, +got):\n%s", diff)
		}
	})
}

func TestNodeResourcesFit(t *testing.T) {
	const fit = abi.PluginNodeResourcesFit
	const extA, extB = "example.com/aaa", "example.com/bbb"
	p := func(name string) *policytest.PodWrapper { return pending(name, fit) }
	// upstream's newResourcePod(framework.Resource{Memory: 2, ScalarResources: {extA: 1}})
	memA := func() *policytest.PodWrapper { return p("mem-a").Request("memory", 2).Request(extA, 1) }
	cases := []hintCase{
		// Test_isSchedulableAfterNodeChange
		{
			name: "skip-queue-on-node-add-without-sufficient-resources",
			ev:   policytest.NodeAdd(node().Allocatable("memory", 1).Obj()),
			pods: []*policytest.PodWrapper{p("mem").Request("memory", 2)},
			want: []abi.Hint{skip},
		},
		{
			name: "skip-queue-on-node-add-without-required-resource-type",
			ev:   policytest.NodeAdd(node().Allocatable(extB, 1).Obj()),
			pods: []*policytest.PodWrapper{p("a").Request(extA, 1)},
			want: []abi.Hint{skip},
		},
		{
			name: "queue-on-node-add-with-sufficient-resources",
			ev:   policytest.NodeAdd(node().Allocatable("memory", 4).Allocatable(extA, 2).Obj()),
			pods: []*policytest.PodWrapper{memA()},
			want: []abi.Hint{queue},
		},
		{
			name: "skip-queue-on-node-unrelated-changes",
			ev: policytest.NodeUpdate(node().Allocatable("memory", 2).Allocatable(extA, 2).Obj(),
				node().Allocatable("memory", 2).Allocatable(extA, 1).Allocatable(extB, 2).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{memA()},
			want: []abi.Hint{skip},
		},
		{
			name: "queue-on-pod-requested-resources-increase",
			ev: policytest.NodeUpdate(node().Allocatable("memory", 2).Allocatable(extA, 1).Obj(),
				node().Allocatable("memory", 2).Allocatable(extA, 2).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{memA()},
			want: []abi.Hint{queue},
		},
		{
			name: "skip-queue-on-node-changes-from-suitable-to-unsuitable",
			ev: policytest.NodeUpdate(node().Allocatable("memory", 4).Allocatable(extA, 2).Obj(),
				node().Allocatable("memory", 1).Allocatable(extA, 2).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{memA()},
			want: []abi.Hint{skip},
		},
		{
			name: "queue-on-node-changes-from-unsuitable-to-suitable",
			ev: policytest.NodeUpdate(node().Allocatable("memory", 1).Allocatable(extA, 2).Obj(),
				node().Allocatable("memory", 4).Allocatable(extA, 2).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{memA()},
			want: []abi.Hint{queue},
		},
		// The pod count and the node's requested amounts.
		{
			name: "node add: what the node's pods request counts",
			ev:   policytest.NodeAdd(node().Allocatable("cpu", 4000).Requested("cpu", 3000).Requested("pods", 3).Obj()),
			pods: []*policytest.PodWrapper{
				p("fits").Request("cpu", 1000), p("over").Request("cpu", 1001), p("no-requests"),
				p("zero").Request("cpu", 0),
			},
			want: []abi.Hint{queue, skip, queue, queue},
		},
		{
			name: "node add: a full node fits no pod",
			ev:   policytest.NodeAdd(node().Allocatable("pods", 3).Requested("pods", 3).Obj()),
			pods: []*policytest.PodWrapper{p("no-requests"), policytest.MakePod().Name("no-pods-entry").UnschedulablePlugins(fit)},
			want: []abi.Hint{skip, skip},
		},
		{
			name: "node add: a node without a pods allocatable fits no pod",
			ev:   policytest.NodeAdd(policytest.MakeNode().Name("n1").Allocatable("cpu", 4000).Obj()),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1)},
			want: []abi.Hint{skip},
		},
		{
			name: "node update: more pods allowed queues every pod that fits",
			ev: policytest.NodeUpdate(node().Allocatable("pods", 3).Requested("pods", 3).Obj(),
				node().Allocatable("pods", 4).Requested("pods", 3).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{p("no-requests"), p("cpu").Request("cpu", 1)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "node update: growth of a resource the pod does not request is not enough",
			ev: policytest.NodeUpdate(node().Allocatable("cpu", 1000).Allocatable("memory", 10).Obj(),
				node().Allocatable("cpu", 1000).Allocatable("memory", 20).Obj(), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1000), p("memory").Request("memory", 15)},
			want: []abi.Hint{skip, queue},
		},
		{
			name: "node update with allocatable among other bits",
			ev: policytest.NodeUpdate(node().Allocatable("cpu", 1000).Obj(),
				node().Allocatable("cpu", 2000).Label("a", "b").Obj(), abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1500)},
			want: []abi.Hint{queue},
		},
		{
			name: "node label update is not registered",
			ev: policytest.NodeUpdate(node().Allocatable("cpu", 1000).Obj(),
				node().Allocatable("cpu", 2000).Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1500)},
			want: []abi.Hint{skip},
		},
		{
			name: "node delete is not registered",
			ev:   policytest.NodeDelete(node().Allocatable("cpu", 1000).Obj()),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1)},
			want: []abi.Hint{skip},
		},
		{
			name: "node event without the node is an error (queued by the host)",
			ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd}),
			pods: []*policytest.PodWrapper{p("cpu").Request("cpu", 1)},
			want: []abi.Hint{herr},
		},
		// Test_isSchedulableAfterAssignedPodDelete
		{
			name: "queue-on-other-pod-deleted",
			ev:   policytest.PodDelete(bound("pod2").Request("cpu", 1000).Obj()),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{queue},
		},
		{
			name: "queue on a deleted pod that requested nothing but its pod slot",
			ev:   policytest.PodDelete(bound("pod2").Obj()),
			pods: []*policytest.PodWrapper{p("pod1").Request("memory", 1)},
			want: []abi.Hint{queue},
		},
		{
			name: "skip-queue-on-unscheduled-pod-deleted",
			ev:   policytest.PodDelete(bound("pod2").Node("").Obj()),
			pods: []*policytest.PodWrapper{p("pod1")},
			want: []abi.Hint{skip},
		},
		{
			name: "unscheduled pod delete is not registered",
			ev:   policytest.UnscheduledPodDelete(pending("pod2").Request("cpu", 1).Obj()),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1)},
			want: []abi.Hint{skip},
		},
		{
			name: "assigned pod add is not registered",
			ev:   policytest.PodAdd(bound("pod2").Obj()),
			pods: []*policytest.PodWrapper{p("pod1")},
			want: []abi.Hint{skip},
		},
		// Test_isSchedulableAfterAssignedPodScaleDown
		{
			name: "skip-queue-on-other-pod-unrelated-resource-scaled-down",
			ev: policytest.PodUpdate(bound("pod2").Request("memory", 2).Obj(), bound("pod2").Request("memory", 1).Obj(),
				abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{skip},
		},
		{
			name: "queue-on-other-pod-some-resource-scale-down",
			ev: policytest.PodUpdate(bound("pod2").Request("cpu", 2000).Obj(), bound("pod2").Request("cpu", 1000).Obj(),
				abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{queue},
		},
		{
			name: "queue when a requested resource went away",
			ev: policytest.PodUpdate(bound("pod2").Request("cpu", 2000).Request(extA, 1).Obj(), bound("pod2").Request("cpu", 2000).Obj(),
				abi.ActionUpdatePodScaleDown|abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{p("pod1").Request(extA, 1), p("pod3").Request("cpu", 1)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "skip a scale-down of a pod without a node",
			ev: policytest.PodUpdate(bound("pod2").Request("cpu", 2000).Obj(), bound("pod2").Node("").Request("cpu", 1000).Obj(),
				abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{skip},
		},
		{
			name: "assigned pod label update is not registered",
			ev: policytest.PodUpdate(bound("pod2").Request("cpu", 2000).Obj(), bound("pod2").Request("cpu", 1000).Obj(),
				abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{skip},
		},
		// Test_isSchedulableAfterTargetPodScaleDown, and
		// skip-queue-on-other-unscheduled-pod.
		{
			name: "queue-on-target-pod-some-resource-scale-down",
			ev: policytest.UnscheduledPodUpdate(pending("pod1").Request("cpu", 2000).Obj(), pending("pod1").Request("cpu", 1000).Obj(),
				abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 2000), p("pod2").Request("cpu", 1000)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "the pod's own update without a scale-down is not registered",
			ev: policytest.UnscheduledPodUpdate(pending("pod1").Request("cpu", 1000).Obj(), pending("pod1").Request("cpu", 2000).Obj(),
				abi.ActionUpdateOther),
			pods: []*policytest.PodWrapper{p("pod1").Request("cpu", 1000)},
			want: []abi.Hint{skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodeAffinity(t *testing.T) {
	const aff = abi.PluginNodeAffinity
	// upstream's st.MakePod().NodeAffinityIn("foo", []string{"bar"}, ...)
	fooBar := func() *policytest.PodWrapper {
		return pending("p", aff).RequiredAffinity(term(req("foo", abi.SelectorIn, "bar")))
	}
	labelUpdate := func(old, new *policytest.NodeWrapper) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), abi.ActionUpdateNodeLabel)
	}
	withTerms := func(name string, terms ...abi.NodeSelectorTerm) *policytest.PodWrapper {
		return pending(name, aff).RequiredAffinity(terms...)
	}
	cases := []hintCase{
		// Test_isSchedulableAfterNodeChange
		{name: "skip-queue-on-add", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{skip}},
		{name: "queue-on-add", ev: policytest.NodeAdd(node().Label("foo", "bar").Obj()),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{queue}},
		{name: "skip-unrelated-changes", ev: labelUpdate(node(), node().Allocatable("cpu", 1)),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{skip}},
		{name: "skip-unrelated-changes-on-labels", ev: labelUpdate(node(), node().Label("k", "v")),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{skip}},
		{name: "skip-labels-changes-on-node-from-suitable-to-unsuitable",
			ev:   labelUpdate(node().Label("foo", "bar"), node().Label("k", "v")),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{skip}},
		{name: "queue-on-labels-change-makes-pod-schedulable", ev: labelUpdate(node(), node().Label("foo", "bar")),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{queue}},
		{name: "skip-unrelated-change-that-keeps-pod-schedulable",
			ev:   labelUpdate(node().Label("foo", "bar"), node().Label("foo", "bar").Allocatable("cpu", 1)),
			pods: []*policytest.PodWrapper{fooBar()}, want: []abi.Hint{skip}},
		// spec.nodeSelector, alone and with an affinity.
		{
			name: "node selector: every entry must match",
			ev:   policytest.NodeAdd(node().Label("zone", "a").Label("disk", "ssd").Obj()),
			pods: []*policytest.PodWrapper{
				pending("one", aff).NodeSelector("zone", "a"),
				pending("both", aff).NodeSelector("zone", "a").NodeSelector("disk", "ssd"),
				pending("wrong-value", aff).NodeSelector("zone", "b"),
				pending("missing", aff).NodeSelector("zone", "a").NodeSelector("gpu", "yes"),
				pending("selector-and-affinity", aff).NodeSelector("zone", "a").RequiredAffinity(term(req("disk", abi.SelectorIn, "hdd"))),
				pending("nothing-required", aff),
			},
			want: []abi.Hint{queue, queue, skip, skip, skip, queue},
		},
		{
			name: "node selector: an empty value needs the label with an empty value",
			ev:   policytest.NodeAdd(node().Label("flag", "").Obj()),
			pods: []*policytest.PodWrapper{
				pending("empty", aff).NodeSelector("flag", ""),
				pending("absent", aff).NodeSelector("other", ""),
			},
			want: []abi.Hint{queue, skip},
		},
		// Operators (labels.Requirement.Matches).
		{
			name: "operators",
			ev:   policytest.NodeAdd(node().Label("zone", "a").Label("cores", "16").Label("name", "x").Obj()),
			pods: []*policytest.PodWrapper{
				withTerms("in", term(req("zone", abi.SelectorIn, "b", "a"))),
				withTerms("notin-other", term(req("zone", abi.SelectorNotIn, "b"))),
				withTerms("notin-same", term(req("zone", abi.SelectorNotIn, "a"))),
				withTerms("notin-absent", term(req("rack", abi.SelectorNotIn, "r1"))),
				withTerms("exists", term(req("zone", abi.SelectorExists))),
				withTerms("exists-absent", term(req("rack", abi.SelectorExists))),
				withTerms("doesnotexist", term(req("rack", abi.SelectorDoesNotExist))),
				withTerms("doesnotexist-present", term(req("zone", abi.SelectorDoesNotExist))),
				withTerms("gt", term(req("cores", abi.SelectorGt, "8"))),
				withTerms("gt-equal", term(req("cores", abi.SelectorGt, "16"))),
				withTerms("lt", term(req("cores", abi.SelectorLt, "32"))),
				withTerms("lt-absent", term(req("mem", abi.SelectorLt, "32"))),
				withTerms("gt-not-a-number-label", term(req("name", abi.SelectorGt, "1"))),
				withTerms("and", term(req("zone", abi.SelectorIn, "a"), req("cores", abi.SelectorGt, "20"))),
				withTerms("or", term(req("zone", abi.SelectorIn, "b")), term(req("cores", abi.SelectorGt, "8"))),
			},
			want: []abi.Hint{
				queue, queue, skip, queue, queue, skip, queue, skip, queue, skip, queue, skip, skip, skip, queue,
			},
		},
		{
			name: "matchFields: metadata.name only",
			ev:   policytest.NodeAdd(node().Label("zone", "a").Obj()),
			pods: []*policytest.PodWrapper{
				withTerms("name-in", fieldTerm(req("metadata.name", abi.SelectorIn, "n1"))),
				withTerms("name-in-other", fieldTerm(req("metadata.name", abi.SelectorIn, "n2"))),
				withTerms("name-notin", fieldTerm(req("metadata.name", abi.SelectorNotIn, "n2"))),
				withTerms("name-notin-same", fieldTerm(req("metadata.name", abi.SelectorNotIn, "n1"))),
				withTerms("other-field-reads-empty", fieldTerm(req("spec.foo", abi.SelectorIn, "n1"))),
				withTerms("other-field-notin", fieldTerm(req("spec.foo", abi.SelectorNotIn, "n1"))),
				withTerms("fields-and-labels", abi.NodeSelectorTerm{
					MatchExpressions: []abi.Requirement{req("zone", abi.SelectorIn, "a")},
					MatchFields:      []abi.Requirement{req("metadata.name", abi.SelectorIn, "n2")},
				}),
			},
			want: []abi.Hint{queue, skip, queue, skip, skip, queue, skip},
		},
		{
			name: "empty terms match nothing, other terms still can",
			ev:   policytest.NodeAdd(node().Label("zone", "a").Obj()),
			pods: []*policytest.PodWrapper{
				withTerms("only-empty", abi.NodeSelectorTerm{}),
				withTerms("empty-and-matching", abi.NodeSelectorTerm{}, term(req("zone", abi.SelectorExists))),
			},
			want: []abi.Hint{skip, queue},
		},
		// Malformed terms (upstream: parse errors, reported when no term
		// matches; the hint returns them with Queue).
		{
			name: "malformed terms",
			ev:   policytest.NodeAdd(node().Label("zone", "a").Obj()),
			pods: []*policytest.PodWrapper{
				withTerms("unknown-operator", term(req("zone", abi.SelectorUnknown, "a"))),
				withTerms("in-without-values", term(req("zone", abi.SelectorIn))),
				withTerms("exists-with-values", term(req("zone", abi.SelectorExists, "a"))),
				withTerms("gt-not-an-integer", term(req("zone", abi.SelectorGt, "x"))),
				withTerms("gt-two-values", term(req("zone", abi.SelectorGt, "1", "2"))),
				withTerms("gt-negative-is-no-label-value", term(req("zone", abi.SelectorGt, "-1"))),
				withTerms("bad-key", term(req("bad key", abi.SelectorExists))),
				withTerms("bad-value", term(req("zone", abi.SelectorIn, "a", "not valid"))),
				withTerms("field-two-values", fieldTerm(req("metadata.name", abi.SelectorIn, "n1", "n2"))),
				withTerms("field-exists", fieldTerm(req("metadata.name", abi.SelectorExists))),
				withTerms("malformed-but-another-matches", term(req("zone", abi.SelectorUnknown)), term(req("zone", abi.SelectorIn, "a"))),
				withTerms("malformed-and-another-fails", term(req("zone", abi.SelectorUnknown)), term(req("zone", abi.SelectorIn, "b"))),
				pending("selector-fails-first", aff).NodeSelector("zone", "b").RequiredAffinity(term(req("zone", abi.SelectorUnknown))),
			},
			want: []abi.Hint{herr, herr, herr, herr, herr, herr, herr, herr, herr, herr, queue, herr, skip},
		},
		{
			name: "taint update is not registered",
			ev:   policytest.NodeUpdate(node().Obj(), node().Label("foo", "bar").Obj(), abi.ActionUpdateNodeTaint),
			pods: []*policytest.PodWrapper{fooBar()},
			want: []abi.Hint{skip},
		},
		{
			name: "label update among other bits",
			ev:   policytest.NodeUpdate(node().Obj(), node().Label("foo", "bar").Obj(), abi.ActionUpdateNodeTaint|abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{fooBar()},
			want: []abi.Hint{queue},
		},
		{
			name: "a pod rejected by another plugin is not asked",
			ev:   policytest.NodeAdd(node().Label("foo", "bar").Taint("k", "", abi.EffectNoSchedule).Obj()),
			pods: []*policytest.PodWrapper{
				pending("other", abi.PluginTaintToleration).RequiredAffinity(term(req("foo", abi.SelectorIn, "bar"))),
				pending("pending-plugin", abi.PluginTaintToleration).PendingPlugins(aff).RequiredAffinity(term(req("foo", abi.SelectorIn, "bar"))),
			},
			want: []abi.Hint{skip, queue},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestTaintToleration(t *testing.T) {
	const tt = abi.PluginTaintToleration
	// upstream's podWithTolerations("pod1", {dedicated=user2:NoSchedule})
	user2 := func() *policytest.PodWrapper {
		return pending("pod1", tt).Toleration("dedicated", "user2", abi.TolerationEqual, abi.EffectNoSchedule)
	}
	tainted := func(taints ...abi.Taint) *policytest.NodeWrapper {
		n := node()
		for _, t := range taints {
			n.Taint(t.Key, t.Value, t.Effect)
		}
		return n
	}
	dedicated := func(v string) abi.Taint {
		return abi.Taint{Key: "dedicated", Value: v, Effect: abi.EffectNoSchedule}
	}
	taintUpdate := func(old, new *policytest.NodeWrapper) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), abi.ActionUpdateNodeTaint)
	}
	cases := []hintCase{
		// TestIsSchedulableAfterNodeChange
		{name: "skip-queue-on-untoleratedtaint-node-added", ev: policytest.NodeAdd(tainted(dedicated("user1")).Obj()),
			pods: []*policytest.PodWrapper{user2()}, want: []abi.Hint{skip}},
		{name: "queue-on-toleratedtaint-node-added", ev: policytest.NodeAdd(tainted(dedicated("user2")).Obj()),
			pods: []*policytest.PodWrapper{user2()}, want: []abi.Hint{queue}},
		{name: "skip-unrelated-change",
			ev:   taintUpdate(tainted(dedicated("user1")), tainted(dedicated("user1"), dedicated("user3"))),
			pods: []*policytest.PodWrapper{user2()}, want: []abi.Hint{skip}},
		{name: "queue-on-taint-change", ev: taintUpdate(tainted(dedicated("user1")), tainted(dedicated("user2"))),
			pods: []*policytest.PodWrapper{user2()}, want: []abi.Hint{queue}},
		{name: "skip a change from tolerated to tolerated", ev: taintUpdate(tainted(), tainted(dedicated("user2"))),
			pods: []*policytest.PodWrapper{user2()}, want: []abi.Hint{skip}},
		// Which taints block, and which tolerations tolerate them
		// (v1.Toleration.ToleratesTaint).
		{
			name: "only NoSchedule and NoExecute taints block",
			ev: policytest.NodeAdd(tainted(
				abi.Taint{Key: "soft", Effect: abi.EffectPreferNoSchedule},
				abi.Taint{Key: "future", Effect: abi.EffectUnknown}).Obj()),
			pods: []*policytest.PodWrapper{pending("none", tt)},
			want: []abi.Hint{queue},
		},
		{
			name: "tolerations",
			ev:   policytest.NodeAdd(tainted(abi.Taint{Key: "k", Value: "v", Effect: abi.EffectNoExecute}).Obj()),
			pods: []*policytest.PodWrapper{
				pending("none", tt),
				pending("equal", tt).Toleration("k", "v", abi.TolerationEqual, abi.EffectNoExecute),
				pending("equal-other-value", tt).Toleration("k", "w", abi.TolerationEqual, abi.EffectNoExecute),
				pending("exists", tt).Toleration("k", "", abi.TolerationExists, abi.EffectNoExecute),
				pending("other-effect", tt).Toleration("k", "", abi.TolerationExists, abi.EffectNoSchedule),
				pending("every-effect", tt).Toleration("k", "v", abi.TolerationEqual, abi.EffectNone),
				pending("every-key", tt).Toleration("", "", abi.TolerationExists, abi.EffectNone),
				pending("other-key", tt).Toleration("j", "", abi.TolerationExists, abi.EffectNone),
				pending("unknown-operator", tt).Toleration("k", "v", abi.TolerationUnknown, abi.EffectNone),
				pending("unknown-effect", tt).Toleration("k", "", abi.TolerationExists, abi.EffectUnknown),
			},
			want: []abi.Hint{skip, queue, skip, queue, skip, queue, queue, skip, skip, skip},
		},
		{
			name: "every blocking taint must be tolerated",
			ev: policytest.NodeAdd(tainted(abi.Taint{Key: "a", Effect: abi.EffectNoSchedule},
				abi.Taint{Key: "b", Effect: abi.EffectNoExecute}).Obj()),
			pods: []*policytest.PodWrapper{
				pending("a", tt).Toleration("a", "", abi.TolerationExists, abi.EffectNone),
				pending("a-b", tt).Toleration("a", "", abi.TolerationExists, abi.EffectNone).Toleration("b", "", abi.TolerationExists, abi.EffectNone),
			},
			want: []abi.Hint{skip, queue},
		},
		{
			name: "Lt and Gt compare canonical integers",
			ev:   policytest.NodeAdd(tainted(abi.Taint{Key: "tier", Value: "5", Effect: abi.EffectNoSchedule}).Obj()),
			pods: []*policytest.PodWrapper{
				pending("lt-10", tt).Toleration("tier", "10", abi.TolerationLt, abi.EffectNoSchedule),
				pending("lt-5", tt).Toleration("tier", "5", abi.TolerationLt, abi.EffectNoSchedule),
				pending("gt-3", tt).Toleration("tier", "3", abi.TolerationGt, abi.EffectNoSchedule),
				pending("gt-negative", tt).Toleration("tier", "-3", abi.TolerationGt, abi.EffectNoSchedule),
				pending("gt-leading-zero", tt).Toleration("tier", "03", abi.TolerationGt, abi.EffectNoSchedule),
				pending("gt-plus", tt).Toleration("tier", "+3", abi.TolerationGt, abi.EffectNoSchedule),
				pending("gt-not-a-number", tt).Toleration("tier", "x", abi.TolerationGt, abi.EffectNoSchedule),
			},
			want: []abi.Hint{queue, skip, queue, queue, skip, skip, skip},
		},
		{
			name: "Lt and Gt need an integer taint value",
			ev:   policytest.NodeAdd(tainted(abi.Taint{Key: "tier", Value: "05", Effect: abi.EffectNoSchedule}).Obj()),
			pods: []*policytest.PodWrapper{pending("lt-10", tt).Toleration("tier", "10", abi.TolerationLt, abi.EffectNoSchedule)},
			want: []abi.Hint{skip},
		},
		{
			name: "label update is not registered",
			ev:   policytest.NodeUpdate(tainted(dedicated("user1")).Obj(), tainted().Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{user2()},
			want: []abi.Hint{skip},
		},
		// Test_isSchedulableAfterTargetPodTolerationChange
		{
			name: "queue-on-toleration-added",
			ev: policytest.UnscheduledPodUpdate(pending("pod1").Obj(),
				pending("pod1").Toleration("foo", "", abi.TolerationEqual, abi.EffectNoSchedule).Obj(), abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{pending("pod1", tt), pending("pod2", tt)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "the pod is recognised by namespace and name without a UID",
			ev: policytest.UnscheduledPodUpdate(pending("pod1").UID("").Obj(),
				pending("pod1").UID("").Toleration("foo", "", abi.TolerationExists, abi.EffectNone).Obj(), abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{pending("pod1", tt).UID(""), pending("pod1", tt).UID("").Namespace("other")},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "an assigned pod's toleration update is not registered",
			ev: policytest.PodUpdate(bound("pod1").Obj(),
				bound("pod1").Toleration("foo", "", abi.TolerationExists, abi.EffectNone).Obj(), abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{pending("pod1", tt)},
			want: []abi.Hint{skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodeUnschedulable(t *testing.T) {
	const nu = abi.PluginNodeUnschedulable
	p := func() *policytest.PodWrapper { return pending("pod1", nu) }
	taintUpdate := func(old, new *policytest.NodeWrapper) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), abi.ActionUpdateNodeTaint)
	}
	notReady := func(n *policytest.NodeWrapper) *policytest.NodeWrapper {
		return n.Taint("node.kubernetes.io/not-ready", "", abi.EffectNoExecute)
	}
	tolerationUpdate := func(tols ...abi.Toleration) abi.EventView {
		new := pending("pod1")
		for _, t := range tols {
			new.Toleration(t.Key, t.Value, t.Operator, t.Effect)
		}
		return policytest.UnscheduledPodUpdate(pending("pod1").Obj(), new.Obj(), abi.ActionUpdatePodToleration)
	}
	cases := []hintCase{
		// TestIsSchedulableAfterNodeChange
		{name: "skip-queue-on-unschedulable-node-added", ev: policytest.NodeAdd(node().Unschedulable().Obj()),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{skip}},
		{name: "queue-on-schedulable-node-added", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{queue}},
		{name: "skip-unrelated-change-unschedulable-true", ev: taintUpdate(node().Unschedulable(), notReady(node().Unschedulable())),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{skip}},
		{name: "skip-unrelated-change-unschedulable-false", ev: taintUpdate(node(), notReady(node())),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{skip}},
		{name: "queue-on-unschedulable-field-change", ev: taintUpdate(node().Unschedulable(), node()),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{queue}},
		{name: "label update is not registered", ev: policytest.NodeUpdate(node().Unschedulable().Obj(), node().Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{p()}, want: []abi.Hint{skip}},
		// TestIsSchedulableAfterPodTolerationChange
		{
			name: "queue-when-the-unsched-pod-gets-toleration",
			ev:   tolerationUpdate(abi.Toleration{Key: "node.kubernetes.io/unschedulable", Operator: abi.TolerationExists, Effect: abi.EffectNoSchedule}),
			pods: []*policytest.PodWrapper{p(), pending("pod2", nu)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "skip-when-the-unsched-pod-gets-unrelated-toleration",
			ev:   tolerationUpdate(abi.Toleration{Key: "unrelated-key", Operator: abi.TolerationExists, Effect: abi.EffectNoSchedule}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "queue when the pod gets a toleration of everything",
			ev:   tolerationUpdate(abi.Toleration{Operator: abi.TolerationExists}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{queue},
		},
		{
			name: "skip a toleration of the key with another effect",
			ev:   tolerationUpdate(abi.Toleration{Key: "node.kubernetes.io/unschedulable", Operator: abi.TolerationExists, Effect: abi.EffectNoExecute}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodePorts(t *testing.T) {
	const np = abi.PluginNodePorts
	// upstream's st.MakePod().HostPort(8080)
	want8080 := func() *policytest.PodWrapper { return pending("p", np).HostPort("", 8080, abi.ProtocolTCP) }
	// upstream's newPod("m1", "TCP/127.0.0.1/80") and friends
	wants := func(name string, ports ...abi.HostPort) *policytest.PodWrapper {
		w := pending(name, np)
		for _, hp := range ports {
			w.HostPort(hp.HostIP, hp.Port, hp.Protocol)
		}
		return w
	}
	deleted := func(ports ...abi.HostPort) abi.EventView {
		w := bound("gone")
		for _, hp := range ports {
			w.HostPort(hp.HostIP, hp.Port, hp.Protocol)
		}
		return policytest.PodDelete(w.Obj())
	}
	tcp := func(ip string, port int32) abi.HostPort {
		return abi.HostPort{HostIP: ip, Port: port, Protocol: abi.ProtocolTCP}
	}
	cases := []hintCase{
		// Test_isSchedulableAfterAssignedPodDeleted
		{name: "skip-queue-on-unscheduled", ev: policytest.PodDelete(bound("gone").Node("").HostPort("", 8080, abi.ProtocolTCP).Obj()),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{skip}},
		{name: "skip-queue-on-non-hostport", ev: deleted(),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{skip}},
		{name: "skip-queue-on-unrelated-hostport", ev: deleted(tcp("", 8081)),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{skip}},
		{name: "queue-on-released-hostport", ev: deleted(tcp("", 8080)),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{queue}},
		// TestFits, read as "the deleted pod held these ports".
		{
			name: "conflicts",
			ev:   deleted(tcp("127.0.0.1", 9090), tcp("127.0.0.1", 9191), tcp("127.0.1.1", 8080)),
			pods: []*policytest.PodWrapper{
				wants("non-conflicting", tcp("127.0.0.1", 80)),
				wants("multiple-non-conflicting", tcp("127.0.0.1", 80), tcp("127.0.1.1", 80), tcp("127.0.1.1", 90)),
				wants("some-conflicting", tcp("127.0.0.1", 80), tcp("127.0.1.1", 8080)),
				wants("all-addresses-conflicts-with-any", tcp("0.0.0.0", 9090)),
				wants("empty-address-is-all-addresses", tcp("", 9191)),
				wants("other-address", tcp("127.0.0.2", 9090)),
			},
			want: []abi.Hint{skip, skip, queue, queue, queue, skip},
		},
		{
			name: "protocols and addresses",
			ev:   deleted(abi.HostPort{HostIP: "127.0.0.1", Port: 80, Protocol: abi.ProtocolUDP}, tcp("", 81)),
			pods: []*policytest.PodWrapper{
				wants("same-port-other-protocol", tcp("127.0.0.1", 80)),
				wants("same-protocol", abi.HostPort{HostIP: "127.0.0.1", Port: 80, Protocol: abi.ProtocolUDP}),
				wants("any-address-in-use", tcp("10.0.0.1", 81)),
				wants("sctp", abi.HostPort{Port: 81, Protocol: abi.ProtocolSCTP}),
			},
			want: []abi.Hint{skip, queue, queue, skip},
		},
		{
			name: "an unknown protocol conflicts with nothing",
			ev:   deleted(abi.HostPort{Port: 80, Protocol: abi.ProtocolUnknown}),
			pods: []*policytest.PodWrapper{wants("unknown", abi.HostPort{Port: 80, Protocol: abi.ProtocolUnknown})},
			want: []abi.Hint{skip},
		},
		// Node/Add has no hint upstream: always Queue.
		{name: "node added", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{queue}},
		{name: "node update is not registered", ev: policytest.NodeUpdate(node().Obj(), node().Label("a", "b").Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{skip}},
		{name: "assigned pod update is not registered", ev: policytest.PodUpdate(bound("gone").HostPort("", 8080, abi.ProtocolTCP).Obj(),
			bound("gone").Obj(), abi.ActionUpdateOther), pods: []*policytest.PodWrapper{want8080()}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodeName(t *testing.T) {
	cases := []hintCase{
		{name: "node added", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{pending("p", abi.PluginNodeName)}, want: []abi.Hint{queue}},
		{name: "node update is not registered", ev: policytest.NodeUpdate(node().Obj(), node().Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{pending("p", abi.PluginNodeName)}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodeDeclaredFeatures(t *testing.T) {
	const ndf = abi.PluginNodeDeclaredFeatures
	cases := []hintCase{
		{name: "node added", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{queue}},
		{name: "declared features changed", ev: policytest.NodeUpdate(node().Obj(), node().Obj(), abi.ActionUpdateNodeDeclaredFeature),
			pods: []*policytest.PodWrapper{pending("p", ndf), pending("other", abi.PluginNodeName)}, want: []abi.Hint{queue, skip}},
		{name: "declared features among other bits", ev: policytest.NodeUpdate(node().Obj(), node().Label("a", "b").Obj(),
			abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeDeclaredFeature),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{queue}},
		{name: "UpdateOther (the host's spec.podPreemptionPolicy change) is not registered",
			ev:   policytest.NodeUpdate(node().Obj(), node().Obj(), abi.ActionUpdateOther),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{skip}},
		{name: "label update is not registered", ev: policytest.NodeUpdate(node().Obj(), node().Label("a", "b").Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{skip}},
		// The pod's own update (upstream's TargetPod/Update): Queue when the
		// features it needs changed.
		{name: "own update that changed the features",
			ev: policytest.UnscheduledPodUpdate(pending("p", ndf).RequiredFeatures("RestartAllContainers").Obj(),
				pending("p", ndf).Obj(), abi.ActionUpdateOther),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{queue}},
		{name: "own update that kept the features",
			ev: policytest.UnscheduledPodUpdate(pending("p", ndf).RequiredFeatures("RestartAllContainers").Obj(),
				pending("p", ndf).RequiredFeatures("RestartAllContainers").Label("a", "b").Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{pending("p", ndf).RequiredFeatures("RestartAllContainers")}, want: []abi.Hint{skip}},
		{name: "another pod's update",
			ev: policytest.UnscheduledPodUpdate(pending("q", ndf).RequiredFeatures("RestartAllContainers").Obj(),
				pending("q", ndf).Obj(), abi.ActionUpdateOther),
			pods: []*policytest.PodWrapper{pending("p", ndf)}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestSchedulingGates(t *testing.T) {
	const sg = abi.PluginSchedulingGates
	gated := func() *policytest.PodWrapper { return pending("p").SchedulingGates("foo") }
	cases := []hintCase{
		// TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated
		{
			name: "queue on the pod's own last gate removed",
			ev:   policytest.UnscheduledPodUpdate(gated().Obj(), pending("p").Obj(), abi.ActionUpdatePodSchedulingGatesEliminated),
			pods: []*policytest.PodWrapper{gated().UnschedulablePlugins(sg), pending("other", sg).SchedulingGates("foo")},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "another update of the pod is not registered",
			ev:   policytest.UnscheduledPodUpdate(gated().Obj(), gated().Label("a", "b").Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{gated().UnschedulablePlugins(sg)},
			want: []abi.Hint{skip},
		},
		{
			name: "a pending plugin is asked too",
			ev:   policytest.UnscheduledPodUpdate(gated().Obj(), pending("p").Obj(), abi.ActionUpdatePodSchedulingGatesEliminated|abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{gated().PendingPlugins(sg)},
			want: []abi.Hint{queue},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestGangScheduling(t *testing.T) {
	const gs = abi.PluginGangScheduling
	member := func(ns, name, group string) *policytest.PodWrapper {
		return policytest.MakePod().Namespace(ns).Name(name).UID("uid-"+ns+"-"+name).UnschedulablePlugins(gs).Group(group, 3)
	}
	pg := func(ns, name string, minCount int32) *abi.PodGroup {
		return policytest.MakePodGroup().Namespace(ns).Name(name).MinCount(minCount).Obj()
	}
	added := func(ns, group string) *abi.Pod {
		return policytest.MakePod().Namespace(ns).Name("new").UID("uid-new").Group(group, 3).Obj()
	}
	update := func(old, new int32) abi.EventView {
		return policytest.PodGroupUpdate(pg("ns1", "pg", old), pg("ns1", "pg", new), abi.ActionUpdateOther)
	}
	cases := []hintCase{
		// Test_isSchedulableAfterPodAdded
		{
			name: "add a newPod which matches the pod's scheduling group",
			ev:   policytest.UnscheduledPodAdd(added("ns1", "pg")),
			pods: []*policytest.PodWrapper{
				member("ns1", "p", "pg"),
				member("ns2", "p", "pg"),  // doesn't match the pod's namespace
				member("ns1", "q", "pg1"), // doesn't match the pod's pod group name
				member("ns1", "r", ""),    // no group
			},
			want: []abi.Hint{queue, skip, skip, skip},
		},
		{
			name: "add a newPod with NodeName set which matches the pod's scheduling group",
			ev:   policytest.PodAdd(policytest.MakePod().Namespace("ns1").Name("new").Node("node1").Group("pg", 3).Obj()),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg"), member("ns1", "q", "pg2")},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "add a newPod without a scheduling group",
			ev:   policytest.UnscheduledPodAdd(added("ns1", "")),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")},
			want: []abi.Hint{skip},
		},
		// Test_isSchedulableAfterPodGroupAdded
		{
			name: "add a pod group",
			ev:   policytest.PodGroupAdd(pg("ns1", "pg", 1)),
			pods: []*policytest.PodWrapper{
				member("ns1", "p", "pg"),
				member("ns1", "q", "pg1"), // doesn't match the pod's scheduling group name
				member("ns2", "p", "pg"),  // doesn't match the pod's scheduling group namespace
				member("ns1", "r", ""),
			},
			want: []abi.Hint{queue, skip, skip, skip},
		},
		// Test_isSchedulableAfterPodGroupUpdated
		{name: "minCount decreased matches target pod", ev: update(4, 3),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{queue}},
		{name: "update Basic policy", ev: update(0, 0),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "from gang to Basic policy", ev: update(4, 0),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "minCount increased matches target pod", ev: update(3, 4),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "minCount unchanged matches target pod", ev: update(3, 3),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "minCount decreased but pod group name doesn't match target pod", ev: update(4, 3),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg-other")}, want: []abi.Hint{skip}},
		{name: "minCount decreased but pod group namespace doesn't match target pod", ev: update(4, 3),
			pods: []*policytest.PodWrapper{member("ns-other", "p", "pg")}, want: []abi.Hint{skip}},
		// Unregistered events.
		{name: "pod group delete is not registered", ev: policytest.PodGroupDelete(pg("ns1", "pg", 3)),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "pod delete is not registered", ev: policytest.PodDelete(bound("gone").Namespace("ns1").Group("pg", 3).Obj()),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "pod update is not registered", ev: policytest.UnscheduledPodUpdate(added("ns1", "pg"), added("ns1", "pg"), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{skip}},
		{name: "pod group event without the group is an error",
			ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePodGroup, Action: abi.ActionAdd}),
			pods: []*policytest.PodWrapper{member("ns1", "p", "pg")}, want: []abi.Hint{herr}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

// ported is one of upstream's cases for one pending pod. upstream is
// upstream's answer and want this module's; where they differ, why says
// what upstream decides with that the ABI does not carry, and the case's
// name says so.
func ported(name string, ev abi.EventView, p *policytest.PodWrapper, upstream, want abi.Hint, why string) hintCase {
	if (upstream != want) != (why != "") {
		panic("ported case " + name + ": give why exactly when the answers differ")
	}
	if why != "" {
		names := [...]string{abi.HintSkip: "Skip", abi.HintQueue: "Queue", abi.HintError: "Error"}
		name += " [upstream " + names[upstream] + ": " + why + "]"
	}
	return hintCase{name: name, ev: ev, pods: []*policytest.PodWrapper{p}, want: []abi.Hint{want}}
}

// Why the InterPodAffinity and PodTopologySpread cases differ from upstream.
const (
	byTerms       = "decided by the pod's affinity terms"
	byConstraints = "decided by the pod's spread constraints"
	byNominated   = "a nominated pod counts as assigned; the ABI has no nominatedNodeName and the host sends bound pods only"
)

func TestInterPodAffinity(t *testing.T) {
	const ipa = abi.PluginInterPodAffinity
	// The pending pod: upstream's carries affinity or anti-affinity terms,
	// which the record of an older host (ABI minor 3) cannot hold; these
	// cases pin what the hints do for one. TestSelectiveHints has the
	// terms.
	p := func() *policytest.PodWrapper { return pending("p", ipa).OfMinor(3) }
	other := func() *policytest.PodWrapper { return bound("other").Node("fake-node") }
	unscheduled := func() *policytest.PodWrapper { return bound("other").Node("") }
	add := func(w *policytest.PodWrapper) abi.EventView { return policytest.PodAdd(w.Obj()) }
	del := func(w *policytest.PodWrapper) abi.EventView { return policytest.PodDelete(w.Obj()) }
	relabel := func(old, new *policytest.PodWrapper) abi.EventView {
		return policytest.PodUpdate(old.Obj(), new.Obj(), abi.ActionUpdatePodLabel)
	}
	nodeA := func() *policytest.NodeWrapper { return policytest.MakeNode().Name("node-a") }
	nodeLabels := func(old, new *policytest.NodeWrapper) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), abi.ActionUpdateNodeLabel)
	}
	cases := []hintCase{
		// Test_isSchedulableAfterAssignedPodChange
		ported("add a pod which matches the pod affinity", add(other().Label("service", "securityscan")), p(), queue, queue, ""),
		ported("add an un-scheduled pod", add(unscheduled().Label("service", "securityscan")), p(), skip, skip, ""),
		ported("add a pod which doesn't match the pod affinity", add(other().Label("aaa", "a")), p(), skip, queue, byTerms),
		ported("update a pod from non-match to match pod affinity",
			relabel(other().Label("aaa", "a"), other().Label("service", "securityscan")), p(), queue, queue, ""),
		ported("the updating pod matches target pod's affinity both before and after label changes",
			relabel(other().Label("service", "value2"), other().Label("service", "securityscan")), p(), skip, queue, byTerms),
		ported("update an un-scheduled pod",
			relabel(unscheduled().Label("aaa", "a"), unscheduled().Label("service", "securityscan")), p(), skip, skip, ""),
		ported("update a pod from match to non-match the pod affinity",
			relabel(other().Label("service", "securityscan"), other().Label("aaa", "a")), p(), skip, queue, byTerms),
		ported("update a pod from match to non-match pod's affinity - multiple terms case",
			relabel(other().Label("aaa", "a"), other().Label("service", "securityscan")), p(), skip, queue, byTerms),
		ported("update a pod from non-match to match pod's affinity - multiple terms case",
			relabel(other().Label("aaa", "a"), other().Label("aaa", "").Label("bbb", "")), p(), queue, queue, ""),
		ported("modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
			relabel(other().Label("service", "securityscan"), other().Label("service", "aaaa")), p(), queue, queue, ""),
		ported("modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
			relabel(other().Label("service", "bbb"), other().Label("service", "securityscan")), p(), skip, queue, byTerms),
		ported("delete a pod which doesn't match pod's anti-affinity", del(other().Label("aaa", "a")), p(), skip, queue, byTerms),
		ported("delete a pod which matches pod's anti-affinity", del(other().Label("service", "securityscan")), p(), queue, queue, ""),
		ported("delete a pod with anti-affinity that matches pending pod", del(other()),
			p().Label("service", "securityscan"), queue, queue, ""),
		ported("delete a pod with anti-affinity that doesn't match pending pod", del(other()),
			p().Label("service", "foo"), skip, queue, "decided by the deleted pod's anti-affinity terms"),
		ported("delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
			del(other().Label("service", "foo")), p().Label("service", "foo"), skip, queue, byTerms),
		ported("delete a nominated pod which doesn't match pod's anti-affinity", del(unscheduled().Label("aaa", "a")), p(), skip, skip, ""),
		ported("delete a nominated pod which matches pod's anti-affinity",
			del(unscheduled().Label("service", "securityscan")), p(), queue, skip, byNominated),
		ported("modify pod label to change it from matching only one of target pod's anti-affinity terms to matching none",
			relabel(other().Label("service", "securityscan").Label("app", "bar"), other().Label("service", "foo").Label("app", "bar")),
			p(), queue, queue, ""),
		ported("modify pod label but it still matches one of target pod's anti-affinity terms",
			relabel(other().Label("service", "securityscan").Label("app", "bar"), other().Label("service", "foo").Label("app", "web")),
			p(), skip, queue, byTerms),
		ported("delete a pod which matches only one of target pod's anti-affinity terms",
			del(other().Label("service", "securityscan")), p(), queue, queue, ""),
		ported("delete a pod with anti-affinity that matches pending pod on only one term",
			del(other()), p().Label("service", "securityscan"), queue, queue, ""),
		// What upstream skips whatever the terms: an update that leaves the
		// labels as they were (in another order, or with other bits).
		{
			name: "update with the same labels",
			ev: policytest.PodUpdate(other().Label("a", "1").Label("b", "2").Request("cpu", 2).Obj(),
				other().Label("b", "2").Label("a", "1").Request("cpu", 1).Obj(), abi.ActionUpdatePodLabel|abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "an update whose old pod had no node",
			ev:   relabel(unscheduled().Label("a", "1"), other().Label("a", "2")),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "assigned pod scale-down is not registered",
			ev:   policytest.PodUpdate(other().Request("cpu", 2).Obj(), other().Request("cpu", 1).Obj(), abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "unscheduled pod add is not registered",
			ev:   policytest.UnscheduledPodAdd(pending("new").Label("service", "securityscan").Obj()),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "pod event without the pod is an error (queued by the host)",
			ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePod, Action: abi.ActionAdd}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{herr},
		},
		{
			name: "a pod rejected by another plugin is not asked",
			ev:   add(other()),
			pods: []*policytest.PodWrapper{pending("q", abi.PluginNodeAffinity), pending("r", abi.PluginNodeAffinity).PendingPlugins(ipa).OfMinor(3)},
			want: []abi.Hint{skip, queue},
		},
		// Test_isSchedulableAfterTargetPodUpdateLabel, and the updates of
		// other pending pods, which upstream does not hand to this pod.
		{
			name: "the pod's own label update",
			ev:   policytest.UnscheduledPodUpdate(pending("p").Label("foo", "bar").Obj(), pending("p").Label("foo", "baz").Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{p().Label("foo", "baz"), pending("other", ipa)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "the pod's own toleration update is not registered",
			ev:   policytest.UnscheduledPodUpdate(pending("p").Obj(), pending("p").Toleration("k", "", abi.TolerationExists, abi.EffectNone).Obj(), abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		// Test_isSchedulableAfterNodeChange: affinity
		ported("add a new node with matched pod affinity topologyKey", policytest.NodeAdd(nodeA().Label("zone", "zone1").Obj()),
			p(), queue, queue, ""),
		ported("add a new node without matched topologyKey", policytest.NodeAdd(nodeA().Label("zone", "zone1").Obj()),
			p(), skip, queue, byTerms),
		ported("update node label but not topologyKey", nodeLabels(nodeA().Label("aaa", "a"), nodeA().Label("aaa", "b")),
			p(), skip, queue, byTerms),
		ported("update node label that isn't related to the pod affinity",
			nodeLabels(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone1").Label("unrelated-label", "unrelated")),
			p(), skip, queue, byTerms),
		ported("update node with different affinity topologyKey value",
			nodeLabels(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone2")), p(), queue, queue, ""),
		ported("update node to have the affinity topology label",
			nodeLabels(nodeA().Label("aaa", "a"), nodeA().Label("zone", "zone1")), p(), queue, queue, ""),
		// Test_isSchedulableAfterNodeChange: anti-affinity
		ported("add a new node with matched pod anti-affinity topologyKey", policytest.NodeAdd(nodeA().Label("zone", "zone1").Obj()),
			p(), queue, queue, ""),
		ported("add a new node without matched pod anti-affinity topologyKey", policytest.NodeAdd(nodeA().Obj()),
			p(), queue, queue, ""),
		ported("update node label that isn't related to the pod anti-affinity",
			nodeLabels(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone1").Label("unrelated-label", "unrelated")),
			p(), skip, queue, byTerms),
		ported("update node with different anti-affinity topologyKey value",
			nodeLabels(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone2")), p(), queue, queue, ""),
		ported("update node to have the anti-affinity topology label",
			nodeLabels(nodeA().Label("aaa", "a"), nodeA().Label("zone", "zone1")), p(), skip, queue, byTerms),
		ported("update node label not to have anti-affinity topology label",
			nodeLabels(nodeA().Label("zone", "zone1"), nodeA().Label("aaa", "a")), p(), queue, queue, ""),
		// What upstream skips whatever the terms, and unregistered events.
		{
			name: "node update with the same labels",
			ev: policytest.NodeUpdate(nodeA().Label("zone", "zone1").Label("aaa", "a").Obj(),
				nodeA().Label("aaa", "a").Label("zone", "zone1").Taint("k", "", abi.EffectNoSchedule).Obj(), abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "node taint update is not registered",
			ev:   policytest.NodeUpdate(nodeA().Obj(), nodeA().Label("zone", "zone1").Obj(), abi.ActionUpdateNodeTaint),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "node delete is not registered",
			ev:   policytest.NodeDelete(nodeA().Label("zone", "zone1").Obj()),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestPodTopologySpread(t *testing.T) {
	const pts = abi.PluginPodTopologySpread
	// The pending pod: upstream's carries DoNotSchedule constraints (on
	// "zone", some on "node" too, selecting pods with the label foo or
	// bar), which its record cannot hold.
	// An older host's record (ABI minor 3), without the constraints; see
	// TestSelectiveHints for records with them.
	p := func() *policytest.PodWrapper { return pending("p", pts).Label("foo", "").OfMinor(3) }
	p2 := func() *policytest.PodWrapper { return bound("p2").Node("fake-node") }
	unscheduled := func() *policytest.PodWrapper { return bound("p2").Node("") }
	add := func(w *policytest.PodWrapper) abi.EventView { return policytest.PodAdd(w.Obj()) }
	del := func(w *policytest.PodWrapper) abi.EventView { return policytest.PodDelete(w.Obj()) }
	relabel := func(old, new *policytest.PodWrapper) abi.EventView {
		return policytest.PodUpdate(old.Obj(), new.Obj(), abi.ActionUpdatePodLabel)
	}
	nodeA := func() *policytest.NodeWrapper { return policytest.MakeNode().Name("node-a") }
	nodeUpdate := func(old, new *policytest.NodeWrapper, act abi.ActionType) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), act)
	}
	const labelBits, taintBits = abi.ActionUpdateNodeLabel, abi.ActionUpdateNodeTaint
	taint := func(key string) abi.Taint { return abi.Taint{Key: key, Value: "bbb", Effect: abi.EffectNoSchedule} }
	tainted := func(w *policytest.NodeWrapper, t abi.Taint) *policytest.NodeWrapper {
		return w.Taint(t.Key, t.Value, t.Effect)
	}
	self := func(old, new *policytest.PodWrapper, act abi.ActionType) abi.EventView {
		return policytest.UnscheduledPodUpdate(old.Obj(), new.Obj(), act)
	}
	cases := []hintCase{
		// Test_isSchedulableAfterNodeChange
		ported("node updates label which matches topologyKey",
			nodeUpdate(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone2"), labelBits), p(), queue, queue, ""),
		ported("node that doesn't match topologySpreadConstraints updates non-related label",
			nodeUpdate(nodeA().Label("foo", "bar1"), nodeA().Label("foo", "bar2"), labelBits), p(), skip, queue, byConstraints),
		ported("node that match topologySpreadConstraints adds non-related label",
			nodeUpdate(nodeA().Label("zone", "zone1").Label("node", "node1").Label("foo", "bar"), nodeA().Label("zone", "zone1").Label("node", "node1"), labelBits),
			p(), skip, queue, byConstraints),
		ported("create node with non-related labels", policytest.NodeAdd(nodeA().Label("foo", "bar").Obj()), p(), skip, queue, byConstraints),
		ported("create node with related labels", policytest.NodeAdd(nodeA().Label("zone", "zone1").Obj()), p(), queue, queue, ""),
		ported("delete node with non-related labels", policytest.NodeDelete(nodeA().Label("foo", "bar").Obj()), p(), skip, queue, byConstraints),
		ported("delete node with related labels", policytest.NodeDelete(nodeA().Label("zone", "zone1").Obj()), p(), queue, queue, ""),
		ported("add node with related labels that only match one of topologySpreadConstraints",
			policytest.NodeAdd(nodeA().Label("zone", "zone1").Obj()), p(), skip, queue, byConstraints),
		ported("add node with related labels that match all topologySpreadConstraints",
			policytest.NodeAdd(nodeA().Label("zone", "zone1").Label("node", "node1").Obj()), p(), queue, queue, ""),
		ported("update node with related labels that only match one of topologySpreadConstraints",
			nodeUpdate(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone1"), labelBits), p(), skip, skip, ""),
		ported("update node with related labels that match all topologySpreadConstraints",
			nodeUpdate(nodeA().Label("zone", "zone1").Label("node", "node1"), nodeA().Label("zone", "zone1").Label("node", "node2"), labelBits),
			p(), queue, queue, ""),
		ported("update node with different taints that match all topologySpreadConstraints",
			nodeUpdate(tainted(nodeA().Label("zone", "zone1").Label("node", "node1"), taint("aaa")),
				tainted(nodeA().Label("zone", "zone1").Label("node", "node1"), taint("ccc")), taintBits),
			p(), queue, queue, ""),
		ported("update node with different taints that only match one of topologySpreadConstraints",
			nodeUpdate(tainted(nodeA().Label("node", "node1"), taint("aaa")), tainted(nodeA().Label("node", "node1"), taint("ccc")), taintBits),
			p(), skip, queue, byConstraints),
		// What upstream skips whatever the constraints, and unregistered
		// or malformed node events.
		{
			name: "spec.unschedulable true -> false alone (UpdateNodeTaint, same taints)",
			ev: nodeUpdate(tainted(nodeA().Label("zone", "zone1").Unschedulable(), taint("aaa")),
				tainted(nodeA().Label("zone", "zone1"), taint("aaa")), taintBits),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "taints in another order are other taints, as upstream compares lists",
			ev: nodeUpdate(tainted(tainted(nodeA(), taint("aaa")), taint("ccc")),
				tainted(tainted(nodeA(), taint("ccc")), taint("aaa")), taintBits),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{queue},
		},
		{
			name: "node allocatable update is not registered",
			ev:   nodeUpdate(nodeA().Label("zone", "zone1"), nodeA().Label("zone", "zone2").Allocatable("cpu", 1), abi.ActionUpdateNodeAllocatable),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "node delete without the node is an error",
			ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourceNode, Action: abi.ActionDelete}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{herr},
		},
		// Test_isSchedulableAfterAssignedPodChange
		ported("add pod with labels match topologySpreadConstraints selector", add(p2().Label("foo", "")), p(), queue, queue, ""),
		ported("add un-scheduled pod", add(unscheduled().Label("foo", "")), p(), skip, skip, ""),
		ported("update un-scheduled pod", relabel(unscheduled().Label("bar", ""), unscheduled().Label("foo", "")), p(), skip, skip, ""),
		ported("delete un-scheduled pod", del(unscheduled().Label("foo", "")), p(), skip, skip, ""),
		ported("add pod with different namespace", add(p2().Namespace("fake-namespace").Label("foo", "")), p(), skip, skip, ""),
		ported("add pod with labels don't match topologySpreadConstraints selector", add(p2().Label("bar", "")), p(), skip, queue, byConstraints),
		ported("delete pod with labels that match topologySpreadConstraints selector", del(p2().Label("foo", "")), p(), queue, queue, ""),
		ported("delete nominated pod with labels that don't match topologySpreadConstraints selector",
			del(unscheduled().Label("bar", "")), p(), skip, skip, ""),
		ported("delete nominated pod with labels that match topologySpreadConstraints selector",
			del(unscheduled().Label("foo", "")), p(), queue, skip, byNominated),
		ported("delete pod with labels that don't match topologySpreadConstraints selector", del(p2().Label("bar", "")), p(), skip, queue, byConstraints),
		ported("update pod's non-related label",
			relabel(p2().Label("foo", "").Label("bar", "bar1"), p2().Label("foo", "").Label("bar", "bar2")), p(), skip, queue, byConstraints),
		ported("add pod's label that matches topologySpreadConstraints selector", relabel(p2(), p2().Label("foo", "")), p(), queue, queue, ""),
		ported("delete pod label that matches topologySpreadConstraints selector", relabel(p2().Label("foo", ""), p2()), p(), queue, queue, ""),
		ported("change pod's label that matches topologySpreadConstraints selector",
			relabel(p2().Label("foo", "foo1"), p2().Label("foo", "foo2")), p(), skip, queue, byConstraints),
		ported("change pod's label that doesn't match topologySpreadConstraints selector",
			relabel(p2().Label("foo", "").Label("bar", "bar1"), p2().Label("foo", "").Label("bar", "bar2")), p(), skip, queue, byConstraints),
		ported("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
			relabel(p2().Label("foo", ""), p2().Label("foo", "").Label("bar", "bar2")), p(), queue, queue, ""),
		ported("change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
			relabel(p2().Label("foo", ""), p2().Label("foo", "").Label("baz", "")), p(), skip, queue, byConstraints),
		ported("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
			relabel(p2().Label("foo", "").Label("bar", ""), p2().Label("foo", "").Label("bar", "bar2")), p(), skip, queue, byConstraints),
		// What upstream skips whatever the constraints.
		{
			name: "delete a pod of another namespace",
			ev:   del(p2().Namespace("fake-namespace").Label("foo", "")),
			pods: []*policytest.PodWrapper{p(), pending("there", pts).Namespace("fake-namespace")},
			want: []abi.Hint{skip, queue},
		},
		{
			name: "relabel a pod of another namespace",
			ev:   relabel(p2().Namespace("fake-namespace"), p2().Namespace("fake-namespace").Label("foo", "")),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "update with the same labels",
			ev: policytest.PodUpdate(p2().Label("foo", "").Label("bar", "").Request("cpu", 2).Obj(),
				p2().Label("bar", "").Label("foo", "").Request("cpu", 1).Obj(), abi.ActionUpdatePodLabel|abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "pod delete without the pod is an error",
			ev:   policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePod, Action: abi.ActionDelete}),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{herr},
		},
		// Test_isSchedulableAfterTargetPodChange
		ported("the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
			self(pending("p").Label("foo", ""), pending("p").Label("foo", "").Toleration("node.kubernetes.io/unschedulable", "", abi.TolerationExists, abi.EffectNone),
				abi.ActionUpdatePodToleration),
			p(), queue, queue, ""),
		ported("the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
			self(pending("p").Label("foo", ""), pending("p").Label("foo", "").Toleration("node.kubernetes.io/unschedulable", "", abi.TolerationExists, abi.EffectNone),
				abi.ActionUpdatePodToleration),
			p(), skip, queue, "decided by the constraints' nodeTaintsPolicy"),
		ported("the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the constraint",
			self(pending("p"), pending("p").Label("foo", ""), abi.ActionUpdatePodLabel), p(), queue, queue, ""),
		ported("the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
			self(pending("p"), pending("p").Label("unrelated", ""), abi.ActionUpdatePodLabel), p(), skip, queue, byConstraints),
		// The pod's own update that changed neither (the bits were set by
		// another change), and another pending pod's update.
		{
			name: "the pod's own update with the same labels and tolerations",
			ev: self(pending("p").Label("a", "1").Label("b", "2").Toleration("k", "v", abi.TolerationEqual, abi.EffectNoSchedule),
				pending("p").Label("b", "2").Label("a", "1").Toleration("k", "v", abi.TolerationEqual, abi.EffectNoSchedule),
				abi.ActionUpdatePodLabel|abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "a toleration changed in place is a change",
			ev: self(pending("p").Toleration("k", "v", abi.TolerationEqual, abi.EffectNoSchedule),
				pending("p").Toleration("k", "w", abi.TolerationEqual, abi.EffectNoSchedule), abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{queue},
		},
		{
			name: "another pending pod's update",
			ev:   self(pending("other"), pending("other").Label("foo", ""), abi.ActionUpdatePodLabel|abi.ActionUpdatePodToleration),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
		{
			name: "the pod's own scale-down is not registered",
			ev:   self(pending("p").Request("cpu", 2), pending("p").Label("foo", "x").Request("cpu", 1), abi.ActionUpdatePodScaleDown),
			pods: []*policytest.PodWrapper{p()},
			want: []abi.Hint{skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

// TestSeveralPlugins checks a pod rejected by several plugins: it is queued
// when one of them says so.
func TestSeveralPlugins(t *testing.T) {
	both := func(name string) *policytest.PodWrapper {
		return pending(name, abi.PluginNodeAffinity, abi.PluginTaintToleration).
			RequiredAffinity(term(req("zone", abi.SelectorIn, "a")))
	}
	cases := []hintCase{
		{
			name: "label and taint update: either plugin may queue",
			ev: policytest.NodeUpdate(node().Taint("k", "", abi.EffectNoSchedule).Obj(),
				node().Label("zone", "a").Obj(), abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint),
			pods: []*policytest.PodWrapper{both("p"), both("tolerant").Toleration("k", "", abi.TolerationExists, abi.EffectNone)},
			want: []abi.Hint{queue, queue},
		},
		{
			name: "taint update alone runs TaintToleration only",
			ev: policytest.NodeUpdate(node().Label("zone", "b").Taint("k", "", abi.EffectNoSchedule).Obj(),
				node().Label("zone", "b").Obj(), abi.ActionUpdateNodeTaint),
			pods: []*policytest.PodWrapper{both("p"), pending("affinity-only", abi.PluginNodeAffinity)},
			want: []abi.Hint{queue, skip},
		},
		{
			name: "a pod no plugin rejected is skipped",
			ev:   policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{pending("none"), pending("unknown-plugin", "NoSuchPlugin")},
			want: []abi.Hint{skip, skip},
		},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

// TestHintsDoNotAllocate runs every route of every plugin on a pod and
// checks that deciding allocates nothing: the hints run once per candidate
// pod on every event.
func TestHintsDoNotAllocate(t *testing.T) {
	all := []string{abi.PluginNodeResourcesFit, abi.PluginNodeAffinity, abi.PluginTaintToleration,
		abi.PluginNodeUnschedulable, abi.PluginNodePorts, abi.PluginNodeName, abi.PluginSchedulingGates,
		abi.PluginGangScheduling, abi.PluginInterPodAffinity, abi.PluginPodTopologySpread,
		abi.PluginVolumeRestrictions, abi.PluginNodeVolumeLimits, abi.PluginVolumeBinding, abi.PluginVolumeZone,
		abi.PluginDynamicResources}
	p := pending("p", all...).Claim("data").ResourceClaim("gpu").ResourceClaim("").EphemeralClaim("p-scratch").VolumeDriver("d9").Request("cpu", 100).Request("memory", 1<<20).Request("example.com/gpu", 1).
		NodeSelector("zone", "a").
		RequiredAffinity(term(req("zone", abi.SelectorUnknown)), term(req("cores", abi.SelectorGt, "4"), req("zone", abi.SelectorNotIn, "b")),
			fieldTerm(req("metadata.name", abi.SelectorIn, "n1"))).
		Toleration("k", "5", abi.TolerationLt, abi.EffectNone).Toleration("", "", abi.TolerationExists, abi.EffectNoExecute).
		HostPort("", 80, abi.ProtocolTCP).Group("pg", 2)
	n := node().Label("zone", "a").Label("cores", "8").Taint("k", "3", abi.EffectNoSchedule).Allocatable("cpu", 1000).Requested("cpu", 100)
	events := []abi.EventView{
		policytest.NodeAdd(n.Obj()),
		policytest.NodeUpdate(node().Unschedulable().Obj(), n.Obj(), abi.ActionUpdateNodeAllocatable|abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint),
		policytest.PodDelete(bound("gone").HostPort("", 80, abi.ProtocolTCP).Obj()),
		policytest.PodAdd(bound("new").Label("app", "web").Obj()),
		policytest.PodUpdate(bound("b").Label("app", "web").Label("tier", "1").Obj(), bound("b").Label("tier", "1").Label("app", "web").Obj(),
			abi.ActionUpdatePodLabel),
		policytest.NodeDelete(n.Obj()),
		policytest.NodeUpdate(n.Obj(), node().Label("cores", "8").Label("zone", "a").Taint("k", "3", abi.EffectNoSchedule).Obj(),
			abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint),
		policytest.PodUpdate(bound("b").Request("cpu", 10).Obj(), bound("b").Obj(), abi.ActionUpdatePodScaleDown),
		policytest.UnscheduledPodUpdate(p.Obj(), p.Obj(), abi.ActionUpdatePodToleration|abi.ActionUpdatePodScaleDown|
			abi.ActionUpdatePodSchedulingGatesEliminated|abi.ActionUpdatePodLabel),
		policytest.UnscheduledPodAdd(pending("q").Group("pg", 2).Obj()),
		policytest.PodGroupAdd(policytest.MakePodGroup().Namespace("ns").Name("pg").MinCount(2).Obj()),
		policytest.PodGroupUpdate(policytest.MakePodGroup().Namespace("ns").Name("pg").MinCount(3).Obj(),
			policytest.MakePodGroup().Namespace("ns").Name("pg").MinCount(2).Obj(), abi.ActionUpdateOther),
	}
	csi := func(counts ...int32) *abi.StorageObject {
		o := &abi.StorageObject{Name: "n1", NodeName: "n1"}
		for i, c := range counts {
			o.Drivers = append(o.Drivers, abi.CSIDriverLimit{Name: "d" + strconv.Itoa(i), Allocatable: c, HasAllocatable: true})
		}
		return o
	}
	zone := func(z string) *abi.StorageObject {
		return &abi.StorageObject{Name: "pv", Labels: []abi.KV{{Key: "topology.kubernetes.io/zone", Value: z}}}
	}
	topo := func(v string) *abi.StorageObject {
		return &abi.StorageObject{Name: "wffc", BindingMode: abi.BindingWaitForFirstConsumer, Topology: []abi.NodeSelectorTerm{
			{MatchExpressions: []abi.Requirement{{Key: "topology.kubernetes.io/zone", Operator: abi.SelectorIn, Values: []string{"a", v}}}}}}
	}
	events = append(events,
		policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, &abi.StorageObject{Namespace: "ns", Name: "other"}),
		policytest.StorageUpdate(abi.ResourcePersistentVolume, zone("a"), zone("a")),
		policytest.StorageUpdate(abi.ResourceStorageClass, topo("b"), topo("b")),
		policytest.StorageAdd(abi.ResourceStorageClass, topo("b")),
		policytest.StorageUpdate(abi.ResourceCSINode, csi(3, 2), csi(3, 1)),
		policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d0"}, &abi.StorageObject{Name: "d0"}),
		policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, &abi.StorageObject{Capacity: 9, HasCapacity: true}, &abi.StorageObject{Capacity: 8, HasCapacity: true}),
		policytest.StorageDelete(abi.ResourceVolumeAttachment, &abi.StorageObject{Name: "va", Driver: "other"}),
		policytest.StorageUpdate(abi.ResourceResourceClaim, &abi.StorageObject{Namespace: "ns", Name: "other", Allocated: true},
			&abi.StorageObject{Namespace: "ns", Name: "other", Allocated: true, ReservedFor: 1}),
		policytest.StorageDelete(abi.ResourceResourceClaim, &abi.StorageObject{Namespace: "ns", Name: "gpu"}),
		policytest.StorageAdd(abi.ResourceResourceSlice, &abi.StorageObject{Name: "s", Driver: "gpu.example.com", Pool: "n1"}),
	)
	view := p.View()
	for _, ev := range events {
		allocs := testing.AllocsPerRun(100, func() {
			for i := range logic.Plugins {
				_, _ = logic.Plugins[i].Hint(ev, view)
			}
			_ = hint.DecidePod(logic.Plugins, ev, view)
		})
		if allocs != 0 {
			t.Errorf("event %v/%v: deciding allocates %v times per pod, want 0", ev.Resource(), ev.Action(), allocs)
		}
	}
}
