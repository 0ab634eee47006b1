// Package podtopologyspread is upstream's PodTopologySpread plugin: a pod's
// DoNotSchedule topologySpreadConstraints as a filter, its ScheduleAnyway
// ones (or the system defaults) as a score. Extension points PreFilter,
// Filter, PreScore, Score, NormalizeScore; rejects
// UnschedulableAndUnresolvable (ReasonTopologySpreadMissingLabel) or
// Unschedulable (ReasonTopologySpread). Weight 2.
package podtopologyspread

import (
	"fmt"
	"maps"
	"math"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// Upstream's PodTopologySpread reasons.
const (
	ReasonTopologySpread = "node(s) didn't match pod topology spread constraints"
	// ReasonTopologySpreadMissingLabel rejects a node without the
	// topology key of a DoNotSchedule constraint.
	ReasonTopologySpreadMissingLabel = ReasonTopologySpread + " (missing required label)"
)

var (
	statusTopologySpread = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginPodTopologySpread,
		Reasons: []string{ReasonTopologySpread}}
	statusTopologySpreadMissingLabel = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginPodTopologySpread,
		Reasons: []string{ReasonTopologySpreadMissingLabel}}
)

// weightPodTopologySpread is upstream's default score weight.
const weightPodTopologySpread = 2

// systemDefaultConstraints are upstream's system default constraints
// (defaultingType System, the default): spread a pod without constraints of
// its own over hostnames and zones, as a preference only.
var systemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// podTopologySpread is upstream v1.37's PodTopologySpread plugin: a pod's
// DoNotSchedule topologySpreadConstraints are a filter (placing the pod on
// the node must keep the number of matching pods in the node's domain within
// maxSkew of the least populated domain, that minimum taken as 0 while fewer
// than minDomains domains exist), its ScheduleAnyway ones a score (fewer
// matching pods in the node's domains score higher). A pod without
// constraints of its own is spread by the system defaults (hostname maxSkew
// 3, zone maxSkew 5, ScheduleAnyway) over the pods its Services,
// ReplicationController, ReplicaSet or StatefulSet select (upstream's
// helper.DefaultSelector, read through the profile's listers).
//
// Only nodes that pass a constraint's node inclusion policies count towards
// its domains: nodeAffinityPolicy Honor (the default) the pod's nodeSelector
// and required node affinity, nodeTaintsPolicy Honor (default Ignore) the
// pod's tolerations of NoSchedule and NoExecute taints. matchLabelKeys adds
// the pod's values of those keys to the selector, as upstream's scheduler
// still does with MatchLabelKeysInPodTopologySpread (beta, on) even though
// the v1.37 apiserver already merged them at creation
// (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta, on): the
// requirement twice selects the same pods, and pods created before the merge
// still get it.
//
// Extension points: PreFilter (skips a pod without DoNotSchedule
// constraints; reads the matching pods per domain from the snapshot's
// selector indexes, cache.Snapshot.PodCounts),
// Filter, PodUpdater (preemption's dry runs and nominated pods), PreScore
// (skips a pod without ScheduleAnyway or default constraints), Score,
// NormalizeScore (reversed; nodes lacking a topology key of the pod's own
// constraints score 0). Rejects: UnschedulableAndUnresolvable
// (ReasonTopologySpreadMissingLabel), Unschedulable (ReasonTopologySpread:
// evicting matching pods can fix the skew, so preemption tries), Error for a
// selector that does not parse. Weight 2.
type podTopologySpread struct {
	// defaults are the constraints of a pod without its own; the profile
	// uses systemDefaultConstraints (systemDefaulted), tests may set others
	// (upstream's defaultingType List).
	defaults        []v1.TopologySpreadConstraint
	systemDefaulted bool
	listers         framework.Listers
}

var (
	_ framework.PreFilterPlugin = (*podTopologySpread)(nil)
	_ framework.PreScorePlugin  = (*podTopologySpread)(nil)
	_ framework.PodUpdater      = (*spreadFilter)(nil)
	_ framework.ScoreNormalizer = (*spreadScorer)(nil)
)

