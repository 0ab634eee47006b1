package abi

// Names of the host's native plugins, as they appear in a pod's unschedulable
// and pending plugins and in QueueingHint registrations. They are upstream's
// names, so a policy written against upstream's plugin set reads naturally.
const (
	PluginNodeResourcesFit  = "NodeResourcesFit"
	PluginNodeAffinity      = "NodeAffinity"
	PluginTaintToleration   = "TaintToleration"
	PluginNodeUnschedulable = "NodeUnschedulable"
	PluginNodePorts         = "NodePorts"
	PluginNodeName          = "NodeName"
	// PluginNodeDeclaredFeatures checks status.declaredFeatures (GA in v1.37).
	PluginNodeDeclaredFeatures = "NodeDeclaredFeatures"
	// PluginSchedulingGates holds pods with spec.schedulingGates (the host
	// applies it natively, before the PreEnqueue slot).
	PluginSchedulingGates = "SchedulingGates"
	// PluginGangScheduling is the conventional name for a PreEnqueue policy
	// that holds a pod group's members until the group can be scheduled.
	PluginGangScheduling = "GangScheduling"
	// PluginDefaultPreemption rejects a pod that cannot preempt (KEP-902).
	PluginDefaultPreemption = "DefaultPreemption"

	// The volume, topology-spread, inter-pod affinity and DRA plugins of
	// upstream's default profile, native in the host like those above.
	PluginVolumeRestrictions = "VolumeRestrictions"
	PluginNodeVolumeLimits   = "NodeVolumeLimits"
	PluginVolumeBinding      = "VolumeBinding"
	PluginVolumeZone         = "VolumeZone"
	PluginPodTopologySpread  = "PodTopologySpread"
	PluginInterPodAffinity   = "InterPodAffinity"
	PluginDynamicResources   = "DynamicResources"
)

// Upstream plugins that wasmsched serves outside its plugin framework,
// named where a KubeSchedulerConfiguration must keep them.
const (
	// PluginPrioritySort is upstream's queue sort: wasmsched's queueSort
	// policy slot.
	PluginPrioritySort = "PrioritySort"
	// PluginDefaultBinder is upstream's binder: the cycle's binding.
	PluginDefaultBinder = "DefaultBinder"
)
