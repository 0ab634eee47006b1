package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
)

const ns = "perf-ns"

func node(name string, mod func(*v1.Node)) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if mod != nil {
		mod(n)
	}
	return n
}

func pod(name, scheduler string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{SchedulerName: scheduler},
	}
}

func TestUsableNodes(t *testing.T) {
	taint := func(e v1.TaintEffect) func(*v1.Node) {
		return func(n *v1.Node) { n.Spec.Taints = []v1.Taint{{Key: "k", Effect: e}} }
	}
	objs := []any{
		node("b", nil),
		node("a", nil),
		node("cordoned", func(n *v1.Node) { n.Spec.Unschedulable = true }),
		node("no-schedule", taint(v1.TaintEffectNoSchedule)),
		node("no-execute", taint(v1.TaintEffectNoExecute)),
		node("prefer-no-schedule", taint(v1.TaintEffectPreferNoSchedule)),
		// No Ready condition, as every node of e2e/perf: usable.
		node("c", func(n *v1.Node) {
			n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionUnknown}}
		}),
	}
	want := []string{"a", "b", "c", "prefer-no-schedule"}
	if diff := cmp.Diff(want, usableNodes(objs)); diff != "" {
		t.Errorf("usableNodes (-want, +got):\n%s", diff)
	}
	if got := usableNodes(nil); got == nil || len(got) != 0 {
		t.Errorf("usableNodes(nil) = %#v, want an empty non-nil slice (nil means stale)", got)
	}
}

// cluster is a fake clientset that serves events.k8s.io/v1 and records
// the bindings (setting spec.nodeName, as the apiserver does).
type cluster struct {
	*fake.Clientset
	mu       sync.Mutex
	bindings map[string]string // pod name -> node
}

func newCluster(t *testing.T, objs ...runtime.Object) *cluster {
	t.Helper()
	c := &cluster{Clientset: fake.NewClientset(objs...), bindings: map[string]string{}}
	c.Resources = []*metav1.APIResourceList{{GroupVersion: eventsv1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "events", Namespaced: true, Kind: "Event"}}}}
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateAction)
		if !ok || a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := ca.GetObject().(*v1.Binding)
		c.mu.Lock()
		c.bindings[b.Name] = b.Target.Name
		c.mu.Unlock()
		p, err := c.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p = p.DeepCopyObject()
		p.(*v1.Pod).Spec.NodeName = b.Target.Name
		return true, nil, c.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), p, b.Namespace)
	})
	return c
}

func (c *cluster) bound() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.bindings))
	for k, v := range c.bindings {
		out[k] = v
	}
	return out
}

// start runs a binder for scheduler "perf" on c until the test ends.
func start(t *testing.T, c *cluster) *binder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bc := events.NewEventBroadcasterAdapterWithContext(ctx, c)
	bc.StartRecordingToSink(ctx.Done())
	b := newBinder(c, bc.NewRecorder("perf"), "perf", prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { b.run(ctx, 4); close(done) }()
	t.Cleanup(func() { cancel(); <-done; bc.Shutdown() })
	return b
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBindRoundRobinWithEvents(t *testing.T) {
	objs := []runtime.Object{
		node("n-a", nil), node("n-b", nil), node("n-c", func(n *v1.Node) { n.Spec.Unschedulable = true }),
		pod("other", "default-scheduler"),
	}
	names := []string{"p0", "p1", "p2", "p3"}
	for _, n := range names {
		objs = append(objs, pod(n, "perf"))
	}
	c := newCluster(t, objs...)
	b := start(t, c)
	waitUntil(t, "4 bindings", func() bool { return len(c.bound()) >= 4 })

	perNode := map[string]int{}
	for p, n := range c.bound() {
		if p == "other" {
			t.Errorf("bound the pod of another scheduler to %s", n)
		}
		perNode[n]++
	}
	if diff := cmp.Diff(map[string]int{"n-a": 2, "n-b": 2}, perNode); diff != "" {
		t.Errorf("pods per node, round-robin over the usable nodes (-want, +got):\n%s", diff)
	}
	// Counted once Bind has returned, a moment after the fake recorded it.
	waitUntil(t, "scheduler_schedule_attempts_total{result=scheduled} = 4", func() bool {
		return testutil.ToFloat64(b.attempts.WithLabelValues("scheduled", "perf")) == 4
	})

	// The events kube-scheduler writes: events.k8s.io/v1, one per pod.
	var evs []eventsv1.Event
	waitUntil(t, "4 events", func() bool {
		l, err := c.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		evs = l.Items
		return len(evs) >= 4
	})
	host, _ := os.Hostname()
	bound := c.bound()
	for _, e := range evs {
		p := e.Regarding.Name
		want := eventsv1.Event{
			Regarding: v1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p, UID: types.UID("uid-" + p), APIVersion: "v1"},
			Reason:    "Scheduled", Note: "Successfully assigned " + ns + "/" + p + " to " + bound[p],
			Type: v1.EventTypeNormal, Action: "Binding",
			ReportingController: "perf", ReportingInstance: "perf-" + host,
		}
		got := eventsv1.Event{Regarding: e.Regarding, Reason: e.Reason, Note: e.Note, Type: e.Type, Action: e.Action,
			ReportingController: e.ReportingController, ReportingInstance: e.ReportingInstance}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event of %s (-want, +got):\n%s", p, diff)
		}
	}
}

func TestBindWaitsForANode(t *testing.T) {
	c := newCluster(t, pod("p0", "perf"))
	b := start(t, c)
	waitUntil(t, "the binder to be ready", b.ready.Load)
	time.Sleep(3 * retryDelay)
	if got := c.bound(); len(got) != 0 {
		t.Fatalf("bound %v without a node", got)
	}
	if _, err := c.CoreV1().Nodes().Create(context.Background(), node("late", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "p0 bound to the node created later", func() bool { return c.bound()["p0"] == "late" })
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseFlags([]string{"-kubeconfig", "k", "-scheduler-name", "perf", "-qps", "5000", "-burst", "5000"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := options{kubeconfig: "k", listen: "127.0.0.1:10361", schedulerName: "perf", qps: 5000, burst: 5000,
		workers: 32, contentType: "application/vnd.kubernetes.protobuf"}
	if diff := cmp.Diff(want, o, cmp.AllowUnexported(options{})); diff != "" {
		t.Errorf("options (-want, +got):\n%s", diff)
	}
	for _, args := range [][]string{{}, {"-kubeconfig", "k", "-qps", "0"}, {"-kubeconfig", "k", "extra"}} {
		if _, err := parseFlags(args, &stderr); err == nil {
			t.Errorf("parseFlags(%q): want an error", args)
		}
	}
}
