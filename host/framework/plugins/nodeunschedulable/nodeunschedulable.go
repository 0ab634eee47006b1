// Package nodeunschedulable is upstream's NodeUnschedulable plugin
// (pkg/scheduler/framework/plugins/nodeunschedulable): a cordoned node takes
// only pods that tolerate the node.kubernetes.io/unschedulable NoSchedule
// taint. Extension points: PreFilter, Filter. Rejects:
// UnschedulableAndUnresolvable (ReasonUnschedulable). No score.
package nodeunschedulable

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonUnschedulable is upstream's NodeUnschedulable reason.
const ReasonUnschedulable = "node(s) were unschedulable"

var statusUnschedulable = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeUnschedulable,
	Reasons: []string{ReasonUnschedulable}}

// taintUnschedulable is the taint a pod must tolerate to go to a cordoned
// node (spec.unschedulable).
var taintUnschedulable = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// nodeUnschedulable is upstream's NodeUnschedulable plugin: a cordoned node
// takes only pods that tolerate the node.kubernetes.io/unschedulable
// NoSchedule taint.
//
// Extension points: PreFilter (skips a pod that tolerates the taint;
// upstream has no PreFilter here and checks the toleration per node),
// Filter. Rejects: UnschedulableAndUnresolvable (ReasonUnschedulable). No
// score.
type nodeUnschedulable struct{}

var (
	_ framework.PreFilterPlugin = nodeUnschedulable{}
	_ framework.PodFilter       = nodeUnschedulable{}
)

// discard is the logger the component-helpers toleration check logs parse
// errors of Lt/Gt tolerations to; those operators are off, so it never logs.
var discard = logr.Discard()

func (nodeUnschedulable) Name() string { return abi.PluginNodeUnschedulable }

func (nodeUnschedulable) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	if corev1helpers.TolerationsTolerateTaint(discard, pod.Pod.Spec.Tolerations, &taintUnschedulable, false) {
		return nil, nil, nil
	}
	return nodeUnschedulable{}, nil, nil
}

// Filter is the filter of a pod that does not tolerate the taint: it needs
// no state.
// NodeLocal: the verdict reads the node alone.
func (nodeUnschedulable) NodeLocal() bool { return true }

func (nodeUnschedulable) Filter(ni *cache.NodeInfo) *framework.Status {
	if ni.Node().Spec.Unschedulable {
		return statusUnschedulable
	}
	return nil
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodeUnschedulable, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true, FilterAlone: true,
		New: func(framework.Handle, any) (framework.Plugin, error) { return nodeUnschedulable{}, nil }}
}
