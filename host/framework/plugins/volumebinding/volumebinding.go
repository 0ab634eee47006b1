// Package volumebinding is upstream's VolumeBinding plugin
// (pkg/scheduler/framework/plugins/volumebinding) over host/volume's binder:
// PreFilter, Filter, PreScore, Score (StorageCapacityScoring, weight 1),
// Reserve and PreBind of the pod's PersistentVolumeClaims; rejects
// UnschedulableAndUnresolvable (ReasonUnboundImmediate,
// ReasonVolumeNodeConflict, ReasonVolumeBindConflict,
// ReasonVolumeNotEnoughSpace, ReasonVolumePVNotExist).
package volumebinding

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
	"github.com/wasmsched/wasmsched/host/volume"
)

// Upstream's VolumeBinding reasons (host/volume has the texts).
const (
	ReasonVolumeNodeConflict   = volume.ReasonNodeConflict
	ReasonVolumeBindConflict   = volume.ReasonBindConflict
	ReasonVolumeNotEnoughSpace = volume.ReasonNotEnoughSpace
	ReasonVolumePVNotExist     = volume.ReasonPVNotExist
	ReasonUnboundImmediate     = volume.ReasonUnboundImmediate
)

// weightVolumeBinding is upstream's default score weight.
const weightVolumeBinding = 1

// defaultVolumeShape is upstream's default VolumeBindingArgs shape with
// StorageCapacityScoring (beta, on in v1.37): the emptier the storage the
// better.
var defaultVolumeShape = []kschedv1.UtilizationShapePoint{{Utilization: 0, Score: helper.MaxCustomPriorityScore}, {Utilization: 100, Score: 0}}

// volumeBinding is upstream v1.37's VolumeBinding plugin over host/volume's
// binder: a pod's PersistentVolumeClaims (and generic ephemeral volumes'
// claims) must exist, not be lost or being deleted, be owned by the pod
// (ephemeral), and, unbound with Immediate binding, be bound first; on a
// node, bound claims' PVs must accept it, and each unbound
// WaitForFirstConsumer claim must find a static PV there or be
// provisionable there (with room, when the CSI driver tracks capacity).
// The choice is assumed at Reserve, written at PreBind, which waits until
// the claims are bound (bindTimeoutSeconds).
//
// Extension points: PreFilter (skips a pod without claims; rejects
// UnschedulableAndUnresolvable with upstream's texts: `persistentvolumeclaim
// "x" not found`, ReasonUnboundImmediate, ...), Filter
// (UnschedulableAndUnresolvable: ReasonVolumeNodeConflict,
// ReasonVolumeBindConflict, ReasonVolumeNotEnoughSpace,
// ReasonVolumePVNotExist), PreScore and Score (StorageCapacityScoring, beta
// and on in v1.37: the utilization the node's chosen static PVs, else its
// CSIStorageCapacity, would have, through the shape; weight 1), Reserve,
// Unreserve, PreBind. Its per-pod state is its filter (volumeBindingFilter),
// reached at the later points through PodState.PluginFilter.
type volumeBinding struct {
	binder *volume.Binder
	shape  []helper.ShapePoint
}

var (
	_ framework.PreFilterPlugin     = (*volumeBinding)(nil)
	_ framework.StatePreScorePlugin = (*volumeBinding)(nil)
	_ framework.ReservePlugin       = (*volumeBinding)(nil)
	_ framework.PreBindPlugin       = (*volumeBinding)(nil)
)

// volumeBindingArgs are VolumeBinding's args, defaulted.
type volumeBindingArgs struct {
	bindTimeout time.Duration
	shape       []kschedv1.UtilizationShapePoint
}

var defaultVolumeBindingArgs = volumeBindingArgs{bindTimeout: volume.DefaultBindTimeout, shape: defaultVolumeShape}

// newVolumeBinding builds the plugin over h's listers and its assume
// caches, which every profile of the scheduler shares.
func newVolumeBinding(h framework.Handle, a volumeBindingArgs) (*volumeBinding, error) {
	caches, err := h.Volumes()
	if err != nil {
		return nil, err
	}
	l := h.Listers()
	b := volume.New(caches, volume.Options{Client: l.Client, Classes: l.StorageClasses, CSINodes: l.CSINodes,
		CSIDrivers: l.CSIDrivers, Capacities: l.CSIStorageCapacities, Nodes: l.Nodes, Pods: l.Pods,
		BindTimeout: a.bindTimeout})
	pl := &volumeBinding{binder: b}
	pl.shape = helper.Shape(a.shape)
	return pl, nil
}

func (*volumeBinding) Name() string { return abi.PluginVolumeBinding }