// newPodTopologySpread is the plugin with the system default constraints,
// reading the selectors of the default spreading through l.
func newPodTopologySpread(l framework.Listers) *podTopologySpread {
	return &podTopologySpread{defaults: systemDefaultConstraints, systemDefaulted: true, listers: l}
}

func (*podTopologySpread) Name() string { return abi.PluginPodTopologySpread }

// spreadConstraint is a v1.TopologySpreadConstraint of the pod with its
// selector parsed (matchLabelKeys merged) and its defaults applied.
type spreadConstraint struct {
	maxSkew            int32
	key                string
	selector           helper.LabelMatcher
	minDomains         int32
	nodeAffinityPolicy v1.NodeInclusionPolicy
	nodeTaintsPolicy   v1.NodeInclusionPolicy
	// self is 1 when the selector matches the pod itself (placing it adds
	// one to its domain), else 0. Set by PreFilter only.
	self int
}

// constraintsFor returns pod's constraints of action (upstream's
// getConstraints and initPreScoreState): the pod's own, or, when it has none,
// the defaults of action with the selector of the controllers and Services
// that select the pod; nil when there are none.
func (pl *podTopologySpread) constraintsFor(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]spreadConstraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return parseConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	// Upstream parses the defaults before looking the selector up; neither
	// can fail for defaults (they have no selector), so ask the listers
	// only when a default applies, and build the constraints only when
	// something selects the pod.
	if !slices.ContainsFunc(pl.defaults, func(c v1.TopologySpreadConstraint) bool { return c.WhenUnsatisfiable == action }) {
		return nil, nil
	}
	sel := pl.defaultSelector(pod)
	if sel == nil || sel.Empty() {
		return nil, nil
	}
	cs, err := parseConstraints(pl.defaults, pod.Labels, action)
	for i := range cs {
		cs[i].selector = helper.CompileLabels(sel)
	}
	return cs, err
}

// parseConstraints parses the constraints of action.
func parseConstraints(cs []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]spreadConstraint, error) {
	var out []spreadConstraint
	for i := range cs {
		c := &cs[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if len(c.MatchLabelKeys) > 0 {
			sel = withMatchLabelKeys(sel, c.MatchLabelKeys, podLabels)
		}
		sc := spreadConstraint{maxSkew: c.MaxSkew, key: c.TopologyKey, selector: helper.CompileLabels(sel), minDomains: 1,
			nodeAffinityPolicy: v1.NodeInclusionPolicyHonor, nodeTaintsPolicy: v1.NodeInclusionPolicyIgnore}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.nodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			sc.nodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, sc)
	}
	return out, nil
}

// withMatchLabelKeys ANDs sel with the pod's label of each key in keys that
// the pod has. A nil labelSelector (sel selects nothing) stays as it is.
func withMatchLabelKeys(sel labels.Selector, keys []string, podLabels map[string]string) labels.Selector {
	set := labels.Set{}
	for _, k := range keys {
		if v, ok := podLabels[k]; ok {
			set[k] = v
		}
	}
	if len(set) == 0 {
		return sel
	}
	reqs, ok := sel.Requirements()
	if !ok {
		return sel
	}
	return labels.SelectorFromSet(set).Add(reqs...)
}

