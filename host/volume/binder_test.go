package volume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// Upstream binder_test.go's claims and volumes.
var (
	unboundPVC          = makePVC("unbound-pvc", "1G", unbound, "", waitClass)
	unboundPVC2         = makePVC("unbound-pvc2", "5G", unbound, "", waitClass)
	preboundPVC         = makePVC("prebound-pvc", "1G", prebound, "pv-node1a", waitClass)
	boundPVC            = makePVC("bound-pvc", "1G", bound, "pv-bound", waitClass)
	immediateUnboundPVC = makePVC("immediate-unbound-pvc", "1G", unbound, "", immediateClass)
	immediateBoundPVC   = makePVC("immediate-bound-pvc", "1G", bound, "pv-bound-immediate", immediateClass)
	provisionedPVC      = makePVC("provisioned-pvc", "1Gi", unbound, "", provClass)
	provisionedPVC2     = makePVC("provisioned-pvc2", "1Gi", unbound, "", provClass)
	selectedNodePVC     = makePVC("provisioned-pvc", "1Gi", selected, "", provClass)
	noProvisionerPVC    = makePVC("no-provisioner-pvc", "1Gi", unbound, "", waitClass)
	topoMismatchPVC     = makePVC("topo-mismatch-pvc", "1Gi", unbound, "", topoClass)

	pvNode1a              = makePV("pv-node1a", "node1", "5G", nil, waitClass)
	pvNode1b              = makePV("pv-node1b", "node1", "10G", nil, waitClass)
	pvNode2               = makePV("pv-node2", "node2", "1G", nil, waitClass)
	pvBound               = makePV("pv-bound", "node1", "1G", boundPVC, waitClass)
	pvNode1aBound         = makePV("pv-node1a", "node1", "5G", unboundPVC, waitClass)
	pvBoundImmediate      = makePV("pv-bound-immediate", "node1", "1G", immediateBoundPVC, immediateClass)
	pvBoundImmediateNode2 = makePV("pv-bound-immediate", "node2", "1G", immediateBoundPVC, immediateClass)
)

func objects[T runtime.Object](in ...[]T) []runtime.Object {
	var out []runtime.Object
	for _, list := range in {
		for _, o := range list {
			out = append(out, o.DeepCopyObject())
		}
	}
	return out
}

func ephemeralPod(volName string) *v1.Pod {
	p := makePod("test-pod")
	p.Spec.Volumes = []v1.Volume{{Name: volName, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}}
	return p
}

func ephemeralPVC(owned bool) *v1.PersistentVolumeClaim {
	pvc := makePVC("test-pod-test-volume", "1G", bound, "pv-bound", immediateClass)
	if owned {
		pvc.OwnerReferences = []metav1.OwnerReference{{Name: "test-pod", UID: "uid-test-pod", Controller: ptr.To(true)}}
	}
	return pvc
}

