package queue

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
)

// fnode is a node of an in-flight list: a pod (pod set) or an event (ev set).
type fnode struct {
	prev, next *fnode
	list       *flist // the list holding the node; nil when in none
	pod        *Pod
	ev         *flightEvent
}

// flist is an intrusive doubly linked list of fnodes.
type flist struct {
	head, tail *fnode
}

func (l *flist) pushBack(n *fnode) {
	n.list, n.prev, n.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = n
	} else {
		l.head = n
	}
	l.tail = n
}

func (l *flist) unlink(n *fnode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	n.prev, n.next, n.list = nil, nil, nil
}

// flightEvent is a cluster event recorded while pods were in flight. Its
// record is a copy the queue owns and never changes; an event recorded
// lazily (MoveOnLazyEvent) has build instead, until a replay needs the
// record (view).
type flightEvent struct {
	node  fnode
	view  abi.EventView
	build func() abi.Event
	bytes int // what it counts against maxInFlightEventBytes, fixed when recorded
	res   abi.EventResource
	act   abi.ActionType
	label string
	// target, when set, restricts the event to one pod: an update of that
	// pod while it was in flight, or an Activate of it.
	target types.UID
	// wildcard: the event requeues its target whatever rejected it (upstream's
	// ForceActivate).
	wildcard bool
}

func (ev *flightEvent) size() int { return ev.bytes }

// lazyEventBytes is what an event recorded lazily counts against
// maxInFlightEventBytes before it is encoded, if ever: it holds the two pod
// objects the informer holds too, and its record, once built, is a few
// hundred bytes for a plain pod. The count cap (WithMaxInFlightEvents)
// binds first.
const lazyEventBytes = 4 << 10

// record is ev's record, built on the first call for an event recorded
// lazily. mu held (replays run under it; the tracker's own bookkeeping,
// under amu, reads only bytes).
func (ev *flightEvent) record() abi.EventView {
	if ev.build != nil {
		e := ev.build()
		v, err := abi.ReadEvent(abi.AppendEvent(nil, &e))
		if err != nil {
			panic("queue: reading an event the queue encoded: " + err.Error())
		}
		ev.view, ev.build = v, nil
	}
	return ev.view
}

// flight tracks the pods in flight (popped, not yet handed back) and the
// cluster events received while they are, so that a pod coming back
// unschedulable can be checked against what happened during its attempt
// (upstream's inFlightPods and inFlightEvents).
//
// Invariants, which bound its memory by construction:
//
//   - I1. Every pod in flight is in exactly one of track and blind, and no
//     other pod is in either; pods counts them.
//   - I2. track holds, in arrival order, the in-flight pods that still need
//     events and the events recorded after the first of them was popped.
//     Its head, if any, is a pod: an event that precedes every tracked pod
//     is needed by none and is dropped at once (on record, on done, on
//     overflow). So with no pod in flight track is empty.
//   - I3. An event is recorded only while track holds a pod, and only if
//     some registration of the QueueingHint slot matches it (the caller
//     checks; an event nobody registered can requeue nobody).
//   - I4. events <= maxEvents and bytes <= maxInFlightEventBytes. Recording
//     past either bound overflows instead: every event is dropped and every
//     tracked pod moves to blind. A blind pod needs no events: when it comes
//     back unschedulable it is requeued as if a hint had said Queue, the
//     safe direction (a spurious retry, never a lost wakeup).
//   - I5. A pod leaves the tracker on every path out of flight: Done,
//     AddUnschedulableIfNotPresent, Delete while in flight, a group member
//     handed back, and Close.
//
// The tracker is guarded by Queue.amu.
type flight struct {
	track     flist
	blind     flist
	pods      int
	events    int
	bytes     int
	maxEvents int
	rec       Recorder
}

// add starts tracking p, which must not be in flight.
func (f *flight) add(p *Pod) {
	p.fl = fnode{pod: p}
	f.track.pushBack(&p.fl)
	f.pods++
	f.rec.InFlightEvents(EventPodPopped, 1)
}

