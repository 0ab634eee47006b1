package framework

import (
	"errors"

	"github.com/wasmsched/wasmsched/host/cache"
)

// statusNoNode is the Error of a node info without its node (pods the cache
// holds for a node it has not seen): a snapshot should not list it.
var statusNoNode = &Status{Code: Error, Err: errors.New("node info has no node")}

// Filter runs the pod's filters on one node in profile order (upstream's:
// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeZone,
// PodTopologySpread, InterPodAffinity, NodeDeclaredFeatures, less those the
// pod skips) and returns the first rejection, nil if the node fits. Like upstream, a node
// is rejected for one plugin's reasons only. A feasible node costs no
// allocation.
//
// On a node with nominated pods (AddNominated) the node must fit with them
// added, and without them too when a filter keeps state about other pods.
// The pod's BatchFilters run last, on ni alone.
func Filter(ps *PodState, ni *cache.NodeInfo) *Status {
	if st := filterNative(ps, ni); st != nil || ps.batch == nil {
		return st
	}
	for _, b := range ps.batch {
		if st := b.Filter(ni); st != nil {
			return st
		}
	}
	return nil
}

// filterNative is Filter without the BatchFilters: what FindFeasible runs
// per node before it runs them over the nodes that passed.
func filterNative(ps *PodState, ni *cache.NodeInfo) *Status {
	if ni.Node() == nil {
		return statusNoNode
	}
	if ps.nominated != nil {
		if nn, ok := ps.nominated[ni.Node().Name]; ok {
			if st := nn.ps.run(nn.ni); st != nil || ps.updaters == nil {
				return st
			}
		}
	}
	return ps.run(ni)
}

// run runs the pod's filters on ni in order, to the first rejection.
func (ps *PodState) run(ni *cache.NodeInfo) *Status {
	for _, f := range ps.filters {
		if st := f.Filter(ni); st != nil {
			return st
		}
	}
	return nil
}
