package dynamicresources

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/dra"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Extended resources backed by DRA (DRAExtendedResource, on by default in
// 1.37), as upstream's DynamicResources: a pod requesting an extended
// resource that a DeviceClass maps gets, on each node that does not
// advertise the resource, an in-memory claim with one `exactly` request
// per container and resource; it is allocated with the pod's own claims,
// put in flight at Reserve under a temporary UID, created in the API at
// PreBind (generateName <pod>-extended-resources-, owned by the pod,
// annotated), then written like the pod's other claims, and the pod's
// status.extendedResourceClaimStatus maps each container's resource to its
// request. Unreserve deletes the created claim.

// specialClaimName is the name of the in-memory claim until PreBind
// creates it; not a valid object name, so it never collides with a claim
// in the API (upstream's).
const specialClaimName = "<extended-resources>"

// draExtended is a pod's extended resources backed by DRA.
type draExtended struct {
	// names are the requested resources a DeviceClass may map, sorted;
	// classes the class of each, nil for one no class maps.
	names   []v1.ResourceName
	classes []*resourceapi.DeviceClass
	// claim is the in-memory claim without requests (each node's copy
	// gets its own), with a temporary UID for the in-flight allocation.
	claim *resourceapi.ResourceClaim
}

// preFilterExtended returns the pod's extended resources backed by DRA,
// nil when no class maps any of its requests. A claim left by an earlier
// attempt (Unreserve could not delete it) is deleted in the background and
// the pod waits: its allocation may no longer be valid, as upstream's.
func (pl *dynamicResources) preFilterExtended(pod *cache.PodInfo) (*draExtended, *framework.Status) {
	var e draExtended
	mapped := false
	for name, v := range pod.Requests.Scalar {
		if v != 0 && dra.IsExtendedResourceName(name) {
			e.names = append(e.names, name)
		}
	}
	if len(e.names) == 0 {
		return nil, nil
	}
	slices.Sort(e.names)
	e.classes = make([]*resourceapi.DeviceClass, len(e.names))
	for i, name := range e.names {
		e.classes[i] = pl.ext.Class(name)
		mapped = mapped || e.classes[i] != nil
	}
	if !mapped {
		return nil, nil
	}
	if !pl.m.Synced() {
		return nil, errorDRA(fmt.Errorf("the ResourceClaim and ResourceSlice caches are not synced yet"))
	}
	p := pod.Pod
	if stale := pl.m.ExtendedClaim(p); stale != nil {
		if pl.listers.Client != nil {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_ = pl.deleteClaim(ctx, stale) // retried at the pod's next attempt
			}()
		}
		return nil, rejectDRA(fmt.Sprintf("resourceclaim %s/%s for the pod's extended resources is left from an earlier attempt and is being deleted",
			stale.Namespace, stale.Name))
	}
	e.claim = &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{
		Namespace:    p.Namespace,
		Name:         specialClaimName,
		UID:          uuid.NewUUID(),
		GenerateName: p.Name + "-extended-resources-",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
			Controller: ptr.To(true)}},
		Annotations: map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
	}}
	return &e, nil
}

// onNode is the node's copy of the claim with a request for each mapped
// resource the node does not advertise and the container mappings; a nil
// claim when the node's device plugins provide them all. A requested
// resource neither advertised nor mapped does not fit (upstream's
// filterExtendedResources).
func (e *draExtended) onNode(pod *v1.Pod, ni *cache.NodeInfo) (*resourceapi.ResourceClaim, []v1.ContainerExtendedResourceRequest, *framework.Status) {
	alloc := ni.Allocatable().Scalar
	var need []int
	for i, name := range e.names {
		allocatable, advertised := alloc[name]
		switch {
		case e.classes[i] != nil && allocatable == 0:
			need = append(need, i)
		case !advertised:
			return nil, nil, &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginDynamicResources,
				Reasons: []string{fmt.Sprintf("node does not provide %s through a device plugin and no DeviceClass maps it", name)}}
		}
	}
	if len(need) == 0 {
		return nil, nil, nil
	}
	c := e.claim.DeepCopy()
	var mappings []v1.ContainerExtendedResourceRequest
	for _, i := range need {
		reqs, m := extendedRequests(pod, e.names[i], e.classes[i].Name)
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, reqs...)
		mappings = append(mappings, m...)
	}
	slices.SortFunc(c.Spec.Devices.Requests, func(a, b resourceapi.DeviceRequest) int { return strings.Compare(a.Name, b.Name) })
	return c, mappings, nil
}

