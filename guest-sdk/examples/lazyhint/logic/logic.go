// Package logic is fithint's hint for NodeResourcesFit with one mistake:
// a node added is always Skip, whether the pod fits there or not. A shadow
// of the real hint catches it: every pod the real hint requeued for a new
// node, and that then bound, is one this hint would have delayed.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
)

// Plugin registers fithint's events with the lazy hint.
var Plugin = hint.Plugin{Name: fithint.Name, Events: fithint.Plugin.Events, Hint: Hint}

// Hint is fithint.Hint, but Skip for a node added.
func Hint(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	if ev.Resource() == abi.ResourceNode && ev.Action()&abi.ActionAdd != 0 {
		return abi.HintSkip, nil
	}
	return fithint.Hint(ev, p)
}
