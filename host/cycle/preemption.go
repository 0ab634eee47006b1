package cycle

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/preempt"
	"github.com/wasmsched/wasmsched/host/queue"
)

// Preemption is what the cycle needs to preempt: the cluster's
// PodDisruptionBudgets and PodGroups (informer listers) and the profile's
// victim-order slot as it starts (nil: the native default); SetVictimOrder
// swaps it later.
type Preemption struct {
	PDBs  func() []*policyv1.PodDisruptionBudget
	Group func(namespace, name string) *schedv1beta1.PodGroup
	Order policy.VictimOrder
}

// victimOrder holds the victim-order slot: a swap stores a new one, and the
// next preemption uses it (calls in flight finish on the old one).
type victimOrder struct {
	p atomic.Pointer[policy.VictimOrder]
}

// load is the slot's current order; nil until one is set.
func (v *victimOrder) load() policy.VictimOrder {
	if o := v.p.Load(); o != nil {
		return *o
	}
	return nil
}

// SetVictimOrder swaps the victim-order slot (the installer of a policy
// set calls it, as queue.SetSort for the queue's slots); it applies from
// the next preemption. nil is the native default.
func (s *Scheduler) SetVictimOrder(o policy.VictimOrder) { s.order.p.Store(&o) }

// WithPreemption turns preemption on (KEP-902 and KEP-5710 rules in
// host/preempt). Without it a pod that fits nowhere is only requeued.
func WithPreemption(p Preemption) Option { return func(o *options) { o.preemption = &p } }

// Results of a pod-group preemption, as upstream labels
// scheduler_podgroup_preemption_attempts_total (its status codes).
const (
	PreemptionSuccess       = "Success"
	PreemptionUnschedulable = "Unschedulable"
	PreemptionError         = "Error"
)

func (s *Scheduler) input(f failure) preempt.Input {
	p := s.opts.preemption
	in := preempt.Input{
		Snapshot:  s.snap,
		Plugins:   s.opts.plugins,
		Diagnosis: f.diag,
		Order:     s.order.load(),
		Group:     p.Group,
		Nominated: s.opts.nominator.InfosOn,
		Rand:      s.rnd,
	}
	if p.PDBs != nil {
		in.PDBs = p.PDBs()
	}
	return in
}

// preemptForPod is upstream's PostFilter for a pod that fits nowhere: find
// victims whose eviction lets it fit (host/preempt), nominate the pod to
// that node and evict them. The preemption's message joins the failure's.
func (s *Scheduler) preemptForPod(ctx context.Context, pod *v1.Pod, f *failure) {
	if s.opts.preemption == nil || f.diag == nil || f.err != nil {
		return
	}
	res, found, err := preempt.Pod(ctx, pod, s.input(*f))
	s.opts.rec.Preemption(len(res.Victims), found)
	if err != nil {
		s.opts.log.Error("preemption", "pod", klogRef(pod), "err", err)
		return
	}
	f.diag.SetPostFilterMessage(res.Message)
	switch {
	case found:
		s.opts.nominator.Set(pod, res.Node)
		lower := s.lowerNominated(pod, res.Node)
		s.actuate(ctx, pod, "pod", string(pod.UID), []preempt.Placement{{Pod: pod, Node: res.Node}}, res.Victims, lower)
	case res.ClearNomination && (s.opts.nominator.NodeOf(pod.UID) != "" || pod.Status.NominatedNodeName != ""):
		s.opts.nominator.Remove(pod.UID)
		s.async(func() error { return s.api.Nominate(ctx, pod, "") })
	}
}

// preemptForGroup is upstream's PodGroupPostFilter (KEP-5710) for a group
// whose members do not all fit: victims across the whole cluster, each
// placed member nominated to its node. It returns the preemption's message.
func (s *Scheduler) preemptForGroup(ctx context.Context, g *queue.Group, members []*v1.Pod, f failure) string {
	if s.opts.preemption == nil || f.err != nil || f.diag == nil {
		return ""
	}
	// Undo the members placed on the snapshot by the failed attempt.
	if err := s.cache.UpdateSnapshot(s.snap); err != nil {
		s.opts.log.Error("update the cache snapshot for preemption", "group", g.Namespace()+"/"+g.Name(), "err", err)
		return ""
	}
	pg := g.PodGroup()
	res, found, err := preempt.Group(ctx, members, pg, s.input(f))
	result := PreemptionUnschedulable
	switch {
	case err != nil:
		result = PreemptionError
	case found:
		result = PreemptionSuccess
	}
	s.opts.rec.GroupPreemption(result, len(res.Victims))
	if err != nil {
		s.opts.log.Error("pod group preemption", "group", g.Namespace()+"/"+g.Name(), "err", err)
		return ""
	}
	if found && len(res.Victims) > 0 {
		var uid string
		if pg != nil {
			uid = string(pg.UID)
		}
		var lower []*v1.Pod
		for _, pl := range res.Placements {
			if pl.Node != "" {
				s.opts.nominator.Set(pl.Pod, pl.Node)
				lower = append(lower, s.lowerNominated(pl.Pod, pl.Node)...)
			}
		}
		s.actuate(ctx, members[0], "podgroup", uid, res.Placements, res.Victims, lower)
	}
	return res.Message
}

