package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/host/queue"
)

var _ queue.Recorder = (*Queue)(nil)

// Queue records the scheduling queue's metrics under upstream
// kube-scheduler's names and labels (scheduler_pending_pods,
// scheduler_queued_entities, scheduler_queue_incoming_pods_total,
// scheduler_inflight_events), plus
// wasmsched_queue_inflight_overflows_total for the in-flight cap,
// wasmsched_queue_flush_rescues_total for the wake-ups no event delivered
// and wasmsched_preenqueue_held_pods for the pods held before the queue
// (HeldPods, kept by cycle.HeldWriter).
type Queue struct {
	// The queue labels are known: their children are bound once, and the
	// map is read-only after NewQueue.
	pending    map[string]prometheus.Gauge
	pendingVec *prometheus.GaugeVec
	entities   map[[2]string]prometheus.Gauge // by queue, kind
	entityVec  *prometheus.GaugeVec
	incoming   *prometheus.CounterVec
	inflight   *prometheus.GaugeVec
	overflows  prometheus.Counter
	rescues    *prometheus.CounterVec
	held       *prometheus.GaugeVec

	mu            sync.Mutex // guards the caches below
	incomingByKey map[[2]string]prometheus.Counter
	inflightByKey map[string]prometheus.Gauge
}

// NewQueue creates and registers the queue collectors.
func NewQueue(reg prometheus.Registerer) (*Queue, error) {
	pending := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "scheduler_pending_pods",
		Help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; " +
			"'unschedulable' means number of pods in unschedulableEntities that the scheduler attempted to schedule and failed; " +
			"'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated; " +
			"'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.",
	}, []string{"queue"})
	entities := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "scheduler_queued_entities",
		Help: "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' stands for individual pods that are not members of any podgroup) by the queue type. " +
			"'active' means number of entities in activeQ; 'backoff' means number of entities in backoffQ; " +
			"'unschedulable' means number of entities in unschedulableEntities that the scheduler attempted to schedule and failed; " +
			"'gated' is the number of unschedulable entities that the scheduler never attempted to schedule because they are gated.",
	}, []string{"queue", "type"})
	incoming := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "scheduler_queue_incoming_pods_total",
		Help: "Number of pods added to scheduling queues by event and queue type.",
	}, []string{"queue", "event"})
	inflight := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "scheduler_inflight_events",
		Help: "Number of events currently tracked in the scheduling queue.",
	}, []string{"event"})
	overflows := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wasmsched_queue_inflight_overflows_total",
		Help: "Times the scheduling queue reached its in-flight event cap and dropped the recorded events (the pods then in flight are requeued when they fail).",
	})
	rescues := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wasmsched_queue_flush_rescues_total",
		Help: "Pods scheduled by the attempt that the periodic flush of unschedulable pods (podMaxInUnschedulablePodsDuration), " +
			"not an event, brought, by profile and by each plugin that had rejected them: wake-ups some event or QueueingHint " +
			"should have delivered. Expected to stay 0.",
	}, []string{"profile", "plugin"})
	held := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "wasmsched_preenqueue_held_pods",
		Help: "Number of pods held before the scheduling queue, by profile and by the PreEnqueue plugin holding them " +
			"(SchedulingGates, DynamicResources, DefaultPreemption, or the name the PreEnqueue policy module gives).",
	}, []string{"profile", "holder"})
	for _, c := range []prometheus.Collector{pending, entities, incoming, inflight, overflows, rescues, held} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	q := &Queue{
		pending: map[string]prometheus.Gauge{}, pendingVec: pending, incoming: incoming, inflight: inflight,
		entities: map[[2]string]prometheus.Gauge{}, entityVec: entities,
		overflows: overflows, rescues: rescues, held: held, incomingByKey: map[[2]string]prometheus.Counter{}, inflightByKey: map[string]prometheus.Gauge{},
	}
	for _, l := range []string{queue.QueueActive, queue.QueueBackoff, queue.QueueUnschedulable, queue.QueueGated,
		queue.QueuePending, queue.QueueIncomplete} {
		q.pending[l] = pending.WithLabelValues(l)
	}
	for _, l := range []string{queue.QueueActive, queue.QueueBackoff, queue.QueueUnschedulable, queue.QueueGated} {
		for _, kind := range []string{queue.EntityPod, queue.EntityPodGroup} {
			q.entities[[2]string{l, kind}] = entities.WithLabelValues(l, kind)
		}
	}
	q.inflightByKey[queue.EventPodPopped] = inflight.WithLabelValues(queue.EventPodPopped)
	return q, nil
}

// PendingPods adds delta to scheduler_pending_pods{queue}.
func (q *Queue) PendingPods(queue string, delta int) {
	g, ok := q.pending[queue]
	if !ok {
		g = q.pendingVec.WithLabelValues(queue)
	}
	g.Add(float64(delta))
}

// QueuedEntities adds delta to scheduler_queued_entities{queue,type}.
func (q *Queue) QueuedEntities(queue, kind string, delta int) {
	g, ok := q.entities[[2]string{queue, kind}]
	if !ok {
		g = q.entityVec.WithLabelValues(queue, kind)
	}
	g.Add(float64(delta))
}

// IncomingPods adds n to scheduler_queue_incoming_pods_total{queue,event}.
func (q *Queue) IncomingPods(queue, event string, n int) {
	k := [2]string{queue, event}
	q.mu.Lock()
	c, ok := q.incomingByKey[k]
	if !ok {
		c = q.incoming.WithLabelValues(queue, event)
		q.incomingByKey[k] = c
	}
	q.mu.Unlock()
	c.Add(float64(n))
}

// InFlightEvents adds delta to scheduler_inflight_events{event}.
func (q *Queue) InFlightEvents(event string, delta int) {
	q.mu.Lock()
	g, ok := q.inflightByKey[event]
	if !ok {
		g = q.inflight.WithLabelValues(event)
		q.inflightByKey[event] = g
	}
	q.mu.Unlock()
	g.Add(float64(delta))
}

// InFlightOverflow counts wasmsched_queue_inflight_overflows_total.
func (q *Queue) InFlightOverflow() { q.overflows.Inc() }

// FlushRescue counts wasmsched_queue_flush_rescues_total{profile,plugin}.
func (q *Queue) FlushRescue(profile, plugin string) { q.rescues.WithLabelValues(profile, plugin).Inc() }

// HeldPods adds delta to wasmsched_preenqueue_held_pods{profile,holder}.
func (q *Queue) HeldPods(profile, holder string, delta int) {
	q.held.WithLabelValues(profile, holder).Add(float64(delta))
}
