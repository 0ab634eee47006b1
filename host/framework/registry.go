package framework

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
)

// Point is an extension point, as a KubeSchedulerConfiguration names it.
type Point int

// Upstream's extension points, in KubeSchedulerConfiguration's order.
const (
	PointPreEnqueue Point = iota
	PointQueueSort
	PointPreFilter
	PointFilter
	PointPostFilter
	PointPreScore
	PointScore
	PointReserve
	PointPermit
	PointPreBind
	PointBind
	PointPostBind
	PointPlacementGenerate
	PointPlacementScore
	PointPodGroupPostFilter
	numPoints
)

var pointNames = [numPoints]string{"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
	"score", "reserve", "permit", "preBind", "bind", "postBind", "placementGenerate", "placementScore",
	"podGroupPostFilter"}

func (p Point) String() string {
	if p >= 0 && p < numPoints {
		return pointNames[p]
	}
	return fmt.Sprintf("Point(%d)", int(p))
}

// Points is a set of extension points.
type Points uint32

// PointsOf is the set of ps.
func PointsOf(ps ...Point) Points {
	var out Points
	for _, p := range ps {
		out |= 1 << p
	}
	return out
}

// Has reports whether p is in s.
func (s Points) Has(p Point) bool { return s&(1<<p) != 0 }

// Row is one plugin of a Registry: everything wasmsched knows of it by
// name. A plugin declares its row next to its code; the registry lists the
// rows, and nothing else names the plugin.
type Row struct {
	// Name is the plugin's name in a KubeSchedulerConfiguration (and in
	// Status.Plugin, FailedScheduling messages, the queue's rejector
	// plugins).
	Name string
	// Points are the extension points the plugin implements: a
	// configuration enabling it at another point is refused, as upstream's
	// framework refuses it.
	Points Points
	// Default places the plugin in upstream's default profile, in registry
	// order, with Weight as its score weight (ignored unless it scores).
	// An out-of-tree plugin is off by default: a configuration enables it.
	Default bool
	Weight  int32
	// FilterAlone is set when upstream runs the plugin's filter without its
	// PreFilter (the filter needs no state from it), ScoreAlone likewise for
	// the score without its PreScore: disabling the PreFilter (PreScore)
	// alone is then accepted and changes nothing, since wasmsched's
	// PreFilter is what makes its filter. Otherwise it is refused.
	FilterAlone, ScoreAlone bool
	// Args decodes, defaults and validates the plugin's pluginConfig args
	// (DecodeArgs does the decoding), as upstream's v1 API does, into what
	// New receives; pc is nil when the configuration has no args for the
	// plugin, which gives upstream's defaults. Errors name the field under
	// path. nil: the plugin takes no args, and args for it are refused.
	Args func(pc *kschedv1.PluginConfig, path *field.Path) (any, error)
	// New builds the plugin for one profile from its args (nil when Args
	// is nil). It reaches what the scheduler's plugins share through h. nil:
	// the plugin is not one of the framework's: it is served elsewhere in
	// wasmsched (a policy slot, preemption, the binder), and the registry
	// only knows its name, points and args.
	New func(h Handle, args any) (Plugin, error)
	// NotImplemented, when set, is why wasmsched does not have this
	// upstream plugin (the alpha feature gate it needs): naming it in a
	// configuration is refused with this text.
	NotImplemented string
}

// Registry is the plugins a scheduler knows, in order: the default
// profile is its Default rows in that order. It is immutable.
type Registry struct {
	rows  []Row
	index map[string]int
}

// NewRegistry is the registry of rows, in order. Each name appears once,
// and a row that builds a plugin implements at least one point.
func NewRegistry(rows ...Row) (*Registry, error) {
	r := &Registry{index: make(map[string]int, len(rows))}
	return r.add(rows)
}

// With is r with rows added after its own (an out-of-tree plugin is one
// such row); r is unchanged.
func (r *Registry) With(rows ...Row) (*Registry, error) {
	out := &Registry{index: make(map[string]int, len(r.rows)+len(rows))}
	out, err := out.add(r.rows)
	if err != nil {
		return nil, err
	}
	return out.add(rows)
}

func (r *Registry) add(rows []Row) (*Registry, error) {
	for _, row := range rows {
		switch {
		case row.Name == "":
			return nil, fmt.Errorf("registry: a plugin row has no name")
		case row.Name == wildcard:
			return nil, fmt.Errorf("registry: %q cannot name a plugin", wildcard)
		case row.Points == 0 && row.NotImplemented == "":
			return nil, fmt.Errorf("registry: plugin %s implements no extension point", row.Name)
		case row.Weight < 0:
			return nil, fmt.Errorf("registry: plugin %s has a negative default weight %d", row.Name, row.Weight)
		}
		if _, dup := r.index[row.Name]; dup {
			return nil, fmt.Errorf("registry: plugin %s is registered twice", row.Name)
		}
		r.index[row.Name] = len(r.rows)
		r.rows = append(r.rows, row)
	}
	return r, nil
}

// MustRegistry is NewRegistry for rows known to be valid (the in-tree
// ones); it panics otherwise.
func MustRegistry(rows ...Row) *Registry {
	r, err := NewRegistry(rows...)
	if err != nil {
		panic(err)
	}
	return r
}

// Row returns the row of the plugin named name.
func (r *Registry) Row(name string) (Row, bool) {
	i, ok := r.index[name]
	if !ok {
		return Row{}, false
	}
	return r.rows[i], true
}

// Rows are the registry's rows, in order. The slice is the caller's.
func (r *Registry) Rows() []Row { return append([]Row(nil), r.rows...) }

// points is the extension points of the plugin named name (none when the
// registry does not know it, or does not implement it).
func (r *Registry) points(name string) Points {
	if row, ok := r.Row(name); ok && row.NotImplemented == "" {
		return row.Points
	}
	return 0
}

// defaultPlugins is upstream's getDefaultPlugins for this registry: its
// Default rows in order, as multiPoint, with their weights.
func (r *Registry) defaultPlugins() *kschedv1.Plugins {
	out := &kschedv1.Plugins{}
	for _, row := range r.rows {
		if !row.Default || row.NotImplemented != "" {
			continue
		}
		p := kschedv1.Plugin{Name: row.Name}
		if row.Weight != 0 {
			w := row.Weight
			p.Weight = &w
		}
		out.MultiPoint.Enabled = append(out.MultiPoint.Enabled, p)
	}
	return out
}
