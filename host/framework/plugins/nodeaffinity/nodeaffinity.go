// Package nodeaffinity is upstream's NodeAffinity plugin
// (pkg/scheduler/framework/plugins/nodeaffinity): the node must match the
// pod's nodeSelector and required node affinity; the weights of the
// preferred terms a node matches score. Extension points: PreFilter, Filter,
// PreScore, Score, NormalizeScore. Rejects: UnschedulableAndUnresolvable
// (ReasonNodeAffinity, ReasonAffinityConflict). Weight 2.
package nodeaffinity

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Upstream's NodeAffinity reasons.
const (
	ReasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	// ReasonAffinityConflict rejects a pod whose required node affinity
	// names nodes (metadata.name In) that no single term can agree on.
	ReasonAffinityConflict = "pod affinity terms conflict"
	// ReasonEnforcedNodeAffinity rejects a node that does not match the
	// args' addedAffinity.
	ReasonEnforcedNodeAffinity = "node(s) didn't match scheduler-enforced node affinity"
)

var (
	statusNodeAffinity = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
		Reasons: []string{ReasonNodeAffinity}}
	statusEnforcedNodeAffinity = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
		Reasons: []string{ReasonEnforcedNodeAffinity}}
)

// weightNodeAffinity is upstream's default score weight.
const weightNodeAffinity = 2

// nodeAffinity is upstream's NodeAffinity plugin: the node must match the
// pod's nodeSelector and required node affinity; among feasible nodes, the
// sum of the weights of the preferred terms a node matches scores.
//
// Extension points: PreFilter (skips a pod with neither nodeSelector nor
// required affinity, as upstream; restricts the nodes to those its
// metadata.name matchFields name, upstream's PreFilterResult, and rejects
// the pod when its terms agree on none), Filter, PreScore (skips a pod
// without preferred terms), Score, NormalizeScore. Rejects:
// UnschedulableAndUnresolvable (ReasonNodeAffinity; ReasonAffinityConflict
// at PreFilter), Error for preferred terms that do not parse. Weight 2.
//
// The args' addedAffinity applies to every pod as upstream's: its required
// selector is checked first (ReasonEnforcedNodeAffinity), its preferred
// terms add to every pod's score. The zero value has none.
type nodeAffinity struct {
	added     *nodeaffinity.NodeSelector
	addedPref *nodeaffinity.PreferredSchedulingTerms
	// addedSpec is the args' required addedAffinity as configured, for
	// AddedAffinity.
	addedSpec *v1.NodeSelector
}

// AddedAffinity returns the args' required addedAffinity (nil: none), which
// the queue's pod records carry for the QueueingHint slot
// (abi.Pod.AddedAffinity).
func (pl nodeAffinity) AddedAffinity() *v1.NodeSelector { return pl.addedSpec }

var (
	_ framework.PreFilterPlugin = nodeAffinity{}
	_ framework.PreScorePlugin  = nodeAffinity{}
	_ framework.ScoreNormalizer = (*affinityScorer)(nil)
)

func (nodeAffinity) Name() string { return abi.PluginNodeAffinity }

func (pl nodeAffinity) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	spec := &pod.Pod.Spec
	var required *v1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if required == nil && spec.NodeSelector == nil {
		if pl.added != nil {
			return &affinityFilter{added: pl.added, addedOnly: true}, nil, nil
		}
		return nil, nil, nil
	}
	f := &affinityFilter{required: nodeaffinity.GetRequiredNodeAffinity(pod.Pod), added: pl.added}
	names, ok := affinityNodeNames(required)
	if ok && len(names) == 0 {
		return nil, nil, &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
			Reasons: []string{ReasonAffinityConflict}}
	}
	if !ok {
		names = nil
	}
	return f, names, nil
}

// affinityFilter holds the parsed nodeSelector and required terms, and
// the args' addedAffinity selector (nil: none; addedOnly: the pod has
// neither nodeSelector nor required terms).
type affinityFilter struct {
	required  nodeaffinity.RequiredNodeAffinity
	added     *nodeaffinity.NodeSelector
	addedOnly bool
}

// NodeLocal: the verdict reads the pod's spec, the profile's added
// affinity and the node alone; so do the scores.
func (*affinityFilter) NodeLocal() bool { return true }

func (*affinityScorer) NodeLocal() bool { return true }

func (*addedAffinityScorer) NodeLocal() bool { return true }

