package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/host/cycle"
)

var _ cycle.Recorder = (*Cycle)(nil)

// Cycle records the scheduling cycle's metrics under upstream
// kube-scheduler's names, labels and buckets, so dashboards built for
// upstream read wasmsched too.
type Cycle struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	sli      *prometheus.HistogramVec
	// Preemption is counted by the preemption code.
	preemptionAttempts prometheus.Counter
	preemptionVictims  prometheus.Histogram
	groupAttempts      *prometheus.CounterVec
	groupVictims       prometheus.Histogram
}

// NewCycle creates and registers the cycle collectors.
func NewCycle(reg prometheus.Registerer) (*Cycle, error) {
	c := &Cycle{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"result", "profile"}),
		sli: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_pod_scheduling_sli_duration_seconds",
			Help:    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"attempts"}),
		preemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now",
		}),
		preemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_preemption_victims",
			Help:    "Number of selected preemption victims",
			Buckets: prometheus.ExponentialBuckets(1, 2, 7),
		}),
	}
	// Upstream v1.37 names these scheduler_workload_preemption_*; the names
	// here are the ones wasmsched documents for pod groups.
	c.groupAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scheduler_podgroup_preemption_attempts_total",
		Help: "Preemption attempts initiated by pod groups, by result (Success, Unschedulable, Error).",
	}, []string{"result"})
	c.groupVictims = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "scheduler_podgroup_preemption_victims",
		Help:    "Number of pods preempted by one pod-group preemption.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	})
	for _, col := range []prometheus.Collector{c.attempts, c.duration, c.sli, c.preemptionAttempts, c.preemptionVictims,
		c.groupAttempts, c.groupVictims} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Attempt counts one scheduling attempt and observes its duration.
func (c *Cycle) Attempt(profile, result string, d time.Duration) {
	c.attempts.WithLabelValues(result, profile).Inc()
	c.duration.WithLabelValues(result, profile).Observe(d.Seconds())
}

// Scheduled observes a bound pod's scheduling SLI. From 15 attempts on,
// pods share one label value, as upstream bounds the label's cardinality.
func (c *Cycle) Scheduled(_ string, attempts int, sli time.Duration) {
	label := strconv.Itoa(attempts)
	if attempts >= 15 {
		label = "15+"
	}
	c.sli.WithLabelValues(label).Observe(sli.Seconds())
}

// Preemption counts one preemption attempt for a pod and, when it chose
// victims, observes how many.
func (c *Cycle) Preemption(victims int, found bool) {
	c.preemptionAttempts.Inc()
	if found {
		c.preemptionVictims.Observe(float64(victims))
	}
}

// GroupPreemption counts one preemption attempt for a pod group by result
// and, when it chose victims, observes how many pods.
func (c *Cycle) GroupPreemption(result string, victims int) {
	c.groupAttempts.WithLabelValues(result).Inc()
	if victims > 0 {
		c.groupVictims.Observe(float64(victims))
	}
}
