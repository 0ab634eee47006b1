package framework

import (
	"fmt"

	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// DefaultEntries is upstream v1.37.1's default profile
// (pkg/scheduler/apis/config/v1/default_plugins.go) in upstream's order,
// with its weights, the plugins that read the API beyond the snapshot
// reading it through l: less the plugins that live elsewhere in wasmsched:
// SchedulingGates and PrioritySort are policy slots (host/policy),
// DefaultPreemption is host/preempt, DefaultBinder is host/cycle's binding.
// The order is the filter order (the first rejecting filter names a node's
// reason) and the pre-filter order.
//
// A plugin not written yet stands here as an unsupported placeholder: a pod
// carrying a hard constraint only it checks is refused in its name
// (unsupported.go). Writing the plugin replaces its placeholder line.
// VolumeZone has no placeholder: VolumeBinding's refuses the claims
// VolumeZone would check.
func DefaultEntries(l Listers) []Entry {
	return []Entry{
		{Plugin: nodeName{}},
		{Plugin: nodeUnschedulable{}},
		{Plugin: taintToleration{}, Weight: weightTaintToleration},
		{Plugin: nodeAffinity{}, Weight: weightNodeAffinity},
		{Plugin: nodePorts{}},
		{Plugin: nodeResourcesFit{}, Weight: weightNodeResourcesFit},
		{Plugin: unsupportedVolumeRestrictions},
		{Plugin: unsupportedNodeVolumeLimits},
		{Plugin: unsupportedVolumeBinding}, // weight 1 once written
		{Plugin: newPodTopologySpread(l), Weight: weightPodTopologySpread},
		{Plugin: interPodAffinity{namespaces: l.Namespaces}, Weight: weightInterPodAffinity},
		{Plugin: unsupportedDynamicResources}, // weight 2 once written
		{Plugin: nodeResourcesBalancedAllocation{}, Weight: weightNodeResourcesBalancedAllocation},
		{Plugin: imageLocality{}, Weight: weightImageLocality},
		{Plugin: nodeDeclaredFeatures{}},
	}
}

// Listers are what plugins read from the API besides the snapshot, backed
// by the scheduler's informers (host/app). A nil lister reads as empty:
// namespaces without labels, no Service or controller selecting any pod.
type Listers struct {
	// Namespaces: InterPodAffinity's namespaceSelector.
	Namespaces corelisters.NamespaceLister
	// Services, ReplicationControllers, ReplicaSets, StatefulSets: the
	// selectors of PodTopologySpread's system default constraints.
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister
}

// NewDefaultProfile is the default profile (DefaultEntries) reading the API
// through l: the profile a running scheduler uses.
func NewDefaultProfile(l Listers) *Profile { return mustProfile(DefaultEntries(l)...) }

// defaultProfile is the default profile without listers: what Default and
// Prepare serve to tests and tools that have no API.
var defaultProfile = NewDefaultProfile(Listers{})

// Default is the default profile without listers (see defaultProfile): no
// namespace labels, no default spreading.
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
