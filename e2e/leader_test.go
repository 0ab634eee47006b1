package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestLeaderElection: of two replicas with --leader-elect, one schedules
// and the other makes no attempt at all; when the leader stops, the other
// takes the Lease over and schedules what follows.
func TestLeaderElection(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	createNode(t, c, nodeSpec{name: "n1", cpu: "32"})
	// Short lease timings keep the takeover quick; they are validated like
	// any configuration.
	lease := []string{"-leader-elect", "-set", "leaderElection.namespace=" + ns,
		"-set", "leaderElection.leaseDuration=4s", "-set", "leaderElection.renewDeadline=3s", "-set", "leaderElection.retryPeriod=500ms"}
	a := startScheduler(t, env.Kubeconfig, lease...)
	b := startScheduler(t, env.Kubeconfig, lease...)

	leaderOf := func() (*proc, *proc) {
		var leader, follower *proc
		waitFor(t, 30*time.Second, "a leader", func() (bool, error) {
			switch {
			case strings.Contains(a.Log(), "became leader"):
				leader, follower = a, b
			case strings.Contains(b.Log(), "became leader"):
				leader, follower = b, a
			}
			return leader != nil, nil
		})
		return leader, follower
	}
	leader, follower := leaderOf()

	for i := range 20 {
		createPod(t, c, makePod(ns, "first-"+strconv.Itoa(i), "wasmsched", "100m"))
	}
	for i := range 20 {
		waitBound(t, c, ns, "first-"+strconv.Itoa(i), 30*time.Second)
	}
	leader.waitMetric(t, "scheduler_schedule_attempts_total", 20, `result="scheduled"`)
	if n := follower.metric(t, "scheduler_schedule_attempts_total"); n != 0 {
		t.Errorf("follower made %v scheduling attempts while not leading, want 0", n)
	}
	if strings.Contains(follower.Log(), "became leader") {
		t.Fatalf("both replicas became leader")
	}

	leader.stop() // releases the Lease on the way out
	waitFor(t, 30*time.Second, "the follower to take the lease over", func() (bool, error) {
		return strings.Contains(follower.Log(), "became leader"), nil
	})
	for i := range 10 {
		createPod(t, c, makePod(ns, "second-"+strconv.Itoa(i), "wasmsched", "100m"))
	}
	for i := range 10 {
		waitBound(t, c, ns, "second-"+strconv.Itoa(i), 30*time.Second)
	}
	follower.waitMetric(t, "scheduler_schedule_attempts_total", 10, `result="scheduled"`)
	l, err := c.CoordinationV1().Leases(ns).Get(context.Background(), "wasmsched", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the lease: %v", err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		t.Errorf("lease has no holder after the takeover")
	}
}
