package dra

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// TestExtendedResourcesClass checks the name-to-class rules: explicit
// names, the implicit deviceclass.resource.kubernetes.io/<class>, a clash
// won by the newest class then the lower name, and names no class maps.
func TestExtendedResourcesClass(t *testing.T) {
	class := func(name, ext string, created int64) *resourceapi.DeviceClass {
		c := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Time{Time: time.Unix(created, 0)}}}
		if ext != "" {
			c.Spec.ExtendedResourceName = ptr.To(ext)
		}
		return c
	}
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{})
	for _, c := range []*resourceapi.DeviceClass{class("old", "a.test/gpu", 1), class("new", "a.test/gpu", 2),
		class("b2", "b.test/gpu", 1), class("b1", "b.test/gpu", 1), class("plain", "", 1)} {
		if err := idx.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	e := NewExtendedResources(resourcelisters.NewDeviceClassLister(idx))
	got := map[string]string{}
	for _, name := range []string{"a.test/gpu", "b.test/gpu", "c.test/gpu", "deviceclass.resource.kubernetes.io/plain",
		"deviceclass.resource.kubernetes.io/none", "cpu", "hugepages-2Mi"} {
		if c := e.Class(v1.ResourceName(name)); c != nil {
			got[name] = c.Name
		}
	}
	want := map[string]string{"a.test/gpu": "new", "b.test/gpu": "b1", "deviceclass.resource.kubernetes.io/plain": "plain"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("classes (-want, +got):\n%s", diff)
	}
	if c := NewExtendedResources(nil).Class("a.test/gpu"); c != nil {
		t.Errorf("without a lister: %v, want none", c)
	}
}

// TestAssumeCreatedForget follows the claim the scheduler creates for a
// pod's extended resources: seen and its devices taken before the informer
// brings it, an older informer version leaves it, Restore before the
// informer saw it drops it; after Forget the informer's events until the
// delete are ignored.
func TestAssumeCreatedForget(t *testing.T) {
	m := newManager(t)
	if err := m.AssumeCreated(claim("x", "3", "d0")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d0"}, allocated(t, m)); diff != "" {
		t.Errorf("allocated after AssumeCreated (-want, +got):\n%s", diff)
	}
	m.Restore("ns", "x")
	if _, err := m.Get("ns", "x"); err == nil || len(allocated(t, m)) != 0 {
		t.Errorf("after Restore of a claim the informer never brought: Get err %v, allocated %v; want gone", err, allocated(t, m))
	}

	if err := m.AssumeCreated(claim("x", "3", "d0")); err != nil {
		t.Fatal(err)
	}
	m.onClaim(claim("x", "2"), false) // the informer's create event, older
	if got, _ := m.Get("ns", "x"); got.ResourceVersion != "3" {
		t.Errorf("an older informer version replaced the assumed claim: %s", got.ResourceVersion)
	}
	m.Forget(claim("x", "3"))
	m.onClaim(claim("x", "4", "d0"), false) // an update before the delete
	if _, err := m.Get("ns", "x"); err == nil || len(allocated(t, m)) != 0 {
		t.Errorf("after Forget and a late update: Get err %v, allocated %v; want gone", err, allocated(t, m))
	}
	m.onClaim(claim("x", "4", "d0"), true)
	m.onClaim(claim("x", "5", "d1"), false) // a new claim of the same UID cannot happen; an event after the delete is seen
	if diff := cmp.Diff([]string{"d1"}, allocated(t, m)); diff != "" {
		t.Errorf("allocated after the delete event ended the tombstone (-want, +got):\n%s", diff)
	}
}
