package plugins_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/interpodaffinity"
	"github.com/wasmsched/wasmsched/host/framework/plugins/podtopologyspread"
)

// TestCountsMatchScan checks the snapshot's selector and term indexes, kept
// up to date through cache updates, UpdateSnapshot, Assume and Forget,
// against indexes built from scratch (a fresh snapshot of the same node
// infos, which counts every pod): InterPodAffinity's and
// PodTopologySpread's PreFilter, Filter (also after AddPod and RemovePod)
// and scores must agree on random clusters, pods and changes.
func TestCountsMatchScan(t *testing.T) {
	const trials = 300
	for trial := range trials {
		seed := uint64(trial)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			newCountsTrial(t, seed).run(40)
		})
	}
}

type countsTrial struct {
	t       *testing.T
	rng     *rand.Rand
	c       *cache.Cache
	snap    *cache.Snapshot
	nsIndex toolscache.Indexer
	plugins []framework.Plugin
	nodes   []*v1.Node
	pods    []*v1.Pod // in the cache
	next    int
}

func newCountsTrial(t *testing.T, seed uint64) *countsTrial {
	tr := &countsTrial{t: t, rng: rand.New(rand.NewPCG(seed, 31)), c: cache.New(), snap: cache.NewSnapshot(),
		nsIndex: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})}
	for _, ns := range countsNamespaces {
		if err := tr.nsIndex.Add(tr.namespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	// Services selecting app=a in ns1 and tier=x in ns2 give the pods they
	// select without constraints of their own PodTopologySpread's system
	// default constraints (over hostnames and zones, some nodes having no
	// zone).
	svcIndex := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, svc := range []*v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "a"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "x"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "x"}}},
	} {
		if err := svcIndex.Add(svc); err != nil {
			t.Fatal(err)
		}
	}
	h := framework.NewHandle(framework.HandleOptions{Listers: framework.Listers{Namespaces: corelisters.NewNamespaceLister(tr.nsIndex),
		Services: corelisters.NewServiceLister(svcIndex)}})
	for _, row := range []framework.Row{interpodaffinity.Row(), podtopologyspread.Row()} {
		args, err := row.Args(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := row.New(h, args)
		if err != nil {
			t.Fatal(err)
		}
		tr.plugins = append(tr.plugins, pl)
	}
	for range 4 + tr.rng.IntN(8) {
		tr.addNode()
	}
	for range tr.rng.IntN(30) {
		tr.addPod()
	}
	if err := tr.c.UpdateSnapshot(tr.snap); err != nil {
		t.Fatal(err)
	}
	return tr
}

var (
	countsNamespaces = []string{"ns1", "ns2", "ns3"}
	countsKeys       = []string{v1.LabelHostname, v1.LabelTopologyZone, "rack"}
)

func (tr *countsTrial) pick(vals ...string) string { return vals[tr.rng.IntN(len(vals))] }

func (tr *countsTrial) namespace(name string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": tr.pick("a", "b")}}}
}

func (tr *countsTrial) nodeLabels(name string) map[string]string {
	l := map[string]string{v1.LabelHostname: name}
	if tr.rng.IntN(8) > 0 {
		l[v1.LabelTopologyZone] = tr.pick("z1", "z2", "z3", "")
	}
	if tr.rng.IntN(2) == 0 {
		l["rack"] = tr.pick("r1", "r2")
	}
	return l
}

func (tr *countsTrial) addNode() {
	name := fmt.Sprintf("n%d", len(tr.nodes))
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: tr.nodeLabels(name)}}
	if tr.rng.IntN(4) == 0 {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}}
	}
	tr.nodes = append(tr.nodes, n)
	tr.c.AddNode(n)
}

func (tr *countsTrial) selector() *metav1.LabelSelector {
	switch tr.rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return &metav1.LabelSelector{}
	case 2:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	case 3:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}
	case 4:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"c"}}}}
	}
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": tr.pick("a", "b", "c")}}
}

func (tr *countsTrial) term() v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{LabelSelector: tr.selector(), TopologyKey: tr.pick(countsKeys...)}
	switch tr.rng.IntN(4) {
	case 0:
		t.Namespaces = []string{tr.pick(countsNamespaces...), tr.pick(countsNamespaces...)}
	case 1:
		t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": tr.pick("a", "b")}}
	case 2:
		t.NamespaceSelector = &metav1.LabelSelector{}
	}
	return t
}

func (tr *countsTrial) terms(n int) []v1.PodAffinityTerm {
	var ts []v1.PodAffinityTerm
	for range tr.rng.IntN(n + 1) {
		ts = append(ts, tr.term())
	}
	return ts
}

