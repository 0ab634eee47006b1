package podview

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func baseNode() *v1.Node {
	return makeNode("n").rv("1").label("zone", "a").annotation("note", "1").
		taint("dedicated", "web", v1.TaintEffectNoSchedule).
		allocatable(res("cpu", "4", "memory", "8Gi", "pods", "110")).
		condition(v1.NodeReady, v1.ConditionTrue, t0).
		condition(v1.NodeMemoryPressure, v1.ConditionFalse, t0).
		obj()
}

func TestNodeUpdateActions(t *testing.T) {
	later := t0.Add(10 * time.Second)
	tests := []struct {
		name   string
		old    func(*v1.Node) // applied to the old node; nil leaves baseNode
		change func(*v1.Node) // applied to a copy of the old node
		want   abi.ActionType
	}{
		{
			name: "nothing relevant: resourceVersion, heartbeats, reasons, nodeInfo, images, capacity",
			change: func(n *v1.Node) {
				n.ResourceVersion = "2"
				for i := range n.Status.Conditions {
					n.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(later)
					n.Status.Conditions[i].Reason = "Other"
				}
				n.Status.NodeInfo.KubeletVersion = "v1.37.1"
				n.Status.Images = []v1.ContainerImage{{Names: []string{"busybox"}}}
				n.Status.Capacity = res("cpu", "8")
			},
			want: 0,
		},
		{
			name:   "allocatable",
			change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("3") },
			want:   abi.ActionUpdateNodeAllocatable,
		},
		{
			name:   "allocatable written differently but equal",
			change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("4000m") },
			want:   0,
		},
		{
			name:   "label",
			change: func(n *v1.Node) { n.Labels["zone"] = "b" },
			want:   abi.ActionUpdateNodeLabel,
		},
		{
			name: "taint added",
			change: func(n *v1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "k", Effect: v1.TaintEffectNoExecute})
			},
			want: abi.ActionUpdateNodeTaint,
		},
		{
			name:   "taint removed",
			change: func(n *v1.Node) { n.Spec.Taints = nil },
			want:   abi.ActionUpdateNodeTaint,
		},
		{
			name:   "became schedulable",
			old:    func(n *v1.Node) { n.Spec.Unschedulable = true },
			change: func(n *v1.Node) { n.Spec.Unschedulable = false },
			want:   abi.ActionUpdateNodeTaint,
		},
		{
			name:   "became unschedulable: no event, as upstream",
			change: func(n *v1.Node) { n.Spec.Unschedulable = true },
			want:   0,
		},
		{
			name:   "condition status",
			change: func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse },
			want:   abi.ActionUpdateNodeCondition,
		},
		{
			name: "condition added",
			change: func(n *v1.Node) {
				n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse})
			},
			want: abi.ActionUpdateNodeCondition,
		},
		{
			name: "conditions reordered",
			change: func(n *v1.Node) {
				c := n.Status.Conditions
				c[0], c[1] = c[1], c[0]
			},
			want: 0,
		},
		{
			name:   "annotation",
			change: func(n *v1.Node) { n.Annotations["note"] = "2" },
			want:   abi.ActionUpdateNodeAnnotation,
		},
		{
			name: "pod preemption policy: upstream's UpdateNodePreemptionPolicy",
			change: func(n *v1.Node) {
				n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"example.com/autoscaler"}}
			},
			want: abi.ActionUpdateOther,
		},
		{
			name:   "declared features: upstream's UpdateNodeDeclaredFeature",
			change: func(n *v1.Node) { n.Status.DeclaredFeatures = []string{"GuaranteedQoSPodCPUResize"} },
			want:   abi.ActionUpdateNodeDeclaredFeature,
		},
		{
			name:   "declared features removed",
			old:    func(n *v1.Node) { n.Status.DeclaredFeatures = []string{"GuaranteedQoSPodCPUResize"} },
			change: func(n *v1.Node) { n.Status.DeclaredFeatures = nil },
			want:   abi.ActionUpdateNodeDeclaredFeature,
		},
		{
			name: "declared features and preemption policy at once",
			change: func(n *v1.Node) {
				n.Status.DeclaredFeatures = []string{"GuaranteedQoSPodCPUResize"}
				n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"example.com/autoscaler"}}
			},
			want: abi.ActionUpdateNodeDeclaredFeature | abi.ActionUpdateOther,
		},
		{
			name: "several at once",
			old:  func(n *v1.Node) { n.Spec.Unschedulable = true },
			change: func(n *v1.Node) {
				n.Spec.Unschedulable = false
				n.Labels["new"] = "x"
				n.Status.Allocatable[v1.ResourceMemory] = resource.MustParse("16Gi")
				n.Status.Conditions[1].Status = v1.ConditionTrue
			},
			want: abi.ActionUpdateNodeTaint | abi.ActionUpdateNodeLabel | abi.ActionUpdateNodeAllocatable | abi.ActionUpdateNodeCondition,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := baseNode()
			if tt.old != nil {
				tt.old(old)
			}
			new := old.DeepCopy()
			tt.change(new)
			if got := NodeUpdateActions(old, new); got != tt.want {
				t.Errorf("NodeUpdateActions = %v, want %v", got, tt.want)
			}
		})
	}
}

