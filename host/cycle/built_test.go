package cycle_test

import (
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
)

// TestWithBuilt checks that a profile's configuration reaches the cycle:
// DefaultPreemption's postFilter disabled turns preemption off even with
// WithPreemption, and its args choose how many candidates are dry-run.
func TestWithBuilt(t *testing.T) {
	build := func(t *testing.T, c framework.Config) framework.Built {
		t.Helper()
		b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{}), c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name          string
		config        framework.Config
		wantEvictions []string
		wantMessage   string // a part of the pod's condition message
	}{
		{
			name:          "default: the least important victim",
			wantEvictions: []string{"default/v2: " + evictMsg},
			wantMessage:   "preemption: ",
		},
		{
			name: "one candidate is enough: the first node",
			config: framework.Config{PluginConfig: []kschedv1.PluginConfig{{Name: "DefaultPreemption",
				Args: runtimeArgs(&kschedv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr(int32(0)), MinCandidateNodesAbsolute: ptr(int32(1))})}}},
			wantEvictions: []string{"default/v1: " + evictMsg},
			wantMessage:   "preemption: ",
		},
		{
			name: "postFilter disabled: no preemption",
			config: framework.Config{Plugins: &kschedv1.Plugins{PostFilter: kschedv1.PluginSet{
				Disabled: []kschedv1.Plugin{{Name: "DefaultPreemption"}}}}},
			wantMessage: "0/2 nodes are available: 2 Insufficient cpu.",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// WithParallelism(1): the deterministic dry runs, in node order.
			e := newEnv(t, cycle.WithPreemption(cycle.Preemption{}), cycle.WithParallelism(1), cycle.WithBuilt(build(t, tc.config)),
				cycle.WithPluginMetricsSample(10))
			e.addNodes(makeNode("n1", "cpu", "1").obj(), makeNode("n2", "cpu", "1").obj())
			e.addRunning(makePod("v1").priority(5).req("cpu", "1").on("n1").obj(), makePod("v2").priority(1).req("cpu", "1").on("n2").obj())
			pod := makePod("p").priority(10).req("cpu", "1").obj()
			e.addPods(pod)

			e.scheduleNext()

			if diff := cmp.Diff(tc.wantEvictions, e.api.evictions()); diff != "" {
				t.Errorf("evictions (-want, +got):\n%s", diff)
			}
			if got := e.condition(pod); !strings.Contains(got, tc.wantMessage) {
				t.Errorf("condition message %q, want it to contain %q", got, tc.wantMessage)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func runtimeArgs(o runtime.Object) runtime.RawExtension { return runtime.RawExtension{Object: o} }

// TestWithBuiltTimedProfile checks that the timed copy of the profile (the
// sampled cycles) leaves out the extension points the configuration
// disabled, as the plain one does.
func TestWithBuiltTimedProfile(t *testing.T) {
	b, err := plugins.InTree().Build(framework.NewHandle(framework.HandleOptions{}), framework.Config{Plugins: &kschedv1.Plugins{
		Score:  kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: "NodeResourcesFit"}}},
		Filter: kschedv1.PluginSet{Disabled: []kschedv1.Plugin{{Name: "NodeResourcesFit"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cycle.WithBuilt(b), cycle.WithPluginMetricsSample(100))
	e.addNodes(makeNode("n1", "cpu", "4").obj(), makeNode("n2", "cpu", "4").obj())
	e.addPods(makePod("p").req("cpu", "1").obj())

	e.scheduleNext()

	runs := e.rec.pluginRuns()
	for k, n := range map[string]int{
		"NodeResourcesFit PreFilter Success": 1,
		"NodeResourcesFit Filter Success":    0,
		"NodeResourcesFit Score Success":     0,
		"TaintToleration Score Success":      1,
	} {
		if runs[k] != n {
			t.Errorf("%s observed %d times, want %d", k, runs[k], n)
		}
	}
}
