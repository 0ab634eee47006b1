package queue

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue closed")

// Queue is the scheduling queue. Build it with New; it is safe for
// concurrent use.
type Queue struct {
	// Set by New, then read-only.
	clock              clock.WithTicker
	initialBackoff     time.Duration
	maxBackoff         time.Duration
	maxInUnschedulable time.Duration
	popFromBackoffQ    bool
	groupMembers       func(namespace, name string) (int32, bool)
	noGroups           bool
	rec                Recorder
	profile            string
	log                *slog.Logger
	stop               chan struct{} // closed by Close
	closeOnce          sync.Once

	// mu serialises every operation but Pop: it guards the pod and group
	// indexes, the unschedulable pool, the PreEnqueue and QueueingHint slots
	// and their scratch state, and the fields of entities that are not in a
	// heap or in flight (see entity). Lock order: mu, then amu. Slow work
	// (PreEnqueue and QueueingHint calls, encoding records) runs under mu
	// alone, on entities outside the heaps, so Pop does not wait for it.
	mu         sync.Mutex
	pods       map[types.UID]*Pod
	groups     map[groupKey]*Group
	pool       []*entity // unschedulable and gated entities; entity.upos indexes it
	preEnqueue policy.PreEnqueue
	// native is the profile's native PreEnqueue plugins
	// (SetNativePreEnqueue), asked before the slot; nil: none.
	native func(*v1.Pod) abi.Gate
	// added, hasAdded: the profile's NodeAffinity addedAffinity
	// (SetAddedAffinity), which every pod record carries.
	added    []abi.NodeSelectorTerm
	hasAdded bool
	hint     policy.QueueingHint
	// regs are slotRegs (the QueueingHint slot's) and nativeRegs (the
	// events of plugins whose hint the host answers itself, Queue:
	// SetPluginEvents) together; nativeMask has those plugins' bits.
	regs       []registration
	slotRegs   []registration
	nativeRegs []registration
	nativeMask uint64
	// regBits has the bit of every plugin some registration names;
	// slotWildcard: the slot registered an event for every plugin
	// (abi.PluginWildcard). See unregistered.
	regBits      uint64
	slotWildcard bool
	plugins      pluginIndex
	gatesBit     uint64 // abi.PluginSchedulingGates's bit in plugins
	labels       map[labelKey]string
	staged       []placement // placements made under mu, applied by commit under amu
	scr          scratch
	// onHeld is told of every change of a pod's holder (WithHeldNotify),
	// nil: nobody asked; heldNotes are the changes commit found under amu.
	onHeld    func(Held)
	heldNotes []heldNote

	// amu guards activeQ, both backoff heaps and their sort slots, the
	// in-flight tracker, the pending counts and closed;
	// every entity's location and heap position; and the other fields of
	// entities in a heap or in flight. Pop takes only amu. Never take mu
	// while holding amu.
	amu sync.Mutex
	// cond (on amu) is broadcast whenever activeQ gains an entity, the
	// unschedulable-backoff heap gains one while popFromBackoffQ is on (so
	// a Pop waiting on an empty activeQ can take it: the lost wakeup of
	// kubernetes PR #139884 cannot happen, since both heaps change only
	// under amu), on Close, and when a Pop's context ends.
	cond        sync.Cond
	active      *heap
	backoff     *heap // after an unschedulable attempt: backoff sort, ties by queue sort
	errBackoff  *heap // after an error: expiry order
	sort        policy.Sort
	backoffSort policy.BackoffSort
	flight      flight
	counts      [numLocations]int // pods per location
	closed      bool
	waiting     int        // Pops blocked on cond (for tests)
	incoming    []incoming // IncomingPods calls aggregated by commit
	obs         Observer   // set by SetObserver; noObserver by default
}

// placement is a move decided under mu, applied under amu.
type placement struct {
	e     *entity
	to    location
	event string
	prev  location
}

type incoming struct {
	queue, event string
	n            int
}

