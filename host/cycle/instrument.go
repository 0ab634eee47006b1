package cycle

import (
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// Extension points, as upstream names them in the extension_point label of
// scheduler_framework_extension_point_duration_seconds and
// scheduler_plugin_execution_duration_seconds.
const (
	ExtensionPointPreFilter          = "PreFilter"
	ExtensionPointFilter             = "Filter"
	ExtensionPointAddPod             = "PreFilterExtensionAddPod"
	ExtensionPointRemovePod          = "PreFilterExtensionRemovePod"
	ExtensionPointPostFilter         = "PostFilter"
	ExtensionPointPreScore           = "PreScore"
	ExtensionPointScore              = "Score"
	ExtensionPointNormalize          = "ScoreExtensionNormalize"
	ExtensionPointReserve            = framework.LabelReserve
	ExtensionPointUnreserve          = framework.LabelUnreserve
	ExtensionPointPreBind            = framework.LabelPreBind
	ExtensionPointPreBindPreFlight   = framework.LabelPreBindPreFlight
	ExtensionPointBind               = "Bind"
	ExtensionPointPodGroupPostFilter = "PodGroupPostFilter"
)

// statusSkip is upstream's Skip status: a PreFilter or PreScore that opts
// the plugin out for the pod (here: a nil filter or scorer).
const statusSkip = "Skip"

// pluginMetricsSamplePercent is upstream's: the share of cycles whose
// plugins are timed one by one.
const pluginMetricsSamplePercent = 10

// WithPluginMetricsSample sets the share of cycles (percent, 0 to 100)
// whose plugins are timed one by one (upstream's pluginMetricsSamplePercent,
// 10).
func WithPluginMetricsSample(percent int) Option {
	return func(o *options) { o.sample = min(max(percent, 0), 100) }
}

// buildProfiles builds the plain and the timed profile from o.entries
// (WithBuilt): the timed one has every plugin wrapped in a timer, for the
// sampled cycles that record scheduler_plugin_execution_duration_seconds.
// The other cycles run the plain profile: timing costs them nothing.
func buildProfiles(o *options) (plain, timed *framework.Profile, err error) {
	plain, err = framework.NewProfile(o.entries...)
	if err != nil {
		return nil, nil, err
	}
	wrapped := make([]framework.Entry, len(o.entries))
	for i, e := range o.entries {
		wrapped[i] = e
		wrapped[i].Plugin = timePlugin(e.Plugin, o.rec, o.clock)
	}
	timed, err = framework.NewProfile(wrapped...)
	if err != nil {
		return nil, nil, fmt.Errorf("timed profile: %w", err)
	}
	if timed.HasReserve() || timed.HasPreBind() {
		timed = timed.WithPluginTimer(&pluginClock{rec: o.rec, clock: o.clock})
	}
	// Timing changes no verdict or score: the scheduling loop's Memo
	// serves sampled cycles and the others alike.
	return plain, timed.SameResultsAs(plain), nil
}

// Indexes of pluginTimer.obs.
const (
	tpPreFilter = iota
	tpFilter
	tpAddPod
	tpRemovePod
	tpPreScore
	tpScore
	tpNormalize
	numTimedPoints
)

var timedPointNames = [numTimedPoints]string{ExtensionPointPreFilter, ExtensionPointFilter, ExtensionPointAddPod,
	ExtensionPointRemovePod, ExtensionPointPreScore, ExtensionPointScore, ExtensionPointNormalize}

// numStatuses counts framework's codes (Success .. Pending) and Skip.
const numStatuses = int(framework.Pending) + 2

// pluginTimer observes one plugin's runs. Its observers are bound on first
// use, so that only the label sets that occur are exposed, as upstream's.
type pluginTimer struct {
	name  string
	rec   Recorder
	clock clock.PassiveClock
	obs   [numTimedPoints][numStatuses]atomic.Pointer[func(time.Duration)]
}

func (t *pluginTimer) observe(point int, st *framework.Status, skipped bool, start time.Time) {
	d := t.clock.Since(start)
	code := int(framework.Success)
	switch {
	case st != nil:
		code = int(st.Code)
	case skipped:
		code = numStatuses - 1
	}
	if code < 0 || code >= numStatuses {
		return
	}
	slot := &t.obs[point][code]
	o := slot.Load()
	if o == nil {
		status := statusSkip
		if code < numStatuses-1 {
			status = framework.Code(code).String()
		}
		f := t.rec.PluginObserver(t.name, timedPointNames[point], status)
		slot.CompareAndSwap(nil, &f)
		o = slot.Load()
	}
	(*o)(d)
}

// timePlugin wraps p so that its extension points are timed; a plugin with
// neither a filter nor a scorer (a placeholder) is kept as it is.
func timePlugin(p framework.Plugin, rec Recorder, c clock.PassiveClock) framework.Plugin {
	t := &pluginTimer{name: p.Name(), rec: rec, clock: c}
	f, isFilter := p.(framework.PreFilterPlugin)
	s, isScore := p.(framework.PreScorePlugin)
	sp, isStateScore := p.(framework.StatePreScorePlugin)
	switch {
	case isFilter && isStateScore:
		return &timedStateScore{timedFilterScore{timedPreFilter{f, t}, timedPreScore{s, t}}, sp}
	case isFilter && isScore:
		return &timedFilterScore{timedPreFilter{f, t}, timedPreScore{s, t}}
	case isFilter:
		return &timedPreFilter{f, t}
	case isScore:
		return &timedPreScore{s, t}
	}
	return p
}

type timedPreFilter struct {
	inner framework.PreFilterPlugin
	t     *pluginTimer
}

func (w *timedPreFilter) Name() string { return w.inner.Name() }

// Unwrap lets the profile find the plugin's Reserve and PreBind.
func (w *timedPreFilter) Unwrap() framework.Plugin { return w.inner }

func (w *timedPreFilter) PreFilter(pod *cache.PodInfo, snap *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	start := w.t.clock.Now()
	f, nodes, st := w.inner.PreFilter(pod, snap)
	w.t.observe(tpPreFilter, st, f == nil, start)
	if f == nil || st != nil {
		return f, nodes, st
	}
	if u, ok := f.(framework.PodUpdater); ok {
		return &timedUpdater{timedFilter{inner: u, t: w.t}, u}, nodes, nil
	}
	return &timedFilter{inner: f, t: w.t}, nodes, nil
}

type timedPreScore struct {
	inner framework.PreScorePlugin
	t     *pluginTimer
}

func (w *timedPreScore) Name() string { return w.inner.Name() }

func (w *timedPreScore) Unwrap() framework.Plugin { return w.inner }

func (w *timedPreScore) PreScore(pod *cache.PodInfo, nodes []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	start := w.t.clock.Now()
	sc, st := w.inner.PreScore(pod, nodes, snap)
	return w.t.preScored(sc, st, start)
}

// preScored observes a PreScore begun at start and wraps its scorer.
func (t *pluginTimer) preScored(sc framework.PodScorer, st *framework.Status, start time.Time) (framework.PodScorer, *framework.Status) {
	t.observe(tpPreScore, st, sc == nil, start)
	if sc == nil || st != nil {
		return sc, st
	}
	if n, ok := sc.(framework.ScoreNormalizer); ok {
		return &timedNormalizer{timedScorer{sc, t}, n}, nil
	}
	return &timedScorer{sc, t}, nil
}

// timedFilterScore is a plugin with both a filter and a scorer.
type timedFilterScore struct {
	timedPreFilter
	score timedPreScore
}

func (w *timedFilterScore) PreScore(pod *cache.PodInfo, nodes []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	return w.score.PreScore(pod, nodes, snap)
}

// timedStateScore is a plugin whose scores come from what its filter
// found (framework.StatePreScorePlugin: VolumeBinding, DynamicResources).
type timedStateScore struct {
	timedFilterScore
	state framework.StatePreScorePlugin
}

func (w *timedStateScore) PreScoreState(ps *framework.PodState, nodes []*cache.NodeInfo) (framework.PodScorer, *framework.Status) {
	start := w.score.t.clock.Now()
	sc, st := w.state.PreScoreState(ps, nodes)
	return w.score.t.preScored(sc, st, start)
}

// maxTimedFilterCalls bounds the Filter calls of one plugin a sampled cycle
// times: the first ones, in the order the nodes are looked at. Timing every
// call cost more than the filters it timed (two clock reads and a histogram
// shared by the filtering goroutines, per plugin and node: 6% of the CPU of
// plain pods on 1,000 nodes, for 10% of the cycles); the first calls already
// sample the distribution. Upstream's recorder keeps a similar bound: it
// drops what exceeds a buffer of 1,000 observations a second.
const maxTimedFilterCalls = 32

// timedFilter is one pod's filter of a plugin, in a sampled cycle.
type timedFilter struct {
	inner framework.PodFilter
	t     *pluginTimer
	calls atomic.Int32 // the filtering goroutines share it
}

// Unwrap lets framework.PodState.PluginFilter return the plugin's own
// filter.
func (w *timedFilter) Unwrap() framework.PodFilter { return w.inner }

func (w *timedFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if w.calls.Add(1) > maxTimedFilterCalls {
		return w.inner.Filter(ni)
	}
	start := w.t.clock.Now()
	st := w.inner.Filter(ni)
	w.t.observe(tpFilter, st, false, start)
	return st
}

type timedUpdater struct {
	timedFilter
	u framework.PodUpdater
}

func (w *timedUpdater) Clone() framework.PodFilter {
	c := w.u.Clone().(framework.PodUpdater)
	return &timedUpdater{timedFilter{inner: c, t: w.t}, c}
}

func (w *timedUpdater) AddPod(pod *cache.PodInfo, ni *cache.NodeInfo) {
	start := w.t.clock.Now()
	w.u.AddPod(pod, ni)
	w.t.observe(tpAddPod, nil, false, start)
}

func (w *timedUpdater) RemovePod(pod *cache.PodInfo, ni *cache.NodeInfo) {
	start := w.t.clock.Now()
	w.u.RemovePod(pod, ni)
	w.t.observe(tpRemovePod, nil, false, start)
}

// timedScorer times a scorer's call, which scores every feasible node at
// once (upstream times Score per node).
type timedScorer struct {
	inner framework.PodScorer
	t     *pluginTimer
}

// Unwrap lets a framework.Memo ask the plugin's scorer whether it is
// NodeLocal.
func (w *timedScorer) Unwrap() framework.PodScorer { return w.inner }

func (w *timedScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	start := w.t.clock.Now()
	w.inner.Score(nodes, scores)
	w.t.observe(tpScore, nil, false, start)
}

type timedNormalizer struct {
	timedScorer
	n framework.ScoreNormalizer
}

func (w *timedNormalizer) NormalizeScores(scores []int64) {
	start := w.t.clock.Now()
	w.n.NormalizeScores(scores)
	w.t.observe(tpNormalize, nil, false, start)
}
