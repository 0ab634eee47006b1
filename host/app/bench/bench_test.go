package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
)

// TestBenchTimeout: pods that nobody binds (no scheduler runs) end the
// phase at the deadline with the count of those bound.
func TestBenchTimeout(t *testing.T) {
	b := &runner{nodes: 2, pods: 3, progress: io.Discard}
	b.newClient()
	b.events = newEventSink()
	ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errTestDeadline)
	defer cancel()
	never := make(chan struct{})
	_, err := b.phase(ctx, "", "pod", 3, "wasmsched", never, func() error { return nil }, nil)
	if err == nil || err.Error() != "0 of 3 pods bound: "+errTestDeadline.Error() {
		t.Errorf("phase: %v; want %q", err, "0 of 3 pods bound: "+errTestDeadline.Error())
	}
}

var errTestDeadline = errors.New("-timeout 50ms reached")

// TestQuantile pins the estimate to histogram_quantile's.
func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	bs := []bucket{{1, 2}, {2, 6}, {4, 8}, {inf, 8}}
	tests := []struct {
		name string
		q    float64
		bs   []bucket
		want float64
	}{
		{"within the first bucket, from 0", 0.25, bs, 1},
		{"interpolated", 0.5, bs, 1.5},
		{"top of the last finite bucket", 1, bs, 4},
		{"rank in +Inf: highest finite bound", 0.9, []bucket{{1, 2}, {inf, 4}}, 1},
		{"quarter into a bucket", 0.125, bs, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.q, tt.bs); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("quantile(%v) = %v; want %v", tt.q, got, tt.want)
			}
		})
	}
	for _, empty := range [][]bucket{nil, {{1, 0}, {inf, 0}}} {
		if got := quantile(0.5, empty); !math.IsNaN(got) {
			t.Errorf("quantile of %v = %v; want NaN", empty, got)
		}
	}
	// The difference of two gathers is what the measured phase observed.
	before := histogram{[]bucket{{1, 1}, {2, 1}, {inf, 1}}, 0.5}
	after := histogram{[]bucket{{1, 3}, {2, 7}, {inf, 9}}, 10.5}
	want := histogram{[]bucket{{1, 2}, {2, 6}, {inf, 8}}, 10}
	if diff := cmp.Diff(want, after.sub(before), cmp.AllowUnexported(histogram{}, bucket{})); diff != "" {
		t.Errorf("sub (-want, +got):\n%s", diff)
	}
}

// TestTrackerWatch: a watch holds more than watch.DefaultChanSize events
// unread (the fake tracker's own would panic at the 101st), in the order of
// the writes, filtered by namespace, and leaves the process global alone.
func TestTrackerWatch(t *testing.T) {
	const n = 250
	c := fake.NewSimpleClientset()
	newTracker(c, 2*n+1)
	ctx := context.Background()
	all, err := c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Stop()
	other, err := c.CoreV1().Pods("other").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()

	var want []string
	for i := range n {
		p := pod(fmt.Sprintf("p-%d", i), "wasmsched")
		if _, err := c.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "ADDED p-"+fmt.Sprint(i))
	}
	p, err := c.CoreV1().Pods(namespace).Get(ctx, "p-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.NodeName = "node-00000"
	if _, err := c.CoreV1().Pods(namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Pods(namespace).Delete(ctx, "p-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "MODIFIED p-0 on node-00000", "DELETED p-1")

	var got []string
	for range len(want) {
		select {
		case ev := <-all.ResultChan():
			s := fmt.Sprintf("%s %s", ev.Type, ev.Object.(*v1.Pod).Name)
			if node := ev.Object.(*v1.Pod).Spec.NodeName; node != "" {
				s += " on " + node
			}
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d events; want %d", len(got), len(want))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want, +got):\n%s", diff)
	}
	select {
	case ev := <-other.ResultChan():
		t.Errorf("the watch of namespace other got %v", ev)
	default:
	}
	if watch.DefaultChanSize != 100 {
		t.Errorf("watch.DefaultChanSize = %d; want it untouched, 100", watch.DefaultChanSize)
	}

	// A watch that falls behind further still is ended, not a panic; the
	// informer would list again.
	small := newTracker(fake.NewSimpleClientset(), 1)
	w, err := small.Watch(podsGVR, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := small.Create(podsGVR, pod(fmt.Sprintf("q-%d", i), "wasmsched"), namespace); err != nil {
			t.Fatal(err)
		}
	}
	if ev, ok := <-w.ResultChan(); !ok || ev.Type != watch.Added {
		t.Errorf("first event %v, %v; want ADDED", ev, ok)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Errorf("the full watch is still open")
	}
	w.Stop() // after the end: no panic

}
