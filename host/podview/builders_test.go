package podview

import (
	"time"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Builders of v1 test objects, after kube-scheduler's st.MakePod():
//
//	makePod("p").priority(5).container(req("cpu", "500m")).obj()
//
// obj returns a deep copy, so one builder can yield several revisions.

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

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

func (w *podWrapper) namespace(s string) *podWrapper { w.p.Namespace = s; return w }
func (w *podWrapper) uid(s string) *podWrapper       { w.p.UID = types.UID(s); return w }
func (w *podWrapper) rv(s string) *podWrapper        { w.p.ResourceVersion = s; return w }
func (w *podWrapper) node(s string) *podWrapper      { w.p.Spec.NodeName = s; return w }
func (w *podWrapper) priority(v int32) *podWrapper   { w.p.Spec.Priority = &v; return w }
func (w *podWrapper) created(t time.Time) *podWrapper {
	w.p.CreationTimestamp = metav1.NewTime(t)
	return w
}
func (w *podWrapper) started(t time.Time) *podWrapper {
	w.p.Status.StartTime = ptrTo(metav1.NewTime(t))
	return w
}
func (w *podWrapper) preemption(p v1.PreemptionPolicy) *podWrapper {
	w.p.Spec.PreemptionPolicy = &p
	return w
}
func (w *podWrapper) label(k, v string) *podWrapper {
	if w.p.Labels == nil {
		w.p.Labels = map[string]string{}
	}
	w.p.Labels[k] = v
	return w
}
func (w *podWrapper) annotation(k, v string) *podWrapper {
	if w.p.Annotations == nil {
		w.p.Annotations = map[string]string{}
	}
	w.p.Annotations[k] = v
	return w
}
func (w *podWrapper) nodeSelector(k, v string) *podWrapper {
	if w.p.Spec.NodeSelector == nil {
		w.p.Spec.NodeSelector = map[string]string{}
	}
	w.p.Spec.NodeSelector[k] = v
	return w
}
func (w *podWrapper) gate(name string) *podWrapper {
	w.p.Spec.SchedulingGates = append(w.p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: name})
	return w
}
func (w *podWrapper) toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *podWrapper {
	w.p.Spec.Tolerations = append(w.p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return w
}
func (w *podWrapper) group(name string) *podWrapper {
	w.p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return w
}

// container adds a container with the given requests and ports.
func (w *podWrapper) container(requests v1.ResourceList, ports ...v1.ContainerPort) *podWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, v1.Container{
		Name:      "c" + string(rune('0'+len(w.p.Spec.Containers))),
		Resources: v1.ResourceRequirements{Requests: requests},
		Ports:     ports,
	})
	return w
}

// initContainer adds an ordinary init container.
func (w *podWrapper) initContainer(requests v1.ResourceList, ports ...v1.ContainerPort) *podWrapper {
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, v1.Container{
		Name:      "i" + string(rune('0'+len(w.p.Spec.InitContainers))),
		Resources: v1.ResourceRequirements{Requests: requests},
		Ports:     ports,
	})
	return w
}

// sidecar adds a restartable init container.
func (w *podWrapper) sidecar(requests v1.ResourceList, ports ...v1.ContainerPort) *podWrapper {
	w.initContainer(requests, ports...)
	w.p.Spec.InitContainers[len(w.p.Spec.InitContainers)-1].RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways)
	return w
}

func (w *podWrapper) overhead(l v1.ResourceList) *podWrapper { w.p.Spec.Overhead = l; return w }
func (w *podWrapper) podResources(l v1.ResourceList) *podWrapper {
	w.p.Spec.Resources = &v1.ResourceRequirements{Requests: l}
	return w
}

// allocated records the kubelet's allocation for container i (an in-place resize).
func (w *podWrapper) allocated(i int, l v1.ResourceList) *podWrapper {
	w.p.Status.ContainerStatuses = append(w.p.Status.ContainerStatuses, v1.ContainerStatus{
		Name: w.p.Spec.Containers[i].Name, AllocatedResources: l,
	})
	return w
}

