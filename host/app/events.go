package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
)

// newBroadcaster is client-go's event broadcaster adapter
// (events.NewEventBroadcasterAdapter) whose events.k8s.io/v1 sink creates
// events without encoding empty options into query parameters: the typed
// client's Create walks CreateOptions by reflection for every event, half
// of the 5% of the process's CPU that Bind and the Scheduled event spent on
// it (docs/benchmarks/PROFILES.md). A client not backed by a REST client
// (a fake) or a cluster without events.k8s.io/v1 gets the adapter as is.
func newBroadcaster(client kubernetes.Interface) broadcaster {
	rc, _ := client.EventsV1().RESTClient().(*rest.RESTClient)
	if rc == nil {
		return events.NewEventBroadcasterAdapter(client)
	}
	if _, err := client.Discovery().ServerResourcesForGroupVersion(eventsv1.SchemeGroupVersion.String()); err != nil {
		return events.NewEventBroadcasterAdapter(client)
	}
	return newEventsBroadcaster(&eventSink{EventSinkImpl: events.EventSinkImpl{Interface: client.EventsV1()}, rest: rc})
}

// eventsBroadcaster records events.k8s.io/v1 events, as the adapter does
// when the cluster serves them, and hands out recorders that can also
// write an event on the caller's goroutine (writingRecorder).
type eventsBroadcaster struct {
	b    events.EventBroadcaster
	sink events.EventSink
	// queue hands an event to b as client-go's recorders do; nil if b does
	// not expose it (its recorders are then client-go's alone).
	queue func(*eventsv1.Event)
}

func newEventsBroadcaster(sink events.EventSink) eventsBroadcaster {
	b := events.NewBroadcaster(sink)
	e := eventsBroadcaster{b: b, sink: sink}
	// client-go's broadcaster (v0.37) embeds the watch.Broadcaster its
	// recorders send their events into.
	if w, ok := b.(interface {
		ActionOrDrop(watch.EventType, runtime.Object) (bool, error)
	}); ok {
		e.queue = func(ev *eventsv1.Event) { _, _ = w.ActionOrDrop(watch.Added, ev) }
	}
	return e
}

func (e eventsBroadcaster) StartRecordingToSink(stopCh <-chan struct{}) {
	e.b.StartRecordingToSink(stopCh)
}

func (e eventsBroadcaster) NewRecorder(name string) events.EventRecorderLogger {
	rec := e.b.NewRecorder(scheme.Scheme, name)
	if e.queue == nil {
		return rec
	}
	// client-go names the instance so (NewRecorder).
	host, _ := os.Hostname()
	return writingRecorder{EventRecorderLogger: rec, sink: e.sink, queue: e.queue, controller: name, instance: name + "-" + host}
}

func (e eventsBroadcaster) Shutdown() { e.b.Shutdown() }

// eventSink is client-go's sink with Create as the typed client's request
// minus its empty options: protobuf unless the client's configuration
// names a content type, as the typed client. Create returns the event it
// sent, not the server's copy: the broadcaster (client-go v0.37) reads
// nothing of a created event but that it is not nil (it keeps it, for its
// name, only when a series it patches turned out to be gone), so decoding
// the answer bought nothing.
// Updates and patches (an event series, rare) go through the typed client.
type eventSink struct {
	events.EventSinkImpl
	rest *rest.RESTClient
}

func (s *eventSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if ev.Namespace == "" {
		return nil, errors.New("can't create an event with empty namespace")
	}
	err := s.rest.Post().UseProtobufAsDefault().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Error()
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// writingRecorder is client-go's recorder plus WriteEventf, which writes the
// event on the calling goroutine. The scheduler writes a bound pod's
// Scheduled event so, from the goroutine that bound it: client-go's
// broadcaster keeps every event it writes for six to twelve minutes, to
// fold repeats into a series, and a pod bound once never repeats its
// Scheduled event (docs/RATIONALE.md, "The Scheduled event is written by
// the goroutine that bound the pod").
type writingRecorder struct {
	events.EventRecorderLogger
	sink                 events.EventSink
	queue                func(*eventsv1.Event)
	controller, instance string
}

// WriteEventf writes the event Eventf would record. If the write fails, the
// event goes to the broadcaster after all, which retries it as it retries
// its own (under the same name: one that got through meanwhile is not
// doubled). The error says why an event could not be made at all; it is
// then not recorded, as Eventf would not.
func (r writingRecorder) WriteEventf(ctx context.Context, regarding runtime.Object, eventtype, reason, action, note string, args ...any) error {
	ev, err := r.event(regarding, eventtype, reason, action, fmt.Sprintf(note, args...))
	if err != nil {
		return err
	}
	if _, err := r.sink.Create(ctx, ev); err != nil && ctx.Err() == nil {
		r.queue(ev)
	}
	return nil
}

// event is the event client-go's recorder (v0.37) makes of the same
// arguments, with no related object and no annotations.
func (r writingRecorder) event(regarding runtime.Object, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	ref, err := reference.GetReference(scheme.Scheme, regarding)
	if err != nil {
		return nil, err
	}
	if !util.ValidateEventType(eventtype) {
		return nil, fmt.Errorf("unsupported event type %q", eventtype)
	}
	now := time.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: ns},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                note,
		Type:                eventtype,
	}, nil
}
