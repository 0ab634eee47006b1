package queue

import (
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// Placing entities. Every move between the heaps and the unschedulable pool
// goes through detachLocked (out, under amu), the decision under mu (hints,
// PreEnqueue), stage and commit (in, under one amu section), which keep the
// per-queue counts and gauges and wake Pop.

// entityOf is the entity that queues p: p itself, or p's group. mu held.
func (q *Queue) entityOf(p *Pod) *entity {
	if p.grp != nil {
		return &p.grp.entity
	}
	return &p.entity
}

func (q *Queue) heapOf(l location) *heap {
	switch l {
	case locActive:
		return q.active
	case locBackoff:
		return q.backoff
	case locErrorBackoff:
		return q.errBackoff
	}
	return nil
}

// countEntity adds (sign 1) or removes (-1) e and its pods to location l's
// counts and gauges. amu held.
func (q *Queue) countEntity(l location, e *entity, sign int) {
	q.count(l, sign*e.size())
	if lb := l.entityLabel(); lb != "" {
		kind := EntityPod
		if e.group != nil {
			kind = EntityPodGroup
		}
		q.rec.QueuedEntities(lb, kind, sign)
	}
}

// count adds n pods to location l's count and gauge. amu held.
func (q *Queue) count(l location, n int) {
	lb := l.label()
	if n == 0 || lb == "" {
		return
	}
	q.counts[l] += n
	q.rec.PendingPods(lb, n)
}

func (q *Queue) addIncoming(queue, event string, n int) {
	if k := len(q.incoming); k > 0 && q.incoming[k-1].queue == queue && q.incoming[k-1].event == event {
		q.incoming[k-1].n += n
		return
	}
	q.incoming = append(q.incoming, incoming{queue, event, n})
}

func (q *Queue) flushIncomingLocked() {
	for i, in := range q.incoming {
		q.rec.IncomingPods(in.queue, in.event, in.n)
		q.incoming[i] = incoming{}
	}
	q.incoming = q.incoming[:0]
}

// setLocation sets e's location outside any heap or the pool, keeping the
// counts. mu held.
func (q *Queue) setLocation(e *entity, l location) {
	q.amu.Lock()
	q.countEntity(e.where, e, -1)
	e.where = l
	q.countEntity(l, e, 1)
	q.amu.Unlock()
}

// detachLocked takes e out of whatever heap or pool holds it and returns
// where it was; e is then in limbo. mu and amu held; e is not in flight.
func (q *Queue) detachLocked(e *entity) location {
	prev := e.where
	switch prev {
	case locActive, locBackoff, locErrorBackoff:
		q.heapOf(prev).remove(e)
	case locUnschedulable, locGated:
		q.poolRemove(e)
	}
	q.countEntity(prev, e, -1)
	e.where = locLimbo
	return prev
}

func (q *Queue) poolRemove(e *entity) {
	i, last := e.upos, len(q.pool)-1
	if i < 0 || i > last || q.pool[i] != e {
		return
	}
	if i != last {
		q.pool[i] = q.pool[last]
		q.pool[i].upos = i
	}
	q.pool[last] = nil
	q.pool = q.pool[:last]
	e.upos = -1
}

// stage records that e (in limbo) goes to l; commit applies it. mu held.
func (q *Queue) stage(e *entity, l location, event string, prev location) {
	q.staged = append(q.staged, placement{e: e, to: l, event: event, prev: prev})
}

// commit applies the staged placements under one amu section and wakes Pop
// if activeQ (or, with popFromBackoffQ, the unschedulable-backoff heap)
// gained an entity; then, amu released, it notifies the pods whose holder
// changed (WithHeldNotify). mu held.
func (q *Queue) commit() {
	if len(q.staged) == 0 {
		return
	}
	q.amu.Lock()
	wake := false
	for i := range q.staged {
		s := &q.staged[i]
		if q.placeLocked(s.e, s.to, s.event, s.prev) {
			wake = true
		}
		if q.onHeld != nil {
			q.noteStaged(s)
		}
		q.staged[i] = placement{}
	}
	q.staged = q.staged[:0]
	q.flushIncomingLocked()
	if wake {
		q.cond.Broadcast()
	}
	q.amu.Unlock()
	q.deliverHeld()
}

// placeLocked puts e (in limbo) in l and reports whether Pop may now find
// it. mu and amu held.
func (q *Queue) placeLocked(e *entity, l location, event string, prev location) bool {
	n := e.size()
	switch l {
	case locActive:
		q.active.push(e)
	case locBackoff, locErrorBackoff:
		l = locBackoff
		// A pod group backs off in the error heap whatever rejected it, as
		// upstream's, whose group infos carry no rejecting plugins: a pop
		// from backoffQ (popFromBackoffQ) never takes it early, which would
		// retry a group that does not fit in a busy loop while activeQ is
		// empty.
		if e.failedWithError() || e.group != nil {
			l = locErrorBackoff
			q.errBackoff.push(e)
		} else {
			q.backoff.push(e)
		}
	case locUnschedulable, locGated:
		e.upos = len(q.pool)
		q.pool = append(q.pool, e)
	}
	// Which move took e out of the pool: the leftover flush, or an event.
	if prev.inPool() && !l.inPool() {
		e.flushed = event == EventUnschedulableTimeout
	}
	e.where = l
	q.countEntity(l, e, 1)
	switch {
	case event == "": // put back where it was, not an incoming pod
	case l.inHeap():
		q.addIncoming(l.label(), event, n)
	case l.inPool() && !prev.inPool():
		q.addIncoming(QueueUnschedulable, event, n)
	}
	return l == locActive || (l == locBackoff && q.popFromBackoffQ)
}

// poolLocation is where a skipped entity waits.
func poolLocation(e *entity) location {
	if e.gating != "" {
		return locGated
	}
	return locUnschedulable
}

// requeue sends e (in limbo) where strategy says (upstream's
// requeueEntityWithQueueingStrategy). mu held.
func (q *Queue) requeue(e *entity, st strategy, event string, prev location) {
	switch {
	case st == skip:
		q.stage(e, poolLocation(e), event, prev)
	case st == afterBackoff && q.backingOff(e):
		q.moveToBackoff(e, event, prev)
	default:
		q.moveToActive(e, event, false, prev)
	}
}

// moveToActive runs PreEnqueue (unless e comes from backoffQ and
// popFromBackoffQ is on: it ran on the way in) and stages e for activeQ,
// or for the pool as gated; a held entity (Hold) stays in the pool. mu
// held, e in limbo.
func (q *Queue) moveToActive(e *entity, event string, fromBackoff bool, prev location) {
	if e.held {
		q.holdBack(e, immediately, event, prev)
		return
	}
	if e.group != nil {
		q.refreshGroup(e.group)
	}
	if !(fromBackoff && q.popFromBackoffQ) && q.runPreEnqueue(e) {
		q.stage(e, locGated, event, prev)
		return
	}
	var now time.Time
	if e.initialAttempt.IsZero() {
		now = q.clock.Now()
		e.initialAttempt = now
		e.patch()
	}
	// A member that joined a group already past its first attempt is
	// stamped too: its scheduling SLI starts now.
	for _, p := range e.pods() {
		if p.initialAttempt.IsZero() {
			if now.IsZero() {
				now = q.clock.Now()
			}
			p.initialAttempt = now
			p.patch()
		}
	}
	q.stage(e, locActive, event, prev)
}

// moveToBackoff stages e for backoffQ; with popFromBackoffQ on, PreEnqueue
// runs first (KEP-5142) and may hold it in the pool instead, as does a
// Hold. mu held.
func (q *Queue) moveToBackoff(e *entity, event string, prev location) {
	if e.held {
		q.holdBack(e, afterBackoff, event, prev)
		return
	}
	if e.group != nil {
		q.refreshGroup(e.group)
	}
	if q.popFromBackoffQ && q.runPreEnqueue(e) {
		q.stage(e, locGated, event, prev)
		return
	}
	q.stage(e, locBackoff, event, prev)
}

// runPreEnqueue asks, for each pod of e, the scheduling gates and the
// native PreEnqueue plugins (SetNativePreEnqueue), and then the PreEnqueue
// slot (upstream's runPreEnqueuePlugins). A held
// pod holds the whole entity: a group waits if any member waits, and takes
// the gating plugin of the last member held, as upstream. The gating plugin
// joins the held pod's unschedulable plugins, as upstream records it, so
// that the events it registered can requeue the pod. mu held, e outside
// the heaps.
func (q *Queue) runPreEnqueue(e *entity) (gated bool) {
	e.gating, e.gateReason = "", ""
	for _, p := range e.pods() {
		q.refreshPod(p)
		var g abi.Gate
		if p.hasGates {
			g = abi.Gate{Code: abi.GateWait, Plugin: abi.PluginSchedulingGates, Reason: gatesReason(p.obj.Spec.SchedulingGates)}
		} else if q.native != nil {
			g = q.native(p.obj)
		}
		if !p.hasGates && g.Code != abi.GateWait {
			g = q.preEnqueue.PreEnqueue(p.view)
		}
		if g.Code != abi.GateWait {
			continue
		}
		gated = true
		e.gating, e.gateReason = g.Plugin, g.Reason
		if !slices.Contains(p.plugins.Unschedulable, g.Plugin) {
			u := append(slices.Clip(p.plugins.Unschedulable), g.Plugin)
			slices.Sort(u)
			p.plugins.Unschedulable = u
			q.encodePod(p, false)
		}
	}
	return gated
}

func gatesReason(gates []v1.PodSchedulingGate) string {
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.Name
	}
	return "waiting for scheduling gates: [" + strings.Join(names, " ") + "]"
}
