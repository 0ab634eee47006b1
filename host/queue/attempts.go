package queue

import (
	"fmt"
	"slices"
	"time"

	"github.com/wasmsched/wasmsched/host/podview"
)

// Handing back what Pop handed out: a pod that failed its attempt, a pod
// group after its cycle. (A pod that needs no requeue is handed back with
// Done.)

// AddUnschedulableIfNotPresent hands back a popped pod whose attempt
// failed. rejected names the plugins that rejected it (Unschedulable) or
// reported Pending; both empty means it failed with an error. The pod is
// then requeued as upstream does: the events recorded while it was in
// flight are replayed through its rejecting plugins' hints; Queue sends it
// to backoffQ (activeQ if its backoff is over, or if a Pending plugin
// queued it), and otherwise it waits in the unschedulable pool. A pod that
// failed with an error always backs off (in the error heap). A member of a
// pod group waits for AddAttemptedGroupIfNeeded instead.
//
// It returns an error if the pod is not in flight (handed back twice); a
// pod deleted while in flight, or in flight at Close, is dropped silently.
func (q *Queue) AddUnschedulableIfNotPresent(p *Pod, rejected podview.Plugins) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	if p.where != locInFlight || !q.flight.inFlight(p) {
		closed, deleted := q.closed, p.deleted
		q.amu.Unlock()
		if closed || deleted {
			return nil
		}
		return fmt.Errorf("pod %s/%s (%s) is not in flight: it was handed back already or never popped",
			p.obj.Namespace, p.obj.Name, p.uid)
	}
	events, blind := q.flight.since(p, q.scr.events[:0])
	q.flight.done(p)
	p.where = locLimbo
	p.rescue = false
	q.amu.Unlock()
	defer func() {
		clear(events)
		q.scr.events = events[:0]
	}()

	objChanged := p.latest != nil
	if objChanged {
		p.obj, p.latest = p.latest, nil
	}
	p.plugins = normalise(rejected)
	if p.plugins.empty() {
		p.errCount++
	} else {
		p.unschedCount++
		p.errCount = 0
	}
	p.timestamp = q.clock.Now()
	p.flushTime = time.Time{}
	p.expiry = time.Time{}

	if p.grp != nil {
		q.encodePod(p, objChanged)
		q.addMember(p, EventScheduleAttemptFailure)
		q.commit()
		return nil
	}
	q.setExpiry(&p.entity)
	q.encodePod(p, objChanged)
	st := q.replay(p, events, blind)
	q.requeue(&p.entity, st, EventScheduleAttemptFailure, locNone)
	q.commit()
	return nil
}

// GroupResult is the outcome of a pod-group cycle.
type GroupResult struct {
	// Scheduled: the group was placed. Members still pending (those that
	// failed, or arrived during the cycle) are requeued to activeQ without
	// backoff, keeping the group's timestamp if some member failed, so that
	// the next attempt (which may preempt) comes at once; unless a member
	// failed with an error (its binding, say): then the group backs off in
	// the error heap, whether the member was handed back before the group
	// or after it.
	Scheduled bool
	// Rejected are the plugins that rejected the group when it was not
	// scheduled; empty means it failed with an error. A rejected group backs
	// off in the unschedulable-backoff heap, one that failed with an error
	// in the error heap.
	Rejected podview.Plugins
}

// AddAttemptedGroupIfNeeded hands back a popped group once each member has
// been handed back (Done if bound, AddUnschedulableIfNotPresent if not; a
// member still binding may be handed back later). It is the group's Done:
// the members that failed or arrived during the cycle are requeued as a
// unit, with backoff unless the group was scheduled. A group with no such
// member leaves the queue. As upstream (v1.37), a rejected group is not
// checked against events: it backs off in the error heap (upstream's group
// infos carry no rejecting plugins), so a pop from backoffQ never retries it
// early, and is retried when its backoff ends; max backoff grows with the
// square root of its size.
func (q *Queue) AddAttemptedGroupIfNeeded(g *Group, r GroupResult) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	if g.where != locInFlight {
		closed := q.closed
		q.amu.Unlock()
		if closed {
			return nil
		}
		return fmt.Errorf("pod group %s/%s is not in flight: it was handed back already or never popped",
			g.key.namespace, g.key.name)
	}
	pending := g.pending
	g.pending = nil
	q.count(locPending, -len(pending))
	failed, errCount := false, 0
	for _, p := range pending {
		// A member that arrived during the cycle was never popped; one
		// with attempts was popped now (every queued member is) and failed.
		failed = failed || p.attempts > 0
		if p.attempts > 0 {
			errCount = max(errCount, p.errCount)
		}
		p.where = locMember
	}
	g.popped, g.poppedPG = nil, nil
	g.where = locLimbo
	q.amu.Unlock()

	g.members = pending
	slices.SortFunc(g.members, memberOrder)
	if len(g.members) == 0 {
		q.setLocation(&g.entity, locNone)
		q.forgetGroupIfIdle(g)
		return nil
	}
	if g.pg == nil {
		q.stage(&g.entity, locIncomplete, "", locNone)
		q.commit()
		return nil
	}
	withoutBackoff, keepTimestamp := false, false
	switch {
	case r.Scheduled && errCount > 0:
		// A member failed with an error (its binding, handed back before
		// the group): the group backs off in the error heap, as when the
		// member comes back after the group (addMember).
		g.unschedCount, g.errCount = 0, errCount
	case r.Scheduled:
		withoutBackoff, keepTimestamp = true, failed
		g.unschedCount, g.errCount = 0, 0
	case len(r.Rejected.Unschedulable)+len(r.Rejected.Pending) > 0:
		g.unschedCount++
		g.errCount = 0
	default:
		g.errCount++
	}
	g.rejected = normalise(r.Rejected)
	g.recGen = ^g.gen // the group record carries the group's rejecting plugins
	if !keepTimestamp {
		g.timestamp = q.clock.Now()
	}
	g.flushTime = time.Time{}
	g.expiry = time.Time{}
	q.setExpiry(&g.entity)
	q.refreshGroup(g)
	if !withoutBackoff && q.backingOff(&g.entity) {
		q.moveToBackoff(&g.entity, EventScheduleAttemptFailure, locNone)
	} else {
		q.moveToActive(&g.entity, EventScheduleAttemptFailure, false, locNone)
	}
	q.commit()
	return nil
}

// flushRescued reports a pod scheduled by the attempt the leftover flush
// brought (Scheduled): once per plugin that had rejected it, unschedulable
// or pending (its group's, for a member that recorded none), as the pod
// last recorded them. mu held.
func (q *Queue) flushRescued(p *Pod) {
	r := p.plugins
	if r.empty() && p.grp != nil {
		r = p.grp.rejected
	}
	plugins := append(slices.Clone(r.Unschedulable), r.Pending...)
	if len(plugins) == 0 {
		plugins = []string{""}
	}
	for _, pl := range plugins {
		q.rec.FlushRescue(q.profile, pl)
	}
	q.log.Info("pod scheduled after the unschedulable-pods flush moved it: no event or hint requeued it",
		"profile", q.profile, "pod", p.obj.Namespace+"/"+p.obj.Name,
		"unschedulablePlugins", r.Unschedulable, "pendingPlugins", r.Pending)
}
