package bench

import (
	"fmt"
	"math"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// newClient builds the fake cluster: the nodes, discovery, watches sized
// for the run, the binding reactor. The returned channel closes once the
// pods are watched.
func (b *runner) newClient() <-chan struct{} {
	objs := make([]runtime.Object, 0, b.nodes)
	for i := range b.nodes {
		objs = append(objs, node(i))
	}
	c := fake.NewSimpleClientset(objs...)
	b.client = c
	// Discovery says what a v1.37 cluster with GenericWorkload says: the
	// fake serves PodGroups and Workloads like any other type, so gangs are
	// on and their informers run, as they would in production.
	c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: v1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod"},
			{Name: "pods/binding", Namespaced: true, Kind: "Binding"},
			{Name: "pods/status", Namespaced: true, Kind: "Pod"},
			{Name: "nodes", Kind: "Node"},
		}},
		{GroupVersion: schedv1beta1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "podgroups", Namespaced: true, Kind: "PodGroup"},
			{Name: "podgroups/status", Namespaced: true, Kind: "PodGroup"},
			{Name: "workloads", Namespaced: true, Kind: "Workload"},
		}},
	}
	// Every event of the run fits in each watch.
	events := b.nodes + 2*(b.initPods+b.pods) + 1024
	t := newTracker(c, min(events, math.MaxInt32))

	// create pods/binding: what the apiserver's binding does, on the
	// fake's copy of the pod.
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateAction)
		if !ok || ca.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding := ca.GetObject().(*v1.Binding)
		obj, err := t.Get(podsGVR, a.GetNamespace(), binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod)
		switch {
		case binding.UID != "" && binding.UID != pod.UID:
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), binding.Name, fmt.Errorf("the UID in the binding does not match the pod's"))
		case pod.Spec.NodeName != "":
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), binding.Name,
				fmt.Errorf("pod %s is already assigned to node %q", binding.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = binding.Target.Name
		pod.Status.Conditions = append(pod.Status.Conditions, v1.PodCondition{
			Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.Now(),
		})
		if err := t.Update(podsGVR, pod, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		b.lastBind.Store(time.Now().UnixNano())
		if g := b.goal.Load(); b.binds.Add(1) == g.binds {
			close(g.reached)
		}
		return true, binding, nil
	})

	// Pods may only be created once the pod informer watches: the watches
	// replay nothing created between an informer's list and its watch.
	watched := make(chan struct{})
	var once sync.Once
	c.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := t.Watch(a.GetResource(), a.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		once.Do(func() { close(watched) })
		return true, w, nil
	})
	return watched
}

// newEventSink is the client that events go to: discovery offers
// events.k8s.io/v1, as a real cluster does, and every write is accepted and
// forgotten.
func newEventSink() *fake.Clientset {
	c := fake.NewSimpleClientset()
	c.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: eventsv1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "events", Namespaced: true, Kind: "Event"},
		}},
	}
	c.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if ca, ok := a.(k8stesting.CreateAction); ok {
			return true, ca.GetObject(), nil
		}
		return true, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: a.GetNamespace()}}, nil
	})
	return c
}

func node(i int) *v1.Node {
	name := fmt.Sprintf("node-%05d", i)
	res := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(nodeCPU, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("32Gi"),
		v1.ResourcePods:   *resource.NewQuantity(nodePods, resource.DecimalSI),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: uuid.NewUUID(), CreationTimestamp: metav1.Now(),
			Labels: map[string]string{
				v1.LabelHostname:       name,
				v1.LabelTopologyZone:   fmt.Sprintf("zone-%d", i%zones),
				v1.LabelTopologyRegion: "bench",
				v1.LabelOSStable:       "linux",
			},
		},
		Status: v1.NodeStatus{
			Capacity: res, Allocatable: res,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}},
		},
	}
}

func pod(name, schedulerName string) *v1.Pod {
	return &v1.Pod{
		// The apiserver would set UID, generation and creation time.
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uuid.NewUUID(), Generation: 1, CreationTimestamp: metav1.Now()},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(podCPU, resource.DecimalSI),
					v1.ResourceMemory: resource.MustParse("100Mi"),
				}},
			}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}