// TestClaims is upstream's PreFilter checks (podHasPVCs,
// GetPodVolumeClaims): how a pod's claims are sorted or why it is rejected.
func TestClaims(t *testing.T) {
	noMode := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "no-mode"}}
	lost := makePVC("lost", "1G", bound, "pv-gone", waitClass)
	lost.Status.Phase = v1.ClaimLost
	deleting := makePVC("deleting", "1G", unbound, "", waitClass)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	deleting.Finalizers = []string{"kubernetes.io/pvc-protection"}
	tests := []struct {
		name        string
		pod         *v1.Pod
		objs        []runtime.Object
		wantNil     bool
		wantReject  string
		wantErr     string
		wantBound   []string
		wantDelayed []string
	}{
		{name: "no volumes", pod: makePod("p"), wantNil: true},
		{name: "no claims", pod: func() *v1.Pod {
			p := makePod("p")
			p.Spec.Volumes = []v1.Volume{{Name: "e", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
			return p
		}(), wantNil: true},
		{name: "claim not found", pod: makePod("p", "pvc-a"), wantReject: `persistentvolumeclaim "pvc-a" not found`},
		{name: "part of the claims not found", pod: makePod("p", "bound-pvc", "pvc-b"), objs: objects([]*v1.PersistentVolumeClaim{boundPVC}),
			wantReject: `persistentvolumeclaim "pvc-b" not found`},
		{name: "lost", pod: makePod("p", "lost"), objs: objects([]*v1.PersistentVolumeClaim{lost}),
			wantReject: `persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-gone"`},
		{name: "being deleted", pod: makePod("p", "deleting"), objs: objects([]*v1.PersistentVolumeClaim{deleting}),
			wantReject: `persistentvolumeclaim "deleting" is being deleted`},
		{name: "immediate unbound", pod: makePod("p", "immediate-unbound-pvc"), objs: objects([]*v1.PersistentVolumeClaim{immediateUnboundPVC}),
			wantReject: ReasonUnboundImmediate},
		{name: "immediate unbound beside a bound delayed one", pod: makePod("p", "immediate-unbound-pvc", "bound-pvc"),
			objs: objects([]*v1.PersistentVolumeClaim{immediateUnboundPVC, boundPVC}), wantReject: ReasonUnboundImmediate},
		{name: "pre-bound counts as immediate", pod: makePod("p", "prebound-pvc"), objs: objects([]*v1.PersistentVolumeClaim{preboundPVC}),
			wantReject: ReasonUnboundImmediate},
		{name: "class not found is immediate", pod: makePod("p", "c"),
			objs: objects([]*v1.PersistentVolumeClaim{makePVC("c", "1G", unbound, "", "missing")}), wantReject: ReasonUnboundImmediate},
		{name: "class without binding mode", pod: makePod("p", "c"),
			objs:    []runtime.Object{noMode, makePVC("c", "1G", unbound, "", "no-mode")},
			wantErr: `VolumeBindingMode not set for StorageClass "no-mode"`},
		{name: "ephemeral without claim", pod: ephemeralPod("no-such-pvc"),
			wantReject: `waiting for ephemeral volume controller to create the persistentvolumeclaim "test-pod-no-such-pvc"`},
		{name: "ephemeral claim of another owner", pod: ephemeralPod("test-volume"), objs: objects([]*v1.PersistentVolumeClaim{ephemeralPVC(false)}),
			wantReject: "PVC testns/test-pod-test-volume was not created for pod testns/test-pod (pod is not owner)"},
		{name: "ephemeral claim owned and bound", pod: ephemeralPod("test-volume"), objs: objects([]*v1.PersistentVolumeClaim{ephemeralPVC(true)}),
			wantBound: []string{"test-pod-test-volume"}},
		{name: "bound and unbound delayed", pod: makePod("p", "bound-pvc", "unbound-pvc"),
			objs:      objects([]*v1.PersistentVolumeClaim{boundPVC, unboundPVC}),
			wantBound: []string{"bound-pvc"}, wantDelayed: []string{"unbound-pvc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{}, tc.objs...)
			pc, err := e.binder.Claims(tc.pod)
			switch {
			case tc.wantReject != "":
				if err == nil || !errors.Is(err, ErrRejected) || err.Error() != tc.wantReject {
					t.Fatalf("Claims error = %v, want the rejection %q", err, tc.wantReject)
				}
				return
			case tc.wantErr != "":
				if err == nil || errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Claims error = %v, want an internal error with %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("Claims: %v", err)
			}
			if tc.wantNil != (pc == nil) {
				t.Fatalf("Claims = %+v, want nil: %v", pc, tc.wantNil)
			}
			if pc == nil {
				return
			}
			names := func(l []*v1.PersistentVolumeClaim) []string {
				var out []string
				for _, c := range l {
					out = append(out, c.Name)
				}
				return out
			}
			if diff := cmp.Diff(tc.wantBound, names(pc.Bound)); diff != "" {
				t.Errorf("bound (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDelayed, names(pc.Delayed)); diff != "" {
				t.Errorf("delayed (-want, +got):\n%s", diff)
			}
		})
	}
}

// findScenario is one of upstream's FindPodVolumes scenarios.
type findScenario struct {
	pvs  []*v1.PersistentVolume
	pvcs []*v1.PersistentVolumeClaim
	pod  *v1.Pod // nil: a pod with pvcs
	// extra objects (CSINodes, capacities)
	objs []runtime.Object
	node *v1.Node // nil: node1

	wantStatic  []string // "pvc=pv"
	wantDynamic []string // claim names
	wantReasons []string
	wantErr     bool
	// needsCapacity: with a CSIDriver tracking capacity (and no
	// CSIStorageCapacity), the claims to provision find no room.
	needsCapacity bool
}

func (s findScenario) run(t *testing.T, driver *storagev1.CSIDriver) {
	objs := append(objects(s.pvs, nil), objects(s.pvcs)...)
	objs = append(objs, s.objs...)
	if driver != nil {
		objs = append(objs, driver)
	}
	e := newEnv(t, Options{}, objs...)
	pod := s.pod
	if pod == nil {
		var names []string
		for _, c := range s.pvcs {
			names = append(names, c.Name)
		}
		pod = makePod("test-pod", names...)
	}
	node := s.node
	if node == nil {
		node = node1
	}
	pc, err := e.binder.Claims(pod)
	var found *PodVolumes
	var reasons []string
	if err == nil {
		found, reasons, err = e.binder.FindPodVolumes(pod, pc, node)
	}
	if (err != nil) != s.wantErr {
		t.Fatalf("error = %v, want one: %v", err, s.wantErr)
	}
	if err != nil {
		return
	}
	wantReasons, wantDynamic := s.wantReasons, s.wantDynamic
	if s.needsCapacity && driver != nil && *driver.Spec.StorageCapacity {
		wantReasons, wantDynamic = append(slices.Clone(wantReasons), ReasonNotEnoughSpace), nil
	}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("reasons (-want, +got):\n%s", diff)
	}
	var static, dynamic []string
	for _, b := range found.Static {
		static = append(static, b.PVC.Name+"="+b.PV.Name)
	}
	for _, p := range found.Dynamic {
		dynamic = append(dynamic, p.PVC.Name)
	}
	if diff := cmp.Diff(s.wantStatic, static); diff != "" {
		t.Errorf("static bindings (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDynamic, dynamic); diff != "" {
		t.Errorf("provisions (-want, +got):\n%s", diff)
	}
}

var drivers = map[string]*storagev1.CSIDriver{
	"no CSIDriver":                        nil,
	"CSIDriver with capacity tracking":    makeDriver(provisioner, true),
	"CSIDriver without capacity tracking": makeDriver(provisioner, false),
}

// TestFindPodVolumesWithoutProvisioning is upstream's test of the same name.
func TestFindPodVolumesWithoutProvisioning(t *testing.T) {
	scenarios := map[string]findScenario{
		"bound-pvc":                      {pvcs: []*v1.PersistentVolumeClaim{boundPVC}, pvs: []*v1.PersistentVolume{pvBound}},
		"bound-pvc,pv-not-exists":        {pvcs: []*v1.PersistentVolumeClaim{boundPVC}, wantReasons: []string{ReasonPVNotExist}},
		"prebound-pvc":                   {pvcs: []*v1.PersistentVolumeClaim{preboundPVC}, pvs: []*v1.PersistentVolume{pvNode1aBound}, wantErr: true},
		"unbound-pvc,pv-same-node":       {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{pvNode2, pvNode1a, pvNode1b}, wantStatic: []string{"unbound-pvc=pv-node1a"}},
		"unbound-pvc,pv-different-node":  {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{pvNode2}, wantReasons: []string{ReasonBindConflict}},
		"two-unbound-pvcs":               {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, unboundPVC2}, pvs: []*v1.PersistentVolume{pvNode1a, pvNode1b}, wantStatic: []string{"unbound-pvc=pv-node1a", "unbound-pvc2=pv-node1b"}},
		"two-unbound-pvcs,order-by-size": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC2, unboundPVC}, pvs: []*v1.PersistentVolume{pvNode1a, pvNode1b}, wantStatic: []string{"unbound-pvc=pv-node1a", "unbound-pvc2=pv-node1b"}},
		"two-unbound-pvcs,partial-match": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, unboundPVC2}, pvs: []*v1.PersistentVolume{pvNode1a}, wantStatic: []string{"unbound-pvc=pv-node1a"}, wantReasons: []string{ReasonBindConflict}},
		// Two claims never share a PV: the second finds pv-node1a taken.
		"two-unbound-pvcs,one-pv":        {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, makePVC("unbound-pvc3", "1G", unbound, "", waitClass)}, pvs: []*v1.PersistentVolume{pvNode1a}, wantStatic: []string{"unbound-pvc=pv-node1a"}, wantReasons: []string{ReasonBindConflict}},
		"one-bound,one-unbound":          {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, boundPVC}, pvs: []*v1.PersistentVolume{pvBound, pvNode1a}, wantStatic: []string{"unbound-pvc=pv-node1a"}},
		"one-bound,one-unbound,no-match": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, boundPVC}, pvs: []*v1.PersistentVolume{pvBound, pvNode2}, wantReasons: []string{ReasonBindConflict}},
		"one-prebound,one-unbound":       {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, preboundPVC}, pvs: []*v1.PersistentVolume{pvNode1a, pvNode1b}, wantErr: true},
		"immediate-bound-pvc":            {pvcs: []*v1.PersistentVolumeClaim{immediateBoundPVC}, pvs: []*v1.PersistentVolume{pvBoundImmediate}},
		"immediate-bound-pvc-wrong-node": {pvcs: []*v1.PersistentVolumeClaim{immediateBoundPVC}, pvs: []*v1.PersistentVolume{pvBoundImmediateNode2}, wantReasons: []string{ReasonNodeConflict}},
		"immediate-unbound-pvc":          {pvcs: []*v1.PersistentVolumeClaim{immediateUnboundPVC}, wantErr: true},
		"generic-ephemeral,no-pvc":       {pod: ephemeralPod("no-such-pvc"), wantErr: true},
		"generic-ephemeral,with-pvc":     {pod: ephemeralPod("test-volume"), pvcs: []*v1.PersistentVolumeClaim{ephemeralPVC(true)}, pvs: []*v1.PersistentVolume{makePV("pv-bound", "node1", "1G", ephemeralPVC(true), waitClass)}},
		"generic-ephemeral,wrong-pvc":    {pod: ephemeralPod("test-volume"), pvcs: []*v1.PersistentVolumeClaim{ephemeralPVC(false)}, pvs: []*v1.PersistentVolume{pvBound}, wantErr: true},
		"bound-and-unbound-unsatisfied": {pvcs: []*v1.PersistentVolumeClaim{boundPVC, unboundPVC}, pvs: []*v1.PersistentVolume{makePV("pv-bound", "node2", "1G", boundPVC, waitClass)},
			wantReasons: []string{ReasonNodeConflict, ReasonBindConflict}},
	}
	for name, driver := range drivers {
		t.Run(name, func(t *testing.T) {
			for sname, s := range scenarios {
				t.Run(sname, func(t *testing.T) { s.run(t, driver) })
			}
		})
	}
}

