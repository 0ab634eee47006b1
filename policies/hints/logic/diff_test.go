package logic_test

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/policies/hints/logic"
)

// TestDifferential runs thousands of generated events, each with a batch of
// generated pending pods, through the native logic and through hints.wasm in
// the host's runtime (policytest.Run fails the wasm run on any failed call or
// native fallback), and wants the same hint for every pod.
func TestDifferential(t *testing.T) {
	const seed, events = 4247, 10000
	g := newGen(seed)
	corpus := make([]diffCase, events)
	for i := range corpus {
		corpus[i] = g.diffCase(i)
	}

	got := map[string][][]abi.Hint{}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) {
		out := make([][]abi.Hint, len(corpus))
		for i := range corpus {
			out[i] = make([]abi.Hint, len(corpus[i].pods))
			s.QueueingHint.Hints(corpus[i].ev, corpus[i].pods, out[i])
		}
		got[path.Base(t.Name())] = out
	})
	native, wasm := got["native"], got["wasm"]
	if native == nil || wasm == nil {
		t.Fatalf("want both runs, got %d", len(got))
	}

	decisions, mismatches := 0, 0
	var tally [3]int
	for i := range corpus {
		for j := range corpus[i].pods {
			decisions++
			tally[native[i][j]]++
			if native[i][j] == wasm[i][j] {
				continue
			}
			if mismatches++; mismatches <= 10 {
				t.Errorf("case %d, pod %d: native %d, wasm %d\n%s", i, j, native[i][j], wasm[i][j], corpus[i].describe(j))
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d decisions differ", mismatches, decisions)
	}
	t.Logf("%d events, %d decisions: %d Skip, %d Queue, %d Error", len(corpus), decisions, tally[0], tally[1], tally[2])

	// The corpus must make every plugin decide both ways, or the comparison
	// says little.
	for _, pl := range logic.Plugins {
		q := policytest.NativeQueueingHint(pl)
		var n [3]int
		for i := range corpus {
			out := make([]abi.Hint, len(corpus[i].pods))
			q.Hints(corpus[i].ev, corpus[i].pods, out)
			for j, h := range out {
				if rejectedBy(corpus[i].pods[j], pl.Name) {
					n[h]++
				}
			}
		}
		t.Logf("%s: %d Skip, %d Queue, %d Error", pl.Name, n[0], n[1], n[2])
		if n[abi.HintSkip] < 50 || n[abi.HintQueue] < 50 {
			t.Errorf("%s decides Skip %d and Queue %d times on the corpus; want at least 50 each", pl.Name, n[0], n[1])
		}
	}
}

func rejectedBy(p abi.PodView, name string) bool {
	return p.UnschedulablePlugins().Has(name) || p.PendingPlugins().Has(name)
}

type diffCase struct {
	ev   abi.EventView
	pods []abi.PodView
}

func (c diffCase) describe(j int) string {
	var e abi.Event
	var p abi.Pod
	if err := c.ev.Decode(&e); err != nil {
		return "event: " + err.Error()
	}
	if err := c.pods[j].Decode(&p); err != nil {
		return "pod: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "event %v %v\n", e.Resource, e.Action)
	for _, side := range []struct {
		name string
		rec  []byte
	}{{"old", e.Old}, {"new", e.New}} {
		if side.rec == nil {
			continue
		}
		switch e.Resource {
		case abi.ResourceNode:
			var n abi.Node
			if v, err := abi.ReadNode(side.rec); err == nil && v.Decode(&n) == nil {
				fmt.Fprintf(&b, "  %s node %+v\n", side.name, n)
			}
		case abi.ResourcePodGroup:
			var g abi.PodGroup
			if v, err := abi.ReadPodGroup(side.rec); err == nil && v.Decode(&g) == nil {
				fmt.Fprintf(&b, "  %s group %+v\n", side.name, g)
			}
		case abi.ResourcePersistentVolume, abi.ResourcePersistentVolumeClaim, abi.ResourceStorageClass, abi.ResourceCSINode,
			abi.ResourceCSIDriver, abi.ResourceCSIStorageCapacity, abi.ResourceVolumeAttachment:
			var o abi.StorageObject
			if v, err := abi.ReadStorage(side.rec); err == nil && v.Decode(&o) == nil {
				fmt.Fprintf(&b, "  %s storage %+v\n", side.name, o)
			}
		default:
			var q abi.Pod
			if v, err := abi.ReadPod(side.rec); err == nil && v.Decode(&q) == nil {
				fmt.Fprintf(&b, "  %s pod %+v\n", side.name, q)
			}
		}
	}
	fmt.Fprintf(&b, "pod %+v", p)
	return b.String()
}

// gen makes random but deterministic objects from small pools of names and
// values, so that keys, values, ports and groups collide often.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g *gen) pick(ss ...string) string { return ss[g.r.IntN(len(ss))] }
func (g *gen) chance(p float64) bool    { return g.r.Float64() < p }
func (g *gen) upTo(n int) int           { return g.r.IntN(n + 1) }

var (
	allPlugins = []string{
		abi.PluginNodeResourcesFit, abi.PluginNodeAffinity, abi.PluginTaintToleration, abi.PluginNodeUnschedulable,
		abi.PluginNodePorts, abi.PluginNodeName, abi.PluginNodeDeclaredFeatures, abi.PluginSchedulingGates, abi.PluginGangScheduling,
		abi.PluginInterPodAffinity, abi.PluginPodTopologySpread,
		abi.PluginVolumeRestrictions, abi.PluginNodeVolumeLimits, abi.PluginVolumeBinding, abi.PluginVolumeZone,
		abi.PluginDynamicResources, // a plugin no hint is about
	}
	claimNames   = []string{"c1", "c2", "p1-eph", "data"}
	classNames   = []string{"", "fast", "wffc"}
	driverNames  = []string{"ebs.csi.aws.com", "hostpath.csi.k8s.io", "x.csi"}
	zoneKeys     = []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone", "other"}
	labelKeys    = []string{"zone", "disk", "cores", "example.com/tier", "gpu", "bad key", "a/b/c"}
	labelValues  = []string{"a", "b", "ssd", "8", "16", "-3", "x", "", "not valid"}
	taintKeys    = []string{"k1", "k2", "tier", "node.kubernetes.io/unschedulable", ""}
	taintValues  = []string{"", "v", "5", "05", "-2", "x"}
	resources    = []string{"cpu", "memory", "example.com/gpu", "ephemeral-storage"}
	hostIPs      = []string{"", "0.0.0.0", "127.0.0.1", "10.0.0.1"}
	namespaces   = []string{"ns1", "ns2"}
	groups       = []string{"", "", "g1", "g2"}
	nodeNames    = []string{"n1", "n2", ""}
	nodeUpdates  = []abi.ActionType{abi.ActionUpdateNodeAllocatable, abi.ActionUpdateNodeLabel, abi.ActionUpdateNodeTaint, abi.ActionUpdateNodeCondition, abi.ActionUpdateNodeAnnotation, abi.ActionUpdateOther, abi.ActionUpdateNodeDeclaredFeature}
	podUpdates   = []abi.ActionType{abi.ActionUpdatePodLabel, abi.ActionUpdatePodScaleDown, abi.ActionUpdatePodToleration, abi.ActionUpdatePodSchedulingGatesEliminated, abi.ActionUpdatePodGeneratedResourceClaim, abi.ActionUpdateOther, abi.ActionUpdatePodScaleUp}
	effects      = []abi.TaintEffect{abi.EffectNone, abi.EffectNoSchedule, abi.EffectNoSchedule, abi.EffectPreferNoSchedule, abi.EffectNoExecute, abi.EffectUnknown}
	tolOps       = []abi.TolerationOperator{abi.TolerationEqual, abi.TolerationExists, abi.TolerationExists, abi.TolerationLt, abi.TolerationGt, abi.TolerationUnknown}
	selectorOps  = []abi.SelectorOperator{abi.SelectorIn, abi.SelectorIn, abi.SelectorNotIn, abi.SelectorExists, abi.SelectorDoesNotExist, abi.SelectorGt, abi.SelectorLt, abi.SelectorUnknown}
	protocols    = []abi.Protocol{abi.ProtocolTCP, abi.ProtocolTCP, abi.ProtocolUDP, abi.ProtocolSCTP, abi.ProtocolUnknown}
	fieldKeys    = []string{"metadata.name", "metadata.name", "spec.foo"}
	portNumbers  = []int32{80, 81, 8080, 0}
	allocAmounts = []int64{0, 1, 2, 4, 1000, 4000, 1 << 30}
)

func (g *gen) actions(pool []abi.ActionType) abi.ActionType {
	var a abi.ActionType
	for a == 0 {
		for _, b := range pool {
			if g.chance(0.3) {
				a |= b
			}
		}
	}
	return a
}

func (g *gen) kvs(keys, values []string, n int) []abi.KV {
	var out []abi.KV
	seen := map[string]bool{}
	for range g.upTo(n) {
		k := g.pick(keys...)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, abi.KV{Key: k, Value: g.pick(values...)})
	}
	return out
}

func (g *gen) quantities(n int, pods int64) []abi.Quantity {
	var out []abi.Quantity
	for _, name := range resources {
		if g.chance(float64(n) / float64(len(resources))) {
			out = append(out, abi.Quantity{Name: name, Value: allocAmounts[g.r.IntN(len(allocAmounts))]})
		}
	}
	if pods >= 0 {
		out = append(out, abi.Quantity{Name: "pods", Value: pods})
	}
	return out
}

func (g *gen) node() *abi.Node {
	n := &abi.Node{
		Name:          g.pick(nodeNames...),
		Unschedulable: g.chance(0.3),
		Labels:        g.kvs(labelKeys, labelValues, 4),
		Allocatable:   g.quantities(3, int64(g.upTo(4))),
		Requested:     g.quantities(2, int64(g.upTo(3))),
	}
	if g.chance(0.1) {
		n.Allocatable = n.Allocatable[:len(n.Allocatable)-1] // no "pods"
	}
	for range g.upTo(3) {
		n.Taints = append(n.Taints, abi.Taint{Key: g.pick(taintKeys[:4]...), Value: g.pick(taintValues...), Effect: effects[1+g.r.IntN(len(effects)-1)]})
	}
	return n
}

// changeNode returns a copy of n with some of its fields regenerated.
func (g *gen) changeNode(n *abi.Node) *abi.Node {
	c := *n
	m := g.node()
	if g.chance(0.5) {
		c.Labels = m.Labels
	}
	if g.chance(0.5) {
		c.Taints = m.Taints
	}
	if g.chance(0.5) {
		c.Allocatable = m.Allocatable
	}
	if g.chance(0.3) {
		c.Unschedulable = !c.Unschedulable
	}
	if g.chance(0.1) {
		c.Requested = m.Requested // the host keeps requested; other senders may not
	}
	return &c
}

func (g *gen) requirement(fields bool) abi.Requirement {
	if fields {
		op := abi.SelectorIn
		switch g.r.IntN(6) {
		case 0, 1:
			op = abi.SelectorNotIn
		case 2:
			op = selectorOps[g.r.IntN(len(selectorOps))]
		}
		vals := []string{g.pick(nodeNames...)}
		if g.chance(0.1) {
			vals = append(vals, "n2")
		}
		return abi.Requirement{Key: g.pick(fieldKeys...), Operator: op, Values: vals}
	}
	r := abi.Requirement{Key: g.pick(labelKeys...), Operator: selectorOps[g.r.IntN(len(selectorOps))]}
	switch r.Operator {
	case abi.SelectorIn, abi.SelectorNotIn:
		for range 1 + g.upTo(2) {
			r.Values = append(r.Values, g.pick(labelValues...))
		}
		if g.chance(0.05) {
			r.Values = nil
		}
	case abi.SelectorGt, abi.SelectorLt:
		r.Values = []string{g.pick("4", "8", "16", "-3", "x", "+8")}
		if g.chance(0.05) {
			r.Values = append(r.Values, "1")
		}
	default:
		if g.chance(0.05) {
			r.Values = []string{"a"}
		}
	}
	return r
}

func (g *gen) pod(ns, name string) *abi.Pod {
	p := &abi.Pod{
		Namespace:    ns,
		Name:         name,
		UID:          ns + "/" + name,
		Labels:       g.kvs(labelKeys, labelValues, 2),
		Requests:     g.quantities(2, 1),
		NodeSelector: g.kvs(labelKeys, labelValues, 2),
	}
	if g.chance(0.6) {
		p.NodeSelector = nil
	}
	if g.chance(0.1) {
		p.UID = ""
	}
	if g.chance(0.6) {
		for range 1 + g.upTo(2) {
			var term abi.NodeSelectorTerm
			for range g.upTo(3) {
				term.MatchExpressions = append(term.MatchExpressions, g.requirement(false))
			}
			if g.chance(0.3) {
				term.MatchFields = append(term.MatchFields, g.requirement(true))
			}
			p.RequiredAffinity = append(p.RequiredAffinity, term)
		}
	}
	for range g.upTo(3) {
		p.Tolerations = append(p.Tolerations, abi.Toleration{
			Key: g.pick(taintKeys...), Value: g.pick(taintValues...),
			Operator: tolOps[g.r.IntN(len(tolOps))], Effect: effects[g.r.IntN(len(effects))],
		})
	}
	for range g.upTo(2) {
		p.HostPorts = append(p.HostPorts, abi.HostPort{HostIP: g.pick(hostIPs...), Port: portNumbers[g.r.IntN(len(portNumbers))], Protocol: protocols[g.r.IntN(len(protocols))]})
	}
	if g.chance(0.3) {
		p.SchedulingGates = []string{"example.com/gate"}
	}
	if grp := g.pick(groups...); grp != "" {
		p.Group = abi.PodGroupRef{Name: grp, MinCount: int32(g.upTo(4))}
	}
	if g.chance(0.6) {
		for range g.upTo(2) {
			p.Claims = append(p.Claims, g.pick(claimNames...))
		}
		if g.chance(0.3) {
			p.EphemeralClaims = []string{g.pick(claimNames...)}
		}
		if g.chance(0.3) {
			p.VolumeDrivers = []string{g.pick(driverNames...)}
		}
	}
	g.terms(p)
	return p
}

// terms gives p, now and then, the fields of ABI minor 4: pod affinity
// terms, spread constraints, an added node affinity, required features.
func (g *gen) terms(p *abi.Pod) {
	selector := func() []abi.Requirement {
		var rs []abi.Requirement
		for range g.upTo(2) {
			r := g.requirement(false)
			if r.Operator == abi.SelectorGt || r.Operator == abi.SelectorLt {
				r.Operator = abi.SelectorIn
			}
			rs = append(rs, r)
		}
		return rs
	}
	podTerms := func() []abi.PodAffinityTerm {
		var ts []abi.PodAffinityTerm
		for range g.upTo(2) {
			t := abi.PodAffinityTerm{Selector: selector(), NoSelector: g.chance(0.1), TopologyKey: g.pick(labelKeys...),
				NoNamespaceSelector: !g.chance(0.2)}
			if g.chance(0.3) {
				t.Namespaces = []string{g.pick(namespaces...)}
			}
			if !t.NoNamespaceSelector && g.chance(0.5) {
				t.NamespaceSelector = selector()
			}
			ts = append(ts, t)
		}
		return ts
	}
	if g.chance(0.4) {
		p.PodAffinity = podTerms()
	}
	if g.chance(0.4) {
		p.PodAntiAffinity = podTerms()
	}
	if g.chance(0.5) {
		for range 1 + g.upTo(1) {
			p.SpreadConstraints = append(p.SpreadConstraints, abi.SpreadConstraint{
				MaxSkew: 1, TopologyKey: g.pick(labelKeys...), Selector: selector(), NoSelector: g.chance(0.1),
				WhenUnsatisfiable: []abi.SpreadAction{abi.SpreadDoNotSchedule, abi.SpreadDoNotSchedule, abi.SpreadScheduleAnyway}[g.r.IntN(3)],
				MatchLabelKeys:    []string{g.pick(labelKeys...)}[:g.upTo(1)], MinDomains: 1,
				NodeAffinityPolicy: []abi.InclusionPolicy{abi.InclusionHonor, abi.InclusionIgnore}[g.r.IntN(2)],
				NodeTaintsPolicy:   []abi.InclusionPolicy{abi.InclusionHonor, abi.InclusionIgnore}[g.r.IntN(2)],
			})
		}
	}
	if g.chance(0.2) {
		p.HasAddedAffinity = true
		p.AddedAffinity = []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{g.requirement(false)}}}
	}
	if g.chance(0.3) {
		p.RequiredFeatures = []string{g.pick("InPlacePodResize", "RestartAllContainers")}
	}
}

