// Package metrics owns every Prometheus collector of wasmsched. Subsystems see
// small recorder interfaces (such as policy.Recorder); only this package
// registers collectors, on a Registerer it is given.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
)

var _ policy.Recorder = (*Policy)(nil)

// Policy records the Wasm policy slots' calls, failures, fallbacks, module
// swaps and circuit breakers.
type Policy struct {
	// Per-slot children are bound once: Called sits on per-pod paths.
	calls       [len(abi.Slots)]prometheus.Counter
	fallbacks   [len(abi.Slots)]prometheus.Counter
	durations   [len(abi.Slots)]prometheus.Observer
	trips       [len(abi.Slots)]prometheus.Counter
	breakerOpen [len(abi.Slots)]prometheus.Gauge
	errors      *prometheus.CounterVec
	swaps       *prometheus.CounterVec

	mu          sync.Mutex // guards errorsByKey
	errorsByKey map[errorKey]prometheus.Counter
}

type errorKey struct {
	slot   abi.Slot
	reason string
}

// NewPolicy creates and registers the policy collectors.
func NewPolicy(reg prometheus.Registerer) (*Policy, error) {
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_policy_calls_total",
		Help: "Calls into policy modules, by slot.",
	}, []string{"slot"})
	fallbacks := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_policy_fallbacks_total",
		Help: "Decisions answered by a slot's native default because its module failed (filter, score: decided by the slot's failure policy), by slot.",
	}, []string{"slot"})
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "wasmsched_policy_call_duration_seconds",
		Help:    "Duration of batched policy calls (QueueingHint, victim order), by slot.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12), // 1 us .. ~4 s
	}, []string{"slot"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_policy_errors_total",
		Help: "Failed policy calls, by slot and reason (trap, deadline, guest_error, bad_output, exit, instantiate).",
	}, []string{"slot", "reason"})
	swaps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_policy_swaps_total",
		Help: "Attempts to load a policy module into a slot, by slot and result (success, or why it was refused: invalid, slot, sha256, smoke, closed, unwired).",
	}, []string{"slot", "result"})
	trips := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_policy_breaker_trips_total",
		Help: "Times a slot's circuit breaker opened after repeated failures of its module, by slot.",
	}, []string{"slot"})
	open := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "wasmsched_policy_breaker_open",
		Help: "1 while a slot's circuit breaker is open (its native default answers without calling the module, until a module is loaded), else 0; by slot.",
	}, []string{"slot"})
	for _, c := range []prometheus.Collector{calls, fallbacks, durations, errs, swaps, trips, open} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	p := &Policy{errors: errs, swaps: swaps, errorsByKey: map[errorKey]prometheus.Counter{}}
	for _, s := range abi.Slots {
		p.calls[s] = calls.WithLabelValues(s.String())
		p.fallbacks[s] = fallbacks.WithLabelValues(s.String())
		p.durations[s] = durations.WithLabelValues(s.String())
		p.trips[s] = trips.WithLabelValues(s.String())
		p.breakerOpen[s] = open.WithLabelValues(s.String())
	}
	return p, nil
}

func (p *Policy) Called(s abi.Slot) {
	if int(s) < len(p.calls) {
		p.calls[s].Inc()
	}
}

func (p *Policy) FellBack(s abi.Slot, n int) {
	if int(s) < len(p.fallbacks) {
		p.fallbacks[s].Add(float64(n))
	}
}

func (p *Policy) Observe(s abi.Slot, d time.Duration) {
	if int(s) < len(p.durations) {
		p.durations[s].Observe(d.Seconds())
	}
}

// Failed counts the failure; logging err is the caller's business.
func (p *Policy) Failed(s abi.Slot, reason string, _ error) {
	k := errorKey{s, reason}
	p.mu.Lock()
	c, ok := p.errorsByKey[k]
	if !ok {
		c = p.errors.WithLabelValues(s.String(), reason)
		p.errorsByKey[k] = c
	}
	p.mu.Unlock()
	c.Inc()
}

// Swapped counts a load attempt; a successful one closes the slot's breaker
// (the new module comes with a new one).
func (p *Policy) Swapped(s abi.Slot, result string) {
	p.swaps.WithLabelValues(s.String(), result).Inc()
	if result == "success" && int(s) < len(p.breakerOpen) {
		p.breakerOpen[s].Set(0)
	}
}

// BreakerTripped counts the trip and marks the slot's breaker open.
func (p *Policy) BreakerTripped(s abi.Slot) {
	if int(s) < len(p.trips) {
		p.trips[s].Inc()
		p.breakerOpen[s].Set(1)
	}
}
