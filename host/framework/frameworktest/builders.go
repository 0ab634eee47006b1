// Package frameworktest builds the pods and nodes the framework's and its
// plugins' tests schedule, after upstream's st.MakePod() / st.MakeNode().
package frameworktest

import (
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/cache"
)

// PodBuilder builds a pod; P is the pod built so far.
type PodBuilder struct{ P *v1.Pod }

var podSeq atomic.Int64

func MakePod() *PodBuilder {
	name := fmt.Sprintf("pod-%d", podSeq.Add(1))
	return &PodBuilder{P: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}}
}

func (b *PodBuilder) Info() *cache.PodInfo            { return cache.NewPodInfo(b.P) }
func (b *PodBuilder) Namespace(ns string) *PodBuilder { b.P.Namespace = ns; return b }

// labels adds labels to the pod ("app", "web", ...).
func (b *PodBuilder) Labels(kv ...string) *PodBuilder {
	if b.P.Labels == nil {
		b.P.Labels = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		b.P.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b *PodBuilder) Node(n string) *PodBuilder { b.P.Spec.NodeName = n; return b }
func (b *PodBuilder) Selector(kv ...string) *PodBuilder {
	b.P.Spec.NodeSelector = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		b.P.Spec.NodeSelector[kv[i]] = kv[i+1]
	}
	return b
}

// req adds a container with the requests ("cpu", "100m", "memory", "1Gi", ...).
func (b *PodBuilder) Req(kv ...string) *PodBuilder {
	b.P.Spec.Containers = append(b.P.Spec.Containers, v1.Container{
		Name: fmt.Sprintf("c%d", len(b.P.Spec.Containers)), Resources: v1.ResourceRequirements{Requests: Res(kv...)}})
	return b
}

// initReq adds an init container (a sidecar when sidecar is set).
func (b *PodBuilder) InitReq(sidecar bool, kv ...string) *PodBuilder {
	c := v1.Container{Name: fmt.Sprintf("i%d", len(b.P.Spec.InitContainers)), Resources: v1.ResourceRequirements{Requests: Res(kv...)}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	b.P.Spec.InitContainers = append(b.P.Spec.InitContainers, c)
	return b
}

// port adds a container with one host port.
func (b *PodBuilder) Port(ip string, proto v1.Protocol, hostPort int32) *PodBuilder {
	b.P.Spec.Containers = append(b.P.Spec.Containers, v1.Container{
		Name:  fmt.Sprintf("c%d", len(b.P.Spec.Containers)),
		Ports: []v1.ContainerPort{{HostIP: ip, Protocol: proto, HostPort: hostPort, ContainerPort: 8080}},
	})
	return b
}

func (b *PodBuilder) Toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *PodBuilder {
	b.P.Spec.Tolerations = append(b.P.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return b
}

func (b *PodBuilder) NodeAffinity() *v1.NodeAffinity {
	if b.P.Spec.Affinity == nil {
		b.P.Spec.Affinity = &v1.Affinity{}
	}
	if b.P.Spec.Affinity.NodeAffinity == nil {
		b.P.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return b.P.Spec.Affinity.NodeAffinity
}

// required adds terms to the required node affinity (ORed).
func (b *PodBuilder) Required(terms ...v1.NodeSelectorTerm) *PodBuilder {
	na := b.NodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
		na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, terms...)
	return b
}

func (b *PodBuilder) Preferred(weight int32, term v1.NodeSelectorTerm) *PodBuilder {
	na := b.NodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.PreferredSchedulingTerm{Weight: weight, Preference: term})
	return b
}

func Expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func LabelTerm(reqs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: reqs}
}

func NameTerm(names ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{Expr(metav1.ObjectNameField, v1.NodeSelectorOpIn, names...)}}
}

func Res(kv ...string) v1.ResourceList {
	rl := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

// NodeBuilder builds a node info: N is the node, Pods the pods on it.
type NodeBuilder struct {
	N    *v1.Node
	Pods []*cache.PodInfo
}

// MakeNode returns a node with 32 allocatable pods and the given
// allocatable resources.
func MakeNode(name string, alloc ...string) *NodeBuilder {
	rl := Res(alloc...)
	if _, ok := rl[v1.ResourcePods]; !ok {
		rl[v1.ResourcePods] = resource.MustParse("32")
	}
	return &NodeBuilder{N: &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
	}}
}

func (b *NodeBuilder) Label(k, v string) *NodeBuilder { b.N.Labels[k] = v; return b }
func (b *NodeBuilder) Unschedulable() *NodeBuilder    { b.N.Spec.Unschedulable = true; return b }
func (b *NodeBuilder) Taint(key, value string, effect v1.TaintEffect) *NodeBuilder {
	b.N.Spec.Taints = append(b.N.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// with places pods on the node.
func (b *NodeBuilder) With(pods ...*PodBuilder) *NodeBuilder {
	for _, p := range pods {
		b.Pods = append(b.Pods, p.Node(b.N.Name).Info())
	}
	return b
}

func (b *NodeBuilder) Info() *cache.NodeInfo { return cache.NewNodeInfo(b.N, b.Pods...) }

func Infos(bs ...*NodeBuilder) []*cache.NodeInfo {
	out := make([]*cache.NodeInfo, len(bs))
	for i, b := range bs {
		out[i] = b.Info()
	}
	return out
}

func Names(nodes []*cache.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name()
	}
	return out
}

// infoWithoutNode is a node info holding the pods of a node the cache has
// not seen.
func (b *NodeBuilder) InfoWithoutNode() *cache.NodeInfo { return cache.NewNodeInfo(nil, b.Pods...) }

// podAffinityRef is the pod's affinity with both pod affinity parts set.
func (b *PodBuilder) podAffinityRef() *v1.Affinity {
	if b.P.Spec.Affinity == nil {
		b.P.Spec.Affinity = &v1.Affinity{}
	}
	a := b.P.Spec.Affinity
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	return a
}

// PodAffinity adds required pod affinity terms.
func (b *PodBuilder) PodAffinity(terms ...v1.PodAffinityTerm) *PodBuilder {
	a := b.podAffinityRef().PodAffinity
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	return b
}

// PodAntiAffinity adds required pod anti-affinity terms.
func (b *PodBuilder) PodAntiAffinity(terms ...v1.PodAffinityTerm) *PodBuilder {
	a := b.podAffinityRef().PodAntiAffinity
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	return b
}

// PreferPodAffinity adds a preferred pod affinity term.
func (b *PodBuilder) PreferPodAffinity(weight int32, t v1.PodAffinityTerm) *PodBuilder {
	a := b.podAffinityRef().PodAffinity
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
	return b
}

// Affinity sets the pod's whole affinity (shared, read-only).
func (b *PodBuilder) Affinity(a *v1.Affinity) *PodBuilder { b.P.Spec.Affinity = a; return b }