// storage is a generated storage object of kind res (fields of other kinds
// left zero, as the host sends them).
func (g *gen) storage(res abi.EventResource) *abi.StorageObject {
	o := &abi.StorageObject{Name: g.pick(claimNames...)}
	switch res {
	case abi.ResourcePersistentVolumeClaim:
		o.Namespace, o.StorageClass, o.Phase = g.pick(namespaces...), g.pick(classNames...), abi.VolumePhase(g.upTo(3))
		if g.chance(0.3) {
			o.VolumeName = "pv-1"
		}
	case abi.ResourcePersistentVolume:
		o.StorageClass, o.Phase = g.pick(classNames...), abi.VolumePhase(g.upTo(5))
		o.Labels = g.kvs(zoneKeys, []string{"a", "b", "a__b"}, 3)
		o.NodeAffinity = g.chance(0.3)
	case abi.ResourceStorageClass:
		o.Name, o.Driver = g.pick(classNames[1:]...), g.pick(driverNames...)
		o.BindingMode = abi.BindingMode(g.upTo(1))
		for range g.upTo(2) {
			o.Topology = append(o.Topology, abi.NodeSelectorTerm{MatchExpressions: []abi.Requirement{
				{Key: g.pick(zoneKeys...), Operator: abi.SelectorIn, Values: []string{g.pick("a", "b")}}}})
		}
	case abi.ResourceCSINode:
		o.Name = g.pick(nodeNames[:2]...)
		o.NodeName, o.MigratedPlugins = o.Name, g.pick("", "kubernetes.io/aws-ebs")
		for _, d := range driverNames {
			if g.chance(0.6) {
				o.Drivers = append(o.Drivers, abi.CSIDriverLimit{Name: d, Allocatable: int32(g.upTo(3)), HasAllocatable: g.chance(0.7)})
			}
		}
	case abi.ResourceCSIDriver:
		o.Name, o.CapacityTracking = g.pick(driverNames...), g.chance(0.5)
	case abi.ResourceCSIStorageCapacity:
		o.Namespace, o.StorageClass = g.pick(namespaces...), g.pick(classNames[1:]...)
		if g.chance(0.8) {
			o.Capacity, o.HasCapacity = allocAmounts[g.r.IntN(len(allocAmounts))], true
		}
	case abi.ResourceVolumeAttachment:
		o.NodeName, o.Driver = g.pick(nodeNames[:2]...), g.pick(driverNames...)
	}
	return o
}

