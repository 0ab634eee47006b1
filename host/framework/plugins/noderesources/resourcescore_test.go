package noderesources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// The expectations below are upstream v1.37.1's score test cases
// (noderesources/least_allocated_test.go, most_allocated_test.go,
// requested_to_capacity_ratio_test.go, balanced_allocation_test.go), each
// run through the plugin's row (its Args and New, as Build runs them) with
// the strategy as NodeResourcesFit's args, so that defaulting and the fast
// path for the default are covered too. Quantities
// are upstream's ("4000" cpu is 4000 cores).

const extendedRes = "abc.com/xyz"

var (
	cpuMem              = []kschedv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	extendedResourceSet = []kschedv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: extendedRes, Weight: 1}}
	// upstream's shape in TestRequestedToCapacityRatioScoringStrategy
	leastShape = []kschedv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	// upstream's shape in TestResourceBinPacking*
	packShape = []kschedv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 1}}
)

type scoreCase struct {
	name  string
	pod   *ft.PodBuilder
	nodes []*ft.NodeBuilder
	want  []int64
}

// node is upstream's st.MakeNode().Capacity(...).
func node(name string, alloc ...string) *ft.NodeBuilder { return ft.MakeNode(name, alloc...) }

// builtPlugin builds the plugin named name from its row with one
// pluginConfig entry's args, as Build does.
func builtPlugin(t *testing.T, name string, args runtime.Object) framework.Plugin {
	t.Helper()
	row := FitRow()
	if name == BalancedAllocationName {
		row = BalancedAllocationRow()
	}
	a, err := row.Args(&kschedv1.PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}}, field.NewPath("args"))
	if err != nil {
		t.Fatalf("args: %v", err)
	}
	pl, err := row.New(framework.NewHandle(framework.HandleOptions{}), a)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl
}

// rawScores runs pl's PreScore and Score (no normalisation) for pod on nodes.
func rawScores(t *testing.T, pl framework.Plugin, pod *ft.PodBuilder, nodes []*ft.NodeBuilder) []int64 {
	t.Helper()
	nis := ft.Infos(nodes...)
	sc, st := pl.(framework.PreScorePlugin).PreScore(pod.Info(), nis, cache.NewSnapshot(nis...))
	if st != nil {
		t.Fatalf("PreScore: %v", st.Message())
	}
	got := make([]int64, len(nis))
	if sc != nil {
		sc.Score(nis, got)
	}
	return got
}

