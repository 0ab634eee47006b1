package cycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// Queue is what the cycle needs of the scheduling queue (host/queue).
type Queue interface {
	Pop(ctx context.Context) (queue.Entity, error)
	Done(uid types.UID)
	// Scheduled is Done for a pod that was bound (the queue counts the
	// pods the unschedulable flush, not an event, brought to it).
	Scheduled(uid types.UID)
	AddUnschedulableIfNotPresent(p *queue.Pod, rejected podview.Plugins) error
	AddAttemptedGroupIfNeeded(g *queue.Group, r queue.GroupResult) error
	// Hold keeps an entity whose attempt preempted out of activeQ and
	// backoffQ until Release; activate requeues it at once (its
	// preemption failed).
	Hold(e queue.Entity)
	Release(e queue.Entity, activate bool)
	// MoveOnEvent and MoveOnEventFor move the pods a cluster event may
	// help: the cycle sends the deletion of an assumed pod whose binding
	// failed, as upstream's handleBindingCycleError.
	MoveOnEvent(ev abi.Event)
	MoveOnEventFor(ev abi.Event, only func(abi.PodView) bool)
}

// Cache is what the cycle needs of the scheduler cache (host/cache).
type Cache interface {
	UpdateSnapshot(s *cache.Snapshot) error
	AssumePodInfo(pi *cache.PodInfo) error
	FinishBinding(pod *v1.Pod) error
	ForgetPod(pod *v1.Pod) error
}

// Recorder receives the cycle's metrics (host/metrics implements it).
type Recorder interface {
	// Attempt is one scheduling attempt of a pod with its result
	// (ResultScheduled, ResultUnschedulable, ResultError) and how long it
	// took (for a scheduled pod, until its binding returned).
	Attempt(profile, result string, d time.Duration)
	// Scheduled is a pod bound after attempts attempts, sli after its first
	// attempt began (upstream's pod scheduling SLI).
	Scheduled(profile string, attempts int, sli time.Duration)
	// Preempted is one preemption attempt, once its victims are chosen.
	Preempted(a PreemptionAttempt)
	// PreemptionWritten is the end of a preemption's writes, started after
	// an attempt that chose victims: preemptor is PreemptorPod or
	// PreemptorPodGroup, result WrittenSuccess or WrittenError (an
	// eviction failed), d how long they took.
	PreemptionWritten(preemptor, result string, d time.Duration)
	// ExtensionPoint is one run of an extension point in a cycle
	// (upstream's scheduler_framework_extension_point_duration_seconds):
	// point is one of the ExtensionPoint* names, status a status code's
	// name (framework.Code.String).
	ExtensionPoint(profile, point, status string, d time.Duration)
	// PluginObserver returns where one plugin's runs at an extension point
	// with a status are observed (upstream's
	// scheduler_plugin_execution_duration_seconds, recorded in a sampled
	// share of the cycles). It is asked once per combination; the observer
	// is kept and called from any goroutine.
	PluginObserver(plugin, point, status string) func(time.Duration)
}

// Results of an attempt, as upstream labels them.
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
)

// ErrNoNodes is the error of an attempt made while the cluster has no nodes.
var ErrNoNodes = errors.New("no nodes available to schedule pods")

// Scheduler runs the scheduling cycle of one profile.
type Scheduler struct {
	q      Queue
	cache  Cache
	api    API
	events events.EventRecorder
	opts   options

	// Owned by the Run goroutine.
	snap      *cache.Snapshot
	nextStart int
	scores    []int64
	feasible  []*cache.NodeInfo // place's, reused: nothing keeps it past the cycle
	memo      framework.Memo    // place's: what the last pods' node-local filters and scorers found
	// diag is the diagnosis of the last pod placed, reused by the next
	// cycle (place); a pod that is not placed keeps its own.
	diag *framework.Diagnosis
	rnd  *rand.Rand
	// prof is the profile of the cycle running: opts.plugins, or timed in
	// the sampled cycles.
	prof *framework.Profile
	// timed is opts.plugins with every plugin timed (buildProfiles).
	// Read-only.
	timed *framework.Profile

	binds   sync.WaitGroup // binding goroutines and API writes
	binders *binders       // the goroutines Run's bindings run on; nil outside Run

	order victimOrder // the victim-order slot (SetVictimOrder)
}