// scratch holds buffers reused across events (guarded by mu).
type scratch struct {
	event  []byte
	views  []abi.PodView
	refs   []hintRef
	hints  []abi.Hint
	cands  []candidate
	events []*flightEvent
	one    [2]abi.PodView
	oneOut [2]abi.Hint
	moved  []*entity
	ahead  []abi.PodView // Observer.Popped's sample (guarded by amu)
}

// New returns a queue with the given options (a nil slot, clock or
// recorder keeps the default); call Run once to start its flushes.
func New(opts ...Option) *Queue {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	d := defaultOptions()
	if o.rec == nil {
		o.rec = d.rec
	}
	if o.clock == nil {
		o.clock = d.clock
	}
	if o.sort == nil {
		o.sort = d.sort
	}
	if o.backoffSort == nil {
		o.backoffSort = d.backoffSort
	}
	if o.preEnqueue == nil {
		o.preEnqueue = d.preEnqueue
	}
	if o.hint == nil {
		o.hint = d.hint
	}
	if o.log == nil {
		o.log = d.log
	}
	if o.maxInFlightEvents < 0 {
		o.maxInFlightEvents = 0
	}
	q := &Queue{
		clock:              o.clock,
		initialBackoff:     o.initialBackoff,
		maxBackoff:         o.maxBackoff,
		maxInUnschedulable: o.maxInUnschedulable,
		popFromBackoffQ:    o.popFromBackoffQ,
		groupMembers:       o.groupMembers,
		noGroups:           o.noGroups,
		rec:                o.rec,
		profile:            o.profile,
		log:                o.log,
		stop:               make(chan struct{}),
		pods:               map[types.UID]*Pod{},
		groups:             map[groupKey]*Group{},
		preEnqueue:         o.preEnqueue,
		onHeld:             o.onHeld,
		labels:             map[labelKey]string{},
		sort:               o.sort,
		backoffSort:        o.backoffSort,
		flight:             flight{maxEvents: o.maxInFlightEvents, rec: o.rec},
		obs:                noObserver{},
	}
	q.cond.L = &q.amu
	q.gatesBit = q.plugins.bit(abi.PluginSchedulingGates)
	q.active = newHeap(o.sort, nil)
	q.backoff = newHeap(o.backoffSort, o.sort)
	q.errBackoff = newHeap(policy.BackoffExpiry{}, nil)
	q.setHint(o.hint)
	return q
}

// Run flushes completed backoffs to activeQ on every second (aligned to
// whole seconds when popFromBackoffQ is on, as upstream) and moves
// unschedulable leftovers every 30 seconds, until ctx is done or the queue
// is closed.
func (q *Queue) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); q.backoffLoop(ctx) }()
	go func() { defer wg.Done(); q.leftoverLoop(ctx) }()
	wg.Wait()
}

func (q *Queue) backoffLoop(ctx context.Context) {
	now := q.clock.Now()
	t := q.clock.NewTimer(q.align(now.Add(backoffWindow)).Sub(now))
	select {
	case <-ctx.Done():
		t.Stop()
		return
	case <-q.stop:
		t.Stop()
		return
	case <-t.C():
	}
	tick := q.clock.NewTicker(backoffWindow)
	defer tick.Stop()
	for {
		q.flushBackoffCompleted()
		select {
		case <-ctx.Done():
			return
		case <-q.stop:
			return
		case <-tick.C():
		}
	}
}

func (q *Queue) leftoverLoop(ctx context.Context) {
	tick := q.clock.NewTicker(leftoverFlushPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.stop:
			return
		case <-tick.C():
		}
		q.flushLeftovers()
	}
}

// Close unblocks Pop (which then returns ErrClosed), ends Run, and hands
// back every pod in flight: calling Done or AddUnschedulableIfNotPresent
// for them afterwards is a no-op.
func (q *Queue) Close() {
	q.closeOnce.Do(func() { close(q.stop) })
	q.amu.Lock()
	defer q.amu.Unlock()
	q.closed = true
	q.flight.each(func(p *Pod) { q.flight.done(p) })
	q.cond.Broadcast()
}

