package queue

import (
	"cmp"
	"time"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
)

// location is where an entity (or a pod group member) is.
type location uint8

const (
	// locNone: not queued. A new or forgotten pod; a group with no queued
	// members.
	locNone location = iota
	locActive
	// locBackoff: the heap of entities backing off after an unschedulable
	// attempt (backoff-sort slot, popped early when activeQ is empty).
	locBackoff
	// locErrorBackoff: the heap of entities backing off after an error
	// (expiry order, never popped early).
	locErrorBackoff
	locUnschedulable
	locGated
	locInFlight
	// locMember: a pod queued inside its group entity (the group's location
	// says where).
	locMember
	// locPending: a member that arrived, or came back from an attempt, while
	// its group is in flight.
	locPending
	// locIncomplete: a group whose PodGroup object the queue has not seen;
	// its members wait.
	locIncomplete
	// locLimbo: being moved by an operation that holds Queue.mu; in no
	// queue, so Pop cannot see it.
	locLimbo
	numLocations
)

// label is the queue label of pods in l, "" for places that are not a queue.
func (l location) label() string {
	switch l {
	case locActive:
		return QueueActive
	case locBackoff, locErrorBackoff:
		return QueueBackoff
	case locUnschedulable:
		return QueueUnschedulable
	case locGated:
		return QueueGated
	case locPending:
		return QueuePending
	case locIncomplete:
		return QueueIncomplete
	}
	return ""
}

// entityLabel is the queue label of entities in l
// (scheduler_queued_entities), "" where upstream counts none.
func (l location) entityLabel() string {
	switch l {
	case locActive, locBackoff, locErrorBackoff, locUnschedulable, locGated:
		return l.label()
	}
	return ""
}

func (l location) inHeap() bool { return l == locActive || l == locBackoff || l == locErrorBackoff }

func (l location) inPool() bool { return l == locUnschedulable || l == locGated }

var locationNames = [numLocations]string{"none", "active", "backoff", "errorBackoff", "unschedulable", "gated",
	"inFlight", "member", "pending", "incomplete", "limbo"}

func (l location) String() string {
	if l < numLocations {
		return locationNames[l]
	}
	return "location?"
}

// strategy is what a requeue decision says (upstream's queueingStrategy),
// ordered so that a larger value wins.
type strategy uint8

const (
	// skip: stay in the unschedulable pool.
	skip strategy = iota
	// afterBackoff: to backoffQ if the backoff is not over, else activeQ.
	afterBackoff
	// immediately: to activeQ, skipping backoff (a Pending plugin's Queue).
	immediately
)

// strategyFrom is the strategy that puts an entity back where it was found
// (upstream's deleteFromAnyQueue).
func strategyFrom(l location) strategy {
	switch l {
	case locActive:
		return immediately
	case locBackoff, locErrorBackoff:
		return afterBackoff
	}
	return skip
}

// entity is what the heaps and the unschedulable pool hold: a pod queued
// alone or a pod group. Its fields are guarded as documented on Queue.mu and
// Queue.amu: where and hidx by amu (a new entity, private to the mu holder,
// until it is first placed); upos by mu; the rest by amu while where is a
// heap or in flight, by mu otherwise. Moving an entity between the two
// domains takes both locks.
type entity struct {
	hidx  int // position in the heap holding it; -1 in none
	upos  int // position in the unschedulable pool; -1 outside
	where location

	// view is the record the sort and backoff-sort slots read: the pod's
	// record, or the group's record (see Group). Its queue state is patched
	// in place with abi.SetPodQueueState.
	view abi.PodView

	timestamp      time.Time // added, or handed back after an attempt
	initialAttempt time.Time // first entered activeQ
	flushTime      time.Time // last moved by the unschedulable-leftover flush
	expiry         time.Time // backoff expiry (window-aligned), cached; zero: none
	attempts       int       // times popped
	unschedCount   int       // attempts rejected by a plugin
	errCount       int       // consecutive attempts that failed with an error
	gating         string    // plugin that holds the entity at PreEnqueue
	gateReason     string
	// flushed: the entity last left the unschedulable pool by the leftover
	// flush, not by an event, and has not been popped since (Pop hands it
	// to its pods' rescue).
	flushed bool

	// held: a preemption the entity started is being written (Hold).
	// heldWant and heldEvent are the strongest move decided for it
	// meanwhile and its event label, made on Release. Guarded by mu
	// wherever the entity is.
	held      bool
	heldWant  strategy
	heldEvent string

	pod   *Pod   // set when the entity is a pod queued alone
	group *Group // set when the entity is a pod group
}

