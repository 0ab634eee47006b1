package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The scheduler runs as its own process, built from ./cmd/wasmsched once
// per test binary: the tests see it as a cluster does.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

func schedulerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wasmsched-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "wasmsched")
		cmd := exec.Command("go", "build", "-o", binary, "./cmd/wasmsched")
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/wasmsched: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// proc is a running wasmsched (testenv.StartWasmsched).
type proc struct{ *testenv.Wasmsched }

// flushRescues is the counter of the pods that only the periodic flush of
// unschedulable pods, not an event, brought to the attempt that scheduled
// them; rescueLog is the line wasmsched logs for each.
const (
	flushRescues = "wasmsched_queue_flush_rescues_total"
	rescueLog    = "pod scheduled after the unschedulable-pods flush moved it"
)

// e2eMaxInUnschedulable is the e2e suite's podMaxInUnschedulablePodsDuration
// (queue.maxInUnschedulable; 5 min by default): a wake-up no event
// delivered then shows within a scenario's waits as a flush rescue, which
// the suite fails (startScheduler), rather than as a timeout. The flush
// runs every 30 s, so a pod waits 20 to 50 s for it.
const e2eMaxInUnschedulable = "20s"

// startScheduler runs wasmsched with the kubeconfig and extra flags, at log
// level debug and with e2eMaxInUnschedulable (args may override it), and
// waits until it is ready. At the end of the test it fails the test if
// wasmsched_queue_flush_rescues_total is not 0 (read from /metrics, or
// from the log for an instance the test stopped), then stops it (SIGTERM,
// then SIGKILL); its log is printed if the test failed.
func startScheduler(t *testing.T, kubeconfig string, args ...string) *proc {
	t.Helper()
	w, err := testenv.StartWasmsched(context.Background(), testenv.WasmschedOptions{
		Bin:        schedulerBinary(t),
		Kubeconfig: kubeconfig,
		Args: append([]string{"-log-level", "debug", "-set", "queue.maxInUnschedulable=" + e2eMaxInUnschedulable},
			args...),
		LogPath: filepath.Join(t.TempDir(), "wasmsched.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{w}
	t.Cleanup(func() {
		p.checkNoFlushRescues(t)
		p.stop()
		if t.Failed() {
			t.Logf("wasmsched log (tail of %s):\n%s", p.LogPath(), p.Tail(200))
		}
	})
	return p
}

// checkNoFlushRescues fails t if the periodic flush of unschedulable pods
// brought a pod to the attempt that scheduled it: a wake-up that some
// event or QueueingHint should have delivered (upstream's would have).
func (p *proc) checkNoFlushRescues(t *testing.T) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(p.Log(), "\n") {
		if strings.Contains(l, rescueLog) {
			lines = append(lines, l)
		}
	}
	if exited, _ := p.Exited(); exited {
		// Stopped by the test: its log is what is left to read.
		if len(lines) > 0 {
			t.Errorf("%s: %d pods scheduled only after the unschedulable-pods flush moved them (missed wake-ups):\n%s",
				flushRescues, len(lines), strings.Join(lines, "\n"))
		}
		return
	}
	body, err := p.Get(context.Background(), "/metrics")
	if err != nil {
		t.Errorf("read %s: GET /metrics: %v", flushRescues, err)
		return
	}
	if n := testenv.SumSamples(body, flushRescues); n != 0 {
		var samples []string
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, flushRescues+"{") {
				samples = append(samples, l)
			}
		}
		t.Errorf("%s = %v, want 0: pods scheduled only after the unschedulable-pods flush moved them (missed wake-ups)\n%s\n%s",
			flushRescues, n, strings.Join(samples, "\n"), strings.Join(lines, "\n"))
	}
}

// stop sends SIGTERM and waits, then kills.
func (p *proc) stop() { p.Stop(15 * time.Second) }

// metric returns the sum of the samples of a metric family whose labels
// contain every given label (as `name="value"`).
func (p *proc) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	body, err := p.Get(context.Background(), "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return testenv.SumSamples(body, name, labels...)
}