// affinityTerm adds a required node affinity term.
func (w *podWrapper) affinityTerm(exprs, fields []v1.NodeSelectorRequirement) *podWrapper {
	if w.p.Spec.Affinity == nil {
		w.p.Spec.Affinity = &v1.Affinity{}
	}
	if w.p.Spec.Affinity.NodeAffinity == nil {
		w.p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	na := w.p.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
		na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		v1.NodeSelectorTerm{MatchExpressions: exprs, MatchFields: fields})
	return w
}

func hostPort(port int32, proto v1.Protocol, ip string) v1.ContainerPort {
	return v1.ContainerPort{ContainerPort: 8000 + port, HostPort: port, Protocol: proto, HostIP: ip}
}

func nodeReq(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

type nodeWrapper struct{ n v1.Node }

func makeNode(name string) *nodeWrapper {
	return &nodeWrapper{n: v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}}
}

func (w *nodeWrapper) obj() *v1.Node { return w.n.DeepCopy() }

func (w *nodeWrapper) rv(s string) *nodeWrapper          { w.n.ResourceVersion = s; return w }
func (w *nodeWrapper) unschedulable(b bool) *nodeWrapper { w.n.Spec.Unschedulable = b; return w }
func (w *nodeWrapper) allocatable(l v1.ResourceList) *nodeWrapper {
	w.n.Status.Allocatable = l
	w.n.Status.Capacity = l.DeepCopy()
	return w
}
func (w *nodeWrapper) label(k, v string) *nodeWrapper {
	if w.n.Labels == nil {
		w.n.Labels = map[string]string{}
	}
	w.n.Labels[k] = v
	return w
}
func (w *nodeWrapper) annotation(k, v string) *nodeWrapper {
	if w.n.Annotations == nil {
		w.n.Annotations = map[string]string{}
	}
	w.n.Annotations[k] = v
	return w
}
func (w *nodeWrapper) taint(k, v string, e v1.TaintEffect) *nodeWrapper {
	w.n.Spec.Taints = append(w.n.Spec.Taints, v1.Taint{Key: k, Value: v, Effect: e})
	return w
}
func (w *nodeWrapper) condition(t v1.NodeConditionType, s v1.ConditionStatus, heartbeat time.Time) *nodeWrapper {
	w.n.Status.Conditions = append(w.n.Status.Conditions, v1.NodeCondition{
		Type: t, Status: s, LastHeartbeatTime: metav1.NewTime(heartbeat), Reason: "KubeletReady",
	})
	return w
}

type groupWrapper struct{ g schedv1beta1.PodGroup }

func makeGroup(name string) *groupWrapper {
	return &groupWrapper{g: schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{Basic: &schedv1beta1.BasicSchedulingPolicy{}}},
	}}
}

func (w *groupWrapper) obj() *schedv1beta1.PodGroup { return w.g.DeepCopy() }

func (w *groupWrapper) rv(s string) *groupWrapper      { w.g.ResourceVersion = s; return w }
func (w *groupWrapper) priority(v int32) *groupWrapper { w.g.Spec.Priority = &v; return w }
func (w *groupWrapper) gang(min int32) *groupWrapper {
	w.g.Spec.SchedulingPolicy = schedv1beta1.PodGroupSchedulingPolicy{Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: min}}
	return w
}
func (w *groupWrapper) disruptAll() *groupWrapper {
	w.g.Spec.DisruptionMode = &schedv1beta1.DisruptionMode{All: &schedv1beta1.AllDisruptionMode{}}
	return w
}
func (w *groupWrapper) disruptSingle() *groupWrapper {
	w.g.Spec.DisruptionMode = &schedv1beta1.DisruptionMode{Single: &schedv1beta1.SingleDisruptionMode{}}
	return w
}
func (w *groupWrapper) preemption(p schedv1beta1.PreemptionPolicy) *groupWrapper {
	w.g.Spec.PreemptionPolicy = &p
	return w
}

type schedGroup = schedv1beta1.PodGroup
