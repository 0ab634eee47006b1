//go:build unix

package bench

import (
	"runtime"
	"syscall"
)

// processUsage is the CPU time (user and system) of the process so far, in
// seconds, and its peak resident set size in bytes; zeros if unknown.
func processUsage() (cpuSeconds float64, peakRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu := float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	peak := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		peak *= 1024 // kilobytes everywhere else
	}
	return cpu, peak
}
