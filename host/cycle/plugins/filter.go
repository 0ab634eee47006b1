package plugins

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
)

// statusNoNode is the Error of a node info without its node (pods the cache
// holds for a node it has not seen): a snapshot should not list it.
var statusNoNode = &Status{Code: Error, Err: errors.New("node info has no node")}

// Filter runs the filters on one node in upstream's default order (NodeName,
// NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, NodeDeclaredFeatures) and returns the first rejection, nil if the node fits.
// Like upstream, a node is rejected for one plugin's reasons only.
func Filter(ps *PodState, ni *cache.NodeInfo) *Status {
	node := ni.Node()
	if node == nil {
		return statusNoNode
	}
	if ps.nodeName != "" && ps.nodeName != node.Name {
		return statusNodeName
	}
	if node.Spec.Unschedulable && !ps.toleratesUnschedulable {
		return statusUnschedulable
	}
	if !ps.toleratesTaints(node.Spec.Taints) {
		return statusTaint
	}
	if ps.hasRequired {
		// A parse error (which API validation prevents) does not match.
		if ok, _ := ps.required.Match(node); !ok {
			return statusNodeAffinity
		}
	}
	for _, p := range ps.pod.HostPorts {
		if ni.PortConflict(p) {
			return statusNodePorts
		}
	}
	if st := ps.fit(ni); st != nil {
		return st
	}
	if ps.needsFeatures {
		return ps.declaredFeatures(node)
	}
	return nil
}

// toleratesTaints reports whether every NoSchedule and NoExecute taint is
// tolerated (upstream's FindMatchingUntoleratedTaint with
// DoNotScheduleTaintsFilterFunc, which copies the filtered taints on every
// call; this loops over them in place with the same toleration check).
func (ps *PodState) toleratesTaints(taints []v1.Taint) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !corev1helpers.TolerationsTolerateTaint(discard, ps.filterTolerations, t, false) {
			return false
		}
	}
	return true
}

// fitMask bits: which of the fixed NodeResourcesFit reasons apply, and
// whether any insufficiency exceeds the node's whole allocatable.
const (
	fitPods = 1 << iota
	fitCPU
	fitMemory
	fitEphemeral
	fitUnresolvable
	fitMaskLen = 1 << iota
)

// fit is upstream's NodeResourcesFit filter: the pod count, then cpu,
// memory, ephemeral-storage and each requested scalar resource against the
// node's allocatable minus what its pods request. A resource the pod does not
// request never fails. The verdict is UnschedulableAndUnresolvable when a
// request exceeds the node's whole allocatable (preemption cannot help),
// Unschedulable otherwise.
func (ps *PodState) fit(ni *cache.NodeInfo) *Status {
	req := &ps.pod.Requests
	alloc, used := ni.Allocatable(), ni.Requested()
	var mask int
	if int64(len(ni.Pods()))+1 > alloc.Pods {
		mask |= fitPods
	}
	check := func(bit int, want, allocatable, requested int64) {
		if want > 0 && want > allocatable-requested {
			mask |= bit
			if want > allocatable {
				mask |= fitUnresolvable
			}
		}
	}
	check(fitCPU, req.MilliCPU, alloc.MilliCPU, used.MilliCPU)
	check(fitMemory, req.Memory, alloc.Memory, used.Memory)
	check(fitEphemeral, req.EphemeralStorage, alloc.EphemeralStorage, used.EphemeralStorage)

	var scalarReasons []string
	for _, name := range ps.scalars {
		want, allocatable := req.Scalar[name], alloc.Scalar[name]
		if want > allocatable-used.Scalar[name] {
			scalarReasons = append(scalarReasons, ReasonInsufficient+string(name))
			if want > allocatable {
				mask |= fitUnresolvable
			}
		}
	}
	if mask == 0 && scalarReasons == nil {
		return nil
	}
	if scalarReasons != nil {
		st := newFitStatus(mask)
		st.Reasons = append(st.Reasons, scalarReasons...)
		return st
	}
	if st := ps.fitStatuses[mask].Load(); st != nil {
		return st
	}
	st := newFitStatus(mask)
	ps.fitStatuses[mask].CompareAndSwap(nil, st)
	return ps.fitStatuses[mask].Load()
}

// newFitStatus builds the NodeResourcesFit status of mask's reasons, in
// upstream's order.
func newFitStatus(mask int) *Status {
	st := &Status{Code: Unschedulable, Plugin: abi.PluginNodeResourcesFit}
	if mask&fitUnresolvable != 0 {
		st.Code = UnschedulableAndUnresolvable
	}
	if mask&fitPods != 0 {
		st.Reasons = append(st.Reasons, ReasonTooManyPods)
	}
	if mask&fitCPU != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceCPU))
	}
	if mask&fitMemory != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceMemory))
	}
	if mask&fitEphemeral != 0 {
		st.Reasons = append(st.Reasons, ReasonInsufficient+string(v1.ResourceEphemeralStorage))
	}
	return st
}
