package e2e

import (
	"testing"
	"time"
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
