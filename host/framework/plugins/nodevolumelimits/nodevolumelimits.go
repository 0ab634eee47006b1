// Package nodevolumelimits is upstream's NodeVolumeLimits plugin (CSILimits,
// pkg/scheduler/framework/plugins/nodevolumelimits): at PreFilter and
// Filter, the pod's new volumes of each CSI driver plus those attached to
// the node must stay within the node's CSINode limit (Unschedulable,
// ReasonMaxVolumeCount). Default profile, filter only.
package nodevolumelimits

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
)

// ReasonMaxVolumeCount is upstream's NodeVolumeLimits reason.
const ReasonMaxVolumeCount = "node(s) exceed max volume count"

var statusMaxVolumeCount = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginNodeVolumeLimits,
	Reasons: []string{ReasonMaxVolumeCount}}

// discard is the logger csi-translation-lib logs to; its translations of
// the migrated in-tree volumes here do not log.
var discard = logr.Discard()

// nodeVolumeLimits is upstream v1.37's NodeVolumeLimits plugin (CSILimits):
// a node's CSINode says how many volumes each CSI driver may attach to it
// (spec.drivers[].allocatable.count); the pod's new volumes of a driver
// plus those already attached must stay within it: Unschedulable
// (ReasonMaxVolumeCount), since evicting pods frees volumes.
//
// A volume counts under its CSI driver by a unique name, driver/handle, so
// a volume two pods share counts once: a claim bound to a CSI PV (its
// driver and volume handle); an unbound claim (the provisioner of its
// class, a handle made from the claim's name); a generic ephemeral volume
// (its claim, which must belong to the pod); an in-tree volume or PV whose
// plugin migrated to CSI (awsElasticBlockStore, gcePersistentDisk,
// azureDisk, cinder, portworx), translated by k8s.io/csi-translation-lib,
// on nodes that have a CSINode. Attached are the volumes of the pods on the
// node and the node's VolumeAttachments of CSI PVs. Inline CSI volumes are
// not counted, as upstream. A node without a CSINode, or without a limit
// for the pod's drivers, has no limit.
//
// With VolumeLimitScaling (beta, on in v1.37), a node whose CSINode does not
// list the driver of a new volume is Unschedulable ("<driver> CSI driver is
// not installed on the node") when the driver's CSIDriver sets
// preventPodSchedulingIfMissing.
//
// A claim of the pod that cannot be read rejects every node
// UnschedulableAndUnresolvable (`looking up PVC ns/x: persistentvolumeclaim
// "x" not found`) when missing, with an Error otherwise; claims of the pods
// already on the node that cannot be read are not counted.
//
// Unlike upstream, the pod's volumes are resolved once in PreFilter, not per
// node, and the pods on a node are looked at only when its CSINode limits a
// driver of the pod's volumes (upstream also reports an Error for a
// malformed volume of such a pod when no limit applies).
type nodeVolumeLimits struct {
	listers framework.Listers
	// volumePrefix makes the handles of unbound claims (upstream's
	// randomVolumeIDPrefix): unique, and the same for the pod and for the
	// pods on the node.
	volumePrefix string
}

var _ framework.PreFilterPlugin = (*nodeVolumeLimits)(nil)

func newNodeVolumeLimits(l framework.Listers) *nodeVolumeLimits {
	return &nodeVolumeLimits{listers: l, volumePrefix: rand.String(32)}
}

func (*nodeVolumeLimits) Name() string { return abi.PluginNodeVolumeLimits }

// csiTranslator translates in-tree volumes to CSI; it has no state.
var csiTranslator = csitrans.New()

// csiVolume is a volume counted under a CSI driver, or, with st set, the
// status of a volume that failed to resolve.
type csiVolume struct {
	id     string // driver/handle
	driver string
	// migrated: the volume is counted only on a node with a CSINode
	// (upstream's isCSIMigrationOn is false without one).
	migrated bool
	st       *framework.Status
}

func (pl *nodeVolumeLimits) PreFilter(pi *cache.PodInfo, _ *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	pod := pi.Pod
	counted := false
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || csiTranslator.IsInlineMigratable(v) {
			counted = true
			break
		}
	}
	if !counted {
		return nil, nil, nil
	}
	f := &limitsFilter{pl: pl, vols: pl.podVolumes(pod, true)}
	if len(f.vols) == 0 {
		return nil, nil, nil
	}
	for _, v := range f.vols {
		if v.st != nil || v.driver == "" {
			continue
		}
		if _, ok := f.optIn[v.driver]; ok {
			continue
		}
		if f.optIn == nil {
			f.optIn = make(map[string]*framework.Status)
		}
		f.optIn[v.driver] = driverOptIn(pl.listers, v.driver)
	}
	return f, nil, nil
}

// statusOptIn marks a driver whose CSIDriver prevents scheduling to nodes
// without it (driverOptIn); never returned.
var statusOptIn = &framework.Status{}

