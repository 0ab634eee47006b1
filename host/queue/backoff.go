package queue

import (
	"math"
	"time"
)

// Backoff, after upstream's backoff_queue.go: durations, KEP-5142's ordering
// windows, and the two periodic flushes.

// backoffDuration is upstream's calculateBackoffDuration: initial doubled
// per attempt after the first, capped at max, whose cap grows with the
// square root of a group's size.
func (q *Queue) backoffDuration(count, size int) time.Duration {
	if count <= 0 {
		return 0
	}
	maxB := q.maxBackoff
	if size > 1 {
		maxB = time.Duration(float64(maxB) * math.Sqrt(float64(size)))
	}
	shift := count - 1
	if shift >= 62 || q.initialBackoff > maxB>>shift {
		return maxB
	}
	return q.initialBackoff << shift
}

// align truncates t to the ordering window when popFromBackoffQ is on.
func (q *Queue) align(t time.Time) time.Time {
	if !q.popFromBackoffQ {
		return t
	}
	return t.Truncate(backoffWindow)
}

// setExpiry caches e's backoff expiry (upstream's getBackoffTime) in e and
// its record. mu held, e outside the heaps.
func (q *Queue) setExpiry(e *entity) {
	e.expiry = time.Time{}
	count := e.unschedCount
	if e.errCount > 0 {
		count = e.errCount
	}
	if q.maxBackoff > 0 && count > 0 {
		e.expiry = q.align(e.timestamp.Add(q.backoffDuration(count, e.size())))
	}
	e.patch()
}

// backingOff reports whether e's backoff is not over; with popFromBackoffQ
// on, an expiry in the current window still counts as backing off.
func (q *Queue) backingOff(e *entity) bool {
	if e.expiry.IsZero() {
		return false
	}
	return !e.expiry.Before(q.align(q.clock.Now()))
}

// flushBackoffCompleted moves the entities whose backoff is over to
// activeQ (upstream's flushBackoffQCompleted).
func (q *Queue) flushBackoffCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	moved := q.scr.moved[:0]
	for _, h := range [...]*heap{q.backoff, q.errBackoff} {
		// Scan rather than peek: the backoff-sort slot may order by
		// something other than expiry.
		start := len(moved)
		for i := range h.es {
			if e := h.es[i].e; !q.backingOff(e) {
				moved = append(moved, e)
			}
		}
		for _, e := range moved[start:] {
			h.remove(e)
		}
	}
	for _, e := range moved {
		q.countEntity(e.where, e, -1)
		e.where = locLimbo
	}
	if q.popFromBackoffQ {
		// PreEnqueue ran on the way in: straight to activeQ.
		for _, e := range moved {
			q.placeLocked(e, locActive, EventBackoffComplete, locBackoff)
		}
		q.flushIncomingLocked()
		if len(moved) > 0 {
			q.cond.Broadcast()
		}
		q.amu.Unlock()
	} else {
		q.amu.Unlock()
		for _, e := range moved {
			q.moveToActive(e, EventBackoffComplete, true, locBackoff)
		}
		q.commit()
	}
	clear(moved)
	q.scr.moved = moved[:0]
}

// flushLeftovers moves entities that have waited in the unschedulable pool
// longer than maxInUnschedulable (upstream's
// flushUnschedulableEntitiesLeftover), as a wildcard event would.
func (q *Queue) flushLeftovers() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	moved := q.scr.moved[:0]
	for _, e := range q.pool {
		last := e.timestamp
		if e.flushTime.After(last) {
			last = e.flushTime
		}
		if now.Sub(last) > q.maxInUnschedulable {
			e.flushTime = now
			moved = append(moved, e)
		}
	}
	q.amu.Lock()
	prevs := make([]location, len(moved))
	for i, e := range moved {
		prevs[i] = q.detachLocked(e)
	}
	q.amu.Unlock()
	for i, e := range moved {
		q.requeue(e, afterBackoff, EventUnschedulableTimeout, prevs[i])
	}
	q.commit()
	clear(moved)
	q.scr.moved = moved[:0]
}
