package framework

import (
	"fmt"
)

// Entry is one plugin of a profile with its score weight (ignored unless
// the plugin is a PreScorePlugin that scores, and then at least 1), and
// the extension points a configuration disabled for it (upstream's
// per-extension-point disabled lists; Build sets them). The zero value of
// the No fields runs every extension point the plugin implements.
type Entry struct {
	Plugin Plugin
	Weight int64
	// NoFilter leaves out the plugin's per-node filter while its PreFilter
	// still runs (its node restriction and its rejections before any node
	// stand), as upstream with the plugin's filter disabled. NoPreFilter
	// leaves out its PreFilter too, and requires NoFilter: the filter of a
	// PodFilter is what its PreFilter returns. For a placeholder
	// (unsupported.go) either one is its whole check, so it takes both.
	NoPreFilter, NoFilter bool
	// NoScore leaves out the plugin's PreScore and score: it adds nothing to
	// any node, and needs no weight.
	NoScore bool
	// NoReserve leaves out a ReservePlugin's Reserve and Unreserve;
	// NoPreBind a PreBindPlugin's PreBind.
	NoReserve, NoPreBind bool
	// NoPostFilter leaves out a PostFilterPlugin's PostFilter;
	// NoPreEnqueue a PreEnqueuePlugin's PreEnqueue.
	NoPostFilter, NoPreEnqueue bool
}

// Profile is an ordered list of plugins (upstream's KubeSchedulerProfile
// with its plugins and weights), sorted by extension point once when built.
// It is immutable and safe for concurrent use.
type Profile struct {
	names       []string
	unsupported []*unsupportedPlugin
	preFilters  []PreFilterPlugin
	// noFilter[i] is set when preFilters[i]'s filter is disabled (its
	// PreFilter runs for its node restriction and rejections only).
	noFilter  []bool
	preScores []weightedPreScore
	// keep[i] is set when preFilters[i] also reserves, pre-binds,
	// post-filters or scores what its filter found (StatePreScorePlugin): its
	// filter for a pod is kept by name (PodState.PluginFilter), even when
	// disabled, for its later points to read. nil when none does.
	keep        []bool
	reserves    []ReservePlugin
	preBinds    []PreBindPlugin
	postFilters []PostFilterPlugin
	preEnqueues []PreEnqueuePlugin
	// timer times Reserve, Unreserve and PreBind (WithPluginTimer).
	timer PluginTimer
	// same is the profile whose plugins find what this one's do
	// (SameResultsAs); nil for itself.
	same *Profile
}

// SameResultsAs declares that p's plugins find, for every pod and node,
// what base's find (the cycle's timed profile wraps the plain one's
// plugins to time them), so that a Memo filled under one serves the other.
// It returns p.
func (p *Profile) SameResultsAs(base *Profile) *Profile {
	p.same = base.results()
	return p
}

// results is the profile a Memo is filled for on behalf of p.
func (p *Profile) results() *Profile {
	if p.same != nil {
		return p.same
	}
	return p
}

type weightedPreScore struct {
	plugin PreScorePlugin
	weight int64
	// state is the plugin unwrapped when it is a StatePreScorePlugin.
	state StatePreScorePlugin
}