// driverOptIn is nil when driver's CSIDriver lets pods go to nodes without
// the driver (or there is none), statusOptIn when it does not, an Error
// when it cannot be read (upstream's checkCSIDriverOnNode).
func driverOptIn(l framework.Listers, driver string) *framework.Status {
	d, err := l.CSIDriver(driver)
	if err != nil {
		if st := framework.LookupStatus(abi.PluginNodeVolumeLimits, err); st.Code == framework.Error {
			st.Err = fmt.Errorf("error getting CSIDriver for provider %s: %w", driver, err)
			return st
		}
		return nil
	}
	if p := d.Spec.PreventPodSchedulingIfMissing; p != nil && *p {
		return statusOptIn
	}
	return nil
}

// podVolumes resolves pod's counted volumes, in order (upstream's
// filterAttachableVolumes for a node with a CSINode; volumes marked
// migrated are left out on one without). For the pod being scheduled
// (newPod) a claim that cannot be read is an error; for a pod on the node it
// is not counted. A volume that fails to resolve is returned with its status
// and ends the list.
func (pl *nodeVolumeLimits) podVolumes(pod *v1.Pod, newPod bool) []csiVolume {
	var out []csiVolume
	fail := func(err error) []csiVolume {
		return append(out, csiVolume{st: &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeVolumeLimits, Err: err}})
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var claim string
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claim = ephemeral.VolumeClaimName(pod, vol)
		default:
			v, err := pl.inlineVolume(vol, pod.Namespace)
			if err != nil {
				return fail(err)
			}
			if v.id != "" || v.st != nil {
				out = append(out, v)
			}
			continue
		}
		if claim == "" {
			return fail(errors.New("PersistentVolumeClaim had no name"))
		}
		pvc, err := pl.listers.PVC(pod.Namespace, claim)
		if err != nil {
			if newPod {
				return append(out, csiVolume{st: framework.LookupStatus(abi.PluginNodeVolumeLimits,
					fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, claim, err))})
			}
			continue
		}
		if vol.Ephemeral != nil {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return fail(err)
			}
		}
		if v := pl.claimVolume(pvc); v.id != "" {
			out = append(out, v)
		}
	}
	return out
}

// inlineVolume is an inline in-tree volume migrated to CSI (upstream's
// checkAttachableInlineVolume): zero for other volumes, an error for one
// whose plugin cannot be named; a translation failure is the volume's
// status, since upstream translates only on nodes with a CSINode.
func (pl *nodeVolumeLimits) inlineVolume(vol *v1.Volume, ns string) (csiVolume, error) {
	if !csiTranslator.IsInlineMigratable(vol) {
		return csiVolume{}, nil
	}
	plugin, err := csiTranslator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return csiVolume{}, fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	if !csiMigrationOn(plugin) {
		return csiVolume{}, nil
	}
	failed := func(err error) csiVolume {
		return csiVolume{migrated: true, st: &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeVolumeLimits, Err: err}}
	}
	pv, err := csiTranslator.TranslateInTreeInlineVolumeToCSI(discard, vol, ns)
	if err != nil || pv == nil {
		return failed(fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)), nil
	}
	driver, err := csiTranslator.GetCSINameFromInTreeName(plugin)
	if err != nil {
		return failed(fmt.Errorf("looking up CSI driver name for provisioner %s: %w", plugin, err)), nil
	}
	if pv.Spec.CSI == nil {
		return csiVolume{}, nil
	}
	return csiVolume{id: driver + "/" + pv.Spec.CSI.VolumeHandle, driver: driver, migrated: true}, nil
}

// claimVolume is the volume of pvc (upstream's getCSIDriverInfo): its PV's
// CSI driver and handle, translated from an in-tree PV; the provisioner of
// its class when unbound or its PV cannot be read; zero when not counted.
func (pl *nodeVolumeLimits) claimVolume(pvc *v1.PersistentVolumeClaim) csiVolume {
	if pvc.Spec.VolumeName == "" {
		return pl.classVolume(pvc)
	}
	pv, err := pl.listers.PV(pvc.Spec.VolumeName)
	if err != nil {
		return pl.classVolume(pvc)
	}
	src, migrated := pv.Spec.CSI, false
	if src == nil {
		if !csiTranslator.IsPVMigratable(pv) {
			return csiVolume{}
		}
		plugin, err := csiTranslator.GetInTreePluginNameFromSpec(pv, nil)
		if err != nil || !csiMigrationOn(plugin) {
			return csiVolume{}
		}
		csiPV, err := csiTranslator.TranslateInTreePVToCSI(discard, pv)
		if err != nil || csiPV.Spec.CSI == nil {
			return csiVolume{}
		}
		src, migrated = csiPV.Spec.CSI, true
	}
	if src.Driver == "" || src.VolumeHandle == "" {
		return csiVolume{}
	}
	return csiVolume{id: src.Driver + "/" + src.VolumeHandle, driver: src.Driver, migrated: migrated}
}

