package cache

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wasmsched/wasmsched/host/podview"
)

// Upstream's schedutil.DefaultMilliCPURequest and DefaultMemoryRequest: what
// a container that requests no cpu or memory counts as in NonZero, so that
// scorers do not see zero-request pods as free.
const (
	defaultMilliCPURequest = 100               // 0.1 core
	defaultMemoryRequest   = 200 * 1024 * 1024 // 200 MiB
)

// NewPodInfo derives what the cache and the filters need from pod once.
//
// Requests is upstream's effective request sum
// (k8s.io/component-helpers/resource.PodRequests: the larger of the
// containers' sum and each init container's peak with the sidecars started
// before it, sidecars added to the containers, pod-level requests replacing
// the containers' sum for the resources they name, pod overhead added) with
// Pods = 1. For a bound pod (spec.nodeName set) the sum also counts what the
// kubelet allocated or actuated for an in-place resize, as upstream's
// NodeInfo does; for a pending pod only the spec counts (host/podview does
// the same).
//
// NonZero is Requests with cpu and memory recomputed as upstream's
// PodInfo.CalculateResource does: a container that omits them counts 100m
// and 200Mi; with pod-level requests, only a resource missing at both levels
// is defaulted.
//
// HostPorts are upstream's util.GetHostPorts: the host ports of restartable
// init containers (sidecars) and of the containers, normalised (IP "" is
// 0.0.0.0, protocol "" is TCP). Ordinary init containers have finished
// before the pod runs, so their ports are not held.
//
// Affinity is the pod's inter-pod affinity terms parsed (newPodAffinity).
// Claims are the keys of its persistentVolumeClaim volumes (podClaims).
func NewPodInfo(pod *v1.Pod) *PodInfo {
	opts := podview.RequestOptions(pod.Spec.NodeName != "")
	pi := &PodInfo{Pod: pod, HostPorts: podHostPorts(pod), Affinity: newPodAffinity(pod), Claims: podClaims(pod)}
	// A pending pod with containers only is summed without PodRequests'
	// maps (podview.ContainerRequests); reqs is then nil, which
	// nonMissingContainerRequests does not read without pod-level requests.
	var reqs v1.ResourceList
	var buf [4]podview.ResourceSum
	if sums, ok := podview.ContainerRequests(pod, buf[:0]); ok {
		for _, s := range sums {
			pi.Requests.addQuantity(s.Name, s.Sum)
		}
	} else {
		reqs = resourcehelper.PodRequests(pod, opts)
		pi.Requests = NewResource(reqs)
	}
	pi.Requests.Pods = 1

	pi.NonZero = pi.Requests.Clone()
	if missing := nonMissingContainerRequests(reqs, resourcehelper.IsPodLevelRequestsSet(pod)); len(missing) > 0 && !requestsAll(pod, missing) {
		opts.NonMissingContainerRequests = missing
		nz := resourcehelper.PodRequests(pod, opts)
		pi.NonZero.MilliCPU = nz.Cpu().MilliValue()
		pi.NonZero.Memory = nz.Memory().Value()
	}
	return pi
}

// Assumed is the PodInfo of a copy of pi.Pod placed on node, spec.nodeName
// set, as the cycle assumes it. What NewPodInfo derives does not depend on
// the node, except that a bound pod's requests also count the resources in
// its status (podview.RequestOptions): for a pod whose status carries none,
// the usual case of a pod never run, the derived fields are shared instead
// of derived again, which was a third of the PodRequests work per scheduled
// pod. PodInfos are never changed once built, so sharing is safe.
//
// The copy is shallow: it shares the pending pod's maps and slices, which
// nothing in the scheduler writes (the pending pod is the informer's
// object, shared the same way). Upstream deep-copies; for a plain pod that
// was 8% of the bytes wasmsched allocated per pod (RATIONALE).
func (pi *PodInfo) Assumed(node string) *PodInfo {
	pod := new(v1.Pod)
	*pod = *pi.Pod
	pod.Spec.NodeName = node
	if !specOnly(pod) {
		return NewPodInfo(pod)
	}
	c := *pi
	c.Pod = pod
	return &c
}

// Confirmed is the PodInfo of pod, the informer's version of the assumed
// pod pi describes (its binding confirmed). When the spec is the one pi was
// derived from (the apiserver bumps metadata.generation on every change of
// a pod's spec, resizes included, and the binding leaves it) and the status
// still carries no resources, pi's derived fields are shared with pod, as
// in Assumed; otherwise they are derived again. Generation 0 (a client that
// does not set it) always derives again. Labels are not derived: the cache
// reads them from the Pod.
func (pi *PodInfo) Confirmed(pod *v1.Pod) *PodInfo {
	old := pi.Pod
	if pod.Generation == 0 || pod.Generation != old.Generation || !specOnly(old) || !specOnly(pod) {
		return NewPodInfo(pod)
	}
	c := *pi
	c.Pod = pod
	return &c
}

