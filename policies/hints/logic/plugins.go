package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
)

// The plugins, one per native filter of the host, each registering the
// events of its upstream namesake's EventsToRegister (Kubernetes v1.37,
// default feature gates), in upstream's order. Upstream's TargetPod (an
// update of the pending pod itself) is abi.ResourceUnscheduledPod here, with
// the hint checking that the event is about the pod.
var (
	// NodeResourcesFit: noderesources/fit.go.
	NodeResourcesFit = plugin(abi.PluginNodeResourcesFit,
		route{abi.ResourcePod, abi.ActionDelete, fitAfterAssignedPodDelete},
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeAllocatable, fitAfterNodeChange},
		route{abi.ResourcePod, abi.ActionUpdatePodScaleDown, fitAfterAssignedPodScaleDown},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodScaleDown, fitAfterPodScaleDown},
	)
	// NodeAffinity (spec.nodeSelector and required node affinity):
	// nodeaffinity/node_affinity.go.
	NodeAffinity = plugin(abi.PluginNodeAffinity,
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeLabel, nodeAffinityAfterNodeChange},
	)
	// TaintToleration: tainttoleration/taint_toleration.go.
	TaintToleration = plugin(abi.PluginTaintToleration,
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeTaint, taintTolerationAfterNodeChange},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodToleration, taintTolerationAfterPodTolerationChange},
	)
	// NodeUnschedulable: nodeunschedulable/node_unschedulable.go. The host
	// classifies spec.unschedulable going from true to false as
	// abi.ActionUpdateNodeTaint, as upstream does.
	NodeUnschedulable = plugin(abi.PluginNodeUnschedulable,
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeTaint, nodeUnschedulableAfterNodeChange},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodToleration, nodeUnschedulableAfterPodTolerationChange},
	)
	// NodePorts: nodeports/node_ports.go. Upstream registers Node/Add
	// without a hint function, which always queues.
	NodePorts = plugin(abi.PluginNodePorts,
		route{abi.ResourcePod, abi.ActionDelete, nodePortsAfterAssignedPodDelete},
		route{abi.ResourceNode, abi.ActionAdd, always},
	)
	// NodeName: nodename/node_name.go, Node/Add without a hint function.
	NodeName = plugin(abi.PluginNodeName,
		route{abi.ResourceNode, abi.ActionAdd, always},
	)
	// NodeDeclaredFeatures: nodedeclaredfeatures/nodedeclaredfeatures.go.
	// Upstream queues on a node added and on an update whose
	// status.declaredFeatures changed; the host sends
	// UpdateNodeDeclaredFeature exactly then, so both always queue (the
	// node view need not carry the features). The pod's own update (every
	// update bit, upstream's TargetPod/Update) queues when it changed the
	// features the pod needs (ABI minor 4).
	NodeDeclaredFeatures = plugin(abi.PluginNodeDeclaredFeatures,
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeDeclaredFeature, always},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdate, declaredFeaturesAfterPodUpdate},
	)
	// InterPodAffinity: interpodaffinity/plugin.go. The pod record carries
	// the pod affinity terms from ABI minor 4 (interpodaffinity.go).
	InterPodAffinity = plugin(abi.PluginInterPodAffinity,
		route{abi.ResourcePod, abi.ActionAdd | abi.ActionUpdatePodLabel | abi.ActionDelete, interPodAffinityAfterAssignedPodChange},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodLabel, interPodAffinityAfterPodLabelChange},
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeLabel, interPodAffinityAfterNodeChange},
	)
	// PodTopologySpread: podtopologyspread/plugin.go. The pod record
	// carries the pod's spread constraints from ABI minor 4
	// (podtopologyspread.go).
	PodTopologySpread = plugin(abi.PluginPodTopologySpread,
		route{abi.ResourcePod, abi.ActionAdd | abi.ActionUpdatePodLabel | abi.ActionDelete, spreadAfterAssignedPodChange},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodToleration | abi.ActionUpdatePodLabel, spreadAfterPodChange},
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionDelete | abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeTaint, spreadAfterNodeChange},
	)
	// SchedulingGates: schedulinggates/scheduling_gates.go.
	SchedulingGates = plugin(abi.PluginSchedulingGates,
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodSchedulingGatesEliminated, schedulingGatesAfterGatesEliminated},
	)
	// GangScheduling: gangscheduling/gangscheduling.go (composite pod
	// groups off). Upstream registers PodGroup/Update, every update bit.
	GangScheduling = plugin(abi.PluginGangScheduling,
		route{abi.ResourceUnscheduledPod, abi.ActionAdd, gangAfterPodAdd},
		route{abi.ResourcePod, abi.ActionAdd, gangAfterPodAdd},
		route{abi.ResourcePodGroup, abi.ActionAdd, gangAfterPodGroupAdd},
		route{abi.ResourcePodGroup, abi.ActionUpdate, gangAfterPodGroupUpdate},
	)

	// VolumeRestrictions: volumerestrictions/volume_restrictions.go
	// (volumes.go). Node/Add has no hint upstream.
	VolumeRestrictions = plugin(abi.PluginVolumeRestrictions,
		route{abi.ResourcePod, abi.ActionDelete, restrictionsAfterAssignedPodDelete},
		route{abi.ResourceNode, abi.ActionAdd, always},
		route{abi.ResourcePersistentVolumeClaim, abi.ActionAdd, claimChanged},
	)
	// NodeVolumeLimits: nodevolumelimits/csi.go (volumes.go). CSINode/Add
	// has no hint upstream. Upstream registers neither Node/Add nor
	// PersistentVolumeClaim/Update, but the filter can pass after either
	// (a node without a CSINode has no limit; a claim bound to a volume of
	// another driver counts elsewhere), so they are registered here too, after
	// upstream's events.
	NodeVolumeLimits = plugin(abi.PluginNodeVolumeLimits,
		route{abi.ResourceCSINode, abi.ActionAdd, always},
		route{abi.ResourceCSINode, abi.ActionUpdate, limitsAfterCSINodeUpdate},
		route{abi.ResourcePod, abi.ActionDelete, limitsAfterAssignedPodDelete},
		route{abi.ResourcePersistentVolumeClaim, abi.ActionAdd, claimChanged},
		route{abi.ResourceVolumeAttachment, abi.ActionDelete, limitsAfterVolumeAttachmentDelete},
		route{abi.ResourceNode, abi.ActionAdd, always},
		route{abi.ResourcePersistentVolumeClaim, abi.ActionUpdate, claimChanged},
	)
	// VolumeBinding: volumebinding/volume_binding.go (volumes.go).
	// PersistentVolume and Node events have no hint upstream.
	VolumeBinding = plugin(abi.PluginVolumeBinding,
		route{abi.ResourceStorageClass, abi.ActionAdd | abi.ActionUpdate, bindingAfterStorageClassChange},
		route{abi.ResourcePersistentVolumeClaim, abi.ActionAdd | abi.ActionUpdate, claimChanged},
		route{abi.ResourcePersistentVolume, abi.ActionAdd | abi.ActionUpdate, always},
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeLabel, always},
		route{abi.ResourceCSINode, abi.ActionAdd | abi.ActionUpdate, bindingAfterCSINodeChange},
		route{abi.ResourceCSIDriver, abi.ActionUpdate, bindingAfterCSIDriverChange},
		route{abi.ResourceCSIStorageCapacity, abi.ActionAdd | abi.ActionUpdate, bindingAfterCapacityChange},
	)
	// VolumeZone: volumezone/volume_zone.go (volumes.go). Node events have
	// no hint upstream.
	VolumeZone = plugin(abi.PluginVolumeZone,
		route{abi.ResourceStorageClass, abi.ActionAdd, zoneAfterStorageClassAdded},
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeLabel, always},
		route{abi.ResourcePersistentVolumeClaim, abi.ActionAdd | abi.ActionUpdate, claimChanged},
		route{abi.ResourcePersistentVolume, abi.ActionAdd | abi.ActionUpdate, zoneAfterVolumeChange},
	)

	// DynamicResources: dynamicresources/dynamicresources.go (dra.go).
	// Node, DeviceClass and ResourceSlice events have no hint upstream
	// (upstream's DeviceClass and slice events could name the pod's classes
	// and drivers; the pod record does not carry them). DeviceTaintRule
	// events stand for the slice updates upstream's ResourceSlice tracker
	// derives from a rule (host/cluster draEvents).
	DynamicResources = plugin(abi.PluginDynamicResources,
		route{abi.ResourceNode, abi.ActionAdd | abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeAllocatable, always},
		route{abi.ResourceResourceClaim, abi.ActionAll, draAfterClaimChange},
		route{abi.ResourceUnscheduledPod, abi.ActionUpdatePodGeneratedResourceClaim, draAfterPodUpdate},
		route{abi.ResourceDeviceClass, abi.ActionAdd | abi.ActionUpdate, always},
		route{abi.ResourceResourceSlice, abi.ActionAdd | abi.ActionUpdate, always},
		route{abi.ResourceDeviceTaintRule, abi.ActionAll, always},
	)

	// Plugins is what the module registers.
	Plugins = []hint.Plugin{
		NodeResourcesFit, NodeAffinity, TaintToleration, NodeUnschedulable,
		NodePorts, NodeName, NodeDeclaredFeatures, SchedulingGates, GangScheduling,
		InterPodAffinity, PodTopologySpread,
		VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, DynamicResources,
	}
)