// Option configures a Scheduler.
type Option func(*options)

type options struct {
	profile     string
	percentage  int32
	parallelism int
	rec         Recorder
	log         *slog.Logger
	clock       clock.PassiveClock
	seed        uint64
	nominator   *Nominator
	preBindings *PreBindings
	moves       func(ev abi.Event, only func(abi.PodView) bool)
	preemption  *Preemption
	plugins     *framework.Profile
	entries     []framework.Entry
	sample      int
	built       *framework.Built // WithBuilt, applied after the other options
}

// WithProfile names the scheduler profile (its scheduler name) in events
// and metrics. Default "wasmsched".
func WithProfile(name string) Option { return func(o *options) { o.profile = name } }

// WithPercentageOfNodesToScore is upstream's percentageOfNodesToScore: 0
// (the default) adapts it to the cluster's size.
func WithPercentageOfNodesToScore(p int32) Option { return func(o *options) { o.percentage = p } }

// WithParallelism is how many goroutines may filter nodes (default
// GOMAXPROCS); a cycle uses no more than GOMAXPROCS (filterWorkers).
func WithParallelism(n int) Option { return func(o *options) { o.parallelism = n } }

// WithRecorder sets the metrics recorder.
func WithRecorder(r Recorder) Option { return func(o *options) { o.rec = r } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock sets the clock attempts are timed with.
func WithClock(c clock.PassiveClock) Option { return func(o *options) { o.clock = c } }

// WithSeed seeds the random choice among equally scored nodes (tests).
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithNominator shares the record of pods nominated to nodes by preemption
// (one per process, fed by the pod informer); without it nominations are
// kept per Scheduler.
func WithNominator(n *Nominator) Option { return func(o *options) { o.nominator = n } }

// WithClusterMoves sends the moves the cycle makes on an event of its
// own (the deletion of an assumed pod whose binding failed) to every
// profile's queue, as upstream's one queue moves every profile's pods;
// without it they reach this scheduler's queue only. only == nil moves
// every pod the event may help.
func WithClusterMoves(f func(ev abi.Event, only func(abi.PodView) bool)) Option {
	return func(o *options) { o.moves = f }
}

// WithPreBindings shares the record of pods in their PreBind, which
// preemption cancels rather than deletes (one per process); without it the
// record is kept per Scheduler.
func WithPreBindings(r *PreBindings) Option { return func(o *options) { o.preBindings = r } }

type discardRecorder struct{}

func (discardRecorder) Attempt(string, string, time.Duration)                {}
func (discardRecorder) Scheduled(string, int, time.Duration)                 {}
func (discardRecorder) Preempted(PreemptionAttempt)                          {}
func (discardRecorder) PreemptionWritten(string, string, time.Duration)      {}
func (discardRecorder) ExtensionPoint(string, string, string, time.Duration) {}
func (discardRecorder) PluginObserver(string, string, string) func(time.Duration) {
	return func(time.Duration) {}
}

// New returns a scheduler that pops from q, places against c with the
// plugins of WithBuilt (required) and writes through api, reporting to ev.
func New(q Queue, c Cache, api API, ev events.EventRecorder, opts ...Option) *Scheduler {
	o := options{
		profile: "wasmsched", parallelism: runtime.GOMAXPROCS(0), rec: discardRecorder{},
		log: slog.New(slog.DiscardHandler), clock: clock.RealClock{}, seed: uint64(time.Now().UnixNano()),
		sample: pluginMetricsSamplePercent,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if b := o.built; b != nil {
		o.entries = b.Entries
		switch {
		case b.PreemptionDisabled:
			o.preemption = nil
		case o.preemption != nil:
			p := *o.preemption
			p.MinCandidates = b.Preemption
			o.preemption = &p
		}
	}
	o.parallelism = max(o.parallelism, 1)
	if o.nominator == nil {
		o.nominator = NewNominator()
	}
	if o.preBindings == nil {
		o.preBindings = NewPreBindings()
	}
	if o.built == nil {
		panic("cycle.New: no plugins: pass WithBuilt with the profile's plugins")
	}
	plain, timed, err := buildProfiles(&o)
	if err != nil {
		panic("cycle: the profile's entries: " + err.Error())
	}
	o.plugins = plain
	s := &Scheduler{
		q: q, cache: c, api: api, events: ev, opts: o,
		snap: cache.NewSnapshot(),
		rnd:  rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15)),
		prof: o.plugins, timed: timed,
	}
	if o.preemption != nil && o.preemption.Order != nil {
		s.SetVictimOrder(o.preemption.Order)
	}
	return s
}

