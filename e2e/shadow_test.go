package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/yaml"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// TestShadowPolicies runs candidate policies as Shadows beside the ones
// serving their slots, on two replicas with leader election.
//
//   - queueSort: the built-in priority sort serves and FIFO shadows it.
//     Three groups of ten pods are created a second apart in rising
//     priority, on a node with room for none; room for ten binds the
//     youngest, highest-priority group, exactly as without the shadow,
//     while the leader's entry counts the pops FIFO would have made
//     otherwise, with samples naming them, and the standby's entry counts
//     none. Promotion (spec.mode: Active) makes FIFO decide: the next ten
//     are the oldest group.
//   - queueingHint: lazyhint (fithint that skips node additions) shadows the
//     built-in hints; the last group waits for room and a new node brings
//     it: the shadow would have delayed those pods.
//   - queueingHint and preEnqueue shadows that spin past their deadline
//     change nothing: five more pods bind, and both count errors; the
//     serving slots count no fallback.
func TestShadowPolicies(t *testing.T) {
	t.Setenv("POD_NAME", "") // replicas named host_pid (see everyReplica)
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	installPolicyAPI(t, env)
	ns := env.Namespace(t)
	ri := env.Dynamic().Resource(policyapi.GVR)

	createNode(t, c, nodeSpec{name: "n1", cpu: "64", pods: "0"})
	const groups, per = 3, 10
	newPriorityClasses(t, c, "shadow", groups)
	leader, standby := electedPair(t, env, ns, "-set", "queue.initialBackoff=1ms", "-set", "queue.maxBackoff=1ms", "-set", "policyAPI.statusInterval=1s")
	procs := []*proc{leader, standby}
	apply := func(args ...string) {
		t.Helper()
		if _, err := ri.Create(ctx, manifest(t, args...), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create the SchedulingPolicy of %v: %v", args, err)
		}
	}
	shadowing := func(name string) *policyapi.SchedulingPolicy {
		t.Helper()
		return waitStatus(t, env, name, "Shadowing on both replicas", func(p *policyapi.SchedulingPolicy) bool {
			s, _ := accepted(p)
			return s == metav1.ConditionTrue && everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool {
				return r.State == policyapi.StateShadowing && r.Shadow != nil
			})
		})
	}

	fifoPath := filepath.Join("..", "guest-sdk", "examples", "fifosort", "fifosort.wasm")
	apply(fifoPath, "--slot", "queueSort", "--mode", "Shadow", "--sample-rate", "1", "--name", "fifo")
	st := shadowing("fifo")
	if msg := policyapi.Condition(st.Status.Conditions).Message; !strings.Contains(msg, "shadows profile wasmsched slot queueSort") ||
		!strings.Contains(msg, "deciding nothing") {
		t.Errorf("condition message %q", msg)
	}
	for _, pr := range procs {
		if m, _, held := pr.queueSort(t); held != "" || !strings.HasPrefix(m, "builtin:") {
			t.Errorf("replica %d: queueSort serves %s held by %q with a Shadow; want the built-in, not held", pr.Pid(), m, held)
		}
	}

	g := createPriorityGroups(t, c, ns, "shadow", groups, per)
	group := g.group
	openRoom := func(total int) []int { return g.openRoom(leader, total) }
	wantGroup := g.all
	if got := openRoom(per); !slices.Equal(got, wantGroup(2)) {
		t.Errorf("with a FIFO Shadow the leader bound pods of groups %v, want group 2: the serving priority sort decides", got)
	}
	st = waitStatus(t, env, "fifo", "FIFO's disagreements in the leader's entry", func(p *policyapi.SchedulingPolicy) bool {
		return everyReplica(p, []*proc{leader}, func(r policyapi.ReplicaStatus) bool {
			return r.Shadow != nil && r.Shadow.Disagreements > 0 && len(r.Shadow.Samples) > 0
		}) && p.Status.Agreement != ""
	})
	for _, r := range st.Status.Replicas {
		sh := r.Shadow
		if !r.Leader {
			if sh.Decisions != 0 {
				t.Errorf("the standby %s evaluated %d decisions: it pops nothing", r.Name, sh.Decisions)
			}
			continue
		}
		if sh.Kinds["orderInversions"] < sh.Disagreements || sh.Errors != 0 || sh.Since.IsZero() {
			t.Errorf("leader's shadow status %+v", sh)
		}
		for _, s := range sh.Samples {
			// A pop FIFO disputes is of a younger pod than the one FIFO
			// would have popped: a higher group ahead of a lower one.
			popped, first := strings.TrimPrefix(s.Pod, ns+"/"), strings.TrimPrefix(s.Active, "popped ahead of "+ns+"/")
			if s.Event != "Pop" || s.Kind != "orderInversions" || !strings.HasPrefix(s.Active, "popped ahead of "+ns+"/") {
				t.Errorf("sample %+v", s)
				continue
			}
			if group[popped] <= group[first] {
				t.Errorf("sample %+v: FIFO disputes %s (group %d) popped ahead of %s (group %d)", s, popped, group[popped], first, group[first])
			}
		}
	}
	t.Logf("FIFO shadow on the leader: agreement %s", st.Status.Agreement)

	// The samples run again offline: the built-in priority sort passes each
	// (its answer is the case's want), FIFO answers otherwise.
	obj, err := ri.Get(ctx, "fifo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := os.WriteFile(dump, y, 0o644); err != nil {
		t.Fatal(err)
	}
	diff := exec.Command(schedulerBinary(t), "policy", "diff", filepath.Join("..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm"), fifoPath, "--cases", dump)
	out, err := diff.CombinedOutput()
	if code := diff.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "DIFF  ") || strings.Contains(string(out), "SAME  ") {
		t.Errorf("policy diff prioritysort fifosort on FIFO's samples: exit %d (%v), want 1 with every case differing:\n%s", code, err, out)
	}

	// Promotion: FIFO decides.
	promote := getPolicy(t, env, "fifo")
	promote.Spec.Mode, promote.Spec.Shadow = policyapi.ModeActive, nil
	u, err := policyapi.ToUnstructured(promote)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("promote: %v", err)
	}
	st = waitStatus(t, env, "fifo", "Serving on both replicas after promotion", func(p *policyapi.SchedulingPolicy) bool {
		return everyReplica(p, procs, func(r policyapi.ReplicaStatus) bool { return r.State == policyapi.StateServing && r.Shadow == nil })
	})
	if st.Status.Agreement != "" {
		t.Errorf("a promoted object still reports an agreement %q", st.Status.Agreement)
	}
	if got := openRoom(2 * per); !slices.Equal(got, wantGroup(0)) {
		t.Errorf("after promotion the leader bound pods of groups %v, want the oldest group 0 (FIFO)", got)
	}

	// A hint shadow that would have left the last group waiting for a new
	// node until the flush.
	apply(filepath.Join("..", "guest-sdk", "examples", "lazyhint", "lazyhint.wasm"), "--slot", "queueingHint", "--mode", "Shadow", "--name", "lazy")
	shadowing("lazy")
	waitBackoffOver(t, leader, per)
	createNode(t, c, nodeSpec{name: "n2", cpu: "64", pods: "10"})
	for i := range per {
		waitBound(t, c, ns, fmt.Sprintf("g1-%d", i), 60*time.Second)
	}
	st = waitStatus(t, env, "lazy", "wouldHaveDelayed in the leader's entry", func(p *policyapi.SchedulingPolicy) bool {
		return everyReplica(p, []*proc{leader}, func(r policyapi.ReplicaStatus) bool {
			return r.Shadow != nil && r.Shadow.Kinds["wouldHaveDelayed"] > 0
		})
	})
	for _, r := range st.Status.Replicas {
		if !r.Leader {
			continue
		}
		found := false
		for _, s := range r.Shadow.Samples {
			if s.Kind == "wouldHaveDelayed" && s.Event == "NodeAdd" && strings.HasPrefix(s.Pod, ns+"/g1-") && s.Shadow == "skip" {
				found = true
			}
		}
		if !found {
			t.Errorf("no wouldHaveDelayed sample for a g1 pod on NodeAdd: %+v", r.Shadow.Samples)
		}
	}

	// Faulty shadows change nothing and count errors.
	if err := ri.Delete(ctx, "lazy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join("..", "host", "policy", "wasmslot", "testdata", "faults")
	waitFor(t, 30*time.Second, "the lazy shadow to end", func() (bool, error) {
		return strings.Contains(leader.Log(), "shadow ended"), nil
	})
	// The slow fixtures pass the smoke test and spin past the deadline on
	// a pod of odd priority (group 1's): every such call fails.
	apply(filepath.Join(fixtures, "queueingHint-slow.wasm"), "--slot", "queueingHint", "--mode", "Shadow", "--name", "spin-hint")
	apply(filepath.Join(fixtures, "preEnqueue-slow.wasm"), "--slot", "preEnqueue", "--mode", "Shadow", "--name", "spin-gate")
	shadowing("spin-hint")
	shadowing("spin-gate")
	for i := range 5 {
		p := makePod(ns, fmt.Sprintf("late-%d", i), "wasmsched", "")
		p.Spec.PriorityClassName = "shadow-1"
		createPod(t, c, p)
	}
	waitBackoffOver(t, leader, 5)
	n1, err := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	room := resource.MustParse(fmt.Sprint(2*per + 5))
	n1.Status.Allocatable[v1.ResourcePods], n1.Status.Capacity[v1.ResourcePods] = room, room
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		waitBound(t, c, ns, fmt.Sprintf("late-%d", i), 60*time.Second)
	}
	for _, name := range []string{"spin-hint", "spin-gate"} {
		waitStatus(t, env, name, "errors in the leader's entry", func(p *policyapi.SchedulingPolicy) bool {
			return everyReplica(p, []*proc{leader}, func(r policyapi.ReplicaStatus) bool {
				return r.Shadow != nil && r.Shadow.Errors > 0
			})
		})
	}
	scheduledOnce(t, c, ns, groups*per+5, 60*time.Second)
	if got := leader.metric(t, "wasmsched_shadow_decisions_total", `slot="preEnqueue"`, `policy="spin-gate"`, `result="error"`); got == 0 {
		t.Error("wasmsched_shadow_decisions_total{policy=\"spin-gate\",result=\"error\"} = 0")
	}
	if got := leader.metric(t, "wasmsched_policy_fallbacks_total", `slot="preEnqueue"`); got != 0 {
		t.Errorf("wasmsched_policy_fallbacks_total{slot=\"preEnqueue\"} = %v: the shadow's faults reached the serving slot", got)
	}
}
