package podview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wasmsched/wasmsched/abi"
)

// fullPod sets every field Pod reads.
func fullPod() *v1.Pod {
	return makePod("web-0").namespace("shop").uid("u-1").node("n1").priority(1000).
		preemption(v1.PreemptNever).created(t0).
		label("tier", "web").label("app", "shop").label("zone", "a").
		gate("example.com/quota").gate("example.com/approval").
		nodeSelector("disk", "ssd").nodeSelector("arch", "amd64").
		toleration("dedicated", v1.TolerationOpEqual, "web", v1.TaintEffectNoSchedule).
		toleration("node.kubernetes.io/not-ready", v1.TolerationOpExists, "", v1.TaintEffectNoExecute).
		toleration("", v1.TolerationOpExists, "", "").
		toleration("soft", v1.TolerationOpEqual, "x", v1.TaintEffectPreferNoSchedule).
		sidecar(res("cpu", "100m", "memory", "64Mi"), hostPort(9090, v1.ProtocolUDP, "")).
		container(res("cpu", "1.5", "memory", "1Gi", "example.com/gpu", "2"),
			hostPort(80, "", ""), v1.ContainerPort{ContainerPort: 8080}, hostPort(443, v1.ProtocolTCP, "10.0.0.1")).
		container(res("cpu", "250m"), hostPort(5000, v1.ProtocolSCTP, "")).
		affinityTerm(
			[]v1.NodeSelectorRequirement{
				nodeReq("zone", v1.NodeSelectorOpIn, "a", "b"),
				nodeReq("gen", v1.NodeSelectorOpGt, "3"),
			},
			[]v1.NodeSelectorRequirement{nodeReq("metadata.name", v1.NodeSelectorOpNotIn, "n9")}).
		affinityTerm([]v1.NodeSelectorRequirement{nodeReq("spot", v1.NodeSelectorOpDoesNotExist)}, nil).
		group("shop-gang").
		obj()
}

func fullRecord() abi.Pod {
	return abi.Pod{
		UID: "u-1", Namespace: "shop", Name: "web-0", NodeName: "n1",
		Priority: 1000, PreemptNever: true, CreationTime: t0.UnixNano(),
		QueuedTime: 11, InitialAttemptTime: 12, BackoffExpiry: 13, Attempts: 3, LastFailureError: true,
		UnschedulablePlugins: []string{"NodeAffinity", "NodeResourcesFit"},
		PendingPlugins:       []string{"DynamicResources"},
		Group:                abi.PodGroupRef{Name: "shop-gang", MinCount: 4, Priority: 1000, DisruptionMode: abi.DisruptionAll, Members: 3},
		Labels:               []abi.KV{{Key: "app", Value: "shop"}, {Key: "tier", Value: "web"}, {Key: "zone", Value: "a"}},
		Requests: []abi.Quantity{
			{Name: "cpu", Value: 1850},
			{Name: "example.com/gpu", Value: 2},
			{Name: "memory", Value: 1<<30 + 64<<20},
			{Name: "pods", Value: 1},
		},
		SchedulingGates: []string{"example.com/quota", "example.com/approval"},
		NodeSelector:    []abi.KV{{Key: "arch", Value: "amd64"}, {Key: "disk", Value: "ssd"}},
		Tolerations: []abi.Toleration{
			{Key: "dedicated", Value: "web", Operator: abi.TolerationEqual, Effect: abi.EffectNoSchedule},
			{Key: "node.kubernetes.io/not-ready", Operator: abi.TolerationExists, Effect: abi.EffectNoExecute},
			{Operator: abi.TolerationExists, Effect: abi.EffectNone},
			{Key: "soft", Value: "x", Operator: abi.TolerationEqual, Effect: abi.EffectPreferNoSchedule},
		},
		HostPorts: []abi.HostPort{
			{Port: 9090, Protocol: abi.ProtocolUDP},
			{Port: 80, Protocol: abi.ProtocolTCP},
			{HostIP: "10.0.0.1", Port: 443, Protocol: abi.ProtocolTCP},
			{Port: 5000, Protocol: abi.ProtocolSCTP},
		},
		RequiredAffinity: []abi.NodeSelectorTerm{
			{
				MatchExpressions: []abi.Requirement{
					{Key: "zone", Operator: abi.SelectorIn, Values: []string{"a", "b"}},
					{Key: "gen", Operator: abi.SelectorGt, Values: []string{"3"}},
				},
				MatchFields: []abi.Requirement{{Key: "metadata.name", Operator: abi.SelectorNotIn, Values: []string{"n9"}}},
			},
			{MatchExpressions: []abi.Requirement{{Key: "spot", Operator: abi.SelectorDoesNotExist}}},
		},
	}
}

