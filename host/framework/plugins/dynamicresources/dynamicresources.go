// Package dynamicresources is upstream's DynamicResources plugin
// (pkg/scheduler/framework/plugins/dynamicresources) for a pod's own
// ResourceClaims and its DRA-backed extended resources, over host/dra:
// PreEnqueue, PreFilter, Filter (UnschedulableAndUnresolvable:
// ReasonClaimNotAvailable, ReasonCannotAllocateAll), Score (weight 2),
// Reserve, PreBind and PostFilter (deallocation).
package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/dra"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Upstream's DynamicResources reasons.
const (
	ReasonClaimNotAvailable  = "resourceclaim not available on the node"
	ReasonCannotAllocateAll  = "cannot allocate all claims"
	ReasonClaimInUse         = "resourceclaim in use"
	weightDynamicResources   = 2
	bindingConditionsPollGap = 5 * time.Second
)

// Errors PreBind's wait for binding conditions ends with (upstream's).
var (
	ErrDeviceBindingTimeout = errors.New("device binding timeout")
	ErrDeviceBindingFailed  = errors.New("device binding failed")
)

// dynamicResourcesArgs are DynamicResources' args, defaulted.
type dynamicResourcesArgs struct {
	filterTimeout, bindingTimeout time.Duration
}

var defaultDynamicResourcesArgs = dynamicResourcesArgs{filterTimeout: kschedv1.DynamicResourcesFilterTimeoutDefault,
	bindingTimeout: kschedv1.DynamicResourcesBindingTimeoutDefault}

// dynamicResources is upstream v1.37's DynamicResources plugin for a pod's
// own ResourceClaims, over host/dra's shared state and
// k8s.io/dynamic-resource-allocation's structured allocator: the pod's
// claims must exist (a claim from a template once the controller-manager
// has created it), not be being deleted, be owned by the pod when made from
// a template; an allocated claim's node selector must match the node; the
// others are allocated on each node by the allocator (DeviceClass
// selectors and config, exactly and firstAvailable requests, allocationMode
// All, constraints, admin access, device taints and DeviceTaintRules,
// partitionable devices, consumable capacity) within filterTimeout. The
// node's allocation is put in flight at Reserve, written at PreBind (the
// finalizer, then one status update with status.allocation and
// status.reservedFor), which then waits for the devices' binding
// conditions (bindingTimeout).
//
// Extension points: PreFilter (UnschedulableAndUnresolvable with upstream's
// texts), Filter (UnschedulableAndUnresolvable: ReasonClaimNotAvailable,
// ReasonCannotAllocateAll, the allocator's reason; Error on a filter
// timeout), Score (firstAvailable subrequests by order, weight 2), Reserve,
// Unreserve, PreBind, PostFilter (deallocation). Extended resources backed
// by DRA: see dynamicresources_extended.go. PreEnqueue (run natively by the
// queue) holds a pod whose claims are not there yet. Not yet: pod-group
// claims and their PodGroupPostFilter.
type dynamicResources struct {
	m                             *dra.Manager
	ext                           dra.ExtendedResources
	listers                       framework.Listers
	filterTimeout, bindingTimeout time.Duration
	// pollGap is the wait between binding-condition checks; now the clock
	// the binding timeout is measured with (tests set both).
	pollGap time.Duration
	now     func() time.Time
	// claims counts the claims created for extended resources.
	claims framework.ClaimRecorder
}

var (
	_ framework.PreFilterPlugin     = (*dynamicResources)(nil)
	_ framework.StatePreScorePlugin = (*dynamicResources)(nil)
	_ framework.ReservePlugin       = (*dynamicResources)(nil)
	_ framework.PreBindPlugin       = (*dynamicResources)(nil)
	_ framework.PostFilterPlugin    = (*dynamicResources)(nil)
	_ framework.PreEnqueuePlugin    = (*dynamicResources)(nil)
)

// newDynamicResources builds the plugin over h's listers and its DRA
// state, which every profile of the scheduler shares.
func newDynamicResources(h framework.Handle, a dynamicResourcesArgs) (*dynamicResources, error) {
	m, err := h.DRA()
	if err != nil {
		return nil, err
	}
	l := h.Listers()
	return &dynamicResources{m: m, ext: dra.NewExtendedResources(l.DeviceClasses), listers: l, filterTimeout: a.filterTimeout, bindingTimeout: a.bindingTimeout,
		pollGap: bindingConditionsPollGap, now: time.Now, claims: h.Claims()}, nil
}

