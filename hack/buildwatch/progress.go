package main

import (
	"fmt"
	"io"
	"time"
)

// progress describes one build step for its progress lines.
type progress struct {
	what    string // "kube-apiserver v1.37.1"
	typical string // cold build time on a 2-core machine, "8-10 min"; empty if unknown
	next    string // what follows, "etcd, KWOK"; empty for the last step
}

// line is the progress line printed elapsed into the step.
func (p progress) line(elapsed time.Duration) string {
	s := fmt.Sprintf("cluster.sh: building %s: %s elapsed", p.what, round(elapsed))
	if p.typical != "" {
		s += fmt.Sprintf(" (a cold build usually takes %s)", p.typical)
	}
	if p.next != "" {
		s += "; then " + p.next
	}
	return s
}

// watch prints a line for every tick until done is closed. The tick's value
// is the current time, so a test drives it with a fake clock.
func (p progress) watch(w io.Writer, start time.Time, ticks <-chan time.Time, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case now := <-ticks:
			fmt.Fprintln(w, p.line(now.Sub(start)))
		}
	}
}

// round drops sub-second noise: "3m30s", not "3m30.0412s".
func round(d time.Duration) time.Duration { return d.Round(time.Second) }
