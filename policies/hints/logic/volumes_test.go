package logic_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

// The cases of upstream's tests of the volume plugins' hints (v1.37.1:
// volumebinding/volume_binding_test.go, volumerestrictions/
// volume_restrictions_test.go, volumezone/volume_zone_test.go,
// nodevolumelimits/csi_test.go), named as there, on storage records, plus the
// cases where these hints queue and upstream's skip (the name says why).

func claim(ns, name string) *abi.StorageObject { return &abi.StorageObject{Namespace: ns, Name: name} }

func class(name string, mode abi.BindingMode, topology ...abi.NodeSelectorTerm) *abi.StorageObject {
	return &abi.StorageObject{Name: name, Driver: "p", BindingMode: mode, Topology: topology}
}

func csiNode(migrated string, drivers ...abi.CSIDriverLimit) *abi.StorageObject {
	return &abi.StorageObject{Name: "n1", NodeName: "n1", MigratedPlugins: migrated, Drivers: drivers}
}

func limit(name string, count int32) abi.CSIDriverLimit {
	return abi.CSIDriverLimit{Name: name, Allocatable: count, HasAllocatable: true}
}

func capacity(limit int64, has bool) *abi.StorageObject {
	return &abi.StorageObject{Namespace: "ns", Name: "cap", StorageClass: "sc", Capacity: limit, HasCapacity: has}
}

func volumeLabels(kv ...string) *abi.StorageObject {
	o := &abi.StorageObject{Name: "pv"}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Labels = append(o.Labels, abi.KV{Key: kv[i], Value: kv[i+1]})
	}
	return o
}

