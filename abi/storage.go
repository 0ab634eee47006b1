package abi

// Storage object record layout (ABI minor 1), one layout for the seven
// storage kinds and (minor 2) the four DRA kinds; the event's resource says
// which kind it is, and a field a kind does not have is zero:
//
//	  8 u32 flags (storageNodeAffinity, storageCapacityTracking, storageHasCapacity,
//	              storageAllocated (minor 2))
//	 12 u32 phase (PV, PVC)       16 u32 binding mode (StorageClass)
//	 20 u32 reservedFor count (ResourceClaim, minor 2; reserved before)
//	 24 i64 capacity (CSIStorageCapacity)
//	 32 namespace  40 name  48 storage class  56 volume name  64 claim namespace
//	 72 claim name  80 node name  88 driver  96 migrated plugins        (strings)
//	104 labels [kv]  112 topology [term]  120 drivers [csiDriver]
//	128 pool (str)  136 device classes [str]                           (minor 2)
//
//	csiDriver 16: name str, i32 allocatable count, u32 flags (csiAllocatable)
//
// What each kind fills in:
//
//	PersistentVolume       name, storage class, claim namespace/name (spec.claimRef),
//	                       phase, labels, topology (spec.nodeAffinity.required),
//	                       storageNodeAffinity, driver (spec.csi.driver)
//	PersistentVolumeClaim  namespace, name, storage class (spec.storageClassName),
//	                       volume name (spec.volumeName), phase, node name (the
//	                       volume.kubernetes.io/selected-node annotation)
//	StorageClass           name, driver (provisioner), binding mode, topology
//	                       (allowedTopologies, as In requirements)
//	CSINode                name (the node's), node name (same), migrated plugins
//	                       (the storage.alpha.kubernetes.io/migrated-plugins
//	                       annotation), drivers (spec.drivers with allocatable counts)
//	CSIDriver              name, storageCapacityTracking (spec.storageCapacity)
//	CSIStorageCapacity     namespace, name, storage class, capacity and
//	                       storageHasCapacity (the volume limit: maximumVolumeSize
//	                       when set, else capacity; flag clear when neither is)
//	VolumeAttachment       name, node name (spec.nodeName), driver (spec.attacher),
//	                       volume name (spec.source.persistentVolumeName)
//	ResourceClaim          namespace, name, storageAllocated (status.allocation
//	                       set), reservedFor count, device classes (the classes
//	                       its requests and their firstAvailable subrequests name)
//	ResourceSlice          name, driver, pool (spec.pool.name), node name
//	                       (spec.nodeName)
//	DeviceClass            name
//	DeviceTaintRule        name, driver and pool (spec.deviceSelector's)
//
// One layout rather than seven keeps the codec, its fuzz test and the guest
// binary small; the fields are what the QueueingHints of upstream's volume
// plugins read (docs/RATIONALE.md).
const (
	storageFlags       = 8
	storagePhase       = 12
	storageBindingMode = 16
	storageCapacity    = 24
	storageNamespace   = 32
	storageName        = 40
	storageClass       = 48
	storageVolumeName  = 56
	storageClaimNS     = 64
	storageClaimName   = 72
	storageNodeName    = 80
	storageDriver      = 88
	storageMigrated    = 96
	storageLabels      = 104
	storageTopology    = 112
	storageDrivers     = 120
	storageReservedFor = 20
	storagePool        = 128
	storageClassesList = 136
	storageFixed       = 144

	storageNodeAffinity     = 1 << 0
	storageCapacityTracking = 1 << 1
	storageHasCapacity      = 1 << 2
	storageAllocated        = 1 << 3

	csiDriverSize  = 16
	csiAllocatable = 1 << 0
)

// VolumePhase is the status.phase of a PersistentVolume or claim.
type VolumePhase uint32

const (
	// PhaseNone: no phase reported yet.
	PhaseNone VolumePhase = iota
	PhasePending
	PhaseAvailable
	PhaseBound
	PhaseReleased
	PhaseFailed
	PhaseLost
	PhaseUnknown VolumePhase = 0xFFFFFFFF
)

// BindingMode is a StorageClass's volumeBindingMode.
type BindingMode uint32

const (
	// BindingImmediate is the API's default.
	BindingImmediate BindingMode = iota
	BindingWaitForFirstConsumer
	BindingUnknown BindingMode = 0xFFFFFFFF
)

