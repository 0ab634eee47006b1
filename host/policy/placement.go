package policy

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/wasmsched/wasmsched/abi"
)

// PlacementNode is one node of a placement call: its record and what a
// module needs to keep it (the node records live in the module's memory and
// cross the boundary only when their generation moved).
type PlacementNode struct {
	// ID names the node in a module's memory; the host gives each node name
	// one for the life of the scheduler.
	ID uint32
	// Gen is the generation of the snapshot's node info the record was
	// built from; a module is sent the record again when it moves.
	Gen int64
	// Rec is the node's record.
	Rec abi.NodeView
	// Inline marks a node that is not the snapshot's (preemption's dry run
	// of a node without its victims): sent whole, never kept.
	Inline bool
}

// FilterVerdict is a filter's verdict on one node; Reason is empty for a pass.
type FilterVerdict struct {
	Code   abi.FilterCode
	Reason string
}

// Filter is the filter slot: it rejects nodes the native filters accepted,
// one call per pod over a list of nodes. A Filter returns an error instead
// of answering when it cannot (its module trapped, overran its deadline,
// answered garbage, or its breaker is open): the caller then applies the
// slot's [FailurePolicy]. Implementations are safe for concurrent use.
type Filter interface {
	// Options are the module's declared options (the events that may make
	// a node it rejected fit).
	Options() abi.PlacementOptions
	// PreFilter reports whether the filter concerns pod; false passes every
	// node without asking it.
	PreFilter(pod abi.PodView) (bool, error)
	// Filter writes into out[i] the verdict on nodes[i].
	Filter(pod abi.PodView, nodes []PlacementNode, out []FilterVerdict) error
}

// Score is the score slot: it ranks the feasible nodes, one call per pod.
// Errors are as a Filter's.
type Score interface {
	// Options are the module's declared options (whether its scores are
	// already normalised).
	Options() abi.PlacementOptions
	// PreScore reports whether the score concerns pod; false adds nothing
	// to any node's score.
	PreScore(pod abi.PodView) (bool, error)
	// Score writes into out[i] the score of nodes[i].
	Score(pod abi.PodView, nodes []PlacementNode, out []int64) error
}

// FailurePolicy is what a placement slot does when its policy fails, as an
// admission webhook's failurePolicy.
type FailurePolicy uint8

const (
	// FailureDefault is the slot's default: Fail for the filter, Ignore for
	// the score.
	FailureDefault FailurePolicy = iota
	// Fail: a filter that fails rejects every node it was asked about for
	// this attempt (Unschedulable, naming the error), so the pod retries with
	// backoff and never runs where the policy did not approve; a score that
	// fails fails the scheduling attempt.
	Fail
	// Ignore: the slot is skipped for the decision.
	Ignore
)

func (f FailurePolicy) String() string {
	switch f {
	case Fail:
		return "Fail"
	case Ignore:
		return "Ignore"
	}
	return ""
}

// ParseFailurePolicy reads "Fail" or "Ignore"; "" is FailureDefault.
func ParseFailurePolicy(s string) (FailurePolicy, error) {
	switch s {
	case "":
		return FailureDefault, nil
	case "Fail":
		return Fail, nil
	case "Ignore":
		return Ignore, nil
	}
	return 0, fmt.Errorf("failurePolicy %q: use Fail or Ignore", s)
}

// For resolves FailureDefault for slot.
func (f FailurePolicy) For(slot abi.Slot) FailurePolicy {
	if f != FailureDefault {
		return f
	}
	if slot == abi.SlotFilter {
		return Fail
	}
	return Ignore
}

// ErrNoModule is what a placement adapter whose Set closed answers with.
var ErrNoModule = errors.New("no placement module serves the slot")

// Placement holds what one profile's placement slots serve: the filter and
// the score the Wasm placement plugins call, each with its failure policy.
// The slots' Installer functions are SetFilter and SetScore; a nil policy
// empties the slot (the plugin does nothing). The plugins read the current
// policies once per scheduling cycle, so a swap takes effect between cycles.
type Placement struct {
	filter atomic.Pointer[placed[Filter]]
	score  atomic.Pointer[placed[Score]]
	// filterFail and scoreFail are the failure policies (FailurePolicy).
	filterFail, scoreFail atomic.Uint32
	// onFilterSwap is called after the filter changed (the queue moves the
	// pods the previous filter rejected); nil: nothing.
	onFilterSwap atomic.Pointer[func()]
}

type placed[P any] struct{ p P }

// SetFilter makes f the profile's filter (nil: none) and calls the swap
// callback.
func (pl *Placement) SetFilter(f Filter) {
	if f == nil {
		pl.filter.Store(nil)
	} else {
		pl.filter.Store(&placed[Filter]{f})
	}
	if cb := pl.onFilterSwap.Load(); cb != nil {
		(*cb)()
	}
}

// SetScore makes s the profile's score (nil: none).
func (pl *Placement) SetScore(s Score) {
	if s == nil {
		pl.score.Store(nil)
		return
	}
	pl.score.Store(&placed[Score]{s})
}

// Filter returns the current filter and its failure policy; nil when the
// slot is empty (or pl is nil).
func (pl *Placement) Filter() (Filter, FailurePolicy) {
	if pl == nil {
		return nil, Fail
	}
	if f := pl.filter.Load(); f != nil {
		return f.p, pl.FailurePolicy(abi.SlotFilter)
	}
	return nil, Fail
}

// Score returns the current score and its failure policy; nil when the slot
// is empty (or pl is nil).
func (pl *Placement) Score() (Score, FailurePolicy) {
	if pl == nil {
		return nil, Ignore
	}
	if s := pl.score.Load(); s != nil {
		return s.p, pl.FailurePolicy(abi.SlotScore)
	}
	return nil, Ignore
}

// SetFailurePolicy sets slot's failure policy (filter or score); nothing
// on a nil Placement.
func (pl *Placement) SetFailurePolicy(slot abi.Slot, f FailurePolicy) {
	if pl == nil {
		return
	}
	switch slot {
	case abi.SlotFilter:
		pl.filterFail.Store(uint32(f))
	case abi.SlotScore:
		pl.scoreFail.Store(uint32(f))
	}
}

// FailurePolicy returns slot's failure policy, its default resolved.
func (pl *Placement) FailurePolicy(slot abi.Slot) FailurePolicy {
	var f FailurePolicy
	if pl != nil {
		switch slot {
		case abi.SlotFilter:
			f = FailurePolicy(pl.filterFail.Load())
		case abi.SlotScore:
			f = FailurePolicy(pl.scoreFail.Load())
		}
	}
	return f.For(slot)
}

// OnFilterSwap sets what runs after every SetFilter: the queue's move of the
// pods the filter rejected, whose verdicts the new filter may change.
func (pl *Placement) OnFilterSwap(f func()) { pl.onFilterSwap.Store(&f) }