func (tr *countsTrial) weighted() []v1.WeightedPodAffinityTerm {
	var ts []v1.WeightedPodAffinityTerm
	for range tr.rng.IntN(3) {
		ts = append(ts, v1.WeightedPodAffinityTerm{Weight: int32(1 + tr.rng.IntN(3)*49), PodAffinityTerm: tr.term()})
	}
	return ts
}

func (tr *countsTrial) spread() []v1.TopologySpreadConstraint {
	var cs []v1.TopologySpreadConstraint
	for range tr.rng.IntN(3) {
		c := v1.TopologySpreadConstraint{MaxSkew: int32(1 + tr.rng.IntN(2)), TopologyKey: tr.pick(countsKeys...),
			WhenUnsatisfiable: v1.UnsatisfiableConstraintAction(tr.pick(string(v1.DoNotSchedule), string(v1.ScheduleAnyway))),
			LabelSelector:     tr.selector()}
		if tr.rng.IntN(3) == 0 {
			c.MatchLabelKeys = []string{tr.pick("app", "tier")}
		}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && tr.rng.IntN(3) == 0 {
			m := int32(1 + tr.rng.IntN(4))
			c.MinDomains = &m
		}
		policy := func() *v1.NodeInclusionPolicy {
			switch tr.rng.IntN(3) {
			case 0:
				p := v1.NodeInclusionPolicyHonor
				return &p
			case 1:
				p := v1.NodeInclusionPolicyIgnore
				return &p
			}
			return nil
		}
		c.NodeAffinityPolicy, c.NodeTaintsPolicy = policy(), policy()
		cs = append(cs, c)
	}
	return cs
}

// pod is a random pod; about one in three has affinity terms and one in
// three spread constraints.
func (tr *countsTrial) pod(node string) *v1.Pod {
	tr.next++
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", tr.next), UID: types.UID(fmt.Sprintf("uid%d", tr.next)),
		Namespace: tr.pick(countsNamespaces...), Labels: tr.podLabels()}}
	p.Spec.NodeName = node
	if tr.rng.IntN(6) == 0 {
		p.DeletionTimestamp = &metav1.Time{}
	}
	if tr.rng.IntN(3) == 0 {
		pa := &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: tr.terms(1), PreferredDuringSchedulingIgnoredDuringExecution: tr.weighted()}
		anti := &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: tr.terms(2), PreferredDuringSchedulingIgnoredDuringExecution: tr.weighted()}
		p.Spec.Affinity = &v1.Affinity{PodAffinity: pa, PodAntiAffinity: anti}
	}
	if tr.rng.IntN(3) == 0 {
		p.Spec.TopologySpreadConstraints = tr.spread()
	}
	if tr.rng.IntN(5) == 0 {
		p.Spec.NodeSelector = map[string]string{"rack": tr.pick("r1", "r2")}
	}
	if tr.rng.IntN(3) == 0 {
		p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	}
	return p
}

func (tr *countsTrial) podLabels() map[string]string {
	l := map[string]string{}
	if tr.rng.IntN(5) > 0 {
		l["app"] = tr.pick("a", "b", "c")
	}
	if tr.rng.IntN(2) == 0 {
		l["tier"] = tr.pick("x", "y")
	}
	return l
}

func (tr *countsTrial) randomNode() string { return tr.nodes[tr.rng.IntN(len(tr.nodes))].Name }

func (tr *countsTrial) addPod() {
	p := tr.pod(tr.randomNode())
	if err := tr.c.AddPod(p); err != nil {
		tr.t.Fatal(err)
	}
	tr.pods = append(tr.pods, p)
}

