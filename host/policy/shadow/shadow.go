// Package shadow evaluates a candidate policy (a Shadow) beside the policy
// that serves its slot, on the inputs the serving policy really received,
// and counts where the two disagree. A shadow decides nothing: its calls run
// on one worker goroutine of its own, off the scheduling cycle and the
// queue's locks, on copies of the inputs; when the worker falls behind,
// decisions are dropped and counted, never queued without bound; a shadow
// that traps, spins or answers garbage is counted under errors and changes
// nothing, and its faults never reach the serving slot's breaker (the
// shadow's modules live in a wasmslot.Set of their own).
//
// What is compared, per slot:
//   - queueSort, backoffSort: each sampled pop against a sample of the
//     entities still in the heap it was popped from: the shadow disagrees
//     when it would have popped one of them first (orderInversions counts
//     those pairs).
//   - preEnqueue: admit or hold, per pod (wouldHold, wouldAdmit).
//   - queueingHint: Queue or Skip per pod and event. A shadow Skip where the
//     serving policy queued the pod (wouldSkip) becomes wouldHaveDelayed
//     when the attempt that followed scheduled the pod and no other event
//     the shadow would have queued it for came between; the opposite is an
//     extra attempt (extraAttempts).
//   - victimOrder: the order of the candidates on the chosen node
//     (victimOrderDiffers), and whether the victims the shadow ranks least
//     important differ from the serving policy's (victimSetDiffers) when
//     as many are evicted.
//   - filter: the feasible set (feasibleDiffers); score: the node each
//     ranks first (chosenNodeDiffers).
package shadow

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

// MaxSamples is how many of the last disagreements and errors a slot keeps.
const MaxSamples = 20

// DefaultBacklog bounds the decisions waiting for the worker.
const DefaultBacklog = 4096

// Default sample rates: every decision, but a tenth of the sorts' pops
// (each one compares several pairs).
const (
	DefaultSampleRate     = 1.0
	DefaultSortSampleRate = 0.1
)

// DefaultRate is slot's default sample rate.
func DefaultRate(slot abi.Slot) float64 {
	if slot == abi.SlotQueueSort || slot == abi.SlotBackoffSort {
		return DefaultSortSampleRate
	}
	return DefaultSampleRate
}

// aheadSample is how many entities still in the heap a sampled pop is
// compared with.
const aheadSample = 4

// maxJoin bounds the pods whose shadow Skip waits for the outcome of their
// next attempt.
const maxJoin = 10000

// The results of a decision, as the metric's result label.
const (
	ResultAgree    = "agree"
	ResultDisagree = "disagree"
	ResultError    = "error"
	ResultDropped  = "dropped"
)

// The kinds of disagreement (Stats.Kinds).
const (
	KindOrderInversions    = "orderInversions"
	KindWouldHold          = "wouldHold"
	KindWouldAdmit         = "wouldAdmit"
	KindWouldSkip          = "wouldSkip"
	KindWouldHaveDelayed   = "wouldHaveDelayed"
	KindExtraAttempts      = "extraAttempts"
	KindVictimOrderDiffers = "victimOrderDiffers"
	KindVictimSetDiffers   = "victimSetDiffers"
	KindFeasibleDiffers    = "feasibleDiffers"
	KindChosenNodeDiffers  = "chosenNodeDiffers"
	kindError              = "error"
)

// Recorder counts the decisions; host/metrics implements it.
type Recorder interface {
	// ShadowDecision counts n decisions of the shadow named policy in slot
	// with result (Result*).
	ShadowDecision(slot abi.Slot, policy, result string, n int)
}

type discard struct{}

func (discard) ShadowDecision(abi.Slot, string, string, int) {}

// Stats is what a slot's shadow found since it was loaded.
type Stats struct {
	Decisions, Disagreements, Errors, Dropped int64
	Kinds                                     map[string]int64
	Since                                     time.Time
	// Samples are the last disagreements and errors, oldest first.
	Samples []Sample
}

// Sample is one decision where the shadow disagreed or failed.
type Sample struct {
	Pod, Event     string
	Active, Shadow string
	Kind           string
	Time           time.Time
	// Case is the decision as a guest-sdk/policytest case (JSON) whose
	// want is the serving policy's answer; empty when there is none.
	Case string
}

// Evaluator runs one profile's shadows. Its methods are safe for
// concurrent use; Run runs its worker.
type Evaluator struct {
	rec   Recorder
	log   *slog.Logger
	now   func() time.Time
	work  chan func()
	slots [len(abi.Slots)]slotState
	// fails counts the shadow modules' fallbacks (policy.Recorder.FellBack
	// of their Set): the worker reads it around each call.
	fails [len(abi.Slots)]atomic.Int64

	// The hint join, used by the worker only: pods a shadow would have
	// skipped (delayed) and the attempt they then got (attempting).
	delayed, attempting map[types.UID]hintMark
}

