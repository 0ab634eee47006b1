// Package nodename is upstream's NodeName plugin
// (pkg/scheduler/framework/plugins/nodename): a pod with spec.nodeName fits
// that node only. Extension points: PreFilter (restricts the nodes to that
// one), Filter. Rejects: UnschedulableAndUnresolvable (ReasonNodeName).
// No score.
package nodename

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonNodeName is upstream's NodeName reason.
const ReasonNodeName = "node(s) didn't match the requested node name"

var statusNodeName = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeName,
	Reasons: []string{ReasonNodeName}}

// nodeName is upstream's NodeName plugin: a pod with spec.nodeName fits that
// node only.
//
// Extension points: PreFilter (skips a pod without spec.nodeName; restricts
// the nodes to that one, upstream's PreFilterResult), Filter.
// Rejects: UnschedulableAndUnresolvable (ReasonNodeName). No score.
type nodeName struct{}

var _ framework.PreFilterPlugin = nodeName{}

func (nodeName) Name() string { return abi.PluginNodeName }

func (nodeName) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	name := pod.Pod.Spec.NodeName
	if name == "" {
		return nil, nil, nil
	}
	return (*nodeNameFilter)(pod), []string{name}, nil
}

// nodeNameFilter is the filter of a pod with spec.nodeName: its state is the
// pod itself, so binding it allocates nothing.
type nodeNameFilter cache.PodInfo

// NodeLocal: the verdict reads the pod's spec and the node alone.
func (*nodeNameFilter) NodeLocal() bool { return true }

func (f *nodeNameFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if f.Pod.Spec.NodeName != ni.Node().Name {
		return statusNodeName
	}
	return nil
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodeName, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true, FilterAlone: true,
		New: func(framework.Handle, any) (framework.Plugin, error) { return nodeName{}, nil }}
}
