package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// PreEnqueuePlugin is a plugin with upstream's PreEnqueue extension point
// that the queue runs natively, before the PreEnqueue policy slot, as it
// runs the scheduling gates: a pod it holds back waits in the unschedulable
// pool, gated by the plugin, without an attempt, a PodScheduled condition or
// a FailedScheduling event, until an event the plugin registered moves it.
// (SchedulingGates and DefaultPreemption's PreEnqueue are the queue's own;
// see host/queue.)
type PreEnqueuePlugin interface {
	Plugin
	// PreEnqueue returns nil to admit pod, or a rejection whose message
	// says what the pod waits for. It runs under the queue's lock: it must
	// be quick and must not call the API.
	PreEnqueue(pod *v1.Pod) *Status
}

// ReservePlugin is a plugin with upstream's Reserve extension point: it
// holds what the pod needs beside its room on the node (a volume, a device)
// once the pod is assumed on nodeName, so that the next cycles see it taken,
// and gives it back in Unreserve when the pod's placement is undone.
type ReservePlugin interface {
	Plugin
	// Reserve runs on the cycle's goroutine right after pod (the assumed
	// copy, spec.nodeName set to nodeName) was assumed. It returns nil, a
	// rejection (Unschedulable, UnschedulableAndUnresolvable or Pending:
	// the pod is reported unschedulable on nodeName as a FitError of one
	// node) or an Error. On any failure the cycle calls Unreserve of every
	// reserve plugin, this one included.
	Reserve(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status
	// Unreserve undoes Reserve. It runs when Reserve, PreBind or Bind of
	// the pod failed, on the cycle's or the binding goroutine, for every
	// reserve plugin whether or not its Reserve ran, so it must be
	// idempotent and do nothing when nothing was reserved.
	Unreserve(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string)
}

// PreBindPlugin is a plugin with upstream's PreBind extension point: it
// writes to the API what the binding depends on (a PersistentVolume's
// claimRef, a ResourceClaim's allocation) before the pod is bound. PreBind
// runs on the pod's binding goroutine, off the scheduling cycle, so it may
// wait on the API; it must end when ctx ends.
type PreBindPlugin interface {
	Plugin
	// PreBindPreFlight says, on the binding goroutine before PreBind,
	// whether PreBind has work for pod on nodeName (upstream's
	// PreBindPreFlight): nil if it has, a Skip status if it has none (its
	// PreBind is then not called), an Error to fail the binding. It must
	// not call the API: the cycle writes the pod's nominatedNodeName when
	// a plugin has work, so that others see where a pod whose PreBind may
	// take long is going.
	PreBindPreFlight(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status
	// PreBind returns nil, a rejection or an Error; on a failure the pod is
	// not bound: the reserve plugins' Unreserve run, the pod is forgotten
	// and requeued with backoff.
	PreBind(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status
}

// PostFilterPlugin is a plugin with upstream's PostFilter extension point
// (beside DefaultPreemption's, which the cycle runs itself, after these):
// it may change the cluster so that a pod that fits nowhere fits at its
// next attempt, as DynamicResources deallocating a claim bound to the
// wrong node.
type PostFilterPlugin interface {
	Plugin
	// PostFilter runs on the cycle's goroutine after pod was found to fit
	// no node; ps is the pod's state (nil when its PreFilters did not
	// finish). It returns Unschedulable (with reasons to report, or none)
	// to let the next plugins and preemption run, or Success, an Error or
	// UnschedulableAndUnresolvable to end the post-filtering.
	PostFilter(ctx context.Context, ps *PodState, pod *v1.Pod) *Status
}

// Extension point names of the points that run once per placed pod, as
// upstream's metrics label them.
const (
	LabelPostFilter = "PostFilter"
	LabelReserve    = "Reserve"
	LabelUnreserve  = "Unreserve"
	LabelPreBind    = "PreBind"
	// LabelPreBindPreFlight is PreBindPreFlight's label.
	LabelPreBindPreFlight = "PreBindPreFlight"
)

// PluginTimer observes each plugin's run at PostFilter, Reserve, Unreserve
// and PreBind (upstream's scheduler_plugin_execution_duration_seconds for
// those points). The cycle's sampled timed profile has one (WithPluginTimer); the
// plain profile has none and pays nothing.
type PluginTimer interface {
	Now() time.Time
	// Observe is one run of plugin at point, begun at start, with code.
	Observe(plugin, point string, code Code, start time.Time)
}

// WithPluginTimer returns a copy of p whose Reserve, Unreserve and PreBind
// time every plugin with t.
func (p *Profile) WithPluginTimer(t PluginTimer) *Profile {
	c := *p
	c.timer = t
	return &c
}

// HasReserve reports whether the profile has a reserve plugin: without one
// the cycle skips the Reserve and Unreserve steps altogether.
func (p *Profile) HasReserve() bool { return len(p.reserves) > 0 }

// PreEnqueue runs the profile's PreEnqueue plugins in order and returns the
// first rejection, with the plugin's name set, or nil.
func (p *Profile) PreEnqueue(pod *v1.Pod) *Status {
	for _, pl := range p.preEnqueues {
		if st := pl.PreEnqueue(pod); !st.IsSuccess() {
			c := *st
			c.Plugin = pl.Name()
			return &c
		}
	}
	return nil
}

// HasPreEnqueue reports whether the profile has a PreEnqueue plugin.
func (p *Profile) HasPreEnqueue() bool { return len(p.preEnqueues) > 0 }

// HasPostFilter reports whether the profile has a postFilter plugin
// (DefaultPreemption aside).
func (p *Profile) HasPostFilter() bool { return len(p.postFilters) > 0 }

// HasPreBind reports whether the profile has a preBind plugin.
func (p *Profile) HasPreBind() bool { return len(p.preBinds) > 0 }

// ReservePlugins are the names of the reserve plugins, in the order Reserve
// runs them. The slice is the caller's.
func (p *Profile) ReservePlugins() []string {
	out := make([]string, len(p.reserves))
	for i, r := range p.reserves {
		out[i] = r.Name()
	}
	return out
}

// PreBindPlugins are the names of the preBind plugins, in order.
func (p *Profile) PreBindPlugins() []string {
	out := make([]string, len(p.preBinds))
	for i, b := range p.preBinds {
		out[i] = b.Name()
	}
	return out
}

// Reserve runs the reserve plugins' Reserve in profile order for pod (the
// assumed copy) on nodeName, stopping at the first failure, as upstream's
// RunReservePluginsReserve: a rejection comes back with the plugin's name
// set, any other failure as an Error "running Reserve plugin %q: <err>".
// The caller runs Unreserve after a failure.
func (p *Profile) Reserve(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status {
	for _, pl := range p.reserves {
		if st := p.run(pl, LabelReserve, func() *Status { return pl.Reserve(ctx, ps, pod, nodeName) }); st != nil {
			return st
		}
	}
	return nil
}

// Unreserve runs every reserve plugin's Unreserve in the reverse of the
// profile order, as upstream's RunReservePluginsUnreserve.
func (p *Profile) Unreserve(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) {
	for i := len(p.reserves) - 1; i >= 0; i-- {
		pl := p.reserves[i]
		var start time.Time
		if p.timer != nil {
			start = p.timer.Now()
		}
		pl.Unreserve(ctx, ps, pod, nodeName)
		if p.timer != nil {
			p.timer.Observe(pl.Name(), LabelUnreserve, Success, start)
		}
	}
}

// PostFilter runs the postFilter plugins in profile order for pod, which
// fits no node, as upstream's RunPostFilterPlugins: the first that returns
// Success, UnschedulableAndUnresolvable or an Error ends it and its status
// is returned with the plugin named (nil for Success; an Error's text is
// the plugin's, unwrapped, as upstream reports it); otherwise the result is Unschedulable with every plugin's
// reasons, naming the first plugin, and the caller goes on to preemption.
// Any other rejection code counts as Unschedulable, as upstream's.
func (p *Profile) PostFilter(ctx context.Context, ps *PodState, pod *v1.Pod) *Status {
	res := &Status{Code: Unschedulable}
	for _, pl := range p.postFilters {
		var start time.Time
		if p.timer != nil {
			start = p.timer.Now()
		}
		st := pl.PostFilter(ctx, ps, pod)
		if p.timer != nil {
			p.timer.Observe(pl.Name(), LabelPostFilter, codeOf(st), start)
		}
		if st.IsSuccess() {
			return nil
		}
		if st.Code == UnschedulableAndUnresolvable || !st.IsRejected() {
			c := *st
			c.Plugin = pl.Name()
			if !st.IsRejected() {
				c.Code = Error
			}
			return &c
		}
		res.Reasons = append(res.Reasons, st.Reasons...)
		if res.Plugin == "" {
			res.Plugin = pl.Name()
		}
	}
	return res
}

// PreBindPreFlight runs every preBind plugin's PreBindPreFlight, as
// upstream's RunPreBindPreFlights: nil when one or more plugins have work,
// Skip when none has, an Error (with the plugin's name) when one fails or
// answers what a preflight may not. The plugins that answered Skip are
// recorded in ps: PreBind leaves them out.
func (p *Profile) PreBindPreFlight(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status {
	res := &Status{Code: Skip}
	for i, pl := range p.preBinds {
		st := p.timed(pl, LabelPreBindPreFlight, func() *Status { return pl.PreBindPreFlight(ctx, ps, pod, nodeName) })
		switch {
		case st.IsSuccess():
			res = nil
		case st.Code == Skip:
			ps.skipPreBind(i)
		case st.Code == Error:
			return &Status{Code: Error, Plugin: pl.Name(), Err: fmt.Errorf("running PreBindPreFlight %q: %w", pl.Name(), st.AsError())}
		default:
			return &Status{Code: Error, Plugin: pl.Name(), Err: fmt.Errorf(
				"PreBindPreFlight %s returned %q, which is unsupported. It is supposed to return Success, Skip, or Error status",
				pl.Name(), st.Code)}
		}
	}
	return res
}

// PreBind runs the preBind plugins in profile order, stopping at the first
// failure, as upstream's RunPreBindPlugins (without its parallel groups):
// the plugins whose PreBindPreFlight answered Skip are left out; a
// rejection comes back with the plugin's name set, any other failure as an
// Error "running PreBind plugin %q: <err>", where a plugin's
// context.Canceled is replaced by ctx's cause (the binding was canceled:
// "preempted by DefaultPreemption"), as upstream's.
func (p *Profile) PreBind(ctx context.Context, ps *PodState, pod *v1.Pod, nodeName string) *Status {
	for i, pl := range p.preBinds {
		if ps.preBindSkipped(i) {
			continue
		}
		call := func() *Status {
			st := pl.PreBind(ctx, ps, pod, nodeName)
			if st != nil && st.Code == Error && errors.Is(st.AsError(), context.Canceled) {
				return &Status{Code: Error, Plugin: st.Plugin, Err: context.Cause(ctx)}
			}
			return st
		}
		if st := p.run(pl, LabelPreBind, call); st != nil {
			return st
		}
	}
	return nil
}

// run calls one plugin at point, timed when the profile has a timer, and
// returns its failure as pluginFailure does.
func (p *Profile) run(pl Plugin, point string, call func() *Status) *Status {
	return pluginFailure(p.timed(pl, point, call), pl.Name(), point)
}

// timed calls one plugin at point, timed when the profile has a timer, and
// returns its status as is.
func (p *Profile) timed(pl Plugin, point string, call func() *Status) *Status {
	var start time.Time
	if p.timer != nil {
		start = p.timer.Now()
	}
	st := call()
	if p.timer != nil {
		p.timer.Observe(pl.Name(), point, codeOf(st), start)
	}
	return st
}

func codeOf(st *Status) Code {
	if st == nil {
		return Success
	}
	return st.Code
}

// pluginFailure is a plugin's status at point as the framework returns it:
// nil for success, a rejection with its plugin named (a copy: statuses may
// be shared), an Error wrapped with the plugin's name as upstream's.
func pluginFailure(st *Status, plugin, point string) *Status {
	if st.IsSuccess() {
		return nil
	}
	if st.IsRejected() {
		c := *st
		c.Plugin = plugin
		return &c
	}
	return &Status{Code: Error, Plugin: plugin,
		Err: fmt.Errorf("running %s plugin %q: %w", point, plugin, st.AsError())}
}