// changeStorage returns a copy of o with some fields regenerated.
func (g *gen) changeStorage(res abi.EventResource, o *abi.StorageObject) *abi.StorageObject {
	c, m := *o, g.storage(res)
	m.Name, m.Namespace, m.NodeName = o.Name, o.Namespace, o.NodeName
	if g.chance(0.3) {
		return m
	}
	if g.chance(0.5) {
		c.Labels, c.Topology, c.Drivers = m.Labels, m.Topology, m.Drivers
	}
	if g.chance(0.5) {
		c.Capacity, c.HasCapacity, c.CapacityTracking, c.MigratedPlugins = m.Capacity, m.HasCapacity, m.CapacityTracking, m.MigratedPlugins
	}
	if g.chance(0.3) {
		c.Phase, c.VolumeName = m.Phase, m.VolumeName
	}
	return &c
}

var storageResources = []abi.EventResource{
	abi.ResourcePersistentVolume, abi.ResourcePersistentVolumeClaim, abi.ResourceStorageClass, abi.ResourceCSINode,
	abi.ResourceCSIDriver, abi.ResourceCSIStorageCapacity, abi.ResourceVolumeAttachment,
}

// pending is a generated pod in the queue, rejected by random plugins.
func (g *gen) pending(i int) *abi.Pod {
	p := g.pod(g.pick(namespaces...), fmt.Sprintf("p%d", i))
	for range 1 + g.upTo(2) {
		p.UnschedulablePlugins = append(p.UnschedulablePlugins, g.pick(allPlugins...))
	}
	if g.chance(0.2) {
		p.PendingPlugins = append(p.PendingPlugins, g.pick(allPlugins...))
	}
	if len(p.SchedulingGates) > 0 && g.chance(0.7) {
		p.UnschedulablePlugins = append(p.UnschedulablePlugins, abi.PluginSchedulingGates)
	}
	return p
}

