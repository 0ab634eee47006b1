// Package hint implements the QueueingHint slot (KEP-4247) in a policy
// module. Importing it makes the module export [abi.ExportHintEvents] and
// [abi.ExportQueueingHint]; [Register] says which plugins' hints they run.
//
// The host sends one event with every candidate pod in a batch; for each pod
// the module runs, like upstream's queue, the hint of every registered plugin
// that is interested in the event and rejected the pod (see [DecidePod]).
package hint

import (
	"errors"
	"math/bits"

	"github.com/wasmsched/wasmsched/abi"
)

// Event is an event a plugin registers for: any of Actions on Resource
// (abi.ResourceWildcard for every resource).
type Event struct {
	Resource abi.EventResource
	Actions  abi.ActionType
}

// Plugin is the QueueingHint side of a scheduling plugin: the events that
// may make a pod it rejected schedulable, and the function that decides.
type Plugin struct {
	// Name is the plugin named in a pod's unschedulable or pending plugins;
	// abi.PluginWildcard applies the hint to every pod.
	Name   string
	Events []Event
	// Hint decides whether ev may make p schedulable. An error counts as
	// abi.HintError, which the host treats as Queue. A nil Hint always
	// queues (upstream's default for a plugin without a hint function).
	Hint func(ev abi.EventView, p abi.PodView) (abi.Hint, error)
}

var (
	registered []Plugin
	regs       []abi.Registration
)

// Register adds plugins to the module's QueueingHint policy. Call it from an
// init function. It panics if the registrations are not valid (see
// [Registrations]).
func Register(plugins ...Plugin) {
	all := append(registered[:len(registered):len(registered)], plugins...)
	r, err := Registrations(all)
	if err != nil {
		panic("hint.Register: " + err.Error())
	}
	registered, regs = all, r
}

// Registrations lists the (plugin, resource, actions) triples of plugins and
// checks them as the host will: a plugin needs a name, and each event a known
// resource and a non-empty set of known actions.
func Registrations(plugins []Plugin) ([]abi.Registration, error) {
	if len(plugins) > maxPlugins {
		return nil, errTooManyPlugins
	}
	var out []abi.Registration
	for _, p := range plugins {
		for _, e := range p.Events {
			out = append(out, abi.Registration{Plugin: p.Name, Resource: e.Resource, Actions: e.Actions})
		}
	}
	if _, err := abi.DecodeRegistrations(abi.AppendRegistrations(nil, out)); err != nil {
		return nil, err
	}
	return out, nil
}

var (
	errLength         = errors.New("hint: the batch and the output differ in length")
	errTooManyPlugins = errors.New("hint: at most 64 plugins per module")
)

// Decide writes into out (one entry per pod of batch) the hint for each pod
// of batch about its event, by [DecidePod]. It fails only on a malformed
// batch. This is the logic of the [abi.ExportQueueingHint] export.
func Decide(plugins []Plugin, batch abi.HintBatchView, out []abi.Hint) error {
	if len(out) != batch.Len() {
		return errLength
	}
	ev, err := batch.Event()
	if err != nil {
		return err
	}
	d := newDispatch(plugins, ev)
	for i := range out {
		p, err := batch.Pod(i)
		if err != nil {
			return err
		}
		out[i] = d.decide(ev, p)
	}
	return nil
}

// DecidePods is [Decide] for an event and pods already decoded (the host's
// native QueueingHint interface); out has one entry per pod.
func DecidePods(plugins []Plugin, ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	d := newDispatch(plugins, ev)
	for i, p := range pods[:len(out)] {
		out[i] = d.decide(ev, p)
	}
}

// DecidePod decides like upstream's queue for one pod: it runs the Hint of
// every plugin that registered for the event (resource matches, actions
// overlap) and rejected p (p's unschedulable or pending plugins name it, or
// the plugin is the wildcard), in registration order. The pod is queued as
// soon as one says Queue; otherwise it gets abi.HintError if a hint failed,
// and abi.HintSkip if none failed or no plugin applies.
func DecidePod(plugins []Plugin, ev abi.EventView, p abi.PodView) abi.Hint {
	d := newDispatch(plugins, ev)
	return d.decide(ev, p)
}

// maxPlugins bounds the plugins of one module: dispatch keeps sets of them in
// a uint64.
const maxPlugins = 64

// dispatch is the part of DecidePod that depends only on the event, worked
// out once per batch: which plugins registered for it. Per pod, only the
// pod's own rejecting plugins are then looked up among those, instead of
// scanning the pod's plugin lists once per registered plugin.
type dispatch struct {
	plugins []Plugin
	want    uint64 // plugins (by index) that registered for the event
	every   uint64 // wildcard plugins among want: they apply to every pod
}

func newDispatch(plugins []Plugin, ev abi.EventView) dispatch {
	d := dispatch{plugins: plugins[:min(len(plugins), maxPlugins)]}
	res, act := ev.Resource(), ev.Action()
	for i := range d.plugins {
		if d.plugins[i].wants(res, act) {
			d.want |= 1 << i
			if d.plugins[i].Name == abi.PluginWildcard {
				d.every |= 1 << i
			}
		}
	}
	return d
}

func (d *dispatch) decide(ev abi.EventView, p abi.PodView) abi.Hint {
	m := d.every
	if named := d.want &^ d.every; named != 0 {
		m |= d.match(named, p.UnschedulablePlugins()) | d.match(named, p.PendingPlugins())
	}
	failed := false
	for ; m != 0; m &= m - 1 { // registration order: lowest index first
		pl := &d.plugins[bits.TrailingZeros64(m)]
		if pl.Hint == nil {
			return abi.HintQueue
		}
		switch h, err := pl.Hint(ev, p); {
		case err != nil || h > abi.HintQueue:
			failed = true
		case h == abi.HintQueue:
			return abi.HintQueue
		}
	}
	if failed {
		return abi.HintError
	}
	return abi.HintSkip
}

// match returns the plugins of set whose name is in names.
func (d *dispatch) match(set uint64, names abi.StrList) uint64 {
	var m uint64
	for k := 0; k < names.Len(); k++ {
		name := names.At(k)
		for w := set; w != 0; w &= w - 1 {
			if i := bits.TrailingZeros64(w); d.plugins[i].Name == name {
				m |= 1 << i
			}
		}
	}
	return m
}

// wants reports whether one of p's events covers (res, act).
func (p *Plugin) wants(res abi.EventResource, act abi.ActionType) bool {
	for _, e := range p.Events {
		if e.Resource.Matches(res) && e.Actions&act != 0 {
			return true
		}
	}
	return false
}
