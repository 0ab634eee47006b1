package cycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
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
	// MinCandidates are DefaultPreemption's args; the zero value is
	// upstream's defaults. WithBuilt sets them from the profile's
	// configuration.
	MinCandidates framework.PreemptionArgs
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

// WithBuilt configures the scheduler from a profile's plugins
// (framework.Registry.Build): its entries, the plugins that filter, score,
// reserve and pre-bind (and that preemption's dry runs use); DefaultPreemption's
// args for the preemption WithPreemption turns on; and, when the
// configuration disables DefaultPreemption's postFilter, no preemption at
// all (pods and pod groups), whatever WithPreemption says. Options apply
// in any order.
func WithBuilt(b framework.Built) Option { return func(o *options) { o.built = &b } }

// Results of a preemption attempt, as upstream labels
// scheduler_workload_preemption_attempts_total and
// scheduler_preemption_evaluation_duration_seconds (its status codes).
const (
	PreemptionSuccess       = "Success"
	PreemptionUnschedulable = "Unschedulable"
	PreemptionError         = "Error"
)

func (s *Scheduler) input(f failure) preempt.Input {
	p := s.opts.preemption
	in := preempt.Input{
		Snapshot:  s.snap,
		Plugins:   s.prof,
		Diagnosis: f.diag,
		Order:     s.order.load(),
		Group:     p.Group,
		Nominated: s.opts.nominator.InfosOn,
		Rand:      s.rnd,
		// DefaultPreemption's args.
		MinCandidates: p.MinCandidates,
		// The dry runs on candidate nodes run in parallel, as upstream's.
		Parallelism: s.opts.parallelism,
	}
	if p.PDBs != nil {
		in.PDBs = p.PDBs()
	}
	return in
}

// Preemptor kinds, as upstream labels the preemption metrics and words the
// Preempted events ("Preempted by pod <uid> on node <node>").
const (
	PreemptorPod      = "pod"
	PreemptorPodGroup = "podgroup"
)

// Results of writing a preemption (upstream's goroutine results).
const (
	WrittenSuccess = "success"
	WrittenError   = "error"
)

// PreemptionAttempt is one preemption attempt, for the Recorder: upstream's
// DefaultPreemption PostFilter for a pod, PodGroupPostFilter for a group.
type PreemptionAttempt struct {
	// Preemptor is PreemptorPod or PreemptorPodGroup.
	Preemptor string
	// Result is PreemptionSuccess (victims chosen, or for a group an
	// earlier preemption still under way), PreemptionUnschedulable or
	// PreemptionError.
	Result string
	// Victims are the victim pods chosen; PDBViolations those of them whose
	// eviction violates a PodDisruptionBudget; GroupDisruptions the pod
	// groups (or their members) among the victims (upstream's
	// NumPodGroupDisruptions).
	Victims, PDBViolations, GroupDisruptions int
	// Duration is how long choosing the victims took (upstream's
	// evaluation).
	Duration time.Duration
}

// postFilter is upstream's RunPostFilterPlugins for a pod that fits
// nowhere (its failure f): the profile's postFilter plugins
// (DynamicResources' deallocation), then preemption, DefaultPreemption's
// PostFilter, last as in upstream's default order, unless a plugin ended
// it. The plugins' reasons and the preemption's message, joined by ", ",
// are the failure's PostFilter message; the PostFilter extension point is
// observed once for them all. ps is the pod's state, nil when its
// PreFilters did not finish.
func (s *Scheduler) postFilter(ctx context.Context, p *queue.Pod, ps *framework.PodState, f *failure) {
	if f.diag == nil || f.err != nil || (!s.prof.HasPostFilter() && s.opts.preemption == nil) {
		return
	}
	start := s.opts.clock.Now()
	var msgs []string
	if s.prof.HasPostFilter() {
		st := s.prof.PostFilter(ctx, ps, p.Object())
		if st == nil || st.Code != framework.Unschedulable {
			s.observe(ExtensionPointPostFilter, st, start)
			if st != nil && st.Code == framework.Error {
				s.opts.log.Error("PostFilter", "pod", klogRef(p.Object()), "err", st.AsError())
			}
			f.diag.SetPostFilterMessage(st.Message())
			return
		}
		if m := st.Message(); m != "" {
			msgs = append(msgs, m)
		}
	}
	st := statusUnschedulable
	if s.opts.preemption != nil {
		var m string
		m, st = s.preemptForPod(ctx, p, f)
		if m != "" {
			msgs = append(msgs, m)
		}
	}
	s.observe(ExtensionPointPostFilter, st, start)
	f.diag.SetPostFilterMessage(strings.Join(msgs, ", "))
}

