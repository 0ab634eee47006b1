// Package logic is the test module's policy. The filter reads a node's
// label "verdict" (pass, reject, never; absent: pass) and gives its label
// "reason" as the reason (possibly empty, long or not UTF-8: the SDK makes
// it one the host accepts). The score reads a node's label "score" as a
// decimal integer (absent: 0); the scores are declared normalised, so the
// SDK clamps them to [0, 100]. Pods labelled "skip" are skipped by both
// pre-steps, pods labelled "skip-score" by the score's only.
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
)

// Options of the two slots.
var (
	FilterOptions = []filter.Option{
		filter.Pre(func(p abi.PodView) bool { return !has(p.Labels(), "skip") }),
		filter.Events(abi.FilterEvent{Resource: abi.ResourcePod, Actions: abi.ActionDelete}),
	}
	ScoreOptions = []score.Option{
		score.Pre(func(p abi.PodView) bool { return !has(p.Labels(), "skip") && !has(p.Labels(), "skip-score") }),
		score.Normalized(),
	}
)

// Filter judges node by its labels.
func Filter(_ abi.PodView, node abi.NodeView) filter.Verdict {
	reason, _ := node.Labels().Get("reason")
	switch v, _ := node.Labels().Get("verdict"); v {
	case "reject":
		return filter.Reject(reason)
	case "never":
		return filter.Never(reason)
	}
	return filter.Pass()
}

// Score scores node by its label.
func Score(_ abi.PodView, node abi.NodeView) int64 {
	v, _ := node.Labels().Get("score")
	neg := v != "" && v[0] == '-'
	if neg {
		v = v[1:]
	}
	var s int64
	for i := 0; i < len(v); i++ {
		s = s*10 + int64(v[i]-'0')
	}
	if neg {
		s = -s
	}
	return s
}

func has(l abi.KVList, key string) bool { _, ok := l.Get(key); return ok }
