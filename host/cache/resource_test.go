package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestNewResource(t *testing.T) {
	tests := []struct {
		name string
		rl   v1.ResourceList
		want Resource
	}{
		{name: "empty", rl: nil, want: Resource{}},
		{
			name: "native",
			rl:   res("cpu", "1500m", "memory", "1Gi", "ephemeral-storage", "10G", "pods", "110"),
			want: Resource{MilliCPU: 1500, Memory: 1 << 30, EphemeralStorage: 10e9, Pods: 110},
		},
		{
			name: "memory rounds up",
			rl:   res("memory", "1500m"),
			want: Resource{Memory: 2},
		},
		{
			name: "scalars",
			rl: res("example.com/gpu", "2", "hugepages-2Mi", "4Mi", "kubernetes.io/batch-slots", "3",
				"attachable-volumes-aws-ebs", "39", "nvidia.com/mig-1g", "1"),
			want: Resource{Scalar: map[v1.ResourceName]int64{
				"example.com/gpu": 2, "hugepages-2Mi": 4 << 20, "kubernetes.io/batch-slots": 3,
				"attachable-volumes-aws-ebs": 39, "nvidia.com/mig-1g": 1,
			}},
		},
		{
			name: "not scalar: unknown unprefixed, quota name, invalid",
			rl:   res("foo", "1", "requests.example.com/gpu", "1", "example.com/a b", "1"),
			want: Resource{},
		},
		{
			name: "zero scalar dropped",
			rl:   res("example.com/gpu", "0", "cpu", "0"),
			want: Resource{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewResource(tc.rl)); diff != "" {
				t.Errorf("NewResource (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestResourceGet(t *testing.T) {
	r := NewResource(res("cpu", "2", "memory", "1Ki", "ephemeral-storage", "5", "pods", "3", "example.com/gpu", "4"))
	tests := []struct {
		name v1.ResourceName
		want int64
	}{
		{v1.ResourceCPU, 2000},
		{v1.ResourceMemory, 1024},
		{v1.ResourceEphemeralStorage, 5},
		{v1.ResourcePods, 3},
		{"example.com/gpu", 4},
		{"example.com/fpga", 0},
	}
	for _, tc := range tests {
		if got := r.Get(tc.name); got != tc.want {
			t.Errorf("Get(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestResourceAddSub(t *testing.T) {
	a := NewResource(res("cpu", "1", "memory", "1Gi", "pods", "1", "example.com/gpu", "1"))
	b := NewResource(res("cpu", "500m", "ephemeral-storage", "1Gi", "pods", "1", "example.com/gpu", "2", "hugepages-1Gi", "1Gi"))

	var sum Resource
	sum.Add(a)
	sum.Add(b)
	want := Resource{MilliCPU: 1500, Memory: 1 << 30, EphemeralStorage: 1 << 30, Pods: 2,
		Scalar: map[v1.ResourceName]int64{"example.com/gpu": 3, "hugepages-1Gi": 1 << 30}}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("a+b (-want, +got):\n%s", diff)
	}
	// The sum's map is its own.
	sum.Scalar["example.com/gpu"] = 100
	if a.Scalar["example.com/gpu"] != 1 || b.Scalar["example.com/gpu"] != 2 {
		t.Errorf("Add shares the operand's Scalar map")
	}
	sum.Scalar["example.com/gpu"] = 3

	sum.Sub(b)
	if diff := cmp.Diff(a, sum); diff != "" {
		t.Errorf("a+b-b (-want, +got):\n%s", diff)
	}
	sum.Sub(a)
	if diff := cmp.Diff(Resource{}, sum); diff != "" {
		t.Errorf("a-a is not the zero Resource (-want, +got):\n%s", diff)
	}
}

func TestResourceClone(t *testing.T) {
	r := NewResource(res("cpu", "1", "example.com/gpu", "1"))
	c := r.Clone()
	c.Scalar["example.com/gpu"] = 7
	c.MilliCPU = 5
	if r.Scalar["example.com/gpu"] != 1 || r.MilliCPU != 1000 {
		t.Errorf("changing the clone changed the original: %+v", r)
	}
	if got := (Resource{}).Clone(); got.Scalar != nil {
		t.Errorf("clone of the zero Resource has Scalar %v", got.Scalar)
	}
}

func TestResourceList(t *testing.T) {
	tests := []struct {
		name string
		rl   v1.ResourceList
	}{
		{"empty", nil},
		{"native", res("cpu", "1500m", "memory", "3Gi", "ephemeral-storage", "7", "pods", "110")},
		{"scalars", res("example.com/gpu", "2", "hugepages-2Mi", "6Mi", "kubernetes.io/x", "1")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NewResource(tc.rl).ResourceList()
			if diff := cmp.Diff(tc.rl, got, cmp.Comparer(func(a, b v1.ResourceList) bool {
				if len(a) != len(b) {
					return false
				}
				for k, q := range a {
					if q2, ok := b[k]; !ok || q.Cmp(q2) != 0 {
						return false
					}
				}
				return true
			})); diff != "" {
				t.Errorf("ResourceList(NewResource(rl)) (-want, +got):\n%s", diff)
			}
			r := NewResource(tc.rl)
			if diff := cmp.Diff(r, NewResource(r.ResourceList())); diff != "" {
				t.Errorf("NewResource(r.ResourceList()) (-want, +got):\n%s", diff)
			}
		})
	}
}
