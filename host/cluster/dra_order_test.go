package cluster_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cluster"
	"github.com/wasmsched/wasmsched/host/dra"
)

// claimProbe is a cluster.Queue that notes, for each claim event it hears,
// the devices host/dra's Manager counts as taken at that moment.
type claimProbe struct {
	*fakeQueue
	m *dra.Manager

	mu    sync.Mutex
	heard []claimHeard
}

type claimHeard struct {
	event string
	taken []string
}

func (q *claimProbe) MoveOnEvent(ev abi.Event) {
	if ev.Resource != abi.ResourceResourceClaim {
		return
	}
	var taken []string
	for id := range q.m.AllocatedState().AllocatedDevices {
		taken = append(taken, id.String())
	}
	slices.Sort(taken)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.heard = append(q.heard, claimHeard{describe(ev), taken})
}

func (q *claimProbe) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.heard = nil
}

func (q *claimProbe) got() []claimHeard {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.heard)
}

// TestClaimEventsFollowTheDRAState: a queue hears of a ResourceClaim change
// only once host/dra's Manager has applied it (issue 30, e2e
// TestDRA/device-taken). There, kube-controller-manager deallocated the
// claim of a deleted pod; the queue's claim handler, registered on the
// informer beside the Manager's, ran first on its own goroutine, the hint
// queued the waiting pod, and its attempt found the device still taken;
// the claim's delete that followed queues nobody (no allocation left), so
// the pod waited for the 5-minute flush.
//
// The ordering is injected: a subscriber after the cluster's blocks the
// Manager's handler on the claim's first update (its deletion starting),
// so that the Manager has not applied the deallocation that follows. While
// it is held, no queue may hear of the deallocation (a handler of its own
// on the informer would, within the second the test watches for it); once
// released, the queue hears of it with the device free.
func TestClaimEventsFollowTheDRAState(t *testing.T) {
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-0", UID: "uid-c-0",
			Finalizers: []string{resourceapi.Finalizer}},
		Status: resourceapi.ResourceClaimStatus{
			Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
				Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: "drv", Pool: "n1", Device: "gpu-0"}},
			}},
			ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p-0", UID: types.UID("uid-p-0")}},
		},
	}
	client := fake.NewClientset(claim)
	probe := &claimProbe{fakeQueue: &fakeQueue{name: "q1", log: &callLog{}}}
	// The DRA state over the informers the cluster watches through, as
	// host/app builds it (framework.Handle.DRA).
	factory := informers.NewSharedInformerFactory(client, 0)
	r := factory.Resource().V1()
	m, err := dra.New(dra.Options{Claims: r.ResourceClaims().Informer(), Slices: r.ResourceSlices(),
		TaintRules: r.DeviceTaintRules(), Classes: r.DeviceClasses().Lister(), Client: client})
	if err != nil {
		t.Fatal(err)
	}
	probe.m = m
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := cluster.New(ctx, client, cache.New(), map[string]cluster.Queue{"wasmsched": probe},
		cluster.NewMembers(), slog.New(slog.NewTextHandler(io.Discard, nil)),
		cluster.WithInformerFactory(factory), cluster.WithClaimEvents(m))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cl.Shutdown)
	t.Cleanup(cancel)
	held, release := make(chan struct{}), make(chan struct{})
	var hold, free sync.Once
	m.Subscribe(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) {
		hold.Do(func() { close(held); <-release })
	}})
	unhold := func() { free.Do(func() { close(release) }) }
	t.Cleanup(unhold) // first: the informers stop only once no handler is held
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// Start returns once the handlers have seen the claims listed.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(probe.got()) > 0, nil
	}); err != nil {
		t.Fatal("the queue never heard of the claim listed at start")
	}
	probe.reset()
	claims := client.ResourceV1().ResourceClaims("ns")

	// The claim's deletion starts (the finalizer keeps it): its status is
	// unchanged, no queue hears of it; the Manager applies it and is held.
	deleting := claim.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if _, err := claims.Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the Manager's handler never saw the update")
	}

	// The controller's deallocation: reservedFor emptied, allocation
	// cleared, in one status update.
	deallocated := deleting.DeepCopy()
	deallocated.Status.ReservedFor, deallocated.Status.Allocation = nil, nil
	if _, err := claims.UpdateStatus(ctx, deallocated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		c, err := r.ResourceClaims().Lister().ResourceClaims("ns").Get("c-0")
		return err == nil && c.Status.Allocation == nil, nil
	}); err != nil {
		t.Fatalf("the informer never had the deallocation: %v", err)
	}
	_ = wait.PollUntilContextTimeout(ctx, time.Millisecond, time.Second, true, func(context.Context) (bool, error) {
		return len(probe.got()) > 0, nil
	})
	if got := probe.got(); len(got) > 0 {
		t.Errorf("the queue heard of the deallocation before the DRA state had it: %+v", got)
	}

	unhold()
	want := []claimHeard{{event: "ResourceClaim UpdateOther ns/c-0"}}
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(probe.got()) >= len(want), nil
	}); err != nil {
		t.Fatalf("the queue never heard of the deallocation; heard %+v", probe.got())
	}
	if got := probe.got(); !slices.EqualFunc(got, want, func(a, b claimHeard) bool {
		return a.event == b.event && slices.Equal(a.taken, b.taken)
	}) {
		t.Errorf("heard %+v, want %+v (the deallocation, the device free)", got, want)
	}
}