type hintMark struct {
	cand  *candidate
	event string
	pod   string
	cas   string // the decision's case
}

type slotState struct {
	cand atomic.Pointer[candidate]
	next atomic.Pointer[meta] // what the next install is called, and its rate
	mu   sync.Mutex
	st   Stats
	ring int // index of the oldest sample once the ring is full
}

// candidate is a shadow installed in a slot.
type candidate struct {
	impl any
	meta
}

type meta struct {
	name string
	rate float64
}

// Option configures an Evaluator.
type Option func(*Evaluator)

// WithRecorder counts the decisions in rec.
func WithRecorder(rec Recorder) Option { return func(e *Evaluator) { e.rec = rec } }

// WithLogger logs the shadow modules' failures (at debug level).
func WithLogger(l *slog.Logger) Option { return func(e *Evaluator) { e.log = l } }

// WithBacklog bounds the decisions waiting for the worker (default
// DefaultBacklog).
func WithBacklog(n int) Option { return func(e *Evaluator) { e.work = make(chan func(), max(n, 1)) } }

// WithClock sets the clock of Since and of the samples.
func WithClock(now func() time.Time) Option { return func(e *Evaluator) { e.now = now } }

// New returns an Evaluator with no shadow; Run starts its worker.
func New(opts ...Option) *Evaluator {
	e := &Evaluator{rec: discard{}, log: slog.New(slog.DiscardHandler), now: time.Now,
		delayed: map[types.UID]hintMark{}, attempting: map[types.UID]hintMark{}}
	for _, o := range opts {
		o(e)
	}
	if e.work == nil {
		e.work = make(chan func(), DefaultBacklog)
	}
	return e
}

// Run evaluates the decisions handed to the shadows until ctx ends.
func (e *Evaluator) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-e.work:
			f()
		}
	}
}

// Configure names the shadow the next install puts in slot (the metric's
// policy label) and sets its sample rate (0 to 1); a shadow already
// installed keeps its module and takes the new name and rate.
func (e *Evaluator) Configure(slot abi.Slot, name string, rate float64) {
	s := &e.slots[slot]
	m := meta{name: name, rate: min(max(rate, 0), 1)}
	s.next.Store(&m)
	if c := s.cand.Load(); c != nil && c.meta != m {
		s.cand.CompareAndSwap(c, &candidate{impl: c.impl, meta: m})
	}
}

// Installer is what the shadows' wasmslot.Set installs through: a policy
// becomes slot's shadow, nil ends it.
func (e *Evaluator) Installer() policy.Installer {
	return policy.Installer{
		Sort:         func(p policy.Sort) { e.install(abi.SlotQueueSort, p) },
		BackoffSort:  func(p policy.BackoffSort) { e.install(abi.SlotBackoffSort, p) },
		PreEnqueue:   func(p policy.PreEnqueue) { e.install(abi.SlotPreEnqueue, p) },
		QueueingHint: func(p policy.QueueingHint) { e.install(abi.SlotQueueingHint, p) },
		VictimOrder:  func(p policy.VictimOrder) { e.install(abi.SlotVictimOrder, p) },
		Filter:       func(p policy.Filter) { e.install(abi.SlotFilter, p) },
		Score:        func(p policy.Score) { e.install(abi.SlotScore, p) },
	}
}

// install makes impl slot's shadow (nil: none) and starts its counts
// afresh.
func (e *Evaluator) install(slot abi.Slot, impl any) {
	s := &e.slots[slot]
	if impl == nil {
		s.cand.Store(nil)
		return
	}
	m := meta{rate: DefaultRate(slot)}
	if n := s.next.Load(); n != nil {
		m = *n
	}
	s.mu.Lock()
	s.st, s.ring = Stats{Since: e.now()}, 0
	s.mu.Unlock()
	s.cand.Store(&candidate{impl: impl, meta: m})
}

// Active reports whether slot has a shadow.
func (e *Evaluator) Active(slot abi.Slot) bool { return e.slots[slot].cand.Load() != nil }