// Pop takes the head of activeQ, blocking until there is one. When activeQ
// is empty and popFromBackoffQ is on, it takes the head of the heap of
// entities backing off after an unschedulable attempt instead, unless the
// backoff-sort slot's MayPop vetoes it (never an entity backing off after
// an error). It returns ErrClosed once the queue is closed and ctx's error
// when ctx ends.
//
// The popped entity is in flight until handed back: Done for a pod that
// was bound (or dropped), AddUnschedulableIfNotPresent for one that failed;
// for a group, each member so, then AddAttemptedGroupIfNeeded.
func (q *Queue) Pop(ctx context.Context) (Entity, error) {
	if ctx.Done() != nil {
		defer context.AfterFunc(ctx, q.wake)()
	}
	q.amu.Lock()
	defer q.amu.Unlock()
	for {
		if q.closed {
			return nil, ErrClosed
		}
		if e := q.active.pop(); e != nil {
			q.observePop(QueueActive, q.active, e)
			return q.popLocked(e, locActive, false), nil
		}
		if q.popFromBackoffQ {
			if e := q.backoff.peek(); e != nil && q.backoffSort.MayPop(e.view) {
				q.backoff.pop()
				q.observePop(QueueBackoff, q.backoff, e)
				return q.popLocked(e, locBackoff, true), nil
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.waiting++
		q.cond.Wait()
		q.waiting--
	}
}

func (q *Queue) wake() {
	q.amu.Lock()
	q.cond.Broadcast()
	q.amu.Unlock()
}

// popLocked moves e, just taken out of heap from, in flight.
func (q *Queue) popLocked(e *entity, from location, fromBackoff bool) Entity {
	n := e.size()
	q.countEntity(from, e, -1)
	if fromBackoff {
		q.addIncoming(QueueActive, EventPopFromBackoffQ, n)
		q.flushIncomingLocked()
	}
	e.where = locInFlight
	e.attempts++
	e.patch()
	flushed := e.flushed
	e.flushed = false
	if p := e.pod; p != nil {
		p.rescue = flushed
		q.flight.add(p)
		q.obs.Attempting(p.uid)
		return p
	}
	g := e.group
	g.popped, g.members = g.members, nil
	g.poppedPG = g.pg
	for _, p := range g.popped {
		p.rescue = flushed
		p.where = locInFlight
		p.attempts++
		p.patch()
		q.flight.add(p)
		q.obs.Attempting(p.uid)
	}
	return g
}

// Done hands back a popped pod that needs no requeue: bound, or dropped
// by the caller. The queue forgets it. Done is a no-op for a pod that is
// not in flight. A pod that was bound is handed back with Scheduled.
func (q *Queue) Done(uid types.UID) { q.done(uid, false) }

// Scheduled is Done for a pod whose attempt succeeded (it was bound). A pod
// that the unschedulable-leftover flush moved, rather than an event, to
// the attempt that scheduled it is a wake-up no event or hint delivered:
// it is counted (Recorder.FlushRescue, once per plugin that had rejected
// it) and logged.
func (q *Queue) Scheduled(uid types.UID) { q.done(uid, true) }

func (q *Queue) done(uid types.UID, scheduled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pods[uid]
	if p == nil {
		return
	}
	q.amu.Lock()
	if p.where != locInFlight {
		q.amu.Unlock()
		return
	}
	q.flight.done(p)
	p.where = locNone
	delete(q.pods, uid)
	rescued := scheduled && p.rescue
	p.rescue = false
	if scheduled {
		q.obs.Scheduled(uid)
	}
	q.amu.Unlock()
	q.forgetHeld(p)
	if rescued {
		q.flushRescued(p)
	}
	if g := p.grp; g != nil {
		g.known--
		g.gen++
		q.forgetGroupIfIdle(g)
	}
}

// SetSort swaps the queue-sort slot and re-sorts activeQ (and the ties of
// the backoff heap) at once: no Pop sees a half-sorted heap.
func (q *Queue) SetSort(s policy.Sort) {
	q.amu.Lock()
	defer q.amu.Unlock()
	q.sort = s
	q.active.setSorts(s, nil)
	q.backoff.setSorts(q.backoffSort, s)
}

// SetBackoffSort swaps the backoff-sort slot and re-sorts the backoff heap
// at once.
func (q *Queue) SetBackoffSort(s policy.BackoffSort) {
	q.amu.Lock()
	defer q.amu.Unlock()
	q.backoffSort = s
	q.backoff.setSorts(s, q.sort)
}

// SetPreEnqueue swaps the PreEnqueue slot; it applies from the next entity
// that enters activeQ or backoffQ.
func (q *Queue) SetPreEnqueue(p policy.PreEnqueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.preEnqueue = p
}

// SetNativePreEnqueue installs the profile's native PreEnqueue plugins
// (DynamicResources' wait for a pod's claims): asked for every pod that has
// no scheduling gates, before the PreEnqueue slot, like the gates, so that
// swapping the slot's module cannot drop them. f returns abi.GateWait with
// the plugin and its reason to hold the pod back. It applies from the next
// entity that enters activeQ or backoffQ.
func (q *Queue) SetNativePreEnqueue(f func(*v1.Pod) abi.Gate) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.native = f
}

// SetAddedAffinity records the required addedAffinity of the profile's
// NodeAffinity plugin (nil: none), which every pod record of the queue
// carries (abi.Pod.AddedAffinity) so that the QueueingHint slot can tell the
// nodes the profile excludes. Call it before the queue receives pods: the
// records encoded earlier keep what they had.
func (q *Queue) SetAddedAffinity(ns *v1.NodeSelector) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added, q.hasAdded = podview.NodeSelectorTerms(ns), ns != nil
}

