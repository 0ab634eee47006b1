package cycle

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// reserve runs the profile's Reserve for the assumed pod on node, and on a
// failure every reserve plugin's Unreserve, as upstream's assumeAndReserve:
// the caller forgets the assumed pod then. It returns nil at once when the
// profile has no reserve plugin (the default profile), and the failure as
// the cycle reports it: a rejection as a FitError of the one node
// ("0/1 nodes are available: 1 <reason>."), anything else as an error.
func (s *Scheduler) reserve(ctx context.Context, prof *framework.Profile, ps *framework.PodState, assumed *v1.Pod) (failure, bool) {
	if !prof.HasReserve() {
		return failure{}, true
	}
	node := assumed.Spec.NodeName
	start := s.opts.clock.Now()
	st := prof.Reserve(ctx, ps, assumed, node)
	s.observe(ExtensionPointReserve, st, start)
	if st == nil {
		return failure{}, true
	}
	s.unreserve(ctx, prof, ps, assumed)
	return statusFailure(st, node), false
}

// unreserve runs every reserve plugin's Unreserve (nothing without one).
func (s *Scheduler) unreserve(ctx context.Context, prof *framework.Profile, ps *framework.PodState, assumed *v1.Pod) {
	if !prof.HasReserve() {
		return
	}
	start := s.opts.clock.Now()
	prof.Unreserve(ctx, ps, assumed, assumed.Spec.NodeName)
	s.observe(ExtensionPointUnreserve, nil, start)
}

// statusFailure is a Reserve failure on node as upstream reports it: a
// rejection is a FitError with node the only node looked at, so the pod's
// message is "0/1 nodes are available: 1 <reason>." and the rejecting
// plugin is the one that can requeue it; an Error fails the attempt.
func statusFailure(st *framework.Status, node string) failure {
	if !st.IsRejected() {
		return failure{err: st.AsError()}
	}
	diag := &framework.Diagnosis{}
	diag.Add(node, st)
	return failure{diag: diag, nodes: 1}
}

// preBind runs the profile's PreBindPreFlight and PreBind on the binding
// goroutine (nothing without a preBind plugin). When a plugin has work the
// pod's nominatedNodeName is written first. A rejection is reported with
// its own message and no rejecting plugin, as upstream (it is not a
// FitError: the pod backs off and retries); an Error as an error. The
// failure's nominated is set, even on success, when the nomination was
// written. While a plugin works the pod is in s.opts.preBindings, where
// preemption may cancel it; a pod canceled then fails with the cause.
func (s *Scheduler) preBind(ctx context.Context, prof *framework.Profile, ps *framework.PodState, assumed *v1.Pod) (failure, bool) {
	if !prof.HasPreBind() {
		return failure{}, true
	}
	node := assumed.Spec.NodeName
	start := s.opts.clock.Now()
	st := prof.PreBindPreFlight(ctx, ps, assumed, node)
	s.observe(ExtensionPointPreBindPreFlight, st, start)
	var (
		f failure
		b *preBinding
	)
	switch {
	case st == nil:
		var done func()
		ctx, b, done = s.opts.preBindings.start(ctx, assumed.UID)
		defer done()
		// A plugin has work, which may take long: say where the pod is
		// going (upstream's NominatedNodeNameForExpectation, on by default
		// since 1.35). A failed write does not stop the binding.
		if assumed.Status.NominatedNodeName != node {
			err := s.api.Nominate(ctx, assumed, node)
			if err != nil && ctx.Err() == nil {
				s.opts.log.Warn("nominate a pod before its PreBind", "pod", klogRef(assumed), "node", node, "err", err)
			}
			f.nominated = err == nil
		}
	case st.Code == framework.Skip:
		// PreBind runs, leaving every plugin out, so that its extension
		// point is recorded for every pod, as upstream's.
	default:
		return failure{err: st.AsError()}, false
	}
	start = s.opts.clock.Now()
	st = prof.PreBind(ctx, ps, assumed, node)
	s.observe(ExtensionPointPreBind, st, start)
	switch {
	case st == nil && b != nil && !b.markPrebound():
		// Preempted while its PreBind ran (upstream's check before Bind).
		f.err = context.Cause(ctx)
		return f, false
	case st == nil:
		return f, true
	case st.IsRejected():
		f.message, f.rejected = st.Message(), true
		return f, false
	}
	f.err = st.AsError()
	return f, false
}

// bindingFailed is upstream's handleBindingCycleError: the reserve plugins'
// Unreserve, the assumed pod forgotten, the pods its room may now fit moved
// as upstream moves them on an assigned pod's deletion (after the pod is
// handed back when it was rejected, so the event does not requeue the pod
// itself), and the pod handed back with its failure.
func (s *Scheduler) bindingFailed(ctx context.Context, prof *framework.Profile, ps *framework.PodState, p *queue.Pod,
	assumed *v1.Pod, f failure, start time.Time) {
	f.unnominate = true
	s.unreserve(ctx, prof, ps, assumed)
	if err := s.cache.ForgetPod(assumed); err != nil {
		s.opts.log.Error("forget a pod whose binding failed", "pod", klogRef(assumed), "err", err)
		s.fail(ctx, p, f, start)
		return
	}
	ev := podview.PodEvent(abi.ActionDelete, assumed, nil, nil)
	if f.rejected {
		uid := string(assumed.UID)
		s.fail(ctx, p, f, start)
		s.move(ev, func(v abi.PodView) bool { return v.UID() != uid })
		return
	}
	s.move(ev, nil)
	s.fail(ctx, p, f, start)
}

// pluginClock times the plugins of the timed profile at Reserve, Unreserve
// and PreBind (framework.PluginTimer), with one observer per plugin, point
// and status, asked for on first use.
type pluginClock struct {
	rec   Recorder
	clock clock.PassiveClock
	obs   sync.Map // "plugin point status" -> func(time.Duration)
}

func (c *pluginClock) Now() time.Time { return c.clock.Now() }

func (c *pluginClock) Observe(plugin, point string, code framework.Code, start time.Time) {
	d := c.clock.Since(start)
	status := code.String()
	k := plugin + " " + point + " " + status
	o, ok := c.obs.Load(k)
	if !ok {
		o, _ = c.obs.LoadOrStore(k, c.rec.PluginObserver(plugin, point, status))
	}
	o.(func(time.Duration))(d)
}

// move moves the pods ev may help (those only accepts, every one for nil):
// in every profile's queue with WithClusterMoves, else in s's.
func (s *Scheduler) move(ev abi.Event, only func(abi.PodView) bool) {
	switch {
	case s.opts.moves != nil:
		s.opts.moves(ev, only)
	case only == nil:
		s.q.MoveOnEvent(ev)
	default:
		s.q.MoveOnEventFor(ev, only)
	}
}
