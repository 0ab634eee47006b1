package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wasmsched/wasmsched/host/metrics/estimate"
)

// Upstream and wasmsched export the same families; these are the ones read
// here. The ceiling exports scheduleAttempts (one per bind) and the Go and
// process collectors' families only: it makes no attempt worth timing, so
// its latency is unknown (NaN, a dash in the report), not zero.
const (
	attemptDuration  = "scheduler_scheduling_attempt_duration_seconds"
	scheduleAttempts = "scheduler_schedule_attempts_total"
	inflightEvents   = "scheduler_inflight_events"
	heapInuse        = "go_memstats_heap_inuse_bytes"
	// policyFallbacks is wasmsched's only: decisions a module failed and
	// the native default made (0 in a healthy run).
	policyFallbacks = "wasmsched_policy_fallbacks_total"
	// policyCallDuration is wasmsched's only: the batched policy calls,
	// by slot; the QueueingHint slot's is one call per event with
	// candidates, guest time and the batch's copy in.
	policyCallDuration = "wasmsched_policy_call_duration_seconds"
)

// seriesSum is the sample count and sum of the histogram series of family
// name whose label key is value (0, 0 when there is none).
func (s scrape) seriesSum(name, key, value string) (count, sum float64) {
	for _, m := range s.where(name, key, value) {
		if hm := m.GetHistogram(); hm != nil {
			count += float64(hm.GetSampleCount())
			sum += hm.GetSampleSum()
		}
	}
	return count, sum
}

// where is the series of family name whose label key is value.
func (s scrape) where(name, key, value string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range s[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == key && l.GetValue() == value {
				out = append(out, m)
			}
		}
	}
	return out
}

// scrape is one parse of a /metrics page.
type scrape map[string]*dto.MetricFamily

func parseMetrics(page []byte) (scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("parse /metrics: %w", err)
	}
	return fams, nil
}

// sum adds every series of a gauge or counter family; a family that is
// absent sums to 0 (upstream exports scheduler_inflight_events only once an
// event was tracked).
func (s scrape) sum(name string) float64 {
	f, ok := s[name]
	if !ok {
		return 0
	}
	var total float64
	for _, m := range f.GetMetric() {
		switch {
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Untyped != nil:
			total += m.GetUntyped().GetValue()
		}
	}
	return total
}

// counterWhere adds the counter series of family name whose label key is
// value (0 when there is none).
func (s scrape) counterWhere(name, key, value string) float64 {
	var total float64
	for _, m := range s.where(name, key, value) {
		total += m.GetCounter().GetValue()
	}
	return total
}

// histogram is a cumulative histogram summed over label sets.
type histogram struct {
	bounds []float64 // upper bounds, ascending, +Inf last
	counts []float64 // cumulative counts per bound
}

// histogram sums every series of a histogram family; all series of one
// family share their buckets.
func (s scrape) histogram(name string) histogram {
	var h histogram
	f, ok := s[name]
	if !ok {
		return h
	}
	idx := map[float64]int{}
	for _, m := range f.GetMetric() {
		hm := m.GetHistogram()
		if hm == nil {
			continue
		}
		for _, b := range hm.GetBucket() {
			ub := b.GetUpperBound()
			i, ok := idx[ub]
			if !ok {
				i = len(h.bounds)
				idx[ub] = i
				h.bounds = append(h.bounds, ub)
				h.counts = append(h.counts, 0)
			}
			h.counts[i] += float64(b.GetCumulativeCount())
		}
		// The text format lists the +Inf bucket; a parser may leave it to
		// the sample count instead.
		if n := len(hm.GetBucket()); n == 0 || !math.IsInf(hm.GetBucket()[n-1].GetUpperBound(), 1) {
			i, ok := idx[math.Inf(1)]
			if !ok {
				i = len(h.bounds)
				idx[math.Inf(1)] = i
				h.bounds = append(h.bounds, math.Inf(1))
				h.counts = append(h.counts, 0)
			}
			h.counts[i] += float64(hm.GetSampleCount())
		}
	}
	order := make([]int, len(h.bounds))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return h.bounds[order[a]] < h.bounds[order[b]] })
	out := histogram{bounds: make([]float64, len(order)), counts: make([]float64, len(order))}
	for i, j := range order {
		out.bounds[i], out.counts[i] = h.bounds[j], h.counts[j]
	}
	return out
}

// minus is h - before: the observations made between two scrapes.
func (h histogram) minus(before histogram) histogram {
	prev := map[float64]float64{}
	for i, b := range before.bounds {
		prev[b] = before.counts[i]
	}
	out := histogram{bounds: append([]float64(nil), h.bounds...), counts: make([]float64, len(h.counts))}
	for i, b := range h.bounds {
		out.counts[i] = h.counts[i] - prev[b]
	}
	return out
}

// total is the number of observations.
func (h histogram) total() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}

// quantile is the q-quantile of the observations, as Prometheus'
// histogram_quantile estimates it (estimate.Quantile): a rank in the +Inf
// bucket answers the highest finite bound; NaN when there are none.
func (h histogram) quantile(q float64) float64 {
	return estimate.Quantile(q, h.bounds, h.counts)
}

// procStat is the CPU time and peak resident set of a process, from /proc.
type procStat struct {
	cpuSeconds float64
	peakRSS    uint64 // bytes, VmHWM
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// readProc reads /proc/<pid>/stat (utime, stime) and /proc/<pid>/status
// (VmHWM).
func readProc(pid int) (procStat, error) {
	var st procStat
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st, err
	}
	// The command name may contain spaces: fields are counted after ')'.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64) // field 14
	stime, err2 := strconv.ParseFloat(f[12], 64) // field 15
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	st.cpuSeconds = (utime + stime) / clockTicks
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return st, fmt.Errorf("/proc/%d/status VmHWM %q: %w", pid, v, err)
			}
			st.peakRSS = kb << 10
		}
	}
	return st, nil
}

// cpuSeconds is the user+system CPU time of the processes pids, summed
// (e2e/perf's control plane: kube-apiserver and etcd).
func cpuSeconds(pids []int) (float64, error) {
	var total float64
	for _, pid := range pids {
		st, err := readProc(pid)
		if err != nil {
			return 0, err
		}
		total += st.cpuSeconds
	}
	return total, nil
}