func (*dynamicResources) Name() string { return abi.PluginDynamicResources }

// draFilter is the plugin's state for one pod: its claims and, per node
// the filter passed, the allocation of the claims to allocate there.
type draFilter struct {
	pl  *dynamicResources
	pod *v1.Pod
	// claims are the pod's claims in spec order (those intentionally not
	// created left out); availableOn the node selector of an allocated one.
	claims      []*resourceapi.ResourceClaim
	availableOn []*nodeaffinity.NodeSelector
	// toAllocate are the indexes of the unallocated claims; allocator is
	// nil when there are none.
	toAllocate []int
	allocator  structured.Allocator
	// ext are the pod's extended resources backed by DRA, nil if none.
	ext *draExtended

	// mu guards byNode and unavailable, written by Filter on parallel
	// goroutines; unavailable[i] is set when claims[i], allocated, ruled
	// out a node (PostFilter deallocates one of those).
	mu          sync.Mutex
	byNode      map[string]draNodeResult
	unavailable []bool

	// Set by Reserve and PreBind, read by Unreserve: on the cycle's and
	// then the pod's binding goroutine, one after the other.
	resMu sync.Mutex
	// allocations[i] is the allocation Reserve chose for claims[i], nil
	// for an allocated claim; inFlight the UIDs Reserve put in flight.
	allocations []*resourceapi.AllocationResult
	inFlight    []types.UID
	// extClaim is the node's claim for the extended resources with the
	// allocation Reserve chose, nil if none; extMappings its container
	// mappings; extCreated the claim PreBind created, which Unreserve
	// deletes.
	extClaim    *resourceapi.ResourceClaim
	extMappings []v1.ContainerExtendedResourceRequest
	extCreated  *resourceapi.ResourceClaim
}

// draNodeResult is what Filter found on a node: the allocations of the claims to
// allocate (toAllocate order), then of the node's claim for the extended
// resources (ext, with its container mappings) if it needs one.
type draNodeResult struct {
	allocs   []resourceapi.AllocationResult
	ext      *resourceapi.ResourceClaim
	mappings []v1.ContainerExtendedResourceRequest
}

// podClaims returns the claims of p's spec.resourceClaims that exist (a
// template's claim the controller chose not to create is left out), or
// upstream's rejection when one is not created yet, missing, being deleted
// or not the pod's own: upstream's foreachPodResourceClaim, shared by
// PreEnqueue and PreFilter.
func (pl *dynamicResources) podClaims(p *v1.Pod, get func(namespace, name string) (*resourceapi.ResourceClaim, error)) ([]*resourceapi.ResourceClaim, *framework.Status) {
	var claims []*resourceapi.ResourceClaim
	for i := range p.Spec.ResourceClaims {
		pc := &p.Spec.ResourceClaims[i]
		name, mustCheckOwner, err := resourceclaim.Name(p, pc)
		if err != nil {
			return nil, rejectDRA(err.Error())
		}
		if name == nil {
			continue
		}
		claim, err := get(p.Namespace, *name)
		if err != nil {
			return nil, rejectDRA(err.Error())
		}
		if claim.DeletionTimestamp != nil {
			return nil, rejectDRA(fmt.Sprintf("resourceclaim %q is being deleted", claim.Name))
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(p, claim, false); err != nil {
				return nil, rejectDRA(err.Error())
			}
		}
		claims = append(claims, claim)
	}
	return claims, nil
}

// PreEnqueue holds a pod back while one of its claims is not there to
// allocate (upstream's PreEnqueue: not created from its template yet,
// missing, being deleted, not the pod's): the pod waits in the queue,
// without an attempt or a FailedScheduling event, until the claim's or the
// pod's update moves it. Before the claim cache has synced it admits the
// pod, and PreFilter answers.
func (pl *dynamicResources) PreEnqueue(p *v1.Pod) *framework.Status {
	if len(p.Spec.ResourceClaims) == 0 || !pl.m.Synced() {
		return nil
	}
	_, st := pl.podClaims(p, pl.claim)
	return st
}