// SetQueueingHint swaps the QueueingHint slot and its registrations; it
// applies from the next event.
func (q *Queue) SetQueueingHint(h policy.QueueingHint) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.setHint(h)
}

func (q *Queue) setHint(h policy.QueueingHint) {
	q.hint = h
	q.slotRegs = q.slotRegs[:0]
	for _, r := range h.Registrations() {
		reg := registration{res: r.Resource, act: r.Actions}
		if r.Plugin == abi.PluginWildcard {
			reg.wildcard = true
		} else {
			reg.bit = q.plugins.bit(r.Plugin)
		}
		q.slotRegs = append(q.slotRegs, reg)
	}
	q.regsChanged()
}

// SetPluginEvents makes the queue answer plugin's QueueingHint itself:
// a pod plugin rejected moves (after its backoff) on any of events, without
// asking the QueueingHint slot, which knows nothing of the plugin. It
// replaces the plugin's earlier events; none leaves its pods to the slot
// again. The Wasm filter's rejections are requeued this way, on the events
// its module declares (abi.PlacementOptions.FilterEvents).
func (q *Queue) SetPluginEvents(plugin string, events []abi.FilterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	bit := q.plugins.bit(plugin)
	q.nativeRegs = slices.DeleteFunc(q.nativeRegs, func(r registration) bool { return r.bit == bit })
	q.nativeMask &^= bit
	for _, e := range events {
		q.nativeRegs = append(q.nativeRegs, registration{res: e.Resource, act: e.Actions, bit: bit})
		q.nativeMask |= bit
	}
	q.regsChanged()
}

// regsChanged rebuilds regs and regBits after slotRegs or nativeRegs
// changed. mu held.
func (q *Queue) regsChanged() {
	q.regs = append(append(q.regs[:0], q.slotRegs...), q.nativeRegs...)
	q.regBits, q.slotWildcard = 0, false
	for _, r := range q.regs {
		q.regBits |= r.bit
		q.slotWildcard = q.slotWildcard || r.wildcard
	}
}