// TestFindPodVolumesWithProvisioning is upstream's test of the same name.
func TestFindPodVolumesWithProvisioning(t *testing.T) {
	scenarios := map[string]findScenario{
		"one-provisioned": {pvcs: []*v1.PersistentVolumeClaim{provisionedPVC}, wantDynamic: []string{"provisioned-pvc"}, needsCapacity: true},
		"two-unbound-pvcs,one-matched,one-provisioned": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, provisionedPVC}, pvs: []*v1.PersistentVolume{pvNode1a},
			wantStatic: []string{"unbound-pvc=pv-node1a"}, wantDynamic: []string{"provisioned-pvc"}, needsCapacity: true},
		"one-bound,one-provisioned": {pvcs: []*v1.PersistentVolumeClaim{boundPVC, provisionedPVC}, pvs: []*v1.PersistentVolume{pvBound},
			wantDynamic: []string{"provisioned-pvc"}, needsCapacity: true},
		"one-binding,one-selected-node": {pvcs: []*v1.PersistentVolumeClaim{boundPVC, selectedNodePVC}, pvs: []*v1.PersistentVolume{pvBound},
			wantDynamic: []string{"provisioned-pvc"}, needsCapacity: true},
		"selected-node-elsewhere": {pvcs: []*v1.PersistentVolumeClaim{selectedNodePVC}, node: testNode("node2", nodeKey, "node2"),
			wantReasons: []string{ReasonBindConflict}},
		"immediate-unbound-pvc": {pvcs: []*v1.PersistentVolumeClaim{immediateUnboundPVC}, wantErr: true},
		"one-immediate-bound,one-provisioned": {pvcs: []*v1.PersistentVolumeClaim{immediateBoundPVC, provisionedPVC},
			pvs: []*v1.PersistentVolume{pvBoundImmediate}, wantDynamic: []string{"provisioned-pvc"}, needsCapacity: true},
		"invalid-provisioner":         {pvcs: []*v1.PersistentVolumeClaim{noProvisionerPVC}, wantReasons: []string{ReasonBindConflict}},
		"volume-topology-unsatisfied": {pvcs: []*v1.PersistentVolumeClaim{topoMismatchPVC}, wantReasons: []string{ReasonBindConflict}},
	}
	for name, driver := range drivers {
		t.Run(name, func(t *testing.T) {
			for sname, s := range scenarios {
				t.Run(sname, func(t *testing.T) { s.run(t, driver) })
			}
		})
	}
}

