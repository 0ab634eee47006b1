package framework

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/cache"
)

// Test object builders, after upstream's st.MakePod() / st.MakeNode().

type podBuilder struct{ p *v1.Pod }

var podSeq int

func makePod() *podBuilder {
	podSeq++
	name := fmt.Sprintf("pod-%d", podSeq)
	return &podBuilder{p: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}}
}

func (b *podBuilder) info() *cache.PodInfo            { return cache.NewPodInfo(b.p) }
func (b *podBuilder) namespace(ns string) *podBuilder { b.p.Namespace = ns; return b }

// labels adds labels to the pod ("app", "web", ...).
func (b *podBuilder) labels(kv ...string) *podBuilder {
	if b.p.Labels == nil {
		b.p.Labels = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		b.p.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b *podBuilder) node(n string) *podBuilder { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) state() *PodState          { return mustPrepare(b.info()) }
func (b *podBuilder) selector(kv ...string) *podBuilder {
	b.p.Spec.NodeSelector = map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		b.p.Spec.NodeSelector[kv[i]] = kv[i+1]
	}
	return b
}

// req adds a container with the requests ("cpu", "100m", "memory", "1Gi", ...).
func (b *podBuilder) req(kv ...string) *podBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, v1.Container{
		Name: fmt.Sprintf("c%d", len(b.p.Spec.Containers)), Resources: v1.ResourceRequirements{Requests: res(kv...)}})
	return b
}

// initReq adds an init container (a sidecar when sidecar is set).
func (b *podBuilder) initReq(sidecar bool, kv ...string) *podBuilder {
	c := v1.Container{Name: fmt.Sprintf("i%d", len(b.p.Spec.InitContainers)), Resources: v1.ResourceRequirements{Requests: res(kv...)}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, c)
	return b
}

// port adds a container with one host port.
func (b *podBuilder) port(ip string, proto v1.Protocol, hostPort int32) *podBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, v1.Container{
		Name:  fmt.Sprintf("c%d", len(b.p.Spec.Containers)),
		Ports: []v1.ContainerPort{{HostIP: ip, Protocol: proto, HostPort: hostPort, ContainerPort: 8080}},
	})
	return b
}

func (b *podBuilder) toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *podBuilder {
	b.p.Spec.Tolerations = append(b.p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return b
}

func (b *podBuilder) nodeAffinity() *v1.NodeAffinity {
	if b.p.Spec.Affinity == nil {
		b.p.Spec.Affinity = &v1.Affinity{}
	}
	if b.p.Spec.Affinity.NodeAffinity == nil {
		b.p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return b.p.Spec.Affinity.NodeAffinity
}

// required adds terms to the required node affinity (ORed).
func (b *podBuilder) required(terms ...v1.NodeSelectorTerm) *podBuilder {
	na := b.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
		na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, terms...)
	return b
}

func (b *podBuilder) preferred(weight int32, term v1.NodeSelectorTerm) *podBuilder {
	na := b.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		v1.PreferredSchedulingTerm{Weight: weight, Preference: term})
	return b
}

func expr(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func labelTerm(reqs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: reqs}
}

func nameTerm(names ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{expr(metav1.ObjectNameField, v1.NodeSelectorOpIn, names...)}}
}

func res(kv ...string) v1.ResourceList {
	rl := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		rl[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return rl
}

type nodeBuilder struct {
	n    *v1.Node
	pods []*cache.PodInfo
}

// makeNode returns a node with 32 allocatable pods and the given
// allocatable resources.
func makeNode(name string, alloc ...string) *nodeBuilder {
	rl := res(alloc...)
	if _, ok := rl[v1.ResourcePods]; !ok {
		rl[v1.ResourcePods] = resource.MustParse("32")
	}
	return &nodeBuilder{n: &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
	}}
}

func (b *nodeBuilder) label(k, v string) *nodeBuilder { b.n.Labels[k] = v; return b }
func (b *nodeBuilder) unschedulable() *nodeBuilder    { b.n.Spec.Unschedulable = true; return b }
func (b *nodeBuilder) taint(key, value string, effect v1.TaintEffect) *nodeBuilder {
	b.n.Spec.Taints = append(b.n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// with places pods on the node.
func (b *nodeBuilder) with(pods ...*podBuilder) *nodeBuilder {
	for _, p := range pods {
		b.pods = append(b.pods, p.node(b.n.Name).info())
	}
	return b
}

func (b *nodeBuilder) info() *cache.NodeInfo { return cache.NewNodeInfo(b.n, b.pods...) }

func mustPrepare(pi *cache.PodInfo) *PodState {
	ps, st := prepare(pi, nil)
	if st != nil {
		panic(fmt.Sprintf("Prepare: %+v", st))
	}
	return ps
}

func infos(bs ...*nodeBuilder) []*cache.NodeInfo {
	out := make([]*cache.NodeInfo, len(bs))
	for i, b := range bs {
		out[i] = b.info()
	}
	return out
}

func names(nodes []*cache.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name()
	}
	return out
}

// infoWithoutNode is a node info holding the pods of a node the cache has
// not seen.
func (b *nodeBuilder) infoWithoutNode() *cache.NodeInfo { return cache.NewNodeInfo(nil, b.pods...) }

// build is the in-tree registry's Build over a handle of l.
func build(l Listers, c Config) (Built, error) {
	return InTree().Build(NewHandle(HandleOptions{Listers: l}), c)
}

// defaultProfileOver is the default profile over a handle of l.
func defaultProfileOver(l Listers) *Profile {
	p, err := InTree().Default(NewHandle(HandleOptions{Listers: l}))
	if err != nil {
		panic(err)
	}
	return p
}

// defaultProfile is the default profile without listers (no namespace
// labels, no default spreading), built once for the package's tests.
var defaultProfile = sync.OnceValue(func() *Profile { return defaultProfileOver(Listers{}) })

// prepare is defaultProfile().Prepare.
func prepare(pod *cache.PodInfo, snap *cache.Snapshot) (*PodState, *Status) {
	return defaultProfile().Prepare(pod, snap)
}

// handles are the tests' Handles by informer: the plugins a test builds
// over the same Listers share one Handle, so its DRA state and volume
// caches, as a scheduler's profiles do.
var handles sync.Map

// handleFor is the Handle of l's informers.
func handleFor(l Listers) Handle {
	var key any = l.ClaimInformer
	if key == nil || l.ClaimInformer == nil {
		key = l.PVInformer
	}
	if l.ClaimInformer == nil && l.PVInformer == nil {
		return NewHandle(HandleOptions{Listers: l})
	}
	h, _ := handles.LoadOrStore(key, NewHandle(HandleOptions{Listers: l}))
	return h.(Handle)
}
