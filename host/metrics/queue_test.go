package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wasmsched/wasmsched/host/queue"
)

func TestQueueRecorder(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	q, err := NewQueue(reg)
	if err != nil {
		t.Fatal(err)
	}
	q.PendingPods(queue.QueueActive, 3)
	q.PendingPods(queue.QueueActive, -1)
	q.PendingPods(queue.QueueGated, 1)
	q.IncomingPods(queue.QueueActive, queue.EventUnscheduledPodAdd, 3)
	q.IncomingPods(queue.QueueActive, queue.EventPopFromBackoffQ, 1)
	q.IncomingPods(queue.QueueBackoff, "NodeAdd", 4)
	q.IncomingPods(queue.QueueBackoff, "NodeAdd", 1)
	q.InFlightEvents(queue.EventPodPopped, 2)
	q.InFlightEvents("NodeAdd", 5)
	q.InFlightEvents("NodeAdd", -5)
	q.InFlightEvents(queue.EventPodPopped, -2)
	q.InFlightOverflow()
	q.FlushRescue("wasmsched", "DynamicResources")
	q.FlushRescue("wasmsched", "DynamicResources")
	q.FlushRescue("other", "NodeAffinity")
	q.QueuedEntities(queue.QueueActive, queue.EntityPod, 2)
	q.QueuedEntities(queue.QueueActive, queue.EntityPodGroup, 1)
	q.QueuedEntities(queue.QueueActive, queue.EntityPod, -1)
	q.HeldPods("wasmsched", "GangScheduling", 1)
	q.HeldPods("wasmsched", "GangScheduling", 1)
	q.HeldPods("wasmsched", "HoldLabel", 1)
	q.HeldPods("wasmsched", "HoldLabel", -1)

	want := `
# HELP scheduler_inflight_events Number of events currently tracked in the scheduling queue.
# TYPE scheduler_inflight_events gauge
scheduler_inflight_events{event="NodeAdd"} 0
scheduler_inflight_events{event="PodPopped"} 0
# HELP scheduler_queue_incoming_pods_total Number of pods added to scheduling queues by event and queue type.
# TYPE scheduler_queue_incoming_pods_total counter
scheduler_queue_incoming_pods_total{event="NodeAdd",queue="backoff"} 5
scheduler_queue_incoming_pods_total{event="PopFromBackoffQ",queue="active"} 1
scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"} 3
# HELP wasmsched_queue_inflight_overflows_total Times the scheduling queue reached its in-flight event cap and dropped the recorded events (the pods then in flight are requeued when they fail).
# TYPE wasmsched_queue_inflight_overflows_total counter
wasmsched_queue_inflight_overflows_total 1
# HELP wasmsched_queue_flush_rescues_total Pods scheduled by the attempt that the periodic flush of unschedulable pods (podMaxInUnschedulablePodsDuration), not an event, brought, by profile and by each plugin that had rejected them: wake-ups some event or QueueingHint should have delivered. Expected to stay 0.
# TYPE wasmsched_queue_flush_rescues_total counter
wasmsched_queue_flush_rescues_total{plugin="DynamicResources",profile="wasmsched"} 2
wasmsched_queue_flush_rescues_total{plugin="NodeAffinity",profile="other"} 1
# HELP wasmsched_preenqueue_held_pods Number of pods held before the scheduling queue, by profile and by the PreEnqueue plugin holding them (SchedulingGates, DynamicResources, DefaultPreemption, or the name the PreEnqueue policy module gives).
# TYPE wasmsched_preenqueue_held_pods gauge
wasmsched_preenqueue_held_pods{holder="GangScheduling",profile="wasmsched"} 2
wasmsched_preenqueue_held_pods{holder="HoldLabel",profile="wasmsched"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"scheduler_inflight_events", "scheduler_queue_incoming_pods_total", "wasmsched_queue_inflight_overflows_total",
		"wasmsched_queue_flush_rescues_total", "wasmsched_preenqueue_held_pods"); err != nil {
		t.Error(err)
	}
	for l, v := range map[string]float64{queue.QueueActive: 2, queue.QueueGated: 1, queue.QueueBackoff: 0, queue.QueueIncomplete: 0} {
		if got := testutil.ToFloat64(q.pending[l]); got != v {
			t.Errorf("scheduler_pending_pods{queue=%q} = %v, want %v", l, got, v)
		}
	}
	for k, v := range map[[2]string]float64{{queue.QueueActive, queue.EntityPod}: 1, {queue.QueueActive, queue.EntityPodGroup}: 1,
		{queue.QueueGated, queue.EntityPod}: 0} {
		if got := testutil.ToFloat64(q.entities[k]); got != v {
			t.Errorf("scheduler_queued_entities{queue=%q,type=%q} = %v, want %v", k[0], k[1], got, v)
		}
	}
	if n := testutil.CollectAndCount(reg, "scheduler_queued_entities"); n != 8 {
		t.Errorf("scheduler_queued_entities: %d series, want one per queue and type (8)", n)
	}
	if n := testutil.CollectAndCount(reg, "scheduler_pending_pods"); n != 6 {
		t.Errorf("scheduler_pending_pods: %d series, want one per queue (6)", n)
	}
	if _, err := NewQueue(reg); err == nil {
		t.Error("registering the collectors twice on one registry: want an error")
	}
	// The queue and the policy collectors share a registry.
	if _, err := NewPolicy(reg); err != nil {
		t.Errorf("policy collectors next to the queue's: %v", err)
	}
}
