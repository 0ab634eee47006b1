// Package logic gates pods that carry the label [Label]: such a pod does not
// enter the scheduling queues until the label is removed.
package logic

import "github.com/wasmsched/wasmsched/abi"

const (
	// Label holds a pod back, whatever its value.
	Label = "example.wasmsched.io/hold"
	// Plugin is the gating plugin's name in the pod's condition.
	Plugin = "HoldLabel"
)

// PreEnqueue admits a pod unless it has the label [Label].
func PreEnqueue(p abi.PodView) abi.Gate {
	v, ok := p.Labels().Get(Label)
	if !ok {
		return abi.Gate{Code: abi.GateAdmit}
	}
	return abi.Gate{
		Code:   abi.GateWait,
		Plugin: Plugin,
		Reason: "pod has label " + Label + "=" + v + "; remove it to schedule",
	}
}
