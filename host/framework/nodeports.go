package framework

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
)

// ReasonNodePorts is upstream's NodePorts reason.
const ReasonNodePorts = "node(s) didn't have free ports for the requested pod ports"

var statusNodePorts = &Status{Code: Unschedulable, Plugin: abi.PluginNodePorts,
	Reasons: []string{ReasonNodePorts}}

// nodePorts is upstream's NodePorts plugin: the pod's host ports
// (cache.PodInfo.HostPorts, normalised) must be free on the node (the
// node info keeps the ports its pods hold).
//
// Extension points: PreFilter (skips a pod without host ports, as upstream),
// Filter. Rejects: Unschedulable (ReasonNodePorts; preempting the pod that
// holds the port helps). No score.
type nodePorts struct{}

var _ PreFilterPlugin = nodePorts{}

func (nodePorts) Name() string { return abi.PluginNodePorts }

func (nodePorts) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (PodFilter, []string, *Status) {
	if len(pod.HostPorts) == 0 {
		return nil, nil, nil
	}
	return (*nodePortsFilter)(pod), nil, nil
}

// nodePortsFilter's state is the pod itself.
type nodePortsFilter cache.PodInfo

func (f *nodePortsFilter) Filter(ni *cache.NodeInfo) *Status {
	for _, p := range f.HostPorts {
		if ni.PortConflict(p) {
			return statusNodePorts
		}
	}
	return nil
}

// NodePortsRow is the plugin's registry row.
func NodePortsRow() Row {
	return Row{Name: abi.PluginNodePorts, Points: PointsOf(PointPreFilter, PointFilter), Default: true,
		New: func(Handle, any) (Plugin, error) { return nodePorts{}, nil }}
}