// specOnly reports whether pod's requests come from its spec alone whether
// it is bound or not: its status has no container statuses, no pod-level
// resources and no PodResizePending condition (which makes a bound pod's
// requests the status's only).
func specOnly(pod *v1.Pod) bool {
	st := &pod.Status
	if len(st.ContainerStatuses) > 0 || len(st.InitContainerStatuses) > 0 || st.Resources != nil || st.AllocatedResources != nil {
		return false
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodResizePending {
			return false
		}
	}
	return true
}

// requestsAll reports whether every container and init container of pod
// requests each resource of names in its spec, and its requests come from
// its spec alone (specOnly): the defaults for missing requests then change
// nothing, and NonZero is Requests without a second PodRequests (half of
// NewPodInfo's cost for a pod that requests cpu and memory).
func requestsAll(pod *v1.Pod, names v1.ResourceList) bool {
	if !specOnly(pod) {
		return false
	}
	has := func(cs []v1.Container) bool {
		for i := range cs {
			for name := range names {
				if _, ok := cs[i].Resources.Requests[name]; !ok {
					return false
				}
			}
		}
		return true
	}
	return has(pod.Spec.Containers) && has(pod.Spec.InitContainers)
}

// containerDefaults are the cpu and memory a container that requests none
// counts for in NonZero; shared and never written to.
var containerDefaults = v1.ResourceList{
	v1.ResourceCPU:    *resource.NewMilliQuantity(defaultMilliCPURequest, resource.DecimalSI),
	v1.ResourceMemory: *resource.NewQuantity(defaultMemoryRequest, resource.DecimalSI),
}

// nonMissingContainerRequests is upstream's getNonMissingContainerRequests:
// the defaults that replace a container's missing cpu and memory requests.
// Without pod-level requests both are defaulted per container; with them,
// only a resource the effective requests lack altogether (nil when none).
// The result may be containerDefaults: read it, never write to it.
func nonMissingContainerRequests(reqs v1.ResourceList, podLevel bool) v1.ResourceList {
	if !podLevel {
		return containerDefaults
	}
	cpu, mem := containerDefaults[v1.ResourceCPU], containerDefaults[v1.ResourceMemory]
	var out v1.ResourceList
	if _, ok := reqs[v1.ResourceCPU]; !ok {
		out = v1.ResourceList{v1.ResourceCPU: cpu}
	}
	if _, ok := reqs[v1.ResourceMemory]; !ok {
		if out == nil {
			out = v1.ResourceList{}
		}
		out[v1.ResourceMemory] = mem
	}
	return out
}

// podClaims lists the "namespace/name" keys of pod's persistentVolumeClaim
// volumes, in order, a claim listed twice twice (upstream's PodPVCKeys);
// nil when there are none, without allocating.
func podClaims(pod *v1.Pod) []string {
	var out []string
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil {
			out = append(out, ClaimKey(pod.Namespace, c.ClaimName))
		}
	}
	return out
}

// ClaimKey is the key of claim name in namespace ns, as NodeInfo.ClaimUsers
// and Snapshot.ClaimInUse take it: "ns/name".
func ClaimKey(ns, name string) string { return ns + "/" + name }

// podHostPorts lists the normalised host ports of the containers that run for
// the pod's whole life (podview.ContainerHostPorts): restartable init
// containers first, then containers.
func podHostPorts(pod *v1.Pod) []HostPort {
	var out []HostPort
	for p := range podview.ContainerHostPorts(pod) {
		out = append(out, normalisePort(HostPort{IP: p.HostIP, Protocol: p.Protocol, Port: p.HostPort}))
	}
	return out
}

// bindAllIP is upstream's DefaultBindAllHostIP: a host port on it is held on
// every address of the node.
const bindAllIP = "0.0.0.0"

// normalisePort applies the API defaults upstream's HostPortInfo.sanitize
// applies: IP "" is 0.0.0.0, protocol "" is TCP.
func normalisePort(p HostPort) HostPort {
	if p.IP == "" {
		p.IP = bindAllIP
	}
	if p.Protocol == "" {
		p.Protocol = v1.ProtocolTCP
	}
	return p
}