// Run schedules until ctx ends or the queue is closed, then waits for the
// bindings in progress.
func (s *Scheduler) Run(ctx context.Context) {
	s.binders = newBinders()
	defer func() {
		s.binds.Wait()
		s.binders.stop()
		s.binders = nil
	}()
	// Pop hands out what activeQ holds even after ctx ended, so check ctx
	// first: a cycle run with an ended ctx fails its pod with ctx's error.
	for ctx.Err() == nil {
		e, err := s.q.Pop(ctx)
		if err != nil {
			return // ctx ended or the queue closed
		}
		s.ScheduleOne(ctx, e)
	}
}

// ScheduleOne runs one scheduling cycle for an entity popped from the
// queue. Its binding, if any, finishes asynchronously.
func (s *Scheduler) ScheduleOne(ctx context.Context, e queue.Entity) {
	s.prof = s.opts.plugins
	if s.timed != nil && s.opts.sample > 0 && s.rnd.IntN(100) < s.opts.sample {
		s.prof = s.timed // upstream's state.SetRecordPluginMetrics
	}
	switch e := e.(type) {
	case *queue.Pod:
		s.schedulePod(ctx, e)
	case *queue.Group:
		s.scheduleGroup(ctx, e)
	}
}

// WaitForBindings waits for the bindings started so far (tests).
func (s *Scheduler) WaitForBindings() { s.binds.Wait() }

func (s *Scheduler) schedulePod(ctx context.Context, p *queue.Pod) {
	start := s.opts.clock.Now()
	pod := p.Object()
	if pod.DeletionTimestamp != nil {
		s.q.Done(p.UID()) // being deleted: not worth a node (upstream skipPodSchedule)
		return
	}
	if err := s.cache.UpdateSnapshot(s.snap); err != nil {
		s.fail(ctx, p, failure{err: fmt.Errorf("update the cache snapshot: %w", err)}, start)
		return
	}
	pl := s.placement(pod)
	node, ps, f := s.place(ctx, pl)
	// The filters' holds last until the pod is placed, or found
	// unschedulable and its preemption tried.
	defer ps.Done()
	if node == "" {
		s.postFilter(ctx, p, ps, &f)
		s.fail(ctx, p, f, start)
		return
	}
	ai := pl.info.Assumed(node)
	assumed := ai.Pod
	if err := s.cache.AssumePodInfo(ai); err != nil {
		s.fail(ctx, p, failure{err: fmt.Errorf("assume pod on node %s: %w", node, err)}, start)
		return
	}
	if f, ok := s.reserve(ctx, s.prof, ps, assumed); !ok {
		if err := s.cache.ForgetPod(assumed); err != nil {
			s.opts.log.Error("forget a pod whose reservation failed", "pod", klogRef(assumed), "err", err)
		}
		s.fail(ctx, p, f, start)
		return
	}
	// Assumed, the pod holds its room in the cache: a nomination would count
	// it twice.
	s.opts.nominator.Remove(pod.UID)
	s.bind(ctx, p, assumed, s.prof, ps, start)
}

// statusError is an Error status for observe.
var statusError = &framework.Status{Code: framework.Error}

