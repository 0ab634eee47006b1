package cache

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

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
			name: "an init container without a memory request counts the default against the containers'",
			pod: makePod("p").
				initContainer(false, res("cpu", "1")).
				container(res("cpu", "500m", "memory", "100Mi")).
				obj(),
			want: derived{
				Requests: Resource{MilliCPU: 1000, Memory: 100 * mi, Pods: 1},
				NonZero:  Resource{MilliCPU: 1000, Memory: 200 * mi, Pods: 1},
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

// TestAssumed: the PodInfo of the assumed copy is what NewPodInfo derives
// for it, whether the derived fields are shared (a pod whose status holds
// no resources) or derived again (a resized pod, whose bound requests count
// its status), and the pending pod is left as it was.
func TestAssumed(t *testing.T) {
	resized := func(p *v1.Pod) *v1.Pod {
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			AllocatedResources: v1.ResourceList{"cpu": resource.MustParse("3")}}}
		return p
	}
	infeasible := func(p *v1.Pod) *v1.Pod {
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
		return p
	}
	cases := []struct {
		name   string
		pod    *v1.Pod
		shared bool
	}{
		{"spec only", makePod("p").container(res("cpu", "500m")).obj(), true},
		{"resized", resized(makePod("p").container(res("cpu", "500m")).obj()), false},
		{"resize infeasible", infeasible(makePod("p").container(res("cpu", "500m")).obj()), false},
	}
	for _, tc := range podInfoCases() {
		if tc.pod.Spec.NodeName != "" {
			continue // bound already
		}
		cases = append(cases, struct {
			name   string
			pod    *v1.Pod
			shared bool
		}{tc.name, tc.pod, specOnly(tc.pod)}) // the comparison with NewPodInfo is what these check
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pending := NewPodInfo(tc.pod)
			got := pending.Assumed("n1")
			if got.Pod == tc.pod || got.Pod.Spec.NodeName != "n1" || tc.pod.Spec.NodeName != "" {
				t.Fatalf("Assumed's pod %p on %q, pending pod %p on %q: want a copy on n1, the pending pod unchanged",
					got.Pod, got.Pod.Spec.NodeName, tc.pod, tc.pod.Spec.NodeName)
			}
			want := NewPodInfo(got.Pod)
			d := func(pi *PodInfo) derived {
				return derived{Requests: pi.Requests, NonZero: pi.NonZero, HostPorts: pi.HostPorts}
			}
			if diff := cmp.Diff(d(want), d(got)); diff != "" {
				t.Errorf("Assumed vs NewPodInfo of the assumed pod (-want, +got):\n%s", diff)
			}
			if shared := specOnly(got.Pod); shared != tc.shared {
				t.Errorf("derived fields shared: %v, want %v", shared, tc.shared)
			}
		})
	}
}

// The informer's version of an assumed pod shares the assumed PodInfo's
// derived fields only while its spec cannot have changed (same
// generation, set) and no status carries resources.
func TestConfirmed(t *testing.T) {
	gen := func(p *v1.Pod, g int64) *v1.Pod { p.Generation = g; return p }
	pending := NewPodInfo(gen(makePod("p").container(res("cpu", "500m")).obj(), 1))
	assumed := pending.Assumed("n1")
	bound := func(cpu string, g int64) *v1.Pod {
		p := gen(makePod("p").container(res("cpu", cpu)).obj(), g)
		p.Spec.NodeName = "n1"
		return p
	}
	withStatus := bound("500m", 1)
	withStatus.Status.ContainerStatuses = []v1.ContainerStatus{{Name: withStatus.Spec.Containers[0].Name,
		AllocatedResources: v1.ResourceList{"cpu": resource.MustParse("3")}}}
	cases := []struct {
		name    string
		pod     *v1.Pod
		wantCPU int64
	}{
		// A client that changed the spec without a new generation would be
		// believed: the assumed request stays (proof the fields are shared).
		{"same generation", bound("2", 1), 500},
		{"spec changed, generation bumped", bound("2", 2), 2000},
		{"no generation", bound("2", 0), 2000},
		{"status resources", withStatus, 3000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := assumed.Confirmed(tc.pod)
			if got.Pod != tc.pod {
				t.Fatalf("Confirmed's pod is %p, want the informer's %p", got.Pod, tc.pod)
			}
			if got.Requests.MilliCPU != tc.wantCPU {
				t.Errorf("cpu request %dm, want %dm", got.Requests.MilliCPU, tc.wantCPU)
			}
		})
	}
}

// TestNewPodInfoContainerRequests compares NewPodInfo's requests for
// pending pods with containers only (summed by podview.ContainerRequests)
// with PodRequests': every pod of no, one and two containers requesting
// each of a few lists (cpu, memory, storage, pods, extended and hugepages
// resources and a name NewResource drops, in whole, fractional and binary
// amounts, zeros included, cpu or memory left out for NonZero's defaults).
func TestNewPodInfoContainerRequests(t *testing.T) {
	q := resource.MustParse
	lists := []v1.ResourceList{
		nil,
		{v1.ResourceCPU: q("100m")},
		{v1.ResourceMemory: q("200Mi")},
		{v1.ResourceCPU: q("1.5"), v1.ResourceMemory: q("1Gi")},
		{v1.ResourceCPU: q("7m"), "example.com/gpu": q("1")},
		{"hugepages-2Mi": q("2Mi"), "notascalar": q("1"), v1.ResourcePods: q("3")},
		{v1.ResourceEphemeralStorage: q("1.5Ki"), v1.ResourceCPU: q("0")},
		{"example.com/gpu": q("0"), v1.ResourceMemory: q("0.5")},
	}
	container := func(i int) v1.Container {
		return v1.Container{Name: fmt.Sprint("c", i), Resources: v1.ResourceRequirements{Requests: lists[i]}}
	}
	pods := []*v1.Pod{{}}
	for i := range lists {
		pods = append(pods, &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container(i)}}})
		for j := range lists {
			pods = append(pods, &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container(i), container(j)}}})
		}
	}
	for _, pod := range pods {
		opts := podview.RequestOptions(false)
		want := NewResource(resourcehelper.PodRequests(pod, opts))
		want.Pods = 1
		wantNZ := want.Clone()
		opts.NonMissingContainerRequests = containerDefaults
		nz := resourcehelper.PodRequests(pod, opts)
		wantNZ.MilliCPU, wantNZ.Memory = nz.Cpu().MilliValue(), nz.Memory().Value()

		pi := NewPodInfo(pod)
		if diff := cmp.Diff(want, pi.Requests); diff != "" {
			t.Errorf("containers %v: Requests (-PodRequests, +NewPodInfo):\n%s", pod.Spec.Containers, diff)
		}
		if diff := cmp.Diff(wantNZ, pi.NonZero); diff != "" {
			t.Errorf("containers %v: NonZero (-PodRequests, +NewPodInfo):\n%s", pod.Spec.Containers, diff)
		}
	}
}