// volumeBindingFilter is the plugin's state for one pod: its sorted claims
// and, per node the filter passed, what the claims would get there.
type volumeBindingFilter struct {
	pl     *volumeBinding
	pod    *v1.Pod
	claims *volume.PodClaims

	// mu guards byNode, written by Filter on parallel goroutines.
	mu     sync.Mutex
	byNode map[string]*volume.PodVolumes

	// Set by Reserve, read by PreBind and Unreserve: on the cycle's and
	// then the pod's binding goroutine, one after the other.
	resMu    sync.Mutex
	assumed  *volume.PodVolumes
	allBound bool
}

func (pl *volumeBinding) PreFilter(pod *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	if !volume.HasClaims(pod.Pod) {
		return nil, nil, nil
	}
	claims, err := pl.binder.Claims(pod.Pod)
	if err != nil {
		if errors.Is(err, volume.ErrRejected) {
			return nil, nil, &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginVolumeBinding, Reasons: []string{err.Error()}}
		}
		return nil, nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: err}
	}
	return &volumeBindingFilter{pl: pl, pod: pod.Pod, claims: claims, byNode: map[string]*volume.PodVolumes{}}, nil, nil
}

func (f *volumeBindingFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	node := ni.Node()
	found, reasons, err := f.pl.binder.FindPodVolumes(f.pod, f.claims, node)
	if err != nil {
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: err}
	}
	if len(reasons) > 0 {
		return &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginVolumeBinding, Reasons: reasons}
	}
	f.mu.Lock()
	f.byNode[node.Name] = found
	f.mu.Unlock()
	return nil
}

// found is what Filter found on node, nil if it did not pass it.
func (f *volumeBindingFilter) found(node string) *volume.PodVolumes {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byNode[node]
}

// filterOf is the plugin's filter for the pod of ps, nil when it skipped
// the pod (no claims) or did not run.
func filterOf(ps *framework.PodState) *volumeBindingFilter {
	if ps == nil {
		return nil
	}
	f, _ := ps.PluginFilter(abi.PluginVolumeBinding).(*volumeBindingFilter)
	return f
}

// PreScore is never called: the profile calls PreScoreState.
func (pl *volumeBinding) PreScore(*cache.PodInfo, []*cache.NodeInfo, *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	return nil, nil
}

// PreScoreState skips a pod without claims (upstream scores it 0 on every
// node, which changes nothing) and scores the others from what Filter
// found, as upstream with StorageCapacityScoring on.
func (pl *volumeBinding) PreScoreState(ps *framework.PodState, _ []*cache.NodeInfo) (framework.PodScorer, *framework.Status) {
	f := filterOf(ps)
	if f == nil || len(pl.shape) == 0 {
		return nil, nil
	}
	return (*volumeScorer)(f), nil
}

// volumeScorer scores a pod's nodes from its filter's findings.
type volumeScorer volumeBindingFilter

// classUse is the storage a pod would request and the capacity there is in
// one storage class on a node.
type classUse struct {
	class               string
	requested, capacity int64
}

func (s *volumeScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	f := (*volumeBindingFilter)(s)
	var uses []classUse
	for i, ni := range nodes {
		scores[i] = 0
		if ni.Node() == nil {
			continue
		}
		found := f.found(ni.Node().Name)
		if found == nil {
			continue
		}
		scores[i] = f.pl.scoreUses(classUses(found, uses[:0]))
	}
}

// classUses groups found's volumes by class, as upstream's Score: the static
// bindings (requests and PV capacities summed) when there are any, else the
// claims to provision whose driver reports capacity (requests summed, the
// capacity the one CSIStorageCapacity reports).
func classUses(found *volume.PodVolumes, uses []classUse) []classUse {
	at := func(class string) *classUse {
		for i := range uses {
			if uses[i].class == class {
				return &uses[i]
			}
		}
		uses = append(uses, classUse{class: class})
		return &uses[len(uses)-1]
	}
	if len(found.Static) > 0 {
		for _, b := range found.Static {
			u := at(b.PV.Spec.StorageClassName)
			req, capacity := b.PVC.Spec.Resources.Requests[v1.ResourceStorage], b.PV.Spec.Capacity[v1.ResourceStorage]
			u.requested += req.Value()
			u.capacity += capacity.Value()
		}
		return uses
	}
	for _, p := range found.Dynamic {
		if p.Capacity == nil || p.PVC.Spec.StorageClassName == nil {
			continue
		}
		u := at(*p.PVC.Spec.StorageClassName)
		// Not summed: every claim of the class sees the same capacity.
		u.capacity = 0
		if p.Capacity.Capacity != nil {
			u.capacity = p.Capacity.Capacity.Value()
		}
		req := p.PVC.Spec.Resources.Requests[v1.ResourceStorage]
		u.requested += req.Value()
	}
	return uses
}

// scoreUses is upstream's volume capacity scorer: each class's utilization
// through the shape (a class over capacity, or without any, counts as full),
// averaged over the classes, rounded.
func (pl *volumeBinding) scoreUses(uses []classUse) int64 {
	if len(uses) == 0 {
		return 0
	}
	var sum int64
	for _, u := range uses {
		if u.capacity == 0 || u.requested > u.capacity {
			sum += helper.BrokenLinear(pl.shape, 100)
			continue
		}
		sum += helper.BrokenLinear(pl.shape, u.requested*100/u.capacity)
	}
	return int64(math.Round(float64(sum) / float64(len(uses))))
}

