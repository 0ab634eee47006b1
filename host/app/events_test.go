package app

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestEventSinkRequest records an event through newBroadcaster against a
// server that serves events.k8s.io/v1 and checks the create on the wire:
// the typed client's path, no query parameters, protobuf, the event.
func TestEventSinkRequest(t *testing.T) {
	type request struct {
		method, path, query, contentType string
		body                             []byte
	}
	creates := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/apis/events.k8s.io/v1":
			_ = json.NewEncoder(w).Encode(&metav1.APIResourceList{
				TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: "events.k8s.io/v1",
				APIResources: []metav1.APIResource{{Name: "events", Namespaced: true, Kind: "Event"}},
			})
		case r.Method == http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			select {
			case creates <- request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), body}:
			default:
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e","namespace":"default"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})

	b := newBroadcaster(client)
	if _, ok := b.(eventsBroadcaster); !ok {
		t.Fatalf("newBroadcaster = %T, want the events.k8s.io/v1 broadcaster with wasmsched's sink", b)
	}
	stop := make(chan struct{})
	defer b.Shutdown()
	defer close(stop)
	b.StartRecordingToSink(stop)
	pod := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "u1"},
	}
	b.NewRecorder("wasmsched").Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v to %v", "default/p", "n1")

	var got request
	select {
	case got = <-creates:
	case <-time.After(time.Minute):
		t.Fatal("no event was created")
	}
	if got.method != http.MethodPost || got.path != "/apis/events.k8s.io/v1/namespaces/default/events" || got.query != "" {
		t.Errorf("request %s %s?%s, want POST /apis/events.k8s.io/v1/namespaces/default/events and no query", got.method, got.path, got.query)
	}
	if got.contentType != "application/vnd.kubernetes.protobuf" {
		t.Fatalf("Content-Type %q, want protobuf", got.contentType)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(got.body, nil, nil)
	if err != nil {
		t.Fatalf("decode the body: %v", err)
	}
	ev, ok := obj.(*eventsv1.Event)
	if !ok {
		t.Fatalf("body is a %T, want an events.k8s.io/v1 Event", obj)
	}
	if ev.Reason != "Scheduled" || ev.Action != "Binding" || ev.Note != "Successfully assigned default/p to n1" ||
		ev.ReportingController != "wasmsched" || ev.Regarding.Name != "p" || ev.Regarding.UID != "u1" || ev.Namespace != "default" {
		t.Errorf("event %+v, want Scheduled/Binding about default/p from wasmsched", ev)
	}
}