// TestFindPodVolumesWithCSIMigration is upstream's test of the same name:
// a bound GCE PD PV (zone labels, no node affinity of its own) is checked
// through its CSI translation on a node whose CSINode says the plugin is
// migrated.
func TestFindPodVolumesWithCSIMigration(t *testing.T) {
	claim := makePVC("pvc-migration-bound", "1G", bound, "pv-migration-bound", waitClass)
	pv := makePV("pv-migration-bound", "", "1G", claim, waitClass)
	pv.Labels = map[string]string{v1.LabelFailureDomainBetaZone: "us-east-1", v1.LabelFailureDomainBetaRegion: "us-east-1a"}
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "test-disk", FSType: "ext4"}}
	csiNode := func(migrated string) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node1", Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: migrated}}}
	}
	zone1, zone2 := testNode("node1", "topology.gke.io/zone", "us-east-1"), testNode("node1", "topology.gke.io/zone", "us-east-2")
	pvs, pvcs := []*v1.PersistentVolume{pv}, []*v1.PersistentVolumeClaim{claim}
	for name, s := range map[string]findScenario{
		"pvc-bound":                      {pvcs: pvcs, pvs: pvs, node: zone1, objs: []runtime.Object{csiNode("kubernetes.io/gce-pd")}},
		"pvc-bound,csinode-not-migrated": {pvcs: pvcs, pvs: pvs, node: zone1, objs: []runtime.Object{csiNode("")}},
		"pvc-bound,missing-csinode":      {pvcs: pvcs, pvs: pvs, node: zone1},
		"pvc-bound,node-different-zone": {pvcs: pvcs, pvs: pvs, node: zone2, objs: []runtime.Object{csiNode("kubernetes.io/gce-pd")},
			wantReasons: []string{ReasonNodeConflict}},
	} {
		t.Run(name, func(t *testing.T) { s.run(t, nil) })
	}
}

