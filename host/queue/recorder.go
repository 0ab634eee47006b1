package queue

// Queue names, as they appear in the queue label of
// scheduler_pending_pods and scheduler_queue_incoming_pods_total (upstream's
// values).
const (
	QueueActive        = "active"
	QueueBackoff       = "backoff"
	QueueUnschedulable = "unschedulable"
	// QueueGated counts pods held by PreEnqueue (scheduling gates included)
	// that have not been attempted since.
	QueueGated = "gated"
	// QueuePending counts members of a pod group that arrived, or came back
	// from an attempt, while their group is in flight.
	QueuePending = "pending"
	// QueueIncomplete counts members of a pod group whose PodGroup object the
	// queue has not seen.
	QueueIncomplete = "incomplete"
)

// Entity kinds, as the type label of scheduler_queued_entities (upstream's
// values): a pod scheduled alone, or a pod group.
const (
	EntityPod      = "pod"
	EntityPodGroup = "podgroup"
)

// Event labels the queue uses for moves it makes itself (upstream's values).
// Cluster events are labelled by resource and action, e.g. "NodeAdd",
// "AssignedPodDelete", "NodeUpdateNodeLabel".
const (
	EventScheduleAttemptFailure = "ScheduleAttemptFailure"
	EventBackoffComplete        = "BackoffComplete"
	EventPopFromBackoffQ        = "PopFromBackoffQ"
	EventForceActivate          = "ForceActivate"
	EventUnschedulableTimeout   = "UnschedulableTimeout"
	EventUnscheduledPodAdd      = "UnscheduledPodAdd"
	// EventPodPopped labels the in-flight pods in scheduler_inflight_events.
	EventPodPopped = "PodPopped"
)

// Recorder observes the queue; host/metrics implements it with Prometheus
// collectors. Calls are made with the queue's locks held, so implementations
// must be quick and must not call back into the queue.
type Recorder interface {
	// PendingPods adds delta to the number of pods in queue (Queue*).
	PendingPods(queue string, delta int)
	// QueuedEntities adds delta to the number of entities of kind (Entity*)
	// in queue (QueueActive, QueueBackoff, QueueUnschedulable or
	// QueueGated).
	QueuedEntities(queue, kind string, delta int)
	// IncomingPods counts n pods entering queue because of event.
	IncomingPods(queue, event string, n int)
	// InFlightEvents adds delta to the in-flight entries labelled event:
	// cluster events recorded while pods are in flight, and the in-flight
	// pods themselves under EventPodPopped.
	InFlightEvents(event string, delta int)
	// InFlightOverflow counts a time the in-flight event cap was reached and
	// the recorded events were dropped (every in-flight pod is then treated
	// as if an event had made it schedulable).
	InFlightOverflow()
	// FlushRescue counts a pod of profile that was scheduled by the attempt
	// the unschedulable-leftover flush (podMaxInUnschedulablePodsDuration)
	// brought, not an event, once for each plugin that had rejected it:
	// a wake-up some event or QueueingHint should have delivered.
	FlushRescue(profile, plugin string)
}

// Discard is a Recorder that records nothing.
type Discard struct{}

func (Discard) PendingPods(string, int)            {}
func (Discard) QueuedEntities(string, string, int) {}
func (Discard) IncomingPods(string, string, int)   {}
func (Discard) InFlightEvents(string, int)         {}
func (Discard) InFlightOverflow()                  {}
func (Discard) FlushRescue(string, string)         {}
