package logic_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

// podTerm is a required pod affinity term selecting key=value in the
// owner's namespace, over topology key topo.
func podTerm(key, value, topo string) abi.PodAffinityTerm {
	return abi.PodAffinityTerm{Selector: []abi.Requirement{req(key, abi.SelectorIn, value)}, NoNamespaceSelector: true, TopologyKey: topo}
}

// spread is a DoNotSchedule constraint selecting key=value over topo, with
// the API's defaults.
func spread(key, value, topo string) abi.SpreadConstraint {
	return abi.SpreadConstraint{MaxSkew: 1, TopologyKey: topo, WhenUnsatisfiable: abi.SpreadDoNotSchedule,
		Selector: []abi.Requirement{req(key, abi.SelectorIn, value)}, MinDomains: 1,
		NodeAffinityPolicy: abi.InclusionHonor, NodeTaintsPolicy: abi.InclusionIgnore}
}

// TestSelectiveHints: with the terms and constraints in the record (ABI
// minor 4), the InterPodAffinity, PodTopologySpread, NodeAffinity and
// NodeDeclaredFeatures hints skip what upstream's skip (and queue where
// upstream's would leave a pod the native filter accepts; see
// interpodaffinity.go and podtopologyspread.go), and the same pods from an
// older host queue as before.
func TestSelectiveHints(t *testing.T) {
	const (
		ipa, pts, na = abi.PluginInterPodAffinity, abi.PluginPodTopologySpread, abi.PluginNodeAffinity
		zone         = "zone"
	)
	aff := func() *policytest.PodWrapper { return pending("p", ipa).PodAffinity(podTerm("app", "db", zone)) }
	anti := func() *policytest.PodWrapper { return pending("p", ipa).PodAntiAffinity(podTerm("app", "web", zone)) }
	self := func() *policytest.PodWrapper {
		return pending("p", ipa).Label("app", "db").PodAffinity(podTerm("app", "db", zone))
	}
	spr := func() *policytest.PodWrapper { return pending("p", pts).SpreadConstraint(spread("app", "web", zone)) }
	other := func() *policytest.PodWrapper { return bound("q").Node("n2") }
	nodeZ := func(z string) *policytest.NodeWrapper { return node().Label(zone, z) }
	relabel := func(old, new *policytest.PodWrapper) abi.EventView {
		return policytest.PodUpdate(old.Obj(), new.Obj(), abi.ActionUpdatePodLabel)
	}
	nodeLabels := func(old, new *policytest.NodeWrapper) abi.EventView {
		return policytest.NodeUpdate(old.Obj(), new.Obj(), abi.ActionUpdateNodeLabel)
	}
	cases := []hintCase{
		// InterPodAffinity, assigned pods.
		{name: "ipa: pod added that matches the affinity", ev: policytest.PodAdd(other().Label("app", "db").Obj()),
			pods: []*policytest.PodWrapper{aff(), aff().OfMinor(3)}, want: []abi.Hint{queue, queue}},
		{name: "ipa: pod added that does not match the affinity", ev: policytest.PodAdd(other().Label("app", "web").Obj()),
			pods: []*policytest.PodWrapper{aff(), aff().OfMinor(3), anti()}, want: []abi.Hint{skip, queue, skip}},
		{name: "ipa: pod added in another namespace", ev: policytest.PodAdd(other().Namespace("ns2").Label("app", "db").Obj()),
			pods: []*policytest.PodWrapper{aff()}, want: []abi.Hint{skip}},
		{name: "ipa: pod relabelled into the affinity", ev: relabel(other().Label("app", "x"), other().Label("app", "db")),
			pods: []*policytest.PodWrapper{aff(), anti()}, want: []abi.Hint{queue, skip}},
		{name: "ipa: pod relabelled out of the anti-affinity", ev: relabel(other().Label("app", "web"), other().Label("app", "x")),
			pods: []*policytest.PodWrapper{aff(), anti(), self()}, want: []abi.Hint{skip, queue, skip}},
		{name: "ipa: pod relabelled out of the affinity the pending pod matches itself",
			ev:   relabel(other().Label("app", "db"), other().Label("app", "x")),
			pods: []*policytest.PodWrapper{aff(), self()}, want: []abi.Hint{skip, queue}},
		{name: "ipa: pod deleted that matched the anti-affinity", ev: policytest.PodDelete(other().Label("app", "web").Obj()),
			pods: []*policytest.PodWrapper{anti(), aff()}, want: []abi.Hint{queue, skip}},
		{name: "ipa: pod deleted whose anti-affinity selects the pending pod",
			ev:   policytest.PodDelete(other().PodAntiAffinity(podTerm("app", "db", zone)).Obj()),
			pods: []*policytest.PodWrapper{self(), anti()}, want: []abi.Hint{queue, skip}},
		{name: "ipa: namespaceSelector with requirements counts every namespace",
			ev: policytest.PodAdd(other().Namespace("ns2").Label("app", "db").Obj()),
			pods: []*policytest.PodWrapper{pending("p", ipa).PodAffinity(abi.PodAffinityTerm{
				Selector: []abi.Requirement{req("app", abi.SelectorIn, "db")}, TopologyKey: zone,
				NamespaceSelector: []abi.Requirement{req("team", abi.SelectorIn, "a")}})},
			want: []abi.Hint{queue}},
		{name: "ipa: malformed selector queues with an error",
			ev: policytest.PodAdd(other().Label("app", "db").Obj()),
			pods: []*policytest.PodWrapper{pending("p", ipa).PodAffinity(abi.PodAffinityTerm{
				Selector: []abi.Requirement{req("bad key", abi.SelectorIn, "db")}, NoNamespaceSelector: true, TopologyKey: zone})},
			want: []abi.Hint{abi.HintError}},
		// InterPodAffinity, nodes.
		{name: "ipa: node added without the affinity's topology key", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{aff(), anti(), pending("p", ipa)}, want: []abi.Hint{skip, queue, queue}},
		{name: "ipa: node added with the affinity's topology key", ev: policytest.NodeAdd(nodeZ("a").Obj()),
			pods: []*policytest.PodWrapper{aff()}, want: []abi.Hint{queue}},
		{name: "ipa: node update that only added labels", ev: nodeLabels(node(), node().Label("disk", "ssd")),
			pods: []*policytest.PodWrapper{aff(), anti(), aff().OfMinor(3)}, want: []abi.Hint{skip, skip, queue}},
		{name: "ipa: node update that added the affinity's topology key", ev: nodeLabels(node(), nodeZ("a")),
			pods: []*policytest.PodWrapper{aff(), anti()}, want: []abi.Hint{queue, skip}},
		{name: "ipa: node update that moved the node to another zone", ev: nodeLabels(nodeZ("a"), nodeZ("b")),
			pods: []*policytest.PodWrapper{aff(), anti(), pending("p", ipa)}, want: []abi.Hint{queue, queue, queue}},
		// PodTopologySpread.
		{name: "pts: pod added that the constraint selects", ev: policytest.PodAdd(bound("q").Label("app", "web").Obj()),
			pods: []*policytest.PodWrapper{spr(), spr().OfMinor(3)}, want: []abi.Hint{queue, queue}},
		{name: "pts: pod added that the constraint does not select", ev: policytest.PodAdd(bound("q").Label("app", "db").Obj()),
			pods: []*policytest.PodWrapper{spr(), spr().OfMinor(3), pending("p", pts)}, want: []abi.Hint{skip, queue, queue}},
		{name: "pts: pod deleted that the constraint selects", ev: policytest.PodDelete(bound("q").Label("app", "web").Obj()),
			pods: []*policytest.PodWrapper{spr()}, want: []abi.Hint{queue}},
		{name: "pts: relabel that does not change the selection",
			ev:   relabel(bound("q").Label("app", "db"), bound("q").Label("app", "db").Label("x", "y")),
			pods: []*policytest.PodWrapper{spr()}, want: []abi.Hint{skip}},
		{name: "pts: node added without the topology key", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{spr(), spr().OfMinor(3)}, want: []abi.Hint{skip, queue}},
		{name: "pts: node update of a label that is no topology key", ev: nodeLabels(nodeZ("a"), nodeZ("a").Label("disk", "ssd")),
			pods: []*policytest.PodWrapper{spr(), spr().OfMinor(3)}, want: []abi.Hint{skip, queue}},
		{name: "pts: node update that made the node match the pod's node selector",
			ev:   nodeLabels(nodeZ("a"), nodeZ("a").Label("disk", "ssd")),
			pods: []*policytest.PodWrapper{spr().NodeSelector("disk", "ssd")}, want: []abi.Hint{queue}},
		{name: "pts: own label update that changed a matchLabelKeys value",
			ev: policytest.UnscheduledPodUpdate(pending("p", pts).Label("v", "1").SpreadConstraint(withKeys(spread("app", "web", zone), "v")).Obj(),
				pending("p", pts).Label("v", "2").SpreadConstraint(withKeys(spread("app", "web", zone), "v")).Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{pending("p", pts).Label("v", "2").SpreadConstraint(withKeys(spread("app", "web", zone), "v"))},
			want: []abi.Hint{queue}},
		{name: "pts: own label update unrelated to the constraints",
			ev: policytest.UnscheduledPodUpdate(pending("p", pts).SpreadConstraint(spread("app", "web", zone)).Obj(),
				pending("p", pts).Label("x", "y").SpreadConstraint(spread("app", "web", zone)).Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{spr()}, want: []abi.Hint{skip}},
		// NodeAffinity with the profile's addedAffinity.
		{name: "na: node added outside the addedAffinity", ev: policytest.NodeAdd(nodeZ("b").Obj()),
			pods: []*policytest.PodWrapper{pending("p", na).AddedAffinity(term(req(zone, abi.SelectorIn, "a"))), pending("p", na)},
			want: []abi.Hint{skip, queue}},
		{name: "na: node update into the addedAffinity", ev: nodeLabels(nodeZ("b"), nodeZ("a")),
			pods: []*policytest.PodWrapper{pending("p", na).AddedAffinity(term(req(zone, abi.SelectorIn, "a"))), pending("p", na)},
			want: []abi.Hint{queue, skip}},
		{name: "na: an older host's record cannot rule the addedAffinity out", ev: nodeLabels(nodeZ("b"), nodeZ("a")),
			pods: []*policytest.PodWrapper{pending("p", na).OfMinor(3)}, want: []abi.Hint{queue}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func withKeys(c abi.SpreadConstraint, keys ...string) abi.SpreadConstraint {
	c.MatchLabelKeys = keys
	return c
}
