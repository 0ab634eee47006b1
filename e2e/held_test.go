package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The holdlabel example's label and plugin name
// (guest-sdk/examples/holdlabel/logic).
const (
	holdLabel  = "example.wasmsched.io/hold"
	holdPlugin = "HoldLabel"
	gangPlugin = "GangScheduling"
	heldPods   = "wasmsched_preenqueue_held_pods"
)

// TestHeldPodsSayWhy (issue 29): a pod held before the queue says why in
// its PodScheduled condition: two members of a gang below its minCount,
// held by the built-in gangpreempt PreEnqueue policy, and a pod held by
// guest-sdk/examples/holdlabel (the PreEnqueue module of a second
// profile) carry PodScheduled=False with the holder as reason and its
// message within a few seconds; wasmsched_preenqueue_held_pods counts
// them. The condition is written once per reason: the unschedulable flush,
// which runs PreEnqueue again on every held pod, rewrites nothing. When
// they enter the queue they lose it: the labelled pod as soon as the label
// is gone (the QueueingHint slot registers nothing for holdlabel, so every
// event runs its PreEnqueue again, as upstream does for a plugin without
// EnqueueExtensions: the pod's own update brings it to an attempt that
// finds no room and says Unschedulable; a node added then binds it), the
// gang when its third member arrives.
func TestHeldPodsSayWhy(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "8"})
	module, err := filepath.Abs(filepath.Join("..", "guest-sdk", "examples", "holdlabel", "holdlabel.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	const labelProfile = "wasmsched-holdlabel"
	sched := startScheduler(t, env.Kubeconfig, "-set", "profiles."+labelProfile+".policies.preEnqueue.module="+module)

	if _, err := env.CreatePodGroup(ctx, ns, "trio", 3); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"g0", "g1"} {
		createPod(t, c, member(ns, n, "trio", "1"))
	}
	labelled := makePod(ns, "labelled", labelProfile, "100") // fits no node until one is added
	labelled.Labels = map[string]string{holdLabel: "yes"}
	created := time.Now()
	createPod(t, c, labelled)

	gangMsg := fmt.Sprintf("waiting for pod group %q to reach its minCount: 2 of 3 pods exist", ns+"/trio")
	labelMsg := "pod has label " + holdLabel + "=yes; remove it to schedule"
	want := map[string][2]string{"g0": {gangPlugin, gangMsg}, "g1": {gangPlugin, gangMsg}, "labelled": {holdPlugin, labelMsg}}
	waitFor(t, 10*time.Second, "the held pods to say why", func() (bool, error) {
		for name, w := range want {
			c := scheduledCondition(getPod(t, env.Client, ns, name))
			if c == nil || c.Status != v1.ConditionFalse || c.Reason != w[0] || c.Message != w[1] {
				return false, nil
			}
		}
		return true, nil
	})
	t.Logf("held pods say why %v after they were created", time.Since(created).Round(time.Millisecond))
	sched.waitMetric(t, heldPods, 2, `profile="wasmsched"`, `holder="GangScheduling"`)
	sched.waitMetric(t, heldPods, 1, `profile="`+labelProfile+`"`, `holder="HoldLabel"`)

	// The label goes: the pod's own update runs holdlabel's PreEnqueue
	// again at once (no waiting for the flush of unschedulable pods).
	rv := map[string]string{}
	for _, n := range []string{"g0", "g1"} {
		rv[n] = getPod(t, c, ns, n).ResourceVersion
	}
	unlabel(t, c, ns, "labelled")
	waitFor(t, 10*time.Second, "the labelled pod to lose its held condition", func() (bool, error) {
		c := scheduledCondition(getPod(t, env.Client, ns, "labelled"))
		return c == nil || c.Reason != holdPlugin, nil
	})
	t.Logf("labelled pod: %s", conditionText(scheduledCondition(getPod(t, c, ns, "labelled"))))
	sched.waitMetric(t, heldPods, 0, `holder="HoldLabel"`)
	// The flush of unschedulable pods (every 30 s, past
	// queue.maxInUnschedulable) runs PreEnqueue again on the gang's
	// members: same answer, so their status is not written again.
	calls := sched.metric(t, "wasmsched_policy_calls_total", `slot="preEnqueue"`)
	waitFor(t, 70*time.Second, "the flush to ask about the gang's members", func() (bool, error) {
		return sched.metric(t, "wasmsched_policy_calls_total", `slot="preEnqueue"`)-calls >= 2, nil
	})
	for _, n := range []string{"g0", "g1"} {
		if got := getPod(t, c, ns, n).ResourceVersion; got != rv[n] {
			t.Errorf("%s was written again (resourceVersion %s -> %s) though its holder and reason did not change: %s",
				n, rv[n], got, conditionText(scheduledCondition(getPod(t, c, ns, n))))
		}
	}
	sched.waitMetric(t, heldPods, 2, `holder="GangScheduling"`)

	// Room for the labelled pod: it binds, on the node's event.
	createNode(t, c, nodeSpec{name: "big", cpu: "128"})
	if got := waitBound(t, c, ns, "labelled", 30*time.Second); got != "big" {
		t.Errorf("labelled bound to %s, want big", got)
	}

	// The third member: the gang enters the queue and binds.
	createPod(t, c, member(ns, "g2", "trio", "1"))
	for _, n := range []string{"g0", "g1", "g2"} {
		waitBound(t, c, ns, n, 30*time.Second)
	}
	sched.waitMetric(t, heldPods, 0, `holder="GangScheduling"`)
	for _, n := range []string{"labelled", "g0", "g1", "g2"} {
		if c := scheduledCondition(getPod(t, c, ns, n)); c == nil || c.Status != v1.ConditionTrue {
			t.Errorf("%s bound: %s, want PodScheduled=True", n, conditionText(c))
		}
	}
	if t.Failed() {
		return
	}
	// Nothing is left held in the log either: the writer never gave up.
	if log := sched.Log(); strings.Contains(log, "write why a held pod waits") {
		t.Errorf("the held-pod writer failed:\n%s", grepLines(log, "write why a held pod waits"))
	}
}

// unlabel removes the hold label from a pod.
func unlabel(t *testing.T, c kubernetes.Interface, ns, name string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{holdLabel: nil}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Patch(context.Background(), name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove label %s from %s/%s: %v", holdLabel, ns, name, err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