// waitMetric waits until metric (summed as by metric) equals want: the
// scheduler counts a binding after the apiserver answered it, so a test
// can see the pod bound a moment before the count.
func (p *proc) waitMetric(t *testing.T, name string, want float64, labels ...string) {
	t.Helper()
	var got float64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if got = p.metric(t, name, labels...); got == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitFor polls cond every 100 ms until it holds, fails, or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, err := cond()
		if err != nil {
			last = err
			return false, err
		}
		return ok, nil
	})
	if err != nil {
		if last != nil {
			t.Fatalf("waiting for %s: %v", what, last)
		}
		t.Fatalf("waiting for %s: not within %v", what, timeout)
	}
}

// node builds a Node with the given allocatable cpu, memory and pods.
type nodeSpec struct {
	name   string
	cpu    string
	memory string
	pods   string
	labels map[string]string
	taints []v1.Taint
	unsch  bool
}

func makeNode(s nodeSpec) *v1.Node {
	if s.memory == "" {
		s.memory = "16Gi"
	}
	if s.pods == "" {
		s.pods = "110"
	}
	labels := map[string]string{"kubernetes.io/hostname": s.name}
	for k, v := range s.labels {
		labels[k] = v
	}
	rl := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(s.cpu),
		v1.ResourceMemory: resource.MustParse(s.memory),
		v1.ResourcePods:   resource.MustParse(s.pods),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels},
		Spec:       v1.NodeSpec{Taints: s.taints, Unschedulable: s.unsch},
		Status: v1.NodeStatus{
			Capacity: rl, Allocatable: rl,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

func createNode(t *testing.T, c kubernetes.Interface, s nodeSpec) *v1.Node {
	t.Helper()
	n, err := c.CoreV1().Nodes().Create(context.Background(), makeNode(s), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", s.name, err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Nodes().Delete(context.Background(), s.name, metav1.DeleteOptions{})
	})
	return n
}

// makePod builds a pause pod with a cpu request for scheduler name.
func makePod(ns, name, scheduler, cpu string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName: scheduler,
			Containers:    []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	}
	return p
}

func createPod(t *testing.T, c kubernetes.Interface, p *v1.Pod) *v1.Pod {
	t.Helper()
	out, err := c.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	return out
}

func getPod(t *testing.T, c kubernetes.Interface, ns, name string) *v1.Pod {
	t.Helper()
	p, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	return p
}

// waitBound waits until the pod is bound and returns its node.
func waitBound(t *testing.T, c kubernetes.Interface, ns, name string, timeout time.Duration) string {
	t.Helper()
	var node string
	waitFor(t, timeout, "pod "+ns+"/"+name+" to be bound", func() (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	return node
}

// condition returns the pod's PodScheduled condition, or nil.
func scheduledCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// eventsFor lists the events.k8s.io/v1 events regarding a pod.
func eventsFor(t *testing.T, c kubernetes.Interface, ns, name string) []eventsv1.Event {
	t.Helper()
	list, err := c.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", name).String(),
	})
	if err != nil {
		t.Fatalf("list events of %s/%s: %v", ns, name, err)
	}
	return list.Items
}

// scheduledOnce waits until the namespace's pods (want of them) each have a
// Scheduled event, then checks none has two: each was bound exactly once.
// Events are sent asynchronously, hence the wait.
func scheduledOnce(t *testing.T, c kubernetes.Interface, ns string, want int, timeout time.Duration) {
	t.Helper()
	scheduled := map[string]int{}
	waitFor(t, timeout, "a Scheduled event for every pod", func() (bool, error) {
		list, err := c.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		clear(scheduled)
		for _, e := range list.Items {
			if e.Reason == "Scheduled" {
				scheduled[e.Regarding.Name]++
			}
		}
		return len(scheduled) == want, nil
	})
	for name, n := range scheduled {
		if n != 1 {
			t.Errorf("pod %s has %d Scheduled events, want 1", name, n)
		}
	}
}