// observe records an extension point's run that began at start, with its
// status (nil: Success).
func (s *Scheduler) observe(point string, st *framework.Status, start time.Time) {
	code := framework.Success
	if st != nil {
		code = st.Code
	}
	s.opts.rec.ExtensionPoint(s.opts.profile, point, code.String(), s.opts.clock.Since(start))
}

// placement is one pod's input to place.
type placement struct {
	pod  *v1.Pod
	info *cache.PodInfo
}

func (s *Scheduler) placement(pod *v1.Pod) placement {
	return placement{pod: pod, info: cache.NewPodInfo(pod)}
}

// failure says why a pod was not placed: err for an error, otherwise the
// filters' diagnosis (and a message, when the diagnosis is not the reason).
// rejected marks a rejection without a diagnosis (a PreBind's): the pod is
// unschedulable, but no plugin is named to requeue it.
type failure struct {
	err      error
	diag     *framework.Diagnosis
	nodes    int
	message  string
	rejected bool
	// unnominate withdraws the pod's nominatedNodeName, in memory and in
	// its status, as upstream's binding-cycle failures do; nominated says
	// that this binding wrote one, which the informer may not show yet.
	unnominate, nominated bool
}

// place finds a node for pl.pod on s.snap: filters (round-robin from where
// the last cycle stopped, stopping at upstream's adaptive number of
// feasible nodes), scores, and picks the best, ties at random. It returns
// the node and the pod's state (for its reserve and binding), or "" and
// why when nothing fits, with the pod's state when its PreFilters ran (for
// the PostFilter plugins).
func (s *Scheduler) place(ctx context.Context, pl placement) (string, *framework.PodState, failure) {
	start := s.opts.clock.Now()
	ps, st := s.prof.Prepare(pl.info, s.snap)
	s.observe(ExtensionPointPreFilter, st, start)
	if st != nil && st.Code == framework.Error {
		return "", nil, failure{err: st.AsError()}
	}
	nodes := s.snap.List()
	if len(nodes) == 0 {
		return "", nil, failure{err: ErrNoNodes}
	}
	if st == nil {
		s.addNominated(ps, pl.pod)
	}
	// A pod nominated by an earlier preemption tries its node first, as
	// upstream's evaluateNominatedNode: the room was made for it.
	if nn := s.opts.nominator.NodeOf(pl.pod.UID); nn != "" && st == nil {
		if i, ok := slices.BinarySearchFunc(nodes, nn, func(ni *cache.NodeInfo, name string) int {
			return strings.Compare(ni.Node().Name, name)
		}); ok && framework.Filter(ps, nodes[i]).IsSuccess() {
			return nn, ps, failure{}
		}
	}
	diag := s.diag
	if diag == nil {
		diag = &framework.Diagnosis{}
	} else {
		diag.Reset()
	}
	s.diag = nil // the failures below keep it
	if st != nil {
		// Rejected before any node was looked at (e.g. an unsatisfiable
		// affinity): every node counts as rejected by that plugin.
		diag.RecordPreFilter(st)
		return "", ps, failure{diag: diag, nodes: len(nodes)}
	}
	want := int(framework.NumFeasibleNodesToFind(s.opts.percentage, int32(len(nodes))))
	start = s.opts.clock.Now()
	ps.UseMemo(&s.memo, nodes)
	defer ps.UseMemo(nil, nil) // the memo is this loop's, not the binding's
	feasible, next := framework.FindFeasibleInto(ctx, s.feasible, ps, nodes, s.nextStart, want, filterWorkers(s.opts.parallelism), diag)
	s.nextStart = next
	if cap(feasible) > cap(s.feasible) {
		s.feasible = feasible[:0]
	}
	if err := diag.Err(); err != nil {
		s.observe(ExtensionPointFilter, statusError, start)
		return "", nil, failure{err: err}
	}
	s.observe(ExtensionPointFilter, nil, start)
	if len(feasible) == 0 {
		if err := ctx.Err(); err != nil {
			return "", nil, failure{err: err}
		}
		return "", ps, failure{diag: diag, nodes: len(nodes)}
	}
	s.diag = diag
	if len(feasible) == 1 {
		return feasible[0].Node().Name, ps, failure{}
	}
	if cap(s.scores) < len(feasible) {
		s.scores = make([]int64, len(feasible))
	}
	scores := s.scores[:len(feasible)]
	start = s.opts.clock.Now()
	_, st = framework.Score(ps, feasible, scores)
	s.observe(ExtensionPointScore, st, start)
	if st != nil {
		return "", nil, failure{err: st.AsError()}
	}
	return framework.SelectHost(feasible, scores, s.rnd).Node().Name, ps, failure{}
}

