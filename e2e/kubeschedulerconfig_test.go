package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// KubeSchedulerConfiguration files (issue 20): each scenario writes one
// kubescheduler.config.k8s.io/v1 file and runs upstream kube-scheduler
// v1.37.1 and wasmsched with it (--config), each on its own control plane,
// and asserts the same placements. The two files differ only in
// clientConnection.kubeconfig, the control plane each runs against (with
// --config, kube-scheduler ignores --kubeconfig). Pods request cpu and
// memory in the same proportion as the nodes hold them, so that
// NodeResourcesBalancedAllocation scores every node alike and the
// configured scoring decides; the doc comments do the arithmetic.
//
//	go test ./e2e -run 'TestKubeSchedulerConfig' -v

// ksConfig is a scenario's file: the header, the client and leader
// election every scenario shares, then body (profiles...).
func ksConfig(kubeconfig, body string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`, kubeconfig) + body
}

// startWithConfig runs the implementation with the scenario's file and
// waits until it is ready; it stops at the end of the test.
func (s *scheduler) startWithConfig(t *testing.T, body string) {
	t.Helper()
	text := ksConfig(s.env.Kubeconfig, body)
	if s.name == implUpstream {
		p, err := s.env.StartKubeScheduler(context.Background(), testenv.KubeSchedulerOptions{Config: text, FeatureGates: s.gates})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p.Stop(10 * time.Second)
			if t.Failed() {
				t.Logf("upstream kube-scheduler log (tail of %s):\n%s", p.LogPath(), p.Tail(200))
			}
		})
		s.upstream = p
		return
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	s.wasm = startScheduler(t, s.env.Kubeconfig, "-config", path)
}

// ksPod is a pause pod of scheduler requesting cpu and memory.
func ksPod(ns, name, scheduler, cpu, memory string, opts ...podOpt) *v1.Pod {
	p := newPod(ns, name, cpu, opts...)
	p.Spec.SchedulerName = scheduler
	p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(memory)
	return p
}

// ksNodes creates nodes of 4 cpu and 8Gi, named as given.
func ksNodes(t *testing.T, s *scheduler, names ...string) {
	t.Helper()
	for _, n := range names {
		createNode(t, s.c, nodeSpec{name: n, cpu: "4", memory: "8Gi"})
	}
}

// prebind creates a pod already bound to node, using cpu and memory there.
func prebind(t *testing.T, s *scheduler, name, node, cpu, memory string) {
	t.Helper()
	p := ksPod(s.ns, name, schedulerName, cpu, memory)
	p.Spec.NodeName = node
	createPod(t, s.c, p)
}

// place creates a pod and waits until it is bound; it returns the node.
func place(t *testing.T, s *scheduler, p *v1.Pod) string {
	t.Helper()
	createPod(t, s.c, p)
	node := waitBound(t, s.c, s.ns, p.Name, 60*time.Second)
	s.logf(t, "%s (%s) -> %s", p.Name, p.Spec.SchedulerName, node)
	return node
}

// TestKubeSchedulerConfigMostAllocated: NodeResourcesFit with
// scoringStrategy MostAllocated packs. Nodes a, b, c have 4 cpu and 8Gi;
// b already runs 2 cpu and 4Gi. Pods of 1 cpu and 2Gi, one at a time: the
// first two go to b, the fullest node that fits, until it is full; the
// third goes to a or c (a tie, which either breaks at random), and the next
// three follow it until it is full; the seventh goes to the last node.
func TestKubeSchedulerConfigMostAllocated(t *testing.T) {
	const body = `profiles:
- schedulerName: wasmsched
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
`
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		ksNodes(t, s, "a", "b", "c")
		prebind(t, s, "running", "b", "2", "4Gi")
		s.startWithConfig(t, body)
		pod := func(i int) *v1.Pod { return ksPod(s.ns, fmt.Sprintf("p%d", i), schedulerName, "1", "2Gi") }
		for i := 1; i <= 2; i++ {
			if got := place(t, s, pod(i)); got != "b" {
				t.Errorf("p%d on %s, want b: the fullest node that fits", i, got)
			}
		}
		second := place(t, s, pod(3))
		if second != "a" && second != "c" {
			t.Fatalf("p3 on %s, want a or c: b is full", second)
		}
		for i := 4; i <= 6; i++ {
			if got := place(t, s, pod(i)); got != second {
				t.Errorf("p%d on %s, want %s: the fullest node that fits", i, got, second)
			}
		}
		last := map[string]string{"a": "c", "c": "a"}[second]
		if got := place(t, s, pod(7)); got != last {
			t.Errorf("p7 on %s, want %s: the only node with room", got, last)
		}
	})
}

// TestKubeSchedulerConfigRequestedToCapacityRatio: NodeResourcesFit with
// scoringStrategy RequestedToCapacityRatio and a shape peaking at 50%
// utilization (0 -> 0, 50 -> 10, 100 -> 0; scores scale by 10). Nodes a, b,
// c have 4 cpu and 8Gi; a runs 1 cpu and 2Gi, b 3 cpu and 6Gi, c nothing.
// r1 (1 cpu, 2Gi) would bring a to 50% (100), b to 100% (0), c to 25% (50):
// a. r2 (2 cpu, 4Gi) would bring a to 100% (0), c to 50% (100), and does
// not fit b: c.
func TestKubeSchedulerConfigRequestedToCapacityRatio(t *testing.T) {
	const body = `profiles:
- schedulerName: wasmsched
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
        requestedToCapacityRatio:
          shape:
          - {utilization: 0, score: 0}
          - {utilization: 50, score: 10}
          - {utilization: 100, score: 0}
`
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		ksNodes(t, s, "a", "b", "c")
		prebind(t, s, "on-a", "a", "1", "2Gi")
		prebind(t, s, "on-b", "b", "3", "6Gi")
		s.startWithConfig(t, body)
		if got := place(t, s, ksPod(s.ns, "r1", schedulerName, "1", "2Gi")); got != "a" {
			t.Errorf("r1 on %s, want a (50%% after it: the shape's peak)", got)
		}
		if got := place(t, s, ksPod(s.ns, "r2", schedulerName, "2", "4Gi")); got != "c" {
			t.Errorf("r2 on %s, want c (50%% after it: the shape's peak)", got)
		}
	})
}

// TestKubeSchedulerConfigWeights: one profile disables
// NodeResourcesBalancedAllocation and gives TaintToleration weight 1
// (default 3); a second profile in the same file keeps the defaults. Nodes
// a and b have 4 cpu and 8Gi; a has a PreferNoSchedule taint the pods do not
// tolerate and the label pick=a the pods prefer (node affinity, weight 100);
// b runs 3.5 cpu and 7Gi. Pods of 0.5 cpu and 1Gi:
//   - p1, configured profile: a scores NodeAffinity 100x2 + LeastAllocated
//     87 = 287; b TaintToleration 100x1 + LeastAllocated 0 = 100: a.
//   - p2, default profile, after p1: a scores 200 + LeastAllocated 75 +
//     BalancedAllocation 100 = 375; b TaintToleration 100x3 +
//     BalancedAllocation 100 = 400: b.
func TestKubeSchedulerConfigWeights(t *testing.T) {
	const body = `profiles:
- schedulerName: wasmsched
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      enabled:
      - name: TaintToleration
        weight: 1
- schedulerName: wasmsched-default
`
	prefersA := func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight: 100,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{
					{Key: "pick", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}},
				}},
			}},
		}}
	}
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createNode(t, s.c, nodeSpec{name: "a", cpu: "4", memory: "8Gi", labels: map[string]string{"pick": "a"},
			taints: []v1.Taint{{Key: "soft", Value: "yes", Effect: v1.TaintEffectPreferNoSchedule}}})
		createNode(t, s.c, nodeSpec{name: "b", cpu: "4", memory: "8Gi"})
		prebind(t, s, "on-b", "b", "3500m", "7Gi")
		s.startWithConfig(t, body)
		if got := place(t, s, ksPod(s.ns, "p1", schedulerName, "500m", "1Gi", prefersA)); got != "a" {
			t.Errorf("p1 (configured profile) on %s, want a", got)
		}
		if got := place(t, s, ksPod(s.ns, "p2", "wasmsched-default", "500m", "1Gi", prefersA)); got != "b" {
			t.Errorf("p2 (default profile) on %s, want b", got)
		}
	})
}

// TestKubeSchedulerConfigTwoProfiles: two profiles of one file each
// schedule the pods naming them with their own plugins, and report as
// themselves (the Scheduled event's reportingController); a pod naming
// neither stays unscheduled. Nodes a and b are alike: pod-sched-a goes to
// either; pod-sched-b (MostAllocated) follows it; a second sched-a pod
// (LeastAllocated, the default) goes to the other, emptier node. sched-a
// carries wasmsched's own pluginConfig entry, which upstream ignores and
// wasmsched applies (its queueSort slot runs the native policy).
func TestKubeSchedulerConfigTwoProfiles(t *testing.T) {
	const body = `profiles:
- schedulerName: sched-a
  pluginConfig:
  - name: wasmsched.io/Policies
    args:
      queueSort: {module: native}
- schedulerName: sched-b
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
`
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		ksNodes(t, s, "a", "b")
		s.startWithConfig(t, body)
		var first string
		for _, sched := range []string{"sched-a", "sched-b"} {
			name := "pod-" + sched
			node := place(t, s, ksPod(s.ns, name, sched, "1", "2Gi"))
			if first == "" {
				first = node
			} else if node != first {
				t.Errorf("%s on %s, want %s: sched-b packs (MostAllocated)", name, node, first)
			}
			var controllers []string
			if !waitForSoft(30*time.Second, func() bool {
				controllers = nil
				for _, e := range eventsFor(t, s.c, s.ns, name) {
					if e.Reason == "Scheduled" {
						controllers = append(controllers, e.ReportingController)
					}
				}
				return len(controllers) > 0
			}) {
				t.Errorf("%s: no Scheduled event", name)
			} else if controllers[0] != sched {
				t.Errorf("%s: Scheduled reported by %q, want %q", name, controllers[0], sched)
			}
		}
		if got := place(t, s, ksPod(s.ns, "pod-sched-a2", "sched-a", "1", "2Gi")); got == first {
			t.Errorf("pod-sched-a2 on %s with two pods, want the empty node: sched-a spreads (LeastAllocated)", got)
		}
		if s.wasm != nil {
			page, err := s.wasm.Get(context.Background(), "/policies")
			if err != nil {
				t.Fatal(err)
			}
			var slots map[string]map[string]struct{ Module string }
			if err := json.Unmarshal(page, &slots); err != nil {
				t.Fatalf("GET /policies: %v", err)
			}
			if got := slots["sched-a"]["queueSort"].Module; got != "native:backoffpop" {
				t.Errorf("sched-a queueSort %q, want native:backoffpop (its wasmsched.io/Policies entry)", got)
			}
			if got := slots["sched-b"]["queueSort"].Module; got != "builtin:backoffpop" {
				t.Errorf("sched-b queueSort %q, want builtin:backoffpop", got)
			}
		}
		createPod(t, s.c, ksPod(s.ns, "pod-nobody", "nobody", "1", "2Gi"))
		testenv.Consistently(t, 3*time.Second, 200*time.Millisecond, func() error {
			p := getPod(t, s.c, s.ns, "pod-nobody")
			if p.Spec.NodeName != "" || scheduledCondition(p) != nil {
				return fmt.Errorf("pod-nobody was handled (node %q, %s), but no profile is named nobody", p.Spec.NodeName, conditionText(scheduledCondition(p)))
			}
			return nil
		})
	})
}

// TestKubeSchedulerConfigRefused: wasmsched refuses, at start and naming
// the field, a file with what it cannot honour: an extender, a plugin it
// does not have. It exits 1 before it contacts the cluster.
func TestKubeSchedulerConfigRefused(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"extender", `extenders:
- urlPrefix: http://extender.example:8888/scheduler
  filterVerb: filter
profiles:
- schedulerName: wasmsched
`, []string{"extenders: Forbidden", "does not call scheduler extenders", "http://extender.example:8888/scheduler"}},
		{"unknown plugin", `profiles:
- schedulerName: wasmsched
  plugins:
    filter:
      enabled:
      - name: Coscheduling
`, []string{"profiles[0]", "Coscheduling"}},
	}
	bin := schedulerBinary(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(ksConfig(filepath.Join(dir, "no-kubeconfig"), tc.body)), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", "-config", path)
			cmd.Env = []string{"HOME=" + dir}
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("wasmsched run: %v, want exit status 1; output:\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			t.Logf("refused: %s", strings.TrimSpace(string(out)))
		})
	}
}
