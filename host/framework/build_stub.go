package framework

// STAND-IN for H4's Build (issue 20): the contract the configuration codes
// against, until host/framework's real Build lands. Drop this file at merge.

import (
	"fmt"

	kschedv1 "k8s.io/kube-scheduler/config/v1"
)

// Config is one profile's plugin configuration, as a
// KubeSchedulerConfiguration v1 profile writes it.
type Config struct {
	Plugins      *kschedv1.Plugins       // nil: upstream's default plugin set
	PluginConfig []kschedv1.PluginConfig // args (Args.Raw JSON or Args.Object *kschedv1.XxxArgs)
}

// Built is a profile's plugins, ready for the cycle.
type Built struct {
	Entries    []Entry
	Preemption PreemptionArgs
}

// PreemptionArgs are DefaultPreemption's args, defaulted.
type PreemptionArgs struct{ MinCandidateNodesPercentage, MinCandidateNodesAbsolute int32 }

// Build is the stand-in: the default plugins for an empty Config, an error
// naming the field otherwise.
func Build(l Listers, c Config) (Built, error) {
	if c.Plugins != nil {
		return Built{}, fmt.Errorf("plugins: not supported yet (stand-in Build)")
	}
	for i, pc := range c.PluginConfig {
		return Built{}, fmt.Errorf("pluginConfig[%d] (%s): not supported yet (stand-in Build)", i, pc.Name)
	}
	return Built{Entries: DefaultEntries(l), Preemption: PreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}}, nil
}