// preemptForPod is upstream's DefaultPreemption PostFilter for a pod that
// fits nowhere: find victims whose eviction lets it fit (host/preempt),
// nominate the pod to that node and evict them. It returns the
// preemption's message, which joins the failure's, and the status its
// result stands for.
func (s *Scheduler) preemptForPod(ctx context.Context, p *queue.Pod, f *failure) (string, *framework.Status) {
	pod := p.Object()
	start := s.opts.clock.Now()
	res, found, err := preempt.Pod(ctx, pod, s.input(*f))
	a := PreemptionAttempt{Preemptor: PreemptorPod, Result: PreemptionUnschedulable, Duration: s.opts.clock.Since(start)}
	switch {
	case err != nil:
		a.Result = PreemptionError
	case found:
		a.Result, a.Victims, a.PDBViolations = PreemptionSuccess, len(res.Victims), res.PDBViolations
	}
	s.opts.rec.Preempted(a)
	if err != nil {
		s.opts.log.Error("preemption", "pod", klogRef(pod), "err", err)
		return "", statusError
	}
	switch {
	case found:
		s.opts.nominator.Set(pod, res.Node)
		lower := s.lowerNominated(pod, res.Node)
		s.actuate(ctx, p, pod, PreemptorPod, string(pod.UID), []preempt.Placement{{Pod: pod, Node: res.Node}}, res.Victims, lower)
	case res.ClearNomination && (s.opts.nominator.NodeOf(pod.UID) != "" || pod.Status.NominatedNodeName != ""):
		s.opts.nominator.Remove(pod.UID)
		s.async(func() error { return s.api.Nominate(ctx, pod, "") })
	}
	return res.Message, postFilterStatus(a.Result)
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
	start := s.opts.clock.Now()
	res, found, err := preempt.Group(ctx, members, pg, s.input(f))
	a := PreemptionAttempt{Preemptor: PreemptorPodGroup, Result: PreemptionUnschedulable, Duration: s.opts.clock.Since(start),
		Victims: len(res.Victims), PDBViolations: res.PDBViolations, GroupDisruptions: res.GroupDisruptions}
	switch {
	case err != nil:
		a.Result = PreemptionError
	case found:
		a.Result = PreemptionSuccess
	}
	s.opts.rec.Preempted(a)
	s.observe(ExtensionPointPodGroupPostFilter, postFilterStatus(a.Result), start)
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
		s.actuate(ctx, g, members[0], PreemptorPodGroup, uid, res.Placements, res.Victims, lower)
	}
	return res.Message
}

// postFilterStatus is the status a preemption's result stands for.
func postFilterStatus(result string) *framework.Status {
	switch result {
	case PreemptionSuccess:
		return nil
	case PreemptionError:
		return statusError
	}
	return statusUnschedulable
}

var statusUnschedulable = &framework.Status{Code: framework.Unschedulable}

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

