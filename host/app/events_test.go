package app

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/wasmsched/wasmsched/host/cycle"
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

// sinkLog is an events.EventSink that keeps the events created through it
// and fails the first fail creates.
type sinkLog struct {
	events.EventSink
	mu      sync.Mutex
	fail    int
	created chan *eventsv1.Event
}

func (s *sinkLog) Create(_ context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	fail := s.fail > 0
	s.fail--
	s.mu.Unlock()
	s.created <- ev.DeepCopy()
	if fail {
		return nil, errors.New("connection refused")
	}
	return ev, nil
}

// TestWriteEventf: the event a recorder writes on the caller's goroutine is
// the one client-go's recorder makes of the same arguments (but for its name
// and time), it is written before WriteEventf returns, and a failed write
// hands that same event (its name too) to the broadcaster, which writes it.
func TestWriteEventf(t *testing.T) {
	sink := &sinkLog{created: make(chan *eventsv1.Event, 4)}
	b := newEventsBroadcaster(sink)
	stop := make(chan struct{})
	defer b.Shutdown()
	defer close(stop)
	b.StartRecordingToSink(stop)
	rec := b.NewRecorder("wasmsched")
	w, ok := rec.(cycle.EventWriter)
	if !ok {
		t.Fatalf("NewRecorder = %T, not a cycle.EventWriter", rec)
	}
	pod := &v1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "7"},
	}
	next := func(what string) *eventsv1.Event {
		t.Helper()
		select {
		case ev := <-sink.created:
			return ev
		case <-time.After(time.Minute):
			t.Fatalf("%s: no event was created", what)
			return nil
		}
	}

	rec.Eventf(pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to %s", "ns", "p", "n1")
	want := next("Eventf")
	if err := w.WriteEventf(context.Background(), pod, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to %s", "ns", "p", "n1"); err != nil {
		t.Fatalf("WriteEventf: %v", err)
	}
	var got *eventsv1.Event
	select {
	case got = <-sink.created:
	default:
		t.Fatal("WriteEventf returned before its event was created")
	}
	if !strings.HasPrefix(got.Name, "p.") || got.Name == want.Name || got.EventTime.IsZero() {
		t.Errorf("written event named %q at %v, want a name of its own after p. and a time", got.Name, got.EventTime)
	}
	ignore := cmpopts.IgnoreFields(eventsv1.Event{}, "ObjectMeta.Name", "EventTime")
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("written event differs from client-go's recorder's (-recorder, +written):\n%s", diff)
	}

	// Another pod: the broadcaster folds an event about the pod it
	// recorded above into a series, and a pod is bound once.
	sink.mu.Lock()
	sink.fail = 1
	sink.mu.Unlock()
	pod2 := pod.DeepCopy()
	pod2.Name, pod2.UID = "p2", "u2"
	if err := w.WriteEventf(context.Background(), pod2, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %s/%s to %s", "ns", "p2", "n2"); err != nil {
		t.Fatalf("WriteEventf: %v", err)
	}
	failed, retried := next("the failed write"), next("the broadcaster's retry")
	if diff := cmp.Diff(failed, retried); diff != "" {
		t.Errorf("the broadcaster wrote another event than the one whose write failed (-failed, +retried):\n%s", diff)
	}
	if retried.Note != "Successfully assigned ns/p2 to n2" {
		t.Errorf("retried note %q", retried.Note)
	}

	if err := w.WriteEventf(context.Background(), pod, "Loud", "Scheduled", "Binding", "x"); err == nil {
		t.Error("WriteEventf accepted event type Loud; client-go's recorder refuses it")
	}
}

// BenchmarkScheduledEvent records one Scheduled event per pod, a pod at a
// time as bindings come at a few hundred a second, against an HTTP/2 TLS
// server: through client-go's broadcaster (Eventf) and on the caller's
// goroutine (WriteEventf), both through wasmsched's sink. cpu-ns/op is the
// process's CPU per event, the server's included (the same in both);
// kept-B/op the heap still in use per event after a collection (the
// broadcaster keeps each event it wrote for six minutes).
func BenchmarkScheduledEvent(b *testing.B) {
	created := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		created <- struct{}{}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	rc := client.EventsV1().RESTClient().(*rest.RESTClient)
	eb := newEventsBroadcaster(&eventSink{EventSinkImpl: events.EventSinkImpl{Interface: client.EventsV1()}, rest: rc})
	stop := make(chan struct{})
	defer eb.Shutdown()
	defer close(stop)
	eb.StartRecordingToSink(stop)
	rec := eb.NewRecorder("wasmsched")
	w := rec.(cycle.EventWriter)
	pods := 0
	next := func() *v1.Pod {
		pods++
		name := fmt.Sprintf("p%d", pods)
		return &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	run := func(b *testing.B, record func(*v1.Pod)) {
		record(next()) // the connection
		<-created
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heap := ms.HeapAlloc
		b.ResetTimer()
		start := cpu()
		for range b.N {
			record(next())
			<-created
		}
		b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(heap))/float64(b.N), "kept-B/op")
	}
	const note = "Successfully assigned %s/%s to %s"
	b.Run("broadcaster", func(b *testing.B) {
		run(b, func(p *v1.Pod) {
			rec.Eventf(p, nil, v1.EventTypeNormal, "Scheduled", "Binding", note, p.Namespace, p.Name, "n1")
		})
	})
	b.Run("write", func(b *testing.B) {
		run(b, func(p *v1.Pod) {
			if err := w.WriteEventf(context.Background(), p, v1.EventTypeNormal, "Scheduled", "Binding", note, p.Namespace, p.Name, "n1"); err != nil {
				b.Fatal(err)
			}
		})
	})
}