// The controller kinds whose selector spreads a pod by default.
var (
	rcKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// defaultSelector is upstream's helper.DefaultSelector: the union of the
// selectors of the Services selecting pod and of its controlling
// ReplicationController, ReplicaSet or StatefulSet; nil when nothing selects
// it. A nil lister reads as empty; a lister error is ignored, as upstream.
func (pl *podTopologySpread) defaultSelector(pod *v1.Pod) labels.Selector {
	var set labels.Set
	if l := pl.listers.Services; l != nil {
		if svcs, err := l.Services(pod.Namespace).List(labels.Everything()); err == nil {
			for _, svc := range svcs {
				// A nil selector selects nothing, not everything.
				if svc.Spec.Selector != nil && selectsLabels(svc.Spec.Selector, pod.Labels) {
					set = labels.Merge(set, svc.Spec.Selector)
				}
			}
		}
	}
	var sel labels.Selector
	if set != nil {
		sel = set.AsSelector()
	}
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return sel
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return sel
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if l := pl.listers.ReplicationControllers; l != nil {
			if rc, err := l.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil {
				set = labels.Merge(set, rc.Spec.Selector)
				sel = set.AsSelector()
			}
		}
	case rsKind:
		if l := pl.listers.ReplicaSets; l != nil {
			if rs, err := l.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
				sel = addRequirements(sel, rs.Spec.Selector)
			}
		}
	case ssKind:
		if l := pl.listers.StatefulSets; l != nil {
			if ss, err := l.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
				sel = addRequirements(sel, ss.Spec.Selector)
			}
		}
	}
	return sel
}

// selectsLabels reports whether every key of selector has its value in
// podLabels (a Service's selector as a label set).
func selectsLabels(selector, podLabels map[string]string) bool {
	for k, v := range selector {
		if pv, ok := podLabels[k]; !ok || pv != v {
			return false
		}
	}
	return true
}

// addRequirements ANDs sel (nil for none yet) with the requirements of ls; a
// selector that does not parse or selects nothing adds none.
func addRequirements(sel labels.Selector, ls *metav1.LabelSelector) labels.Selector {
	other, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return sel
	}
	reqs, ok := other.Requirements()
	if !ok {
		return sel
	}
	if sel == nil {
		sel = labels.NewSelector()
	}
	return sel.Add(reqs...)
}

// hasTopologyKeys reports whether nodeLabels hold the topology key of every
// constraint.
func hasTopologyKeys(nodeLabels map[string]string, cs []spreadConstraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].key]; !ok {
			return false
		}
	}
	return true
}

// countMatching counts the pods of ns that sel selects, less terminating
// ones; an empty selector counts none (upstream's countPodsMatchSelector).
func countMatching(pods []*cache.PodInfo, sel *helper.LabelMatcher, ns string) int {
	n := 0
	for _, pi := range pods {
		if matching(pi, sel, ns) {
			n++
		}
	}
	return n
}

// matching is countMatching's test for one pod.
func matching(pi *cache.PodInfo, sel *helper.LabelMatcher, ns string) bool {
	p := pi.Pod
	return p.DeletionTimestamp == nil && p.Namespace == ns && !sel.Selector().Empty() && sel.Matches(p.Labels)
}

// podCounts is the snapshot's selector index of c's selector for pods of
// ns: countMatching per node and per domain of c's key.
func podCounts(snap *cache.Snapshot, c *spreadConstraint, ns string) *cache.PodCounts {
	sel := c.selector
	return snap.PodCounts("pts|"+ns+"|"+cache.SelectorKey(sel.Selector()), c.key,
		func(pi *cache.PodInfo) bool { return matching(pi, &sel, ns) })
}

// includesAll reports whether every node passes c's inclusion policies for
// pod, whatever its labels and taints: the policies are Ignore, or there is
// nothing to honour.
func includesAll(pod *v1.Pod, c *spreadConstraint) bool {
	if c.nodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		return false
	}
	if c.nodeAffinityPolicy != v1.NodeInclusionPolicyHonor {
		return true
	}
	a := pod.Spec.Affinity
	return len(pod.Spec.NodeSelector) == 0 &&
		(a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil)
}

// oneKey reports whether every constraint has the same topology key.
func oneKey(cs []spreadConstraint) bool {
	for i := range cs {
		if cs[i].key != cs[0].key {
			return false
		}
	}
	return true
}

// inclusion answers the node inclusion policies of a pod's constraints for
// one node, working each check out at most once (upstream's
// matchNodeInclusionPolicies, asked per constraint).
type inclusion struct {
	pod      *cache.PodInfo
	affinity *nodeaffinity.RequiredNodeAffinity
	ni       *cache.NodeInfo
	// affinityOK and taintsOK: 0 not worked out yet, 1 yes, 2 no.
	affinityOK, taintsOK int8
}