// lowerNominated are the pods nominated to node with a lower priority than
// pod: the room they were promised is now pod's (upstream's
// getLowerPriorityNominatedPods), so their nomination is withdrawn.
func (s *Scheduler) lowerNominated(pod *v1.Pod, node string) []*v1.Pod {
	prio := corev1helpers.PodPriority(pod)
	var out []*v1.Pod
	for _, p := range s.opts.nominator.OnNode(node) {
		if p.UID != pod.UID && corev1helpers.PodPriority(p) < prio {
			s.opts.nominator.Remove(p.UID)
			out = append(out, p)
		}
	}
	return out
}

// actuate writes a preemption to the cluster, off the cycle's goroutine:
// the nominations, then for each victim (all at once, as upstream) the
// DisruptionTarget condition, the delete and a Preempted event; finally
// lower-priority pods nominated to the same nodes lose their nomination.
// Until it is done, the preemptors are held (waitPreemption), as
// upstream's DefaultPreemption PreEnqueue holds a pod whose preemption is
// running: a preemptor that fits once its first victim is gone must not
// bind before every victim's eviction has been issued. preemptor is the pod
// the events relate to; kind and uid name the preemptor in the events
// ("pod" or "podgroup", as upstream).
func (s *Scheduler) actuate(ctx context.Context, preemptor *v1.Pod, kind, uid string, placements []preempt.Placement,
	victims []*v1.Pod, lower []*v1.Pod) {
	msg := fmt.Sprintf("%s: preempting to accommodate a higher priority %s", s.opts.profile, kind)
	done := make(chan struct{})
	for _, pl := range placements {
		s.preempting.Store(pl.Pod.UID, done)
	}
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		defer func() {
			for _, pl := range placements {
				s.preempting.CompareAndDelete(pl.Pod.UID, done)
			}
			close(done)
		}()
		for _, pl := range placements {
			if pl.Node != "" {
				if err := s.api.Nominate(ctx, pl.Pod, pl.Node); err != nil && ctx.Err() == nil {
					s.opts.log.Warn("nominate a preemptor", "pod", klogRef(pl.Pod), "node", pl.Node, "err", err)
				}
			}
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, evictParallelism)
		for _, v := range victims {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				if err := s.api.Evict(ctx, v, msg); err != nil {
					if ctx.Err() == nil {
						s.opts.log.Error("evict a preemption victim", "victim", klogRef(v), "preemptor", klogRef(preemptor), "err", err)
					}
					return
				}
				s.events.Eventf(v, preemptor, v1.EventTypeNormal, "Preempted", "Preempting",
					"Preempted by %s %s on node %s", kind, types.UID(uid), v.Spec.NodeName)
				s.opts.log.Info("preempted", "victim", klogRef(v), "node", v.Spec.NodeName, "preemptor", klogRef(preemptor))
			}()
		}
		wg.Wait()
		for _, p := range lower {
			if err := s.api.Nominate(ctx, p, ""); err != nil && ctx.Err() == nil {
				s.opts.log.Warn("withdraw a nomination", "pod", klogRef(p), "err", err)
			}
		}
	}()
}

// evictParallelism bounds the victims evicted at once (upstream's
// parallelizer uses 16 workers).
const evictParallelism = 16

// waitPreemption holds a preemptor until the preemption it started has
// been written (see actuate).
func (s *Scheduler) waitPreemption(ctx context.Context, uid types.UID) {
	if ch, ok := s.preempting.Load(uid); ok {
		select {
		case <-ch.(chan struct{}):
		case <-ctx.Done():
		}
	}
}

// async runs an API write off the cycle's goroutine.
func (s *Scheduler) async(write func() error) {
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		if err := write(); err != nil {
			s.opts.log.Warn("API write", "err", err)
		}
	}()
}