// step makes one random change to the cache, the namespaces or the
// snapshot, or checks the plugins.
func (tr *countsTrial) step() {
	switch r := tr.rng.IntN(20); {
	case r < 4:
		tr.addPod()
	case r < 6 && len(tr.pods) > 0:
		i := tr.rng.IntN(len(tr.pods))
		old := tr.pods[i]
		p := old.DeepCopy()
		p.Labels = tr.podLabels()
		if tr.rng.IntN(3) == 0 {
			p.DeletionTimestamp = &metav1.Time{}
		}
		if err := tr.c.UpdatePod(old, p); err != nil {
			tr.t.Fatal(err)
		}
		tr.pods[i] = p
	case r < 8 && len(tr.pods) > 0:
		i := tr.rng.IntN(len(tr.pods))
		if err := tr.c.RemovePod(tr.pods[i]); err != nil {
			tr.t.Fatal(err)
		}
		tr.pods = slices.Delete(tr.pods, i, i+1)
	case r < 9:
		i := tr.rng.IntN(len(tr.nodes))
		old := tr.nodes[i]
		n := old.DeepCopy()
		n.Labels = tr.nodeLabels(n.Name)
		tr.c.UpdateNode(old, n)
		tr.nodes[i] = n
	case r < 10:
		tr.addNode()
	case r < 11:
		if err := tr.nsIndex.Update(tr.namespace(tr.pick(countsNamespaces...))); err != nil {
			tr.t.Fatal(err)
		}
	case r < 13:
		if err := tr.c.UpdateSnapshot(tr.snap); err != nil {
			tr.t.Fatal(err)
		}
	case r < 15:
		ni := tr.snap.List()[tr.rng.IntN(tr.snap.NumNodes())]
		if err := tr.snap.Assume(cache.NewPodInfo(tr.pod(ni.Name()))); err != nil {
			tr.t.Fatal(err)
		}
	case r < 16:
		// Forget a pod of the snapshot: assumed or from the cache.
		ni := tr.snap.List()[tr.rng.IntN(tr.snap.NumNodes())]
		if pods := ni.Pods(); len(pods) > 0 {
			tr.snap.Forget(pods[tr.rng.IntN(len(pods))].Pod.UID, ni.Name())
		}
	default:
		tr.check()
	}
}

func (tr *countsTrial) run(steps int) {
	for i := range steps {
		tr.step()
		if tr.t.Failed() {
			tr.t.Fatalf("after step %d", i)
		}
	}
	tr.check()
}

// check runs both plugins for a random incoming pod against the snapshot
// and against a fresh snapshot of its node infos.
func (tr *countsTrial) check() {
	tr.t.Helper()
	pod := cache.NewPodInfo(tr.pod(""))
	fresh := cache.NewSnapshot(tr.snap.List()...)
	nodes := tr.snap.List()
	var feasible []*cache.NodeInfo
	for _, ni := range nodes {
		if tr.rng.IntN(4) > 0 {
			feasible = append(feasible, ni)
		}
	}
	for _, pl := range tr.plugins {
		name := pl.Name()
		got := tr.outcome(pl, pod, tr.snap, feasible)
		want := tr.outcome(pl, pod, fresh, feasible)
		if diff := cmp.Diff(want, got); diff != "" {
			tr.t.Errorf("%s for pod %s (-from scratch, +kept up to date):\n%s", name, pod.Pod.Name, diff)
		}
	}
}

// outcome is what a plugin decides for pod on snap: its PreFilter's status,
// the Filter status of each node (also with a pod of the node removed and a
// new pod added, through the filter's PodUpdater), and the normalised
// scores over feasible.
func (tr *countsTrial) outcome(pl framework.Plugin, pod *cache.PodInfo, snap *cache.Snapshot, feasible []*cache.NodeInfo) []string {
	var out []string
	status := func(s *framework.Status) string {
		if s == nil {
			return "ok"
		}
		return fmt.Sprint(s.Code, s.Reasons, s.Err)
	}
	f, _, st := pl.(framework.PreFilterPlugin).PreFilter(pod, snap)
	out = append(out, "prefilter "+status(st)+fmt.Sprint(f != nil))
	if f != nil {
		for i, ni := range snap.List() {
			out = append(out, ni.Name()+" "+status(f.Filter(ni)))
			u, ok := f.(framework.PodUpdater)
			if !ok {
				continue
			}
			// The same random choices for both snapshots.
			r := rand.New(rand.NewPCG(uint64(i), 7))
			if pods := ni.Pods(); len(pods) > 0 {
				c := u.Clone().(framework.PodUpdater)
				c.RemovePod(pods[r.IntN(len(pods))], ni)
				out = append(out, ni.Name()+" -pod "+status(c.Filter(ni)))
			}
			c := u.Clone().(framework.PodUpdater)
			other := tr.podFor(r, ni.Name())
			c.AddPod(other, ni)
			out = append(out, ni.Name()+" +pod "+status(c.Filter(ni)))
		}
	}
	s, st := pl.(framework.PreScorePlugin).PreScore(pod, feasible, snap)
	out = append(out, "prescore "+status(st)+fmt.Sprint(s != nil))
	if s != nil {
		scores := make([]int64, len(feasible))
		s.Score(feasible, scores)
		if n, ok := s.(framework.ScoreNormalizer); ok {
			n.NormalizeScores(scores)
		}
		out = append(out, fmt.Sprint(scores))
	}
	return out
}

// podFor is a pod on node drawn from r alone, so that both snapshots get
// the same.
func (tr *countsTrial) podFor(r *rand.Rand, node string) *cache.PodInfo {
	saved, next := tr.rng, tr.next
	tr.rng = r
	p := tr.pod(node)
	tr.rng, tr.next = saved, next
	return cache.NewPodInfo(p)
}
