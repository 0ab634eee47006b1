package podview

import (
	"maps"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wasmsched/wasmsched/abi"
)

// NodeUpdateActions classifies an update of a node from old to new, as
// upstream's framework.NodeSchedulingPropertiesChange does; 0 means nothing
// that can change scheduling changed, and the caller sends no event.
//
//   - UpdateNodeAllocatable: status.allocatable changed (semantically: "1" and
//     "1000m" are equal).
//   - UpdateNodeLabel: labels changed.
//   - UpdateNodeTaint: spec.taints changed, or spec.unschedulable went from
//     true to false. As upstream, a node becoming unschedulable is no event
//     by itself: it cannot make a pending pod schedulable.
//   - UpdateNodeCondition: the set of (condition type, status) pairs changed;
//     heartbeats, reasons, messages and order do not count.
//   - UpdateNodeAnnotation: annotations changed.
//   - UpdateNodeDeclaredFeature: status.declaredFeatures changed (as a
//     list: order counts, as upstream's slices.Equal).
//   - UpdateOther: spec.podPreemptionPolicy changed, for which upstream
//     has UpdateNodePreemptionPolicy.
//
// Anything else (status.nodeInfo, images, addresses, resourceVersion, ...)
// classifies as 0, as upstream emits no event for it.
func NodeUpdateActions(old, new *v1.Node) abi.ActionType {
	var a abi.ActionType
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, new.Status.Allocatable) {
		a |= abi.ActionUpdateNodeAllocatable
	}
	if !maps.Equal(old.Labels, new.Labels) {
		a |= abi.ActionUpdateNodeLabel
	}
	if (old.Spec.Unschedulable && !new.Spec.Unschedulable) ||
		!equality.Semantic.DeepEqual(old.Spec.Taints, new.Spec.Taints) {
		a |= abi.ActionUpdateNodeTaint
	}
	if !conditionsEqual(old.Status.Conditions, new.Status.Conditions) {
		a |= abi.ActionUpdateNodeCondition
	}
	if !maps.Equal(old.Annotations, new.Annotations) {
		a |= abi.ActionUpdateNodeAnnotation
	}
	if !slices.Equal(old.Status.DeclaredFeatures, new.Status.DeclaredFeatures) {
		a |= abi.ActionUpdateNodeDeclaredFeature
	}
	if !equality.Semantic.DeepEqual(old.Spec.PodPreemptionPolicy, new.Spec.PodPreemptionPolicy) {
		a |= abi.ActionUpdateOther
	}
	return a
}

