// Package tainttoleration is upstream's TaintToleration plugin
// (pkg/scheduler/framework/plugins/tainttoleration): the pod must tolerate
// every NoSchedule and NoExecute taint of the node; fewer untolerated
// PreferNoSchedule taints score higher. Extension points: PreFilter, Filter,
// PreScore, Score, NormalizeScore (reversed). Rejects:
// UnschedulableAndUnresolvable (ReasonUntoleratedTaint). Weight 3.
package tainttoleration

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// ReasonUntoleratedTaint is upstream's TaintToleration reason.
const ReasonUntoleratedTaint = "node(s) had untolerated taint(s)"

var statusTaint = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginTaintToleration,
	Reasons: []string{ReasonUntoleratedTaint}}

// weightTaintToleration is upstream's default score weight.
const weightTaintToleration = 3

// taintToleration is upstream's TaintToleration plugin: the pod must
// tolerate every NoSchedule and NoExecute taint of the node; among feasible
// nodes, fewer untolerated PreferNoSchedule taints score higher.
//
// Extension points: PreFilter (never skips: a pod without tolerations still
// meets taints), Filter, PreScore, Score, NormalizeScore (reversed).
// Rejects: UnschedulableAndUnresolvable (ReasonUntoleratedTaint). Weight 3.
//
// Both use the pod's tolerations as they are: a toleration of another
// effect never tolerates the taint (v1.Toleration.ToleratesTaint checks the
// effect), so upstream's filtering of the list by effect changes nothing
// but the allocation it costs.
type taintToleration struct{}

var (
	_ framework.PreFilterPlugin = taintToleration{}
	_ framework.PreScorePlugin  = taintToleration{}
	_ framework.ScoreNormalizer = (*taintScorer)(nil)
)

func (taintToleration) Name() string { return abi.PluginTaintToleration }

func (taintToleration) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	return (*taintFilter)(pod), nil, nil
}

func (taintToleration) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, _ *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	return (*taintScorer)(pod), nil
}

// taintFilter's state is the pod itself.
type taintFilter cache.PodInfo

// Filter reports whether every NoSchedule and NoExecute taint is tolerated
// (upstream's FindMatchingUntoleratedTaint with
// DoNotScheduleTaintsFilterFunc, which copies the filtered taints on every
// call; this loops over them in place with the same toleration check).
// NodeLocal: the verdict reads the pod's tolerations and the node's taints
// alone; so does the score.
func (*taintFilter) NodeLocal() bool { return true }

func (*taintScorer) NodeLocal() bool { return true }

func (f *taintFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if !helper.ToleratesScheduleTaints(f.Pod.Spec.Tolerations, ni.Node().Spec.Taints) {
		return statusTaint
	}
	return nil
}

// discard is the logger the component-helpers toleration checks log parse
// errors of Lt/Gt tolerations to; those operators are off, so it never logs.
var discard = logr.Discard()

// taintScorer's state is the pod itself.
type taintScorer cache.PodInfo

// Score counts on each node the PreferNoSchedule taints none of the pod's
// tolerations tolerates (upstream's TaintToleration Score).
func (s *taintScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		var n int64
		if node := ni.Node(); node != nil {
			taints := node.Spec.Taints
			for j := range taints {
				t := &taints[j]
				if t.Effect == v1.TaintEffectPreferNoSchedule &&
					!corev1helpers.TolerationsTolerateTaint(discard, s.Pod.Spec.Tolerations, t, false) {
					n++
				}
			}
		}
		scores[i] = n
	}
}

// NormalizeScores is upstream's DefaultNormalizeScore, reversed: no
// untolerated taint anywhere is the best score everywhere.
func (*taintScorer) NormalizeScores(scores []int64) { framework.DefaultNormalizeScore(true, scores) }

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginTaintToleration, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore), Default: true,
		Weight: weightTaintToleration, FilterAlone: true,
		New: func(framework.Handle, any) (framework.Plugin, error) { return taintToleration{}, nil }}
}
