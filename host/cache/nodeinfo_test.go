package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// sums are a node info's derived state, for comparisons.
type sums struct {
	Pods        []string
	Requested   Resource
	NonZero     Resource
	Allocatable Resource
	Ports       map[HostPort]int
}

func sumsOf(n *NodeInfo) sums {
	return sums{Pods: uids(n), Requested: n.Requested(), NonZero: n.NonZeroRequested(), Allocatable: n.Allocatable(), Ports: n.ports}
}

func TestNodeInfoAddRemove(t *testing.T) {
	node := makeNode("n1", res("cpu", "4", "memory", "8Gi", "pods", "110", "example.com/gpu", "2"))
	a := NewPodInfo(makePod("a").node("n1").container(res("cpu", "1", "memory", "1Gi", "example.com/gpu", "1"), hostPort("", "", 80)).obj())
	b := NewPodInfo(makePod("b").node("n1").container(nil, hostPort("", "", 80), hostPort("", v1.ProtocolUDP, 53)).obj())
	alloc := Resource{MilliCPU: 4000, Memory: 8 << 30, Pods: 110, Scalar: map[v1.ResourceName]int64{"example.com/gpu": 2}}

	n := NewNodeInfo(node, a)
	g0 := n.Generation()
	n.AddPod(b)
	if n.Generation() <= g0 {
		t.Errorf("AddPod did not advance the generation")
	}
	want := sums{
		Pods:        []string{"uid-a", "uid-b"},
		Requested:   Resource{MilliCPU: 1000, Memory: 1 << 30, Pods: 2, Scalar: map[v1.ResourceName]int64{"example.com/gpu": 1}},
		NonZero:     Resource{MilliCPU: 1100, Memory: 1<<30 + 200*mi, Pods: 2, Scalar: map[v1.ResourceName]int64{"example.com/gpu": 1}},
		Allocatable: alloc,
		Ports: map[HostPort]int{
			{IP: "0.0.0.0", Protocol: "TCP", Port: 80}: 2,
			{IP: "0.0.0.0", Protocol: "UDP", Port: 53}: 1,
		},
	}
	if diff := cmp.Diff(want, sumsOf(n)); diff != "" {
		t.Errorf("after adding a and b (-want, +got):\n%s", diff)
	}
	if n.Name() != "n1" {
		t.Errorf("Name() = %q", n.Name())
	}

	g1 := n.Generation()
	if n.RemovePod("uid-missing") {
		t.Errorf("RemovePod of a pod not on the node reported true")
	}
	if n.Generation() != g1 {
		t.Errorf("a RemovePod that removed nothing changed the generation")
	}
	if !n.RemovePod("uid-a") {
		t.Fatalf("RemovePod(a) = false")
	}
	// Port 80 stays used by b.
	want = sums{
		Pods:        []string{"uid-b"},
		Requested:   Resource{Pods: 1},
		NonZero:     Resource{MilliCPU: 100, Memory: 200 * mi, Pods: 1},
		Allocatable: alloc,
		Ports: map[HostPort]int{
			{IP: "0.0.0.0", Protocol: "TCP", Port: 80}: 1,
			{IP: "0.0.0.0", Protocol: "UDP", Port: 53}: 1,
		},
	}
	if diff := cmp.Diff(want, sumsOf(n)); diff != "" {
		t.Errorf("after removing a (-want, +got):\n%s", diff)
	}
	if !n.PortConflict(HostPort{Port: 80}) {
		t.Errorf("port 80 is free after removing one of its two users")
	}
	n.RemovePod("uid-b")
	if diff := cmp.Diff(sumsOf(NewNodeInfo(node)), sumsOf(n)); diff != "" {
		t.Errorf("after removing every pod, differs from an empty node info (-want, +got):\n%s", diff)
	}

	g2 := n.Generation()
	n.SetNode(nil)
	if n.Node() != nil || n.Name() != "" || n.Generation() <= g2 {
		t.Errorf("SetNode(nil): node %v, generation %d (was %d)", n.Node(), n.Generation(), g2)
	}
	if diff := cmp.Diff(Resource{}, n.Allocatable()); diff != "" {
		t.Errorf("SetNode(nil) left allocatable (-want, +got):\n%s", diff)
	}
}