// TestCapacity is upstream's test of the same name: CSIStorageCapacity
// objects decide where a claim of a driver with capacity tracking can be
// provisioned.
func TestCapacity(t *testing.T) {
	node2 := testNode("node2", nodeKey, "node2")
	scenarios := map[string]struct {
		capacities  []*storagev1.CSIStorageCapacity
		wantCap     string // the capacity object chosen; a|b: either (upstream takes the first in list order)
		wantReasons []string
	}{
		"network-attached": {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("net", provClass, nil, "1Gi", "")}, wantCap: "net"},
		"local-storage":    {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("n1", provClass, node1, "1Gi", "")}, wantCap: "n1"},
		"multiple": {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("net", provClass, nil, "1Gi", ""),
			makeCapacity("n2", provClass, node2, "1Gi", ""), makeCapacity("n1", provClass, node1, "1Gi", "")}, wantCap: "net|n1"},
		"no-storage":               {wantReasons: []string{ReasonNotEnoughSpace}},
		"wrong-node":               {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node2, "1Gi", "")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"wrong-storage-class":      {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", waitClass, node1, "1Gi", "")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"insufficient-storage":     {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node1, "1Mi", "")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"insufficient-volume-size": {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node1, "1Gi", "1Mi")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"zero-storage":             {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node1, "0Mi", "")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"zero-volume-size":         {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node1, "", "0Mi")}, wantReasons: []string{ReasonNotEnoughSpace}},
		"nil-storage":              {capacities: []*storagev1.CSIStorageCapacity{makeCapacity("c", provClass, node1, "", "")}, wantReasons: []string{ReasonNotEnoughSpace}},
	}
	for _, optIn := range []bool{true, false} {
		t.Run(fmt.Sprintf("CSIDriver.StorageCapacity=%v", optIn), func(t *testing.T) {
			for name, s := range scenarios {
				t.Run(name, func(t *testing.T) {
					objs := append(objects(s.capacities), makeDriver(provisioner, optIn), provisionedPVC.DeepCopy())
					e := newEnv(t, Options{}, objs...)
					pod := makePod("test-pod", provisionedPVC.Name)
					pc, err := e.binder.Claims(pod)
					if err != nil {
						t.Fatal(err)
					}
					found, reasons, err := e.binder.FindPodVolumes(pod, pc, node1)
					if err != nil {
						t.Fatal(err)
					}
					wantReasons, wantCap := s.wantReasons, s.wantCap
					if !optIn {
						wantReasons, wantCap = nil, ""
					}
					if diff := cmp.Diff(wantReasons, reasons); diff != "" {
						t.Errorf("reasons (-want, +got):\n%s", diff)
					}
					if wantReasons != nil {
						return
					}
					if len(found.Dynamic) != 1 {
						t.Fatalf("provisions = %v, want the claim", found.Dynamic)
					}
					got := ""
					if c := found.Dynamic[0].Capacity; c != nil {
						got = c.Name
					}
					if !slices.Contains(strings.Split(wantCap, "|"), got) {
						t.Errorf("capacity = %q, want %q", got, wantCap)
					}
				})
			}
		})
	}
}