func (e *entity) init() { e.hidx, e.upos = -1, -1 }

// pods are the pods the entity schedules: the pod itself, or the group's
// queued members.
func (e *entity) pods() []*Pod {
	if e.pod != nil {
		return e.pod.self[:]
	}
	return e.group.members
}

func (e *entity) size() int { return len(e.pods()) }

// failedWithError reports whether the last attempt failed with an error
// (no rejecting plugin): such an entity backs off in the error heap.
func (e *entity) failedWithError() bool {
	if e.pod != nil {
		return e.pod.plugins.empty()
	}
	return e.group.rejected.empty()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func (e *entity) queueState() abi.PodQueueState {
	return abi.PodQueueState{
		QueuedTime:         nanos(e.timestamp),
		InitialAttemptTime: nanos(e.initialAttempt),
		BackoffExpiry:      nanos(e.expiry),
		Attempts:           int32(min(e.attempts, 1<<31-1)),
		LastFailureError:   e.errCount > 0,
	}
}

// patch writes the queue state into the entity's records. Records are the
// queue's own, so patching cannot fail.
func (e *entity) patch() {
	qs := e.queueState()
	setQueueState(e.view, qs)
	if e.pod != nil {
		setQueueState(e.pod.pendingView, qs)
	}
}

func setQueueState(v abi.PodView, qs abi.PodQueueState) {
	if b := v.Bytes(); len(b) > 0 {
		if err := abi.SetPodQueueState(b, qs); err != nil {
			panic("queue: patching a record the queue encoded: " + err.Error())
		}
	}
}

// rejectors are the plugins that rejected a pod in its last attempt, with
// the plugin that gated it at PreEnqueue (as upstream adds it).
type rejectors podview.Plugins

func (r rejectors) empty() bool { return len(r.Unschedulable) == 0 && len(r.Pending) == 0 }

// Entity is what Pop hands out: a *Pod scheduled alone, or a *Group whose
// members are scheduled together in one pod-group cycle.
type Entity interface {
	// Attempts is how many times the entity has been popped, this time
	// included.
	Attempts() int
	// Timestamp is when the entity was added, or last handed back after an
	// attempt.
	Timestamp() time.Time
	// View is the entity's record (for a group, the group record).
	View() abi.PodView
	base() *entity
}

var (
	_ Entity = (*Pod)(nil)
	_ Entity = (*Group)(nil)
)

// Pod is a pending pod. Pop hands it out alone, or as a member of a Group;
// it stays valid for reading until it is handed back (Done,
// AddUnschedulableIfNotPresent), after which the queue may change it.
type Pod struct {
	entity // the pod's own queue state; a heap/pool entity only when queued alone
	self   [1]*Pod

	uid types.UID
	obj *v1.Pod

	plugins rejectors
	// mask has one bit per rejecting plugin (see pluginIndex).
	mask uint64
	// pendingView is the pod's record with only its pending plugins, for
	// asking the QueueingHint slot whether a Pending plugin queues the pod
	// (then it skips backoff); zero when the pod has no pending plugins.
	pendingView abi.PodView
	hasGates    bool // spec.schedulingGates is not empty (as last encoded)

	grp      *Group // the pod's group; nil when it has none
	groupGen uint64 // grp.gen the record was encoded with

	fl      fnode // in-flight list node
	deleted bool  // deleted while in flight
	// rescue: the attempt in flight was brought by the leftover flush
	// (entity.flushed at Pop); Scheduled counts it.
	rescue bool
	// latest is the newest object received (Update) while the pod was in
	// flight; it replaces obj when the pod is handed back.
	latest *v1.Pod
	// heldBy and heldWhy are the holder and reason last notified
	// (WithHeldNotify); wasHeld: some holder was, so leaving the queue is
	// notified too. Guarded by mu.
	heldBy, heldWhy string
	wasHeld         bool

	// src is what the record was encoded from; a change of plugins, group
	// or queue state re-encodes it without deriving it from obj again. Last,
	// to keep the fields read on every event together.
	src abi.Pod
}

func newPod(obj *v1.Pod) *Pod {
	p := &Pod{uid: obj.UID, obj: obj}
	p.init()
	p.self[0] = p
	p.pod = p
	return p
}

func (p *Pod) base() *entity { return &p.entity }

// Object is the pod object the queue holds.
func (p *Pod) Object() *v1.Pod { return p.obj }

// UID of the pod.
func (p *Pod) UID() types.UID { return p.uid }

// View is the pod's record, as the policy slots see it.
func (p *Pod) View() abi.PodView { return p.view }

// Attempts is how many times the pod has been popped, this time included.
func (p *Pod) Attempts() int { return p.attempts }

// Timestamp is when the pod was added, or last handed back.
func (p *Pod) Timestamp() time.Time { return p.timestamp }

// InitialAttemptTime is when the pod first entered activeQ.
func (p *Pod) InitialAttemptTime() time.Time { return p.initialAttempt }

// Group is the group the pod was popped with, nil for a pod popped alone.
func (p *Pod) Group() *Group { return p.grp }

// groupKey names a PodGroup.
type groupKey struct{ namespace, name string }

// Group is a pod group (gang) queued as one entity: Pop hands out all its
// queued members together. A group is represented to the sort and
// backoff-sort slots by a record of its own: a pod record whose namespace
// and name are the group's, UID the PodGroup's, priority and preemption
// policy the PodGroup's, group fields filled in, and the group's queue
// state.
type Group struct {
	entity
	key groupKey
	// pg is the PodGroup object, nil until observed. Written under mu and
	// amu.
	pg *schedv1beta1.PodGroup
	// gen changes whenever something a member's record carries about the
	// group changes (the PodGroup, the member count); records encoded with
	// an older gen are refreshed before a slot reads them.
	gen    uint64
	recGen uint64 // gen the group record was encoded with
	// known is the number of the group's pods the queue holds (queued,
	// waiting, or in flight): the member count records carry unless
	// WithGroupMembers knows better (the scheduler cache also counts the
	// bound members).
	known int32

	members  []*Pod // queued members, in upstream's member order
	popped   []*Pod // members handed out by the last Pop
	poppedPG *schedv1beta1.PodGroup
	pending  []*Pod // members waiting for the in-flight group

	rejected rejectors // group-level rejecting plugins of the last attempt
}

func newGroup(k groupKey) *Group {
	g := &Group{key: k, recGen: ^uint64(0)}
	g.init()
	g.group = g
	return g
}

func (g *Group) base() *entity { return &g.entity }

// Namespace of the group.
func (g *Group) Namespace() string { return g.key.namespace }

// Name of the group.
func (g *Group) Name() string { return g.key.name }

// PodGroup is the PodGroup object as it was when the group was popped.
func (g *Group) PodGroup() *schedv1beta1.PodGroup { return g.poppedPG }

// Members are the pods popped with the group, in upstream's order
// (priority, then attempts, then timestamp, then name).
func (g *Group) Members() []*Pod { return g.popped }

// View is the group's record.
func (g *Group) View() abi.PodView { return g.view }

// Attempts is how many times the group has been popped, this time included.
func (g *Group) Attempts() int { return g.attempts }

// Timestamp is when the group was added, or last handed back.
func (g *Group) Timestamp() time.Time { return g.timestamp }

// memberOrder orders group members as upstream's
// PodGroupMemberPodsOrderingFunc: priority (descending), attempts
// (descending), timestamp, then name.
func memberOrder(a, b *Pod) int {
	if c := cmp.Compare(b.view.Priority(), a.view.Priority()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.attempts, a.attempts); c != 0 {
		return c
	}
	if c := a.timestamp.Compare(b.timestamp); c != 0 {
		return c
	}
	return cmp.Compare(a.obj.Name, b.obj.Name)
}