// claim is the claim as the plugin's cache has it (an assumed allocation
// included), or, when the cache has not seen it yet, as the informer's
// store has it: the queue hears of a new claim from its own handler on the
// informer, in no order with the cache's, and may hand the pod over before
// the cache has the claim.
func (pl *dynamicResources) claim(namespace, name string) (*resourceapi.ResourceClaim, error) {
	c, err := pl.m.Get(namespace, name)
	if err != nil && pl.listers.ResourceClaims != nil {
		if lc, lerr := pl.listers.ResourceClaims.ResourceClaims(namespace).Get(name); lerr == nil {
			return lc, nil
		}
	}
	return c, err
}

func rejectDRA(reason string) *framework.Status {
	return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginDynamicResources, Reasons: []string{reason}}
}

func errorDRA(err error) *framework.Status {
	return &framework.Status{Code: framework.Error, Plugin: abi.PluginDynamicResources, Err: err}
}

// PreFilter skips a pod without claims; otherwise it checks the pod's
// claims as upstream's PreFilter (and PreEnqueue, which wasmsched leaves to
// it) and prepares the allocator over the devices not taken.
func (pl *dynamicResources) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	p := pod.Pod
	ext, st := pl.preFilterExtended(pod)
	if st != nil {
		return nil, nil, st
	}
	if len(p.Spec.ResourceClaims) == 0 && ext == nil {
		return nil, nil, nil
	}
	if !pl.m.Synced() {
		return nil, nil, errorDRA(errors.New("the ResourceClaim and ResourceSlice caches are not synced yet"))
	}
	f := &draFilter{pl: pl, pod: p, ext: ext, byNode: map[string]draNodeResult{}}
	claims, st := pl.podClaims(p, pl.claim)
	if st != nil {
		return nil, nil, st
	}
	f.claims = claims
	if len(f.claims) == 0 && ext == nil {
		return nil, nil, nil
	}
	f.availableOn = make([]*nodeaffinity.NodeSelector, len(f.claims))
	f.allocations = make([]*resourceapi.AllocationResult, len(f.claims))
	for i, claim := range f.claims {
		if a := claim.Status.Allocation; a != nil {
			if !resourceclaim.CanBeReserved(claim) && !resourceclaim.IsReservedForPod(p, claim, false) {
				return nil, nil, rejectDRA(ReasonClaimInUse)
			}
			if a.NodeSelector != nil {
				ns, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil {
					return nil, nil, errorDRA(err)
				}
				f.availableOn[i] = ns
			}
			continue
		}
		if pl.m.InFlight(claim.UID) != nil {
			return nil, nil, rejectDRA(fmt.Sprintf("resource claim %s/%s is in the process of being allocated", claim.Namespace, claim.Name))
		}
		for _, r := range claim.Spec.Devices.Requests {
			switch {
			case r.Exactly != nil:
				if st := pl.checkClass(r.Exactly.DeviceClassName, r.Name); st != nil {
					return nil, nil, st
				}
			case len(r.FirstAvailable) > 0:
				for _, sub := range r.FirstAvailable {
					if st := pl.checkClass(sub.DeviceClassName, r.Name+"/"+sub.Name); st != nil {
						return nil, nil, st
					}
				}
			default:
				return nil, nil, rejectDRA(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, r.Name))
			}
		}
		f.toAllocate = append(f.toAllocate, i)
	}
	if len(f.toAllocate) > 0 || ext != nil {
		sl, err := pl.m.Slices()
		if err != nil {
			return nil, nil, errorDRA(err)
		}
		f.allocator, err = structured.NewAllocator(context.Background(), dra.Features, pl.m.AllocatedState(), pl.m.Classes(), sl, pl.m.CELCache())
		if err != nil {
			return nil, nil, errorDRA(err)
		}
	}
	return f, nil, nil
}

// checkClass is upstream's validateDeviceClass: a request must name a
// class, and a class that does not exist makes the pod wait for one.
func (pl *dynamicResources) checkClass(class, request string) *framework.Status {
	if class == "" {
		return errorDRA(fmt.Errorf("request %s: unsupported request type", request))
	}
	if _, err := pl.m.Classes().Get(class); apierrors.IsNotFound(err) {
		return rejectDRA(fmt.Sprintf("request %s: device class %s does not exist", request, class))
	}
	return nil
}

