// Package cache is the scheduler's view of the cluster: node infos with the
// pods assigned to them and what those pods request, assumed pods (placed by
// the scheduler, binding not yet confirmed by the informer), and the
// per-cycle snapshot the scheduling cycle filters and scores against.
package cache
