// Package cache is the scheduler's view of the cluster: node infos with the
// pods assigned to them and what those pods request, assumed pods (placed by
// the scheduler, binding not yet confirmed by the informer), and the
// per-cycle snapshot the scheduling cycle filters and scores against.
//
// It mirrors upstream kube-scheduler v1.37 (pkg/scheduler/backend/cache and
// framework.NodeInfo) for the parts wasmsched uses.
//
// # Pods
//
// A pod enters the cache either from the informer (AddPod: bound) or from
// the scheduler (AssumePod: placed, binding not sent or not confirmed). An
// assumed pod leaves that state when the informer adds it (confirmed, on
// whatever node the binding went to), when the binder forgets it (ForgetPod),
// when it is deleted (RemovePod), or when it expires: FinishBinding starts a
// TTL (WithAssumedTTL, 30 s) and Run drops a pod still unconfirmed after it.
//
// # Snapshots
//
// Every change to a node info gives it a new generation from a process-wide
// counter and moves it to the head of a list ordered by change, so
// UpdateSnapshot copies only the node infos newer than the snapshot and
// stops at the first one that is not. The copies are immutable and shared:
// the cache makes one clone per node change, whatever the number of
// snapshots, and an unchanged node keeps its node info, pointer for pointer.
// Snapshot.Assume and Snapshot.Forget, which a pod-group cycle uses to place
// members one by one, therefore clone a node on its first change in a
// snapshot; the next UpdateSnapshot puts the shared node info back.
//
// # Notes
//
// Deviations from upstream, each on purpose:
//
//   - Assumed pods expire by default (see WithAssumedTTL); upstream v1.37
//     never expires them.
//   - Used host ports are counted per pod, so two pods with the same port
//     (possible when one was assumed over a stale view) release it only when
//     both are gone; upstream's HostPortInfo is a set and frees it on the
//     first removal.
//   - PodInfo.NonZero holds every resource of Requests (cpu and memory
//     defaulted); upstream's non-zero sums hold cpu and memory only.
//   - A pod updated or removed on another node than the cache has it on is
//     logged and moved or removed; upstream exits the process.
//   - Snapshot.List is sorted by node name; upstream interleaves zones.
//   - Pod group states are not kept here. The snapshot counts the nodes
//     per image and the pods per claim (upstream's usedPVCRefCounts)
//     lazily, on first use after a change (claims: after nodes came or
//     went; other changes update the counts), rather than at every update.
//   - Instead of upstream's lists of nodes with affinity pods, the snapshot
//     keeps indexes for InterPodAffinity and PodTopologySpread: the pods a
//     selector matches per node and topology domain (PodCounts) and the
//     distinct affinity terms of the pods with their carriers per domain
//     (AffinityTerms), built on first read and then kept up to date by
//     every change, so that a cycle does not walk every pod.
package cache
