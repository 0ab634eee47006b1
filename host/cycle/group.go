package cycle

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// scheduleGroup places a pod group as upstream's pod-group cycle does: each
// member in the queue's member order on the snapshot, with the members
// placed before it counted. When the group's members already bound plus
// those placed reach minCount (1 for a group without a gang policy), the
// placed members are assumed in the cache and bound, and any member that
// did not fit is handed back on its own; otherwise none is bound, the group
// may preempt (KEP-5710), and every member is handed back with the reason
// of the first one that did not fit, the group backing off as a unit.
func (s *Scheduler) scheduleGroup(ctx context.Context, g *queue.Group) {
	members := g.Members()
	start := s.opts.clock.Now()
	if err := s.cache.UpdateSnapshot(s.snap); err != nil {
		s.failGroup(ctx, g, members, failure{err: fmt.Errorf("update the cache snapshot: %w", err)}, start)
		return
	}
	// Members placed on the snapshot below stay there until the next
	// UpdateSnapshot, which puts the cache's node infos back.
	live := members[:0:0]
	for _, p := range members {
		if p.Object().DeletionTimestamp != nil {
			s.q.Done(p.UID())
			continue
		}
		live = append(live, p)
	}
	if err := validateGroup(g.PodGroup(), live); err != nil {
		s.failGroup(ctx, g, live, failure{err: err}, start)
		return
	}
	need := int(podview.MinCount(g.PodGroup())) - s.boundMembers(g)
	var (
		placed   []*v1.Pod             // assumed copies, in member order
		infos    []*cache.PodInfo      // their PodInfos
		states   []*framework.PodState // their states, reserved
		bindable []*queue.Pod          // their queue pods
		misfits  []*queue.Pod
		reasons  []failure
	)
	prof := s.prof
	// unreserveAll undoes the members' reservations, last first, as
	// upstream reverts a pod group that failed: all or nothing.
	unreserveAll := func() {
		for i := len(placed) - 1; i >= 0; i-- {
			s.unreserve(ctx, prof, states[i], placed[i])
		}
	}
	for _, p := range live {
		pl := s.placement(p.Object())
		node, ps, f := s.place(ctx, pl)
		if node == "" {
			if f.err != nil {
				unreserveAll()
				s.failGroup(ctx, g, live, f, start)
				return
			}
			misfits, reasons = append(misfits, p), append(reasons, f)
			continue
		}
		ai := pl.info.Assumed(node)
		assumed := ai.Pod
		if err := s.snap.Assume(ai); err != nil {
			unreserveAll()
			s.failGroup(ctx, g, live, failure{err: fmt.Errorf("place member %s on node %s: %w", klogRef(assumed), node, err)}, start)
			return
		}
		// Reserved on the snapshot as it is assumed there, as upstream's
		// pod-group cycle: a later member sees what it holds.
		if f, ok := s.reserve(ctx, prof, ps, assumed); !ok {
			s.snap.Forget(assumed.UID, node)
			if f.err != nil {
				unreserveAll()
				s.failGroup(ctx, g, live, f, start)
				return
			}
			misfits, reasons = append(misfits, p), append(reasons, f)
			continue
		}
		placed, infos, states, bindable = append(placed, assumed), append(infos, ai), append(states, ps), append(bindable, p)
	}
	if len(misfits) > 0 && len(placed) < need {
		unreserveAll()
		// As upstream: a member that did not fit reports its own filters'
		// reasons; the others report the unmet quorum (and the preemption).
		minCount := int(podview.MinCount(g.PodGroup()))
		quorum := failure{diag: reasons[0].diag, nodes: reasons[0].nodes, message: fmt.Sprintf(
			"pod group is unschedulable, minCount (%d) cannot be satisfied: %d scheduled, 0 remaining",
			minCount, minCount-need+len(placed))}
		objs := make([]*v1.Pod, len(live))
		for i, m := range live {
			objs[i] = m.Object()
		}
		if msg := s.preemptForGroup(ctx, g, objs, reasons[0]); msg != "" {
			quorum.message += ", " + msg
		}
		own := make(map[*queue.Pod]failure, len(misfits))
		for i, p := range misfits {
			own[p] = reasons[i]
		}
		s.failGroupEach(ctx, g, live, quorum, own, start)
		return
	}
	for i, assumed := range placed {
		if err := s.cache.AssumePodInfo(infos[i]); err != nil {
			for _, a := range placed[:i] {
				_ = s.cache.ForgetPod(a)
			}
			unreserveAll()
			s.failGroup(ctx, g, live, failure{err: fmt.Errorf("assume member %s: %w", klogRef(assumed), err)}, start)
			return
		}
	}
	for i, p := range bindable {
		s.opts.nominator.Remove(p.UID())
		s.bind(ctx, p, placed[i], prof, states[i], start)
	}
	// The group has its quorum: a member that did not fit waits on its own.
	for i, p := range misfits {
		s.failWith(ctx, p, reasons[i], start, true)
	}
	pg := g.PodGroup() // nil once the group is handed back
	if err := s.q.AddAttemptedGroupIfNeeded(g, queue.GroupResult{Scheduled: true}); err != nil {
		s.opts.log.Error("hand back a pod group", "group", g.Namespace()+"/"+g.Name(), "err", err)
	}
	s.groupCondition(ctx, pg, metav1.Condition{
		Type: schedv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled",
		Message: fmt.Sprintf("%d pods placed", len(placed)),
	})
}

