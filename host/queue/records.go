package queue

import (
	"slices"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
)

// Records: the encoded pod and group records the policy slots read. A pod is
// encoded when its object or its rejecting plugins change; its queue state is
// patched in place (abi.SetPodQueueState) when only that changes.

func readOwn(b []byte) abi.PodView {
	v, err := abi.ReadPod(b)
	if err != nil {
		panic("queue: reading a record the queue encoded: " + err.Error())
	}
	return v
}

// encodePod encodes p's record (and its pending-only variant). With
// objChanged (or on the first call) the record is derived from the object
// again (podview.Pod); otherwise only the rejecting plugins, the group
// fields and the queue state are refreshed in p.src, which saves computing
// the effective requests again on every failed attempt. A new buffer each
// time, so that a view handed out earlier stays valid. mu held (and amu
// when p is in a heap).
func (q *Queue) encodePod(p *Pod, objChanged bool) {
	gi := q.groupInfoPtr(p.grp)
	if p.grp != nil {
		p.groupGen = p.grp.gen
	}
	if objChanged || p.src.UID == "" {
		p.src = podview.Pod(p.obj, gi, p.queueState(), podview.Plugins(p.plugins))
		p.src.AddedAffinity, p.src.HasAddedAffinity = q.added, q.hasAdded
	} else {
		// p.plugins are sorted sets that are replaced, never changed in
		// place, so the record source may share them.
		p.src.UnschedulablePlugins, p.src.PendingPlugins = p.plugins.Unschedulable, p.plugins.Pending
		if gi != nil {
			p.src.Group = gi.Ref(p.src.Group.Name)
		}
		p.src.SetQueueState(p.queueState())
	}
	if q.noGroups {
		p.src.Group = abi.PodGroupRef{}
	}
	p.view = readOwn(abi.AppendPod(nil, &p.src))
	p.pendingView = abi.PodView{}
	if len(p.src.PendingPlugins) > 0 {
		only := p.src
		only.UnschedulablePlugins = nil
		p.pendingView = readOwn(abi.AppendPod(nil, &only))
	}
	p.mask = q.plugins.mask(p.plugins)
	p.hasGates = len(p.src.SchedulingGates) > 0
}

func (q *Queue) refreshPod(p *Pod) {
	if p.grp != nil && p.groupGen != p.grp.gen {
		q.encodePod(p, false)
	}
}

func (q *Queue) groupInfoPtr(g *Group) *podview.GroupInfo {
	if g == nil {
		return nil
	}
	gi := q.groupInfo(g)
	return &gi
}

func (q *Queue) groupInfo(g *Group) podview.GroupInfo {
	members := g.known
	if q.groupMembers != nil {
		if n, ok := q.groupMembers(g.key.namespace, g.key.name); ok {
			members = n
		}
	}
	return podview.Group(g.pg, members)
}

// refreshGroup re-encodes the group record and the member records encoded
// before the group last changed. mu held, g outside the heaps.
func (q *Queue) refreshGroup(g *Group) {
	if g.recGen != g.gen {
		info := q.groupInfo(g)
		rec := abi.Pod{
			Namespace: g.key.namespace,
			Name:      g.key.name,
			Group:     info.Ref(g.key.name),
		}
		if pg := g.pg; pg != nil {
			pr := podview.PodGroup(pg, info.Members)
			rec.UID = string(pg.UID)
			rec.Priority = pr.Priority
			rec.PreemptNever = pr.PreemptNever
			rec.CreationTime = nanos(pg.CreationTimestamp.Time)
		}
		rec.UnschedulablePlugins, rec.PendingPlugins = g.rejected.Unschedulable, g.rejected.Pending
		rec.SetQueueState(g.queueState())
		g.view = readOwn(abi.AppendPod(nil, &rec))
		g.recGen = g.gen
	}
	for _, p := range g.members {
		q.refreshPod(p)
	}
}

func normalise(pl podview.Plugins) rejectors {
	return rejectors(pl.Normalized())
}

func removePod(ps []*Pod, p *Pod) []*Pod {
	if i := slices.Index(ps, p); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}