// addNominated makes ps check each node with the pods nominated to it (those
// of pod's priority or higher, other than pod and its group's members)
// added, as upstream's addNominatedPods, so that pod does not take the room
// preemption made for a more important pod (framework.PodState.AddNominated,
// which also checks the node without them where a pod's presence can
// satisfy a filter).
func (s *Scheduler) addNominated(ps *framework.PodState, pod *v1.Pod) {
	if s.opts.nominator.empty() {
		return
	}
	prio := corev1helpers.PodPriority(pod)
	group := podview.GroupName(pod)
	var add []*cache.PodInfo
	for node, pods := range s.opts.nominator.infos() {
		ni := s.snap.Get(node)
		if ni == nil {
			continue
		}
		add = add[:0]
		for _, pi := range pods {
			p := pi.Pod
			// A sibling in pod's group is placed in the same cycle: its
			// room is counted when it is placed, not held for it.
			sibling := group != "" && p.Namespace == pod.Namespace && podview.GroupName(p) == group
			if p.UID != pod.UID && !sibling && corev1helpers.PodPriority(p) >= prio {
				add = append(add, pi)
			}
		}
		ps.AddNominated(ni, add)
	}
}

// bind binds the assumed pod asynchronously, after the profile's PreBind,
// then hands it back; prof is the profile the cycle placed it with and ps
// its state, which the binding goroutine owns from here.
func (s *Scheduler) bind(ctx context.Context, p *queue.Pod, assumed *v1.Pod, prof *framework.Profile,
	ps *framework.PodState, start time.Time) {
	if !prof.HasReserve() && !prof.HasPreBind() {
		ps = nil // nothing reads it: let it go with the cycle
	}
	s.binds.Add(1)
	s.binders.Go(func() {
		defer s.binds.Done()
		pre, ok := s.preBind(ctx, prof, ps, assumed)
		if !ok {
			s.bindingFailed(ctx, prof, ps, p, assumed, pre, start)
			return
		}
		node := assumed.Spec.NodeName
		bindStart := s.opts.clock.Now()
		err := s.api.Bind(ctx, assumed, node)
		if err != nil {
			s.observe(ExtensionPointBind, statusError, bindStart)
		} else {
			s.observe(ExtensionPointBind, nil, bindStart)
		}
		if err == nil {
			if err := s.cache.FinishBinding(assumed); err != nil {
				s.opts.log.Warn("finish binding in the cache", "pod", klogRef(assumed), "err", err)
			}
			s.q.Scheduled(p.UID())
			now := s.opts.clock.Now()
			s.opts.rec.Attempt(s.opts.profile, ResultScheduled, now.Sub(start))
			s.opts.rec.Scheduled(s.opts.profile, p.Attempts(), now.Sub(p.InitialAttemptTime()))
			// Logged before the event's write, which waits for the apiserver.
			s.opts.log.Debug("bound", "pod", klogRef(assumed), "node", node)
			s.scheduledEvent(ctx, assumed, node)
			return
		}
		s.bindingFailed(ctx, prof, ps, p, assumed, failure{err: fmt.Errorf("binding rejected: %w", err), nominated: pre.nominated}, start)
	})
}

