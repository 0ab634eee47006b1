package dra

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// Features are the allocator features of upstream v1.37's default feature
// gates: AdminAccess, PrioritizedList, DeviceTaints (GA), PartitionableDevices,
// ConsumableCapacity, FractionalCapacityRange, DeviceBindingConditions with
// ResourceClaimDeviceStatus (beta, on); the alpha ones off.
var Features = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

// celCacheSize is upstream's: the ten most recent compiled expressions.
const celCacheSize = 10

// ErrConflict is wrapped by Reserve's error when an allocation takes a
// device that another claim took or reserved meanwhile.
var ErrConflict = errors.New("conflicting concurrent allocation")

// Options are the informers and listers a Manager reads. A nil informer or
// lister reads as empty (tests and tools without an API).
type Options struct {
	// Claims is the ResourceClaim informer, not started yet: the Manager
	// adds its event handler.
	Claims toolscache.SharedIndexInformer
	// Slices and TaintRules feed the ResourceSlice tracker, which applies
	// DeviceTaintRules to the slices (DRADeviceTaintRules, GA in 1.37).
	Slices     resourceinformers.ResourceSliceInformer
	TaintRules resourceinformers.DeviceTaintRuleInformer
	Classes    resourcelisters.DeviceClassLister
	// Client lets the tracker record events about broken CEL expressions.
	Client kubernetes.Interface
}

// Manager is the shared DRA state. It is safe for concurrent use.
type Manager struct {
	classes  classLister
	tracker  *tracker.Tracker
	celCache *cel.Cache
	synced   func() bool

	// mu guards everything below (a leaf lock: nothing is called while it
	// is held).
	mu sync.Mutex
	// claims is the assume cache: the informer's claims by namespace/name,
	// each possibly shadowed by an assumed copy.
	claims map[string]*claimEntry
	// The devices the claims (as seen, assumed copies included) take:
	// dedicated devices and shared device IDs counted by claim, and the
	// capacity the shared ones consume.
	devices    map[structured.DeviceID]int
	shares     map[structured.SharedDeviceID]int
	capacities structured.ConsumedCapacityCollection
	// inFlight are the allocations reserved by pods not yet bound, by
	// claim UID: written to the API by PreBind, assumed then, released.
	inFlight map[types.UID]*resourceapi.ResourceClaim
	// gone are the claims Forget dropped whose delete event has not come.
	gone map[types.UID]bool

	// subs receive the claim informer's events after the Manager has
	// applied them (Subscribe); subsMu guards the slice, not the calls.
	subsMu sync.Mutex
	subs   []toolscache.ResourceEventHandler
}

// claimEntry is one claim of the assume cache: api is the informer's
// version, seen is what the scheduler sees (api, or a copy assumed after
// an API write until the informer catches up with it).
type claimEntry struct {
	api, seen *resourceapi.ResourceClaim
}

// New builds a Manager over o; the informers must not have started yet.
func New(o Options) (*Manager, error) {
	m := &Manager{
		classes:    classLister{o.Classes},
		celCache:   cel.NewCache(celCacheSize, cel.Features{EnableConsumableCapacity: Features.ConsumableCapacity}),
		claims:     map[string]*claimEntry{},
		devices:    map[structured.DeviceID]int{},
		shares:     map[structured.SharedDeviceID]int{},
		capacities: structured.NewConsumedCapacityCollection(),
		inFlight:   map[types.UID]*resourceapi.ResourceClaim{},
		gone:       map[types.UID]bool{},
	}
	var synced []func() bool
	if o.Claims != nil {
		reg, err := o.Claims.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) {
				m.onClaim(obj, false)
				for _, h := range m.subscribers() {
					h.OnAdd(obj, initial)
				}
			},
			UpdateFunc: func(old, obj any) {
				m.onClaim(obj, false)
				for _, h := range m.subscribers() {
					h.OnUpdate(old, obj)
				}
			},
			DeleteFunc: func(obj any) {
				m.onClaim(obj, true)
				for _, h := range m.subscribers() {
					h.OnDelete(obj)
				}
			},
		})
		if err != nil {
			return nil, fmt.Errorf("watch ResourceClaims: %w", err)
		}
		synced = append(synced, reg.HasSynced)
	}
	if o.Slices != nil {
		opts := tracker.Options{EnableDeviceTaintRules: o.TaintRules != nil,
			EnableConsumableCapacity: Features.ConsumableCapacity,
			SliceInformer:            resourceinformers.ToTypedResourceSliceInformer(o.Slices), KubeClient: o.Client}
		if o.TaintRules != nil {
			opts.TaintInformer = resourceinformers.ToTypedDeviceTaintRuleInformer(o.TaintRules)
		}
		// The tracker lives as long as the informers: the process.
		t, err := tracker.StartTracker(context.Background(), opts)
		if err != nil {
			return nil, fmt.Errorf("start the ResourceSlice tracker: %w", err)
		}
		m.tracker = t
		synced = append(synced, t.HasSynced)
	}
	m.synced = func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}
	return m, nil
}

