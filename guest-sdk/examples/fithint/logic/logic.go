// Package logic is a QueueingHint for the NodeResourcesFit filter, after
// upstream's: a pod the filter rejected may fit
//
//   - after a node is added or its allocatable changes, if every resource
//     the pod requests fits in the node's allocatable minus what its pods
//     already request (cpu in millicores, other resources in base units; a
//     resource the node does not list counts as 0, one the pod does not
//     request is ignored);
//   - after an assigned pod is deleted, if that pod requested at least one
//     of the resources the pending pod requests.
//
// Every other case is Skip. The hint runs once per candidate pod on every
// such event, so it does not allocate.
package logic

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
)

// Name is the plugin whose rejections the hint is about.
const Name = "NodeResourcesFit"

// Plugin is what the module registers.
var Plugin = hint.Plugin{
	Name: Name,
	Events: []hint.Event{
		{Resource: abi.ResourceNode, Actions: abi.ActionAdd | abi.ActionUpdateNodeAllocatable},
		{Resource: abi.ResourcePod, Actions: abi.ActionDelete},
	},
	Hint: Hint,
}

var (
	errNoNode = errors.New("fithint: node event without the node")
	errNoPod  = errors.New("fithint: pod delete event without the deleted pod")
)

// Hint decides whether ev may make p fit.
func Hint(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	switch {
	case ev.Resource() == abi.ResourceNode && ev.Action()&(abi.ActionAdd|abi.ActionUpdateNodeAllocatable) != 0:
		n, ok := ev.NewNode()
		if !ok {
			return abi.HintSkip, errNoNode
		}
		return queueIf(Fits(p, n)), nil
	case ev.Resource() == abi.ResourcePod && ev.Action()&abi.ActionDelete != 0:
		deleted, ok := ev.OldPod()
		if !ok {
			return abi.HintSkip, errNoPod
		}
		return queueIf(SharesResource(p, deleted)), nil
	}
	return abi.HintSkip, nil
}

func queueIf(v bool) abi.Hint {
	if v {
		return abi.HintQueue
	}
	return abi.HintSkip
}

// Fits reports whether every resource p requests fits in n's allocatable
// minus its requested amount.
func Fits(p abi.PodView, n abi.NodeView) bool {
	reqs, alloc, used := p.Requests(), n.Allocatable(), n.Requested()
	for i := range reqs.Len() {
		name, v := reqs.At(i)
		if v <= 0 {
			continue
		}
		if v > alloc.Get(name)-used.Get(name) {
			return false
		}
	}
	return true
}

// SharesResource reports whether deleted requested any resource that p
// requests.
func SharesResource(p, deleted abi.PodView) bool {
	reqs, freed := p.Requests(), deleted.Requests()
	for i := range reqs.Len() {
		if name, v := reqs.At(i); v > 0 && freed.Get(name) > 0 {
			return true
		}
	}
	return false
}
