package preempt

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

// victim is what is preempted or reprieved as one (upstream's
// DomainVictim): one pod, or every pod in the snapshot of a pod group with
// DisruptionMode all.
type victim struct {
	// pods are the victim's pods as the snapshot holds them (spec.nodeName
	// set); a group's in snapshot order (node name, then the node's order).
	pods []*cache.PodInfo
	// priority is the preemption priority: the group's for a group and for
	// a member of a known group, the pod's otherwise.
	priority int32
	// group is upstream's Victim.IsGroup: a DisruptionMode all group, or a
	// pod that names a pod group.
	group bool
	// rec is the victim as the victim-order slot sees it, PDBViolating
	// unset.
	rec abi.Victim
}

type groupKey struct{ namespace, name string }

// run is the state of one Pod or Group call: memoised PodGroup lookups,
// the snapshot's pods per group, the DisruptionMode all victims built so
// far (so that every node sees the same one), the nominated pods per node,
// and the budgets.
type run struct {
	in        Input
	plugins   *framework.Profile
	order     policy.VictimOrder
	preemptor abi.PodView
	budgets   *budgets

	// The memos below are shared by the forks of a run (parallel dry
	// runs), under mu; mu is nil until share is called.
	mu        *sync.Mutex
	groups    map[groupKey]*schedv1beta1.PodGroup // nil values cached too
	members   map[groupKey][]*cache.PodInfo       // nil until first needed
	all       map[groupKey]*victim
	nominated map[string][]*cache.PodInfo

	// Each fork's own.
	recs []abi.Victim // scratch for the slot
	idx  []uint32
	seen []bool
}

func newRun(in Input) *run {
	r := &run{
		in:        in,
		plugins:   in.Plugins,
		order:     in.Order,
		budgets:   newBudgets(in.PDBs),
		groups:    map[groupKey]*schedv1beta1.PodGroup{},
		all:       map[groupKey]*victim{},
		nominated: map[string][]*cache.PodInfo{},
	}
	if r.order == nil {
		r.order = policy.Importance{}
	}
	return r
}

// share makes r's memos safe to share with its forks.
func (r *run) share() {
	if r.mu == nil {
		r.mu = &sync.Mutex{}
	}
}

// fork returns a run for another goroutine: the same input and memos
// (share must have been called), its own scratch and budgets.
func (r *run) fork() *run {
	w := *r
	w.budgets = r.budgets.clone()
	w.recs, w.idx, w.seen = nil, nil, nil
	return &w
}

func (r *run) lock() {
	if r.mu != nil {
		r.mu.Lock()
	}
}

func (r *run) unlock() {
	if r.mu != nil {
		r.mu.Unlock()
	}
}

// podGroup returns the PodGroup namespace/name, or nil when Input.Group
// does not know it (or is nil).
func (r *run) podGroup(namespace, name string) *schedv1beta1.PodGroup {
	if r.in.Group == nil {
		return nil
	}
	k := groupKey{namespace, name}
	r.lock()
	defer r.unlock()
	pg, ok := r.groups[k]
	if !ok {
		pg = r.in.Group(namespace, name)
		r.groups[k] = pg
	}
	return pg
}

// priorityOf is the priority pod is preempted by (upstream's
// GetPodPriority): its PodGroup's priority when it names a known one, its
// own otherwise.
func (r *run) priorityOf(pod *v1.Pod) int32 {
	if name := podview.GroupName(pod); name != "" {
		if pg := r.podGroup(pod.Namespace, name); pg != nil {
			return podview.Group(pg, 0).Priority
		}
	}
	return corev1helpers.PodPriority(pod)
}

// groupPods returns the snapshot's pods of group k, indexing every grouped
// pod of the snapshot on first use.
func (r *run) groupPods(k groupKey) []*cache.PodInfo {
	r.lock()
	defer r.unlock()
	if r.members == nil {
		r.members = map[groupKey][]*cache.PodInfo{}
		for _, ni := range r.in.Snapshot.List() {
			for _, pi := range ni.Pods() {
				if name := podview.GroupName(pi.Pod); name != "" {
					gk := groupKey{pi.Pod.Namespace, name}
					r.members[gk] = append(r.members[gk], pi)
				}
			}
		}
	}
	return r.members[k]
}

// victimOf returns the victim pi belongs to (upstream's
// getCrossNodesVictims for one pod). A DisruptionMode all group's victim
// is built once per run and shared.
func (r *run) victimOf(pi *cache.PodInfo) *victim {
	pod := pi.Pod
	name := podview.GroupName(pod)
	if name == "" || r.in.Group == nil {
		return &victim{pods: []*cache.PodInfo{pi}, priority: corev1helpers.PodPriority(pod), rec: podview.PodVictim(pod, false)}
	}
	pg := r.podGroup(pod.Namespace, name)
	if pg == nil {
		rec := podview.PodVictim(pod, false)
		rec.Kind = abi.VictimGroup
		return &victim{pods: []*cache.PodInfo{pi}, priority: rec.Priority, group: true, rec: rec}
	}
	info := podview.Group(pg, 0)
	if info.DisruptionMode != abi.DisruptionAll {
		rec := podview.PodVictim(pod, false)
		rec.Kind, rec.Priority = abi.VictimGroup, info.Priority
		return &victim{pods: []*cache.PodInfo{pi}, priority: info.Priority, group: true, rec: rec}
	}
	k := groupKey{pod.Namespace, name}
	r.lock()
	v, ok := r.all[k]
	r.unlock()
	if ok {
		return v
	}
	pods := r.groupPods(k)
	if len(pods) == 0 { // pi comes from the snapshot, so it is indexed
		pods = []*cache.PodInfo{pi}
	}
	objs := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		objs[i] = p.Pod
	}
	v = &victim{pods: pods, priority: info.Priority, group: true, rec: podview.GroupVictim(pg, objs, false)}
	r.lock()
	defer r.unlock()
	if built, ok := r.all[k]; ok { // another fork built it meanwhile
		return built
	}
	r.all[k] = v
	return v
}

