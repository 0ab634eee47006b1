package cache

import (
	"maps"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NewResource converts a resource list to a Resource: cpu in millicores,
// memory, ephemeral-storage and pods in base units (rounded up, as
// resource.Quantity.Value does), and every resource upstream treats as scalar
// (extended resources, hugepages-*, kubernetes.io/-prefixed native resources,
// attachable-volumes-*) into Scalar. Other names (an unprefixed name the API
// does not define, a "requests." quota name) are dropped, as upstream's
// framework.Resource.Add drops them. Zero scalar amounts are dropped so that
// equal amounts have one representation.
func NewResource(rl v1.ResourceList) Resource {
	var r Resource
	for name, q := range rl {
		r.addQuantity(name, q)
	}
	return r
}

// addQuantity adds q of name to r in NewResource's units.
func (r *Resource) addQuantity(name v1.ResourceName, q resource.Quantity) {
	switch name {
	case v1.ResourceCPU:
		r.MilliCPU += q.MilliValue()
	case v1.ResourceMemory:
		r.Memory += q.Value()
	case v1.ResourceEphemeralStorage:
		r.EphemeralStorage += q.Value()
	case v1.ResourcePods:
		r.Pods += q.Value()
	default:
		if isScalarResourceName(name) {
			r.addScalar(name, q.Value())
		}
	}
}

// Get returns the amount of name, in the units of NewResource; 0 for a
// resource r does not hold.
func (r Resource) Get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return r.Pods
	}
	return r.Scalar[name]
}

// Add adds o to r. r's Scalar map is allocated if o has scalars, never
// shared with o.
func (r *Resource) Add(o Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.Pods += o.Pods
	for name, v := range o.Scalar {
		r.addScalar(name, v)
	}
}

// Sub subtracts o from r. Scalars that reach zero are deleted (and an empty
// map becomes nil), so a node info that gained and lost a pod compares equal
// to one that never had it.
func (r *Resource) Sub(o Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.Pods -= o.Pods
	for name, v := range o.Scalar {
		r.addScalar(name, -v)
	}
}

// Clone returns a copy of r that shares no memory with it: Resource is a
// value, but its Scalar map is a reference.
func (r Resource) Clone() Resource {
	r.Scalar = maps.Clone(r.Scalar)
	return r
}

// ResourceList is the inverse of NewResource: the non-zero amounts of r as a
// resource list, or nil when every amount is zero.
func (r Resource) ResourceList() v1.ResourceList {
	n := len(r.Scalar)
	for _, v := range [...]int64{r.MilliCPU, r.Memory, r.EphemeralStorage, r.Pods} {
		if v != 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	rl := make(v1.ResourceList, n)
	if r.MilliCPU != 0 {
		rl[v1.ResourceCPU] = *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI)
	}
	if r.Memory != 0 {
		rl[v1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	if r.EphemeralStorage != 0 {
		rl[v1.ResourceEphemeralStorage] = *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI)
	}
	if r.Pods != 0 {
		rl[v1.ResourcePods] = *resource.NewQuantity(r.Pods, resource.DecimalSI)
	}
	for name, v := range r.Scalar {
		format := resource.DecimalSI
		if strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) {
			format = resource.BinarySI
		}
		rl[name] = *resource.NewQuantity(v, format)
	}
	return rl
}

// addScalar adds v to the scalar name, keeping Scalar free of zeros.
func (r *Resource) addScalar(name v1.ResourceName, v int64) {
	if v == 0 {
		return
	}
	if r.Scalar == nil {
		r.Scalar = make(map[v1.ResourceName]int64, 1)
	}
	if sum := r.Scalar[name] + v; sum != 0 {
		r.Scalar[name] = sum
		return
	}
	delete(r.Scalar, name)
	if len(r.Scalar) == 0 {
		r.Scalar = nil
	}
}

// isScalarResourceName is upstream's schedutil.IsScalarResourceName, written
// out because k8s.io/kubernetes is not a dependency: extended resources,
// hugepages, kubernetes.io/-prefixed native resources and attachable volumes.
func isScalarResourceName(name v1.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix) ||
		isExtendedResourceName(s)
}

// isExtendedResourceName is upstream's v1helper.IsExtendedResourceName: a
// name outside the kubernetes.io namespace (so it has a "/"), not a quota
// "requests." name, and a qualified name once prefixed with "requests.".
func isExtendedResourceName(s string) bool {
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// IsScalarResourceName reports whether name is a resource Resource keeps in
// Scalar (upstream's schedutil.IsScalarResourceName), for the scorers of a
// configured resource list.
func IsScalarResourceName(name v1.ResourceName) bool { return isScalarResourceName(name) }

// IsExtendedResourceName is upstream's v1helper.IsExtendedResourceName, for
// NodeResourcesFit's ignoredResources and ignoredResourceGroups.
func IsExtendedResourceName(name v1.ResourceName) bool { return isExtendedResourceName(string(name)) }
