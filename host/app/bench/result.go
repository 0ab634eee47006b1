package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wasmsched/wasmsched/host/metrics/estimate"
)

// bucket is one cumulative histogram bucket.
type bucket struct {
	upper float64
	count uint64
}

const attemptDuration = "scheduler_scheduling_attempt_duration_seconds"

// histogram is a gathered histogram: its cumulative buckets, +Inf last,
// and the sum of its observations.
type histogram struct {
	buckets []bucket
	sum     float64
}

// attemptBuckets gathers the scheduling attempt histogram, its series (by
// result and profile) added up. Without a series, it is the +Inf bucket
// alone, empty.
func attemptBuckets(reg *prometheus.Registry) (histogram, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return histogram{}, fmt.Errorf("gather metrics: %w", err)
	}
	counts := map[float64]uint64{math.Inf(1): 0}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != attemptDuration {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			for _, bk := range h.GetBucket() {
				counts[bk.GetUpperBound()] += bk.GetCumulativeCount()
			}
			counts[math.Inf(1)] += h.GetSampleCount()
			sum += h.GetSampleSum()
		}
	}
	out := make([]bucket, 0, len(counts))
	for upper, n := range counts {
		out = append(out, bucket{upper, n})
	}
	slices.SortFunc(out, func(a, b bucket) int { return cmpFloat(a.upper, b.upper) })
	return histogram{out, sum}, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sub is what h observed since before, a gather of the same histogram.
func (h histogram) sub(before histogram) histogram {
	was := map[float64]uint64{}
	for _, b := range before.buckets {
		was[b.upper] = b.count
	}
	out := make([]bucket, len(h.buckets))
	for i, b := range h.buckets {
		out[i] = bucket{b.upper, b.count - was[b.upper]}
	}
	return histogram{out, h.sum - before.sum}
}

// quantile estimates the q-quantile of cumulative buckets (+Inf last) as
// Prometheus's histogram_quantile does (estimate.Quantile).
func quantile(q float64, bs []bucket) float64 {
	upper := make([]float64, len(bs))
	cumulative := make([]float64, len(bs))
	for i, b := range bs {
		upper[i], cumulative[i] = b.upper, float64(b.count)
	}
	return estimate.Quantile(q, upper, cumulative)
}

// Summary prints the result for people.
func (r *Result) Summary(w io.Writer) error {
	var slots []string
	for slot, name := range r.Policies {
		slots = append(slots, slot+"="+name)
	}
	sort.Strings(slots)
	samples := make([]string, len(r.Throughput))
	for i, n := range r.Throughput {
		samples[i] = fmt.Sprint(n)
	}
	per := fmt.Sprintf("none: all bound within the first second (dropped: %d)", r.FirstSample)
	if len(samples) > 0 {
		per = fmt.Sprintf("%s (first second dropped: %d)", strings.Join(samples, " "), r.FirstSample)
	}
	ms := func(s float64) string { return fmt.Sprintf("%.2fms", s*1000) }
	cores := 0.0
	if r.ElapsedSeconds > 0 {
		cores = r.CPUSeconds / r.ElapsedSeconds
	}
	_, err := fmt.Fprintf(w, `cluster      %d nodes, %d pods bound before, %d pods measured
policies     %s
elapsed      %.3fs
throughput   %.1f pods/s on average
per second   %s
latency      p50 %s  p90 %s  p99 %s  mean %s  (scheduling attempts)
cpu          %.2fs (%.2f cores)
peak RSS     %.1f MiB
peak heap    %.1f MiB
`, r.Nodes, r.InitPods, r.Pods, strings.Join(slots, " "), r.ElapsedSeconds, r.AvgPodsPerSecond, per,
		ms(r.Latency.P50), ms(r.Latency.P90), ms(r.Latency.P99), ms(r.Latency.Mean), r.CPUSeconds, cores, float64(r.PeakRSSBytes)/(1<<20), float64(r.PeakHeapBytes)/(1<<20))
	return err
}
