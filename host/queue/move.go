package queue

import (
	"bytes"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
)

// candidate is an entity an event may requeue, and what it was decided.
type candidate struct {
	e     *entity
	st    strategy
	prev  location
	asked bool // some of its pods are in the batch
}

// hintRef ties an entry of a hint batch to its candidate; pending marks the
// pending-only variant of a pod's record (see Pod.pendingView).
type hintRef struct {
	cand    int
	pending bool
}

// MoveOnEvent is a move request for a cluster event (node add/update,
// assigned pod add/update/delete, unscheduled pod add, PodGroup
// add/update, ...), built with podview's NodeEvent, PodEvent or
// PodGroupEvent.
//
// The candidates are the entities in the unschedulable pool rejected by a
// plugin that registered a matching (resource, action) with the
// QueueingHint slot (a gated entity only if its gating plugin did); the
// slot decides for all of them in one batched call. Queue (or a hint
// error) sends an entity to backoffQ, or to activeQ if its backoff is over
// or a Pending plugin queued it; Skip leaves it. An entity none of whose
// pods has a rejecting plugin moves on any registered event, as upstream,
// and so does, on any event, one rejected or gated by a plugin no
// registration names (see unregistered). The event is also recorded for the
// pods in flight, which replay it if they come back unschedulable. An event
// nobody registered does nothing when every plugin seen is registered.
func (q *Queue) MoveOnEvent(ev abi.Event) { q.MoveOnEventFor(ev, nil) }

// MoveOnEventFor is MoveOnEvent restricted to entities with a pod for
// which only returns true (upstream's PreEnqueueCheck; e.g. pods of lower
// or equal priority than a deleted nominated pod).
func (q *Queue) MoveOnEventFor(ev abi.Event, only func(abi.PodView) bool) {
	q.moveOn(ev.Resource, ev.Action, &ev, nil, only)
}

// MoveOnLazyEvent is MoveOnEvent for the event build returns, of resource
// res and action act, built only when read: when the unschedulable pool
// holds an entity to decide on, and when a pod that was in flight replays
// it. Every binding is an assigned pod's Add that the pods in flight must
// record, and on work where nothing fails none of them ever reads it.
// build must return the same event whenever it is called (it reads objects
// that do not change, as the informers' do not) and may be called later,
// on another goroutine, or never.
func (q *Queue) MoveOnLazyEvent(res abi.EventResource, act abi.ActionType, build func() abi.Event) {
	q.moveOn(res, act, nil, build, nil)
}

// moveOn is MoveOnEventFor of ev, or of build's event built only if read.
func (q *Queue) moveOn(res abi.EventResource, act abi.ActionType, ev *abi.Event, build func() abi.Event, only func(abi.PodView) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	in := interestIn(q.regs, res, act)
	if !in.any && q.unregistered(q.plugins.all) == 0 {
		return
	}
	label := q.label(res, act)
	var view abi.EventView
	if ev != nil || len(q.pool) > 0 {
		if ev == nil {
			built := build()
			ev = &built
		}
		view = q.encodeEvent(ev)
		cands := q.decide(view, in, q.pool, true, false, only)
		q.moveCandidates(cands, label)
	}

	q.amu.Lock()
	if q.flight.needed() {
		if ev != nil {
			q.flight.record(q.flightEventOf(view, label, "", false))
		} else {
			q.flight.record(&flightEvent{build: build, bytes: lazyEventBytes, res: res, act: act, label: label})
		}
	}
	q.amu.Unlock()
	q.commit()
}

// decide chooses the candidates among es for an event and asks the
// QueueingHint slot about their pods in one call (upstream's
// isEntityWorthRequeuing for each entity). pool: es is the unschedulable
// pool, where a gated entity is a candidate only if its gating plugin
// registered the event (upstream skips it otherwise). gatesEliminated: the
// event is an update of the pod itself that removed its last scheduling
// gate, which the native SchedulingGates hint answers with Queue. The
// result aliases scratch space, valid until the next call. mu held.
func (q *Queue) decide(ev abi.EventView, in interest, es []*entity, pool, gatesEliminated bool,
	only func(abi.PodView) bool) []candidate {
	views, refs, cands := q.scr.views[:0], q.scr.refs[:0], q.scr.cands[:0]
	// The plugins whose hint the queue answers (Queue on their events),
	// and what the slot registered, apart.
	native := interestIn(q.nativeRegs, ev.Resource(), ev.Action()).mask
	slot := interestIn(q.slotRegs, ev.Resource(), ev.Action())
	for _, e := range es {
		// A gated entity waits for the events of its gating plugin; the
		// scheduling gates' only event is an update of the pod itself. An
		// entity held for its preemption is decided for as if it were not
		// (the move is remembered until Release).
		if pool && e.gating != "" && !e.held {
			bit := q.plugins.bit(e.gating)
			if e.gating == abi.PluginSchedulingGates || !in.covers(bit) && q.unregistered(bit) == 0 {
				continue
			}
		}
		if only != nil && !slices.ContainsFunc(e.pods(), func(p *Pod) bool { return only(p.view) }) {
			continue
		}
		c := candidate{e: e}
		for _, p := range e.pods() {
			if p.mask == 0 {
				c.st = max(c.st, afterBackoff)
				continue
			}
			// SchedulingGates is native: its hint (Queue when the last gate
			// goes) is answered here, and the slot is asked only about the
			// plugins it may have registered.
			if gatesEliminated && p.mask&q.gatesBit != 0 {
				c.st = max(c.st, afterBackoff)
			}
			if p.mask&native != 0 || q.unregistered(p.mask) != 0 {
				c.st = max(c.st, afterBackoff)
			}
			if !slot.covers(p.mask &^ q.gatesBit &^ q.nativeMask) {
				continue
			}
			q.refreshPod(p)
			if len(p.pendingView.Bytes()) > 0 {
				refs = append(refs, hintRef{cand: len(cands), pending: true})
				views = append(views, p.pendingView)
			}
			if len(p.plugins.Unschedulable) > 0 {
				refs = append(refs, hintRef{cand: len(cands)})
				views = append(views, p.view)
			}
			c.asked = true
		}
		if c.st != skip || c.asked {
			cands = append(cands, c)
		}
	}
	if len(views) > 0 {
		if cap(q.scr.hints) < len(views) {
			q.scr.hints = make([]abi.Hint, len(views))
		}
		hints := q.scr.hints[:len(views)]
		clear(hints)
		q.hint.Hints(ev, views, hints)
		for i, r := range refs {
			if hints[i] == abi.HintSkip {
				continue
			}
			// Queue, or an error, which counts as Queue.
			c := &cands[r.cand]
			if r.pending {
				c.st = immediately
			} else {
				c.st = max(c.st, afterBackoff)
			}
		}
	}
	clear(views) // drop the references to records
	q.scr.views, q.scr.refs, q.scr.cands = views[:0], refs[:0], cands[:0]
	return cands
}