// conditionsEqual compares the (type, status) pairs of two condition lists;
// a type listed twice counts with its last status, as upstream's map does.
func conditionsEqual(a, b []v1.NodeCondition) bool {
	strip := func(cs []v1.NodeCondition) map[v1.NodeConditionType]v1.ConditionStatus {
		m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(cs))
		for i := range cs {
			m[cs[i].Type] = cs[i].Status
		}
		return m
	}
	if len(a) == len(b) {
		// Fast path: the kubelet rewrites conditions in a stable order.
		same := true
		for i := range a {
			if a[i].Type != b[i].Type || a[i].Status != b[i].Status {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return maps.Equal(strip(a), strip(b))
}

// PodUpdateActions classifies an update of a pod from old to new, as
// upstream's framework.PodSchedulingPropertiesChange does; 0 means the update
// changes nothing a policy or the scheduler looks at, and the caller sends no
// event.
//
// The specific bits, any number of which may be set together:
//
//   - UpdatePodLabel: labels changed.
//   - UpdatePodScaleDown: some effective request (see [Requests]; for this
//     comparison the resources allocated or actuated for an in-place resize
//     count whether or not the pod is bound, as upstream) went down or
//     went away.
//   - UpdatePodToleration: the number of tolerations changed (the API only
//     lets tolerations be added, so upstream compares lengths).
//   - UpdatePodSchedulingGatesEliminated: the last scheduling gate went away.
//   - UpdatePodGeneratedResourceClaim: status.resourceClaimStatuses (names and
//     claim names, in order) or status.extendedResourceClaimStatus changed.
//
// When none of them is set, the result is UpdateOther if anything else that
// can matter changed: a request went up or appeared (upstream's
// UpdatePodScaleUp, which the ABI has no bit for), or the spec, or the
// metadata other than resourceVersion, generation, managedFields and
// finalizers. Upstream likewise sends its general Update only when no
// specific event applies.
//
// Two deviations from upstream v1.37, which sends the general Update for
// every new revision: an update that carries the same non-empty
// resourceVersion (an informer resync) is 0 whatever the pod, as upstream
// does for unscheduled pods only; and an update whose only changes are in
// status (phase, conditions, nominatedNodeName, container statuses, ...) or
// in the ignored metadata is 0, since no field of the pod's record comes from
// there except the requests, which the bits above already compare. That is
// the rule upstream's queue applied before v1.33 (isPodUpdated), and it keeps
// the scheduler's own status writes on a pending pod from waking policies.
//
// A pod being bound (old without spec.nodeName, new with one) classifies as
// UpdateOther here; callers handle it as upstream does, as the pod leaving
// the queue and an assigned pod being added.
func PodUpdateActions(old, new *v1.Pod) abi.ActionType {
	if sameRevision(&old.ObjectMeta, &new.ObjectMeta) {
		return 0
	}
	var a abi.ActionType
	if !maps.Equal(old.Labels, new.Labels) {
		a |= abi.ActionUpdatePodLabel
	}
	down, up := requestsChanged(old, new)
	if down {
		a |= abi.ActionUpdatePodScaleDown
	}
	if len(new.Spec.Tolerations) != len(old.Spec.Tolerations) {
		a |= abi.ActionUpdatePodToleration
	}
	if len(new.Spec.SchedulingGates) == 0 && len(old.Spec.SchedulingGates) != 0 {
		a |= abi.ActionUpdatePodSchedulingGatesEliminated
	}
	if !claimStatusesEqual(old.Status.ResourceClaimStatuses, new.Status.ResourceClaimStatuses) ||
		!extendedClaimStatusEqual(old.Status.ExtendedResourceClaimStatus, new.Status.ExtendedResourceClaimStatus) {
		a |= abi.ActionUpdatePodGeneratedResourceClaim
	}
	if a != 0 {
		return a
	}
	if up || !metaEqual(&old.ObjectMeta, &new.ObjectMeta) || !semanticEqual(&old.Spec, &new.Spec) {
		return abi.ActionUpdateOther
	}
	return 0
}

// PodGroupUpdateActions classifies an update of a pod group. Upstream has no
// specific pod group bits and sends the general Update for every new
// revision; here, as for pods, a resync (same non-empty resourceVersion) and
// an update of only status or bookkeeping metadata are 0, and anything else
// is UpdateOther.
func PodGroupUpdateActions(old, new *schedv1beta1.PodGroup) abi.ActionType {
	if sameRevision(&old.ObjectMeta, &new.ObjectMeta) {
		return 0
	}
	if !metaEqual(&old.ObjectMeta, &new.ObjectMeta) || !semanticEqual(&old.Spec, &new.Spec) {
		return abi.ActionUpdateOther
	}
	return 0
}

// sameRevision reports an informer resync: both objects carry the same
// resourceVersion. Objects without one (tests, fakes) are compared by content.
func sameRevision(old, new *metav1.ObjectMeta) bool {
	return old.ResourceVersion != "" && old.ResourceVersion == new.ResourceVersion
}

// metaEqual compares metadata without the fields every write or controller
// bookkeeping touches.
func metaEqual(a, b *metav1.ObjectMeta) bool {
	strip := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		m.ResourceVersion = ""
		m.Generation = 0
		m.ManagedFields = nil
		m.Finalizers = nil
		return m
	}
	sa, sb := strip(*a), strip(*b)
	return semanticEqual(&sa, &sb)
}

// semanticEqual is equality.Semantic.DeepEqual (quantities and times by
// value, nil and empty alike) with reflect.DeepEqual as a fast path: two
// revisions decoded from the same JSON are almost always identical field for
// field, and the semantic walk costs several times more.
func semanticEqual(a, b any) bool {
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}

// requestsChanged compares the effective requests of two revisions of a pod
// the way upstream's extractPodScaleDown and extractPodScaleUp do: status
// resources count (InPlacePodVerticalScaling is GA in v1.37), amounts are
// compared in milli-units, and a resource that disappears is a scale-down
// (one that appears, a scale-up).
func requestsChanged(old, new *v1.Pod) (down, up bool) {
	opts := RequestOptions(true)
	o := resourcehelper.PodRequests(old, opts)
	n := resourcehelper.PodRequests(new, opts)
	for name, oq := range o {
		nq, ok := n[name]
		if !ok || oq.MilliValue() > nq.MilliValue() {
			down = true
			break
		}
	}
	for name, nq := range n {
		oq, ok := o[name]
		if !ok || nq.MilliValue() > oq.MilliValue() {
			up = true
			break
		}
	}
	return down, up
}

// claimStatusesEqual compares generated-claim statuses as upstream's
// resourceclaim.PodStatusEqual: same length, and pairwise the same name and
// claim name, in order.
func claimStatusesEqual(a, b []v1.PodResourceClaimStatus) bool {
	return slices.EqualFunc(a, b, func(x, y v1.PodResourceClaimStatus) bool {
		if x.Name != y.Name || (x.ResourceClaimName == nil) != (y.ResourceClaimName == nil) {
			return false
		}
		return x.ResourceClaimName == nil || *x.ResourceClaimName == *y.ResourceClaimName
	})
}

// extendedClaimStatusEqual compares extended-resource claim statuses as
// upstream's resourceclaim.PodExtendedStatusEqual.
func extendedClaimStatusEqual(a, b *v1.PodExtendedResourceClaimStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceClaimName == b.ResourceClaimName && slices.Equal(a.RequestMappings, b.RequestMappings)
}
