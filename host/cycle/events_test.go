package cycle_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wasmsched/wasmsched/host/cycle"
)

// eventWriter is an eventLog (Eventf) that is also a cycle.EventWriter,
// keeping what it was asked to write apart.
type eventWriter struct {
	*eventLog
	err error // WriteEventf's answer

	mu      sync.Mutex
	written []event
}

var _ cycle.EventWriter = (*eventWriter)(nil)

func (w *eventWriter) WriteEventf(ctx context.Context, regarding runtime.Object, eventtype, reason, action, note string, args ...any) error {
	if ctx == nil || ctx.Err() != nil {
		return errors.New("WriteEventf called without a live context")
	}
	m, err := meta.Accessor(regarding)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written = append(w.written, event{Object: key(m.GetNamespace(), m.GetName()), Type: eventtype, Reason: reason,
		Action: action, Note: fmt.Sprintf(note, args...)})
	return w.err
}

func (w *eventWriter) all() []event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]event(nil), w.written...)
}

// TestScheduledEventWritten: with a recorder that can write on the calling
// goroutine, the binding writes the Scheduled event itself (the same event
// Eventf would record); the other events still go through Eventf; a
// recorder that cannot make the event costs the pod nothing.
func TestScheduledEventWritten(t *testing.T) {
	for _, werr := range []error{nil, errors.New("no reference for the pod")} {
		t.Run(fmt.Sprint(werr), func(t *testing.T) {
			w := &eventWriter{eventLog: &eventLog{}, err: werr}
			e := newEnvWithEvents(t, w, nil)
			e.addNodes(makeNode("small", "cpu", "1").obj(), makeNode("big", "cpu", "4").obj())
			e.addPods(makePod("p").req("cpu", "2").obj(), makePod("huge").req("cpu", "8").obj())

			e.scheduleNext()
			e.scheduleNext()

			want := []event{{Object: "default/p", Type: v1.EventTypeNormal, Reason: "Scheduled", Action: "Binding",
				Note: "Successfully assigned default/p to big"}}
			if diff := cmp.Diff(want, w.all()); diff != "" {
				t.Errorf("events written by the binding (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff([]bindCall{{Pod: "default/p", Node: "big"}}, e.api.bindCalls()); diff != "" {
				t.Errorf("binds (-want, +got):\n%s", diff)
			}
			var reasons []string
			for _, ev := range w.eventLog.all() {
				reasons = append(reasons, ev.Object+" "+ev.Reason)
			}
			if diff := cmp.Diff([]string{"default/huge FailedScheduling"}, reasons); diff != "" {
				t.Errorf("events recorded through Eventf (-want, +got):\n%s", diff)
			}
			if got := e.state("uid-p"); got != "" {
				t.Errorf("the bound pod is back in the queue, in %q", got)
			}
		})
	}
}