// extendedRequests are the device requests and container mappings for
// resource name of class, as upstream's: a request per long-lived
// container (regular or sidecar) named container-<i>-request-<j> (i its
// index among init then regular containers, j the resource's index among
// the container's sorted request names) for its count; an init container
// that runs to completion first reuses the requests of the long-lived
// containers after it and requests only the rest, and of those the
// largest serves all of them.
func extendedRequests(pod *v1.Pod, name v1.ResourceName, class string) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	long := make([]*resourceapi.DeviceRequest, len(containers))
	var longMaps, shortMaps []v1.ContainerExtendedResourceRequest
	isShort := func(i int) bool {
		return i < len(pod.Spec.InitContainers) && ptr.Deref(containers[i].RestartPolicy, "") != v1.ContainerRestartPolicyAlways
	}
	for i := range containers {
		if !isShort(i) {
			var m []v1.ContainerExtendedResourceRequest
			long[i], m = containerRequest(i, &containers[i], name, class, nil)
			longMaps = append(longMaps, m...)
		}
	}
	var largest *resourceapi.DeviceRequest
	var shortNames []string
	for i := range containers {
		if !isShort(i) {
			continue
		}
		r, m := containerRequest(i, &containers[i], name, class, long[i:])
		if r != nil {
			shortNames = append(shortNames, r.Name)
			if largest == nil || largest.Exactly.Count < r.Exactly.Count {
				largest = r
			}
		}
		shortMaps = append(shortMaps, m...)
	}
	var reqs []resourceapi.DeviceRequest
	if largest != nil {
		for i := range shortMaps {
			if slices.Contains(shortNames, shortMaps[i].RequestName) {
				shortMaps[i].RequestName = largest.Name
			}
		}
		reqs = append(reqs, *largest)
	}
	for _, r := range long {
		if r != nil {
			reqs = append(reqs, *r)
		}
	}
	return reqs, append(longMaps, shortMaps...)
}

// containerRequest is container i's request for resource name (nil if it
// needs none of its own) and its mappings, reusing the requests of reuse
// (nil entries skipped) first.
func containerRequest(i int, c *v1.Container, name v1.ResourceName, class string, reuse []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	want, ok := q.AsInt64()
	if !ok || want == 0 {
		return nil, nil
	}
	var maps []v1.ContainerExtendedResourceRequest
	var have int64
	for _, r := range reuse {
		if r == nil {
			continue
		}
		have += r.Exactly.Count
		maps = append(maps, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: r.Name})
		if have >= want {
			return nil, maps
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	j := slices.Index(keys, string(name))
	r := &resourceapi.DeviceRequest{Name: fmt.Sprintf("container-%d-request-%d", i, j),
		Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount,
			Count: want - have}}
	return r, append(maps, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: r.Name})
}

// createExtendedClaim creates the node's claim in the API, without the
// allocation (bindClaim writes it).
func (pl *dynamicResources) createExtendedClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	c = c.DeepCopy()
	c.Name, c.UID = "", ""
	c.Finalizers = nil
	c.Status = resourceapi.ResourceClaimStatus{}
	created, err := pl.listers.Client.ResourceV1().ResourceClaims(c.Namespace).Create(ctx, c, metav1.CreateOptions{})
	pl.claims.ClaimCreated(err == nil)
	if err != nil {
		return nil, fmt.Errorf("create the claim for the pod's extended resources: %w", err)
	}
	return created, nil
}

// patchExtendedClaimStatus writes pod's status.extendedResourceClaimStatus.
func (pl *dynamicResources) patchExtendedClaimStatus(ctx context.Context, pod *v1.Pod, claim string, mappings []v1.ContainerExtendedResourceRequest) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"extendedResourceClaimStatus": v1.PodExtendedResourceClaimStatus{ResourceClaimName: claim, RequestMappings: mappings}}})
	if err != nil {
		return err
	}
	_, err = pl.listers.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("update pod %s/%s extendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// deleteClaim removes the finalizer from the claim, then deletes it (the
// claim the scheduler created for a pod's extended resources).
func (pl *dynamicResources) deleteClaim(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	client := pl.listers.Client.ResourceV1().ResourceClaims(claim.Namespace)
	refresh := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if refresh {
			latest, err := client.Get(ctx, claim.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			claim = latest
		}
		refresh = true
		i := slices.Index(claim.Finalizers, resourceapi.Finalizer)
		if i < 0 {
			return nil
		}
		claim = claim.DeepCopy()
		claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
		_, err := client.Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("update resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := client.Delete(ctx, claim.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	return nil
}

// bindExtendedClaim creates the claim for the pod's extended resources
// Reserve put in flight, writes its allocation and the pod in reservedFor
// (bindClaim), assumes it so that the next cycles see its devices taken
// before the informer brings it, and writes the pod's
// status.extendedResourceClaimStatus. Called with f.resMu held.
func (pl *dynamicResources) bindExtendedClaim(ctx context.Context, f *draFilter, pod *v1.Pod) error {
	created, err := pl.createExtendedClaim(ctx, f.extClaim)
	if err != nil {
		return err
	}
	f.extCreated = created // Unreserve deletes it from now on
	bound, err := pl.bindClaim(ctx, created, f.extClaim.Status.Allocation, pod)
	if err != nil {
		return err
	}
	f.extCreated = bound
	_ = pl.m.AssumeCreated(bound) // fails only when the informer already has a newer version
	return pl.patchExtendedClaimStatus(ctx, pod, bound.Name, f.extMappings)
}
