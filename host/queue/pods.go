package queue

import (
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
)

// Pods entering, changing and leaving the queue: the informer side.

// Add adds a new pending pod: to activeQ if PreEnqueue admits it, else to
// the unschedulable pool as gated. A member of a pod group joins its group
// entity (waiting while the group is in flight or its PodGroup is unseen).
// Adding a pod the queue already holds updates it.
//
// Upstream's event handler follows an unscheduled pod's Add with a move
// request for that event (GenericWorkload); callers do the same with
// MoveOnEvent(podview.PodEvent(abi.ActionAdd, nil, pod, ...)), which is
// what lets a gang's PreEnqueue policy see its new member.
func (q *Queue) Add(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if old := q.pods[pod.UID]; old != nil {
		q.update(old, pod)
		return
	}
	q.add(pod, EventUnscheduledPodAdd)
	q.commit()
}

func (q *Queue) add(pod *v1.Pod, event string) {
	p := newPod(pod)
	p.timestamp = q.clock.Now()
	q.pods[p.uid] = p
	if name := podview.GroupName(pod); name != "" && !q.noGroups {
		g := q.groupFor(groupKey{pod.Namespace, name})
		p.grp = g
		g.known++
		g.gen++
		q.encodePod(p, true)
		q.addMember(p, event)
		return
	}
	q.encodePod(p, true)
	p.where = locLimbo // a new pod is private to the mu holder until placed
	q.moveToActive(&p.entity, event, false, locNone)
}

// Update replaces a pod's object. A pod in a heap is re-keyed; a pod in
// the unschedulable pool is checked against the update through the
// QueueingHint slot (and, natively, the scheduling gates: a pod whose last
// gate was removed is requeued); an update of a pod in flight is recorded
// for when it comes back, and its newest object replaces the popped one
// then. An unknown unassigned pod is added.
//
// Callers skip updates of pods the scheduler has assumed (being bound), as
// upstream's handler does.
func (q *Queue) Update(oldPod, newPod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pods[newPod.UID]
	if p == nil {
		if newPod.Spec.NodeName == "" {
			q.add(newPod, EventUnscheduledPodAdd)
			q.commit()
		}
		return
	}
	q.update(p, newPod)
}

func (q *Queue) update(p *Pod, newPod *v1.Pod) {
	oldPod := p.obj
	actions := podview.PodUpdateActions(oldPod, newPod)
	e := q.entityOf(p)

	q.amu.Lock()
	switch {
	case p.where == locInFlight:
		p.latest = newPod
		if actions != 0 && q.flight.needed() && (interestIn(q.regs, abi.ResourceUnscheduledPod, actions).any || q.unregistered(q.plugins.all) != 0) {
			ev := podview.PodEvent(actions, oldPod, newPod, q.groupInfoPtr(p.grp))
			view := q.encodeEvent(&ev)
			q.flight.record(q.flightEventOf(view, q.label(ev.Resource, ev.Action), p.uid, false))
		}
		q.amu.Unlock()
		return
	case e != nil && e.where.inHeap():
		// In a heap: the record changes under amu, and the heap is fixed.
		p.obj = newPod
		if actions != 0 {
			q.encodePod(p, true)
			q.heapOf(e.where).fix(e)
		}
		q.amu.Unlock()
		return
	}
	inPool := e != nil && e.where.inPool()
	q.amu.Unlock()

	p.obj = newPod
	if actions == 0 {
		return
	}
	q.encodePod(p, true)
	if !inPool {
		return // waiting for its group (pending, incomplete): nothing to decide
	}
	ev := podview.PodEvent(actions, oldPod, newPod, q.groupInfoPtr(p.grp))
	view := q.encodeEvent(&ev)
	st := q.hintEntity(e, view, ev.Resource, ev.Action)
	if st == skip {
		return
	}
	q.amu.Lock()
	prev := q.detachLocked(e)
	q.amu.Unlock()
	q.requeue(e, st, q.label(ev.Resource, ev.Action), prev)
	q.commit()
}

// Delete removes a pod from the queue. A pod deleted while in flight is
// handed back at once: its in-flight events are released, and the
// caller's later Done or AddUnschedulableIfNotPresent is a no-op.
func (q *Queue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pods[pod.UID]
	if p == nil {
		return
	}
	delete(q.pods, p.uid)
	q.forgetHeld(p)
	g := p.grp

	q.amu.Lock()
	switch p.where {
	case locInFlight:
		q.flight.done(p)
		p.deleted = true
		p.where = locNone
	case locPending:
		g.pending = removePod(g.pending, p)
		q.count(locPending, -1)
		p.where = locNone
	case locMember:
		// Handled below, with the group out of its queue.
	default:
		if g == nil {
			q.detachLocked(&p.entity)
			p.where = locNone
		}
	}
	if g == nil {
		q.amu.Unlock()
		return
	}
	g.known--
	g.gen++
	if p.where != locMember {
		q.amu.Unlock()
		q.forgetGroupIfIdle(g)
		return
	}
	prev := q.detachLocked(&g.entity)
	g.members = removePod(g.members, p)
	p.where = locNone
	q.amu.Unlock()
	if prev == locIncomplete && len(g.members) > 0 {
		q.stage(&g.entity, locIncomplete, "", prev)
	} else {
		// As upstream's deletePodGroupMember: the group goes back where it
		// was (PreEnqueue runs again, so a gang below its minCount is
		// held), under upstream's label for it.
		q.requeueGroup(g, strategyFrom(prev), EventUnscheduledPodAdd, prev)
	}
	q.commit()
}

// Activate moves pods from the unschedulable pool or backoffQ to activeQ
// (upstream's ForceActivate). A pod in flight is requeued when it comes
// back, whatever rejected it. Members activate their whole group.
func (q *Queue) Activate(pods ...*v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, pod := range pods {
		p := q.pods[pod.UID]
		if p == nil {
			continue
		}
		e := q.entityOf(p)
		q.amu.Lock()
		if p.where == locInFlight {
			q.recordActivate(p)
			q.amu.Unlock()
			continue
		}
		if e == nil || !(e.where.inPool() || e.where == locBackoff || e.where == locErrorBackoff) {
			q.amu.Unlock()
			continue
		}
		prev := q.detachLocked(e)
		q.amu.Unlock()
		q.moveToActive(e, EventForceActivate, prev == locBackoff || prev == locErrorBackoff, prev)
	}
	q.commit()
}

// recordActivate records, for p in flight, that it was activated: it is
// requeued when it comes back, whatever rejected it. mu and amu held.
func (q *Queue) recordActivate(p *Pod) {
	if q.flight.needed() {
		ev := &flightEvent{res: abi.ResourceWildcard, act: abi.ActionAll, label: EventForceActivate,
			target: p.uid, wildcard: true}
		q.flight.record(ev)
	}
}
