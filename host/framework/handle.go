package framework

import (
	"fmt"
	"sync"

	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/host/dra"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/volume"
)

// Handle is what one scheduler's plugins share (upstream's
// framework.Handle): the listers over its informers, its client, the DRA
// state, the volume assume caches, the recorder of the claims it creates,
// its parallelism. host/app builds one per scheduler and passes it to every
// profile's plugin factories, so that the profiles' DynamicResources share
// one view of the devices and their VolumeBindings one of the volumes, and
// two schedulers in one process (tests run several) share nothing.
//
// A Handle is a small value over shared state: copies share it.
type Handle struct {
	s *handleState
	// enabled is the profile being built's plugin set (Registry.Build):
	// nil outside a build.
	enabled func(plugin string, pt Point) bool
	// placement is the profile's placement slots (WithPlacement); nil:
	// none, the Wasm placement plugins do nothing.
	placement *policy.Placement
}

// handleState is what a Handle's copies share.
type handleState struct {
	listers     Listers
	claims      ClaimRecorder
	parallelism int

	// The DRA state and the volume caches are built on first use, once:
	// a scheduler without DynamicResources or VolumeBinding builds neither
	// (host/cluster asks for the DRA state to order the queues' claim
	// events after it).
	draOnce sync.Once
	dra     *dra.Manager
	draErr  error
	volOnce sync.Once
	volumes *volume.Caches
	volErr  error

	// shared holds what Shared built, by key.
	sharedMu sync.Mutex
	shared   map[any]any
}

// HandleOptions are what NewHandle builds a Handle of.
type HandleOptions struct {
	// Listers are the scheduler's informers; the zero value reads as an
	// empty cluster (tests and tools without an API).
	Listers Listers
	// Claims counts the ResourceClaims DynamicResources creates; nil
	// counts nothing.
	Claims ClaimRecorder
	// Parallelism is how many goroutines a plugin may use for one pod
	// (upstream's parallelism); 0 is upstream's default, 16.
	Parallelism int
}

// DefaultParallelism is upstream's default parallelism.
const DefaultParallelism = 16

// NewHandle builds a scheduler's Handle over o. Call it before the
// informers start: the DRA state and the volume caches add their handlers
// to them.
func NewHandle(o HandleOptions) Handle {
	if o.Claims == nil {
		o.Claims = discardClaims{}
	}
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultParallelism
	}
	return Handle{s: &handleState{listers: o.Listers, claims: o.Claims, parallelism: o.Parallelism}}
}

// Listers are what the plugins read from the API besides the snapshot.
func (h Handle) Listers() Listers { return h.state().listers }

// Client writes what PreBind plugins write; nil without an API.
func (h Handle) Client() kubernetes.Interface { return h.state().listers.Client }

// Claims counts the ResourceClaims the plugins create.
func (h Handle) Claims() ClaimRecorder { return h.state().claims }

// Parallelism is how many goroutines a plugin may use for one pod.
func (h Handle) Parallelism() int { return h.state().parallelism }

// DRA is the scheduler's DRA state (allocated and in-flight devices, the
// claims' assume cache, the ResourceSlice tracker), built on first use
// over the listers' informers.
func (h Handle) DRA() (*dra.Manager, error) {
	s := h.state()
	s.draOnce.Do(func() {
		l := s.listers
		s.dra, s.draErr = dra.New(dra.Options{Claims: l.ClaimInformer, Slices: l.ResourceSlices, TaintRules: l.DeviceTaintRules,
			Classes: l.DeviceClasses, Client: l.Client})
	})
	return s.dra, s.draErr
}

// Volumes are the scheduler's PersistentVolume and PersistentVolumeClaim
// assume caches, built on first use over the listers' informers.
func (h Handle) Volumes() (*volume.Caches, error) {
	s := h.state()
	s.volOnce.Do(func() {
		var pv, pvc volume.Informer
		if s.listers.PVInformer != nil {
			pv = s.listers.PVInformer
		}
		if s.listers.PVCInformer != nil {
			pvc = s.listers.PVCInformer
		}
		s.volumes, s.volErr = volume.NewCaches(pv, pvc)
	})
	return s.volumes, s.volErr
}

// WithPlacement returns a copy of h for one profile, whose placement slots
// are p (host/app builds one per profile; the Wasm placement plugins read
// the policies there).
func (h Handle) WithPlacement(p *policy.Placement) Handle {
	h.placement = p
	return h
}

