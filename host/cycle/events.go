package cycle

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// EventWriter is an event recorder that can also write an event on the
// calling goroutine (host/app's, when the cluster serves events.k8s.io/v1).
// The goroutine that bound a pod writes its Scheduled event so: it has
// nothing else left to wait for, and client-go's broadcaster would keep the
// event for minutes in case it repeats, which it never does
// (docs/RATIONALE.md, "The Scheduled event is written by the goroutine that
// bound the pod").
type EventWriter interface {
	// WriteEventf writes the event Eventf would record, and hands it to
	// the recorder's broadcaster if the write fails. The error says why no
	// event could be made.
	WriteEventf(ctx context.Context, regarding runtime.Object, eventtype, reason, action, note string, args ...any) error
}

// scheduledEvent records kube-scheduler's Scheduled event for pod, bound to
// node.
func (s *Scheduler) scheduledEvent(ctx context.Context, pod *v1.Pod, node string) {
	const typ, reason, action, note = v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to %s"
	w, ok := s.events.(EventWriter)
	if !ok {
		s.events.Eventf(pod, nil, typ, reason, action, note, pod.Namespace, pod.Name, node)
		return
	}
	if err := w.WriteEventf(ctx, pod, typ, reason, action, note, pod.Namespace, pod.Name, node); err != nil {
		s.opts.log.Error("record the Scheduled event", "pod", klogRef(pod), "err", err)
	}
}
