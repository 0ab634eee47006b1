package main

import (
	"context"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// allocation is one measured pod and its claim for devicesOnTheirNodes:
// the pod's node, and the claim's pool and device ("" pool: unallocated).
type allocation struct{ node, pool, device string }

// allocated is a run on a fake clientset with a measured pod p<i> per
// allocation, its claim c<i> named in its status and reserved for it.
func allocated(t *testing.T, as ...allocation) *run {
	t.Helper()
	r := &run{c: fake.NewClientset(), ns: "perf", id: "test-run"}
	ctx := context.Background()
	for i, a := range as {
		p := makePod(r.ns, "p"+strconv.Itoa(i), phaseMeasured, small)
		p.UID = types.UID("uid-" + strconv.Itoa(i))
		p.Spec.NodeName = a.node
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: perfPodClaim, ResourceClaimName: ptr.To("c" + strconv.Itoa(i))}}
		if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "c" + strconv.Itoa(i)}}
		if a.pool != "" {
			c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
				Results: []resourcev1.DeviceRequestAllocationResult{{Request: "req-0", Driver: perfDriver, Pool: a.pool, Device: a.device}},
			}}
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
		}
		if _, err := r.c.ResourceV1().ResourceClaims(r.ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestDevicesOnTheirNodes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		as      []allocation
		wantErr string
	}{
		{"each on its node", []allocation{{"n0", "n0", "d0"}, {"n0", "n0", "d1"}, {"n1", "n1", "d0"}}, ""},
		{"device of another node", []allocation{{"n0", "n1", "d0"}}, "pod p0 on n0: claim c0 allocated a device of n1"},
		{"not allocated", []allocation{{"n0", "", ""}}, "claim c0 not allocated one device"},
		{"device twice", []allocation{{"n0", "n0", "d0"}, {"n0", "n0", "d0"}}, "device n0/d0 allocated to claims c0 and c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, devicesOnTheirNodes(context.Background(), allocated(t, tc.as...)), tc.wantErr)
		})
	}
}