func basePod() *v1.Pod {
	return makePod("p").rv("1").label("app", "web").annotation("note", "1").
		gate("example.com/quota").
		toleration("dedicated", v1.TolerationOpEqual, "web", v1.TaintEffectNoSchedule).
		container(res("cpu", "1", "memory", "1Gi")).
		obj()
}

func TestPodUpdateActions(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*v1.Pod) // applied to the old pod; nil leaves basePod
		change func(*v1.Pod) // applied to a copy of the old pod
		want   abi.ActionType
	}{
		{
			name:   "resync: same resourceVersion",
			change: func(p *v1.Pod) { p.Labels["app"] = "db" }, // cannot happen; the revision decides
			want:   0,
		},
		{
			name:   "resourceVersion only",
			change: func(p *v1.Pod) { p.ResourceVersion = "2" },
			want:   0,
		},
		{
			name: "status and bookkeeping metadata only",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Generation = 3
				p.Finalizers = []string{"example.com/f"}
				p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
				p.Status.Phase = v1.PodRunning
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: "Unschedulable"}}
				p.Status.NominatedNodeName = "n1"
			},
			want: 0,
		},
		{
			name:   "label",
			change: func(p *v1.Pod) { p.ResourceVersion = "2"; p.Labels["app"] = "db" },
			want:   abi.ActionUpdatePodLabel,
		},
		{
			name: "scale down: a request went down",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
			},
			want: abi.ActionUpdatePodScaleDown,
		},
		{
			name: "scale down: a request went away",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				delete(p.Spec.Containers[0].Resources.Requests, v1.ResourceMemory)
			},
			want: abi.ActionUpdatePodScaleDown,
		},
		{
			name: "scale down through the status of a bound pod (in-place resize)",
			old: func(p *v1.Pod) {
				p.Spec.NodeName = "n1"
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: res("cpu", "2")}}
			},
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Status.ContainerStatuses[0].AllocatedResources = res("cpu", "1")
			},
			want: abi.ActionUpdatePodScaleDown,
		},
		{
			name: "scale up: upstream's UpdatePodScaleUp",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
			},
			want: abi.ActionUpdateOther,
		},
		{
			name: "scale up through status only",
			old:  func(p *v1.Pod) { p.Spec.NodeName = "n1" },
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: res("cpu", "3")}}
			},
			want: abi.ActionUpdateOther,
		},
		{
			name: "toleration added",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "k", Operator: v1.TolerationOpExists})
			},
			want: abi.ActionUpdatePodToleration,
		},
		{
			name: "toleration changed in place: not the toleration bit (upstream compares lengths), but other",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Spec.Tolerations[0].TolerationSeconds = ptrTo(int64(30))
			},
			want: abi.ActionUpdateOther,
		},
		{
			name:   "last scheduling gate removed",
			change: func(p *v1.Pod) { p.ResourceVersion = "2"; p.Spec.SchedulingGates = nil },
			want:   abi.ActionUpdatePodSchedulingGatesEliminated,
		},
		{
			name: "one of two gates removed: other",
			old: func(p *v1.Pod) {
				p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: "example.com/b"})
			},
			change: func(p *v1.Pod) { p.ResourceVersion = "2"; p.Spec.SchedulingGates = p.Spec.SchedulingGates[:1] },
			want:   abi.ActionUpdateOther,
		},
		{
			name: "generated resource claim",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptrTo("p-gpu-x7k")}}
			},
			want: abi.ActionUpdatePodGeneratedResourceClaim,
		},
		{
			name: "generated resource claim name set later",
			old: func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu"}}
			},
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Status.ResourceClaimStatuses[0].ResourceClaimName = ptrTo("p-gpu-x7k")
			},
			want: abi.ActionUpdatePodGeneratedResourceClaim,
		},
		{
			name: "extended resource claim status",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{
					ResourceClaimName: "p-extended",
					RequestMappings:   []v1.ContainerExtendedResourceRequest{{ContainerName: "c0", ResourceName: "example.com/gpu", RequestName: "r0"}},
				}
			},
			want: abi.ActionUpdatePodGeneratedResourceClaim,
		},
		{
			name:   "annotation: other",
			change: func(p *v1.Pod) { p.ResourceVersion = "2"; p.Annotations["note"] = "2" },
			want:   abi.ActionUpdateOther,
		},
		{
			name:   "deletion started: other",
			change: func(p *v1.Pod) { p.ResourceVersion = "2"; p.DeletionTimestamp = ptrTo(metav1.NewTime(t0)) },
			want:   abi.ActionUpdateOther,
		},
		{
			name: "several at once: no other bit alongside specific ones",
			change: func(p *v1.Pod) {
				p.ResourceVersion = "2"
				p.Labels["app"] = "db"
				p.Spec.SchedulingGates = nil
				p.Spec.Tolerations = nil
				p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("100m")
				p.Annotations["note"] = "2"
			},
			want: abi.ActionUpdatePodLabel | abi.ActionUpdatePodScaleDown | abi.ActionUpdatePodToleration |
				abi.ActionUpdatePodSchedulingGatesEliminated,
		},
		{
			name: "objects without a resourceVersion are compared by content",
			old:  func(p *v1.Pod) { p.ResourceVersion = "" },
			change: func(p *v1.Pod) {
				p.Labels["app"] = "db"
			},
			want: abi.ActionUpdatePodLabel,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := basePod()
			if tt.old != nil {
				tt.old(old)
			}
			new := old.DeepCopy()
			tt.change(new)
			if got := PodUpdateActions(old, new); got != tt.want {
				t.Errorf("PodUpdateActions = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPodGroupUpdateActions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*schedv1beta1.PodGroup)
		want   abi.ActionType
	}{
		{name: "resync", change: func(g *schedv1beta1.PodGroup) {}, want: 0},
		{
			name: "status only",
			change: func(g *schedv1beta1.PodGroup) {
				g.ResourceVersion = "2"
				g.Status.Conditions = []metav1.Condition{{Type: "PodGroupScheduled", Status: metav1.ConditionTrue}}
			},
			want: 0,
		},
		{
			name:   "minCount",
			change: func(g *schedv1beta1.PodGroup) { g.ResourceVersion = "2"; g.Spec.SchedulingPolicy.Gang.MinCount = 3 },
			want:   abi.ActionUpdateOther,
		},
		{
			name:   "labels",
			change: func(g *schedv1beta1.PodGroup) { g.ResourceVersion = "2"; g.Labels = map[string]string{"a": "b"} },
			want:   abi.ActionUpdateOther,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := makeGroup("g").gang(4).rv("1").obj()
			new := old.DeepCopy()
			tt.change(new)
			if got := PodGroupUpdateActions(old, new); got != tt.want {
				t.Errorf("PodGroupUpdateActions = %v, want %v", got, tt.want)
			}
		})
	}
}
