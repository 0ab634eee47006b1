// Package preempt holds the preemption algorithms of wasmsched: which pods
// to evict so that a pod (Pod) or the pending members of a pod group (Group)
// can be placed. It is pure computation over a cache.Snapshot: it reads the
// snapshot, never changes it, and makes no API call. The caller (the
// scheduling cycle) actuates the result: it sets status.nominatedNodeName,
// adds the DisruptionTarget condition, deletes the victims and records the
// events and metrics.
//
// It mirrors upstream kube-scheduler v1.37.1 with GenericWorkload on and
// CompositePodGroup and PodGroupPreemptionPolicy off:
//
//   - Pod is DefaultPreemption's PostFilter
//     (framework/preemption/preemption.go Evaluator.evaluate, findCandidates,
//     DryRunPreemption, SelectCandidate, pickOneNodeForPreemption;
//     plugins/defaultpreemption SelectVictimsOnNode,
//     PodEligibleToPreemptOthers, calculateNumCandidates).
//   - Group is PodGroupPostFilter (framework/preemption/podgrouppreemption.go
//     PodGroupEvaluator.Preempt and selectVictimsOnDomain, KEP-5710).
//   - Victims are built like getCrossNodesVictims and NewPodVictim
//     (framework/preemption/types.go), PDB violations are counted like
//     FilterVictimsWithPDBViolation (util.go).
//
// # Victims
//
// A victim is what is preempted or reprieved as one. A pod that names no
// pod group is a victim of its own, with its own priority. A pod whose
// PodGroup has DisruptionMode all makes, with every pod of that group in the
// snapshot (on any node), one victim with the group's priority. A pod of a
// group with DisruptionMode single (or whose PodGroup is not known) is a
// victim of its own with the group's priority (its own when the PodGroup is
// not known); like upstream's NewPodVictim, which gives such a pod the
// PodGroup key type, the victim-order slot sees it as abi.VictimGroup with
// one member, the pod's UID and name, so that at equal priority it ranks
// above a pod that belongs to no group. Without Input.Group, pod groups are
// ignored altogether (upstream with GenericWorkload off).
//
// A preemptor never evicts a victim whose priority is not lower than its own
// (the pod's priority for Pod, the PodGroup's for Group).
//
// Victims are always ordered through the victim-order slot (Input.Order),
// which may be a user's Wasm module. The slot is given each victim with
// PDBViolating set when evicting that victim alone would violate a
// PodDisruptionBudget; the violating/non-violating split itself is then
// computed in the slot's order, as upstream computes it in
// MoreImportantVictim order, budgets decremented victim by victim.
//
// # Nominated pods
//
// Pods nominated to a node (Input.Nominated) that are not bound yet hold
// room there: when a preemptor is checked on a node, the nominated pods of
// priority (pod priority) greater than or equal to the preemptor's are on it,
// as upstream's RunFilterPluginsWithNominatedPods adds them. The preemptor
// itself is left out, and so is a nominated pod already on the node (an
// assumed pod the caller did not withdraw). In Group, a member's own
// nomination counts for the other members until that member is placed
// (upstream's assume withdraws a nomination), in the placement pass and
// again in each reprieve check; upstream, whose revert puts the
// nominations back, counts a member placed in a reprieve check twice
// (its pod and its nomination), which Group does not.
// Upstream also checks the node without the nominated pods; that only
// matters to filters a pod's presence can satisfy (inter-pod affinity), and
// wasmsched's filters only get stricter with more pods.
//
// # Notes
//
// Deviations from upstream, each on purpose:
//
//   - Candidate nodes are dry-run from offset Input.Rand.IntN (0 without
//     Rand) in snapshot (node name) order, Input.Parallelism at once as
//     upstream's parallelizer, with upstream's early stop and candidate
//     count (10% of the nodes where preemption might help, at least 100).
//     The candidates found are then put back in dry-run order, so that the
//     choice does not depend on which goroutine finished first: it is the
//     sequential path's (Parallelism 0 or 1, which tests use) whenever every
//     potential node is dry-run, i.e. up to 100 of them.
//   - The last tie of pickOneNodeForPreemption goes to the first candidate in
//     dry-run order; upstream's goes to the first in Go map order (random).
//   - A victim that has not started counts as having started at the end of
//     time in the node choice's start-time rule (upstream: now), so two such
//     nodes tie instead of the later-evaluated one winning.
//   - Group places the members one by one on a copy of the snapshot in the
//     order given: each on the best-scoring feasible node (framework.Score,
//     ties to the first in node name order) among all nodes; upstream runs
//     its scheduling algorithm per member (adaptive sampling of feasible
//     nodes, round robin). As upstream's gang PlacementFeasible and
//     wasmsched's pod-group cycle, Group asks for the group's quorum, not
//     every member: minCount scheduled pods (1 for a basic group), the
//     group's pods already scheduled counting, placing as many members as
//     fit. See required.
package preempt