// Filter checks the allocated claims' node selectors and binding
// conditions on the node and allocates the others there, as upstream's.
func (f *draFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	node := ni.Node()
	var extClaim *resourceapi.ResourceClaim
	var mappings []v1.ContainerExtendedResourceRequest
	if f.ext != nil {
		var st *framework.Status
		if extClaim, mappings, st = f.ext.onNode(f.pod, ni); st != nil {
			return st
		}
	}
	var unavailable []int
	for i, claim := range f.claims {
		if ns := f.availableOn[i]; ns != nil && !ns.Match(node) {
			unavailable = append(unavailable, i)
			continue
		}
		if claim.Status.Allocation != nil {
			ready, err := claimReadyForBinding(claim)
			if err != nil || (!ready && f.pl.bindingTimedOut(claim)) {
				unavailable = append(unavailable, i)
			}
		}
	}
	var found []resourceapi.AllocationResult
	claims := make([]*resourceapi.ResourceClaim, 0, len(f.toAllocate)+1)
	for _, i := range f.toAllocate {
		claims = append(claims, f.claims[i])
	}
	if extClaim != nil {
		claims = append(claims, extClaim)
	}
	if len(claims) > 0 {
		ctx := context.Background()
		if f.pl.filterTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, f.pl.filterTimeout)
			defer cancel()
		}
		res, err := f.allocator.Allocate(ctx, node, claims)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			// Transient: an Error retries with backoff.
			return errorDRA(fmt.Errorf("node %s: timed out trying to allocate devices", node.Name))
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return rejectDRA(err.Error())
		case err != nil:
			return errorDRA(err)
		}
		if len(res) != len(claims) {
			return rejectDRA(ReasonCannotAllocateAll)
		}
		found = res
	}
	if len(unavailable) > 0 {
		f.mu.Lock()
		if f.unavailable == nil {
			f.unavailable = make([]bool, len(f.claims))
		}
		for _, i := range unavailable {
			f.unavailable[i] = true
		}
		f.mu.Unlock()
		return rejectDRA(ReasonClaimNotAvailable)
	}
	if f.allocator != nil {
		f.mu.Lock()
		f.byNode[node.Name] = draNodeResult{allocs: found, ext: extClaim, mappings: mappings}
		f.mu.Unlock()
	}
	return nil
}

// found is what Filter found on node; ok is false if it did not pass the
// node (or allocated nothing).
func (f *draFilter) found(node string) (res draNodeResult, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res, ok = f.byNode[node]
	return res, ok
}

// draFilterOf is the plugin's filter for the pod of ps, nil when it
// skipped the pod.
func draFilterOf(ps *framework.PodState) *draFilter {
	if ps == nil {
		return nil
	}
	f, _ := ps.PluginFilter(abi.PluginDynamicResources).(*draFilter)
	return f
}

// PreScore is never called: the profile calls PreScoreState.
func (pl *dynamicResources) PreScore(*cache.PodInfo, []*cache.NodeInfo, *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	return nil, nil
}

// PreScoreState scores a pod whose claims have firstAvailable requests
// from the allocations Filter found; the others score 0 everywhere, which
// changes nothing, so they are skipped.
func (pl *dynamicResources) PreScoreState(ps *framework.PodState, _ []*cache.NodeInfo) (framework.PodScorer, *framework.Status) {
	f := draFilterOf(ps)
	if f == nil || f.allocator == nil {
		return nil, nil
	}
	for _, c := range f.claims {
		for _, r := range c.Spec.Devices.Requests {
			if len(r.FirstAvailable) > 0 {
				return (*draScorer)(f), nil
			}
		}
	}
	return nil, nil
}

// draScorer is upstream's Score: for each firstAvailable request, the
// earlier the subrequest allocated on the node, the higher (8 minus its
// index), summed; normalised over the nodes.
type draScorer draFilter