// Subscribe has h receive the claim informer's events once the Manager
// has applied them, on the informer's goroutine: a pod an event moves is
// then filtered against the claims and devices the event brought (upstream
// registers its claim handlers on its assume cache for the same reason).
// A handler on the informer itself could run first, and a pod it moved
// would find the device still taken, with no event left to move it again.
// h must not block; call Subscribe before the informers start.
func (m *Manager) Subscribe(h toolscache.ResourceEventHandler) {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	m.subs = append(m.subs, h)
}

func (m *Manager) subscribers() []toolscache.ResourceEventHandler {
	m.subsMu.Lock()
	defer m.subsMu.Unlock()
	return m.subs
}

// Synced reports whether the Manager has seen every claim and slice the
// informers listed at start (and its subscribers with it).
func (m *Manager) Synced() bool { return m.synced() }

// CELCache is the cache of compiled CEL expressions the allocators share.
func (m *Manager) CELCache() *cel.Cache { return m.celCache }

// Classes lists the DeviceClasses.
func (m *Manager) Classes() structured.DeviceClassLister { return m.classes }

// Slices lists the ResourceSlices with the DeviceTaintRules applied.
func (m *Manager) Slices() ([]*resourceapi.ResourceSlice, error) {
	if m.tracker == nil {
		return nil, nil
	}
	return m.tracker.ListPatchedResourceSlices()
}

// NotFoundError is Get's error for a claim it does not know (upstream's
// assume cache error text).
type NotFoundError struct{ Key string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("could not find ResourceClaim %q", e.Key) }

// Get returns the claim namespace/name as the scheduler sees it.
func (m *Manager) Get(namespace, name string) (*resourceapi.ResourceClaim, error) {
	key := namespace + "/" + name
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.claims[key]
	if e == nil {
		return nil, &NotFoundError{key}
	}
	return e.seen, nil
}

// onClaim applies an informer event: a version newer than the one seen
// replaces it (ending an assumption), an older or equal one is skipped
// (an assumed copy of it stands), as upstream's assume cache.
func (m *Manager) onClaim(obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	key := claim.Namespace + "/" + claim.Name
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone[claim.UID] {
		if deleted {
			delete(m.gone, claim.UID)
		}
		return
	}
	e := m.claims[key]
	if deleted {
		if e != nil {
			m.count(e.seen, -1)
			delete(m.claims, key)
		}
		return
	}
	if e == nil {
		m.claims[key] = &claimEntry{api: claim, seen: claim}
		m.count(claim, 1)
		return
	}
	if e.api == nil { // AssumeCreated's claim, seen by the informer now
		e.api = claim
	}
	if !newer(claim, e.seen) && e.seen.UID == claim.UID {
		return
	}
	m.count(e.seen, -1)
	e.api, e.seen = claim, claim
	m.count(claim, 1)
}

// newer reports whether a is a newer version of the claim than b: a
// larger resourceVersion (etcd's revisions are numbers), or either one not
// a number (fake clientsets leave them empty), when the informer's wins.
func newer(a, b *resourceapi.ResourceClaim) bool {
	va, errA := strconv.ParseInt(a.ResourceVersion, 10, 64)
	vb, errB := strconv.ParseInt(b.ResourceVersion, 10, 64)
	return errA != nil || errB != nil || va > vb
}

