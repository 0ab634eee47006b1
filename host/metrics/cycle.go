package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/host/cycle"
)

var _ cycle.Recorder = (*Cycle)(nil)

// Cycle records the scheduling cycle's metrics under upstream
// kube-scheduler's names, labels and buckets (v1.37.1,
// pkg/scheduler/metrics/metrics.go), so dashboards built for upstream read
// wasmsched too.
type Cycle struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	sli      *prometheus.HistogramVec
	// podAttempts is scheduler_pod_scheduling_attempts.
	podAttempts prometheus.Histogram

	// Preemption.
	preemptionAttempts prometheus.Counter
	preemptionVictims  prometheus.Histogram
	groupAttempts      *prometheus.CounterVec
	groupVictims       prometheus.Histogram
	disruptions        *prometheus.HistogramVec
	pdbViolations      *prometheus.CounterVec
	evaluation         *prometheus.HistogramVec
	execution          *prometheus.HistogramVec
	goroutines         *prometheus.CounterVec
	goroutinesDuration *prometheus.HistogramVec

	// Framework.
	extensionPoints *prometheus.HistogramVec
	plugins         *prometheus.HistogramVec

	mu  sync.RWMutex // guards eps
	eps map[[3]string]prometheus.Observer
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
		podAttempts: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_pod_scheduling_attempts",
			Help:    "Number of attempts to successfully schedule a pod.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 5),
		}),
		preemptionAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "scheduler_preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now",
		}),
		preemptionVictims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_preemption_victims",
			Help:    "Number of selected preemption victims",
			Buckets: prometheus.ExponentialBuckets(1, 2, 7),
		}),
		groupAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_workload_preemption_attempts_total",
			Help: "Total preemption attempts initiated by workload (including pod groups) in the cluster till now.",
		}, []string{"result"}),
		groupVictims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "scheduler_workload_preemption_victims",
			Help:    "Number of pod preemption victims caused by workload preemption.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		disruptions: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "scheduler_preemption_workload_disruptions",
			Help: "Number of workload preemption units being preempted. A single preemption unit can be all pods in a pod group " +
				"(in case of DisruptionMode=all), or a single pod (in case of DisruptionMode=single).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}, []string{"preemptor"}),
		pdbViolations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_preemption_pdb_violations_total",
			Help: "Total number of pod disruption budget violations caused by preemption.",
		}, []string{"preemptor"}),
		evaluation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_preemption_evaluation_duration_seconds",
			Help:    "Duration in seconds for identifying the target preemption victims.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"preemptor", "result"}),
		execution: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "scheduler_preemption_execution_duration_seconds",
			Help: "Duration in seconds for preempting the target preemption victims. " +
				"With async preemption enabled, preemption execution does not block the scheduling of other pods.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"preemptor", "result"}),
		goroutines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "scheduler_preemption_goroutines_execution_total",
			Help: "Number of preemption goroutines executed.",
		}, []string{"result"}),
		goroutinesDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_preemption_goroutines_duration_seconds",
			Help:    "(Deprecated since 1.37.0) Duration in seconds for running goroutines for the preemption.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"result"}),
		extensionPoints: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_framework_extension_point_duration_seconds",
			Help:    "Latency for running all plugins of a specific extension point.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
		}, []string{"extension_point", "status", "profile"}),
		plugins: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "scheduler_plugin_execution_duration_seconds",
			Help:    "Duration for running a plugin at a specific extension point.",
			Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
		}, []string{"plugin", "extension_point", "status"}),
		eps: map[[3]string]prometheus.Observer{},
	}
	for _, col := range []prometheus.Collector{c.attempts, c.duration, c.sli, c.podAttempts,
		c.preemptionAttempts, c.preemptionVictims, c.groupAttempts, c.groupVictims, c.disruptions, c.pdbViolations,
		c.evaluation, c.execution, c.goroutines, c.goroutinesDuration, c.extensionPoints, c.plugins} {
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

// Scheduled observes a bound pod's scheduling SLI and attempts. From 15
// attempts on, pods share one SLI label value, as upstream bounds the
// label's cardinality.
func (c *Cycle) Scheduled(_ string, attempts int, sli time.Duration) {
	label := strconv.Itoa(attempts)
	if attempts >= 15 {
		label = "15+"
	}
	c.sli.WithLabelValues(label).Observe(sli.Seconds())
	c.podAttempts.Observe(float64(attempts))
}

// Preempted records one preemption attempt as upstream does: a pod's in
// scheduler_preemption_attempts_total and, with victims,
// scheduler_preemption_victims; a pod group's in
// scheduler_workload_preemption_attempts_total{result} and
// scheduler_workload_preemption_victims; both in
// scheduler_preemption_evaluation_duration_seconds{preemptor,result}, and
// with victims in scheduler_preemption_workload_disruptions and
// scheduler_preemption_pdb_violations_total.
func (c *Cycle) Preempted(a cycle.PreemptionAttempt) {
	if a.Preemptor == cycle.PreemptorPod {
		c.preemptionAttempts.Inc()
		if a.Victims > 0 {
			c.preemptionVictims.Observe(float64(a.Victims))
		}
	} else {
		c.groupAttempts.WithLabelValues(a.Result).Inc()
		if a.Victims > 0 {
			c.groupVictims.Observe(float64(a.Victims))
		}
	}
	c.evaluation.WithLabelValues(a.Preemptor, a.Result).Observe(a.Duration.Seconds())
	if a.GroupDisruptions > 0 {
		c.disruptions.WithLabelValues(a.Preemptor).Observe(float64(a.GroupDisruptions))
	}
	if a.PDBViolations > 0 {
		c.pdbViolations.WithLabelValues(a.Preemptor).Add(float64(a.PDBViolations))
	}
}

// PreemptionWritten observes scheduler_preemption_execution_duration_seconds
// and counts scheduler_preemption_goroutines_execution_total (with its
// deprecated duration), as upstream's asynchronous preemption goroutine.
func (c *Cycle) PreemptionWritten(preemptor, result string, d time.Duration) {
	c.execution.WithLabelValues(preemptor, result).Observe(d.Seconds())
	c.goroutines.WithLabelValues(result).Inc()
	c.goroutinesDuration.WithLabelValues(result).Observe(d.Seconds())
}

// ExtensionPoint observes
// scheduler_framework_extension_point_duration_seconds. Children are bound
// once per label set, so a cycle's calls do not allocate.
func (c *Cycle) ExtensionPoint(profile, point, status string, d time.Duration) {
	k := [3]string{point, status, profile}
	c.mu.RLock()
	o, ok := c.eps[k]
	c.mu.RUnlock()
	if !ok {
		o = c.extensionPoints.WithLabelValues(point, status, profile)
		c.mu.Lock()
		c.eps[k] = o
		c.mu.Unlock()
	}
	o.Observe(d.Seconds())
}

// PluginObserver returns the observer of
// scheduler_plugin_execution_duration_seconds for one plugin, extension
// point and status; the cycle keeps it.
func (c *Cycle) PluginObserver(plugin, point, status string) func(time.Duration) {
	o := c.plugins.WithLabelValues(plugin, point, status)
	return func(d time.Duration) { o.Observe(d.Seconds()) }
}
