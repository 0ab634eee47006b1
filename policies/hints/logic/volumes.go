package logic

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
)

// The hints of the volume plugins (VolumeBinding, VolumeRestrictions,
// VolumeZone, NodeVolumeLimits), ports of their upstream isSchedulableAfter*
// functions on the storage records of ABI minor 1. Where upstream reads
// something the records lack, or skips a change its filter can still pass
// on, these queue (the README's table says where).

var (
	errNoNewStorage = errors.New("hints: storage event without a readable new object")
	errNoOldStorage = errors.New("hints: storage update whose old object is unreadable")
	errNoStorage    = errors.New("hints: storage event without an object")
)

// storageChange returns the objects of a storage event: before (absent on
// Add) and after (absent on Delete).
func storageChange(ev abi.EventView) (old abi.StorageView, hasOld bool, obj abi.StorageView, hasNew bool, err error) {
	old, hasOld, obj, hasNew, f := ev.StorageChange()
	return old, hasOld, obj, hasNew, changeErr(f, errNoNewStorage, errNoOldStorage, errNoStorage)
}

// storageUpdate opens the hints that compare a storage object before and
// after an update: ok is false when the hint is decided without comparing,
// with abi.HintQueue and err: an unreadable object, a Delete (no new
// object: errNoNewStorage), or an Add, which answers onAdd (nil where a new
// object queues, errNoOldStorage where the hint is registered for updates
// only).
func storageUpdate(ev abi.EventView, onAdd error) (old, obj abi.StorageView, ok bool, err error) {
	old, hasOld, obj, hasNew, err := storageChange(ev)
	switch {
	case err != nil:
		return old, obj, false, err
	case !hasNew:
		return old, obj, false, errNoNewStorage
	case !hasOld:
		return old, obj, false, onAdd
	}
	return old, obj, true, nil
}

// claimChanged mirrors the PersistentVolumeClaim hints of VolumeBinding,
// VolumeZone, VolumeRestrictions and NodeVolumeLimits: Queue when the pod
// uses the claim (same namespace; a persistentVolumeClaim volume or a
// generic ephemeral volume's claim). Upstream's VolumeRestrictions and
// VolumeZone look at persistentVolumeClaim volumes only; a claim of an
// ephemeral volume queues here too.
func claimChanged(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, _, c, hasNew, err := storageChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !hasNew {
		return abi.HintQueue, errNoNewStorage
	}
	return queueIf(p.UsesClaim(c.Namespace(), c.Name())), nil
}

// hasVolumes reports whether the pod uses a claim or an inline CSI (or
// migrated in-tree) volume.
func hasVolumes(p abi.PodView) bool {
	return p.Claims().Len() > 0 || p.EphemeralClaims().Len() > 0 || p.VolumeDrivers().Len() > 0
}

// bindingAfterStorageClassChange mirrors VolumeBinding's
// isSchedulableAfterStorageClassChange: a new class queues; an update only
// when its allowedTopologies changed (the other fields a filter reads are
// immutable).
func bindingAfterStorageClassChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, sc, ok, err := storageUpdate(ev, nil)
	if !ok {
		return abi.HintQueue, err
	}
	return queueIf(!sameTerms(old.Topology(), sc.Topology())), nil
}

// bindingAfterCSINodeChange mirrors VolumeBinding's
// isSchedulableAfterCSINodeChange: a new CSINode queues; an update when its
// migrated-plugins annotation changed.
func bindingAfterCSINodeChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, n, ok, err := storageUpdate(ev, nil)
	if !ok {
		return abi.HintQueue, err
	}
	return queueIf(old.MigratedPlugins() != n.MigratedPlugins()), nil
}

// bindingAfterCSIDriverChange follows VolumeBinding's
// isSchedulableAfterCSIDriverChange: Queue when the driver stopped asking
// for capacity tracking. Upstream then queues only pods with an inline CSI
// volume of that driver; but the capacity check applies to the claims
// VolumeBinding provisions, so any pod with a claim is queued too.
func bindingAfterCSIDriverChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, d, ok, err := storageUpdate(ev, errNoOldStorage)
	if !ok {
		return abi.HintQueue, err
	}
	if !old.CapacityTracking() || d.CapacityTracking() {
		return abi.HintSkip, nil
	}
	return queueIf(p.Claims().Len() > 0 || p.EphemeralClaims().Len() > 0 || p.VolumeDrivers().Has(d.Name())), nil
}

// bindingAfterCapacityChange mirrors VolumeBinding's
// isSchedulableAfterCSIStorageCapacityChange: a new capacity queues; an
// update when the volume limit appeared or grew (and, here, when it moved to
// another class).
func bindingAfterCapacityChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, c, ok, err := storageUpdate(ev, nil)
	if !ok {
		return abi.HintQueue, err
	}
	oldLimit, hadLimit := old.Capacity()
	limit, hasLimit := c.Capacity()
	return queueIf(hasLimit && (!hadLimit || limit > oldLimit) || old.StorageClass() != c.StorageClass()), nil
}