func TestVolumeBinding(t *testing.T) {
	const vb = abi.PluginVolumeBinding
	p := func(name string) *policytest.PodWrapper { return pending(name, vb) }
	const zone = "topology.kubernetes.io/zone"
	cases := []hintCase{
		// isSchedulableAfterCSINodeChange
		{name: "CSINode is newly created", ev: policytest.StorageAdd(abi.ResourceCSINode, csiNode("")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "CSINode's migrated-plugins annotations is added",
			ev:   policytest.StorageUpdate(abi.ResourceCSINode, csiNode(""), csiNode("kubernetes.io/aws-ebs")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "CSINode's migrated-plugins annotation is updated",
			ev:   policytest.StorageUpdate(abi.ResourceCSINode, csiNode("kubernetes.io/aws-ebs"), csiNode("kubernetes.io/aws-ebs,kubernetes.io/gce-pd")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "CSINode is updated but migrated-plugins annotation gets unchanged",
			ev:   policytest.StorageUpdate(abi.ResourceCSINode, csiNode("x", limit("d", 1)), csiNode("x", limit("d", 2))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		// isSchedulableAfterPersistentVolumeClaimChange
		{name: "pod has no pvc or ephemeral volumes", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p")}, want: []abi.Hint{skip}},
		{name: "pvc with the same name as the one used by the pod in a different namespace is modified",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("other", "c"), claim("other", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "pod has no pvc that is being modified",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "x"), claim("ns", "x")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "pod has no generic ephemeral volume that is being modified",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "p-other"), claim("ns", "p-other")),
			pods: []*policytest.PodWrapper{p("p").EphemeralClaim("p-scratch")}, want: []abi.Hint{skip}},
		{name: "pod has the pvc that is being modified",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "c"), claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("b").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pod has the generic ephemeral volume that is being modified",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "p-scratch"), claim("ns", "p-scratch")),
			pods: []*policytest.PodWrapper{p("p").EphemeralClaim("p-scratch")}, want: []abi.Hint{queue}},
		{name: "type conversion error", ev: policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePersistentVolumeClaim, Action: abi.ActionAdd,
			New: abi.AppendNode(nil, &abi.Node{Name: "n1"})}),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{herr}},
		// isSchedulableAfterStorageClassChange
		{name: "When a new StorageClass is created, it returns Queue", ev: policytest.StorageAdd(abi.ResourceStorageClass, class("sc", abi.BindingImmediate)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When the AllowedTopologies are changed, it returns Queue",
			ev: policytest.StorageUpdate(abi.ResourceStorageClass, class("sc", abi.BindingWaitForFirstConsumer),
				class("sc", abi.BindingWaitForFirstConsumer, term(req(zone, abi.SelectorIn, "a")))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When the AllowedTopologies values change, it returns Queue (the ABI's own case)",
			ev: policytest.StorageUpdate(abi.ResourceStorageClass, class("sc", abi.BindingWaitForFirstConsumer, term(req(zone, abi.SelectorIn, "a"))),
				class("sc", abi.BindingWaitForFirstConsumer, term(req(zone, abi.SelectorIn, "a", "b")))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When there are no changes to the StorageClass, it returns QueueSkip",
			ev: policytest.StorageUpdate(abi.ResourceStorageClass, class("sc", abi.BindingWaitForFirstConsumer, term(req(zone, abi.SelectorIn, "a"))),
				class("sc", abi.BindingWaitForFirstConsumer, term(req(zone, abi.SelectorIn, "a")))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		// isSchedulableAfterCSIStorageCapacityChange
		{name: "When a new CSIStorageCapacity is created, it returns Queue", ev: policytest.StorageAdd(abi.ResourceCSIStorageCapacity, capacity(0, false)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When the volume limit is increase(Capacity set), it returns Queue",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(0, false), capacity(100, true)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When the volume limit is increase(Capacity increase), it returns Queue",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(50, true), capacity(100, true)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "When there are no changes to the CSIStorageCapacity, it returns QueueSkip",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(100, true), capacity(100, true)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "When the volume limit is equal(Capacity), it returns QueueSkip",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(100, true), capacity(100, true)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "When the volume limit is decrease(Capacity), it returns QueueSkip",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(100, true), capacity(50, true)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "When the limit goes away, it returns QueueSkip (the ABI's own case)",
			ev:   policytest.StorageUpdate(abi.ResourceCSIStorageCapacity, capacity(100, true), capacity(0, false)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		// isSchedulableAfterCSIDriverChange
		{name: "pod has no CSIDriver (queued here: its claims may be provisioned by the driver, whose capacity check went away)",
			ev:   policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d", CapacityTracking: true}, &abi.StorageObject{Name: "d"}),
			pods: []*policytest.PodWrapper{p("p").Claim("c"), p("q")}, want: []abi.Hint{queue, skip}},
		{name: "driver name in pod and csidriver name are different",
			ev:   policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d", CapacityTracking: true}, &abi.StorageObject{Name: "d"}),
			pods: []*policytest.PodWrapper{p("p").VolumeDriver("other")}, want: []abi.Hint{skip}},
		{name: "original StorageCapacity is false",
			ev:   policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d"}, &abi.StorageObject{Name: "d"}),
			pods: []*policytest.PodWrapper{p("p").VolumeDriver("d").Claim("c")}, want: []abi.Hint{skip}},
		{name: "modified StorageCapacity is true",
			ev: policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d", CapacityTracking: true},
				&abi.StorageObject{Name: "d", CapacityTracking: true}),
			pods: []*policytest.PodWrapper{p("p").VolumeDriver("d")}, want: []abi.Hint{skip}},
		{name: "modified StorageCapacity is false",
			ev:   policytest.StorageUpdate(abi.ResourceCSIDriver, &abi.StorageObject{Name: "d", CapacityTracking: true}, &abi.StorageObject{Name: "d"}),
			pods: []*policytest.PodWrapper{p("p").VolumeDriver("d")}, want: []abi.Hint{queue}},
		// Events without a hint upstream.
		{name: "a PersistentVolume added or updated always queues",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolume, volumeLabels(), volumeLabels()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "a node label change always queues", ev: policytest.NodeUpdate(node().Obj(), node().Label(zone, "a").Obj(), abi.ActionUpdateNodeLabel),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "a PersistentVolumeClaim deleted is not registered", ev: policytest.StorageDelete(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestVolumeZone(t *testing.T) {
	const vz = abi.PluginVolumeZone
	p := func(name string) *policytest.PodWrapper { return pending(name, vz) }
	const zone, region = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
	cases := []hintCase{
		// isSchedulableAfterPersistentVolumeClaimChange
		{name: "error-wrong-new-object", ev: policytest.MakeEvent(&abi.Event{Resource: abi.ResourcePersistentVolumeClaim, Action: abi.ActionAdd,
			New: abi.AppendPod(nil, &abi.Pod{Name: "x"})}),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{herr}},
		{name: "pvc-was-added-but-pod-was-not-bound-to-the-pvc", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("other")}, want: []abi.Hint{skip}},
		{name: "pvc-was-added-and-pod-was-bound-to-different-pvc", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("d")}, want: []abi.Hint{skip}},
		{name: "pvc-was-added-and-pod-was-bound-to-added-pvc,-but-different-ns", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("other", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "pvc-was-added-and-pod-was-bound-to-the-pvc", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pvc-was-updated-and-pod-was-bound-to-the-pvc",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "c"), claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		// isSchedulableAfterStorageClassAdded
		{name: "a storage class with WaitForFirstConsumer was added", ev: policytest.StorageAdd(abi.ResourceStorageClass, class("sc", abi.BindingWaitForFirstConsumer)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "a storage class with Immediate was added", ev: policytest.StorageAdd(abi.ResourceStorageClass, class("sc", abi.BindingImmediate)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "a storage class update is not registered",
			ev:   policytest.StorageUpdate(abi.ResourceStorageClass, class("sc", abi.BindingImmediate), class("sc", abi.BindingWaitForFirstConsumer)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		// isSchedulableAfterPersistentVolumeChange
		{name: "new-pv-was-added", ev: policytest.StorageAdd(abi.ResourcePersistentVolume, volumeLabels(zone, "a")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pv-was-updated-and-changed-topology",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolume, volumeLabels(zone, "a"), volumeLabels(zone, "b")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pv-was-updated-and-added-topology-label",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolume, volumeLabels(zone, "a"), volumeLabels(zone, "a", region, "r")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pv-was-updated-and-removed-topology-label",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolume, volumeLabels(zone, "a", region, "r"), volumeLabels(zone, "a")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pv-was-updated-but-no-topology-is-changed",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolume, volumeLabels(zone, "a", "app", "x"), volumeLabels(zone, "a", "app", "y")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestVolumeRestrictions(t *testing.T) {
	const vr = abi.PluginVolumeRestrictions
	p := func(name string) *policytest.PodWrapper { return pending(name, vr) }
	cases := []hintCase{
		// isSchedulableAfterAssignedPodDeleted
		{name: "queue if the deleted pod used the same PVC", ev: policytest.PodDelete(bound("gone").Claim("c").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "skip if the deleted pod is in another namespace", ev: policytest.PodDelete(bound("gone").Namespace("other").Claim("c").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "queue if the deleted pod uses other volumes (upstream skips unless its in-tree disks conflict, which the record does not carry)",
			ev:   policytest.PodDelete(bound("gone").Claim("d").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		// isSchedulableAfterPersistentVolumeClaimChange
		{name: "queue a pod with the created PVC", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "skip a pod with another PVC", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("d")}, want: []abi.Hint{skip}},
		{name: "skip a PVC of another namespace", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("other", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "a PVC update is not registered", ev: policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "c"), claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "a node added always queues", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}

func TestNodeVolumeLimits(t *testing.T) {
	const nvl = abi.PluginNodeVolumeLimits
	p := func(name string) *policytest.PodWrapper { return pending(name, nvl) }
	upd := func(old, new *abi.StorageObject) abi.EventView {
		return policytest.StorageUpdate(abi.ResourceCSINode, old, new)
	}
	unlimited := abi.CSIDriverLimit{Name: "d1"}
	cases := []hintCase{
		// isSchedulableAfterCSINodeUpdated
		{name: "Limits increased for the driver", ev: upd(csiNode("", limit("d1", 1)), csiNode("", limit("d1", 2))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "Limits decreased for the driver", ev: upd(csiNode("", limit("d1", 2)), csiNode("", limit("d1", 1))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "Limits unchanged", ev: upd(csiNode("", limit("d1", 2), limit("d2", 1)), csiNode("", limit("d2", 1), limit("d1", 2))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "New driver added (upstream queues only for a count above 0; here any)", ev: upd(csiNode("", limit("d1", 1)), csiNode("", limit("d1", 1), limit("d2", 0))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "Driver removed (upstream skips; the filter may pass)", ev: upd(csiNode("", limit("d1", 1), limit("d2", 1)), csiNode("", limit("d1", 1))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "Count removed (upstream reads it as 0; the filter as no limit)", ev: upd(csiNode("", limit("d1", 1)), csiNode("", unlimited)),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "Migrated plugins changed (the ABI's own case)", ev: upd(csiNode("", limit("d1", 1)), csiNode("kubernetes.io/aws-ebs", limit("d1", 1))),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "a CSINode added always queues", ev: policytest.StorageAdd(abi.ResourceCSINode, csiNode("")),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		// isSchedulableAfterAssignedPodDeleted
		{name: "the deleted pod had a claim", ev: policytest.PodDelete(bound("gone").Claim("x").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "the deleted pod had an ephemeral volume", ev: policytest.PodDelete(bound("gone").EphemeralClaim("gone-x").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "the deleted pod had no volumes", ev: policytest.PodDelete(bound("gone").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		{name: "the deleted pod was on no node", ev: policytest.PodDelete(bound("gone").Node("").Claim("x").Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{skip}},
		// isSchedulableAfterPVCAdded
		{name: "the pod's claim was added", ev: policytest.StorageAdd(abi.ResourcePersistentVolumeClaim, claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c"), p("q").EphemeralClaim("c"), p("r").Claim("d")}, want: []abi.Hint{queue, queue, skip}},
		{name: "the pod's claim was updated (not registered upstream; a claim bound to a volume of another driver counts elsewhere)",
			ev:   policytest.StorageUpdate(abi.ResourcePersistentVolumeClaim, claim("ns", "c"), claim("ns", "c")),
			pods: []*policytest.PodWrapper{p("p").Claim("c"), p("q").Claim("d")}, want: []abi.Hint{queue, skip}},
		{name: "a node added (not registered upstream; a node without a CSINode has no limit)", ev: policytest.NodeAdd(node().Obj()),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		// isSchedulableAfterVolumeAttachmentDeleted
		{name: "pod with a PVC", ev: policytest.StorageDelete(abi.ResourceVolumeAttachment, &abi.StorageObject{Name: "va", Driver: "d", NodeName: "n1"}),
			pods: []*policytest.PodWrapper{p("p").Claim("c")}, want: []abi.Hint{queue}},
		{name: "pod with an ephemeral volume (upstream skips: it looks at persistentVolumeClaim volumes)",
			ev:   policytest.StorageDelete(abi.ResourceVolumeAttachment, &abi.StorageObject{Name: "va", Driver: "d", NodeName: "n1"}),
			pods: []*policytest.PodWrapper{p("p").EphemeralClaim("p-x")}, want: []abi.Hint{queue}},
		{name: "pod with an inline volume of the attacher", ev: policytest.StorageDelete(abi.ResourceVolumeAttachment, &abi.StorageObject{Name: "va", Driver: "ebs.csi.aws.com"}),
			pods: []*policytest.PodWrapper{p("p").VolumeDriver("ebs.csi.aws.com"), p("q").VolumeDriver("pd.csi.storage.gke.io"), p("r")},
			want: []abi.Hint{queue, skip, skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}
