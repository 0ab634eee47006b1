package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// electedPair starts two replicas of wasmsched with leader election in
// namespace ns (short lease timings, args added) and returns them once one
// leads.
func electedPair(t *testing.T, env *testenv.Env, ns string, args ...string) (leader, standby *proc) {
	t.Helper()
	args = append([]string{"-leader-elect", "-set", "leaderElection.namespace=" + ns,
		"-set", "leaderElection.leaseDuration=4s", "-set", "leaderElection.renewDeadline=3s", "-set", "leaderElection.retryPeriod=500ms"}, args...)
	a := startScheduler(t, env.Kubeconfig, args...)
	b := startScheduler(t, env.Kubeconfig, args...)
	waitFor(t, 60*time.Second, "a leader", func() (bool, error) {
		switch {
		case strings.Contains(a.Log(), "became leader"):
			leader, standby = a, b
		case strings.Contains(b.Log(), "became leader"):
			leader, standby = b, a
		}
		return leader != nil, nil
	})
	return leader, standby
}

// priorityGroups are groups of pods created a second apart, each in a
// higher priority class (prefix-k, value k, never preempting) than the one
// before, for node n1 with room for none: FIFO and priority order are
// opposite, and the pods bound when room opens show which order decided.
type priorityGroups struct {
	t           *testing.T
	c           kubernetes.Interface
	ns          string
	groups, per int
	group       map[string]int // pod name -> group
	bound       map[string]bool
}

// newPriorityClasses creates the priority classes prefix-0 ... prefix-(n-1),
// deleted when the test ends.
func newPriorityClasses(t *testing.T, c kubernetes.Interface, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for k := range n {
		never := v1.PreemptNever
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, k)}, Value: int32(k), PreemptionPolicy: &never}
		if _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.SchedulingV1().PriorityClasses().Delete(ctx, pc.Name, metav1.DeleteOptions{}) })
	}
}

// createPriorityGroups creates the pods (gK-I) of groups in the classes of
// newPriorityClasses(prefix).
func createPriorityGroups(t *testing.T, c kubernetes.Interface, ns, prefix string, groups, per int) *priorityGroups {
	t.Helper()
	g := &priorityGroups{t: t, c: c, ns: ns, groups: groups, per: per, group: map[string]int{}, bound: map[string]bool{}}
	for k := range groups {
		if k > 0 {
			time.Sleep(1100 * time.Millisecond) // creation times have 1 s resolution
		}
		for i := range per {
			p := makePod(ns, fmt.Sprintf("g%d-%d", k, i), "wasmsched", "")
			p.Spec.PriorityClassName = fmt.Sprintf("%s-%d", prefix, k)
			createPod(t, c, p)
			g.group[p.Name] = k
		}
	}
	return g
}

// openRoom lets total pods fit on n1, once every waiting pod has failed
// and is out of backoff, and returns the groups of the pods bound.
func (g *priorityGroups) openRoom(sched *proc, total int) []int {
	g.t.Helper()
	waitBackoffOver(g.t, sched, g.groups*g.per-len(g.bound))
	var batch []int
	for _, n := range raisePodCapacity(g.t, g.c, g.ns, "n1", total, g.bound) {
		batch = append(batch, g.group[n])
	}
	slices.Sort(batch)
	return batch
}

// all is group k's pods' groups, as openRoom returns them.
func (g *priorityGroups) all(k int) []int { return slices.Repeat([]int{k}, g.per) }
