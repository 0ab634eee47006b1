package podview

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/abi"
)

// benchPod is a pod as a Deployment with a sidecar creates it: a handful of
// labels, two containers and a sidecar with requests, the default
// not-ready/unreachable tolerations, a zone affinity and a node selector.
func benchPod() *v1.Pod {
	return makePod("web-7d4b9c-x2x9z").namespace("shop").uid("0b7a6c9e-5f7e-4c1b-9d2a-3e8f1a2b3c4d").
		priority(1000).created(t0).
		label("app", "web").label("pod-template-hash", "7d4b9c").label("tier", "frontend").
		label("app.kubernetes.io/version", "1.4.2").label("team", "checkout").
		nodeSelector("kubernetes.io/os", "linux").
		toleration("node.kubernetes.io/not-ready", v1.TolerationOpExists, "", v1.TaintEffectNoExecute).
		toleration("node.kubernetes.io/unreachable", v1.TolerationOpExists, "", v1.TaintEffectNoExecute).
		sidecar(res("cpu", "50m", "memory", "64Mi")).
		container(res("cpu", "500m", "memory", "512Mi", "ephemeral-storage", "1Gi"), v1.ContainerPort{ContainerPort: 8080}).
		container(res("cpu", "100m", "memory", "128Mi")).
		affinityTerm([]v1.NodeSelectorRequirement{
			nodeReq("topology.kubernetes.io/zone", v1.NodeSelectorOpIn, "eu-west-1a", "eu-west-1b"),
		}, nil).
		obj()
}

func BenchmarkPod(b *testing.B) {
	pod := benchPod()
	plugins := Plugins{Unschedulable: []string{"NodeResourcesFit"}}
	q := abi.PodQueueState{QueuedTime: 1, Attempts: 1}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		p := Pod(pod, nil, q, plugins)
		buf = abi.AppendPod(buf[:0], &p)
	}
	_ = buf
}

func BenchmarkPodUpdateActions(b *testing.B) {
	old := benchPod()
	old.ResourceVersion = "1"
	new := old.DeepCopy()
	new.ResourceVersion = "2"
	new.Status.Phase = v1.PodRunning
	b.ReportAllocs()
	for b.Loop() {
		PodUpdateActions(old, new)
	}
}
