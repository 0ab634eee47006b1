// Package nodeports is upstream's NodePorts plugin
// (pkg/scheduler/framework/plugins/nodeports): the pod's host ports must be
// free on the node. Extension points: PreFilter, Filter. Rejects:
// Unschedulable (ReasonNodePorts; preempting the pod that holds the port
// helps). No score.
package nodeports

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonNodePorts is upstream's NodePorts reason.
const ReasonNodePorts = "node(s) didn't have free ports for the requested pod ports"

var statusNodePorts = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginNodePorts,
	Reasons: []string{ReasonNodePorts}}

// nodePorts is upstream's NodePorts plugin: the pod's host ports
// (cache.PodInfo.HostPorts, normalised) must be free on the node (the
// node info keeps the ports its pods hold).
//
// Extension points: PreFilter (skips a pod without host ports, as upstream),
// Filter. Rejects: Unschedulable (ReasonNodePorts; preempting the pod that
// holds the port helps). No score.
type nodePorts struct{}

var _ framework.PreFilterPlugin = nodePorts{}

func (nodePorts) Name() string { return abi.PluginNodePorts }

func (nodePorts) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	if len(pod.HostPorts) == 0 {
		return nil, nil, nil
	}
	return (*nodePortsFilter)(pod), nil, nil
}

// nodePortsFilter's state is the pod itself.
type nodePortsFilter cache.PodInfo

// NodeLocal: the verdict reads the pod's spec and the node's used ports
// alone.
func (*nodePortsFilter) NodeLocal() bool { return true }

func (f *nodePortsFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	for _, p := range f.HostPorts {
		if ni.PortConflict(p) {
			return statusNodePorts
		}
	}
	return nil
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodePorts, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(framework.Handle, any) (framework.Plugin, error) { return nodePorts{}, nil }}
}