// moveCandidates requeues the candidates whose strategy is not skip. mu
// held.
func (q *Queue) moveCandidates(cands []candidate, label string) {
	q.amu.Lock()
	for i := range cands {
		if cands[i].st != skip {
			cands[i].prev = q.detachLocked(cands[i].e)
		}
	}
	q.amu.Unlock()
	for i := range cands {
		if c := &cands[i]; c.st != skip {
			q.requeue(c.e, c.st, label, c.prev)
		}
	}
	clear(cands)
}

// hintEntity decides for one entity of the pool about an update of one of
// its pods (upstream's Update: isEntityWorthRequeuing with the pod's own
// events, no gating filter). mu held.
func (q *Queue) hintEntity(e *entity, ev abi.EventView, res abi.EventResource, act abi.ActionType) strategy {
	in := interestIn(q.regs, res, act)
	one := q.scr.moved[:0]
	one = append(one, e)
	cands := q.decide(ev, in, one, false, act&abi.ActionUpdatePodSchedulingGatesEliminated != 0, nil)
	clear(one)
	q.scr.moved = one[:0]
	st := skip
	if len(cands) > 0 {
		st = cands[0].st
	}
	clear(cands)
	return st
}

// replay decides where a pod that came back unschedulable goes, from the
// events recorded while it was in flight (upstream's
// determineSchedulingHintForInFlightPod): each event its rejecting plugins
// registered is asked to the QueueingHint slot, in order, until one queues
// it. A pod with no rejecting plugin (an error) and a pod whose events were
// dropped at the in-flight cap (blind) are requeued after backoff. mu held.
func (q *Queue) replay(p *Pod, events []*flightEvent, blind bool) strategy {
	if p.mask == 0 || blind {
		return afterBackoff
	}
	pending := len(p.pendingView.Bytes()) > 0
	st := skip
	unregistered := q.unregistered(p.mask) != 0
	for _, ev := range events {
		if ev.wildcard || unregistered {
			st = afterBackoff
			if !pending {
				return st
			}
			continue
		}
		if p.mask&interestIn(q.nativeRegs, ev.res, ev.act).mask != 0 {
			st = afterBackoff
			if !pending {
				return st
			}
		}
		if !interestIn(q.slotRegs, ev.res, ev.act).covers(p.mask &^ q.gatesBit &^ q.nativeMask) {
			continue
		}
		views := q.scr.one[:0]
		if pending {
			views = append(views, p.pendingView)
		}
		if len(p.plugins.Unschedulable) > 0 {
			views = append(views, p.view)
		}
		out := q.scr.oneOut[:len(views)]
		clear(out)
		q.hint.Hints(ev.record(), views, out)
		q.scr.one = [2]abi.PodView{}
		if pending && out[0] != abi.HintSkip {
			return immediately
		}
		if !pending && out[0] != abi.HintSkip || len(out) == 2 && out[1] != abi.HintSkip {
			st = afterBackoff
			if !pending {
				return st
			}
		}
	}
	return st
}

// encodeEvent encodes ev into the scratch buffer. mu held.
func (q *Queue) encodeEvent(ev *abi.Event) abi.EventView {
	q.scr.event = abi.AppendEvent(q.scr.event[:0], ev)
	v, err := abi.ReadEvent(q.scr.event)
	if err != nil {
		panic("queue: reading an event the queue encoded: " + err.Error())
	}
	return v
}

// flightEventOf copies an event for the in-flight tracker.
func (q *Queue) flightEventOf(v abi.EventView, label string, target types.UID, wildcard bool) *flightEvent {
	c, _ := abi.ReadEvent(bytes.Clone(v.Bytes()))
	return &flightEvent{view: c, bytes: len(c.Bytes()), res: v.Resource(), act: v.Action(), label: label, target: target, wildcard: wildcard}
}

// label is eventLabel, cached. mu held.
func (q *Queue) label(res abi.EventResource, act abi.ActionType) string {
	k := labelKey{res, act}
	l, ok := q.labels[k]
	if !ok {
		l = eventLabel(res, act)
		q.labels[k] = l
	}
	return l
}