// includes reports whether the node counts for c.
func (in *inclusion) includes(c *spreadConstraint) bool {
	if c.nodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		if in.affinityOK == 0 {
			in.affinityOK = 2
			// A parse error (which API validation prevents) does not
			// match, as upstream.
			if ok, _ := in.affinity.Match(in.ni.Node()); ok {
				in.affinityOK = 1
			}
		}
		if in.affinityOK != 1 {
			return false
		}
	}
	if c.nodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if in.taintsOK == 0 {
			in.taintsOK = 2
			// TaintToleration's filter: every NoSchedule and NoExecute
			// taint tolerated (upstream's DoNotScheduleTaintsFilterFunc).
			if helper.ToleratesScheduleTaints(in.pod.Pod.Spec.Tolerations, in.ni.Node().Spec.Taints) {
				in.taintsOK = 1
			}
		}
		if in.taintsOK != 1 {
			return false
		}
	}
	return true
}

// criticalPaths are two domains with the fewest matching pods of a
// constraint: [0] always holds the minimum, [1] at least as many (not
// necessarily the second minimum). Two suffice because preemption removes
// pods from one node per dry run, on its own copy of the state (upstream's
// criticalPaths).
type criticalPaths [2]criticalPath

type criticalPath struct {
	value string
	num   int
}

func newCriticalPaths() criticalPaths {
	return criticalPaths{{num: math.MaxInt32}, {num: math.MaxInt32}}
}

// update records that domain value now has num matching pods.
func (p *criticalPaths) update(value string, num int) {
	switch value {
	case p[0].value:
		p[0].num = num
	case p[1].value:
		p[1].num = num
	default:
		if num < p[0].num {
			p[1] = p[0]
			p[0] = criticalPath{value, num}
		} else if num < p[1].num {
			p[1] = criticalPath{value, num}
		}
		return
	}
	if p[0].num > p[1].num {
		p[0], p[1] = p[1], p[0]
	}
}

// PreFilter counts, for each DoNotSchedule constraint, the pods it selects
// in each domain over the nodes of snap that have every topology key and
// pass its inclusion policies (upstream's calPreFilterState), and records
// the least populated domains. The counts come from the snapshot's selector
// index of each constraint: its domain totals when every node with the
// topology key counts (one key, nothing to honour), else its per-node
// counts summed over the nodes that count; no pod is matched here.
func (pl *podTopologySpread) PreFilter(pod *cache.PodInfo, snap *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	p := pod.Pod
	cs, err := pl.constraintsFor(p, v1.DoNotSchedule)
	if err != nil {
		return nil, nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginPodTopologySpread,
			Err: fmt.Errorf("obtaining hard topology spread constraints of pod %s/%s: %w", p.Namespace, p.Name, err)}
	}
	if len(cs) == 0 {
		return nil, nil, nil
	}
	var nodes []*cache.NodeInfo
	if snap != nil {
		nodes = snap.List()
	}
	f := &spreadFilter{
		pod:         pod,
		affinity:    nodeaffinity.GetRequiredNodeAffinity(p),
		constraints: cs,
		counts:      make([]map[string]int, len(cs)),
		paths:       make([]criticalPaths, len(cs)),
	}
	podLabels := labels.Set(p.Labels)
	pcs := make([]*cache.PodCounts, len(cs))
	fast := oneKey(cs)
	for i := range cs {
		size := 0
		if cs[i].key == v1.LabelHostname {
			size = len(nodes)
		}
		f.counts[i] = make(map[string]int, size)
		if cs[i].selector.Selector().Matches(podLabels) {
			cs[i].self = 1
		}
		if snap != nil {
			pcs[i] = podCounts(snap, &cs[i], p.Namespace)
		}
		fast = fast && includesAll(p, &cs[i])
	}
	if fast && snap != nil {
		// Every node with the one topology key counts: the domain totals
		// are the answer.
		for i := range cs {
			for v, d := range pcs[i].Domains() {
				f.counts[i][v] = d.Pods
			}
		}
	} else {
		for _, ni := range nodes {
			node := ni.Node()
			if !hasTopologyKeys(node.Labels, cs) {
				continue
			}
			in := inclusion{pod: pod, affinity: &f.affinity, ni: ni}
			for i := range cs {
				c := &cs[i]
				if in.includes(c) {
					f.counts[i][node.Labels[c.key]] += pcs[i].Node(node.Name)
				}
			}
		}
	}
	for i := range cs {
		f.paths[i] = newCriticalPaths()
		for v, n := range f.counts[i] {
			f.paths[i].update(v, n)
		}
	}
	return f, nil, nil
}

