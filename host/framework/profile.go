package framework

import (
	"fmt"

	"github.com/wasmsched/wasmsched/host/cache"
)

// defaultProfile is upstream v1.37.1's default profile
// (pkg/scheduler/apis/config/v1/default_plugins.go) in upstream's order,
// less the plugins that live elsewhere in wasmsched: SchedulingGates and
// PrioritySort are policy slots (host/policy), DefaultPreemption is
// host/preempt, DefaultBinder is host/cycle's binding. The order is the
// filter order (the first rejecting filter names a node's reason) and the
// pre-filter order.
//
// A plugin not written yet stands here as an unsupported placeholder: a pod
// carrying a hard constraint only it checks is refused in its name
// (unsupported.go). Writing the plugin replaces its placeholder line.
// VolumeZone and ImageLocality have no placeholder: VolumeBinding's refuses
// the claims VolumeZone would check, and ImageLocality only scores.
var defaultProfile = mustProfile(
	Entry{Plugin: nodeName{}},
	Entry{Plugin: nodeUnschedulable{}},
	Entry{Plugin: taintToleration{}, Weight: weightTaintToleration},
	Entry{Plugin: nodeAffinity{}, Weight: weightNodeAffinity},
	Entry{Plugin: nodePorts{}},
	Entry{Plugin: nodeResourcesFit{}, Weight: weightNodeResourcesFit},
	Entry{Plugin: unsupportedVolumeRestrictions},
	Entry{Plugin: unsupportedNodeVolumeLimits},
	Entry{Plugin: unsupportedVolumeBinding},     // weight 1 once written
	Entry{Plugin: unsupportedPodTopologySpread}, // weight 2 once written
	Entry{Plugin: unsupportedInterPodAffinity},  // weight 2 once written
	Entry{Plugin: unsupportedDynamicResources},  // weight 2 once written
	Entry{Plugin: nodeResourcesBalancedAllocation{}, Weight: weightNodeResourcesBalancedAllocation},
	Entry{Plugin: nodeDeclaredFeatures{}},
)

// Default is the profile every cycle, preemption's dry runs and the tests
// use: upstream's default profile (see defaultProfile).
func Default() *Profile { return defaultProfile }

// Prepare is Default().Prepare(pod, snap).
func Prepare(pod *cache.PodInfo, snap *cache.Snapshot) (*PodState, *Status) {
	return defaultProfile.Prepare(pod, snap)
}

// Entry is one plugin of a profile with its score weight (ignored unless
// the plugin is a PreScorePlugin, and then at least 1).
type Entry struct {
	Plugin Plugin
	Weight int64
}

// Profile is an ordered list of plugins (upstream's KubeSchedulerProfile
// with its plugins and weights), sorted by extension point once when built.
// It is immutable and safe for concurrent use.
type Profile struct {
	names       []string
	unsupported []*unsupportedPlugin
	preFilters  []PreFilterPlugin
	preScores   []weightedPreScore
}

type weightedPreScore struct {
	plugin PreScorePlugin
	weight int64
}

// NewProfile builds a profile of entries, in order. Each plugin name may
// appear once; a scorer needs a weight of at least 1.
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
		p.names = append(p.names, name)
		if u, ok := e.Plugin.(*unsupportedPlugin); ok {
			p.unsupported = append(p.unsupported, u)
			continue
		}
		if f, ok := e.Plugin.(PreFilterPlugin); ok {
			p.preFilters = append(p.preFilters, f)
		}
		if s, ok := e.Plugin.(PreScorePlugin); ok {
			if e.Weight < 1 {
				return nil, fmt.Errorf("score plugin %s needs a weight of at least 1, not %d", name, e.Weight)
			}
			p.preScores = append(p.preScores, weightedPreScore{s, e.Weight})
		}
	}
	return p, nil
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

// FilterPlugins are the names of the plugins with a filter, in filter order.
// The slice is the caller's.
func (p *Profile) FilterPlugins() []string {
	out := make([]string, len(p.preFilters))
	for i, f := range p.preFilters {
		out[i] = f.Name()
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