var (
	fullQueueState = abi.PodQueueState{QueuedTime: 11, InitialAttemptTime: 12, BackoffExpiry: 13, Attempts: 3, LastFailureError: true}
	fullPlugins    = Plugins{
		Unschedulable: []string{"NodeResourcesFit", "NodeAffinity", "NodeResourcesFit"},
		Pending:       []string{"DynamicResources", "DynamicResources"},
	}
	fullGroup = &GroupInfo{MinCount: 4, Priority: 1000, DisruptionMode: abi.DisruptionAll, Members: 3}
)

func TestPod(t *testing.T) {
	tests := []struct {
		name    string
		pod     *v1.Pod
		group   *GroupInfo
		q       abi.PodQueueState
		plugins Plugins
		want    abi.Pod
	}{
		{
			name: "every field",
			pod:  fullPod(), group: fullGroup, q: fullQueueState, plugins: fullPlugins,
			want: fullRecord(),
		},
		{
			name: "bare pod: no priority, no creation time, only the pods request",
			pod:  makePod("p").obj(),
			want: abi.Pod{UID: "uid-p", Namespace: "default", Name: "p", Requests: []abi.Quantity{{Name: "pods", Value: 1}}},
		},
		{
			name: "preemptLowerPriority is not PreemptNever",
			pod:  makePod("p").priority(-5).preemption(v1.PreemptLowerPriority).obj(),
			want: abi.Pod{UID: "uid-p", Namespace: "default", Name: "p", Priority: -5, Requests: []abi.Quantity{{Name: "pods", Value: 1}}},
		},
		{
			name: "group named but not seen yet: name only",
			pod:  makePod("p").group("g").obj(),
			want: abi.Pod{UID: "uid-p", Namespace: "default", Name: "p", Group: abi.PodGroupRef{Name: "g"},
				Requests: []abi.Quantity{{Name: "pods", Value: 1}}},
		},
		{
			name: "group info without a group name is ignored",
			pod:  makePod("p").obj(), group: fullGroup,
			want: abi.Pod{UID: "uid-p", Namespace: "default", Name: "p", Requests: []abi.Quantity{{Name: "pods", Value: 1}}},
		},
		{
			name: "operators and effects the ABI cannot name",
			pod: makePod("p").
				toleration("gpu-mem", v1.TolerationOpLt, "16", v1.TaintEffectNoSchedule).
				toleration("gpu-mem", v1.TolerationOpGt, "4", "NoScheduleNoAdmit").
				toleration("legacy", "", "v", v1.TaintEffectNoSchedule).
				container(nil, hostPort(81, "QUIC", "")).
				affinityTerm([]v1.NodeSelectorRequirement{
					nodeReq("zone", "Near", "a"),
					nodeReq("ssd", v1.NodeSelectorOpExists),
					nodeReq("gen", v1.NodeSelectorOpLt, "9"),
				}, nil).
				obj(),
			want: abi.Pod{
				UID: "uid-p", Namespace: "default", Name: "p", Requests: []abi.Quantity{{Name: "pods", Value: 1}},
				Tolerations: []abi.Toleration{
					{Key: "gpu-mem", Value: "16", Operator: unknownTolerationOperator, Effect: abi.EffectNoSchedule},
					{Key: "gpu-mem", Value: "4", Operator: unknownTolerationOperator, Effect: unknownEffect},
					{Key: "legacy", Value: "v", Operator: abi.TolerationEqual, Effect: abi.EffectNoSchedule},
				},
				HostPorts: []abi.HostPort{{Port: 81, Protocol: unknownProtocol}},
				RequiredAffinity: []abi.NodeSelectorTerm{{MatchExpressions: []abi.Requirement{
					{Key: "zone", Operator: 0, Values: []string{"a"}},
					{Key: "ssd", Operator: abi.SelectorExists},
					{Key: "gen", Operator: abi.SelectorLt, Values: []string{"9"}},
				}}},
			},
		},
		{
			name: "host ports: ordinary init containers and ports without hostPort are left out",
			pod: makePod("p").
				initContainer(nil, hostPort(1, v1.ProtocolTCP, "")).
				sidecar(nil, hostPort(2, v1.ProtocolTCP, "")).
				container(nil, v1.ContainerPort{ContainerPort: 80}, hostPort(3, v1.ProtocolUDP, "::1")).
				obj(),
			want: abi.Pod{
				UID: "uid-p", Namespace: "default", Name: "p", Requests: []abi.Quantity{{Name: "pods", Value: 1}},
				HostPorts: []abi.HostPort{{Port: 2}, {HostIP: "::1", Port: 3, Protocol: abi.ProtocolUDP}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Pod(tt.pod, tt.group, tt.q, tt.plugins)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Pod (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestPodDoesNotAliasInputs(t *testing.T) {
	pod := fullPod()
	plugins := Plugins{Unschedulable: []string{"B", "A"}}
	got := Pod(pod, fullGroup, abi.PodQueueState{}, plugins)
	got.RequiredAffinity[0].MatchExpressions[0].Values[0] = "changed"
	got.UnschedulablePlugins[0] = "changed"
	if v := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0]; v != "a" {
		t.Errorf("affinity value of the pod = %q after changing the record, want %q", v, "a")
	}
	if diff := cmp.Diff([]string{"B", "A"}, plugins.Unschedulable); diff != "" {
		t.Errorf("caller's plugins changed (-want, +got):\n%s", diff)
	}
}

func TestRequests(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		want []abi.Quantity
	}{
		{
			name: "cpu in millicores, memory in bytes",
			pod:  makePod("p").container(res("cpu", "1.5", "memory", "128Mi")).container(res("cpu", "100m", "memory", "1G")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 1600}, {Name: "memory", Value: 128<<20 + 1_000_000_000}, {Name: "pods", Value: 1}},
		},
		{
			name: "sub-millicore cpu rounds up, fractional bytes round up",
			pod:  makePod("p").container(res("cpu", "0.0001", "memory", "1.5")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 1}, {Name: "memory", Value: 2}, {Name: "pods", Value: 1}},
		},
		{
			name: "zero requests are left out, pods stays",
			pod:  makePod("p").container(res("cpu", "0", "memory", "0", "example.com/fpga", "0")).obj(),
			want: []abi.Quantity{{Name: "pods", Value: 1}},
		},
		{
			name: "extended resources and hugepages in base units, sorted by name",
			pod: makePod("p").container(res("nvidia.com/gpu", "4", "hugepages-2Mi", "4Mi", "ephemeral-storage", "10Gi", "example.com/a", "1")).
				obj(),
			want: []abi.Quantity{
				{Name: "ephemeral-storage", Value: 10 << 30}, {Name: "example.com/a", Value: 1},
				{Name: "hugepages-2Mi", Value: 4 << 20}, {Name: "nvidia.com/gpu", Value: 4}, {Name: "pods", Value: 1},
			},
		},
		{
			name: "an init container above the containers' sum sets the request",
			pod:  makePod("p").initContainer(res("cpu", "2", "memory", "100Mi")).container(res("cpu", "500m", "memory", "1Gi")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 2000}, {Name: "memory", Value: 1 << 30}, {Name: "pods", Value: 1}},
		},
		{
			name: "sidecars add to the containers and to later init containers",
			// containers: 500m + sidecar 200m = 700m; init after the sidecar: 600m + 200m = 800m.
			pod:  makePod("p").sidecar(res("cpu", "200m")).initContainer(res("cpu", "600m")).container(res("cpu", "500m")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 800}, {Name: "pods", Value: 1}},
		},
		{
			name: "an init container before the sidecar does not see it",
			// init first: 600m; containers 500m + sidecar 200m = 700m.
			pod:  makePod("p").initContainer(res("cpu", "600m")).sidecar(res("cpu", "200m")).container(res("cpu", "500m")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 700}, {Name: "pods", Value: 1}},
		},
		{
			name: "overhead is added",
			pod:  makePod("p").container(res("cpu", "1", "memory", "1Gi")).overhead(res("cpu", "250m", "memory", "120Mi")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 1250}, {Name: "memory", Value: 1<<30 + 120<<20}, {Name: "pods", Value: 1}},
		},
		{
			name: "pod-level requests replace the containers' cpu and memory, not extended resources",
			pod: makePod("p").container(res("cpu", "1", "memory", "1Gi", "example.com/gpu", "1")).
				podResources(res("cpu", "3", "memory", "4Gi")).overhead(res("cpu", "100m")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 3100}, {Name: "example.com/gpu", Value: 1}, {Name: "memory", Value: 4 << 30}, {Name: "pods", Value: 1}},
		},
		{
			name: "a pending pod counts its spec only",
			pod:  makePod("p").container(res("cpu", "1")).allocated(0, res("cpu", "2")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 1000}, {Name: "pods", Value: 1}},
		},
		{
			name: "a bound pod counts the larger of spec and allocation (in-place resize)",
			pod:  makePod("p").node("n1").container(res("cpu", "1")).allocated(0, res("cpu", "2")).obj(),
			want: []abi.Quantity{{Name: "cpu", Value: 2000}, {Name: "pods", Value: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Requests(tt.pod)); diff != "" {
				t.Errorf("Requests (-want, +got):\n%s", diff)
			}
		})
	}
}