// Placement is the profile's placement slots; nil when the Handle was not
// given any (the Wasm placement plugins then do nothing).
func (h Handle) Placement() *policy.Placement { return h.placement }

// Shared returns the value stored under key, building it with build on the
// first call: state a plugin's instances in every profile of the scheduler
// share (the Wasm placement plugins' node records). key should be a
// package's unexported type, as a context key.
func (h Handle) Shared(key any, build func() any) any {
	s := h.state()
	s.sharedMu.Lock()
	defer s.sharedMu.Unlock()
	if v, ok := s.shared[key]; ok {
		return v
	}
	if s.shared == nil {
		s.shared = make(map[any]any)
	}
	v := build()
	s.shared[key] = v
	return v
}

// Enabled reports whether the profile being built runs plugin at pt: a
// factory may adapt to the plugins beside it (NodeResourcesFit leaves the
// extended resources DynamicResources allocates to it). It is false
// outside Registry.Build.
func (h Handle) Enabled(plugin string, pt Point) bool {
	return h.enabled != nil && h.enabled(plugin, pt)
}

func (h Handle) state() *handleState {
	if h.s == nil {
		panic(fmt.Sprintf("framework: a zero Handle: build it with NewHandle (%T)", h))
	}
	return h.s
}

// Listers are what plugins read from the API besides the snapshot, backed
// by the scheduler's informers (host/app). A nil lister reads as empty:
// namespaces without labels, no Service or controller selecting any pod.
type Listers struct {
	// Namespaces: InterPodAffinity's namespaceSelector.
	Namespaces corelisters.NamespaceLister
	// Services, ReplicationControllers, ReplicaSets, StatefulSets: the
	// selectors of PodTopologySpread's system default constraints.
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister

	// The storage objects the volume plugins read (VolumeBinding,
	// VolumeRestrictions, VolumeZone, NodeVolumeLimits): upstream's
	// system:volume-scheduler reads. PersistentVolumes and
	// PersistentVolumeClaims come as informers too, for the volume binder's
	// assume caches, which must see every change in order (a lister
	// cannot tell an object it assumed from a newer one).
	PersistentVolumes       corelisters.PersistentVolumeLister
	PersistentVolumeClaims  corelisters.PersistentVolumeClaimLister
	PVInformer, PVCInformer toolscache.SharedIndexInformer
	StorageClasses          storagelisters.StorageClassLister
	CSINodes                storagelisters.CSINodeLister
	CSIDrivers              storagelisters.CSIDriverLister
	CSIStorageCapacities    storagelisters.CSIStorageCapacityLister
	VolumeAttachments       storagelisters.VolumeAttachmentLister

	// Nodes and Pods, when set, let VolumeBinding's PreBind wait see the
	// node's current labels and notice a deleted pod, as upstream's
	// (host/volume.Options); nil: the node the pod was filtered on, and a
	// deleted pod's wait lasts until the bind timeout.
	Nodes corelisters.NodeLister
	Pods  corelisters.PodLister

	// The dynamic resource allocation objects DynamicResources reads
	// (resource.k8s.io/v1, upstream's kube-scheduler DRA reads):
	// ResourceClaims come as an informer too, for the claims' assume
	// cache; ResourceSlices and DeviceTaintRules as informers, for the
	// k8s.io/dynamic-resource-allocation tracker that applies the rules to
	// the slices.
	DeviceClasses    resourcelisters.DeviceClassLister
	ResourceClaims   resourcelisters.ResourceClaimLister
	ClaimInformer    toolscache.SharedIndexInformer
	ResourceSlices   resourceinformers.ResourceSliceInformer
	DeviceTaintRules resourceinformers.DeviceTaintRuleInformer

	// Client writes what PreBind plugins write before a pod is bound (a
	// PersistentVolume's claimRef, a claim's selected-node annotation).
	// nil in tests and tools without an API.
	Client kubernetes.Interface
}

// ClaimRecorder counts the ResourceClaims the scheduler creates (those of
// pods' extended resources backed by DRA), as upstream's
// dynamic_resource_allocation_resourceclaim_creates_total.
type ClaimRecorder interface {
	// ClaimCreated is one creation request for a claim owned by a pod; ok
	// is false when it failed.
	ClaimCreated(ok bool)
}

type discardClaims struct{}

func (discardClaims) ClaimCreated(bool) {}
