package noderesources

import (
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// BalancedAllocationName is the plugin's upstream name. No
// rejection or hint names it (it only scores), so abi/ has no constant.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

// weightNodeResourcesBalancedAllocation is upstream's default score weight.
const weightNodeResourcesBalancedAllocation = 1

// nodeResourcesBalancedAllocation is upstream v1.37's
// NodeResourcesBalancedAllocation plugin: among feasible nodes, those whose
// cpu and memory fractions the pod brings closer together score higher.
//
// Extension points: PreScore (skips a pod that requests none of the
// resources, upstream's best-effort skip), Score. No filter, so no
// rejection. Weight 1.
//
// The zero value is the plugin with upstream's default args (cpu and
// memory).
type nodeResourcesBalancedAllocation struct {
	// resources are the args' resources; nil for cpu and memory, which
	// balancedAllocation scores without per-pod state.
	resources []scoredResource
}

var _ framework.PreScorePlugin = nodeResourcesBalancedAllocation{}

func (nodeResourcesBalancedAllocation) Name() string {
	return BalancedAllocationName
}

func (pl nodeResourcesBalancedAllocation) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, _ *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	if pl.resources != nil {
		reqs := podRequests(pl.resources, pod, true)
		if !slices.ContainsFunc(reqs, func(r int64) bool { return r != 0 }) {
			return nil, nil
		}
		return &balancedResourcesState{resources: pl.resources, reqs: reqs}, nil
	}
	if pod.Requests.MilliCPU == 0 && pod.Requests.Memory == 0 {
		return nil, nil
	}
	return (*balancedScorer)(pod), nil
}

// balancedScorer's state is the pod itself.
type balancedScorer cache.PodInfo

// NodeLocal: the score reads the pod's requests and the node alone.
func (*balancedScorer) NodeLocal() bool { return true }

func (s *balancedScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() != nil {
			scores[i] = balancedAllocation((*cache.PodInfo)(s), ni)
		}
	}
}

// balancedAllocation is the score with its default resources (cpu and
// memory): how much placing the pod changes the balance of the node's
// requested fractions (one minus their standard deviation, on 0-100),
// centred on 50, so that a pod that evens a node out scores above 50 and one
// that skews it below. It uses the actual requests.
func balancedAllocation(pod *cache.PodInfo, ni *cache.NodeInfo) int64 {
	alloc, used := ni.Allocatable(), ni.Requested()
	req := &pod.Requests
	with := balance(used.MilliCPU+req.MilliCPU, alloc.MilliCPU, used.Memory+req.Memory, alloc.Memory)
	without := balance(used.MilliCPU, alloc.MilliCPU, used.Memory, alloc.Memory)
	return framework.MaxNodeScore/2 + (framework.MaxNodeScore/2+with-without)/2
}

// balance is upstream's balancedResourceScore for cpu and memory: a resource
// the node has none of is left out; the fractions are capped at 1; with two
// fractions the standard deviation is half their difference, with one it
// is 0. The float operations are upstream's, in upstream's order, so the
// truncated result is the same.
func balance(cpu, cpuAlloc, mem, memAlloc int64) int64 {
	var fractions [2]float64
	n := 0
	if cpuAlloc != 0 {
		fractions[n] = min(float64(cpu)/float64(cpuAlloc), 1)
		n++
	}
	if memAlloc != 0 {
		fractions[n] = min(float64(mem)/float64(memAlloc), 1)
		n++
	}
	std := 0.0
	if n == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	}
	return int64((1 - std) * float64(framework.MaxNodeScore))
}

// BalancedAllocationRow is NodeResourcesBalancedAllocation's registry row.
func BalancedAllocationRow() framework.Row {
	return framework.Row{Name: BalancedAllocationName, Points: framework.PointsOf(framework.PointPreScore, framework.PointScore), Default: true,
		Weight: weightNodeResourcesBalancedAllocation, ScoreAlone: true, Args: balancedArgs,
		New: func(_ framework.Handle, args any) (framework.Plugin, error) {
			return args.(nodeResourcesBalancedAllocation), nil
		}}
}

// balancedArgs is NodeResourcesBalancedAllocation's Row.Args.
func balancedArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.NodeResourcesBalancedAllocationArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	setDefaultsBalanced(&args)
	if err := validateBalanced(path, &args); err != nil {
		return nil, err
	}
	return newBalancedAllocation(&args), nil
}

func setDefaultsBalanced(a *kschedv1.NodeResourcesBalancedAllocationArgs) {
	if len(a.Resources) == 0 {
		a.Resources = slices.Clone(defaultResources)
		return
	}
	for i := range a.Resources {
		if a.Resources[i].Weight == 0 {
			a.Resources[i].Weight = 1
		}
	}
}

func validateBalanced(path *field.Path, a *kschedv1.NodeResourcesBalancedAllocationArgs) error {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range a.Resources {
		p := path.Child("resources").Index(i)
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen[r.Name] = true
		if r.Weight != 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), r.Weight, "must be 1"))
		}
	}
	return errs.ToAggregate()
}

func newBalancedAllocation(a *kschedv1.NodeResourcesBalancedAllocationArgs) nodeResourcesBalancedAllocation {
	if isDefaultResources(a.Resources) {
		return nodeResourcesBalancedAllocation{}
	}
	return nodeResourcesBalancedAllocation{resources: scoredResources(a.Resources)}
}
