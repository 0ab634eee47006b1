package queue

import (
	"log/slog"
	"time"

	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/host/policy"
)

// Defaults, as upstream's.
const (
	DefaultInitialBackoff = 1 * time.Second
	DefaultMaxBackoff     = 10 * time.Second
	// DefaultMaxInUnschedulable is podMaxInUnschedulablePodsDuration.
	DefaultMaxInUnschedulable = 5 * time.Minute
	// DefaultMaxInFlightEvents bounds the cluster events kept for in-flight
	// pods (see WithMaxInFlightEvents).
	DefaultMaxInFlightEvents = 10000

	// backoffWindow is KEP-5142's backoffQ ordering window: with
	// popFromBackoffQ on, backoff expiries are truncated to it, pods in one
	// window are ordered by the queue sort, and the backoff flush runs on its
	// boundaries.
	backoffWindow = time.Second
	// leftoverFlushPeriod is how often unschedulable leftovers are checked.
	leftoverFlushPeriod = 30 * time.Second
	// maxInFlightEventBytes bounds the bytes of the recorded events, as the
	// count cap bounds their number (a node with thousands of labels makes a
	// large record).
	maxInFlightEventBytes = 64 << 20
)

type options struct {
	clock              clock.WithTicker
	initialBackoff     time.Duration
	maxBackoff         time.Duration
	maxInUnschedulable time.Duration
	popFromBackoffQ    bool
	sort               policy.Sort
	backoffSort        policy.BackoffSort
	preEnqueue         policy.PreEnqueue
	hint               policy.QueueingHint
	rec                Recorder
	profile            string
	log                *slog.Logger
	maxInFlightEvents  int
	groupMembers       func(namespace, name string) (int32, bool)
	noGroups           bool
	onHeld             func(Held)
}

func defaultOptions() options {
	return options{
		clock:              clock.RealClock{},
		initialBackoff:     DefaultInitialBackoff,
		maxBackoff:         DefaultMaxBackoff,
		maxInUnschedulable: DefaultMaxInUnschedulable,
		popFromBackoffQ:    true,
		sort:               policy.PrioritySort{},
		backoffSort:        policy.BackoffExpiry{},
		preEnqueue:         policy.Admit{},
		hint:               policy.AlwaysQueue{},
		rec:                Discard{},
		log:                slog.New(slog.DiscardHandler),
		maxInFlightEvents:  DefaultMaxInFlightEvents,
	}
}

// Option configures a Queue.
type Option func(*options)

// WithClock sets the clock (tests pass k8s.io/utils/clock/testing's fake).
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithBackoff sets the initial and the maximum backoff (1 s and 10 s by
// default). The backoff doubles per attempt; a maximum of 0 disables it.
func WithBackoff(initial, max time.Duration) Option {
	return func(o *options) { o.initialBackoff, o.maxBackoff = initial, max }
}

// WithMaxInUnschedulable sets podMaxInUnschedulablePodsDuration: how long an
// unschedulable pod waits for an event before it is retried anyway (5 min by
// default).
func WithMaxInUnschedulable(d time.Duration) Option {
	return func(o *options) { o.maxInUnschedulable = d }
}

// WithPopFromBackoffQ turns KEP-5142 on or off (on by default, as upstream's
// SchedulerPopFromBackoffQ gate): ordering windows in backoffQ, PreEnqueue
// run on entering backoffQ, and popping from backoffQ when activeQ is empty.
func WithPopFromBackoffQ(on bool) Option { return func(o *options) { o.popFromBackoffQ = on } }

// WithSort sets the queue-sort slot (policy.PrioritySort by default).
func WithSort(s policy.Sort) Option { return func(o *options) { o.sort = s } }

// WithBackoffSort sets the backoff-sort slot (policy.BackoffExpiry by default).
func WithBackoffSort(s policy.BackoffSort) Option { return func(o *options) { o.backoffSort = s } }

// WithPreEnqueue sets the PreEnqueue slot (policy.Admit by default).
func WithPreEnqueue(p policy.PreEnqueue) Option { return func(o *options) { o.preEnqueue = p } }

// WithQueueingHint sets the QueueingHint slot (policy.AlwaysQueue by default).
func WithQueueingHint(h policy.QueueingHint) Option { return func(o *options) { o.hint = h } }

// WithRecorder sets where the queue reports its metrics.
func WithRecorder(r Recorder) Option { return func(o *options) { o.rec = r } }

// WithProfile names the profile (scheduler name) the queue serves, for the
// metrics and logs that carry it (Recorder.FlushRescue).
func WithProfile(name string) Option { return func(o *options) { o.profile = name } }

// WithLogger sets the queue's logger (nothing is logged by default).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithMaxInFlightEvents bounds the cluster events recorded for in-flight
// pods (10,000 by default). Past the bound the queue drops the recorded
// events and treats every pod then in flight as if an event had made it
// schedulable: when it comes back unschedulable it is requeued (to backoffQ
// or activeQ) instead of waiting in the unschedulable pool.
func WithMaxInFlightEvents(n int) Option { return func(o *options) { o.maxInFlightEvents = n } }

// WithGroupMembers sets how the queue learns the number of a pod group's
// pods known to the scheduler (abi.PodView.GroupMembers): the scheduler
// cache's count, which includes the bound members, as upstream's gang
// PreEnqueue counts them. ok false falls back to the queue's own count: the
// group's pods it holds (queued, waiting or in flight), which forgets a
// member once it is bound (Done).
func WithGroupMembers(f func(namespace, name string) (members int32, ok bool)) Option {
	return func(o *options) { o.groupMembers = f }
}

// WithoutGroups schedules every pod alone, ignoring spec.schedulingGroup:
// for a cluster that does not serve PodGroups, where a member would
// otherwise wait for its PodGroup object forever.
func WithoutGroups() Option { return func(o *options) { o.noGroups = true } }

// WithHeldNotify makes the queue tell f whenever what holds a pod before
// the queue changes: a PreEnqueue plugin (scheduling gates included) starts
// holding it, or another plugin or another reason holds it, or it is
// released (enters activeQ or backoffQ, or waits for something else), or,
// once held, it leaves the queue (Held.Gone). An event that leaves the
// holder and its reason as they were is not notified. A pod group's
// members are notified one by one with their group's holder.
//
// f is called with the queue's lock held, in the order of the changes: it
// must return at once and never call the queue (record the change and
// write it elsewhere, as cycle.HeldWriter does).
func WithHeldNotify(f func(Held)) Option { return func(o *options) { o.onHeld = f } }
