package framework

import "github.com/wasmsched/wasmsched/abi"

// InTree is the registry of upstream v1.37.1's in-tree plugins
// (pkg/scheduler/framework/plugins/names.go), in the order of its default
// profile (getDefaultPlugins with the v1.37 feature gates at their
// defaults: DynamicResourceAllocation and NodeDeclaredFeatures on, GA;
// GenericWorkload, TopologyAwareWorkloadScheduling and
// InPlacePodVerticalScalingSchedulerPreemption off), less nothing: the
// plugins wasmsched serves elsewhere (SchedulingGates and PrioritySort as
// policy slots, DefaultPreemption as host/preempt, DefaultBinder as the
// cycle's binding, GangScheduling as the pod-group cycle) have rows
// without a factory, and those it does not implement a NotImplemented text.
func InTree() *Registry {
	return MustRegistry(
		Row{Name: abi.PluginSchedulingGates, Points: PointsOf(PointPreEnqueue), Default: true},
		Row{Name: prioritySort, Points: PointsOf(PointQueueSort), Default: true},
		nodeNameRow(),
		nodeUnschedulableRow(),
		taintTolerationRow(),
		nodeAffinityRow(),
		nodePortsRow(),
		nodeResourcesFitRow(),
		volumeRestrictionsRow(),
		nodeVolumeLimitsRow(),
		volumeBindingRow(),
		volumeZoneRow(),
		podTopologySpreadRow(),
		interPodAffinityRow(),
		dynamicResourcesRow(),
		Row{Name: abi.PluginDefaultPreemption, Points: PointsOf(PointPreEnqueue, PointPostFilter), Default: true, Args: preemptionArgs},
		balancedAllocationRow(),
		imageLocalityRow(),
		Row{Name: defaultBinder, Points: PointsOf(PointBind), Default: true},
		nodeDeclaredFeaturesRow(),
		Row{Name: abi.PluginGangScheduling, Points: PointsOf(PointPreEnqueue, PointPermit)},
		Row{Name: "DeferredPodScheduling", NotImplemented: "InPlacePodVerticalScalingSchedulerPreemption, alpha"},
		Row{Name: "TopologyPlacementGenerator", NotImplemented: "TopologyAwareWorkloadScheduling, alpha"},
		Row{Name: "PodGroupPodsCount", NotImplemented: "TopologyAwareWorkloadScheduling, alpha"},
	)
}
