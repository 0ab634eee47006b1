// Package podview turns Kubernetes objects into the records a policy reads
// (abi.Pod, abi.Node, abi.PodGroup, abi.Victim, abi.Event) and classifies
// informer updates into abi.ActionType bits the way upstream kube-scheduler
// classifies them into cluster events.
//
// It is the one place where the host decides what a policy sees of a v1
// object, so every record is derived the same way: maps become lists sorted
// by key (equal objects encode to equal bytes), cpu is in millicores and every
// other resource in base units, and a pod's requests are the effective
// requests upstream schedules with (init containers, sidecars, overhead and
// pod-level resources included). The package holds no state: callers (the
// queue, the cache, preemption) pass in what only they know, such as a pod's
// queue state, a node's requested resources or a group's known members.
//
// # Notes
//
// Values the ABI has no name for. abi.SelectorOperator starts at 1, so a node
// selector requirement with an operator the ABI does not know keeps its key
// and values and is encoded with operator 0, which no policy recognises and
// which therefore never matches. The toleration, taint-effect and protocol
// enums use 0 for a real value, so an unknown value there (for example the
// toleration operators Lt and Gt of k8s.io/api v0.37) is encoded as the
// all-ones value of its enum (0xFFFFFFFF); a policy comparing against the
// named constants sees it match nothing. Dropping the entry instead would
// misrepresent the object. (These sentinels belong in abi/ once the contract
// names them; until then they are unexported here.)
//
// Times are Unix nanoseconds and 0 when unset: a victim that has not started
// has StartTime 0, where upstream uses "now"; a policy that orders by start
// time must rank 0 as the latest start (host/policy's native order does).
//
// Update classification is upstream's (pkg/scheduler/framework/events.go,
// v1.37) with the deviations listed on [PodUpdateActions] and
// [NodeUpdateActions]: upstream's UpdatePodScaleUp and
// UpdateNodePreemptionPolicy are reported as abi.ActionUpdateOther (a
// status.declaredFeatures change is abi.ActionUpdateNodeDeclaredFeature, as
// upstream's UpdateNodeDeclaredFeature), and updates that change nothing but
// status or bookkeeping metadata classify as 0 (no event).
package podview
