package queue

import (
	v1 "k8s.io/api/core/v1"
)

// Telling what holds a pod before the queue (WithHeldNotify): the holder is
// the gating plugin of the pod's entity while it waits as gated, and none
// once it leaves (enters activeQ or backoffQ, or waits unschedulable or for
// its PodGroup). The queue notifies a pod's changes only, never on an event
// that leaves its holder and reason as they were.

// Held is a change of what holds a pod before the queue.
type Held struct {
	// Profile is the queue's profile (WithProfile).
	Profile string
	// Pod is the queue's object of the pod.
	Pod *v1.Pod
	// Plugin holds the pod back at PreEnqueue (abi.PluginSchedulingGates,
	// a native plugin, the name the PreEnqueue slot's module gave, or
	// abi.PluginDefaultPreemption while its preemption is written), and
	// Reason is its message. Plugin "" is a release: the pod entered the
	// queue, or waits for something other than a PreEnqueue plugin.
	Plugin, Reason string
	// Gone: the queue forgot the pod (deleted, or handed back bound) after
	// it had been held; nothing is to be written for it any more.
	Gone bool
}

// heldNote is a change found under amu, delivered once amu is released.
type heldNote struct {
	p              *Pod
	plugin, reason string
}

// noteStaged finds, for a staged placement being committed, which of its
// pods change holder or reason. mu and amu held; e's pods are read under
// amu because a group placed in activeQ may be popped as soon as amu is
// released.
func (q *Queue) noteStaged(s *placement) {
	var plugin, reason string
	if s.to == locGated {
		plugin, reason = s.e.gating, s.e.gateReason
	}
	for _, p := range s.e.pods() {
		if p.heldBy != plugin || p.heldWhy != reason {
			q.heldNotes = append(q.heldNotes, heldNote{p, plugin, reason})
		}
	}
}

// deliverHeld notifies the changes noteStaged found. mu held, amu not.
func (q *Queue) deliverHeld() {
	for i, n := range q.heldNotes {
		q.noteHeld(n.p, n.plugin, n.reason)
		q.heldNotes[i] = heldNote{}
	}
	q.heldNotes = q.heldNotes[:0]
}

// noteHeld records and notifies p's holder and reason if they changed. mu
// held.
func (q *Queue) noteHeld(p *Pod, plugin, reason string) {
	if p.heldBy == plugin && p.heldWhy == reason {
		return
	}
	p.heldBy, p.heldWhy = plugin, reason
	if plugin != "" {
		p.wasHeld = true
	}
	q.onHeld(Held{Profile: q.profile, Pod: p.obj, Plugin: plugin, Reason: reason})
}

// forgetHeld notifies that p, once held, left the queue. mu held.
func (q *Queue) forgetHeld(p *Pod) {
	if q.onHeld == nil || !p.wasHeld {
		return
	}
	p.heldBy, p.heldWhy, p.wasHeld = "", "", false
	q.onHeld(Held{Profile: q.profile, Pod: p.obj, Gone: true})
}