// NewProfile builds a profile of entries, in order, leaving out the
// extension points an entry disables. Each plugin name may appear once; a
// scorer that scores needs a weight of at least 1; NoPreFilter needs
// NoFilter.
func NewProfile(entries ...Entry) (*Profile, error) {
	p := &Profile{}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Plugin == nil {
			return nil, fmt.Errorf("profile entry %d has no plugin", len(p.names))
		}
		name := e.Plugin.Name()
		if seen[name] {
			return nil, fmt.Errorf("plugin %s is listed twice in the profile", name)
		}
		seen[name] = true
		if e.NoPreFilter && !e.NoFilter {
			return nil, fmt.Errorf("plugin %s: its filter cannot run without its PreFilter (NoPreFilter needs NoFilter)", name)
		}
		p.names = append(p.names, name)
		if u, ok := e.Plugin.(*unsupportedPlugin); ok {
			if !e.NoPreFilter || !e.NoFilter {
				p.unsupported = append(p.unsupported, u)
			}
			continue
		}
		if f, ok := e.Plugin.(PreFilterPlugin); ok && !e.NoPreFilter {
			p.preFilters = append(p.preFilters, f)
			p.noFilter = append(p.noFilter, e.NoFilter)
		}
		if s, ok := e.Plugin.(PreScorePlugin); ok && !e.NoScore {
			if e.Weight < 1 {
				return nil, fmt.Errorf("score plugin %s needs a weight of at least 1, not %d", name, e.Weight)
			}
			// A wrapper's own PreScoreState (the timed profile's) first.
			sp, ok := e.Plugin.(StatePreScorePlugin)
			if !ok {
				sp, _ = Unwrap(e.Plugin).(StatePreScorePlugin)
			}
			p.preScores = append(p.preScores, weightedPreScore{s, e.Weight, sp})
		}
		inner := Unwrap(e.Plugin)
		_, statePreScore := inner.(StatePreScorePlugin)
		r, reserves := inner.(ReservePlugin)
		if reserves && !e.NoReserve {
			p.reserves = append(p.reserves, r)
		}
		b, preBinds := inner.(PreBindPlugin)
		if preBinds && !e.NoPreBind {
			p.preBinds = append(p.preBinds, b)
		}
		if pe, ok := inner.(PreEnqueuePlugin); ok && !e.NoPreEnqueue {
			p.preEnqueues = append(p.preEnqueues, pe)
		}
		pf, postFilters := inner.(PostFilterPlugin)
		if postFilters && !e.NoPostFilter {
			p.postFilters = append(p.postFilters, pf)
		}
		if _, ok := e.Plugin.(PreFilterPlugin); ok && !e.NoPreFilter &&
			(reserves && !e.NoReserve || preBinds && !e.NoPreBind || statePreScore && !e.NoScore || postFilters && !e.NoPostFilter) {
			p.keep = append(p.keep, make([]bool, len(p.preFilters)-len(p.keep))...)
			p.keep[len(p.preFilters)-1] = true
		}
	}
	if p.keep != nil {
		p.keep = append(p.keep, make([]bool, len(p.preFilters)-len(p.keep))...)
	}
	return p, nil
}

// PluginWrapper is implemented by a Plugin that wraps another to time its
// filters and scores (the cycle's timed profile): the profile runs the
// wrapped plugin's Reserve, Unreserve and PreBind, which the profile's
// PluginTimer times.
type PluginWrapper interface {
	Unwrap() Plugin
}

// Unwrap is what v wraps, through every wrapper (PluginWrapper,
// FilterWrapper: a wrapper of a T whose Unwrap returns a T); v itself when
// it wraps nothing.
func Unwrap[T any](v T) T {
	for {
		w, ok := any(v).(interface{ Unwrap() T })
		if !ok {
			return v
		}
		v = w.Unwrap()
	}
}

func mustProfile(entries ...Entry) *Profile {
	p, err := NewProfile(entries...)
	if err != nil {
		panic(err)
	}
	return p
}

// Plugins are the names of the profile's plugins, in order (placeholders
// included). The slice is the caller's.
func (p *Profile) Plugins() []string { return append([]string(nil), p.names...) }

// FilterPlugins are the names of the plugins with a filter, in filter order
// (those whose filter is disabled while their PreFilter runs left out). The
// slice is the caller's.
func (p *Profile) FilterPlugins() []string {
	out := make([]string, 0, len(p.preFilters))
	for i, f := range p.preFilters {
		if !p.noFilter[i] {
			out = append(out, f.Name())
		}
	}
	return out
}

// ScorePlugins are the names of the plugins with a score and their
// weights, in order.
func (p *Profile) ScorePlugins() []Entry {
	out := make([]Entry, len(p.preScores))
	for i, s := range p.preScores {
		out[i] = Entry{Plugin: s.plugin, Weight: s.weight}
	}
	return out
}
