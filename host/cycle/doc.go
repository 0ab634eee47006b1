// Package cycle is wasmsched's scheduling cycle: it pops an entity from the
// queue, filters and scores the nodes of a fresh cache snapshot with the
// profile's native plugins (WithBuilt: what host/framework's Registry.Build
// made of the profile's configuration), assumes the chosen
// placement in the cache, and binds through the pods/binding subresource
// asynchronously, handing the pod back to the queue when the binding is
// done. It mirrors upstream kube-scheduler v1.37's ScheduleOne
// (schedule_one.go).
//
// A pod that fits nowhere gets what upstream gives it: a FailedScheduling
// event, the PodScheduled=False condition with a message counting the nodes
// each filter rejected, and a requeue that names the rejecting plugins, so
// the QueueingHint slot can bring it back when a cluster event may help.
//
// A pod held before the queue (a gang below quorum, a claim not created
// yet, a PreEnqueue module's hold) says why in the same condition:
// HeldWriter writes the holder and its message as the queue notifies them,
// and removes them when the pod enters the queue.
//
// A pod group popped as one entity is placed against its quorum, as
// upstream's pod-group cycle does: each member is placed on the snapshot in
// turn, and when the group's members already bound plus those placed reach
// minCount (a gang's spec.schedulingPolicy.gang.minCount, KEP-4671; 1 for a
// basic group), the placed members are assumed and bound and a member that
// did not fit waits on its own; otherwise none is bound and the group may
// preempt.
//
// # Notes
//
//   - A binding that fails is forgotten in the cache and the pod is requeued
//     as failed with an error, unless the informer already shows the pod
//     bound (a 409 because someone bound it) or gone: then it is handed back
//     with Done and never bound twice.
//   - The condition patch and the event are sent off the cycle's goroutine:
//     the cycle never waits for the apiserver except to read the snapshot.
//   - A pod or pod group that fits nowhere may preempt (WithPreemption):
//     host/preempt chooses the victims on the snapshot (KEP-902,
//     KEP-5710's victim order through the victim-order slot, installed with
//     SetVictimOrder; candidate nodes dry-run in parallel), and this package
//     actuates the choice asynchronously, as upstream's
//     SchedulerAsyncPreemption: the nomination, the DisruptionTarget
//     condition, the evictions and the events are written by a goroutine
//     while the preemptor is held in the queue (queue.Hold), and the cycle
//     goes on with other pods. The hold ends when the writes are done; a
//     failed eviction withdraws the nomination and activates the preemptor.
//   - Metrics under upstream's names (Recorder): attempts, the SLI,
//     preemption evaluation and execution, the extension points of every
//     cycle, and the plugins one by one in a sampled 10% of the cycles
//     (WithBuilt's profile has a timed copy of the profile for those, so
//     the other cycles pay nothing; a sampled cycle times the first 32
//     Filter calls of each plugin). Scores are timed per call, which
//     scores every feasible node (upstream times each node); PreScore's
//     time is inside the Score extension point.
package cycle
