// Package logic is the policy of the gangpreempt module, in pure Go so that
// it builds natively (tests, the host's benchmarks) and under TinyGo (the
// module):
//
//   - [PreEnqueue] is gang quorum (KEP-4671): a pod of a PodGroup waits
//     outside the scheduling queues until at least the group's minCount pods
//     exist, as upstream's GangScheduling plugin does in PreEnqueue.
//   - [MoreImportant] is workload-aware victim importance (KEP-5710), as
//     upstream's MoreImportantVictim: the most important victim is preempted
//     last and reprieved first.
//
// # Notes
//
// The pod record cannot tell a PodGroup the scheduler has not seen from one
// with the basic (non-gang) policy: the host encodes both as minCount 0.
// PreEnqueue takes 0 to mean "not seen" and holds the pod, as upstream does
// while the PodGroup object does not exist; see [PreEnqueue].
package logic