// changePod returns a copy of p with some fields regenerated.
func (g *gen) changePod(p *abi.Pod) *abi.Pod {
	c := *p
	m := g.pod(p.Namespace, p.Name)
	if g.chance(0.5) {
		c.Requests = m.Requests
	}
	if g.chance(0.5) {
		c.Tolerations = append(append([]abi.Toleration(nil), p.Tolerations...), m.Tolerations...)
	}
	if g.chance(0.5) {
		c.SchedulingGates = nil
	}
	if g.chance(0.3) {
		c.Labels = m.Labels
	}
	return &c
}

// podActions classifies an update as the host does (host/podview's
// PodUpdateActions), for the fields the generator changes.
func podActions(old, new *abi.Pod) abi.ActionType {
	var a abi.ActionType
	if fmt.Sprint(old.Labels) != fmt.Sprint(new.Labels) {
		a |= abi.ActionUpdatePodLabel
	}
	for _, q := range old.Requests {
		if v, ok := quantity(new.Requests, q.Name); !ok || v < q.Value {
			a |= abi.ActionUpdatePodScaleDown
		}
	}
	if len(old.Tolerations) != len(new.Tolerations) {
		a |= abi.ActionUpdatePodToleration
	}
	if len(old.SchedulingGates) > 0 && len(new.SchedulingGates) == 0 {
		a |= abi.ActionUpdatePodSchedulingGatesEliminated
	}
	if a == 0 {
		a = abi.ActionUpdateOther
	}
	return a
}