func TestNewNodeInfoCopiesPods(t *testing.T) {
	pods := []*PodInfo{NewPodInfo(podOn("a", "n1", "1")), NewPodInfo(podOn("b", "n1", "1"))}
	n := NewNodeInfo(makeNode("n1", nil), pods...)
	n.RemovePod("uid-a")
	if pods[0].Pod.Name != "a" || pods[1].Pod.Name != "b" {
		t.Errorf("RemovePod changed the caller's slice: %v, %v", pods[0].Pod.Name, pods[1].Pod.Name)
	}
}

func TestNodeInfoClone(t *testing.T) {
	gpu := res("cpu", "1", "example.com/gpu", "1")
	n := NewNodeInfo(makeNode("n1", res("cpu", "4")),
		NewPodInfo(makePod("a").node("n1").container(gpu, hostPort("", "", 80)).obj()),
		NewPodInfo(makePod("b").node("n1").container(gpu).obj()))
	before := sumsOf(n)
	gen := n.Generation()

	c := n.Clone()
	if c.Generation() != gen {
		t.Errorf("clone generation %d, want the original's %d", c.Generation(), gen)
	}
	if diff := cmp.Diff(before, sumsOf(c)); diff != "" {
		t.Errorf("clone differs (-want, +got):\n%s", diff)
	}
	c.RemovePod("uid-a")
	c.AddPod(NewPodInfo(makePod("c").node("n1").container(res("example.com/gpu", "3"), hostPort("", "", 81)).obj()))
	c.SetNode(makeNode("n1", res("cpu", "8")))
	if diff := cmp.Diff(before, sumsOf(n)); diff != "" {
		t.Errorf("changing the clone changed the original (-want, +got):\n%s", diff)
	}
	if n.Generation() != gen {
		t.Errorf("changing the clone changed the original's generation")
	}
	if n.Pods()[0].Pod.Name != "a" {
		t.Errorf("changing the clone reordered the original's pods")
	}
}

func TestPortConflict(t *testing.T) {
	used := []v1.ContainerPort{
		hostPort("", "", 80),                         // 0.0.0.0/TCP/80
		hostPort("10.0.0.1", v1.ProtocolTCP, 8080),   // specific IP
		hostPort("10.0.0.1", v1.ProtocolUDP, 53),     // UDP
		hostPort("127.0.0.1", v1.ProtocolSCTP, 9000), // SCTP
	}
	n := NewNodeInfo(makeNode("n1", nil), NewPodInfo(makePod("p").node("n1").container(nil, used...).obj()))
	tests := []struct {
		name string
		p    HostPort
		want bool
	}{
		{"wildcard vs wildcard", HostPort{Port: 80}, true},
		{"specific IP vs wildcard", HostPort{IP: "10.0.0.2", Port: 80}, true},
		{"wildcard, other protocol", HostPort{Protocol: v1.ProtocolUDP, Port: 80}, false},
		{"wildcard vs specific IP", HostPort{IP: "0.0.0.0", Protocol: v1.ProtocolTCP, Port: 8080}, true},
		{"empty IP is the wildcard", HostPort{Port: 8080}, true},
		{"same specific IP", HostPort{IP: "10.0.0.1", Port: 8080}, true},
		{"other specific IP", HostPort{IP: "10.0.0.2", Port: 8080}, false},
		{"UDP same IP", HostPort{IP: "10.0.0.1", Protocol: v1.ProtocolUDP, Port: 53}, true},
		{"TCP where UDP is used", HostPort{IP: "10.0.0.1", Port: 53}, false},
		{"wildcard UDP vs specific UDP", HostPort{Protocol: v1.ProtocolUDP, Port: 53}, true},
		{"SCTP", HostPort{IP: "127.0.0.1", Protocol: v1.ProtocolSCTP, Port: 9000}, true},
		{"unused port", HostPort{Port: 81}, false},
		{"port 0 never conflicts", HostPort{Port: 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := n.PortConflict(tc.p); got != tc.want {
				t.Errorf("PortConflict(%+v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
	if NewNodeInfo(nil).PortConflict(HostPort{Port: 80}) {
		t.Errorf("an empty node info has a port conflict")
	}
}