// Reserve assumes what Filter found on nodeName for the pod's claims.
func (pl *volumeBinding) Reserve(_ context.Context, ps *framework.PodState, pod *v1.Pod, nodeName string) *framework.Status {
	f := filterOf(ps)
	if f == nil {
		return nil
	}
	f.resMu.Lock()
	defer f.resMu.Unlock()
	found := f.found(nodeName)
	if found == nil {
		f.allBound = true
		return nil
	}
	assumed, allBound, err := pl.binder.Assume(pod, nodeName, found)
	if err != nil {
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: err}
	}
	f.assumed, f.allBound = assumed, allBound
	return nil
}

// Unreserve ends what Reserve assumed; it does nothing when Reserve
// assumed nothing, or a second time.
func (pl *volumeBinding) Unreserve(_ context.Context, ps *framework.PodState, _ *v1.Pod, _ string) {
	f := filterOf(ps)
	if f == nil {
		return
	}
	f.resMu.Lock()
	defer f.resMu.Unlock()
	pl.binder.Revert(f.assumed)
	f.assumed = nil
}

// PreBindPreFlight has work for a pod with a claim to bind (upstream's):
// Skip for one without claims or whose claims were all bound, an Error when
// Reserve found no volumes for nodeName.
func (pl *volumeBinding) PreBindPreFlight(_ context.Context, ps *framework.PodState, _ *v1.Pod, nodeName string) *framework.Status {
	f := filterOf(ps)
	if f == nil {
		return &framework.Status{Code: framework.Skip}
	}
	f.resMu.Lock()
	assumed, allBound := f.assumed, f.allBound
	f.resMu.Unlock()
	switch {
	case allBound || (assumed == nil && len(f.claims.Delayed) == 0):
		return &framework.Status{Code: framework.Skip}
	case assumed == nil:
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: fmt.Errorf("no pod volume found for node %q", nodeName)}
	}
	return nil
}

// PreBind writes the reserved bindings and waits until the claims are
// bound; nil at once for a pod whose claims were all bound.
func (pl *volumeBinding) PreBind(ctx context.Context, ps *framework.PodState, pod *v1.Pod, nodeName string) *framework.Status {
	f := filterOf(ps)
	if f == nil {
		return nil
	}
	f.resMu.Lock()
	assumed, allBound := f.assumed, f.allBound
	f.resMu.Unlock()
	if allBound || (assumed == nil && len(f.claims.Delayed) == 0) {
		return nil // bound claims only: nothing to write
	}
	if assumed == nil {
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: fmt.Errorf("no pod volume found for node %q", nodeName)}
	}
	if err := pl.binder.Bind(ctx, pod, assumed); err != nil {
		return &framework.Status{Code: framework.Error, Plugin: abi.PluginVolumeBinding, Err: err}
	}
	return nil
}

// Row is VolumeBinding's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginVolumeBinding, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointReserve, framework.PointPreBind, framework.PointPreScore, framework.PointScore), Default: true,
		Args: volumeBindingArgsOf,
		New: func(h framework.Handle, args any) (framework.Plugin, error) {
			return newVolumeBinding(h, args.(volumeBindingArgs))
		}}
}

// volumeBindingArgsOf is VolumeBinding's Row.Args.
func volumeBindingArgsOf(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.VolumeBindingArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	return newVolumeBindingArgs(path, &args)
}

// newVolumeBindingArgs defaults a as upstream's SetDefaults_VolumeBindingArgs
// (bindTimeoutSeconds 600; the default shape, StorageCapacityScoring being
// on in v1.37) and validates it as ValidateVolumeBindingArgs.
func newVolumeBindingArgs(path *field.Path, a *kschedv1.VolumeBindingArgs) (volumeBindingArgs, error) {
	if a.BindTimeoutSeconds == nil {
		t := int64(volume.DefaultBindTimeout / time.Second)
		a.BindTimeoutSeconds = &t
	}
	if len(a.Shape) == 0 {
		a.Shape = slices.Clone(defaultVolumeShape)
	}
	var errs field.ErrorList
	if t := *a.BindTimeoutSeconds; t < 0 {
		errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), t, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	errs = append(errs, helper.ValidateShape(a.Shape, path.Child("shape"))...)
	if err := errs.ToAggregate(); err != nil {
		return volumeBindingArgs{}, err
	}
	timeout := time.Duration(math.MaxInt64) // beyond 292 years: no timeout
	if t := *a.BindTimeoutSeconds; t <= math.MaxInt64/int64(time.Second) {
		timeout = time.Duration(t) * time.Second
	}
	return volumeBindingArgs{bindTimeout: timeout, shape: a.Shape}, nil
}