func (f *flight) inFlight(p *Pod) bool { return p.fl.list != nil }

// needed reports whether a new event would be recorded (I2, I3).
func (f *flight) needed() bool { return f.track.head != nil }

// record appends ev if a tracked pod needs it, overflowing past the caps.
func (f *flight) record(ev *flightEvent) bool {
	if !f.needed() {
		return false
	}
	if f.events+1 > f.maxEvents || f.bytes+ev.size() > maxInFlightEventBytes {
		f.overflow()
		return false
	}
	ev.node = fnode{ev: ev}
	f.track.pushBack(&ev.node)
	f.events++
	f.bytes += ev.size()
	f.rec.InFlightEvents(ev.label, 1)
	return true
}

// overflow drops every recorded event and moves every tracked pod to blind.
func (f *flight) overflow() {
	for n := f.track.head; n != nil; {
		next := n.next
		f.track.unlink(n)
		if n.ev != nil {
			f.dropEvent(n.ev)
		} else {
			f.blind.pushBack(n)
		}
		n = next
	}
	f.rec.InFlightOverflow()
}

func (f *flight) dropEvent(ev *flightEvent) {
	f.events--
	f.bytes -= ev.size()
	f.rec.InFlightEvents(ev.label, -1)
}

// since appends to dst the events recorded after p was popped that concern
// p; blind is true when p overflowed and its events were dropped.
func (f *flight) since(p *Pod, dst []*flightEvent) (_ []*flightEvent, blind bool) {
	if p.fl.list == &f.blind {
		return dst, true
	}
	if p.fl.list != &f.track {
		return dst, false
	}
	for n := p.fl.next; n != nil; n = n.next {
		if ev := n.ev; ev != nil && (ev.target == "" || ev.target == p.uid) {
			dst = append(dst, ev)
		}
	}
	return dst, false
}

// done stops tracking p (a no-op if p is not in flight) and drops the
// events no remaining pod needs.
func (f *flight) done(p *Pod) {
	l := p.fl.list
	if l == nil {
		return
	}
	wasHead := l == &f.track && l.head == &p.fl
	l.unlink(&p.fl)
	f.pods--
	f.rec.InFlightEvents(EventPodPopped, -1)
	if wasHead {
		for n := f.track.head; n != nil && n.ev != nil; n = f.track.head {
			f.track.unlink(n)
			f.dropEvent(n.ev)
		}
	}
}

// each calls fn for every pod in flight; fn may call done on it.
func (f *flight) each(fn func(*Pod)) {
	for _, l := range []*flist{&f.track, &f.blind} {
		for n := l.head; n != nil; {
			next := n.next
			if n.pod != nil {
				fn(n.pod)
			}
			n = next
		}
	}
}

// check verifies the invariants (for tests).
func (f *flight) check() error {
	pods, events, bytes := 0, 0, 0
	for n := f.track.head; n != nil; n = n.next {
		if n.list != &f.track {
			return fmt.Errorf("tracked node claims another list")
		}
		if n.pod != nil {
			pods++
		} else {
			events++
			bytes += n.ev.size()
		}
	}
	if h := f.track.head; h != nil && h.pod == nil {
		return fmt.Errorf("I2: the tracked list starts with an event")
	}
	for n := f.blind.head; n != nil; n = n.next {
		if n.pod == nil {
			return fmt.Errorf("I4: an event in the blind list")
		}
		pods++
	}
	switch {
	case pods != f.pods:
		return fmt.Errorf("I1: %d pods in the lists, %d counted", pods, f.pods)
	case events != f.events || bytes != f.bytes:
		return fmt.Errorf("%d events (%d bytes) in the list, %d (%d) counted", events, bytes, f.events, f.bytes)
	case f.events > f.maxEvents || f.bytes > maxInFlightEventBytes:
		return fmt.Errorf("I4: %d events, %d bytes over the caps", f.events, f.bytes)
	case f.pods == 0 && (f.events != 0 || f.track.head != nil):
		return fmt.Errorf("I2: %d events recorded with no pod in flight", f.events)
	}
	return nil
}
