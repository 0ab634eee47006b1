// Command demo is `make demo`: it starts a real control plane (etcd,
// kube-apiserver v1.37.1 and KWOK fake kubelets, built from the Go module
// proxy on first use), runs the wasmsched binary with its built-in Wasm
// reference policies, submits a sample workload, prints what happened to
// each pod as the cluster reports it, and cleans everything up on exit or
// Ctrl-C.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

type demo struct {
	sched *testenv.Wasmsched
	out   io.Writer
	env   *testenv.Env
	c     kubernetes.Interface
	ns    string
	start time.Time
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "[%5.1fs] %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	bin := fs.String("wasmsched", "bin/wasmsched", "the wasmsched binary to run")
	nodes := fs.Int("nodes", 300, "fake nodes to create")
	keep := fs.Bool("keep", false, "keep the cluster and the scheduler running until Ctrl-C")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d := &demo{out: out, start: time.Now()}
	d.say("starting etcd and kube-apiserver v1.37.1 (built into ~/.cache/wasmsched on first use; a cold build takes ~10 min)")
	env, err := testenv.New(ctx, testenv.Options{Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer func() {
		d.say("cleaning up: stopping wasmsched, KWOK, kube-apiserver and etcd")
		env.Stop()
	}()
	d.env, d.c = env, env.Client
	d.say("kube-apiserver ready at %s (kubeconfig %s)", env.Host(), env.Kubeconfig)
	if _, err := env.StartKWOK(ctx, testenv.KWOKOptions{}); err != nil {
		return err
	}
	if _, err := env.CreateFakeNodes(ctx, *nodes, testenv.NodeSpec{CPU: "4", Memory: "16Gi", Pods: 110}); err != nil {
		return err
	}
	d.say("KWOK runs %d fake nodes (4 cpu, 16Gi, 110 pods each)", *nodes)
	if d.ns, err = env.CreateNamespace(ctx, "demo"); err != nil {
		return err
	}

	// The demo swaps the queue sort with a SchedulingPolicy: the CRD goes in
	// first, so that the scheduler finds the API when it starts.
	if err := d.installPolicyAPI(ctx); err != nil {
		return err
	}
	sched, err := testenv.StartWasmsched(ctx, testenv.WasmschedOptions{
		Bin: *bin, Kubeconfig: env.Kubeconfig, LogPath: filepath.Join(env.Dir(), "wasmsched.log"),
	})
	if err != nil {
		return err
	}
	defer sched.Stop(10 * time.Second)
	d.sched = sched
	d.say("wasmsched runs with the built-in Wasm policies (backoffpop, hints, gangpreempt); log: %s", sched.LogPath())
	d.say("metrics: http://%s/metrics", sched.Addr)

	steps := []func(context.Context) error{d.plainPods, d.waitForNode, d.gang, d.preemption, d.hotSwap}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.summary(ctx)
	if *keep {
		d.say("the cluster keeps running: export KUBECONFIG=%s; Ctrl-C to stop", env.Kubeconfig)
		<-ctx.Done()
	}
	return nil
}

// plainPods: a burst of ordinary pods, bound by the native filters and
// scores, spread by least-allocated scoring.
func (d *demo) plainPods(ctx context.Context) error {
	const n = 50
	d.say("1. %d plain pods (500m cpu each)", n)
	for i := range n {
		if err := d.create(ctx, pod(d.ns, "web-"+strconv.Itoa(i), "500m")); err != nil {
			return err
		}
	}
	t0 := time.Now()
	nodes := map[string]int{}
	for i := range n {
		node, err := d.waitBound(ctx, "web-"+strconv.Itoa(i), time.Minute)
		if err != nil {
			return err
		}
		nodes[node]++
	}
	d.say("   all %d bound in %v, over %d distinct nodes", n, time.Since(t0).Round(time.Millisecond), len(nodes))
	return nil
}

// waitForNode: a pod no node fits is reported unschedulable, then bound as
// soon as a fitting node is added (the hints policy requeues it on the
// node-add event, not the 5-minute flush).
func (d *demo) waitForNode(ctx context.Context) error {
	d.say("2. a pod that needs a node labelled tier=gold, which no node has yet")
	p := pod(d.ns, "needs-gold", "1")
	p.Spec.NodeSelector = map[string]string{"tier": "gold"}
	if err := d.create(ctx, p); err != nil {
		return err
	}
	cond, err := d.waitCondition(ctx, "needs-gold", time.Minute)
	if err != nil {
		return err
	}
	d.say("   PodScheduled=%s reason=%s: %s", cond.Status, cond.Reason, cond.Message)
	if _, err := d.env.CreateFakeNodes(ctx, 1, testenv.NodeSpec{NamePrefix: "gold", CPU: "4", Memory: "16Gi", Labels: map[string]string{"tier": "gold"}}); err != nil {
		return err
	}
	t0 := time.Now()
	node, err := d.waitBound(ctx, "needs-gold", time.Minute)
	if err != nil {
		return err
	}
	d.say("   node %s added; the pod was bound to it %v later", node, time.Since(t0).Round(time.Millisecond))
	return nil
}

// gang: members of a PodGroup wait for quorum, then bind together.
func (d *demo) gang(ctx context.Context) error {
	d.say("3. a gang: PodGroup train with minCount 4")
	if _, err := d.env.CreatePodGroup(ctx, d.ns, "train", 4); err != nil {
		return err
	}
	for i := range 3 {
		p := pod(d.ns, "train-"+strconv.Itoa(i), "1")
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr("train")}
		if err := d.create(ctx, p); err != nil {
			return err
		}
	}
	// The policy holds them back before any attempt: wait until the
	// scheduler reports all three gated.
	if err := poll(ctx, time.Minute, func() bool {
		page, err := d.sched.Get(ctx, "/metrics")
		return err == nil && testenv.SumSamples(page, "scheduler_pending_pods", `queue="gated"`) == 3
	}); err != nil {
		return fmt.Errorf("the 3 members were not reported gated: %w", err)
	}
	bound := 0
	for i := range 3 {
		if p, err := d.c.CoreV1().Pods(d.ns).Get(ctx, "train-"+strconv.Itoa(i), metav1.GetOptions{}); err == nil && p.Spec.NodeName != "" {
			bound++
		}
	}
	d.say("   3 of 4 members exist: %d bound (the gangpreempt policy holds them until minCount)", bound)
	p := pod(d.ns, "train-3", "1")
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr("train")}
	if err := d.create(ctx, p); err != nil {
		return err
	}
	var placed []string
	for i := range 4 {
		node, err := d.waitBound(ctx, "train-"+strconv.Itoa(i), time.Minute)
		if err != nil {
			return err
		}
		placed = append(placed, node)
	}
	d.say("   the 4th member arrived: all 4 bound together, on %s", strings.Join(placed, ", "))
	return nil
}

