// Package volume is the scheduler's volume binder: upstream v1.37's
// VolumeBinding binder (pkg/scheduler/framework/plugins/volumebinding
// binder.go and its passive assume caches) over the scheduler's
// PersistentVolume and PersistentVolumeClaim informers. host/framework's
// VolumeBinding plugin calls it at each extension point:
//
//	pc, err := b.Claims(pod)                    // PreFilter: sort the claims
//	found, reasons, err := b.FindPodVolumes(pod, pc, node) // Filter, per node
//	assumed, allBound, err := b.Assume(pod, node, found)   // Reserve
//	b.Revert(assumed)                           // Unreserve
//	err = b.Bind(ctx, assumedPod, assumed)      // PreBind: write, then wait
//
// # Assume caches
//
// The caches read the informers' stores in place; an assumed object (a PV
// with the claimRef a reserved pod will write, a claim with the
// selected-node annotation) shadows the version it was made from until the
// informer brings a newer one or the assumption is restored. Assuming a PV
// checks, atomically, that no other claim holds it in the cache, so two
// pods never get the same PV even when they were filtered concurrently.
// One pair of caches serves every profile of a scheduler (framework.Handle.Volumes builds it once).
//
// # Notes
//
//   - Bind waits on the caches' informer events (and a poll interval as a
//     fallback), not on API reads.
//   - Without node and pod listers (Options.Nodes, Options.Pods) Bind checks
//     the PVs' node affinity against the node the pod was filtered on and
//     does not notice a deleted pod before the timeout.
package volume
