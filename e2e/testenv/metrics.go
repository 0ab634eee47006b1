package testenv

import (
	"fmt"
	"strings"
)

// SumSamples sums the samples of metric family name in a Prometheus text
// page (GET /metrics) whose labels contain every one of labels, each
// written `name="value"`; 0 when there are none. Tests, the demo and
// e2e/perf wait on it to know that a scheduler is in a state (pods gated,
// attempts made) rather than sleeping.
func SumSamples(page []byte, name string, labels ...string) float64 {
	var sum float64
	for _, line := range strings.Split(string(page), "\n") {
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(rest, l)
		}
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscanf(rest[strings.LastIndexByte(rest, ' ')+1:], "%g", &v); err == nil {
			sum += v
		}
	}
	return sum
}
