package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// The placement slots (issue 28) against a real apiserver, wasmsched only:
// upstream has no Wasm placement to compare with.
//
//	go test ./e2e -run 'TestWasm(Filter|Score)' -v

// createNamespaceLabelled creates a namespace with labels, deleted at the
// end of the test.
func createNamespaceLabelled(t *testing.T, env *testenv.Env, labels map[string]string) string {
	t.Helper()
	ns := env.Namespace(t)
	n, err := env.Client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if _, err := env.Client.CoreV1().Namespaces().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// failedSchedulingMessage waits for a FailedScheduling event of the pod
// whose note contains want, and returns the note.
func failedSchedulingMessage(t *testing.T, c kubernetes.Interface, ns, name, want string) string {
	t.Helper()
	var note string
	waitFor(t, 30*time.Second, "FailedScheduling of "+name+" naming "+want, func() (bool, error) {
		for _, e := range eventsFor(t, c, ns, name) {
			if e.Reason == "FailedScheduling" && strings.Contains(e.Note, want) {
				note = e.Note
				return true, nil
			}
		}
		return false, nil
	})
	return note
}

// TestWasmFilterNodepool: guest-sdk/examples/nodepool, hot-swapped in by a
// SchedulingPolicy while pods wait, decides where pods go: a pool's
// namespace runs only on its pool's nodes and no other namespace runs
// there. Its rejections read as any plugin's in FailedScheduling, a node
// event it declared wakes the pods it rejected, and removing the policy
// wakes them too, without the periodic flush (startScheduler fails the
// test on a flush rescue).
func TestWasmFilterNodepool(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	installPolicyAPI(t, env)
	gpuNS := createNamespaceLabelled(t, env, map[string]string{"wasmsched.io/pool": "gpu"})
	batchNS := createNamespaceLabelled(t, env, map[string]string{"wasmsched.io/pool": "batch"})
	plainNS := env.Namespace(t)

	createNode(t, c, nodeSpec{name: "gpu-1", cpu: "8", labels: map[string]string{"wasmsched.io/pool": "gpu"}})
	createNode(t, c, nodeSpec{name: "gpu-2", cpu: "8", labels: map[string]string{"wasmsched.io/pool": "gpu"}})
	createNode(t, c, nodeSpec{name: "cpu-1", cpu: "8"})
	sched := startScheduler(t, env.Kubeconfig, "-set", "queue.initialBackoff=100ms", "-set", "queue.maxBackoff=500ms")

	// Without a filter module a pod may go anywhere: a pod that fits only
	// nowhere (too large) waits, rejected by NodeResourcesFit.
	big := makePod(plainNS, "big", "wasmsched", "100")
	createPod(t, c, big)
	failedSchedulingMessage(t, c, plainNS, "big", "Insufficient cpu")

	// The filter, loaded by a SchedulingPolicy while "big" waits.
	obj := manifest(t, filepath.Join("..", "guest-sdk", "examples", "nodepool", "nodepool.wasm"), "--slot", "filter", "--name", "nodepool")
	if _, err := env.Dynamic().Resource(policyapi.GVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, env, "nodepool", "the filter accepted", func(p *policyapi.SchedulingPolicy) bool {
		st, _ := accepted(p)
		return st == metav1.ConditionTrue
	})

	// Placements under the filter.
	for i := range 4 {
		createPod(t, c, makePod(gpuNS, fmt.Sprintf("train-%d", i), "wasmsched", "1"))
		createPod(t, c, makePod(plainNS, fmt.Sprintf("web-%d", i), "wasmsched", "1"))
	}
	for i := range 4 {
		if n := waitBound(t, c, gpuNS, fmt.Sprintf("train-%d", i), 30*time.Second); n != "gpu-1" && n != "gpu-2" {
			t.Errorf("train-%d (pool gpu) on %s, want a gpu node", i, n)
		}
		if n := waitBound(t, c, plainNS, fmt.Sprintf("web-%d", i), 30*time.Second); n != "cpu-1" {
			t.Errorf("web-%d (no pool) on %s, want cpu-1", i, n)
		}
	}

	// A pool without nodes: the pods wait, rejected by the filter on every
	// node, and say so; a node of the pool, added, wakes them.
	for i := range 2 {
		createPod(t, c, makePod(batchNS, fmt.Sprintf("etl-%d", i), "wasmsched", "1"))
	}
	note := failedSchedulingMessage(t, c, batchNS, "etl-0", "(wasmsched.io/WasmFilter)")
	for _, want := range []string{"0/3 nodes are available: 3 node(s) are not in pool batch (wasmsched.io/WasmFilter)",
		"preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."} {
		if !strings.Contains(note, want) {
			t.Errorf("FailedScheduling %q lacks %q", note, want)
		}
	}
	if p := getPod(t, c, batchNS, "etl-0"); p.Spec.NodeName != "" {
		t.Fatalf("etl-0 bound to %s while its pool has no node", p.Spec.NodeName)
	}
	createNode(t, c, nodeSpec{name: "batch-1", cpu: "8", labels: map[string]string{"wasmsched.io/pool": "batch"}})
	for i := range 2 {
		if n := waitBound(t, c, batchNS, fmt.Sprintf("etl-%d", i), 15*time.Second); n != "batch-1" {
			t.Errorf("etl-%d on %s, want batch-1", i, n)
		}
	}

	// A pod of a pool that never gets a node waits until the policy goes:
	// deleting it empties the slot, which wakes the pods it rejected.
	tpuNS := createNamespaceLabelled(t, env, map[string]string{"wasmsched.io/pool": "tpu"})
	createPod(t, c, makePod(tpuNS, "infer", "wasmsched", "1"))
	failedSchedulingMessage(t, c, tpuNS, "infer", "not in pool tpu (wasmsched.io/WasmFilter)")
	if err := env.Dynamic().Resource(policyapi.GVR).Delete(ctx, "nodepool", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, c, tpuNS, "infer", 15*time.Second)
	if p := getPod(t, c, plainNS, "big"); p.Spec.NodeName != "" {
		t.Errorf("big bound to %s: it fits nowhere", p.Spec.NodeName)
	}
	sched.waitMetric(t, "wasmsched_policy_swaps_total", 1, "slot", "filter", "result", "emptied")
}

// gpuNode is a node with GPUs (an extended resource) as allocatable.
func createGPUNode(t *testing.T, c kubernetes.Interface, name string, gpus int64) {
	t.Helper()
	n := makeNode(nodeSpec{name: name, cpu: "32"})
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	n.Status.Capacity["nvidia.com/gpu"], n.Status.Allocatable["nvidia.com/gpu"] = q, q
	if _, err := c.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// gpuPod requests gpus GPUs and a little cpu.
func gpuPod(ns, name string, gpus int64) *v1.Pod {
	p := makePod(ns, name, "wasmsched", "500m")
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = q
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"nvidia.com/gpu": q}
	return p
}

// TestWasmScoreGpupack: guest-sdk/examples/gpupack, configured as the
// score module, packs GPU pods: each goes where the fewest GPUs are left
// after it, so a whole 8-GPU node stays free for a pod that needs it. The
// default scores alone spread them (LeastAllocated prefers the emptier
// node); with the module the pods fill the 4-GPU node first. Pods without
// GPUs are none of its business (its pre-step skips them).
func TestWasmScoreGpupack(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createGPUNode(t, c, "g4", 4)
	createGPUNode(t, c, "g8", 8)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("policies:\n  score:\n    module: "+
		filepath.Join("..", "guest-sdk", "examples", "gpupack", "gpupack.wasm")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sched := startScheduler(t, env.Kubeconfig, "-config", cfg)
	// One at a time, so that each sees the previous one's GPUs taken.
	for i, want := range []string{"g4", "g4", "g8"} {
		name := fmt.Sprintf("gpu-%d", i)
		createPod(t, c, gpuPod(ns, name, 2))
		if got := waitBound(t, c, ns, name, 30*time.Second); got != want {
			t.Errorf("%s (2 GPUs) on %s, want %s (the fewest GPUs left after it)", name, got, want)
		}
	}
	// The 8-GPU node still has 6: an 6-GPU pod fits.
	createPod(t, c, gpuPod(ns, "big", 6))
	if got := waitBound(t, c, ns, "big", 30*time.Second); got != "g8" {
		t.Errorf("big (6 GPUs) on %s, want g8", got)
	}
	createPod(t, c, makePod(ns, "plain", "wasmsched", "100m"))
	waitBound(t, c, ns, "plain", 30*time.Second)
	if calls := sched.metric(t, "wasmsched_policy_calls_total", "slot", "score"); calls < 4 {
		t.Errorf("score calls %v, want at least one per GPU pod", calls)
	}
	if fb := sched.metric(t, "wasmsched_policy_fallbacks_total", "slot", "score"); fb != 0 {
		t.Errorf("score fallbacks %v, want 0", fb)
	}
}