// StorageObject is what a policy sees of a storage object in an event: a
// PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver,
// CSIStorageCapacity or VolumeAttachment (see the layout above for which
// fields each fills in).
type StorageObject struct {
	Namespace, Name string
	// StorageClass is the class of a volume, claim or capacity.
	StorageClass string
	// VolumeName is a claim's spec.volumeName, or the PersistentVolume a
	// VolumeAttachment attaches.
	VolumeName string
	// ClaimNamespace and ClaimName are a volume's spec.claimRef.
	ClaimNamespace, ClaimName string
	// NodeName is a claim's selected node, a VolumeAttachment's or a CSINode's node.
	NodeName string
	// Driver is a StorageClass's provisioner, a VolumeAttachment's attacher,
	// or a CSI volume's driver.
	Driver string
	// MigratedPlugins is a CSINode's migrated-plugins annotation.
	MigratedPlugins string

	Phase       VolumePhase
	BindingMode BindingMode
	// NodeAffinity: a volume with a required node affinity (its terms are Topology).
	NodeAffinity bool
	// CapacityTracking is a CSIDriver's spec.storageCapacity.
	CapacityTracking bool
	// HasCapacity says whether Capacity (bytes) is set.
	HasCapacity bool
	Capacity    int64

	Labels []KV
	// Topology is a volume's required node affinity or a class's allowed
	// topologies (each term's requirements ANDed, the terms ORed).
	Topology []NodeSelectorTerm
	// Drivers are a CSINode's drivers.
	Drivers []CSIDriverLimit

	// The DRA kinds (ABI minor 2; zero from an older host).
	// Allocated: a ResourceClaim with status.allocation; ReservedFor is the
	// length of its status.reservedFor.
	Allocated   bool
	ReservedFor int32
	// Pool is a ResourceSlice's or DeviceTaintRule's pool name.
	Pool string
	// DeviceClasses are the classes a ResourceClaim's requests name.
	DeviceClasses []string
}

// CSIDriverLimit is one driver of a CSINode and how many volumes of it the
// node can attach (HasAllocatable false: no limit reported).
type CSIDriverLimit struct {
	Name           string
	Allocatable    int32
	HasAllocatable bool
}

// AppendStorage appends the record of o to dst.
func AppendStorage(dst []byte, o *StorageObject) []byte {
	b := beginRecord(dst, TagStorage, storageFixed)
	b.putU32(storageFlags, boolBit(o.NodeAffinity, storageNodeAffinity)|
		boolBit(o.CapacityTracking, storageCapacityTracking)|boolBit(o.HasCapacity, storageHasCapacity)|
		boolBit(o.Allocated, storageAllocated))
	b.putU32(storagePhase, uint32(o.Phase))
	b.putU32(storageReservedFor, uint32(o.ReservedFor))
	b.putU32(storageBindingMode, uint32(o.BindingMode))
	b.putI64(storageCapacity, o.Capacity)
	b.str(storageNamespace, o.Namespace)
	b.str(storageName, o.Name)
	b.str(storageClass, o.StorageClass)
	b.str(storageVolumeName, o.VolumeName)
	b.str(storageClaimNS, o.ClaimNamespace)
	b.str(storageClaimName, o.ClaimName)
	b.str(storageNodeName, o.NodeName)
	b.str(storageDriver, o.Driver)
	b.str(storageMigrated, o.MigratedPlugins)
	b.appendKVs(b.start+storageLabels, o.Labels)
	at := b.list(storageTopology, len(o.Topology), termSize)
	for i := range o.Topology {
		b.appendRequirements(at+i*termSize, o.Topology[i].MatchExpressions)
		b.appendRequirements(at+i*termSize+8, o.Topology[i].MatchFields)
	}
	at = b.list(storageDrivers, len(o.Drivers), csiDriverSize)
	for i := range o.Drivers {
		d := &o.Drivers[i]
		e := at + i*csiDriverSize
		b.strAt(e, d.Name)
		b.elemU32(e+8, uint32(d.Allocatable))
		b.elemU32(e+12, boolBit(d.HasAllocatable, csiAllocatable))
	}
	b.str(storagePool, o.Pool)
	b.appendStrings(b.start+storageClassesList, o.DeviceClasses)
	return b.finish()
}

// StorageView reads a storage object record in place (strings alias the bytes).
type StorageView struct{ r rec }

// ReadStorage checks the record header at the start of b and returns a view.
func ReadStorage(b []byte) (StorageView, error) {
	r, err := readRecord(b, TagStorage)
	return StorageView{r}, err
}

func (s StorageView) Bytes() []byte            { return s.r.b }
func (s StorageView) Namespace() string        { return s.r.str(storageNamespace) }
func (s StorageView) Name() string             { return s.r.str(storageName) }
func (s StorageView) StorageClass() string     { return s.r.str(storageClass) }
func (s StorageView) VolumeName() string       { return s.r.str(storageVolumeName) }
func (s StorageView) ClaimNamespace() string   { return s.r.str(storageClaimNS) }
func (s StorageView) ClaimName() string        { return s.r.str(storageClaimName) }
func (s StorageView) NodeName() string         { return s.r.str(storageNodeName) }
func (s StorageView) Driver() string           { return s.r.str(storageDriver) }
func (s StorageView) MigratedPlugins() string  { return s.r.str(storageMigrated) }
func (s StorageView) Phase() VolumePhase       { return VolumePhase(s.r.u32(storagePhase)) }
func (s StorageView) BindingMode() BindingMode { return BindingMode(s.r.u32(storageBindingMode)) }
func (s StorageView) NodeAffinity() bool       { return s.r.u32(storageFlags)&storageNodeAffinity != 0 }
func (s StorageView) CapacityTracking() bool {
	return s.r.u32(storageFlags)&storageCapacityTracking != 0
}