// Stats returns what slot's shadow found since it was loaded; false when
// the slot has no shadow.
func (e *Evaluator) Stats(slot abi.Slot) (Stats, bool) {
	s := &e.slots[slot]
	if s.cand.Load() == nil {
		return Stats{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.st
	out.Kinds = make(map[string]int64, len(s.st.Kinds))
	for k, v := range s.st.Kinds {
		out.Kinds[k] = v
	}
	out.Samples = make([]Sample, 0, len(s.st.Samples))
	out.Samples = append(out.Samples, s.st.Samples[s.ring:]...)
	out.Samples = append(out.Samples, s.st.Samples[:s.ring]...)
	return out, true
}

// Recorder is the policy.Recorder of the shadows' wasmslot.Set: it counts
// the shadow modules' fallbacks as their errors and records nothing in the
// serving slots' metrics.
func (e *Evaluator) Recorder() policy.Recorder { return setRecorder{e} }

type setRecorder struct{ e *Evaluator }

func (r setRecorder) Called(abi.Slot) {}
func (r setRecorder) Failed(slot abi.Slot, reason string, err error) {
	r.e.log.Debug("shadow policy failed; nothing changes", "slot", slot.String(), "reason", reason, "err", err)
}
func (r setRecorder) FellBack(slot abi.Slot, n int) {
	if int(slot) < len(r.e.fails) {
		r.e.fails[slot].Add(int64(n))
	}
}
func (r setRecorder) Observe(abi.Slot, time.Duration) {}
func (r setRecorder) Swapped(abi.Slot, string)        {}
func (r setRecorder) BreakerTripped(slot abi.Slot) {
	r.e.log.Info("a shadow policy's circuit breaker opened: its decisions count as errors until a module is loaded again", "slot", slot.String())
}

// sample returns slot's shadow when the decision at hand is one to
// evaluate (the slot has one, and the sample rate picked it).
func (e *Evaluator) sample(slot abi.Slot) *candidate {
	c := e.slots[slot].cand.Load()
	if c == nil || c.rate <= 0 || c.rate < 1 && rand.Float64() >= c.rate {
		return nil
	}
	return c
}

// offer hands f to the worker, or drops it when the worker is behind.
func (e *Evaluator) offer(slot abi.Slot, c *candidate, f func()) {
	select {
	case e.work <- f:
	default:
		s := &e.slots[slot]
		s.mu.Lock()
		if s.cand.Load() == c {
			s.st.Dropped++
		}
		s.mu.Unlock()
		e.rec.ShadowDecision(slot, c.name, ResultDropped, 1)
	}
}

// current reports whether c still shadows slot (a decision offered to a
// shadow since replaced is not evaluated).
func (e *Evaluator) current(slot abi.Slot, c *candidate) bool { return e.slots[slot].cand.Load() == c }

// call runs f, a call into c's policy, and reports whether it failed (its
// module fell back to the native default).
func (e *Evaluator) call(slot abi.Slot, f func()) (failed bool) {
	before := e.fails[slot].Load()
	f()
	return e.fails[slot].Load() != before
}

// outcome records decisions of c in slot: n agreeing, or one disagreeing
// or failed, with a sample.
type outcome struct {
	agree    int
	disagree int
	failed   bool
	kinds    map[string]int64
	sample   *Sample
}

func (e *Evaluator) record(slot abi.Slot, c *candidate, o outcome) {
	s := &e.slots[slot]
	s.mu.Lock()
	if s.cand.Load() != c {
		s.mu.Unlock()
		return
	}
	switch {
	case o.failed:
		s.st.Decisions++
		s.st.Errors++
	default:
		s.st.Decisions += int64(o.agree + o.disagree)
		s.st.Disagreements += int64(o.disagree)
	}
	for k, v := range o.kinds {
		if s.st.Kinds == nil {
			s.st.Kinds = map[string]int64{}
		}
		s.st.Kinds[k] += v
	}
	if o.sample != nil {
		o.sample.Time = e.now()
		if len(s.st.Samples) < MaxSamples {
			s.st.Samples = append(s.st.Samples, *o.sample)
		} else {
			s.st.Samples[s.ring] = *o.sample
			s.ring = (s.ring + 1) % MaxSamples
		}
	}
	s.mu.Unlock()
	switch {
	case o.failed:
		e.rec.ShadowDecision(slot, c.name, ResultError, 1)
	default:
		if o.agree > 0 {
			e.rec.ShadowDecision(slot, c.name, ResultAgree, o.agree)
		}
		if o.disagree > 0 {
			e.rec.ShadowDecision(slot, c.name, ResultDisagree, o.disagree)
		}
	}
}

// failure is the outcome of a failed shadow call; cas is the decision's
// case.
func failure(pod, event, active, cas string, err error) outcome {
	msg := "failed (answered by the native default)"
	if err != nil {
		msg = "failed: " + err.Error()
	}
	return outcome{failed: true, sample: &Sample{Pod: pod, Event: event, Active: active, Shadow: msg, Kind: kindError, Case: cas}}
}

func podName(p abi.PodView) string { return p.Namespace() + "/" + p.Name() }

func clonePod(p abi.PodView) abi.PodView {
	v, err := abi.ReadPod(append([]byte(nil), p.Bytes()...))
	if err != nil {
		panic(fmt.Sprintf("shadow: copying a pod record the host built: %v", err)) // a host bug
	}
	return v
}
