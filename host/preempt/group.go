package preempt

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
)

// Upstream's pod-group status texts (without the "pod group preemption: "
// prefix).
const (
	msgOngoing        = "ongoing preemption on nominated nodes"
	msgNoGroupVictims = "No preemption victims found for incoming preemptor"
)

// Group runs KEP-5710 workload-aware preemption for members, the pending
// pods of pg, which the pod-group cycle could not place. found is true when
// victims and placements were chosen; it is also true, with no victims and
// the members' current nominations as Placements, while an earlier
// preemption for the group is still in progress (upstream's "ongoing
// preemption on nominated nodes": wait, evict nothing). Otherwise
// Result.Message says why; the nominations are left as they are.
//
// Steps, as upstream's PodGroupEvaluator.Preempt: the group's preemption
// policy (PodGroup spec.preemptionPolicy when set, otherwise Never if any
// member says Never: upstream with the alpha PodGroupPreemptionPolicy off,
// whose API server drops the field); an ongoing preemption on a member's
// nominated node; the victims of the whole cluster with priority below the
// group's; all of them removed, the members placed one by one (see place);
// then the victims ordered through the slot and reprieved, PDB-violating
// ones first, each kept only if every placed member still passes the
// filters on its node, the members checked in order with the ones before
// them in place (upstream checks the proposed assignments again and does
// not move a member).
func Group(ctx context.Context, members []*v1.Pod, pg *schedv1beta1.PodGroup, in Input) (Result, bool, error) {
	if in.Plugins == nil {
		return Result{}, false, errNoPlugins
	}
	if in.Snapshot == nil || pg == nil || len(members) == 0 {
		return Result{}, false, errors.New("pod group preemption: snapshot, pod group and members are required")
	}
	info := podview.Group(pg, 0)
	prio := info.Priority
	if groupNever(pg, members) {
		return Result{Message: prefixGroup + msgNever}, false, nil
	}
	r := newRun(in)
	if r.ongoing(members, prio) {
		res := Result{Message: prefixGroup + msgOngoing}
		for _, p := range members {
			res.Placements = append(res.Placements, Placement{Pod: p, Node: p.Status.NominatedNodeName})
		}
		return res, true, nil
	}
	potential := r.victimsOn(in.Snapshot.List(), prio)
	if len(potential) == 0 {
		return Result{Message: prefixGroup + msgNoGroupVictims}, false, nil
	}
	var err error
	if r.preemptor, err = r.groupView(pg, members); err != nil {
		return Result{}, false, err
	}

	// A snapshot of our own: Assume and Forget clone each node they change,
	// so the caller's snapshot and node infos stay as they are.
	snap := cache.NewSnapshot(in.Snapshot.List()...)
	for _, v := range potential {
		for _, pi := range v.pods {
			snap.Forget(pi.Pod.UID, pi.Pod.Spec.NodeName)
		}
	}
	scheduled := len(r.groupPods(groupKey{pg.Namespace, pg.Name}))
	placed, why, err := r.place(ctx, snap, members, scheduled, required(pg, scheduled))
	if err != nil {
		return Result{}, false, fmt.Errorf("pod group preemption for %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	if why != "" {
		return Result{Message: prefixGroup + why}, false, nil
	}

	if err := r.sortByImportance(potential); err != nil {
		return Result{}, false, fmt.Errorf("pod group preemption for %s/%s: %w", pg.Namespace, pg.Name, err)
	}
	violating, counts, others := r.budgets.split(potential)
	chosen := make([]bool, len(potential))
	skip := make(map[types.UID]bool, len(placed))
	// A victim's pods are put back on snap and into every placed member's
	// state (upstream's AddPod extension), and taken out of both again
	// when a member no longer fits: a member's state was prepared with the
	// members before it placed and every potential victim gone.
	reprieve := func(i int) (bool, error) {
		v := potential[i]
		for _, pi := range v.pods {
			if err := snap.Assume(pi); err != nil {
				return false, err
			}
			ni := snap.Get(pi.Pod.Spec.NodeName)
			for _, p := range placed {
				p.state.AddPod(pi, ni)
			}
		}
		fits := true
		added := placed[:0:0]
		clear(skip)
		for _, p := range placed {
			if !r.filter(p.state, snap.Get(p.node), skip).IsSuccess() {
				fits = false
				break
			}
			if err := snap.Assume(p.info); err != nil {
				return false, err
			}
			added = append(added, p)
			skip[p.pod.UID] = true
		}
		for _, p := range added {
			snap.Forget(p.info.Pod.UID, p.node)
		}
		if !fits {
			for _, pi := range v.pods {
				snap.Forget(pi.Pod.UID, pi.Pod.Spec.NodeName)
				ni := snap.Get(pi.Pod.Spec.NodeName)
				for _, p := range placed {
					p.state.RemovePod(pi, ni)
				}
			}
			chosen[i] = true
		}
		return fits, nil
	}
	res := Result{}
	for k, i := range violating {
		fits, err := reprieve(i)
		if err != nil {
			return Result{}, false, fmt.Errorf("pod group preemption for %s/%s: %w", pg.Namespace, pg.Name, err)
		}
		if !fits {
			res.PDBViolations += counts[k]
		}
	}
	for _, i := range others {
		if _, err := reprieve(i); err != nil {
			return Result{}, false, fmt.Errorf("pod group preemption for %s/%s: %w", pg.Namespace, pg.Name, err)
		}
	}
	var vs []*victim
	for i, v := range potential {
		if chosen[i] {
			vs = append(vs, v)
			if v.group {
				res.GroupDisruptions++
			}
		}
	}
	res.Victims = podsOf(vs)
	for _, p := range placed {
		res.Placements = append(res.Placements, Placement{Pod: p.pod, Node: p.node})
	}
	res.Message = prefixGroup + fmt.Sprintf("found a placement for podgroup, preempting %d victims", len(res.Victims))
	return res, true, nil
}

// groupNever reports whether the group may not preempt: its
// spec.preemptionPolicy when set, otherwise any member's Never (upstream's
// resolvePreemptionPolicy, with the gate off or on).
func groupNever(pg *schedv1beta1.PodGroup, members []*v1.Pod) bool {
	if p := pg.Spec.PreemptionPolicy; p != nil {
		return *p == schedv1beta1.PreemptNever
	}
	for _, m := range members {
		if p := m.Spec.PreemptionPolicy; p != nil && *p == v1.PreemptNever {
			return true
		}
	}
	return false
}

// ongoing is upstream's isOngoingPreemption: a member's nominated node
// holds a pod of lower preemption priority than prio that is terminating
// because the scheduler preempted it.
func (r *run) ongoing(members []*v1.Pod, prio int32) bool {
	seen := map[string]bool{}
	for _, m := range members {
		nom := m.Status.NominatedNodeName
		if nom == "" || seen[nom] {
			continue
		}
		seen[nom] = true
		ni := r.in.Snapshot.Get(nom)
		if ni == nil {
			continue
		}
		for _, pi := range ni.Pods() {
			if terminatingByPreemption(pi.Pod) && r.priorityOf(pi.Pod) < prio {
				return true
			}
		}
	}
	return false
}

// placement is a member placed by place.
type placement struct {
	pod   *v1.Pod
	node  string
	info  *cache.PodInfo // pod on node
	state *framework.PodState
}

// required is the number of members that must be placed for the group to
// count as schedulable, as upstream's gang PlacementFeasible and
// wasmsched's pod-group cycle ask: the group's quorum (podview.MinCount:
// minCount, 1 for a basic group) less the group's pods already scheduled,
// and at least one.
func required(pg *schedv1beta1.PodGroup, scheduled int) int {
	return max(int(podview.MinCount(pg))-scheduled, 1)
}

// place puts members, in order, on snap: each on the feasible node (with
// the nominated pods it must leave room for) of the best score, ties to the
// first in node name order. The members stay assumed on snap only while
// place runs. A member's own nomination stops counting once it is placed,
// as upstream's assume withdraws it. A member that fits nowhere is skipped
// while need can still be met; why is upstream's PlacementFeasible text
// once it cannot: "minCount (3) cannot be satisfied: 1 scheduled, 1
// remaining", scheduled counting the group's pods already in the snapshot.
func (r *run) place(ctx context.Context, snap *cache.Snapshot, members []*v1.Pod, scheduled, need int) (placed []placement, why string, err error) {
	defer func() {
		for _, p := range placed {
			snap.Forget(p.pod.UID, p.node)
		}
	}()
	skip := make(map[types.UID]bool, len(members))
	var feasible []*cache.NodeInfo
	var scores []int64
	for i, m := range members {
		if err := ctx.Err(); err != nil {
			return placed, "", err
		}
		ps, st := r.plugins.Prepare(cache.NewPodInfo(m), snap)
		if st != nil && st.Code == framework.Error {
			return placed, "", fmt.Errorf("member %s/%s: %w", m.Namespace, m.Name, st.Err)
		}
		// Each member's filters are held until the group's placement is
		// worked out (its states are kept in placed), and keep their
		// counts while snap changes under them (Detach).
		defer ps.Done()
		if ps != nil {
			ps.Detach()
		}
		feasible = feasible[:0]
		if st == nil {
			for _, ni := range snap.List() {
				if r.filter(ps, ni, skip).IsSuccess() {
					feasible = append(feasible, ni)
				}
			}
		}
		if len(feasible) == 0 {
			if len(placed)+len(members)-i-1 < need {
				total := scheduled + need
				return placed, fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining",
					total, scheduled+len(placed), len(members)-i-1), nil
			}
			continue
		}
		var sst *framework.Status
		if scores, sst = framework.Score(ps, feasible, scores); sst != nil {
			return placed, "", fmt.Errorf("score member %s/%s: %w", m.Namespace, m.Name, sst.AsError())
		}
		node := framework.SelectHost(feasible, scores, nil).Name()
		assumed := m.DeepCopy()
		assumed.Spec.NodeName = node
		pi := cache.NewPodInfo(assumed)
		if err := snap.Assume(pi); err != nil {
			return placed, "", fmt.Errorf("place member %s/%s: %w", m.Namespace, m.Name, err)
		}
		placed = append(placed, placement{pod: m, node: node, info: pi, state: ps})
		skip[m.UID] = true
	}
	return placed, "", nil
}

// groupView encodes the group's record for the victim-order slot as the
// queue encodes a pod group (host/queue): a pod record named after the
// PodGroup, with its UID, priority, preemption policy and group fields.
func (r *run) groupView(pg *schedv1beta1.PodGroup, members []*v1.Pod) (abi.PodView, error) {
	known := int32(len(r.groupPods(groupKey{pg.Namespace, pg.Name})) + len(members))
	info := podview.Group(pg, known)
	pr := podview.PodGroup(pg, known)
	rec := abi.Pod{
		UID:          string(pg.UID),
		Namespace:    pg.Namespace,
		Name:         pg.Name,
		Priority:     pr.Priority,
		PreemptNever: groupNever(pg, members),
		CreationTime: nanos(pg.CreationTimestamp),
		Group:        info.Ref(pg.Name),
	}
	return readView(abi.AppendPod(nil, &rec))
}

func nanos(t metav1.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
