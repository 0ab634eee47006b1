package logic_test

import (
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
)

// Cases after upstream's TestIsSchedulableAfterClaimChange and
// TestIsSchedulableAfterPodChange (dynamicresources_test.go, v1.37.1) on
// the records of ABI minor 2, natively and through hints.wasm.

func rclaim(name string, allocated bool, reservedFor int32) *abi.StorageObject {
	return &abi.StorageObject{Namespace: "ns", Name: name, Allocated: allocated, ReservedFor: reservedFor,
		DeviceClasses: []string{"gpu.example.com"}}
}

func TestDynamicResources(t *testing.T) {
	const dra = abi.PluginDynamicResources
	p := func(name string) *policytest.PodWrapper { return pending(name, dra) }
	user, other, plain := p("user").ResourceClaim("gpu-0"), p("other").ResourceClaim("gpu-1"), p("plain")
	users := []*policytest.PodWrapper{user, other, plain}
	cases := []hintCase{
		{name: "queue-on-add: the pod's claim was created", ev: policytest.StorageAdd(abi.ResourceResourceClaim, rclaim("gpu-0", false, 0)),
			pods: users, want: []abi.Hint{queue, skip, skip}},
		{name: "skip-unrelated-claim", ev: policytest.StorageAdd(abi.ResourceResourceClaim, rclaim("gpu-9", false, 0)),
			pods: users, want: []abi.Hint{skip, skip, skip}},
		{name: "skip-other-namespace", ev: policytest.StorageAdd(abi.ResourceResourceClaim, &abi.StorageObject{Namespace: "other", Name: "gpu-0"}),
			pods: users, want: []abi.Hint{skip, skip, skip}},
		{name: "structured-claim-change-allocation: the pod's claim got allocated",
			ev:   policytest.StorageUpdate(abi.ResourceResourceClaim, rclaim("gpu-0", false, 0), rclaim("gpu-0", true, 1)),
			pods: users, want: []abi.Hint{queue, skip, skip}},
		{name: "structured-claim-deallocate: devices freed for every pod",
			ev:   policytest.StorageUpdate(abi.ResourceResourceClaim, rclaim("gpu-9", true, 1), rclaim("gpu-9", false, 0)),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "reservation removed, still allocated: only the claim's pods",
			ev:   policytest.StorageUpdate(abi.ResourceResourceClaim, rclaim("gpu-1", true, 1), rclaim("gpu-1", true, 0)),
			pods: users, want: []abi.Hint{skip, queue, skip}},
		{name: "skip-deletes: a claim deleted without allocation", ev: policytest.StorageDelete(abi.ResourceResourceClaim, rclaim("gpu-0", false, 0)),
			pods: users, want: []abi.Hint{skip, skip, skip}},
		{name: "allocated claim deleted (or final state unknown): every pod", ev: policytest.StorageDelete(abi.ResourceResourceClaim, rclaim("gpu-9", true, 1)),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "slice added", ev: policytest.StorageAdd(abi.ResourceResourceSlice, &abi.StorageObject{Name: "s", Driver: "gpu.example.com", Pool: "n1", NodeName: "n1"}),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "class updated", ev: policytest.StorageUpdate(abi.ResourceDeviceClass, &abi.StorageObject{Name: "gpu.example.com"}, &abi.StorageObject{Name: "gpu.example.com"}),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "DeviceTaintRule deleted", ev: policytest.StorageDelete(abi.ResourceDeviceTaintRule, &abi.StorageObject{Name: "r", Driver: "gpu.example.com"}),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "node label changed", ev: policytest.NodeUpdate(node().Obj(), node().Label("zone", "a").Obj(), abi.ActionUpdateNodeLabel),
			pods: users, want: []abi.Hint{queue, queue, queue}},
		{name: "node taint changed: not registered", ev: policytest.NodeUpdate(node().Obj(), node().Taint("k", "v", abi.EffectNoSchedule).Obj(), abi.ActionUpdateNodeTaint),
			pods: users, want: []abi.Hint{skip, skip, skip}},
		// isSchedulableAfterTargetPodUpdate
		{name: "generated claim named: the pod itself queues",
			ev: policytest.UnscheduledPodUpdate(p("tmpl").ResourceClaim("").Obj(), p("tmpl").ResourceClaim("tmpl-gpu-x1").Obj(),
				abi.ActionUpdatePodGeneratedResourceClaim),
			pods: []*policytest.PodWrapper{p("tmpl").ResourceClaim(""), p("bystander").ResourceClaim("")}, want: []abi.Hint{queue, skip}},
		{name: "one of two generated claims still missing",
			ev: policytest.UnscheduledPodUpdate(p("tmpl").ResourceClaim("").ResourceClaim("").Obj(), p("tmpl").ResourceClaim("tmpl-a").ResourceClaim("").Obj(),
				abi.ActionUpdatePodGeneratedResourceClaim),
			pods: []*policytest.PodWrapper{p("tmpl").ResourceClaim("").ResourceClaim("")}, want: []abi.Hint{skip}},
		{name: "pod label update: not DynamicResources' event",
			ev:   policytest.UnscheduledPodUpdate(p("tmpl").Obj(), p("tmpl").Label("a", "b").Obj(), abi.ActionUpdatePodLabel),
			pods: []*policytest.PodWrapper{p("tmpl")}, want: []abi.Hint{skip}},
		{name: "pods rejected by another plugin are not asked", ev: policytest.StorageAdd(abi.ResourceResourceClaim, rclaim("gpu-0", false, 0)),
			pods: []*policytest.PodWrapper{pending("fit", abi.PluginNodeResourcesFit).ResourceClaim("gpu-0")}, want: []abi.Hint{skip}},
	}
	policytest.Run(t, hintsPolicy, func(t *testing.T, s policytest.Slots) { runCases(t, s.QueueingHint, cases) })
}