// TestAssumePodVolumes is upstream's test of the same name, with a PV
// another claim took in the cache (never assumed twice).
func TestAssumePodVolumes(t *testing.T) {
	binding := func(pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) *Binding {
		return &Binding{PVC: pvc.DeepCopy(), PV: pv.DeepCopy()}
	}
	higher := provisionedPVC2.DeepCopy()
	higher.ResourceVersion = "2"
	tests := map[string]struct {
		pvcs     []*v1.PersistentVolumeClaim
		pvs      []*v1.PersistentVolume
		static   []*Binding
		dynamic  []*Provision
		allBound bool
		wantErr  string
		// claimRefs: pv -> claim the cache shows after Assume
		claimRefs map[string]string
		// selected: claims with selected-node node1 in the cache
		selected []string
	}{
		"all-bound": {pvcs: []*v1.PersistentVolumeClaim{boundPVC}, pvs: []*v1.PersistentVolume{pvBound}, allBound: true},
		"one-binding": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{pvNode1a},
			static: []*Binding{binding(unboundPVC, pvNode1a)}, claimRefs: map[string]string{"pv-node1a": "unbound-pvc"}},
		"two-bindings": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, unboundPVC2}, pvs: []*v1.PersistentVolume{pvNode1a, pvNode1b},
			static:    []*Binding{binding(unboundPVC, pvNode1a), binding(unboundPVC2, pvNode1b)},
			claimRefs: map[string]string{"pv-node1a": "unbound-pvc", "pv-node1b": "unbound-pvc2"}},
		"pv-already-bound": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{pvNode1aBound},
			static: []*Binding{binding(unboundPVC, pvNode1aBound)}, claimRefs: map[string]string{"pv-node1a": "unbound-pvc"}},
		"tmpupdate-failed": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{pvNode1a},
			static: []*Binding{binding(unboundPVC, pvNode1a), binding(unboundPVC2, pvNode1b)}, wantErr: `persistentvolume "pv-node1b" not found`,
			claimRefs: map[string]string{"pv-node1a": ""}},
		"one-binding, one-pvc-provisioned": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, provisionedPVC}, pvs: []*v1.PersistentVolume{pvNode1a},
			static: []*Binding{binding(unboundPVC, pvNode1a)}, dynamic: []*Provision{{PVC: provisionedPVC.DeepCopy()}},
			claimRefs: map[string]string{"pv-node1a": "unbound-pvc"}, selected: []string{"provisioned-pvc"}},
		"one-binding, one-provision-tmpupdate-failed": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC, higher}, pvs: []*v1.PersistentVolume{pvNode1a},
			static: []*Binding{binding(unboundPVC, pvNode1a)}, dynamic: []*Provision{{PVC: provisionedPVC2.DeepCopy()}},
			wantErr: `"testns/provisioned-pvc2" is out of sync (stored: 2, assume: 1)`, claimRefs: map[string]string{"pv-node1a": ""}},
		"pv-taken-by-another-claim": {pvcs: []*v1.PersistentVolumeClaim{unboundPVC}, pvs: []*v1.PersistentVolume{makePV("pv-node1a", "node1", "5G", unboundPVC2, waitClass)},
			static:    []*Binding{binding(unboundPVC, pvNode1a)},
			wantErr:   `conflict: persistentvolume "pv-node1a" was taken by claim testns/unbound-pvc2 since the pod was filtered`,
			claimRefs: map[string]string{"pv-node1a": "unbound-pvc2"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Options{}, append(objects(tc.pvs), objects(tc.pvcs)...)...)
			var claims []string
			for _, c := range tc.pvcs {
				claims = append(claims, c.Name)
			}
			pod := makePod("test-pod", claims...)
			assumed, allBound, err := e.binder.Assume(pod, "node1", &PodVolumes{Static: tc.static, Dynamic: tc.dynamic, Node: node1})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Assume error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Assume: %v", err)
			}
			if allBound != tc.allBound {
				t.Errorf("allBound = %v, want %v", allBound, tc.allBound)
			}
			e.checkCache(t, tc.claimRefs, tc.selected)
			if assumed == nil {
				if n := e.caches.pvs.assumedCount() + e.caches.pvcs.assumedCount(); n != 0 {
					t.Errorf("%d assumptions left after a failed or empty Assume", n)
				}
				return
			}
			e.binder.Revert(assumed)
			e.binder.Revert(assumed) // idempotent
			if n := e.caches.pvs.assumedCount() + e.caches.pvcs.assumedCount(); n != 0 {
				t.Errorf("%d assumptions left after Revert", n)
			}
		})
	}
}

// checkCache checks the claimRef (claim name, "" for none) of each PV of
// claimRefs and that the claims of selected have selected-node node1, as
// the caches show them.
func (e *env) checkCache(t *testing.T, claimRefs map[string]string, selected []string) {
	t.Helper()
	for pvName, claim := range claimRefs {
		pv, err := e.caches.pvs.Get(pvName)
		if err != nil {
			t.Errorf("PV %s: %v", pvName, err)
			continue
		}
		got := ""
		if pv.Spec.ClaimRef != nil {
			got = pv.Spec.ClaimRef.Name
		}
		if got != claim {
			t.Errorf("PV %s claimRef = %q, want %q", pvName, got, claim)
		}
	}
	for _, c := range selected {
		pvc, err := e.caches.pvcs.Get(ns + "/" + c)
		if err != nil {
			t.Errorf("claim %s: %v", c, err)
			continue
		}
		if got := pvc.Annotations[storagehelpers.AnnSelectedNode]; got != "node1" {
			t.Errorf("claim %s selected-node = %q, want node1", c, got)
		}
	}
}