// preemption: a high-priority pod and a preemptionPolicy: Never pod facing
// a node full of low-priority pods.
func (d *demo) preemption(ctx context.Context) error {
	d.say("4. priority: a node labelled pool=full is filled with low-priority pods; a high-priority pod and a preemptionPolicy: Never pod want it")
	for _, pc := range []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-low"}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-high-never"}, Value: 1000, PreemptionPolicy: ptr(v1.PreemptNever)},
	} {
		if _, err := d.c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PriorityClass %s: %w", pc.Name, err)
		}
	}
	if _, err := d.env.CreateFakeNodes(ctx, 1, testenv.NodeSpec{NamePrefix: "full", CPU: "4", Memory: "16Gi", Labels: map[string]string{"pool": "full"}}); err != nil {
		return err
	}
	for i := range 4 {
		p := pod(d.ns, "low-"+strconv.Itoa(i), "1")
		p.Spec.PriorityClassName = "demo-low"
		p.Spec.NodeSelector = map[string]string{"pool": "full"}
		if err := d.create(ctx, p); err != nil {
			return err
		}
	}
	for i := range 4 {
		if _, err := d.waitBound(ctx, "low-"+strconv.Itoa(i), time.Minute); err != nil {
			return err
		}
	}
	for _, x := range []struct{ name, class string }{{"urgent", "demo-high"}, {"urgent-never", "demo-high-never"}} {
		p := pod(d.ns, x.name, "1")
		p.Spec.PriorityClassName = x.class
		p.Spec.NodeSelector = map[string]string{"pool": "full"}
		if err := d.create(ctx, p); err != nil {
			return err
		}
	}
	node, err := d.waitBound(ctx, "urgent", time.Minute)
	if err != nil {
		return err
	}
	list, err := d.c.CoreV1().Pods(d.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var left []string
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "low-") && p.DeletionTimestamp == nil {
			left = append(left, p.Name)
		}
	}
	slices.Sort(left)
	d.say("   urgent preempted %d low-priority pod(s) and was bound to %s; still running there: %s",
		4-len(left), node, strings.Join(left, ", "))
	cond, err := d.waitCondition(ctx, "urgent-never", time.Minute)
	if err != nil {
		return err
	}
	d.say("   urgent-never (preemptionPolicy: Never) preempted nobody and waits: %s", cond.Message)
	return nil
}

// installPolicyAPI applies deploy/crd.yaml and waits until the apiserver
// serves SchedulingPolicies.
func (d *demo) installPolicyAPI(ctx context.Context) error {
	if err := d.env.Apply(ctx, filepath.Join("deploy", "crd.yaml")); err != nil {
		return err
	}
	err := poll(ctx, 30*time.Second, func() bool {
		list, err := d.c.Discovery().ServerResourcesForGroupVersion(policyapi.GroupVersion.String())
		return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == policyapi.Resource })
	})
	if err != nil {
		return fmt.Errorf("the SchedulingPolicy API is not served after applying deploy/crd.yaml: %w", err)
	}
	d.say("SchedulingPolicy CRD applied from deploy/crd.yaml")
	return nil
}