func quantity(qs []abi.Quantity, name string) (int64, bool) {
	for _, q := range qs {
		if q.Name == name {
			return q.Value, true
		}
	}
	return 0, false
}

func (g *gen) group() *abi.PodGroup {
	return &abi.PodGroup{Namespace: g.pick(namespaces...), Name: g.pick(groups[2:]...), MinCount: int32(g.upTo(4)), Members: int32(g.upTo(5))}
}

func enc[T any](v *T, f func([]byte, *T) []byte) []byte {
	if v == nil {
		return nil
	}
	return f(nil, v)
}

func (g *gen) diffCase(i int) diffCase {
	n := 1 + g.r.IntN(12)
	if i%100 == 0 {
		n = 200 // a few big batches
	}
	pods := make([]*abi.Pod, n)
	for j := range pods {
		pods[j] = g.pending(i*1000 + j)
	}
	var e abi.Event
	switch k := g.r.IntN(20); k {
	case 0, 1, 2: // node added
		e = abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd, New: enc(g.node(), abi.AppendNode)}
	case 3, 4, 5: // node updated
		old := g.node()
		e = abi.Event{Resource: abi.ResourceNode, Action: g.actions(nodeUpdates),
			Old: enc(old, abi.AppendNode), New: enc(g.changeNode(old), abi.AppendNode)}
	case 6: // node deleted
		e = abi.Event{Resource: abi.ResourceNode, Action: abi.ActionDelete, Old: enc(g.node(), abi.AppendNode)}
	case 7: // assigned pod added or deleted
		p := g.pod(g.pick(namespaces...), "bound")
		p.NodeName = g.pick(nodeNames...)
		if g.chance(0.5) {
			e = abi.Event{Resource: abi.ResourcePod, Action: abi.ActionAdd, New: enc(p, abi.AppendPod)}
		} else {
			e = abi.Event{Resource: abi.ResourcePod, Action: abi.ActionDelete, Old: enc(p, abi.AppendPod)}
		}
	case 8: // assigned pod updated
		p := g.pod(g.pick(namespaces...), "bound")
		p.NodeName = "n1"
		c := g.changePod(p)
		if g.chance(0.1) {
			c.NodeName = ""
		}
		e = abi.Event{Resource: abi.ResourcePod, Action: g.actions(podUpdates), Old: enc(p, abi.AppendPod), New: enc(c, abi.AppendPod)}
	case 9, 10: // a pending pod updated: often one of the batch
		old := g.pod(g.pick(namespaces...), "other")
		if g.chance(0.7) {
			old = pods[g.r.IntN(len(pods))]
		}
		c := g.changePod(old)
		act := g.actions(podUpdates)
		if g.chance(0.6) {
			act = podActions(old, c)
		}
		e = abi.Event{Resource: abi.ResourceUnscheduledPod, Action: act, Old: enc(old, abi.AppendPod), New: enc(c, abi.AppendPod)}
	case 11: // a pending pod added or deleted
		p := g.pod(g.pick(namespaces...), "new")
		if g.chance(0.8) {
			e = abi.Event{Resource: abi.ResourceUnscheduledPod, Action: abi.ActionAdd, New: enc(p, abi.AppendPod)}
		} else {
			e = abi.Event{Resource: abi.ResourceUnscheduledPod, Action: abi.ActionDelete, Old: enc(p, abi.AppendPod)}
		}
	case 12: // pod group added, updated or deleted
		old := g.group()
		c := *old
		c.MinCount = int32(g.upTo(4))
		switch g.r.IntN(4) {
		case 0:
			e = abi.Event{Resource: abi.ResourcePodGroup, Action: abi.ActionAdd, New: enc(old, abi.AppendPodGroup)}
		case 1:
			e = abi.Event{Resource: abi.ResourcePodGroup, Action: abi.ActionDelete, Old: enc(old, abi.AppendPodGroup)}
		default:
			e = abi.Event{Resource: abi.ResourcePodGroup, Action: abi.ActionUpdateOther, Old: enc(old, abi.AppendPodGroup), New: enc(&c, abi.AppendPodGroup)}
		}
	case 13: // an event missing its object
		res := []abi.EventResource{abi.ResourceNode, abi.ResourcePod, abi.ResourceUnscheduledPod, abi.ResourcePodGroup,
			abi.ResourcePersistentVolumeClaim, abi.ResourceCSINode}[g.r.IntN(6)]
		e = abi.Event{Resource: res, Action: []abi.ActionType{abi.ActionAdd, abi.ActionDelete, abi.ActionUpdate}[g.r.IntN(3)]}
	default: // a storage object added, updated or deleted
		res := storageResources[g.r.IntN(len(storageResources))]
		old := g.storage(res)
		switch g.r.IntN(4) {
		case 0:
			e = abi.Event{Resource: res, Action: abi.ActionAdd, New: enc(old, abi.AppendStorage)}
		case 1:
			e = abi.Event{Resource: res, Action: abi.ActionDelete, Old: enc(old, abi.AppendStorage)}
		default:
			e = abi.Event{Resource: res, Action: abi.ActionUpdateOther, Old: enc(old, abi.AppendStorage), New: enc(g.changeStorage(res, old), abi.AppendStorage)}
		}
	}
	c := diffCase{ev: policytest.MakeEvent(&e), pods: make([]abi.PodView, n)}
	for j, p := range pods {
		c.pods[j] = policytest.PodView(p)
	}
	return c
}