// victimsOn returns the victims with a pod on nodes whose priority is
// below prio, each once, in the order their first pod is met.
func (r *run) victimsOn(nodes []*cache.NodeInfo, prio int32) []*victim {
	var out []*victim
	var seen map[*victim]bool
	for _, ni := range nodes {
		for _, pi := range ni.Pods() {
			v := r.victimOf(pi)
			if v.priority >= prio {
				continue
			}
			if len(v.pods) > 1 {
				if seen[v] {
					continue
				}
				if seen == nil {
					seen = map[*victim]bool{}
				}
				seen[v] = true
			}
			out = append(out, v)
		}
	}
	return out
}

// sortByImportance reorders vs most important first, as the victim-order
// slot says. It fails when the slot's answer is not a permutation (the
// Wasm adapter never returns one; a native implementation might).
func (r *run) sortByImportance(vs []*victim) error {
	n := len(vs)
	if n < 2 {
		return nil
	}
	r.recs = r.recs[:0]
	for _, v := range vs {
		rec := v.rec
		rec.PDBViolating = r.budgets.alone(v)
		r.recs = append(r.recs, rec)
	}
	if cap(r.idx) < n {
		r.idx = make([]uint32, n)
		r.seen = make([]bool, n)
	}
	idx, seen := r.idx[:n], r.seen[:n]
	clear(seen)
	r.order.Order(r.preemptor, r.recs, idx)
	for _, i := range idx {
		if int(i) >= n || seen[i] {
			return fmt.Errorf("victim order slot returned %v for %d victims: not a permutation", idx, n)
		}
		seen[i] = true
	}
	sorted := make([]*victim, n)
	for pos, i := range idx {
		sorted[pos] = vs[i]
	}
	copy(vs, sorted)
	return nil
}

// nominatedOn returns the pods nominated to node as pod infos placed there,
// asked once per run.
func (r *run) nominatedOn(node string) []*cache.PodInfo {
	if r.in.Nominated == nil {
		return nil
	}
	r.lock()
	defer r.unlock()
	if pis, ok := r.nominated[node]; ok {
		return pis
	}
	pis := r.in.Nominated(node)
	r.nominated[node] = pis
	return pis
}

// holding returns the pods nominated to ni's node that pod must leave room
// for: priority >= pod's, not pod, not skipped, not on the node already.
func (r *run) holding(pod *v1.Pod, ni *cache.NodeInfo, skip map[types.UID]bool) []*cache.PodInfo {
	noms := r.nominatedOn(ni.Name())
	if len(noms) == 0 {
		return nil
	}
	prio := corev1helpers.PodPriority(pod)
	var out []*cache.PodInfo
	for _, pi := range noms {
		p := pi.Pod
		if p.UID == pod.UID || skip[p.UID] || corev1helpers.PodPriority(p) < prio || onNode(ni, p.UID) {
			continue
		}
		out = append(out, pi)
	}
	return out
}

// filter runs the filters for ps's pod on ni with the nominated pods it
// must leave room for (upstream's RunFilterPluginsWithNominatedPods).
func (r *run) filter(ps *framework.PodState, ni *cache.NodeInfo, skip map[types.UID]bool) *framework.Status {
	hold := r.holding(ps.Pod().Pod, ni, skip)
	if len(hold) == 0 {
		return framework.Filter(ps, ni)
	}
	c := ni.Clone()
	with := ps.Clone()
	for _, pi := range hold {
		c.AddPod(pi)
		with.AddPod(pi, c)
	}
	if st := framework.Filter(with, c); st != nil {
		return st
	}
	// A nomination is not a placement: as upstream's
	// RunFilterPluginsWithNominatedPods, the node must fit without the
	// nominated pods too, which only a filter a pod's presence can satisfy
	// (required pod affinity) can tell apart.
	return framework.Filter(ps, ni)
}

func onNode(ni *cache.NodeInfo, uid types.UID) bool {
	for _, pi := range ni.Pods() {
		if pi.Pod.UID == uid {
			return true
		}
	}
	return false
}

// terminatingByPreemption is upstream's PodTerminatingByPreemption: the
// pod is being deleted and its first DisruptionTarget condition is True
// with reason PreemptionByScheduler.
func terminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// podsOf lists the pods of vs, in order.
func podsOf(vs []*victim) []*v1.Pod {
	var out []*v1.Pod
	for _, v := range vs {
		for _, pi := range v.pods {
			out = append(out, pi.Pod)
		}
	}
	return out
}

// readView decodes a record this package encoded.
func readView(b []byte) (abi.PodView, error) {
	v, err := abi.ReadPod(b)
	if err != nil {
		return abi.PodView{}, fmt.Errorf("read the preemptor record: %w", err)
	}
	return v, nil
}