// hotSwap replaces the queue-sort policy while the scheduler runs by
// applying a SchedulingPolicy (what `wasmsched policy manifest fifosort.wasm
// --slot queueSort | kubectl apply -f -` does), and shows its status and what
// serves each slot afterwards.
func (d *demo) hotSwap(ctx context.Context) error {
	d.say("5. hot swap: a SchedulingPolicy makes the queue sort FIFO (guest-sdk/examples/fifosort) without a restart")
	bin, err := os.ReadFile(filepath.Join("guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(bin)
	obj, err := policyapi.ToUnstructured(policyapi.New("fifo", policyapi.Spec{
		Slot: "queueSort", Module: policyapi.Module{Inline: bin}, SHA256: hex.EncodeToString(sum[:])}))
	if err != nil {
		return err
	}
	ri := d.env.Dynamic().Resource(policyapi.GVR)
	if _, err := ri.Apply(ctx, "fifo", obj, metav1.ApplyOptions{FieldManager: "demo", Force: true}); err != nil {
		return fmt.Errorf("apply the SchedulingPolicy: %w", err)
	}
	start := time.Now()
	d.say("   applied SchedulingPolicy fifo (slot queueSort, %d bytes inline, sha256 %s)", len(bin), hex.EncodeToString(sum[:])[:12])
	var p *policyapi.SchedulingPolicy
	err = poll(ctx, 30*time.Second, func() bool {
		u, err := ri.Get(ctx, "fifo", metav1.GetOptions{})
		if err != nil {
			return false
		}
		if p, err = policyapi.FromUnstructured(u); err != nil {
			return false
		}
		c := policyapi.Condition(p.Status.Conditions)
		return c != nil && p.Status.ObservedGeneration == p.Generation && len(p.Status.Replicas) > 0
	})
	if err != nil {
		return fmt.Errorf("the SchedulingPolicy has no status: %w", err)
	}
	c := policyapi.Condition(p.Status.Conditions)
	d.say("   status after %.1f s: Accepted=%s reason=%s digest=%s", time.Since(start).Seconds(), c.Status, c.Reason, p.Status.ShortDigest)
	d.say("   %s", c.Message)
	for _, r := range p.Status.Replicas {
		d.say("   replica %s: leader=%v state=%s breakerOpen=%v fallbacks=%d", r.Name, r.Leader, r.State, r.BreakerOpen, r.Fallbacks)
	}
	state, err := d.sched.Get(ctx, "/policies")
	if err != nil {
		return err
	}
	var slots map[string]map[string]struct {
		Module string `json:"module"`
	}
	if err := json.Unmarshal(state, &slots); err != nil {
		return err
	}
	var lines []string
	for slot, s := range slots["wasmsched"] {
		lines = append(lines, slot+"="+s.Module)
	}
	slices.Sort(lines)
	d.say("   GET /policies: %s", strings.Join(lines, ", "))
	d.say("   (kubectl get schedulingpolicies shows the same; deleting the object gives the slot back to the configured module)")
	return nil
}

func (d *demo) summary(ctx context.Context) {
	body, err := d.sched.Get(ctx, "/metrics")
	if err != nil {
		d.say("metrics: %v", err)
		return
	}
	d.say("from http://%s/metrics:", d.sched.Addr)
	for _, line := range strings.Split(string(body), "\n") {
		for _, prefix := range []string{"scheduler_schedule_attempts_total{", "wasmsched_policy_calls_total{", "wasmsched_policy_fallbacks_total{", "wasmsched_policy_swaps_total{", "scheduler_pending_pods{", "scheduler_preemption_attempts_total", "scheduler_preemption_victims_sum"} {
			if strings.HasPrefix(line, prefix) && !strings.HasSuffix(line, " 0") {
				fmt.Fprintf(d.out, "          %s\n", line)
			}
		}
	}
}

func (d *demo) create(ctx context.Context, p *v1.Pod) error {
	if _, err := d.c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", p.Name, err)
	}
	return nil
}

func (d *demo) waitBound(ctx context.Context, name string, timeout time.Duration) (string, error) {
	var node string
	err := poll(ctx, timeout, func() bool {
		p, err := d.c.CoreV1().Pods(d.ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			node = p.Spec.NodeName
		}
		return node != ""
	})
	if err != nil {
		return "", fmt.Errorf("pod %s was not bound: %w", name, err)
	}
	return node, nil
}

func (d *demo) waitCondition(ctx context.Context, name string, timeout time.Duration) (*v1.PodCondition, error) {
	var cond *v1.PodCondition
	err := poll(ctx, timeout, func() bool {
		p, err := d.c.CoreV1().Pods(d.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for i := range p.Status.Conditions {
			if c := p.Status.Conditions[i]; c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				cond = &c
			}
		}
		return cond != nil
	})
	if err != nil {
		return nil, fmt.Errorf("pod %s got no PodScheduled=False condition: %w", name, err)
	}
	return cond, nil
}

func poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

func pod(ns, name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName: "wasmsched",
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
	}
}

func ptr[T any](v T) *T { return &v }