// TestPodDeterministic encodes pods whose maps hold many keys, so that map
// iteration order would show up in the bytes if anything depended on it.
func TestPodDeterministic(t *testing.T) {
	w := makePod("p")
	for _, k := range []string{"q", "w", "e", "r", "t", "y", "u", "i", "o", "p", "a", "s", "d", "f"} {
		w.label(k, "v"+k).nodeSelector(k, k)
	}
	w.container(res("cpu", "1", "memory", "1Gi", "a.io/x", "1", "b.io/y", "2", "c.io/z", "3", "ephemeral-storage", "1Gi"))
	pod := w.obj()
	p := Pod(pod, nil, abi.PodQueueState{}, Plugins{Unschedulable: []string{"z", "y", "x", "y"}})
	want := abi.AppendPod(nil, &p)
	for i := 0; i < 50; i++ {
		p := Pod(pod.DeepCopy(), nil, abi.PodQueueState{}, Plugins{Unschedulable: []string{"y", "x", "z"}})
		if got := abi.AppendPod(nil, &p); !bytes.Equal(want, got) {
			t.Fatalf("encoding %d differs from the first", i)
		}
	}
}

// TestPodRoundTrip encodes a fully populated record and decodes it again.
func TestPodRoundTrip(t *testing.T) {
	want := Pod(fullPod(), fullGroup, fullQueueState, fullPlugins)
	view, err := abi.ReadPod(abi.AppendPod(nil, &want))
	if err != nil {
		t.Fatalf("ReadPod: %v", err)
	}
	var got abi.Pod
	if err := view.Decode(&got); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want, +got):\n%s", diff)
	}
	// The queue patches the queue state in place; the rest must not move.
	rec := abi.AppendPod(nil, &want)
	s := abi.PodQueueState{QueuedTime: 21, Attempts: 4}
	if err := abi.SetPodQueueState(rec, s); err != nil {
		t.Fatalf("SetPodQueueState: %v", err)
	}
	viaPatch, _ := abi.ReadPod(rec)
	if err := viaPatch.Decode(&got); err != nil {
		t.Fatalf("Decode after patch: %v", err)
	}
	wantPatched := Pod(fullPod(), fullGroup, s, fullPlugins)
	if diff := cmp.Diff(wantPatched, got); diff != "" {
		t.Errorf("patched record (-want, +got):\n%s", diff)
	}
}