// unregistered is the part of mask (a pod's rejecting or gating plugins)
// that no registration names: plugins nobody said which events concern,
// such as a PreEnqueue module the QueueingHint slot does not know or a
// filter plugin a custom hints module leaves out. As upstream does for a
// plugin without EnqueueExtensions, every event may concern them, and the
// queue answers Queue for them itself: without it their pods would wait
// for the periodic flush, a missed wake-up. SchedulingGates (native, one
// event), the shared bit of names past the 63rd (a candidate for any
// registered event already) and a slot that registered events for every
// plugin leave nothing unregistered. mu held.
func (q *Queue) unregistered(mask uint64) uint64 {
	if q.slotWildcard {
		return 0
	}
	return mask &^ q.regBits &^ q.gatesBit &^ otherPlugins
}

// MovePlugin moves every pod of the unschedulable pool that plugin
// rejected to backoffQ (activeQ once its backoff is over), as an event its
// hint answers with Queue: what changed is the plugin itself (a swap of the
// Wasm filter's module), which no cluster event describes. It returns how
// many entities moved.
func (q *Queue) MovePlugin(plugin, label string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	bit := q.plugins.bit(plugin)
	var cands []candidate
	for _, e := range q.pool {
		if e.gating != "" {
			continue
		}
		if slices.ContainsFunc(e.pods(), func(p *Pod) bool { return p.mask&bit != 0 }) {
			cands = append(cands, candidate{e: e, st: afterBackoff})
		}
	}
	n := len(cands)
	q.moveCandidates(cands, label)
	// A pod in flight that the plugin rejects after the change must not
	// sleep through it: the change is recorded as a wildcard event, which
	// requeues it after backoff.
	q.amu.Lock()
	if q.flight.needed() {
		view := q.encodeEvent(&abi.Event{Resource: abi.ResourceWildcard, Action: abi.ActionAll})
		q.flight.record(q.flightEventOf(view, label, "", true))
	}
	q.amu.Unlock()
	q.commit()
	return n
}

// Stats counts the pods in each queue and what is in flight.
type Stats struct {
	Active, Backoff, Unschedulable, Gated, Pending, Incomplete int
	// InFlightPods are popped and not handed back; InFlightEvents are the
	// cluster events kept for them.
	InFlightPods, InFlightEvents int
}

// Stats returns the current counts.
func (q *Queue) Stats() Stats {
	q.amu.Lock()
	defer q.amu.Unlock()
	c := &q.counts
	return Stats{
		Active: c[locActive], Backoff: c[locBackoff] + c[locErrorBackoff],
		Unschedulable: c[locUnschedulable], Gated: c[locGated],
		Pending: c[locPending], Incomplete: c[locIncomplete],
		InFlightPods: q.flight.pods, InFlightEvents: q.flight.events,
	}
}

// InFlight is PodState.Queue for a pod popped and not yet handed back.
const InFlight = "inFlight"

// PodState is where the queue holds a pod.
type PodState struct {
	// Queue is one of the Queue* names, or InFlight.
	Queue string
	// Attempts is how many times the pod has been popped.
	Attempts int
	// GatingPlugin and GateReason say what holds a gated pod (for a group
	// member: what holds its group).
	GatingPlugin, GateReason string
}

// PodState reports where the queue holds the pod with uid; false if it does
// not hold it.
func (q *Queue) PodState(uid types.UID) (PodState, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pods[uid]
	if p == nil {
		return PodState{}, false
	}
	q.amu.Lock()
	defer q.amu.Unlock()
	s := PodState{Attempts: p.attempts}
	e, l := &p.entity, p.where
	if l == locMember {
		e = &p.grp.entity
		l = e.where
	}
	switch l {
	case locInFlight:
		s.Queue = InFlight
	default:
		s.Queue = l.label()
	}
	if l == locGated {
		s.GatingPlugin, s.GateReason = e.gating, e.gateReason
	}
	return s, true
}