// boundMembers counts the group's pods already on a node in the snapshot
// (bound or assumed): they count towards minCount, as upstream counts a
// gang's scheduled pods.
func (s *Scheduler) boundMembers(g *queue.Group) int {
	n := 0
	for _, ni := range s.snap.List() {
		for _, pi := range ni.Pods() {
			if pi.Pod.Namespace == g.Namespace() && podview.GroupName(pi.Pod) == g.Name() {
				n++
			}
		}
	}
	return n
}

// groupCondition sets the PodGroup's condition, off the cycle's goroutine.
// pg is the popped group's PodGroup, read before the group was handed back.
func (s *Scheduler) groupCondition(ctx context.Context, pg *schedv1beta1.PodGroup, cond metav1.Condition) {
	if pg == nil {
		return
	}
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		if err := s.api.SetPodGroupCondition(ctx, pg, cond); err != nil && ctx.Err() == nil {
			s.opts.log.Warn("update a PodGroup condition", "group", pg.Namespace+"/"+pg.Name, "err", err)
		}
	}()
}

// validateGroup checks what upstream's validatePodGroup checks: every
// member has the same scheduler name, the group's priority, and the same
// preemption policy as the others, or as the PodGroup's when it sets one
// (the field of the alpha PodGroupPreemptionPolicy gate). The errors are
// upstream's.
func validateGroup(pg *schedv1beta1.PodGroup, members []*queue.Pod) error {
	if len(members) == 0 {
		return nil
	}
	want := members[0].Object()
	var groupPriority int32
	if pg != nil && pg.Spec.Priority != nil {
		groupPriority = *pg.Spec.Priority
	}
	policy := func(p *v1.Pod) v1.PreemptionPolicy {
		if p.Spec.PreemptionPolicy != nil {
			return *p.Spec.PreemptionPolicy
		}
		return v1.PreemptLowerPriority
	}
	for _, m := range members {
		p := m.Object()
		if p.Spec.SchedulerName != want.Spec.SchedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q",
				p.Spec.SchedulerName, want.Spec.SchedulerName)
		}
		if prio := corev1helpers.PodPriority(p); prio != groupPriority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d",
				prio, groupPriority)
		}
		if pg != nil && pg.Spec.PreemptionPolicy != nil {
			// The field exists only with upstream's PodGroupPreemptionPolicy
			// gate on; then every member must agree with the group.
			if policy(p) != v1.PreemptionPolicy(*pg.Spec.PreemptionPolicy) {
				return fmt.Errorf("all pods in a single pod group should have the same preemption policy as the pod group's preemption policy, got %v and %v",
					policy(p), *pg.Spec.PreemptionPolicy)
			}
		} else if policy(p) != policy(want) {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v",
				policy(p), policy(want))
		}
	}
	return nil
}

// failGroup hands back every member with the same failure, then the group.
func (s *Scheduler) failGroup(ctx context.Context, g *queue.Group, members []*queue.Pod, f failure, start time.Time) {
	s.failGroupEach(ctx, g, members, f, nil, start)
}

// failGroupEach is failGroup where the members in own report their own
// failure instead of f (which the group as a whole reports).
func (s *Scheduler) failGroupEach(ctx context.Context, g *queue.Group, members []*queue.Pod, f failure,
	own map[*queue.Pod]failure, start time.Time) {
	var rejected podview.Plugins
	if f.diag != nil {
		rejected = podview.Plugins{Unschedulable: f.diag.UnschedulablePlugins(), Pending: f.diag.PendingPlugins()}
	}
	for _, p := range members {
		mf, ok := own[p]
		if !ok {
			mf = f
		}
		s.failWith(ctx, p, mf, start, true)
	}
	pg := g.PodGroup() // nil once the group is handed back
	if err := s.q.AddAttemptedGroupIfNeeded(g, queue.GroupResult{Rejected: rejected}); err != nil {
		s.opts.log.Error("hand back a pod group", "group", g.Namespace()+"/"+g.Name(), "err", err)
	}
	_, _, msg := s.describe(f)
	var reason string
	if f.err != nil {
		reason = schedv1beta1.PodGroupReasonSchedulerError
	} else {
		reason = schedv1beta1.PodGroupReasonUnschedulable
	}
	s.groupCondition(ctx, pg, metav1.Condition{
		Type: schedv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: reason, Message: msg,
	})
}

func klogRef(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func metaNow(c clock.PassiveClock) metav1.Time { return metav1.NewTime(c.Now()) }