func (f *affinityFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if f.added != nil && !f.added.Match(ni.Node()) {
		return statusEnforcedNodeAffinity
	}
	if f.addedOnly {
		return nil
	}
	// A parse error (which API validation prevents) does not match.
	if ok, _ := f.required.Match(ni.Node()); !ok {
		return statusNodeAffinity
	}
	return nil
}

// affinityNodeNames returns the node names the required terms restrict the
// pod to, sorted, and true; false when some term does not restrict names
// (or there are no terms). The result is empty when the terms cannot agree.
func affinityNodeNames(required *v1.NodeSelector) ([]string, bool) {
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		return nil, false
	}
	union := map[string]struct{}{}
	for _, t := range required.NodeSelectorTerms {
		var term map[string]struct{} // nil: the term names no node
		for _, r := range t.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			s := make(map[string]struct{}, len(r.Values))
			for _, v := range r.Values {
				if term == nil {
					s[v] = struct{}{}
				} else if _, ok := term[v]; ok {
					s[v] = struct{}{}
				}
			}
			term = s
		}
		if term == nil {
			return nil, false
		}
		for n := range term {
			union[n] = struct{}{}
		}
	}
	names := make([]string, 0, len(union))
	for n := range union {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, true
}

func (pl nodeAffinity) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, _ *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	a := pod.Pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		if pl.addedPref != nil {
			return &addedAffinityScorer{added: pl.addedPref}, nil
		}
		return nil, nil
	}
	terms, err := nodeaffinity.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	if err != nil {
		// API validation rejects such a pod; upstream fails its PreScore.
		return nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeAffinity,
			Err: fmt.Errorf("parse preferred node affinity of pod %s/%s: %w", pod.Pod.Namespace, pod.Pod.Name, err)}
	}
	if pl.addedPref != nil {
		return &addedAffinityScorer{pod: terms, added: pl.addedPref}, nil
	}
	return (*affinityScorer)(terms), nil
}

// addedAffinityScorer scores the args' preferred addedAffinity terms and
// the pod's own (nil: none), as upstream's Score sums them.
type addedAffinityScorer struct {
	pod, added *nodeaffinity.PreferredSchedulingTerms
}

func (s *addedAffinityScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		scores[i] = 0
		if node := ni.Node(); node != nil {
			scores[i] = s.added.Score(node)
			if s.pod != nil {
				scores[i] += s.pod.Score(node)
			}
		}
	}
}

// NormalizeScores is upstream's DefaultNormalizeScore.
func (*addedAffinityScorer) NormalizeScores(scores []int64) {
	framework.DefaultNormalizeScore(false, scores)
}

// affinityScorer is the parsed preferred terms.
type affinityScorer nodeaffinity.PreferredSchedulingTerms

// Score sums the weights of the preferred terms each node matches.
func (s *affinityScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	terms := (*nodeaffinity.PreferredSchedulingTerms)(s)
	for i, ni := range nodes {
		scores[i] = 0
		if node := ni.Node(); node != nil {
			scores[i] = terms.Score(node)
		}
	}
}

// NormalizeScores is upstream's DefaultNormalizeScore.
func (*affinityScorer) NormalizeScores(scores []int64) {
	framework.DefaultNormalizeScore(false, scores)
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodeAffinity, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore), Default: true,
		Weight: weightNodeAffinity, FilterAlone: true, ScoreAlone: true, Args: nodeAffinityArgs,
		New: func(_ framework.Handle, args any) (framework.Plugin, error) { return args.(nodeAffinity), nil }}
}

// nodeAffinityArgs is NodeAffinity's Row.Args.
func nodeAffinityArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeAffinityArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	return newNodeAffinity(path, &args)
}

// newNodeAffinity is upstream's NodeAffinity constructor with
// ValidateNodeAffinityArgs: addedAffinity parsed once.
func newNodeAffinity(path *field.Path, a *kschedv1.NodeAffinityArgs) (nodeAffinity, error) {
	var pl nodeAffinity
	if a.AddedAffinity == nil {
		return pl, nil
	}
	var errs []error
	if ns := a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		sel, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution")))
		if err != nil {
			errs = append(errs, err)
		}
		pl.added, pl.addedSpec = sel, ns
	}
	if terms := a.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		pref, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution")))
		if err != nil {
			errs = append(errs, err)
		}
		pl.addedPref = pref
	}
	if err := utilerrors.Flatten(utilerrors.NewAggregate(errs)); err != nil {
		return nodeAffinity{}, err
	}
	return pl, nil
}