func (s *draScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	f := (*draFilter)(s)
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() == nil {
			continue
		}
		found, ok := f.found(ni.Node().Name)
		if !ok {
			continue
		}
		scores[i] = f.score(found.allocs)
	}
}

func (s *draScorer) NormalizeScores(scores []int64) { framework.DefaultNormalizeScore(false, scores) }

// score scores an allocation found for the claims to allocate (in
// toAllocate order); allocated claims score by their allocation.
func (f *draFilter) score(found []resourceapi.AllocationResult) int64 {
	var score int64
	next := 0
	for _, claim := range f.claims {
		a := claim.Status.Allocation
		if a == nil {
			if next >= len(found) {
				return 0
			}
			a = &found[next]
			next++
		}
		for _, req := range claim.Spec.Devices.Requests {
			for i, sub := range req.FirstAvailable {
				ref := resourceclaim.CreateSubRequestRef(req.Name, sub.Name)
				if slices.ContainsFunc(a.Devices.Results, func(r resourceapi.DeviceRequestAllocationResult) bool { return r.Request == ref }) {
					score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
				}
			}
		}
	}
	return score
}

// Reserve puts the allocation Filter found on nodeName in flight, so that
// the next cycles leave its devices alone; a device another pod took
// meanwhile (a concurrent cycle) fails the pod's placement with an Error,
// retried with backoff.
func (pl *dynamicResources) Reserve(_ context.Context, ps *framework.PodState, _ *v1.Pod, nodeName string) *framework.Status {
	f := draFilterOf(ps)
	if f == nil || f.allocator == nil {
		return nil
	}
	node, ok := f.found(nodeName)
	n := len(f.toAllocate)
	if node.ext != nil {
		n++
	}
	if n == 0 {
		return nil // the node's device plugins provide the extended resources
	}
	found := node.allocs
	if !ok || len(found) != n {
		return errorDRA(errors.New("claim allocation not found for node"))
	}
	toReserve := make([]*resourceapi.ResourceClaim, 0, n)
	for _, i := range f.toAllocate {
		toReserve = append(toReserve, f.claims[i])
	}
	if node.ext != nil {
		toReserve = append(toReserve, node.ext)
	}
	claims := make([]*resourceapi.ResourceClaim, n)
	uids := make([]types.UID, n)
	for j, claim := range toReserve {
		c := claim.DeepCopy()
		if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
			c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
		}
		c.Status.Allocation = &found[j]
		claims[j], uids[j] = c, c.UID
	}
	f.resMu.Lock()
	defer f.resMu.Unlock()
	if err := pl.m.Reserve(claims); err != nil {
		return errorDRA(err)
	}
	for j, i := range f.toAllocate {
		f.allocations[i] = &found[j]
	}
	if node.ext != nil {
		f.extClaim, f.extMappings = claims[n-1], node.mappings
	}
	f.inFlight = uids
	return nil
}

