package cache

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Builders of v1 test objects, after kube-scheduler's st.MakePod():
//
//	makePod("p").node("n1").container(res("cpu", "500m")).obj()
//
// obj returns a deep copy, so one builder can yield several revisions.

func ptrTo[T any](v T) *T { return &v }

// res builds a ResourceList from name, quantity pairs.
func res(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

type podWrapper struct{ p v1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{p: v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}}
}

func (w *podWrapper) obj() *v1.Pod { return w.p.DeepCopy() }

func (w *podWrapper) uid(s string) *podWrapper  { w.p.UID = types.UID(s); return w }
func (w *podWrapper) node(s string) *podWrapper { w.p.Spec.NodeName = s; return w }

// container adds a container with requests.
func (w *podWrapper) container(requests v1.ResourceList, ports ...v1.ContainerPort) *podWrapper {
	n := len(w.p.Spec.Containers)
	w.p.Spec.Containers = append(w.p.Spec.Containers, v1.Container{
		Name: fmt.Sprintf("c%d", n), Resources: v1.ResourceRequirements{Requests: requests}, Ports: ports,
	})
	return w
}

// initContainer adds an init container; a sidecar with sidecar set.
func (w *podWrapper) initContainer(sidecar bool, requests v1.ResourceList, ports ...v1.ContainerPort) *podWrapper {
	c := v1.Container{
		Name:      fmt.Sprintf("i%d", len(w.p.Spec.InitContainers)),
		Resources: v1.ResourceRequirements{Requests: requests},
		Ports:     ports,
	}
	if sidecar {
		c.RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways)
	}
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, c)
	return w
}

func (w *podWrapper) overhead(l v1.ResourceList) *podWrapper { w.p.Spec.Overhead = l; return w }

func (w *podWrapper) podRequests(l v1.ResourceList) *podWrapper {
	w.p.Spec.Resources = &v1.ResourceRequirements{Requests: l}
	return w
}

// allocated sets the kubelet's allocated resources of container name.
func (w *podWrapper) allocated(name string, l v1.ResourceList) *podWrapper {
	w.p.Status.ContainerStatuses = append(w.p.Status.ContainerStatuses, v1.ContainerStatus{Name: name, AllocatedResources: l})
	return w
}

func hostPort(ip string, proto v1.Protocol, port int32) v1.ContainerPort {
	return v1.ContainerPort{HostIP: ip, Protocol: proto, HostPort: port, ContainerPort: 80}
}

func makeNode(name string, allocatable v1.ResourceList) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)},
		Status:     v1.NodeStatus{Allocatable: allocatable, Capacity: allocatable},
	}
}

// podOn is a pod named name on node with a cpu request.
func podOn(name, node, cpu string) *v1.Pod {
	return makePod(name).node(node).container(res("cpu", cpu)).obj()
}

// uids lists the UIDs of a node info's pods, sorted.
func uids(n *NodeInfo) []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, pi := range n.Pods() {
		out = append(out, string(pi.Pod.UID))
	}
	slices.Sort(out)
	return out
}
