package queue

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/host/podview"
)

// TestFlushRescues: wasmsched_queue_flush_rescues_total counts a pod that
// the periodic flush of unschedulable leftovers (not an event) moved and
// whose next attempt scheduled it, once per plugin that had rejected it,
// and logs it; a pod an event moved, or whose flushed attempt failed or was
// dropped, is not counted.
func TestFlushRescues(t *testing.T) {
	type want = map[[2]string]int
	flush := func(e *env) {
		e.clk.Step(DefaultMaxInUnschedulable + time.Second)
		e.q.flushLeftovers()
	}
	for _, tc := range []struct {
		name     string
		rejected podview.Plugins
		// then moves the rejected pod out of the pool and hands back
		// its next attempt(s).
		then func(t *testing.T, e *env)
		want want
	}{{
		name:     "flushed, scheduled",
		rejected: rejectedBy(fit),
		then: func(t *testing.T, e *env) {
			flush(e)
			e.q.Scheduled(e.popPod(t).UID())
		},
		want: want{{"p1", fit}: 1},
	}, {
		name:     "flushed, scheduled: each rejecting plugin",
		rejected: podview.Plugins{Unschedulable: []string{fit, "NodeAffinity"}, Pending: []string{"DynamicResources"}},
		then: func(t *testing.T, e *env) {
			flush(e)
			e.q.Scheduled(e.popPod(t).UID())
		},
		want: want{{"p1", fit}: 1, {"p1", "NodeAffinity"}: 1, {"p1", "DynamicResources"}: 1},
	}, {
		name:     "moved by an event, scheduled",
		rejected: rejectedBy(fit),
		then: func(t *testing.T, e *env) {
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
			e.clk.Step(DefaultMaxInUnschedulable + time.Second)
			e.q.flushLeftovers() // nothing left to flush
			e.q.Scheduled(e.popPod(t).UID())
		},
		want: want{},
	}, {
		name:     "flushed, fails again, then moved by an event and scheduled",
		rejected: rejectedBy(fit),
		then: func(t *testing.T, e *env) {
			flush(e)
			if err := e.q.AddUnschedulableIfNotPresent(e.popPod(t), rejectedBy(fit)); err != nil {
				t.Fatal(err)
			}
			e.q.MoveOnEvent(nodeAdd(makeNode("fit-1", 4000)))
			e.clk.Step(DefaultMaxBackoff) // past its backoff
			e.q.flushBackoffCompleted()
			e.q.Scheduled(e.popPod(t).UID())
		},
		want: want{},
	}, {
		name:     "flushed, dropped (Done)",
		rejected: rejectedBy(fit),
		then: func(t *testing.T, e *env) {
			flush(e)
			e.q.Done(e.popPod(t).UID())
		},
		want: want{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			e := newEnv(t, WithQueueingHint(fitHint()), WithProfile("p1"),
				WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			e.failOnce(t, makePod("u").obj(), tc.rejected)
			tc.then(t, e)
			if diff := cmp.Diff(tc.want, e.rec.flushRescues()); diff != "" {
				t.Errorf("flush rescues (-want, +got):\n%s", diff)
			}
			logged := strings.Contains(logs.String(), "level=INFO") && strings.Contains(logs.String(), "pod=default/u")
			if logged != (len(tc.want) > 0) {
				t.Errorf("logged %v, want %v; log:\n%s", logged, len(tc.want) > 0, logs.String())
			}
			e.check(t)
		})
	}
}
