// Package estimate computes figures from gathered Prometheus samples, the
// way PromQL computes them, for the tools that read a scheduler's metrics
// (wasmsched-bench, e2e/perf). It imports only the standard library, so
// that a harness can use it without the scheduler.
package estimate

import (
	"math"
	"sort"
)

// Quantile estimates the q-quantile of a histogram as Prometheus's
// histogram_quantile does: upper are the buckets' upper bounds, ascending
// with +Inf last, and cumulative their cumulative counts. It interpolates
// linearly within the bucket holding rank q*total (from 0 for the first
// bucket); a rank in the +Inf bucket answers the highest finite bound, a
// first bound at or below 0 answers itself. It is NaN without
// observations, without a +Inf bucket, or with only the +Inf bucket; q
// above 1 is +Inf and below 0 is -Inf.
func Quantile(q float64, upper, cumulative []float64) float64 {
	n := len(upper)
	if n == 0 || len(cumulative) != n || !math.IsInf(upper[n-1], 1) {
		return math.NaN()
	}
	total := cumulative[n-1]
	switch {
	case total == 0 || math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	rank := q * total
	i := sort.Search(n, func(i int) bool { return cumulative[i] >= rank })
	switch {
	case i >= n-1:
		if n < 2 {
			return math.NaN()
		}
		return upper[n-2]
	case i == 0 && upper[0] <= 0:
		return upper[0]
	}
	var lower, below float64
	if i > 0 {
		lower, below = upper[i-1], cumulative[i-1]
	}
	in := cumulative[i] - below
	if in == 0 {
		return upper[i]
	}
	return lower + (upper[i]-lower)*(rank-below)/in
}