// fail hands a pod whose attempt failed back to the queue and tells its
// owner why: a FailedScheduling event and the PodScheduled condition. A
// pod the informer shows gone or bound meanwhile is handed back with Done
// instead, so it is neither lost nor bound twice.
func (s *Scheduler) fail(ctx context.Context, p *queue.Pod, f failure, start time.Time) {
	s.failWith(ctx, p, f, start, true)
}

func (s *Scheduler) failWith(ctx context.Context, p *queue.Pod, f failure, start time.Time, requeue bool) {
	pod := p.Object()
	result, reason, msg := s.describe(f)
	s.opts.rec.Attempt(s.opts.profile, result, s.opts.clock.Now().Sub(start))

	cur, ok := s.api.Current(pod.Namespace, pod.Name)
	switch {
	case !ok || cur.UID != pod.UID:
		s.opts.log.Debug("pod deleted during its attempt", "pod", klogRef(pod))
		s.q.Done(p.UID())
		return
	case cur.Spec.NodeName != "":
		s.opts.log.Info("pod bound by someone else during its attempt", "pod", klogRef(pod), "node", cur.Spec.NodeName)
		s.q.Done(p.UID())
		return
	}
	if f.unnominate && (f.nominated || cur.Status.NominatedNodeName != "") {
		s.opts.nominator.Remove(cur.UID)
		s.async(func() error { return s.api.Nominate(ctx, cur, "") })
	}
	if requeue {
		var rejected podview.Plugins
		if f.diag != nil {
			rejected = podview.Plugins{Unschedulable: f.diag.UnschedulablePlugins(), Pending: f.diag.PendingPlugins()}
		}
		if err := s.q.AddUnschedulableIfNotPresent(p, rejected); err != nil {
			s.opts.log.Error("requeue a pod", "pod", klogRef(pod), "err", err)
		}
	}
	if f.err != nil {
		s.opts.log.Info("unable to schedule pod", "pod", klogRef(pod), "err", f.err)
	} else {
		s.opts.log.Debug("unable to schedule pod", "pod", klogRef(pod), "reason", msg)
	}
	s.report(ctx, cur, reason, msg)
}

// describe turns a failure into the attempt's result and the condition's
// reason and message.
func (s *Scheduler) describe(f failure) (result, reason, msg string) {
	if errors.Is(f.err, ErrNoNodes) {
		// Upstream reports an empty cluster as unschedulable (and requeues the
		// pod like an error, with no rejecting plugin to wake it).
		return ResultUnschedulable, v1.PodReasonUnschedulable, f.err.Error()
	}
	if f.err != nil {
		return ResultError, v1.PodReasonSchedulerError, f.err.Error()
	}
	msg = f.message
	if msg == "" && f.diag != nil {
		msg = f.diag.Message(f.nodes)
	}
	return ResultUnschedulable, v1.PodReasonUnschedulable, msg
}

// report sends the FailedScheduling event and the condition, off the
// caller's goroutine.
func (s *Scheduler) report(ctx context.Context, pod *v1.Pod, reason, msg string) {
	s.events.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", msg)
	cond := v1.PodCondition{
		Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: msg,
		LastTransitionTime: metaNow(s.opts.clock),
	}
	s.binds.Add(1)
	go func() {
		defer s.binds.Done()
		if err := s.api.SetCondition(ctx, pod, cond); err != nil && ctx.Err() == nil {
			s.opts.log.Warn("update the PodScheduled condition", "pod", klogRef(pod), "err", err)
		}
	}()
}

// filterWorkers is how many goroutines filter a pod's nodes: the configured
// parallelism, but no more than the Ps that can run them. Filters compute
// and never wait (they read the snapshot), so a goroutine beyond
// GOMAXPROCS only queues behind the others; upstream's default of 16 on 2
// cores started 16 goroutines per pod: 6.8 s of CPU against 6.4 s with 2
// for 20,000 plain pods in memory (RATIONALE). Read per cycle: GOMAXPROCS
// follows the container's CPU limit.
func filterWorkers(parallelism int) int {
	return min(parallelism, runtime.GOMAXPROCS(0))
}