// TestFindAssumeVolumes is upstream's test of the same name: once assumed,
// finding again returns the same PV, and another claim cannot have it.
func TestFindAssumeVolumes(t *testing.T) {
	pvNode1c := makePV("pv-node1b", "node1", "5G", nil, waitClass)
	other := makePVC("other", "1G", unbound, "", waitClass)
	e := newEnv(t, Options{}, append(objects([]*v1.PersistentVolume{pvNode2, pvNode1a, pvNode1c}), unboundPVC.DeepCopy(), other)...)
	pod := makePod("test-pod", "unbound-pvc")
	find := func(pod *v1.Pod) *PodVolumes {
		t.Helper()
		pc, err := e.binder.Claims(pod)
		if err != nil {
			t.Fatal(err)
		}
		found, reasons, err := e.binder.FindPodVolumes(pod, pc, node1)
		if err != nil || len(reasons) > 0 {
			t.Fatalf("FindPodVolumes = %v, %v", reasons, err)
		}
		return found
	}
	found := find(pod)
	chosen := found.Static[0].PV.Name
	if _, allBound, err := e.binder.Assume(pod, "node1", found); err != nil || allBound {
		t.Fatalf("Assume = %v, %v", allBound, err)
	}
	for range 50 {
		if got := find(pod).Static[0].PV.Name; got != chosen {
			t.Fatalf("found %s after assuming %s", got, chosen)
		}
	}
	otherPod := makePod("other-pod", "other")
	if got := find(otherPod).Static[0].PV.Name; got == chosen {
		t.Errorf("another claim found %s, assumed for unbound-pvc", got)
	}
}

