// Package queue is wasmsched's scheduling queue: it holds the pods waiting to
// be scheduled, hands them to the scheduling cycle one entity at a time, and
// decides when a pod that could not be scheduled is worth another attempt.
// It mirrors upstream kube-scheduler's PriorityQueue (v1.37,
// pkg/scheduler/backend/queue) because wasmsched is judged side by side with
// it; what upstream decides with plugins, the queue asks the policy slots
// (host/policy), natively or in Wasm.
//
// An entity is a pod, or a pod group (gang) whose members are scheduled
// together. It is in one of:
//
//   - activeQ: a heap ordered by the queue-sort slot, compared on native sort
//     keys when the slot computes them and with Less calls otherwise;
//   - backoffQ: two heaps. Entities backing off after an unschedulable attempt
//     are ordered by the backoff-sort slot, ties broken by the queue sort (with
//     the native defaults: KEP-5142's 1-second windows, priority inside a
//     window); entities backing off after an error are in expiry order;
//   - the unschedulable pool: entities rejected by plugins, waiting for an
//     event, and entities held by PreEnqueue (gated);
//   - in flight: popped, not yet handed back.
//
// Members of a pod group whose PodGroup object is unseen wait (incomplete), as
// do members that arrive or fail while their group is in flight (pending).
//
// The queue's inputs are Kubernetes objects and cluster events: Add, Update,
// Delete and Activate for unassigned pods; AddPodGroup, UpdatePodGroup,
// DeletePodGroup; MoveOnEvent for events built with host/podview, and
// MoveOnEventFor for an event that concerns only some pods (a freed
// nomination: those of lower or equal priority). Its
// consumer is the scheduling cycle: Pop, then Scheduled (bound), Done
// (dropped) or AddUnschedulableIfNotPresent (failed) for each popped pod, and
// AddAttemptedGroupIfNeeded for a popped group. Run drives the periodic
// flushes; Close ends them and unblocks Pop.
//
// # Policies
//
// PreEnqueue runs before an entity enters activeQ and, with popFromBackoffQ
// on (the default, as upstream's SchedulerPopFromBackoffQ), before it enters
// backoffQ; not again when it moves from backoffQ to activeQ. Scheduling
// gates are API semantics, not policy: a pod with spec.schedulingGates is held
// natively (plugin abi.PluginSchedulingGates) before the slot is asked, and
// requeued by the update that removes its last gate. Likewise a preemptor
// whose evictions are being written is held natively (Hold, until
// Release), gated by abi.PluginDefaultPreemption; the moves decided for it
// meanwhile are remembered and made at Release, so no event is lost to the
// hold (upstream reads the informer to cover that race instead).
//
// A cluster event becomes one batched call of the QueueingHint slot for the
// pods of the pool whose rejecting plugins registered a matching (resource,
// action); a pod with no rejecting plugin moves on any registered event. A
// plugin no registration names (a PreEnqueue module or a filter plugin the
// slot knows nothing of) is taken to care about every event, as upstream
// takes a plugin without EnqueueExtensions: its pods move on any event,
// without asking the slot. Otherwise an event nobody registered is
// dropped. Queue (or a hint error) sends the
// entity to backoffQ, or to activeQ if its backoff is over or a Pending
// plugin queued it. To tell a Pending plugin's Queue from the others' with
// one byte per pod, a pod rejected by both kinds is sent twice in the batch:
// once with only its pending plugins, once as it is.
//
// # In flight
//
// Events received while pods are in flight are recorded, interleaved with
// the pods, in arrival order (upstream's inFlightPods and inFlightEvents); a
// pod that comes back unschedulable replays the events recorded since it was
// popped through its hints, so an event during its cycle is not lost. The
// memory this takes is bounded by construction (see flight): every path out
// of flight (Done, AddUnschedulableIfNotPresent, Delete while in flight, a
// group member handed back, Close) releases the pod; an event no in-flight
// pod needs is dropped at once; and past a cap (WithMaxInFlightEvents,
// 10,000 by default, and 64 MiB) the recorded events are dropped and every
// pod in flight is requeued when it fails, as if a hint had said Queue.
// scheduler_inflight_events is 0 whenever nothing is in flight.
//
// # Concurrency
//
// Two mutexes, always taken in this order: Queue.mu serialises every
// operation but Pop, and Queue.amu guards the heaps, the in-flight tracker
// and the locations. Slow work (hint and PreEnqueue calls, encoding records)
// runs under mu alone on entities outside the heaps, so a Pop waits only for
// heap operations (and the re-encoding of a queued pod that was updated). Both backoff heaps change only under amu, and every change
// that can give Pop work broadcasts on its condition variable under amu, so
// the lost wakeup of kubernetes PR #139884 (an entity added to backoffQ while
// Pop waits on an empty activeQ) cannot happen; TestPopWakesOnBackoffAdd and
// TestHammer check it.
//
// # Notes
//
// Deliberate differences from upstream v1.37, each noted where it is made:
//
//   - Slots can be swapped while the queue runs (upstream's plugins are
//     fixed): swapping the queue-sort or backoff-sort slot re-sorts the heaps
//     under amu, so no Pop sees a half-sorted heap; a new PreEnqueue or
//     QueueingHint slot applies from the next decision.
//   - An event is one batched call with its whole ActionType bit set, where
//     upstream splits an update into one event per bit; the guest SDK matches
//     registrations by overlap, so a pod is queued if any bit queues it.
//     Event labels in the metrics join several bits with "|".
//   - The in-flight cap does not exist upstream; below it the behaviour is
//     upstream's.
//   - Adding a pod the queue already holds updates it, so a pod is never in
//     two places (upstream discards the duplicate at Pop, PR #127016); a pod
//     deleted while in flight is handed back at once, not when the cycle
//     notices (PR #126962).
//   - An update received while a pod is in flight is kept, and the pod comes
//     back with its newest object; upstream's cycle reads it from the
//     informer cache instead.
//   - Only the head of the unschedulable-backoff heap is considered for a pop
//     from backoffQ; if the backoff-sort slot vetoes it (MayPop), Pop waits.
//   - After Close, Pop returns ErrClosed even if entities remain.
//
// What the queue leaves to its callers: the informer handlers (host/cluster)
// skip updates of assumed pods, send Delete for pods bound elsewhere, call
// MoveOnEvent after Add for unscheduled pods and after the PodGroup
// methods, and build the queue with the cache's member count
// (WithGroupMembers); the pod-group cycle (host/cycle) hands each popped
// member back (Done or AddUnschedulableIfNotPresent), then the group
// (AddAttemptedGroupIfNeeded). Composite pod groups (alpha and off
// upstream) are not supported: a PodGroup is its own root.
//
// A group's member count in records (abi.PodView.GroupMembers) comes from
// WithGroupMembers (the scheduler cache) or else from the pods the queue
// holds. The ABI has no in-place patch for a record's group fields, so a
// change of count or PodGroup re-encodes the member records, lazily, before
// a slot reads them or the group enters a heap: a gang of n pods arriving
// one by one costs O(n) encodings per arrival while it is queued. An
// abi.SetPodGroupState (like abi.SetPodQueueState) would make that O(1).
package queue
