package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reference scenarios: each Test* below, in this file, preemption_test.go
// and gang_test.go (TestGangQuorum, TestGangMemberMismatchReference), runs
// as subtests "upstream" (kube-scheduler v1.37.1, startUpstream) and
// "wasmsched" (reference_helpers_test.go's forEachScheduler), each on a
// control plane of its own with KWOK fake nodes, and asserts the same behaviour through the API. The
// upstream subtests validate the scenarios; where wasmsched differs, it is
// wrong unless a KEP says otherwise.
//
//	go test ./e2e -run 'TestReference|TestPreemption|TestWorkloadPreemption|TestGangQuorum|TestGangMemberMismatchReference' -v -timeout 30m
//	WASMSCHED_E2E_ONLY=upstream go test ./e2e -run ... # one implementation only

// TestReferenceBindsAPod: the runner itself — either implementation binds a
// plain pod on a KWOK node and KWOK runs it.
func TestReferenceBindsAPod(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		nodes := fakeNodes(t, s, 1, "4", nil)
		s.start(t)
		t0 := time.Now()
		submit(t, s.c, newPod(s.ns, "plain", "1"))
		if node := waitBound(t, s.c, s.ns, "plain", 60*time.Second); node != nodes[0] {
			t.Errorf("bound to %q, want %q", node, nodes[0])
		}
		s.logf(t, "plain pod bound after %v", time.Since(t0).Round(time.Millisecond))
	})
}

// TestReferenceFinishedPodFreesItsNode: a pod that succeeds frees its node.
// Both implementations watch only pods that have not finished, so the
// finished pod leaves the cache (a pod deletion to the queue) and the pod
// waiting for its room is bound by that event, not by the flush of
// unschedulable pods.
func TestReferenceFinishedPodFreesItsNode(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		nodes := fakeNodes(t, s, 1, "2", nil)
		runOn(t, s.c, newPod(s.ns, "job", "2"), nodes[0], time.Now())
		s.start(t)
		submit(t, s.c, newPod(s.ns, "waiting", "2"))
		waitCondition(t, s, "waiting", v1.PodReasonUnschedulable, 60*time.Second)

		patch := []byte(`{"status":{"phase":"Succeeded"}}`)
		if _, err := s.c.CoreV1().Pods(s.ns).Patch(context.Background(), "job", types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("mark pod job Succeeded: %v", err)
		}
		// Well within the suite's 20 s in unschedulable pods, so only the
		// event can have moved it (startScheduler also fails a flush rescue).
		if node := waitBound(t, s.c, s.ns, "waiting", 15*time.Second); node != nodes[0] {
			t.Errorf("pod waiting bound to %q, want %q", node, nodes[0])
		}
		s.logf(t, "pod waiting bound to %s once pod job succeeded", nodes[0])
	})
}