func runFitCases(t *testing.T, strategy kschedv1.ScoringStrategyType, shape []kschedv1.UtilizationShapePoint,
	resources []kschedv1.ResourceSpec, cases []scoreCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &kschedv1.ScoringStrategy{Type: strategy, Resources: resources}
			if shape != nil {
				s.RequestedToCapacityRatio = &kschedv1.RequestedToCapacityRatioParam{Shape: shape}
			}
			pl := builtPlugin(t, "NodeResourcesFit", &kschedv1.NodeResourcesFitArgs{ScoringStrategy: s})
			if diff := cmp.Diff(tc.want, rawScores(t, pl, tc.pod, tc.nodes)); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// Pods as upstream's tests request them.
func reqPod() *ft.PodBuilder {
	return ft.MakePod().Req("cpu", "1000", "memory", "2000").Req("cpu", "2000", "memory", "3000")
}

func TestLeastAllocatedStrategy(t *testing.T) {
	cases := []scoreCase{
		{"nothing scheduled, nothing requested", ft.MakePod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			[]int64{100, 100}},
		{"nothing scheduled, resources requested, differently sized nodes", reqPod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			[]int64{37, 50}},
		{"no resources requested, pods scheduled", ft.MakePod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "4000", "memory", "10000").With(ft.MakePod(), ft.MakePod()),
				node("node2", "cpu", "4000", "memory", "10000").With(ft.MakePod(), ft.MakePod())},
			[]int64{100, 100}},
		{"no resources requested, pods scheduled with resources", ft.MakePod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0"), ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0"), ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{70, 57}},
		{"resources requested, pods scheduled with resources", reqPod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{57, 45}},
		{"resources requested, pods scheduled with resources, differently sized nodes", reqPod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "10000", "memory", "50000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{57, 60}},
		{"requested resources exceed node capacity", ft.MakePod().Req("cpu", "3000", "memory", "0"),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "4000", "memory", "10000").With(ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "4000", "memory", "10000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{50, 25}},
		{"zero node resources, pods scheduled with resources", ft.MakePod(),
			[]*ft.NodeBuilder{
				node("node1").With(ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{0, 0}},
	}
	runFitCases(t, kschedv1.LeastAllocated, nil, cpuMem, cases)
	t.Run("weights", func(t *testing.T) {
		runFitCases(t, kschedv1.LeastAllocated, nil, []kschedv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}}, []scoreCase{
			{"nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes", reqPod(),
				[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
				[]int64{41, 50}},
		})
	})
	t.Run("extended", func(t *testing.T) {
		runFitCases(t, kschedv1.LeastAllocated, nil, extendedResourceSet, []scoreCase{
			{"bypass extended resource if the pod does not request", reqPod(),
				[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
				[]int64{50, 50}},
			{"honor extended resource if the pod requests", ft.MakePod().Req("cpu", "3000", "memory", "5000", extendedRes, "2"),
				[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000", extendedRes, "4"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "10")},
				[]int64{50, 60}},
		})
		runFitCases(t, kschedv1.LeastAllocated, nil, []kschedv1.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}, []scoreCase{
			{"if the node doesn't have a resource", ft.MakePod().Req("cpu", "3000", "memory", "4000"),
				[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
				[]int64{55, 55}},
		})
	})
}

func TestMostAllocatedStrategy(t *testing.T) {
	runFitCases(t, kschedv1.MostAllocated, nil, cpuMem, []scoreCase{
		{"nothing scheduled, nothing requested", ft.MakePod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "4000", "memory", "10000")},
			[]int64{0, 0}},
		{"nothing scheduled, resources requested, differently sized nodes", reqPod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			[]int64{62, 50}},
		{"no resources requested, pods scheduled with resources", ft.MakePod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0"), ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0"), ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{30, 42}},
		{"resources requested, pods scheduled with resources", reqPod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "0")),
				node("node2", "cpu", "10000", "memory", "20000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{42, 55}},
		{"resources requested equal node capacity", ft.MakePod().Req("cpu", "2000", "memory", "4000").Req("cpu", "3000", "memory", "5000"),
			[]*ft.NodeBuilder{node("node1", "cpu", "5000", "memory", "10000"), node("node2", "cpu", "10000", "memory", "9000")},
			[]int64{95, 75}},
		{"no resources requested, pods scheduled, nonzero request for resource", ft.MakePod().Req(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "250m", "memory", "1000Mi").With(ft.MakePod().Req(), ft.MakePod().Req()),
				node("node2", "cpu", "250m", "memory", "1000Mi")},
			[]int64{80, 30}},
	})
	runFitCases(t, kschedv1.MostAllocated, nil, []kschedv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}}, []scoreCase{
		{"nothing scheduled, resources requested, differently sized nodes, weights", reqPod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000")},
			[]int64{58, 50}},
	})
	runFitCases(t, kschedv1.MostAllocated, nil, extendedResourceSet, []scoreCase{
		{"bypass extended resource if the pod does not request", reqPod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			[]int64{50, 50}},
		{"honor extended resource if the pod request", ft.MakePod().Req("cpu", "3000", "memory", "5000", extendedRes, "2"),
			[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000", extendedRes, "4"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "10")},
			[]int64{50, 40}},
	})
	runFitCases(t, kschedv1.MostAllocated, nil, []kschedv1.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}, []scoreCase{
		{"if the node doesn't have a resource", ft.MakePod().Req("cpu", "3000", "memory", "4000"),
			[]*ft.NodeBuilder{node("node1", "cpu", "6000", "memory", "10000"), node("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			[]int64{45, 45}},
	})
}

func TestRequestedToCapacityRatioStrategy(t *testing.T) {
	runFitCases(t, kschedv1.RequestedToCapacityRatio, leastShape, cpuMem, []scoreCase{
		{"nothing scheduled, nothing requested (default - least requested nodes have priority)", ft.MakePod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000").With(ft.MakePod(), ft.MakePod()), node("node2", "cpu", "4000", "memory", "10000")},
			[]int64{100, 100}},
		{"nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)", reqPod(),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000", "memory", "10000").With(ft.MakePod(), ft.MakePod()), node("node2", "cpu", "6000", "memory", "10000")},
			[]int64{38, 50}},
		{"no resources requested, pods scheduled with resources (default - least requested nodes have priority)", ft.MakePod(),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "4000", "memory", "10000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000")),
				node("node2", "cpu", "6000", "memory", "10000").With(ft.MakePod().Req("cpu", "3000", "memory", "5000"))},
			[]int64{38, 50}},
	})
	// upstream's makeNode: 4000m cpu, 10000Mi memory and the extended resources.
	packNode := func(name string, ext ...string) *ft.NodeBuilder {
		return node(name, append([]string{"cpu", "4", "memory", "10000Mi"}, ext...)...)
	}
	single := []kschedv1.ResourceSpec{{Name: "intel.com/foo", Weight: 1}}
	runFitCases(t, kschedv1.RequestedToCapacityRatio, packShape, single, []scoreCase{
		{"single: nothing scheduled, nothing requested", ft.MakePod(),
			[]*ft.NodeBuilder{packNode("node1", "intel.com/foo", "8"), packNode("node2", "intel.com/foo", "4")},
			[]int64{0, 0}},
		{"single: resources requested, pods scheduled with less resources", ft.MakePod().Req("intel.com/foo", "2"),
			[]*ft.NodeBuilder{packNode("node1", "intel.com/foo", "8"), packNode("node2", "intel.com/foo", "4")},
			[]int64{2, 5}},
		{"single: resources requested, pods scheduled with resources, on node with existing pod running", ft.MakePod().Req("intel.com/foo", "2"),
			[]*ft.NodeBuilder{packNode("node1", "intel.com/foo", "8"), packNode("node2", "intel.com/foo", "4").With(ft.MakePod().Req("intel.com/foo", "2"))},
			[]int64{2, 10}},
		{"single: resources requested, pods scheduled with more resources", ft.MakePod().Req("intel.com/foo", "4"),
			[]*ft.NodeBuilder{packNode("node1", "intel.com/foo", "8"), packNode("node2", "intel.com/foo", "4")},
			[]int64{5, 10}},
	})
	multiple := []kschedv1.ResourceSpec{{Name: "intel.com/foo", Weight: 3}, {Name: "intel.com/bar", Weight: 5}}
	res2 := []string{"intel.com/foo", "8", "intel.com/bar", "4"}
	res1 := []string{"intel.com/foo", "4", "intel.com/bar", "8"}
	runFitCases(t, kschedv1.RequestedToCapacityRatio, packShape, multiple, []scoreCase{
		{"multiple: nothing scheduled, nothing requested", ft.MakePod(),
			[]*ft.NodeBuilder{packNode("node1", res2...), packNode("node2", res1...)},
			[]int64{0, 0}},
		{"multiple: resources requested, pods scheduled with less resources", ft.MakePod().Req("intel.com/foo", "2", "intel.com/bar", "2"),
			[]*ft.NodeBuilder{packNode("node1", res2...), packNode("node2", res1...)},
			[]int64{4, 3}},
		{"multiple: resources requested, pods scheduled with resources, on node with existing pod running", ft.MakePod().Req("intel.com/foo", "2", "intel.com/bar", "2"),
			[]*ft.NodeBuilder{packNode("node1", res2...), packNode("node2", res1...).With(ft.MakePod().Req("intel.com/foo", "4", "intel.com/bar", "2"))},
			[]int64{4, 7}},
		{"multiple: resources requested, pods scheduled with more resources", ft.MakePod().Req("intel.com/foo", "4", "intel.com/bar", "2"),
			[]*ft.NodeBuilder{packNode("node1", res2...), packNode("node2", res1...)},
			[]int64{5, 5}},
	})
}

