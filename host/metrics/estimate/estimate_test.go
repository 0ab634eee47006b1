package estimate

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	upper := []float64{1, 2, 4, inf}
	cum := []float64{2, 6, 8, 8}
	for _, tt := range []struct {
		name              string
		q                 float64
		upper, cumulative []float64
		want              float64
	}{
		{"within the first bucket, from 0", 0.25, upper, cum, 1},
		{"interpolated", 0.5, upper, cum, 1.5},
		{"quarter into a bucket", 0.125, upper, cum, 0.5},
		{"top of the last finite bucket", 1, upper, cum, 4},
		{"rank in +Inf: highest finite bound", 0.9, []float64{1, inf}, []float64{2, 4}, 1},
		{"a first bound at or below 0 answers itself", 0.1, []float64{-1, 1, inf}, []float64{2, 4, 4}, -1},
		{"an empty bucket answers its bound", 0.5, []float64{1, 2, inf}, []float64{2, 2, 4}, 1},
		{"q above 1", 1.5, upper, cum, inf},
		{"q below 0", -0.5, upper, cum, math.Inf(-1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.q, tt.upper, tt.cumulative); got != tt.want && math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name              string
		upper, cumulative []float64
	}{
		{"no buckets", nil, nil},
		{"no observations", []float64{1, inf}, []float64{0, 0}},
		{"no +Inf bucket", []float64{1, 2}, []float64{1, 2}},
		{"only +Inf", []float64{inf}, []float64{3}},
		{"lengths differ", []float64{1, inf}, []float64{1}},
	} {
		if got := Quantile(0.5, tt.upper, tt.cumulative); !math.IsNaN(got) {
			t.Errorf("%s: Quantile = %v, want NaN", tt.name, got)
		}
	}
}