// zoneAfterStorageClassAdded mirrors VolumeZone's
// isSchedulableAfterStorageClassAdded: Queue for a WaitForFirstConsumer class.
func zoneAfterStorageClassAdded(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	sc, ok := ev.NewStorage()
	if !ok {
		return abi.HintQueue, errNoNewStorage
	}
	return queueIf(sc.BindingMode() == abi.BindingWaitForFirstConsumer), nil
}

// zoneTopologyLabels are the PV labels VolumeZone matches against nodes.
var zoneTopologyLabels = [...]string{
	"failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
	"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
}

// zoneAfterVolumeChange mirrors VolumeZone's
// isSchedulableAfterPersistentVolumeChange: a new volume queues; an update
// when a zone or region label changed. Upstream compares the parsed zone
// sets ("a__b" lists); the raw values are compared here, which queues also
// when only their spelling changed.
func zoneAfterVolumeChange(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, pv, ok, err := storageUpdate(ev, nil)
	if !ok {
		return abi.HintQueue, err
	}
	ol, nl := old.Labels(), pv.Labels()
	for _, k := range zoneTopologyLabels {
		ov, ook := ol.Get(k)
		nv, nok := nl.Get(k)
		if ook != nok || ov != nv {
			return abi.HintQueue, nil
		}
	}
	return abi.HintSkip, nil
}

// restrictionsAfterAssignedPodDelete follows VolumeRestrictions'
// isSchedulableAfterAssignedPodDeleted: Skip a pod deleted from another
// namespace, as upstream; Queue otherwise. Upstream also skips a deleted pod
// whose volumes neither conflict with the pod's in-tree disks nor share a
// claim; the pod record does not carry in-tree disks, so that is not told.
func restrictionsAfterAssignedPodDelete(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	deleted, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	return queueIf(deleted.Namespace() == p.Namespace()), nil
}

// limitsAfterAssignedPodDelete mirrors NodeVolumeLimits'
// isSchedulableAfterAssignedPodDeleted: Queue when the deleted pod was on a
// node and used a claim or a migratable inline volume (here: any inline
// volume with a CSI driver).
func limitsAfterAssignedPodDelete(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	deleted, ok := ev.OldPod()
	if !ok {
		return abi.HintQueue, errNoOldPod
	}
	return queueIf(deleted.NodeName() != "" && hasVolumes(deleted)), nil
}

// limitsAfterVolumeAttachmentDelete mirrors NodeVolumeLimits'
// isSchedulableAfterVolumeAttachmentDeleted: Queue a pod with a claim, or an
// inline volume of the attachment's driver. Upstream counts persistentVolumeClaim
// volumes only; an ephemeral volume's claim counts against the limit too, so
// it queues here as well.
func limitsAfterVolumeAttachmentDelete(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	va, ok := ev.OldStorage()
	if !ok {
		return abi.HintQueue, errNoOldStorage
	}
	return queueIf(p.Claims().Len() > 0 || p.EphemeralClaims().Len() > 0 || p.VolumeDrivers().Has(va.Driver())), nil
}

// limitsAfterCSINodeUpdate follows NodeVolumeLimits'
// isSchedulableAfterCSINodeUpdated: Queue when a driver's limit went up.
// Upstream reads a missing count as 0 and ignores drivers that come or go;
// the filter reads a missing count as no limit, and a driver's presence can
// decide it, so here the update skips only when the node lists the same
// drivers with no count raised or removed. A change of the migrated-plugins
// annotation (which changes what counts as CSI) queues as well.
func limitsAfterCSINodeUpdate(ev abi.EventView, _ abi.PodView) (abi.Hint, error) {
	old, n, ok, err := storageUpdate(ev, errNoOldStorage)
	if !ok {
		return abi.HintQueue, err
	}
	if old.MigratedPlugins() != n.MigratedPlugins() {
		return abi.HintQueue, nil
	}
	od, nd := old.Drivers(), n.Drivers()
	if od.Len() != nd.Len() {
		return abi.HintQueue, nil
	}
	for i := range nd.Len() {
		d := nd.At(i)
		was, listed := driverLimit(od, d.Name)
		switch {
		case !listed, d.HasAllocatable != was.HasAllocatable, d.HasAllocatable && d.Allocatable > was.Allocatable:
			return abi.HintQueue, nil
		}
	}
	return abi.HintSkip, nil
}

// driverLimit returns a driver of a CSINode, and whether the node lists it.
func driverLimit(l abi.CSIDriverList, name string) (abi.CSIDriverLimit, bool) {
	for i := range l.Len() {
		if d := l.At(i); d.Name == name {
			return d, true
		}
	}
	return abi.CSIDriverLimit{}, false
}

// sameTerms compares two term lists in order, as upstream's
// equality.Semantic.DeepEqual of allowedTopologies does.
func sameTerms(a, b abi.TermList) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !sameRequirements(a.MatchExpressions(i), b.MatchExpressions(i)) ||
			!sameRequirements(a.MatchFields(i), b.MatchFields(i)) {
			return false
		}
	}
	return true
}

func sameRequirements(a, b abi.RequirementList) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if a.Key(i) != b.Key(i) || a.Operator(i) != b.Operator(i) || !sameStrs(a.Values(i), b.Values(i)) {
			return false
		}
	}
	return true
}

func sameStrs(a, b abi.StrList) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if a.At(i) != b.At(i) {
			return false
		}
	}
	return true
}
