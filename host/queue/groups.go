package queue

import (
	"slices"
	"time"

	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// Pod groups, after upstream v1.37's workload-aware queue
// (workload_forest.go, pod_group_member_pods.go) without composite groups
// (CompositePodGroup is alpha and off): a PodGroup is its own root, so the
// forest is a map of groups. A group's members are queued as one entity;
// members whose PodGroup is unseen wait (incomplete); members that arrive
// or fail while the group is in flight wait for it (pending).

func (q *Queue) groupFor(k groupKey) *Group {
	g := q.groups[k]
	if g == nil {
		g = newGroup(k)
		q.groups[k] = g
	}
	return g
}

// addMember puts p (new, or handed back after an attempt) into its group,
// as upstream's addPodGroupMember: it waits if the group is in flight or
// its PodGroup is unseen; it joins the queued group entity, which goes back
// where it was (PreEnqueue runs again unless it was in the pool); or it
// starts a new group entity in activeQ. mu held.
func (q *Queue) addMember(p *Pod, event string) {
	g := p.grp
	q.amu.Lock()
	switch {
	case g.where == locInFlight:
		g.pending = append(g.pending, p)
		p.where = locPending
		q.count(locPending, 1)
		q.amu.Unlock()
		return
	case g.pg == nil:
		p.where = locMember
		g.members = insertMember(g.members, p)
		if g.where == locIncomplete {
			q.count(locIncomplete, 1)
		} else {
			g.where = locIncomplete
			q.count(locIncomplete, len(g.members))
		}
		q.amu.Unlock()
		return
	}
	prev := q.detachLocked(&g.entity)
	p.where = locMember
	q.amu.Unlock()
	g.members = insertMember(g.members, p)
	if prev == locNone {
		q.startGroup(g)
		if p.unschedCount+p.errCount > 0 {
			// A member handed back failed after its group was scheduled (its
			// binding, say): the group it starts inherits the failure and
			// backs off, rather than retrying at once on every cycle.
			g.unschedCount, g.errCount = p.unschedCount, p.errCount
			g.timestamp = p.timestamp
			q.setExpiry(&g.entity)
			if q.backingOff(&g.entity) {
				q.moveToBackoff(&g.entity, event, locNone)
				return
			}
		}
		q.moveToActive(&g.entity, event, false, locNone)
		return
	}
	q.requeueGroup(g, strategyFrom(prev), event, prev)
}

// startGroup resets the queue state of a group entity built anew from its
// members (upstream's newQueuedPodGroupInfoFromRootLookup: the timestamps
// of its first pod, no attempts). mu held, g outside the heaps.
func (q *Queue) startGroup(g *Group) {
	first := g.members[0]
	for _, p := range g.members[1:] {
		if p.timestamp.Before(first.timestamp) {
			first = p
		}
	}
	g.timestamp, g.initialAttempt = first.timestamp, first.initialAttempt
	g.flushTime, g.expiry = time.Time{}, time.Time{}
	g.attempts, g.unschedCount, g.errCount = 0, 0, 0
	g.gating, g.gateReason = "", ""
	g.rejected = rejectors{}
	g.recGen = ^g.gen // re-encode the group record with the new state
}

func insertMember(ms []*Pod, p *Pod) []*Pod {
	i, _ := slices.BinarySearchFunc(ms, p, memberOrder)
	return slices.Insert(ms, i, p)
}

// requeueGroup sends g (in limbo, its members changed) back with strategy
// st; a group left without members leaves the queue. mu held.
func (q *Queue) requeueGroup(g *Group, st strategy, event string, prev location) {
	if len(g.members) == 0 {
		q.setLocation(&g.entity, locNone)
		q.forgetGroupIfIdle(g)
		return
	}
	q.requeue(&g.entity, st, event, prev)
}

// forgetGroupIfIdle drops a group the queue no longer needs: no PodGroup
// object, no known pod. mu held.
func (q *Queue) forgetGroupIfIdle(g *Group) {
	q.amu.Lock()
	idle := g.pg == nil && g.known <= 0 && len(g.members) == 0 && len(g.pending) == 0 &&
		len(g.popped) == 0 && g.where != locInFlight
	q.amu.Unlock()
	if idle && q.groups[g.key] == g {
		delete(q.groups, g.key)
	}
}

// AddPodGroup records a PodGroup object. Members that waited for it
// (incomplete) are queued as one group entity, to activeQ if PreEnqueue
// admits them. As upstream, the caller follows with a move request for the
// event (MoveOnEvent(podview.PodGroupEvent(abi.ActionAdd, ...))).
func (q *Queue) AddPodGroup(pg *schedv1beta1.PodGroup) {
	q.setPodGroup(pg)
}

// UpdatePodGroup records a new revision of a PodGroup object; a queued
// group's records are refreshed in place (no PreEnqueue). The caller
// follows with MoveOnEvent for the update event.
func (q *Queue) UpdatePodGroup(pg *schedv1beta1.PodGroup) {
	q.setPodGroup(pg)
}

func (q *Queue) setPodGroup(pg *schedv1beta1.PodGroup) {
	q.mu.Lock()
	defer q.mu.Unlock()
	g := q.groupFor(groupKey{pg.Namespace, pg.Name})
	q.amu.Lock()
	g.pg = pg
	g.gen++
	prev := g.where
	switch {
	case prev == locIncomplete:
		q.detachLocked(&g.entity)
	case prev.inHeap() || prev.inPool():
		q.detachLocked(&g.entity)
	}
	q.amu.Unlock()
	switch {
	case prev == locIncomplete:
		q.startGroup(g)
		q.moveToActive(&g.entity, EventUnscheduledPodAdd, false, locNone)
	case prev.inHeap() || prev.inPool():
		q.refreshGroup(g)
		q.stage(&g.entity, prev, "", prev)
	}
	q.commit()
}

// DeletePodGroup forgets a PodGroup object: a queued group leaves the
// queues and its members wait for the object again (incomplete), as
// upstream.
func (q *Queue) DeletePodGroup(pg *schedv1beta1.PodGroup) {
	q.mu.Lock()
	defer q.mu.Unlock()
	g := q.groups[groupKey{pg.Namespace, pg.Name}]
	if g == nil {
		return
	}
	q.amu.Lock()
	g.pg = nil
	g.gen++
	prev := g.where
	if prev.inHeap() || prev.inPool() {
		q.detachLocked(&g.entity)
	}
	q.amu.Unlock()
	switch {
	case prev.inHeap() || prev.inPool():
		q.stage(&g.entity, locIncomplete, "", prev)
		q.commit()
	case prev == locNone:
		q.forgetGroupIfIdle(g)
	}
}
