package cycle

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// scheduleGroup places a pod group all-or-nothing: each member in the
// queue's member order on the snapshot, with the members placed before it
// counted. Only when all fit are they assumed in the cache and bound;
// otherwise every member is handed back unschedulable with the reason of
// the first one that did not fit, and the group backs off as a unit.
func (s *Scheduler) scheduleGroup(ctx context.Context, g *queue.Group) {
	start := s.opts.clock.Now()
	members := g.Members()
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
	placed := make([]*v1.Pod, 0, len(live))
	for _, p := range live {
		pl := s.placement(p.Object())
		node, f := s.place(ctx, pl)
		if node == "" {
			f.message = groupMessage(g, p, f, s)
			s.failGroup(ctx, g, live, f, start)
			return
		}
		assumed := pl.pod.DeepCopy()
		assumed.Spec.NodeName = node
		if err := s.snap.Assume(cache.NewPodInfo(assumed)); err != nil {
			s.failGroup(ctx, g, live, failure{err: fmt.Errorf("place member %s on node %s: %w", klogRef(assumed), node, err)}, start)
			return
		}
		placed = append(placed, assumed)
	}
	for i, assumed := range placed {
		if err := s.cache.AssumePod(assumed); err != nil {
			for _, a := range placed[:i] {
				_ = s.cache.ForgetPod(a)
			}
			s.failGroup(ctx, g, live, failure{err: fmt.Errorf("assume member %s: %w", klogRef(assumed), err)}, start)
			return
		}
	}
	for i, p := range live {
		s.bind(ctx, p, placed[i], start)
	}
	if err := s.q.AddAttemptedGroupIfNeeded(g, queue.GroupResult{Scheduled: true}); err != nil {
		s.opts.log.Error("hand back a pod group", "group", g.Namespace()+"/"+g.Name(), "err", err)
	}
}

// failGroup hands back every member with the same failure, then the group.
func (s *Scheduler) failGroup(ctx context.Context, g *queue.Group, members []*queue.Pod, f failure, start time.Time) {
	var rejected podview.Plugins
	if f.diag != nil {
		rejected = podview.Plugins{Unschedulable: f.diag.UnschedulablePlugins(), Pending: f.diag.PendingPlugins()}
	}
	for _, p := range members {
		s.failWith(ctx, p, f, start, true)
	}
	if err := s.q.AddAttemptedGroupIfNeeded(g, queue.GroupResult{Rejected: rejected}); err != nil {
		s.opts.log.Error("hand back a pod group", "group", g.Namespace()+"/"+g.Name(), "err", err)
	}
}

// groupMessage says which member of the group did not fit, and why.
func groupMessage(g *queue.Group, p *queue.Pod, f failure, s *Scheduler) string {
	if f.err != nil {
		return ""
	}
	_, _, why := s.describe(f)
	return fmt.Sprintf("pod group %s/%s cannot be placed as a whole: member %s does not fit: %s",
		g.Namespace(), g.Name(), p.Object().Name, why)
}

func klogRef(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func metaNow(c clock.PassiveClock) metav1.Time { return metav1.NewTime(c.Now()) }