// classVolume is an unbound claim's volume to be (upstream's
// getCSIDriverInfoFromSC).
func (pl *nodeVolumeLimits) classVolume(pvc *v1.PersistentVolumeClaim) csiVolume {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return csiVolume{}
	}
	sc, err := pl.listers.StorageClass(name)
	if err != nil {
		return csiVolume{}
	}
	handle := pl.volumePrefix + "-" + pvc.Namespace + "/" + pvc.Name
	driver, migrated := sc.Provisioner, false
	if csiTranslator.IsMigratableIntreePluginByName(driver) {
		if !csiMigrationOn(driver) {
			return csiVolume{}
		}
		if driver, err = csiTranslator.GetCSINameFromInTreeName(driver); err != nil {
			return csiVolume{}
		}
		migrated = true
	}
	if driver == "" {
		return csiVolume{}
	}
	return csiVolume{id: driver + "/" + handle, driver: driver, migrated: migrated}
}

// csiMigrationOn is upstream's isCSIMigrationOn for a node with a CSINode:
// the in-tree plugins whose migration to CSI is GA and on.
func csiMigrationOn(plugin string) bool {
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.PortworxVolumePluginName, csiplugins.GCEPDInTreePluginName,
		csiplugins.AzureDiskInTreePluginName, csiplugins.CinderInTreePluginName:
		return true
	}
	return false
}

// limitsFilter is the pod's state: its counted volumes, the opt-in of
// their drivers' CSIDrivers (driverOptIn), and the VolumeAttachments by
// node, listed once, by the first node that counts (attachOnce), since
// most pods meet no node that limits their drivers.
type limitsFilter struct {
	pl    *nodeVolumeLimits
	vols  []csiVolume
	optIn map[string]*framework.Status

	attachOnce  sync.Once
	attachments map[string][]*storagev1.VolumeAttachment
	attachErr   *framework.Status
}

func (f *limitsFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	csiNode := f.pl.listers.CSINode(ni.Name())
	counted := false
	for i := range f.vols {
		v := &f.vols[i]
		if v.migrated && csiNode == nil {
			continue
		}
		if v.st != nil {
			return v.st
		}
		counted = true
	}
	if !counted {
		return nil
	}
	limited := false
	for i := range f.vols {
		v := &f.vols[i]
		if v.migrated && csiNode == nil {
			continue
		}
		switch st := f.optIn[v.driver]; {
		case st == statusOptIn:
			if !csiNodeHas(csiNode, v.driver) {
				return &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginNodeVolumeLimits,
					Reasons: []string{v.driver + " CSI driver is not installed on the node"}}
			}
		case st != nil:
			return st
		}
		if _, ok := csiLimit(csiNode, v.driver); ok {
			limited = true
		}
	}
	if !limited {
		return nil
	}
	return f.count(ni, csiNode)
}

// count checks the node's limits with the volumes already attached
// (csiNode is not nil).
func (f *limitsFilter) count(ni *cache.NodeInfo, csiNode *storagev1.CSINode) *framework.Status {
	attached := map[string]string{}
	for _, pi := range ni.Pods() {
		for _, v := range f.pl.podVolumes(pi.Pod, false) {
			if v.st != nil {
				return v.st
			}
			attached[v.id] = v.driver
		}
	}
	used := map[string]int{}
	for _, driver := range attached {
		used[driver]++
	}
	f.attachOnce.Do(func() {
		var err error
		if f.attachments, err = f.pl.listers.VolumeAttachmentsByNode(); err != nil {
			f.attachErr = &framework.Status{Code: framework.Error, Plugin: abi.PluginNodeVolumeLimits, Err: err}
		}
	})
	if f.attachErr != nil {
		return f.attachErr
	}
	for _, va := range f.attachments[ni.Name()] {
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv, err := f.pl.listers.PV(*va.Spec.Source.PersistentVolumeName)
		if err != nil || pv.Spec.CSI == nil {
			continue
		}
		if _, ok := attached[va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle]; !ok {
			used[va.Spec.Attacher]++
		}
	}
	added := map[string]int{}
	seen := map[string]bool{}
	for _, v := range f.vols {
		if seen[v.id] {
			continue
		}
		seen[v.id] = true
		if _, ok := attached[v.id]; !ok {
			added[v.driver]++
		}
	}
	for driver, n := range added {
		if limit, ok := csiLimit(csiNode, driver); ok && used[driver]+n > int(limit) {
			return statusMaxVolumeCount
		}
	}
	return nil
}

// csiLimit is the number of volumes of driver the node's CSINode allows,
// if it sets one.
func csiLimit(n *storagev1.CSINode, driver string) (int32, bool) {
	if n == nil {
		return 0, false
	}
	for i := range n.Spec.Drivers {
		d := &n.Spec.Drivers[i]
		if d.Name == driver && d.Allocatable != nil && d.Allocatable.Count != nil {
			return *d.Allocatable.Count, true
		}
	}
	return 0, false
}

func csiNodeHas(n *storagev1.CSINode, driver string) bool {
	if n == nil {
		return false
	}
	for i := range n.Spec.Drivers {
		if n.Spec.Drivers[i].Name == driver {
			return true
		}
	}
	return false
}

// Row is NodeVolumeLimits' registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginNodeVolumeLimits, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter), Default: true,
		New: func(h framework.Handle, _ any) (framework.Plugin, error) {
			return newNodeVolumeLimits(h.Listers()), nil
		}}
}
