package queue

import (
	"github.com/wasmsched/wasmsched/abi"
)

// Holding a preemptor while its preemption is written (upstream's
// asynchronous preemption: DefaultPreemption's PreEnqueue rejects a pod, or
// the pods of a group, while Executor.preempting holds its UID).

// Reasons a held entity reports (PodState.GateReason), as upstream's
// DefaultPreemption PreEnqueue words them.
const (
	reasonHeldPod   = "waiting for the preemption for this pod to be finished"
	reasonHeldGroup = "waiting for the preemption for this pod group to be finished"
)

// Hold keeps e, a pod or pod group just popped whose attempt started a
// preemption, out of activeQ and backoffQ until Release: the scheduling
// cycle calls it before handing e back, and the goroutine writing the
// evictions calls Release when they are written. Meanwhile the queue goes
// on handing out other entities.
//
// The hold is native, like scheduling gates: the PreEnqueue slot is not
// asked about a held entity and its record does not name the hold. Every
// move decided for it meanwhile (a QueueingHint's Queue for a cluster
// event, Activate, the unschedulable timeout) is remembered instead of
// made, and it waits in the pool as gated by abi.PluginDefaultPreemption;
// Release then makes the strongest of those moves. A held entity that no
// event moved stays in the unschedulable pool after Release, waiting for
// one, as upstream's preemptor waits for its victims' deletion.
//
// Hold is a no-op for an entity the queue no longer holds (deleted).
func (q *Queue) Hold(e Entity) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if b := q.current(e); b != nil {
		b.held, b.heldWant, b.heldEvent = true, skip, ""
	}
}

// Release ends e's hold (see Hold). With activate, e goes to activeQ
// whatever rejected it, as upstream activates a preemptor whose preemption
// failed; an entity still in flight is then requeued when it comes back.
// Without it, e goes where the moves remembered during the hold send it, or
// stays in the unschedulable pool. Release is a no-op for an entity that is
// not held or that the queue no longer holds (deleted meanwhile: its hold
// went with it).
func (q *Queue) Release(e Entity, activate bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.current(e)
	if b == nil || !b.held {
		return
	}
	want, event := b.heldWant, b.heldEvent
	b.held, b.heldWant, b.heldEvent = false, skip, ""
	if activate {
		want, event = immediately, EventForceActivate
	}
	q.amu.Lock()
	switch where := b.where; {
	case where == locInFlight:
		if activate {
			for _, p := range q.inFlightPods(b) {
				q.recordActivate(p)
			}
		}
		q.amu.Unlock()
		return
	case where == locGated && b.gating == abi.PluginDefaultPreemption:
	case activate && (where == locUnschedulable || where == locBackoff || where == locErrorBackoff):
	default:
		q.amu.Unlock()
		return
	}
	prev := q.detachLocked(b)
	q.amu.Unlock()
	if prev == locGated {
		b.gating, b.gateReason = "", ""
	}
	if activate {
		q.moveToActive(b, event, prev == locBackoff || prev == locErrorBackoff, prev)
	} else {
		q.requeue(b, want, event, prev)
	}
	q.commit()
}

// current is the queue's entity for e (a group member's is its group), nil
// if the queue no longer holds e. mu held.
func (q *Queue) current(e Entity) *entity {
	switch e := e.(type) {
	case *Pod:
		if q.pods[e.uid] != e {
			return nil
		}
		return q.entityOf(e)
	case *Group:
		if q.groups[e.key] != e {
			return nil
		}
		return &e.entity
	}
	return nil
}

// inFlightPods are the pods of b in flight: the pod, or the group's popped
// members. mu and amu held.
func (q *Queue) inFlightPods(b *entity) []*Pod {
	if b.pod != nil {
		return b.pod.self[:]
	}
	return b.group.popped
}

// holdBack keeps held e (in limbo) in the pool, remembering that it would
// have moved with strategy st because of event. mu held.
func (q *Queue) holdBack(e *entity, st strategy, event string, prev location) {
	if st >= e.heldWant {
		e.heldWant = st
		if event != "" {
			e.heldEvent = event
		}
	}
	e.gating, e.gateReason = abi.PluginDefaultPreemption, reasonHeldPod
	if e.group != nil {
		e.gateReason = reasonHeldGroup
	}
	q.stage(e, locGated, event, prev)
}
