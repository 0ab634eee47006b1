package app

import (
	"context"
	"errors"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
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
	return eventsBroadcaster{events.NewBroadcaster(&eventSink{EventSinkImpl: events.EventSinkImpl{Interface: client.EventsV1()}, rest: rc})}
}

// eventsBroadcaster records events.k8s.io/v1 events, as the adapter does
// when the cluster serves them.
type eventsBroadcaster struct{ b events.EventBroadcaster }

func (e eventsBroadcaster) StartRecordingToSink(stopCh <-chan struct{}) {
	e.b.StartRecordingToSink(stopCh)
}

func (e eventsBroadcaster) NewRecorder(name string) events.EventRecorderLogger {
	return e.b.NewRecorder(scheme.Scheme, name)
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
