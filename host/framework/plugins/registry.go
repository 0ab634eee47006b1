// Package plugins is wasmsched's registry of native plugins: one row per
// plugin, in the order of upstream's default profile. Each plugin is a
// package of its own beside this one, declaring its row (Row) next to its
// code; adding a plugin is one package and one line here. A plugin
// package imports the framework runtime (host/framework) and helpers
// (helper), never another plugin, the cycle or the queue: hack/imports.sh
// checks it.
package plugins

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/defaultpreemption"
	"github.com/wasmsched/wasmsched/host/framework/plugins/dynamicresources"
	"github.com/wasmsched/wasmsched/host/framework/plugins/imagelocality"
	"github.com/wasmsched/wasmsched/host/framework/plugins/interpodaffinity"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeaffinity"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodedeclaredfeatures"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodename"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeports"
	"github.com/wasmsched/wasmsched/host/framework/plugins/noderesources"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodeunschedulable"
	"github.com/wasmsched/wasmsched/host/framework/plugins/nodevolumelimits"
	"github.com/wasmsched/wasmsched/host/framework/plugins/podtopologyspread"
	"github.com/wasmsched/wasmsched/host/framework/plugins/tainttoleration"
	"github.com/wasmsched/wasmsched/host/framework/plugins/volumebinding"
	"github.com/wasmsched/wasmsched/host/framework/plugins/volumerestrictions"
	"github.com/wasmsched/wasmsched/host/framework/plugins/volumezone"
	"github.com/wasmsched/wasmsched/host/framework/plugins/wasmplacement"
)

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
func InTree() *framework.Registry {
	return framework.MustRegistry(
		framework.Row{Name: abi.PluginSchedulingGates, Points: framework.PointsOf(framework.PointPreEnqueue), Default: true},
		framework.Row{Name: abi.PluginPrioritySort, Points: framework.PointsOf(framework.PointQueueSort), Default: true},
		nodename.Row(),
		nodeunschedulable.Row(),
		tainttoleration.Row(),
		nodeaffinity.Row(),
		nodeports.Row(),
		noderesources.FitRow(),
		volumerestrictions.Row(),
		nodevolumelimits.Row(),
		volumebinding.Row(),
		volumezone.Row(),
		podtopologyspread.Row(),
		interpodaffinity.Row(),
		dynamicresources.Row(),
		defaultpreemption.Row(),
		noderesources.BalancedAllocationRow(),
		imagelocality.Row(),
		framework.Row{Name: abi.PluginDefaultBinder, Points: framework.PointsOf(framework.PointBind), Default: true},
		nodedeclaredfeatures.Row(),
		framework.Row{Name: abi.PluginGangScheduling, Points: framework.PointsOf(framework.PointPreEnqueue, framework.PointPermit)},
		// wasmsched's own: the placement slots' plugins, no-ops while the
		// slots are empty.
		wasmplacement.FilterRow(),
		wasmplacement.ScoreRow(),
		framework.Row{Name: "DeferredPodScheduling", NotImplemented: "InPlacePodVerticalScalingSchedulerPreemption, alpha"},
		framework.Row{Name: "TopologyPlacementGenerator", NotImplemented: "TopologyAwareWorkloadScheduling, alpha"},
		framework.Row{Name: "PodGroupPodsCount", NotImplemented: "TopologyAwareWorkloadScheduling, alpha"},
	)
}
