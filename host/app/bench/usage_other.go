//go:build !unix

package bench

// processUsage is unknown here: getrusage(2) is a Unix call.
func processUsage() (cpuSeconds float64, peakRSS int64) { return 0, 0 }