// Assume makes claim, just written to the API, what the scheduler sees
// until the informer brings a newer version (upstream's
// AssumeClaimAfterAPICall). It fails for a claim not known or older than
// the one seen.
func (m *Manager) Assume(claim *resourceapi.ResourceClaim) error {
	key := claim.Namespace + "/" + claim.Name
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.claims[key]
	if e == nil {
		return &NotFoundError{key}
	}
	if newer(e.seen, claim) && e.seen.ResourceVersion != claim.ResourceVersion {
		return fmt.Errorf("ResourceClaim %q is out of sync (stored: %s, assume: %s)", key, e.seen.ResourceVersion, claim.ResourceVersion)
	}
	m.count(e.seen, -1)
	e.seen = claim
	m.count(claim, 1)
	return nil
}

// AssumeCreated is Assume for a claim the scheduler has just created
// (the claim of a pod's extended resources backed by DRA): unlike Assume it
// accepts a claim the informer has not brought yet, so that its devices
// count as taken from now on (upstream polls its assume cache for up to two
// minutes instead).
func (m *Manager) AssumeCreated(claim *resourceapi.ResourceClaim) error {
	key := claim.Namespace + "/" + claim.Name
	m.mu.Lock()
	if m.claims[key] == nil {
		m.claims[key] = &claimEntry{seen: claim}
		m.count(claim, 1)
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	return m.Assume(claim)
}

// ExtendedClaim is the claim the scheduler created for pod's extended
// resources backed by DRA (annotated, controlled by the pod), nil if none.
func (m *Manager) ExtendedClaim(pod *v1.Pod) *resourceapi.ResourceClaim {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.claims {
		c := e.seen
		if c.Namespace != pod.Namespace || c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, o := range c.OwnerReferences {
			if o.UID == pod.UID && o.Name == pod.Name && ptr.Deref(o.Controller, false) {
				return c
			}
		}
	}
	return nil
}

// Forget drops claim, just deleted in the API, without waiting for the
// informer's delete event, so that the next cycles neither see it nor
// count its devices; the informer's events of it until its delete event
// are ignored.
func (m *Manager) Forget(claim *resourceapi.ResourceClaim) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := claim.Namespace + "/" + claim.Name
	if e := m.claims[key]; e != nil && e.seen.UID == claim.UID {
		m.count(e.seen, -1)
		delete(m.claims, key)
	}
	m.gone[claim.UID] = true
}

// Restore ends the assumption of namespace/name: the informer's version is
// seen again.
func (m *Manager) Restore(namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := namespace + "/" + name
	e := m.claims[key]
	if e == nil || e.seen == e.api {
		return
	}
	m.count(e.seen, -1)
	if e.api == nil { // created and assumed, not seen by the informer yet
		delete(m.claims, key)
		return
	}
	e.seen = e.api
	m.count(e.api, 1)
}

// count adds (sign 1) or removes (-1) the devices claim's allocation takes.
func (m *Manager) count(claim *resourceapi.ResourceClaim, sign int) {
	eachDevice(claim.Status.Allocation, func(id structured.DeviceID) {
		if m.devices[id] += sign; m.devices[id] <= 0 {
			delete(m.devices, id)
		}
	}, func(id structured.SharedDeviceID) {
		if m.shares[id] += sign; m.shares[id] <= 0 {
			delete(m.shares, id)
		}
	}, func(c structured.DeviceConsumedCapacity) {
		if sign > 0 {
			m.capacities.Insert(c)
		} else {
			m.capacities.Remove(c)
		}
	})
}