// spreadFilter is the pod's DoNotSchedule constraints with the matching pods
// counted per domain (upstream's preFilterState). Filter only reads it;
// AddPod and RemovePod change it, on a Clone.
type spreadFilter struct {
	pod      *cache.PodInfo
	affinity nodeaffinity.RequiredNodeAffinity
	// constraints are shared by the clones: they never change.
	constraints []spreadConstraint
	// counts[i] maps each domain of constraint i (topology value) to its
	// number of matching pods; paths[i] are its least populated domains.
	counts []map[string]int
	paths  []criticalPaths
}

// Filter checks every constraint in order: the node must have the topology
// key, and the pods matching in its domain, plus the pod itself if it
// matches, may exceed the global minimum by maxSkew at most.
func (f *spreadFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	nodeLabels := ni.Node().Labels
	for i := range f.constraints {
		c := &f.constraints[i]
		value, ok := nodeLabels[c.key]
		if !ok {
			return statusTopologySpreadMissingLabel
		}
		minMatch := f.paths[i][0].num
		if len(f.counts[i]) < int(c.minDomains) {
			// Fewer eligible domains than minDomains: the global
			// minimum is taken as 0.
			minMatch = 0
		}
		if f.counts[i][value]+c.self-minMatch > int(c.maxSkew) {
			return statusTopologySpread
		}
	}
	return nil
}

// Clone copies the counts; the constraints are shared.
func (f *spreadFilter) Clone() framework.PodFilter {
	c := *f
	c.counts = make([]map[string]int, len(f.counts))
	for i, m := range f.counts {
		c.counts[i] = maps.Clone(m)
	}
	c.paths = slices.Clone(f.paths)
	return &c
}

func (f *spreadFilter) AddPod(pod *cache.PodInfo, ni *cache.NodeInfo) { f.update(pod, ni, 1) }

func (f *spreadFilter) RemovePod(pod *cache.PodInfo, ni *cache.NodeInfo) { f.update(pod, ni, -1) }

// update adds delta to the domain of ni's node for each constraint that
// selects pod and counts the node (upstream's updateWithPod).
func (f *spreadFilter) update(pod *cache.PodInfo, ni *cache.NodeInfo, delta int) {
	node := ni.Node()
	if node == nil || pod.Pod.Namespace != f.pod.Pod.Namespace || !hasTopologyKeys(node.Labels, f.constraints) {
		return
	}
	in := inclusion{pod: f.pod, affinity: &f.affinity, ni: ni}
	podLabels := labels.Set(pod.Pod.Labels)
	for i := range f.constraints {
		c := &f.constraints[i]
		if !c.selector.Selector().Matches(podLabels) || !in.includes(c) {
			continue
		}
		v := node.Labels[c.key]
		f.counts[i][v] += delta
		f.paths[i].update(v, f.counts[i][v])
	}
}