// Capacity returns the volume limit of a CSIStorageCapacity, and false when
// it has none.
func (s StorageView) Capacity() (int64, bool) {
	if s.r.u32(storageFlags)&storageHasCapacity == 0 {
		return 0, false
	}
	return s.r.i64(storageCapacity), true
}

// Allocated reports a ResourceClaim with status.allocation (minor 2).
func (s StorageView) Allocated() bool { return s.r.u32(storageFlags)&storageAllocated != 0 }

// ReservedFor is the length of a ResourceClaim's status.reservedFor (minor 2).
func (s StorageView) ReservedFor() int32 { return int32(s.r.u32(storageReservedFor)) }

// Pool is a ResourceSlice's or DeviceTaintRule's pool (minor 2).
func (s StorageView) Pool() string { return s.r.str(storagePool) }

// DeviceClasses are the classes a ResourceClaim's requests name (minor 2).
func (s StorageView) DeviceClasses() StrList { return StrList{s.r.list(storageClassesList, strSize)} }

func (s StorageView) Labels() KVList     { return KVList{s.r.list(storageLabels, kvSize)} }
func (s StorageView) Topology() TermList { return TermList{s.r.list(storageTopology, termSize)} }
func (s StorageView) Drivers() CSIDriverList {
	return CSIDriverList{s.r.list(storageDrivers, csiDriverSize)}
}

// CSIDriverList is a CSINode's drivers.
type CSIDriverList struct{ l list }

func (d CSIDriverList) Len() int { return d.l.len() }
func (d CSIDriverList) At(i int) CSIDriverLimit {
	return CSIDriverLimit{Name: d.l.str(i, 0), Allocatable: int32(d.l.u32(i, 8)), HasAllocatable: d.l.u32(i, 12)&csiAllocatable != 0}
}

// Allocatable returns the allocatable count of driver name (0 when the node
// does not list it or reports no count, as upstream reads a missing count).
func (d CSIDriverList) Allocatable(name string) int32 {
	for i := 0; i < d.Len(); i++ {
		if d.l.str(i, 0) == name {
			return int32(d.l.u32(i, 8))
		}
	}
	return 0
}

// Decode copies the whole record into dst, reusing dst's slices, and reports
// the first malformed field.
func (s StorageView) Decode(dst *StorageObject) error {
	r := s.r
	bud := newBudget(r)
	if err := checkRefs(r, TagStorage, &bud, strRefs{
		{"namespace", storageNamespace}, {"name", storageName}, {"storage class", storageClass},
		{"volume name", storageVolumeName}, {"claim namespace", storageClaimNS}, {"claim name", storageClaimName},
		{"node name", storageNodeName}, {"driver", storageDriver}, {"migrated plugins", storageMigrated},
		{"pool", storagePool},
	}); err != nil {
		return err
	}
	capacity, hasCap := s.Capacity()
	labels, drivers, topology, classes := dst.Labels, dst.Drivers[:0], dst.Topology[:0], dst.DeviceClasses
	*dst = StorageObject{
		Namespace: clone(s.Namespace()), Name: clone(s.Name()), StorageClass: clone(s.StorageClass()),
		VolumeName: clone(s.VolumeName()), ClaimNamespace: clone(s.ClaimNamespace()), ClaimName: clone(s.ClaimName()),
		NodeName: clone(s.NodeName()), Driver: clone(s.Driver()), MigratedPlugins: clone(s.MigratedPlugins()),
		Phase: s.Phase(), BindingMode: s.BindingMode(), NodeAffinity: s.NodeAffinity(),
		CapacityTracking: s.CapacityTracking(), HasCapacity: hasCap, Capacity: capacity,
		Allocated: s.Allocated(), ReservedFor: s.ReservedFor(), Pool: clone(s.Pool()),
	}
	var err error
	if dst.Labels, err = decodeKVs(r, &bud, storageLabels, "labels", labels); err != nil {
		return err
	}
	tl, err := checkedList(r, &bud, storageTopology, termSize, "topology")
	if err != nil {
		return err
	}
	for i := 0; i < tl.len(); i++ {
		var t NodeSelectorTerm
		if t.MatchExpressions, err = decodeRequirements(tl, i, 0, &bud, "topology"); err != nil {
			return err
		}
		if t.MatchFields, err = decodeRequirements(tl, i, 8, &bud, "topology"); err != nil {
			return err
		}
		topology = append(topology, t)
	}
	dst.Topology = topology
	dl, err := checkedList(r, &bud, storageDrivers, csiDriverSize, "drivers", 0)
	if err != nil {
		return err
	}
	for i := 0; i < dl.len(); i++ {
		d := CSIDriverList{dl}.At(i)
		d.Name = clone(d.Name)
		drivers = append(drivers, d)
	}
	dst.Drivers = drivers
	if dst.DeviceClasses, err = decodeStrs(r, &bud, storageClassesList, "device classes", classes); err != nil {
		return err
	}
	return nil
}