// TestContainerRequests compares the sum of containerRequests with
// upstream's PodRequests on random pending pods: containers requesting a
// few resources in whole, fractional and binary units, zero amounts and
// "pods" among them; and checks that pods outside its case fall back.
func TestContainerRequests(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods,
		"example.com/gpu", "hugepages-2Mi", "a.example.com/z"}
	amounts := []string{"0", "1", "100m", "1500m", "0.5", "1.5", "3", "1Ki", "1Mi", "200Mi", "1G", "2.5Gi", "7m", "1n"}
	for i := range 2000 {
		pod := &v1.Pod{}
		for c := range rnd.IntN(4) {
			req := v1.ResourceList{}
			for range rnd.IntN(4) {
				req[names[rnd.IntN(len(names))]] = resource.MustParse(amounts[rnd.IntN(len(amounts))])
			}
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", c),
				Resources: v1.ResourceRequirements{Requests: req}})
		}
		got, ok := containerRequests(pod)
		if !ok {
			t.Fatalf("pod %d: containerRequests declined a pending pod with containers only", i)
		}
		want := quantities(resourcehelper.PodRequests(pod, RequestOptions(false)), true, 1)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pod %d %v: containerRequests differs from PodRequests (-want, +got):\n%s", i, pod.Spec.Containers, diff)
		}
	}
	one := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	for name, pod := range map[string]*v1.Pod{
		"bound":     {Spec: v1.PodSpec{NodeName: "n1"}},
		"init":      {Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i"}}}},
		"pod-level": {Spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: one}}},
		"overhead":  {Spec: v1.PodSpec{Overhead: one}},
	} {
		if _, ok := containerRequests(pod); ok {
			t.Errorf("%s pod: containerRequests answered, want it to decline", name)
		}
	}
}