// hintFunc is one of upstream's QueueingHintFn, on ABI views.
type hintFunc func(ev abi.EventView, p abi.PodView) (abi.Hint, error)

// route is one registered event of a plugin and the hint that decides it.
type route struct {
	resource abi.EventResource
	actions  abi.ActionType
	fn       hintFunc
}

// plugin registers the routes' events under name, with a hint that runs
// every route the event matches.
func plugin(name string, routes ...route) hint.Plugin {
	events := make([]hint.Event, len(routes))
	for i, r := range routes {
		events[i] = hint.Event{Resource: r.resource, Actions: r.actions}
	}
	return hint.Plugin{
		Name:   name,
		Events: events,
		Hint:   func(ev abi.EventView, p abi.PodView) (abi.Hint, error) { return dispatch(routes, ev, p) },
	}
}

// dispatch runs the hint of every route whose event matches ev (resource
// matches, actions overlap). Upstream splits an update into one event per
// action and queues the pod if any registered hint says so; the host sends
// one event with all the update's action bits, so the routes it matches are
// run in turn: Queue if one queues, else an error if one failed (the host
// queues on an error, as upstream), else Skip.
func dispatch(routes []route, ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	res, act := ev.Resource(), ev.Action()
	var failed error
	for i := range routes {
		r := &routes[i]
		if !r.resource.Matches(res) || r.actions&act == 0 {
			continue
		}
		switch h, err := r.fn(ev, p); {
		case err != nil:
			if failed == nil {
				failed = err
			}
		case h == abi.HintQueue:
			return abi.HintQueue, nil
		}
	}
	if failed != nil {
		return abi.HintQueue, failed
	}
	return abi.HintSkip, nil
}

// always is the hint of an event upstream registers without a hint
// function: the event always queues the pod.
func always(abi.EventView, abi.PodView) (abi.Hint, error) { return abi.HintQueue, nil }

// declaredFeaturesAfterPodUpdate mirrors nodedeclaredfeatures'
// isSchedulableAfterTargetPodUpdate: the pod's own update queues when the
// node features it needs changed. A record of an older host carries no
// features, so that update queues.
func declaredFeaturesAfterPodUpdate(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	updated, self, err := targetPod(ev, p)
	if err != nil || !self {
		return queueIf(err != nil), err
	}
	before, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	if !before.TermsKnown() || !updated.TermsKnown() {
		return abi.HintQueue, nil
	}
	return queueIf(!sameList(before.RequiredFeatures(), updated.RequiredFeatures())), nil
}