// Unreserve takes the pod's allocations out of flight (and the assumed
// claims back to the informer's) and removes the pod from the reservedFor
// of the claims PreBind reserved, as upstream's. It does nothing when
// nothing was reserved, or a second time.
func (pl *dynamicResources) Unreserve(ctx context.Context, ps *framework.PodState, pod *v1.Pod, _ string) {
	f := draFilterOf(ps)
	if f == nil {
		return
	}
	f.resMu.Lock()
	defer f.resMu.Unlock()
	if f.inFlight != nil {
		pl.m.Release(f.inFlight...)
		for _, i := range f.toAllocate {
			pl.m.Restore(f.claims[i].Namespace, f.claims[i].Name)
		}
		f.inFlight = nil
	}
	if c := f.extCreated; c != nil {
		// Created by PreBind: leave no claim behind, as upstream's.
		pl.m.Restore(c.Namespace, c.Name)
		if pl.listers.Client != nil && pl.deleteClaim(ctx, c) == nil {
			pl.m.Forget(c) // the next attempt must not find it stale
		} // else: deleted at the pod's next attempt (PreFilter)
		f.extCreated = nil
	}
	for i, claim := range f.claims {
		if claim.Status.Allocation == nil || !resourceclaim.IsReservedForPod(pod, claim, false) || pl.listers.Client == nil {
			continue
		}
		// A strategic-merge patch removes the one entry without needing
		// the latest claim.
		patch := fmt.Sprintf(`{"metadata": {"uid": %q}, "status": { "reservedFor": [ {"$patch": "delete", "uid": %q} ] }}`, claim.UID, pod.UID)
		updated, err := pl.listers.Client.ResourceV1().ResourceClaims(claim.Namespace).Patch(ctx, claim.Name,
			types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
		if err == nil {
			f.claims[i] = updated
		} // else: retried when the pod is scheduled again
	}
}

// PreBindPreFlight has work for every pod with a claim or with extended
// resources backed by DRA, as upstream's (the claim may be reserved for
// the pod already: PreBind then only waits for its devices' binding
// conditions); Skip for one without.
func (pl *dynamicResources) PreBindPreFlight(_ context.Context, ps *framework.PodState, _ *v1.Pod, _ string) *framework.Status {
	if f := draFilterOf(ps); f == nil || (len(f.claims) == 0 && f.ext == nil) {
		return &framework.Status{Code: framework.Skip}
	}
	return nil
}

// PreBind writes each claim not yet reserved for the pod (its allocation
// if Reserve chose one, and the pod in reservedFor), then waits until the
// allocated devices' binding conditions hold, as upstream's.
func (pl *dynamicResources) PreBind(ctx context.Context, ps *framework.PodState, pod *v1.Pod, nodeName string) *framework.Status {
	f := draFilterOf(ps)
	if f == nil {
		return nil
	}
	if pl.listers.Client == nil {
		return errorDRA(errors.New("no API client to write the pod's ResourceClaims"))
	}
	f.resMu.Lock()
	var written []types.UID
	for i, claim := range f.claims {
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		updated, err := pl.bindClaim(ctx, claim, f.allocations[i], pod)
		if err != nil {
			f.resMu.Unlock()
			return errorDRA(err)
		}
		f.claims[i] = updated // Unreserve removes the pod from it
		if f.allocations[i] != nil {
			written = append(written, updated.UID)
		}
	}
	if f.extClaim != nil && f.extCreated == nil {
		if err := pl.bindExtendedClaim(ctx, f, pod); err != nil {
			f.resMu.Unlock()
			return errorDRA(err)
		}
		written = append(written, f.extClaim.UID)
	}
	f.resMu.Unlock()
	f.resMu.Lock()
	all := f.claims
	if f.extCreated != nil {
		all = append(slices.Clone(all), f.extCreated)
	}
	f.resMu.Unlock()
	if hasBindingConditions(all) {
		err := wait.PollUntilContextTimeout(ctx, pl.pollGap, pl.bindingTimeout, true, func(context.Context) (bool, error) {
			return pl.podReadyForBinding(f)
		})
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w: %w", ErrDeviceBindingTimeout, err)
		}
		if err != nil {
			return errorDRA(err)
		}
	}
	// Written and assumed: the claims seen now hold the devices, the
	// allocations leave flight, and Unreserve leaves the assumed claims.
	f.resMu.Lock()
	pl.m.Release(written...)
	f.inFlight = nil
	f.resMu.Unlock()
	return nil
}