// TestBind is upstream's TestBindPodVolumes (bindAPIUpdate and the wait of
// checkBindings) against the fake API and its informers.
func TestBind(t *testing.T) {
	type scenario struct {
		pvs  []*v1.PersistentVolume
		pvcs []*v1.PersistentVolumeClaim
		// static claim=pv and dynamic claims to assume (from FindPodVolumes)
		provision bool
		// before runs after the assumption, before Bind.
		before func(t *testing.T, e *env)
		// during runs once Bind has written (the PV controller's part).
		during  func(t *testing.T, e *env)
		timeout time.Duration
		wantErr string
	}
	bindPVC := func(pvName string) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			e.updatePVC(t, func(c *v1.PersistentVolumeClaim) {
				c.Spec.VolumeName = pvName
				metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
			}, "unbound-pvc")
		}
	}
	provisionPV := func(node string) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			ctx := context.Background()
			pvc, err := e.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "provisioned-pvc", metav1.GetOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := e.client.CoreV1().PersistentVolumes().Create(ctx, makePV("dynamic-pv", node, "1Gi", pvc, provClass), metav1.CreateOptions{}); err != nil {
				t.Error(err)
				return
			}
			e.updatePVC(t, func(c *v1.PersistentVolumeClaim) {
				c.Spec.VolumeName = "dynamic-pv"
				metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagehelpers.AnnBindCompleted, "yes")
			}, "provisioned-pvc")
		}
	}
	tests := map[string]scenario{
		"static binding completes": {pvs: []*v1.PersistentVolume{pvNode1a}, pvcs: []*v1.PersistentVolumeClaim{unboundPVC},
			during: bindPVC("pv-node1a")},
		"dynamic provisioning completes": {pvcs: []*v1.PersistentVolumeClaim{provisionedPVC}, provision: true,
			during: provisionPV("node1")},
		"bound by the PV controller before the write: API conflict": {pvs: []*v1.PersistentVolume{pvNode1a},
			pvcs: []*v1.PersistentVolumeClaim{unboundPVC},
			before: func(t *testing.T, e *env) {
				ctx := context.Background()
				pv, _ := e.client.CoreV1().PersistentVolumes().Get(ctx, "pv-node1a", metav1.GetOptions{})
				pv = pv.DeepCopy()
				pv.Spec.ClaimRef = &v1.ObjectReference{Name: "unbound-pvc", Namespace: ns, UID: "uid-unbound-pvc"}
				if _, err := e.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "Operation cannot be fulfilled"},
		"times out": {pvs: []*v1.PersistentVolume{pvNode1a}, pvcs: []*v1.PersistentVolumeClaim{unboundPVC},
			timeout: 50 * time.Millisecond, wantErr: "binding volumes: context deadline exceeded"},
		"claimRef reset": {pvs: []*v1.PersistentVolume{pvNode1a}, pvcs: []*v1.PersistentVolumeClaim{unboundPVC},
			during: func(t *testing.T, e *env) {
				ctx := context.Background()
				pv, _ := e.client.CoreV1().PersistentVolumes().Get(ctx, "pv-node1a", metav1.GetOptions{})
				pv = pv.DeepCopy()
				pv.Spec.ClaimRef = nil
				if _, err := e.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
					t.Error(err)
				}
			},
			wantErr: `binding volumes: ClaimRef got reset for pv "pv-node1a"`},
		"claim deleted": {pvs: []*v1.PersistentVolume{pvNode1a}, pvcs: []*v1.PersistentVolumeClaim{unboundPVC},
			during: func(t *testing.T, e *env) {
				if err := e.client.CoreV1().PersistentVolumeClaims(ns).Delete(context.Background(), "unbound-pvc", metav1.DeleteOptions{}); err != nil {
					t.Error(err)
				}
			},
			wantErr: `binding volumes: failed to check binding: persistentvolumeclaim "testns/unbound-pvc" not found`},
		"provisioner gives up: selected-node removed": {pvcs: []*v1.PersistentVolumeClaim{provisionedPVC}, provision: true,
			during: func(t *testing.T, e *env) {
				e.updatePVC(t, func(c *v1.PersistentVolumeClaim) { delete(c.Annotations, storagehelpers.AnnSelectedNode) }, "provisioned-pvc")
			},
			wantErr: `binding volumes: provisioning failed for PVC "provisioned-pvc"`},
		"provisioned PV on another node": {pvcs: []*v1.PersistentVolumeClaim{provisionedPVC}, provision: true,
			during:  provisionPV("node2"),
			wantErr: `binding volumes: pv "dynamic-pv" node affinity doesn't match node "node1"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Options{BindTimeout: tc.timeout, PollInterval: time.Hour}, append(objects(tc.pvs), objects(tc.pvcs)...)...)
			var claims []string
			for _, c := range tc.pvcs {
				claims = append(claims, c.Name)
			}
			pod := makePod("test-pod", claims...)
			pc, err := e.binder.Claims(pod)
			if err != nil {
				t.Fatal(err)
			}
			found, reasons, err := e.binder.FindPodVolumes(pod, pc, node1)
			if err != nil || len(reasons) > 0 {
				t.Fatalf("FindPodVolumes = %v, %v", reasons, err)
			}
			if tc.provision != (len(found.Dynamic) > 0) {
				t.Fatalf("found %+v, want provisioning: %v", found, tc.provision)
			}
			assumed, _, err := e.binder.Assume(pod, "node1", found)
			if err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				tc.before(t, e)
			}
			if tc.during != nil {
				// Bind replaces assumed's objects with those it wrote.
				var pvName, pvcName string
				if len(assumed.Static) > 0 {
					pvName = assumed.Static[0].PV.Name
				} else {
					pvcName = assumed.Dynamic[0].PVC.Name
				}
				go func() {
					// The write is in the API (and so the informer) first.
					written := poll(func() bool {
						if pvName != "" {
							pv, err := e.caches.pvs.GetAPIObj(pvName)
							return err == nil && pv.Spec.ClaimRef != nil
						}
						pvc, err := e.caches.pvcs.GetAPIObj(ns + "/" + pvcName)
						return err == nil && pvc.Annotations[storagehelpers.AnnSelectedNode] != ""
					})
					if !written {
						t.Error("Bind did not write")
						return
					}
					tc.during(t, e)
				}()
			}
			err = e.binder.Bind(context.Background(), pod, assumed)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Bind: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Bind error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestBindEndsWithContext checks that Bind's wait ends when its context
// does.
func TestBindEndsWithContext(t *testing.T) {
	e := newEnv(t, Options{BindTimeout: time.Hour}, pvNode1a.DeepCopy(), unboundPVC.DeepCopy())
	pod := makePod("test-pod", "unbound-pvc")
	pc, _ := e.binder.Claims(pod)
	found, _, _ := e.binder.FindPodVolumes(pod, pc, node1)
	assumed, _, err := e.binder.Assume(pod, "node1", found)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		if !poll(func() bool {
			pv, err := e.caches.pvs.GetAPIObj("pv-node1a")
			return err == nil && pv.Spec.ClaimRef != nil
		}) {
			t.Error("Bind did not write")
		}
	}()
	if err := e.binder.Bind(ctx, pod, assumed); !errors.Is(err, context.Canceled) {
		t.Fatalf("Bind = %v, want context.Canceled", err)
	}
}

// TestAssumeCacheExpires checks upstream's assume cache rule: an
// assumption shadows the informer's version it was made from, and a newer
// version from the informer ends it.
func TestAssumeCacheExpires(t *testing.T) {
	e := newEnv(t, Options{}, pvNode1a.DeepCopy())
	assumed := pvNode1aBound.DeepCopy()
	if err := e.caches.pvs.Assume(assumed, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.caches.pvs.Get("pv-node1a"); got != assumed {
		t.Fatal("Get does not return the assumed PV")
	}
	if got, _ := e.caches.pvs.GetAPIObj("pv-node1a"); got.Spec.ClaimRef != nil {
		t.Fatal("GetAPIObj returns the assumed PV")
	}
	stale := pvNode1a.DeepCopy()
	stale.ResourceVersion = "0"
	if err := e.caches.pvs.Assume(stale, nil); err == nil || !strings.Contains(err.Error(), "out of sync") {
		t.Errorf("Assume of an older version = %v, want out of sync", err)
	}
	pv := pvNode1a.DeepCopy()
	pv.Labels = map[string]string{"changed": "yes"}
	if _, err := e.client.CoreV1().PersistentVolumes().Update(context.Background(), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the assumption to expire", func() bool { return e.caches.pvs.assumedCount() == 0 })
	if got, _ := e.caches.pvs.Get("pv-node1a"); got.Spec.ClaimRef != nil || got.Labels["changed"] != "yes" {
		t.Errorf("Get after the update = %+v, want the informer's new version", got)
	}
}