// PreScore works out the pod's ScheduleAnyway (or default) constraints for
// the feasible nodes (upstream's initPreScoreState and PreScore): which
// nodes lack a topology key (ignored: they score 0), each constraint's
// weight log(domains+2), and, for constraints other than hostname, the
// matching pods per domain of the feasible nodes, counted over the nodes of
// snap that count, and for hostname constraints the matching pods of each
// feasible node; all from the snapshot's selector indexes, as PreFilter.
func (pl *podTopologySpread) PreScore(pod *cache.PodInfo, nodes []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	if snap == nil || snap.NumNodes() == 0 {
		return nil, nil
	}
	p := pod.Pod
	cs, err := pl.constraintsFor(p, v1.ScheduleAnyway)
	if err != nil {
		return nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginPodTopologySpread,
			Err: fmt.Errorf("obtaining soft topology spread constraints of pod %s/%s: %w", p.Namespace, p.Name, err)}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	// Only the pod's own constraints (or defaults other than the
	// system's) need nodes to have every topology key: a node without a
	// zone label is still spread by hostname under the system defaults.
	requireAll := len(p.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	s := &spreadScorer{
		ns:          p.Namespace,
		constraints: cs,
		ignored:     make([]bool, len(nodes)),
		counts:      make([]map[string]int64, len(cs)),
		hostCounts:  make([][]int64, len(cs)),
		weights:     make([]float64, len(cs)),
	}
	counted := false // some constraint is counted per domain here
	for i := range cs {
		if cs[i].key != v1.LabelHostname {
			s.counts[i] = map[string]int64{}
			counted = true
		}
	}
	ignored := 0
	for j, ni := range nodes {
		node := ni.Node()
		if node == nil || requireAll && !hasTopologyKeys(node.Labels, cs) {
			s.ignored[j] = true
			ignored++
			continue
		}
		for i := range cs {
			if m := s.counts[i]; m != nil {
				v := node.Labels[cs[i].key]
				if _, ok := m[v]; !ok {
					m[v] = 0
				}
			}
		}
	}
	for i := range cs {
		size := len(s.counts[i])
		if cs[i].key == v1.LabelHostname {
			size = len(nodes) - ignored
		}
		s.weights[i] = math.Log(float64(size + 2))
	}
	pcs := make([]*cache.PodCounts, len(cs))
	fast := !requireAll || oneKey(cs)
	for i := range cs {
		pcs[i] = podCounts(snap, &cs[i], p.Namespace)
		if cs[i].key == v1.LabelHostname {
			// Counted per feasible node: the node is its domain.
			s.hostCounts[i] = make([]int64, len(nodes))
			for j, ni := range nodes {
				if node := ni.Node(); node != nil {
					s.hostCounts[i][j] = int64(pcs[i].Node(node.Name))
				}
			}
			continue
		}
		fast = fast && includesAll(p, &cs[i])
		if _, ok := s.counts[i][""]; ok && !requireAll {
			// Upstream counts the nodes without the key under value "".
			fast = false
		}
	}
	if !counted {
		return s, nil
	}
	if fast {
		for i := range cs {
			m := s.counts[i]
			if m == nil {
				continue
			}
			domains := pcs[i].Domains()
			for v := range m {
				m[v] = int64(domains[v].Pods)
			}
		}
		return s, nil
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(p)
	for _, ni := range snap.List() {
		node := ni.Node()
		if requireAll && !hasTopologyKeys(node.Labels, cs) {
			continue
		}
		in := inclusion{pod: pod, affinity: &affinity, ni: ni}
		for i := range cs {
			m := s.counts[i]
			if m == nil {
				continue
			}
			// Domains without a feasible node are not counted.
			v, has := node.Labels[cs[i].key]
			n, ok := m[v]
			if !ok || !in.includes(&cs[i]) {
				continue
			}
			if has {
				n += int64(pcs[i].Node(node.Name))
			} else {
				n += int64(countMatching(ni.Pods(), &cs[i].selector, p.Namespace))
			}
			m[v] = n
		}
	}
	return s, nil
}

// spreadScorer is the pod's soft constraints worked out for the feasible
// nodes (upstream's preScoreState). ignored is by index of those nodes:
// Score and NormalizeScores get the same list.
type spreadScorer struct {
	ns          string
	constraints []spreadConstraint
	ignored     []bool
	// counts[i] maps each domain of constraint i to its matching pods; nil
	// for a hostname constraint, whose counts are hostCounts[i], by index
	// of the feasible nodes.
	counts     []map[string]int64
	hostCounts [][]int64
	weights    []float64
}

// Score sums, over the constraints whose topology key the node has, the
// matching pods in its domain times the constraint's weight plus maxSkew-1
// (which waters small skews down), rounded.
func (s *spreadScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for j, ni := range nodes {
		scores[j] = 0
		node := ni.Node()
		if node == nil || s.ignored[j] {
			continue
		}
		var score float64
		for i := range s.constraints {
			c := &s.constraints[i]
			v, ok := node.Labels[c.key]
			if !ok {
				continue
			}
			var n int64
			if s.counts[i] == nil {
				n = s.hostCounts[i][j]
			} else {
				n = s.counts[i][v]
			}
			score += float64(n)*s.weights[i] + float64(c.maxSkew-1)
		}
		scores[j] = int64(math.Round(score))
	}
}

// NormalizeScores reverses the raw scores onto 0 to MaxNodeScore: the
// fewest matching pods score highest, MaxNodeScore*(max+min-score)/max
// (every node MaxNodeScore when the highest is 0); ignored nodes score 0.
func (s *spreadScorer) NormalizeScores(scores []int64) {
	var lowest int64 = math.MaxInt64
	var highest int64
	for j, v := range scores {
		if s.ignored[j] {
			continue
		}
		lowest, highest = min(lowest, v), max(highest, v)
	}
	for j, v := range scores {
		switch {
		case s.ignored[j]:
			scores[j] = 0
		case highest == 0:
			scores[j] = framework.MaxNodeScore
		default:
			scores[j] = framework.MaxNodeScore * (highest + lowest - v) / highest
		}
	}
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginPodTopologySpread, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore), Default: true,
		Weight: weightPodTopologySpread, Args: spreadArgs,
		New: func(h framework.Handle, args any) (framework.Plugin, error) {
			pl := args.(podTopologySpread)
			pl.listers = h.Listers()
			return &pl, nil
		}}
}

