package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/podview"
)

const mi = 1 << 20

type derived struct {
	Requests  Resource
	NonZero   Resource
	HostPorts []HostPort
}

type podInfoCase struct {
	name string
	pod  *v1.Pod
	want derived
}

func podInfoCases() []podInfoCase {
	return []podInfoCase{
		{
			name: "no requests: non-zero defaults",
			pod:  makePod("p").container(nil).obj(),
			want: derived{
				Requests: Resource{Pods: 1},
				NonZero:  Resource{MilliCPU: 100, Memory: 200 * mi, Pods: 1},
			},
		},
		{
			name: "defaults per container that omits a resource",
			pod: makePod("p").
				container(res("cpu", "500m", "memory", "1Gi")).
				container(res("cpu", "200m")).
				container(res("memory", "0")). // explicitly zero: kept
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 700, Memory: 1024 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 800, Memory: 1024*mi + 200*mi, Pods: 1},
			},
		},
		{
			name: "init container peak",
			pod: makePod("p").
				initContainer(false, res("cpu", "2", "memory", "100Mi"), hostPort("", "", 9000)).
				container(res("cpu", "500m", "memory", "300Mi")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 2000, Memory: 300 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 2000, Memory: 300 * mi, Pods: 1},
				// an ordinary init container's port is not held
			},
		},
		{
			name: "sidecar: added to containers and to later init containers",
			pod: makePod("p").
				initContainer(true, res("cpu", "300m"), hostPort("10.0.0.1", v1.ProtocolUDP, 53)).
				initContainer(false, res("cpu", "1")).
				container(res("cpu", "500m"), hostPort("", "", 8080)).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 1300, Pods: 1},
				NonZero:  Resource{MilliCPU: 1300, Memory: 400 * mi, Pods: 1},
				HostPorts: []HostPort{
					{IP: "10.0.0.1", Protocol: v1.ProtocolUDP, Port: 53},
					{IP: "0.0.0.0", Protocol: v1.ProtocolTCP, Port: 8080},
				},
			},
		},
		{
			name: "overhead",
			pod: makePod("p").
				container(res("cpu", "500m")).
				overhead(res("cpu", "250m", "memory", "100Mi")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 750, Memory: 100 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 750, Memory: 300 * mi, Pods: 1},
			},
		},
		{
			name: "pod-level requests replace the containers' sum; only a resource missing at both levels is defaulted",
			pod: makePod("p").
				podRequests(res("cpu", "2")).
				container(nil).
				container(res("cpu", "100m")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 2000, Pods: 1},
				NonZero:  Resource{MilliCPU: 2000, Memory: 400 * mi, Pods: 1},
			},
		},
		{
			name: "extended resources and hugepages",
			pod: makePod("p").
				container(res("cpu", "1", "memory", "1Gi", "example.com/gpu", "2", "hugepages-2Mi", "4Mi")).
				container(res("example.com/gpu", "1")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 1000, Memory: 1024 * mi, Pods: 1,
					Scalar: map[v1.ResourceName]int64{"example.com/gpu": 3, "hugepages-2Mi": 4 * mi}},
				NonZero: Resource{MilliCPU: 1100, Memory: 1224 * mi, Pods: 1,
					Scalar: map[v1.ResourceName]int64{"example.com/gpu": 3, "hugepages-2Mi": 4 * mi}},
			},
		},
		{
			name: "bound pod counts allocated resources of an in-place resize",
			pod: makePod("p").node("n1").
				container(res("cpu", "1", "memory", "1Gi")).
				allocated("c0", res("cpu", "2", "memory", "1Gi")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 2000, Memory: 1024 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 2000, Memory: 1024 * mi, Pods: 1},
			},
		},
		{
			name: "pending pod counts the spec only",
			pod: makePod("p").
				container(res("cpu", "1", "memory", "1Gi")).
				allocated("c0", res("cpu", "2", "memory", "1Gi")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 1000, Memory: 1024 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 1000, Memory: 1024 * mi, Pods: 1},
			},
		},
	}
}

func TestNewPodInfo(t *testing.T) {
	for _, tc := range podInfoCases() {
		t.Run(tc.name, func(t *testing.T) {
			pi := NewPodInfo(tc.pod)
			if pi.Pod != tc.pod {
				t.Errorf("Pod is not the pod passed in")
			}
			got := derived{Requests: pi.Requests, NonZero: pi.NonZero, HostPorts: pi.HostPorts}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewPodInfo (-want, +got):\n%s", diff)
			}
			for k, v := range pi.Requests.Scalar {
				pi.NonZero.Scalar[k] = v + 1
				if pi.Requests.Scalar[k] != v {
					t.Errorf("Requests and NonZero share a Scalar map")
				}
			}
		})
	}
}

// TestRequestsAgreeWithPodview checks that the cache accounts a pod with the
// requests its record shows a policy (host/podview has its own copy of the
// PodRequests options).
func TestRequestsAgreeWithPodview(t *testing.T) {
	for _, tc := range podInfoCases() {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int64{}
			for _, q := range podview.Requests(tc.pod) {
				want[q.Name] = q.Value
			}
			r := NewPodInfo(tc.pod).Requests
			got := map[string]int64{}
			for name := range r.ResourceList() {
				got[string(name)] = r.Get(name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("podview.Requests vs NewPodInfo (-want, +got):\n%s", diff)
			}
		})
	}
}
