// Package report turns the measurements of the side-by-side benchmark (e2e/perf)
// into results: statistics, target verdicts, a markdown page, console tables,
// results.json and PNG plots.
//
// It is kept free of Kubernetes and scheduler imports so that a results.json
// can be re-rendered anywhere with [Load] and [WriteDir].
//
// # Notes
//
// Throughput percentiles follow upstream scheduler_perf: the per-second samples
// are sorted ascending and the nearest rank, index ceil(n*p/100)-1, is taken.
// Samples are pods per second, so P99 is near the best second, not the worst.
//
// Failed runs (Run.Err != "") are listed but excluded from every statistic and
// from the plots, so a timeout cannot drag an average down unnoticed: it shows up
// as a failed round instead.
//
// Plots use only image/png and x/image/font/basicfont: the figures are simple
// and a plotting library would be the largest dependency of the module.
package report
