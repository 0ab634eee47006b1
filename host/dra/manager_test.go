package dra

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

func claim(name, rv string, devices ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv}}
	if len(devices) > 0 {
		c.Status.Allocation = &resourceapi.AllocationResult{}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
				resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: "drv", Pool: "p", Device: d})
		}
	}
	return c
}

func allocated(t *testing.T, m *Manager) []string {
	t.Helper()
	var out []string
	for id := range m.AllocatedState().AllocatedDevices {
		out = append(out, id.Device.String())
	}
	return sets.List(sets.New(out...))
}

func newManager(t *testing.T) *Manager {
	t.Helper()
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAssumeCache follows upstream's assume cache: an assumed claim is seen
// until the informer brings a newer version; an older or equal version
// from the informer leaves it; Restore goes back to the informer's; the
// allocated devices follow what is seen.
func TestAssumeCache(t *testing.T) {
	m := newManager(t)
	m.onClaim(claim("a", "5"), false)
	if _, err := m.Get("ns", "b"); err == nil || err.Error() != `could not find ResourceClaim "ns/b"` {
		t.Errorf("Get of a claim not known: %v", err)
	}
	if err := m.Assume(claim("a", "4", "d0")); err == nil {
		t.Error("Assume of an older version succeeded")
	}
	if err := m.Assume(claim("a", "6", "d0")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d0"}, allocated(t, m)); diff != "" {
		t.Errorf("allocated after Assume (-want, +got):\n%s", diff)
	}
	m.onClaim(claim("a", "6"), false) // the informer's version of the write, or a resync
	if got, _ := m.Get("ns", "a"); got.Status.Allocation == nil {
		t.Error("an informer event not newer ended the assumption")
	}
	m.Restore("ns", "a")
	if got, _ := m.Get("ns", "a"); got.ResourceVersion != "5" || len(allocated(t, m)) != 0 {
		t.Errorf("after Restore: version %s, allocated %v; want the informer's 5, none", got.ResourceVersion, allocated(t, m))
	}
	if err := m.Assume(claim("a", "6", "d0")); err != nil {
		t.Fatal(err)
	}
	m.onClaim(claim("a", "7", "d1"), false)
	if diff := cmp.Diff([]string{"d1"}, allocated(t, m)); diff != "" {
		t.Errorf("allocated after a newer informer version (-want, +got):\n%s", diff)
	}
	m.onClaim(toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: claim("a", "7", "d1")}, true)
	if _, err := m.Get("ns", "a"); err == nil || len(allocated(t, m)) != 0 {
		t.Errorf("after delete: Get error %v, allocated %v; want not found, none", err, allocated(t, m))
	}
}

// TestReserve checks the in-flight allocations: all of a pod's claims or
// none, a device taken (seen or in flight) is a conflict, admin access
// takes nothing, Release frees.
func TestReserve(t *testing.T) {
	m := newManager(t)
	m.onClaim(claim("seen", "1", "d0"), false)
	for _, n := range []string{"a", "b", "c"} {
		m.onClaim(claim(n, "1"), false)
	}
	if err := m.Reserve([]*resourceapi.ResourceClaim{claim("a", "1", "d1"), claim("b", "1", "d0")}); !errors.Is(err, ErrConflict) {
		t.Errorf("Reserve of d0, allocated to a claim: %v, want ErrConflict", err)
	}
	if m.InFlight("uid-a") != nil {
		t.Error("a put in flight by a failed Reserve")
	}
	if err := m.Reserve([]*resourceapi.ResourceClaim{claim("a", "1", "d1")}); err != nil {
		t.Fatal(err)
	}
	if err := m.Reserve([]*resourceapi.ResourceClaim{claim("b", "1", "d1")}); !errors.Is(err, ErrConflict) {
		t.Errorf("Reserve of d1, in flight: %v, want ErrConflict", err)
	}
	if err := m.Reserve([]*resourceapi.ResourceClaim{claim("a", "1", "d2")}); !errors.Is(err, ErrConflict) {
		t.Errorf("Reserve of a claim in flight: %v, want ErrConflict", err)
	}
	admin := claim("c", "1", "d1")
	admin.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
	if err := m.Reserve([]*resourceapi.ResourceClaim{admin}); err != nil {
		t.Errorf("Reserve with admin access of a device in flight: %v", err)
	}
	want := sets.New(structured.MakeDeviceID("drv", "p", "d0"), structured.MakeDeviceID("drv", "p", "d1"))
	if diff := cmp.Diff(want, m.AllocatedState().AllocatedDevices); diff != "" {
		t.Errorf("allocated state (-want, +got):\n%s", diff)
	}
	m.Release("uid-a", "uid-c")
	if err := m.Reserve([]*resourceapi.ResourceClaim{claim("b", "1", "d1")}); err != nil {
		t.Errorf("Reserve of d1 after Release: %v", err)
	}
}

// TestSubscribersSeeTheAppliedChange: a subscriber's handler runs after the
// Manager applied the informer's event, so a claim deallocated or deleted
// has freed its device by the time the queue hears of it.
func TestSubscribersSeeTheAppliedChange(t *testing.T) {
	c := claim("a", "", "d0")
	client := fake.NewClientset(c)
	factory := informers.NewSharedInformerFactory(client, 0)
	m, err := New(Options{Claims: factory.Resource().V1().ResourceClaims().Informer()})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		event     string
		allocated []string
	}
	got := make(chan seen, 3)
	m.Subscribe(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { got <- seen{"add", allocated(t, m)} },
		UpdateFunc: func(_, _ any) { got <- seen{"update", allocated(t, m)} },
		DeleteFunc: func(any) { got <- seen{"delete", allocated(t, m)} },
	})
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	next := func() seen {
		select {
		case s := <-got:
			return s
		case <-time.After(30 * time.Second):
			t.Fatal("no event")
			return seen{}
		}
	}
	if s := next(); s.event != "add" || !slices.Equal(s.allocated, []string{"d0"}) {
		t.Errorf("on add: %+v, want the claim's device taken", s)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), m.Synced) {
		t.Fatal("not synced")
	}
	c = c.DeepCopy()
	c.Status.Allocation = nil
	if _, err := client.ResourceV1().ResourceClaims("ns").UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := next(); s.event != "update" || len(s.allocated) != 0 {
		t.Errorf("on the deallocation: %+v, want the device free", s)
	}
}

// TestSharedByInformerNotByHandle: client-go's typed informers wrap the
// shared informer anew on each Informer() call; two handles on one
// informer must still get one Manager (one assume cache, one set of
// in-flight allocations), and another informer another.
func TestSharedByInformerNotByHandle(t *testing.T) {
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	a, err := Shared(Options{Claims: factory.Resource().V1().ResourceClaims().Informer()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Shared(Options{Claims: factory.Resource().V1().ResourceClaims().Informer()})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("two handles on one claim informer got two Managers")
	}
	other := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	c, err := Shared(Options{Claims: other.Resource().V1().ResourceClaims().Informer()})
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Error("another claim informer got the same Manager")
	}
}