// eachDevice calls dedicated for each device an allocation takes for
// itself, shared and consumed for each share of a device with consumable
// capacity, as upstream's foreachAllocatedDevice with DRAConsumableCapacity
// on; admin access takes nothing.
func eachDevice(a *resourceapi.AllocationResult, dedicated func(structured.DeviceID),
	shared func(structured.SharedDeviceID), consumed func(structured.DeviceConsumedCapacity)) {
	if a == nil {
		return
	}
	for _, r := range a.Devices.Results {
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID != nil {
			shared(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				consumed(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
			continue
		}
		dedicated(id)
	}
}

// AllocatedState is what the allocator must leave alone: the devices the
// claims take and those in flight (upstream's GatherAllocatedState).
func (m *Manager) AllocatedState() structured.AllocatedState {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := structured.AllocatedState{
		AllocatedDevices:         make(sets.Set[structured.DeviceID], len(m.devices)),
		AllocatedSharedDeviceIDs: make(sets.Set[structured.SharedDeviceID], len(m.shares)),
		AggregatedCapacity:       m.capacities.Clone(),
	}
	for id := range m.devices {
		s.AllocatedDevices.Insert(id)
	}
	for id := range m.shares {
		s.AllocatedSharedDeviceIDs.Insert(id)
	}
	for _, c := range m.inFlight {
		eachDevice(c.Status.Allocation, func(id structured.DeviceID) { s.AllocatedDevices.Insert(id) },
			func(id structured.SharedDeviceID) { s.AllocatedSharedDeviceIDs.Insert(id) },
			func(c structured.DeviceConsumedCapacity) { s.AggregatedCapacity.Insert(c) })
	}
	return s
}

// InFlight returns the allocation reserved for claim uid by a pod not yet
// bound, nil if none (upstream's GetPendingAllocation).
func (m *Manager) InFlight(uid types.UID) *resourceapi.AllocationResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.inFlight[uid]; c != nil {
		return c.Status.Allocation
	}
	return nil
}

// Reserve puts claims (copies with their new allocation) in flight, all or
// none: it fails, wrapping ErrConflict, when one is in flight already, is
// allocated as seen now, or takes a device that a claim seen or in flight
// takes (a pod in a concurrent cycle got there first).
func (m *Manager) Reserve(claims []*resourceapi.ResourceClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	taken := map[structured.DeviceID]bool{}
	takenShare := map[structured.SharedDeviceID]bool{}
	for _, c := range m.inFlight {
		eachDevice(c.Status.Allocation, func(id structured.DeviceID) { taken[id] = true },
			func(id structured.SharedDeviceID) { takenShare[id] = true }, func(structured.DeviceConsumedCapacity) {})
	}
	var conflict error
	for _, c := range claims {
		if m.inFlight[c.UID] != nil {
			return fmt.Errorf("resource claim %s/%s: %w: already being allocated for another pod", c.Namespace, c.Name, ErrConflict)
		}
		if e := m.claims[c.Namespace+"/"+c.Name]; e != nil && e.seen.UID == c.UID && e.seen.Status.Allocation != nil {
			return fmt.Errorf("resource claim %s/%s: %w: allocated meanwhile", c.Namespace, c.Name, ErrConflict)
		}
		eachDevice(c.Status.Allocation, func(id structured.DeviceID) {
			if conflict == nil && (taken[id] || m.devices[id] > 0) {
				conflict = fmt.Errorf("resource claim %s/%s: %w: device %s was taken meanwhile", c.Namespace, c.Name, ErrConflict, id)
			}
			taken[id] = true
		}, func(id structured.SharedDeviceID) {
			if conflict == nil && (takenShare[id] || m.shares[id] > 0) {
				conflict = fmt.Errorf("resource claim %s/%s: %w: device share %s was taken meanwhile", c.Namespace, c.Name, ErrConflict, id)
			}
			takenShare[id] = true
		}, func(structured.DeviceConsumedCapacity) {})
		if conflict != nil {
			return conflict
		}
	}
	for _, c := range claims {
		m.inFlight[c.UID] = c
	}
	return nil
}

// Release takes the claims of uids out of flight (upstream's
// MaybeRemoveClaimPendingAllocation): after PreBind wrote and assumed
// them, or in Unreserve.
func (m *Manager) Release(uids ...types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, uid := range uids {
		delete(m.inFlight, uid)
	}
}

// classLister reads DeviceClasses; a nil lister reads as none.
type classLister struct {
	l resourcelisters.DeviceClassLister
}

func (c classLister) List() ([]*resourceapi.DeviceClass, error) {
	if c.l == nil {
		return nil, nil
	}
	return c.l.List(labels.Everything())
}

func (c classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c.l == nil {
		return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
	}
	return c.l.Get(name)
}

// shared are the Managers by the store of their claim informer (Shared).
var (
	sharedMu sync.Mutex
	shared   = map[toolscache.Indexer]*Manager{}
)

// Shared returns the Manager of o.Claims, built on first use: every profile
// built over the same informers shares it. A nil o.Claims gets a Manager of
// its own each time.
//
// The informer is recognised by its store: client-go's typed informers
// (v0.37) wrap the shared informer anew on every Informer() call, and two
// handles on one informer compare unequal.
func Shared(o Options) (*Manager, error) {
	if o.Claims == nil {
		return New(o)
	}
	key := o.Claims.GetIndexer()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if m := shared[key]; m != nil {
		return m, nil
	}
	m, err := New(o)
	if err != nil {
		return nil, err
	}
	shared[key] = m
	return m, nil
}
