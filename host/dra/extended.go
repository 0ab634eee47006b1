package dra

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/host/cache"
)

// ExtendedResources resolves extended resource names to the DeviceClasses
// that back them (DRAExtendedResource, on by default in 1.37): a class maps
// its spec.extendedResourceName and, always, the implicit
// deviceclass.resource.kubernetes.io/<class name>. Among classes naming the
// same resource the newest wins, then the lower name, as upstream's
// extended resource cache.
//
// It reads the DeviceClass lister on each call rather than keeping a cache
// of its own fed by informer events: callers resolve once per pod and
// requested resource, never per node, and there are few classes.
type ExtendedResources struct {
	l resourcelisters.DeviceClassLister
}

// NewExtendedResources resolves over l; a nil l maps nothing.
func NewExtendedResources(l resourcelisters.DeviceClassLister) ExtendedResources {
	return ExtendedResources{l: l}
}

// IsExtendedResourceName is upstream's IsDRAExtendedResourceName: a name a
// DeviceClass may map, an extended resource name or one of the implicit
// deviceclass.resource.kubernetes.io/ names.
func IsExtendedResourceName(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix) || cache.IsExtendedResourceName(name)
}

// Class is the DeviceClass backing the extended resource name, nil when
// none does (or the lister fails: the resource is then treated as a device
// plugin's, which the node must advertise).
func (e ExtendedResources) Class(name v1.ResourceName) *resourceapi.DeviceClass {
	if e.l == nil || !IsExtendedResourceName(name) {
		return nil
	}
	if class, ok := strings.CutPrefix(string(name), resourceapi.ResourceDeviceClassPrefix); ok {
		c, err := e.l.Get(class)
		if err != nil {
			return nil
		}
		return c
	}
	classes, err := e.l.List(labels.Everything())
	if err != nil {
		return nil
	}
	var best *resourceapi.DeviceClass
	for _, c := range classes {
		if ptr.Deref(c.Spec.ExtendedResourceName, "") != string(name) {
			continue
		}
		if best == nil || c.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(c.CreationTimestamp.Equal(&best.CreationTimestamp) && c.Name < best.Name) {
			best = c
		}
	}
	return best
}
