package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

func member(ns, name, group, cpu string) *v1.Pod {
	p := makePod(ns, name, "wasmsched", cpu)
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

// TestGangWaitsForQuorum: with the built-in gangpreempt policy, members of
// a PodGroup with minCount 3 wait (gated, not attempted) until the third
// exists; then all three are bound together.
func TestGangWaitsForQuorum(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "8"})
	sched := startScheduler(t, env.Kubeconfig)
	if _, err := env.CreatePodGroup(ctx, ns, "g", 3); err != nil {
		t.Fatal(err)
	}
	createPod(t, c, member(ns, "m0", "g", "1"))
	createPod(t, c, member(ns, "m1", "g", "1"))
	waitFor(t, 30*time.Second, "two members gated", func() (bool, error) {
		return sched.metric(t, "scheduler_pending_pods", `queue="gated"`) == 2, nil
	})
	if !testenv.Consistently(t, time.Second, 100*time.Millisecond, func() error {
		for _, n := range []string{"m0", "m1"} {
			if p := getPod(t, c, ns, n); p.Spec.NodeName != "" {
				return fmt.Errorf("member %s bound before the group had quorum", n)
			}
		}
		return nil
	}) {
		t.FailNow()
	}
	if n := sched.metric(t, "scheduler_schedule_attempts_total"); n != 0 {
		t.Errorf("%v attempts before quorum, want 0", n)
	}
	createPod(t, c, member(ns, "m2", "g", "1"))
	for i := range 3 {
		waitBound(t, c, ns, "m"+strconv.Itoa(i), 30*time.Second)
	}
}

// TestGangAllOrNothing: a group whose minCount cannot be met binds none of
// its members, and each says why.
func TestGangAllOrNothing(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ns := env.Namespace(t)
	ctx := context.Background()
	createNode(t, c, nodeSpec{name: "n1", cpu: "4"})
	startScheduler(t, env.Kubeconfig)
	if _, err := env.CreatePodGroup(ctx, ns, "big", 3); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // 3 x 2 cpu on a 4-cpu node: two fit, the group does not
		createPod(t, c, member(ns, "b"+strconv.Itoa(i), "big", "2"))
	}
	waitFor(t, 30*time.Second, "every member reported unschedulable", func() (bool, error) {
		for i := range 3 {
			cond := scheduledCondition(getPod(t, c, ns, "b"+strconv.Itoa(i)))
			if cond == nil || cond.Reason != v1.PodReasonUnschedulable {
				return false, nil
			}
		}
		return true, nil
	})
	// As upstream: the member that does not fit reports its filters'
	// reasons, the others the unmet quorum.
	var quorum, own int
	for i := range 3 {
		p := getPod(t, c, ns, "b"+strconv.Itoa(i))
		if p.Spec.NodeName != "" {
			t.Errorf("member %s bound to %s although the group does not fit", p.Name, p.Spec.NodeName)
		}
		msg := scheduledCondition(p).Message
		switch {
		case strings.Contains(msg, "minCount (3) cannot be satisfied"):
			quorum++
		case strings.Contains(msg, "Insufficient cpu"):
			own++
		default:
			t.Errorf("member %s: message %q names neither the quorum nor a filter", p.Name, msg)
		}
	}
	if quorum != 2 || own != 1 {
		t.Errorf("%d members report the quorum and %d their own reasons, want 2 and 1", quorum, own)
	}
}