// TestBrokenLinear is upstream's TestBrokenLinearFunction.
func TestBrokenLinear(t *testing.T) {
	for _, tc := range []struct {
		shape []helper.ShapePoint
		at    map[int64]int64
	}{
		{[]helper.ShapePoint{{Utilization: 10, Score: 1}, {Utilization: 90, Score: 9}},
			map[int64]int64{-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9}},
		{[]helper.ShapePoint{{Utilization: 0, Score: 2}, {Utilization: 40, Score: 10}, {Utilization: 100, Score: 0}},
			map[int64]int64{-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0}},
		{[]helper.ShapePoint{{Utilization: 0, Score: 2}, {Utilization: 40, Score: 2}, {Utilization: 100, Score: 2}},
			map[int64]int64{-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}},
	} {
		for p, want := range tc.at {
			if got := helper.BrokenLinear(tc.shape, p); got != want {
				t.Errorf("brokenLinear(%v, %d) = %d, want %d", tc.shape, p, got, want)
			}
		}
	}
}

// TestBalancedAllocationResources is upstream's balanced_allocation_test.go
// cases, with the resources as args.
func TestBalancedAllocationResources(t *testing.T) {
	gpuSet := []kschedv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}}
	for _, tc := range []struct {
		scoreCase
		resources []kschedv1.ResourceSpec
	}{
		{scoreCase{"nothing scheduled, resources requested, differently sized nodes (memory then cpu, weights defaulted)",
			ft.MakePod().Req("cpu", "1000m", "memory", "2000").Req("cpu", "2000m", "memory", "3000"),
			[]*ft.NodeBuilder{node("node1", "cpu", "4000m", "memory", "10000"), node("node2", "cpu", "6000m", "memory", "10000")},
			[]int64{68, 75}},
			[]kschedv1.ResourceSpec{{Name: "memory"}, {Name: "cpu"}}},
		{scoreCase{"scalar resource is included in the score computation if pod requests the scalar resource",
			ft.MakePod().Req("cpu", "0", "memory", "0", "nvidia.com/gpu", "1"),
			[]*ft.NodeBuilder{
				node("node1", "cpu", "3500m", "memory", "40000", "nvidia.com/gpu", "8").With(
					ft.MakePod().Req("cpu", "1000m", "memory", "2000").Req("cpu", "2000m", "memory", "3000", "nvidia.com/gpu", "3")),
				node("node2", "cpu", "3500m", "memory", "40000", "nvidia.com/gpu", "8").With(
					ft.MakePod().Req("cpu", "1000m", "memory", "2000").Req("cpu", "2000m", "memory", "3000"))},
			[]int64{75, 76}},
			gpuSet},
		{scoreCase{"scalar resource is not included in the score computation if pod doesn't request the scalar resource",
			ft.MakePod().Req("cpu", "1000m", "memory", "2000").Req("cpu", "2000m", "memory", "3000"),
			[]*ft.NodeBuilder{node("node1", "cpu", "3500m", "memory", "40000", "nvidia.com/gpu", "8"), node("node2", "cpu", "3500m", "memory", "40000")},
			[]int64{56, 56}},
			gpuSet},
		{scoreCase{"a pod requesting none of the resources is skipped",
			ft.MakePod().Req("cpu", "1000m"),
			[]*ft.NodeBuilder{node("node1", "cpu", "3500m", "nvidia.com/gpu", "4")},
			[]int64{0}},
			[]kschedv1.ResourceSpec{{Name: "nvidia.com/gpu"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := builtPlugin(t, "NodeResourcesBalancedAllocation", &kschedv1.NodeResourcesBalancedAllocationArgs{Resources: tc.resources})
			if diff := cmp.Diff(tc.want, rawScores(t, pl, tc.pod, tc.nodes)); diff != "" {
				t.Errorf("scores (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestArgsObject checks args already decoded as the plugin's args type, as
// a configuration decoded with the scheme gives them.
func TestArgsObject(t *testing.T) {
	args := &kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{Type: kschedv1.MostAllocated}}
	pl := builtPlugin(t, "NodeResourcesFit", args).(nodeResourcesFit)
	if pl.scorer == nil || pl.scorer.strategy != strategyMostAllocated || len(pl.scorer.resources) != 2 {
		t.Errorf("scorer %+v, want MostAllocated over cpu and memory", pl.scorer)
	}
	if args.ScoringStrategy.Resources != nil {
		t.Errorf("Build changed the caller's args: %+v", args.ScoringStrategy)
	}
}

// TestArgsDefaults checks upstream's v1 defaulting of the args
// (defaults_test.go's plugin args cases).
func TestArgsDefaults(t *testing.T) {
	t.Run("NodeResourcesFit", func(t *testing.T) {
		for _, tc := range []struct{ in, want kschedv1.NodeResourcesFitArgs }{
			{kschedv1.NodeResourcesFitArgs{}, kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{
				Type: kschedv1.LeastAllocated, Resources: cpuMem}}},
			{kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{Type: kschedv1.MostAllocated}},
				kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{Type: kschedv1.MostAllocated, Resources: cpuMem}}},
			{kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{Type: kschedv1.MostAllocated,
				Resources: []kschedv1.ResourceSpec{{Name: "cpu", Weight: 2}, {Name: "memory"}}}},
				kschedv1.NodeResourcesFitArgs{ScoringStrategy: &kschedv1.ScoringStrategy{Type: kschedv1.MostAllocated,
					Resources: []kschedv1.ResourceSpec{{Name: "cpu", Weight: 2}, {Name: "memory", Weight: 1}}}}},
		} {
			setDefaultsFit(&tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		}
	})
	t.Run("NodeResourcesBalancedAllocation", func(t *testing.T) {
		for _, tc := range []struct {
			in, want kschedv1.NodeResourcesBalancedAllocationArgs
		}{
			{kschedv1.NodeResourcesBalancedAllocationArgs{}, kschedv1.NodeResourcesBalancedAllocationArgs{Resources: cpuMem}},
			{kschedv1.NodeResourcesBalancedAllocationArgs{Resources: []kschedv1.ResourceSpec{{Name: "nvidia.com/gpu"}}},
				kschedv1.NodeResourcesBalancedAllocationArgs{Resources: []kschedv1.ResourceSpec{{Name: "nvidia.com/gpu", Weight: 1}}}},
		} {
			setDefaultsBalanced(&tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("(-want, +got):\n%s", diff)
			}
		}
	})
}

// argsOf decodes args (YAML or JSON; "" for no pluginConfig entry) through
// row, as Build does.
func argsOf(t *testing.T, row framework.Row, args string) any {
	t.Helper()
	var pc *kschedv1.PluginConfig
	if args != "" {
		pc = &kschedv1.PluginConfig{Name: row.Name, Args: runtime.RawExtension{Raw: []byte(args)}}
	}
	a, err := row.Args(pc, field.NewPath("args"))
	if err != nil {
		t.Fatalf("%s args %q: %v", row.Name, args, err)
	}
	return a
}

// TestDefaultArgsFastPaths: no args, and upstream's defaults written out,
// take the plugins' fast paths (LeastAllocated and BalancedAllocation over
// cpu and memory, without per-pod state).
func TestDefaultArgsFastPaths(t *testing.T) {
	for _, args := range []string{"", `{"scoringStrategy": {"type": "LeastAllocated"}}`} {
		if pl := argsOf(t, FitRow(), args).(nodeResourcesFit); pl.scorer != nil || pl.ignored != nil {
			t.Errorf("NodeResourcesFit %+v, want the default", pl)
		}
	}
	for _, args := range []string{"", `{"resources": [{"name": "cpu"}, {"name": "memory", "weight": 1}]}`} {
		if pl := argsOf(t, BalancedAllocationRow(), args).(nodeResourcesBalancedAllocation); pl.resources != nil {
			t.Errorf("NodeResourcesBalancedAllocation %+v, want the default", pl)
		}
	}
}

// TestFitIgnoredResources checks that ignoredResources and
// ignoredResourceGroups take extended resources out of the filter.
func TestFitIgnoredResources(t *testing.T) {
	node := ft.MakeNode("n1", "cpu", "4", "memory", "1Gi").Info()
	pod := ft.MakePod().Req("cpu", "1", "example.com/foo", "1", "other.io/bar", "1", "hugepages-2Mi", "2Mi")
	for _, tc := range []struct {
		args, want string
	}{
		{``, "Insufficient example.com/foo, Insufficient hugepages-2Mi, Insufficient other.io/bar"},
		{`ignoredResources: [example.com/foo]`, "Insufficient hugepages-2Mi, Insufficient other.io/bar"},
		{`{ignoredResources: [example.com/foo], ignoredResourceGroups: [other.io, hugepages-2Mi]}`, "Insufficient hugepages-2Mi"},
	} {
		raw := tc.args
		if raw == "" {
			raw = "{}"
		}
		pl := argsOf(t, FitRow(), raw).(nodeResourcesFit)
		f, _, st := pl.PreFilter(pod.Info(), nil)
		if st != nil {
			t.Fatal(st.Message())
		}
		got := ""
		if st := f.Filter(node); st != nil {
			got = st.Message()
		}
		if got != tc.want {
			t.Errorf("args %q: Filter = %q, want %q", tc.args, got, tc.want)
		}
	}
}