// spreadArgs is PodTopologySpread's Row.Args.
func spreadArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.PodTopologySpreadArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	if args.DefaultingType == "" {
		args.DefaultingType = kschedv1.SystemDefaulting
	}
	if err := validateSpread(path, &args); err != nil {
		return nil, err
	}
	if args.DefaultingType == kschedv1.ListDefaulting {
		return podTopologySpread{defaults: args.DefaultConstraints}, nil
	}
	return podTopologySpread{defaults: systemDefaultConstraints, systemDefaulted: true}, nil
}

// validateSpread is upstream's ValidatePodTopologySpreadArgs.
func validateSpread(path *field.Path, a *kschedv1.PodTopologySpreadArgs) error {
	var errs field.ErrorList
	tp := path.Child("defaultingType")
	switch a.DefaultingType {
	case kschedv1.SystemDefaulting:
		if len(a.DefaultConstraints) > 0 {
			errs = append(errs, field.Invalid(tp, a.DefaultingType, "when .defaultConstraints are not empty"))
		}
	case kschedv1.ListDefaulting:
	default:
		errs = append(errs, field.NotSupported(tp, a.DefaultingType,
			[]string{string(kschedv1.SystemDefaulting), string(kschedv1.ListDefaulting)}))
	}
	cp := path.Child("defaultConstraints")
	for i, c := range a.DefaultConstraints {
		p := cp.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch wp := p.Child("whenUnsatisfiable"); c.WhenUnsatisfiable {
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		case "":
			errs = append(errs, field.Required(wp, "can not be empty"))
		default:
			errs = append(errs, field.NotSupported(wp, c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		for j := range a.DefaultConstraints[:i] {
			o := &a.DefaultConstraints[j]
			if c.TopologyKey == o.TopologyKey && c.WhenUnsatisfiable == o.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	return errs.ToAggregate()
}
