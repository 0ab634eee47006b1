// Package e2e tests wasmsched as a cluster sees it: the wasmsched binary
// against a real kube-apiserver and etcd (e2e/testenv), observed only
// through the Kubernetes API and the scheduler's /metrics.
package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestBindsRespectingFilters: pods of ours are bound where resources,
// selectors, affinity and taints allow; a pod that fits nowhere gets the
// condition and the event; a pod of another scheduler is left alone.
func TestBindsRespectingFilters(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "small", cpu: "1", labels: map[string]string{"disk": "hdd"}})
	createNode(t, c, nodeSpec{name: "big", cpu: "8", labels: map[string]string{"disk": "ssd"}})
	createNode(t, c, nodeSpec{name: "gpu", cpu: "8", taints: []v1.Taint{{Key: "gpu", Value: "true", Effect: v1.TaintEffectNoSchedule}}})
	createNode(t, c, nodeSpec{name: "cordoned", cpu: "64", unsch: true})
	startScheduler(t, env.Kubeconfig)

	// Needs 2 cpu: only big and gpu have it, and gpu's taint is not tolerated.
	createPod(t, c, makePod(ns, "needs-cpu", "wasmsched", "2"))
	// nodeSelector disk=hdd: only small.
	sel := makePod(ns, "hdd", "wasmsched", "500m")
	sel.Spec.NodeSelector = map[string]string{"disk": "hdd"}
	createPod(t, c, sel)
	// Tolerates gpu and requires it by affinity.
	tol := makePod(ns, "gpu-job", "wasmsched", "1")
	tol.Spec.Tolerations = []v1.Toleration{{Key: "gpu", Operator: v1.TolerationOpEqual, Value: "true", Effect: v1.TaintEffectNoSchedule}}
	tol.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{"gpu"}}},
		}}},
	}}
	createPod(t, c, tol)
	// 20 cpu: nowhere (cordoned has it, but is unschedulable).
	createPod(t, c, makePod(ns, "too-big", "wasmsched", "20"))
	// Another scheduler's pod.
	createPod(t, c, makePod(ns, "theirs", "other-scheduler", "100m"))

	for name, want := range map[string]string{"needs-cpu": "big", "hdd": "small", "gpu-job": "gpu"} {
		if got := waitBound(t, c, ns, name, 30*time.Second); got != want {
			t.Errorf("pod %s bound to %s, want %s", name, got, want)
		}
	}

	var cond *v1.PodCondition
	waitFor(t, 30*time.Second, "too-big's PodScheduled condition", func() (bool, error) {
		cond = scheduledCondition(getPod(t, c, ns, "too-big"))
		return cond != nil, nil
	})
	if cond.Status != v1.ConditionFalse || cond.Reason != v1.PodReasonUnschedulable {
		t.Errorf("too-big: condition %s=%s reason %q, want False/Unschedulable", cond.Type, cond.Status, cond.Reason)
	}
	// Upstream's message: every node counted under the first filter that
	// rejected it (gpu's taint comes before its resources).
	for _, part := range []string{"0/4 nodes are available", "2 Insufficient cpu", "1 node(s) had untolerated taint(s)", "1 node(s) were unschedulable"} {
		if !strings.Contains(cond.Message, part) {
			t.Errorf("too-big: condition message %q lacks %q", cond.Message, part)
		}
	}
	waitFor(t, 30*time.Second, "too-big's FailedScheduling event", func() (bool, error) {
		for _, e := range eventsFor(t, c, ns, "too-big") {
			if e.Reason == "FailedScheduling" && e.Type == v1.EventTypeWarning && strings.Contains(e.Note, "0/4 nodes are available") {
				return true, nil
			}
		}
		return false, nil
	})

	// The scheduler has handled too-big; it must not (wrongly) touch the
	// other scheduler's pod.
	testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
		theirs := getPod(t, c, ns, "theirs")
		if theirs.Spec.NodeName != "" || scheduledCondition(theirs) != nil {
			return fmt.Errorf("pod of another scheduler was touched: nodeName %q, conditions %+v", theirs.Spec.NodeName, theirs.Status.Conditions)
		}
		if evs := eventsFor(t, c, ns, "theirs"); len(evs) != 0 {
			return fmt.Errorf("pod of another scheduler got events: %+v", evs)
		}
		return nil
	})
}

// TestBoundSoonAfterFittingNodeAdded: an unschedulable pod is requeued by
// the node-add event (the reference QueueingHint policy), not by the
// 5-minute leftover flush.
func TestBoundSoonAfterFittingNodeAdded(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "plain", cpu: "4"})
	sched := startScheduler(t, env.Kubeconfig)

	p := makePod(ns, "wants-fast", "wasmsched", "1")
	p.Spec.NodeSelector = map[string]string{"disk": "nvme"}
	createPod(t, c, p)
	waitFor(t, 30*time.Second, "wants-fast to be reported unschedulable", func() (bool, error) {
		cond := scheduledCondition(getPod(t, c, ns, "wants-fast"))
		return cond != nil && cond.Reason == v1.PodReasonUnschedulable, nil
	})
	// A node that does not match must not help; one that matches must.
	createNode(t, c, nodeSpec{name: "other", cpu: "4", labels: map[string]string{"disk": "hdd"}})
	added := time.Now()
	createNode(t, c, nodeSpec{name: "fast", cpu: "4", labels: map[string]string{"disk": "nvme"}})
	if got := waitBound(t, c, ns, "wants-fast", 30*time.Second); got != "fast" {
		t.Fatalf("bound to %s, want fast", got)
	}
	t.Logf("bound %v after the fitting node was added", time.Since(added).Round(time.Millisecond))
	sched.waitMetric(t, "scheduler_schedule_attempts_total", 1, `result="scheduled"`)
	if n := sched.metric(t, "scheduler_schedule_attempts_total", `result="unschedulable"`); n < 1 {
		t.Errorf("scheduler_schedule_attempts_total{result=unschedulable} = %v, want >= 1", n)
	}
}

// TestManyPodsBoundOnce: a burst of pods on a few nodes, all bound exactly
// once within capacity.
func TestManyPodsBoundOnce(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		createNode(t, c, nodeSpec{name: n, cpu: "10", pods: "30"})
	}
	startScheduler(t, env.Kubeconfig)
	const pods = 120 // 4 nodes x 30 pods: every pod fits, exactly
	for i := range pods {
		createPod(t, c, makePod(ns, "p-"+strconv.Itoa(i), "wasmsched", "100m"))
	}
	perNode := map[string]int{}
	waitFor(t, 60*time.Second, "all pods to be bound", func() (bool, error) {
		list, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		clear(perNode)
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
				perNode[p.Spec.NodeName]++
			}
		}
		return bound == pods, nil
	})
	for n, k := range perNode {
		if k > 30 {
			t.Errorf("node %s holds %d pods, over its 30-pod capacity", n, k)
		}
	}
	// One Scheduled event per pod: bound once each. Events are sent
	// asynchronously, so wait until every pod has one, then check none has two.
	scheduledOnce(t, c, ns, pods, 30*time.Second)
}