// actuate writes a preemption to the cluster off the cycle's goroutine, as
// upstream's asynchronous preemption (prepareCandidateAsync): the
// preemptors' nominations, the withdrawal of the lower-priority
// nominations on the same nodes, then for each victim (all at once) the
// DisruptionTarget condition, the delete and a Preempted event. Victims
// already being deleted are not written again; with none left, only the
// nominations are.
//
// Until the writes are done, the preemptor entity e is held in the queue
// (queue.Hold), so that a preemptor that fits once its first victim is
// gone does not bind before every eviction was issued, while the cycle
// goes on with other pods. When they are done the hold is released; if an
// eviction failed, the preemptors' nominations are withdrawn (the room
// will not be made) and e is activated to try again at once, as upstream
// activates it. preemptor is the pod the events relate to; kind and uid
// name the preemptor in the events.
func (s *Scheduler) actuate(ctx context.Context, e queue.Entity, preemptor *v1.Pod, kind, uid string,
	placements []preempt.Placement, victims []*v1.Pod, lower []*v1.Pod) {
	evict := make([]*v1.Pod, 0, len(victims))
	for _, v := range victims {
		if v.DeletionTimestamp == nil {
			evict = append(evict, v)
		}
	}
	if len(evict) == 0 {
		s.async(func() error { return s.nominate(ctx, placements) })
		return
	}
	s.q.Hold(e)
	msg := fmt.Sprintf("%s: preempting to accommodate a higher priority %s", s.opts.profile, kind)
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		start := s.opts.clock.Now()
		result := WrittenSuccess
		if err := s.nominate(ctx, placements); err != nil && ctx.Err() == nil {
			s.opts.log.Warn("nominate a preemptor", "preemptor", klogRef(preemptor), "err", err)
		}
		for _, p := range lower {
			if err := s.api.Nominate(ctx, p, ""); err != nil && ctx.Err() == nil {
				s.opts.log.Warn("withdraw a nomination", "pod", klogRef(p), "err", err)
				result = WrittenError
			}
		}
		failed := s.evict(ctx, preemptor, kind, uid, msg, evict)
		if failed {
			result = WrittenError
			// The room will not be made: the preemptors' nominations go,
			// and the next attempt (activated below) preempts again or
			// reports why not.
			for _, pl := range placements {
				if pl.Node == "" {
					continue
				}
				s.opts.nominator.Remove(pl.Pod.UID)
				if err := s.api.Nominate(ctx, pl.Pod, ""); err != nil && ctx.Err() == nil {
					s.opts.log.Warn("withdraw a preemptor's nomination", "pod", klogRef(pl.Pod), "err", err)
				}
			}
		}
		s.opts.rec.PreemptionWritten(kind, result, s.opts.clock.Since(start))
		s.q.Release(e, result == WrittenError)
	}()
}

// nominate writes each placed preemptor's nomination.
func (s *Scheduler) nominate(ctx context.Context, placements []preempt.Placement) error {
	var errs []error
	for _, pl := range placements {
		if pl.Node != "" {
			if err := s.api.Nominate(ctx, pl.Pod, pl.Node); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// evict evicts the victims, evictParallelism at a time, and reports
// whether one failed; the first failure stops the evictions not started
// yet (upstream's parallelizer with SendWithCancel).
func (s *Scheduler) evict(ctx context.Context, preemptor *v1.Pod, kind, uid, msg string, victims []*v1.Pod) (failed bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		sem  = make(chan struct{}, evictParallelism)
		fail = func() { mu.Lock(); failed = true; mu.Unlock(); cancel() }
	)
	for _, v := range victims {
		if ctx.Err() != nil {
			fail()
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				fail()
				return
			}
			if s.opts.preBindings.cancel(v.UID, "preempted by "+abi.PluginDefaultPreemption) {
				// In its PreBind, the victim is not bound: its binding is
				// canceled and it goes back to the queue, as upstream's.
				s.events.Eventf(v, preemptor, v1.EventTypeNormal, "Preempted", "Preempting",
					"Preempted by %s %s on node %s (in kube-scheduler memory).", kind, types.UID(uid), v.Spec.NodeName)
				s.opts.log.Info("preempted in its PreBind", "victim", klogRef(v), "node", v.Spec.NodeName, "preemptor", klogRef(preemptor))
				return
			}
			if err := s.api.Evict(ctx, v, msg); err != nil {
				if ctx.Err() == nil {
					s.opts.log.Error("evict a preemption victim", "victim", klogRef(v), "preemptor", klogRef(preemptor), "err", err)
				}
				fail()
				return
			}
			s.events.Eventf(v, preemptor, v1.EventTypeNormal, "Preempted", "Preempting",
				"Preempted by %s %s on node %s", kind, types.UID(uid), v.Spec.NodeName)
			s.opts.log.Info("preempted", "victim", klogRef(v), "node", v.Spec.NodeName, "preemptor", klogRef(preemptor))
		}()
	}
	wg.Wait()
	return failed
}

// evictParallelism bounds the victims evicted at once (upstream's
// parallelizer uses 16 workers).
const evictParallelism = 16

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