// bindClaim is upstream's: on a copy of the latest claim (refetched after a
// conflict), the finalizer in a normal update when allocating, then one
// status update with the allocation and the pod in reservedFor. The
// updated claim is assumed so that the next cycles see it before the
// informer does.
func (pl *dynamicResources) bindClaim(ctx context.Context, claim *resourceapi.ResourceClaim, allocation *resourceapi.AllocationResult, pod *v1.Pod) (*resourceapi.ResourceClaim, error) {
	client := pl.listers.Client.ResourceV1().ResourceClaims(claim.Namespace)
	ref := resourceapi.ResourceClaimConsumerReference{APIGroup: v1.GroupName, Resource: "pods", Name: pod.Name, UID: pod.UID}
	claim = claim.DeepCopy()
	refresh := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if refresh {
			latest, err := client.Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get updated claim %s/%s after conflict: %w", claim.Namespace, claim.Name, err)
			}
			claim = latest
		}
		refresh = true
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("claim %s/%s got deleted in the meantime", claim.Namespace, claim.Name)
		}
		if allocation != nil {
			if claim.Status.Allocation != nil {
				return fmt.Errorf("claim %s/%s got allocated elsewhere in the meantime", claim.Namespace, claim.Name)
			}
			if !slices.Contains(claim.Finalizers, resourceapi.Finalizer) {
				claim.Finalizers = append(claim.Finalizers, resourceapi.Finalizer)
				updated, err := client.Update(ctx, claim, metav1.UpdateOptions{})
				if err != nil {
					return fmt.Errorf("add finalizer to claim %s/%s: %w", claim.Namespace, claim.Name, err)
				}
				claim = updated
			}
			claim.Status.Allocation = allocation.DeepCopy()
		}
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, ref)
		if claim.Status.Allocation == nil {
			return fmt.Errorf("claim %s/%s got deallocated elsewhere in the meantime", claim.Namespace, claim.Name)
		}
		if claim.Status.Allocation.AllocationTimestamp == nil {
			claim.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: pl.now()}
		}
		updated, err := client.UpdateStatus(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			if allocation != nil {
				return fmt.Errorf("add allocation and reservation to claim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			return fmt.Errorf("add reservation to claim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		claim = updated
		return nil
	})
	if err != nil {
		return nil, err
	}
	_ = pl.m.Assume(claim) // fails only when the informer already has a newer version
	return claim, nil
}

// podReadyForBinding is upstream's isPodReadyForBinding over the claims
// (and the one created for the extended resources) as the scheduler sees
// them now.
func (pl *dynamicResources) podReadyForBinding(f *draFilter) (bool, error) {
	f.resMu.Lock()
	n := len(f.claims)
	if f.extCreated != nil {
		n++
	}
	f.resMu.Unlock()
	for i := range n {
		f.resMu.Lock()
		c := f.extCreated
		if i < len(f.claims) {
			c = f.claims[i]
		}
		f.resMu.Unlock()
		claim, err := pl.m.Get(c.Namespace, c.Name)
		if err != nil {
			return false, err
		}
		f.resMu.Lock()
		if i < len(f.claims) {
			f.claims[i] = claim
		} else {
			f.extCreated = claim
		}
		f.resMu.Unlock()
		ready, err := claimReadyForBinding(claim)
		if err != nil {
			return false, err
		}
		if !ready {
			if pl.bindingTimedOut(claim) {
				return false, fmt.Errorf("%w: claim=%s", ErrDeviceBindingTimeout, claim.Name)
			}
			return false, nil
		}
	}
	return true, nil
}

// claimReadyForBinding is upstream's isClaimReadyForBinding: every binding
// condition of the allocated devices true and no failure condition true
// (an error wrapping ErrDeviceBindingFailed).
func claimReadyForBinding(claim *resourceapi.ResourceClaim) (bool, error) {
	if claim.Status.Allocation == nil {
		return false, nil
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		i := slices.IndexFunc(claim.Status.Devices, func(d resourceapi.AllocatedDeviceStatus) bool {
			return d.Device == r.Device && d.Driver == r.Driver && d.Pool == r.Pool
		})
		if i < 0 {
			return false, nil
		}
		conds := claim.Status.Devices[i].Conditions
		for _, c := range r.BindingFailureConditions {
			if fc := apimeta.FindStatusCondition(conds, c); fc != nil && fc.Status == metav1.ConditionTrue {
				return false, fmt.Errorf("%w: claim=%s, reason=%s, message=%q", ErrDeviceBindingFailed, claim.Name, fc.Reason, fc.Message)
			}
		}
		for _, c := range r.BindingConditions {
			if !apimeta.IsStatusConditionTrue(conds, c) {
				return false, nil
			}
		}
	}
	return true, nil
}

// bindingTimedOut is upstream's isClaimTimeout: a device with binding
// conditions allocated longer than bindingTimeout ago.
func (pl *dynamicResources) bindingTimedOut(claim *resourceapi.ResourceClaim) bool {
	a := claim.Status.Allocation
	if a == nil || a.AllocationTimestamp == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if r.BindingConditions != nil && a.AllocationTimestamp.Add(pl.bindingTimeout).Before(pl.now()) {
			return true
		}
	}
	return false
}

// hasBindingConditions reports whether an allocated device of claims has
// binding conditions.
func hasBindingConditions(claims []*resourceapi.ResourceClaim) bool {
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if len(r.BindingConditions) > 0 {
				return true
			}
		}
	}
	return false
}

// ReasonClaimDeallocated is PostFilter's reason after it deallocated a
// claim (upstream's).
const ReasonClaimDeallocated = "deallocation of ResourceClaim completed"

// PostFilter is upstream's: when an allocated claim of the pod ruled out a
// node (its allocation is for another node, or its devices' binding failed
// or timed out) and no other pod uses it (reservedFor empty or only this
// pod), the claim is deallocated in the API so that the next attempt can
// allocate it anew, and the pod stays Unschedulable with
// ReasonClaimDeallocated. One claim per attempt, the first in spec order
// (upstream picks one at random). Otherwise it is Unschedulable with no
// reason and changes nothing.
//
// Upstream's deletion of a claim created for the pod's extended resources
// by an earlier attempt is not here: PreFilter deletes such a claim
// (preFilterExtended), so it never reaches the filter.
func (pl *dynamicResources) PostFilter(ctx context.Context, ps *framework.PodState, pod *v1.Pod) *framework.Status {
	f := draFilterOf(ps)
	if f == nil {
		return &framework.Status{Code: framework.Unschedulable}
	}
	f.mu.Lock()
	unavailable := slices.Clone(f.unavailable)
	f.mu.Unlock()
	for i, claim := range f.claims {
		if i >= len(unavailable) || !unavailable[i] {
			continue
		}
		if r := claim.Status.ReservedFor; len(r) > 1 || len(r) == 1 && r[0].UID != pod.UID {
			continue
		}
		if err := pl.deallocate(ctx, claim); err != nil {
			return errorDRA(err)
		}
		return &framework.Status{Code: framework.Unschedulable, Reasons: []string{ReasonClaimDeallocated}}
	}
	return &framework.Status{Code: framework.Unschedulable}
}

// deallocate clears claim's reservedFor, allocation and device statuses
// with one status update, and makes the updated claim what the scheduler
// sees at once.
func (pl *dynamicResources) deallocate(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	if pl.listers.Client == nil {
		return errors.New("no API client to deallocate ResourceClaims with")
	}
	c := claim.DeepCopy()
	c.Status.ReservedFor, c.Status.Allocation, c.Status.Devices = nil, nil, nil
	updated, err := pl.listers.Client.ResourceV1().ResourceClaims(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("deallocate ResourceClaim %s/%s: %w", c.Namespace, c.Name, err)
	}
	_ = pl.m.Assume(updated) // fails only when the informer already has a newer version
	return nil
}

// Row is DynamicResources' registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginDynamicResources,
		Points:  framework.PointsOf(framework.PointPreEnqueue, framework.PointPreFilter, framework.PointFilter, framework.PointPostFilter, framework.PointPodGroupPostFilter, framework.PointScore, framework.PointReserve, framework.PointPreBind),
		Default: true, Weight: weightDynamicResources, Args: dynamicResourcesArgsOf,
		New: func(h framework.Handle, args any) (framework.Plugin, error) {
			return newDynamicResources(h, args.(dynamicResourcesArgs))
		}}
}

// dynamicResourcesArgsOf is DynamicResources' Row.Args: upstream's
// ValidateDynamicResourcesArgs with v1.37's default gates
// (DRASchedulerFilterTimeout, DRADeviceBindingConditions and
// DRAResourceClaimDeviceStatus on).
func dynamicResourcesArgsOf(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.DynamicResourcesArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	a := defaultDynamicResourcesArgs
	if args.FilterTimeout != nil {
		if args.FilterTimeout.Duration < 0 {
			return nil, field.Invalid(path.Child("filterTimeout"), args.FilterTimeout.Duration.String(), "must be zero or positive")
		}
		a.filterTimeout = args.FilterTimeout.Duration
	}
	if args.BindingTimeout != nil {
		if args.BindingTimeout.Duration < time.Second {
			return nil, field.Invalid(path.Child("bindingTimeout"), args.BindingTimeout.Duration.String(), "must be at least 1 second")
		}
		a.bindingTimeout = args.BindingTimeout.Duration
	}
	return a, nil
}
