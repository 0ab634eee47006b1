package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Pods are labelled with the phase of the run they belong to.
const (
	phaseLabel    = "wasmsched-perf/phase"
	phaseInit     = "init"
	phaseMeasured = "measured"
	phaseChurn    = "churn"
	// phaseWaiting are pods meant to stay unschedulable through the
	// measured phase (the churn workload's).
	phaseWaiting = "waiting"
)

// podSpec is what varies between the workloads' pods.
type podSpec struct {
	cpu, memory   string // requests
	priorityClass string
	group         string // PodGroup name, "" for none
	affinity      *v1.Affinity
	labels        map[string]string // besides phaseLabel
	spread        []v1.TopologySpreadConstraint
	owner         *metav1.OwnerReference // the pod's controller, nil for none
	claim         string                 // a PersistentVolumeClaim the pod mounts, "" for none
}

// makePod builds a pod for the perf profile. terminationGracePeriodSeconds
// is 0: there are no kubelets, so a bound pod deleted with a grace period
// would stay terminating (holding its node's resources) forever, while with
// 0 the apiserver removes it at once — as scheduler_perf's pods do.
func makePod(ns, name, phase string, s podSpec) *v1.Pod {
	zero := int64(0)
	labels := map[string]string{phaseLabel: phase}
	maps.Copy(labels, s.labels)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: v1.PodSpec{
			SchedulerName:                 schedulerName,
			TerminationGracePeriodSeconds: &zero,
			PriorityClassName:             s.priorityClass,
			Affinity:                      s.affinity,
			TopologySpreadConstraints:     s.spread,
			Containers: []v1.Container{{
				Name:  "c",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(s.cpu),
					v1.ResourceMemory: resource.MustParse(s.memory),
				}},
			}},
		},
	}
	if s.owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*s.owner}
	}
	if s.claim != "" {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: s.claim},
		}}}
	}
	if s.group != "" {
		g := s.group
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	}
	return p
}

// createWorkers is how many goroutines create objects: enough to keep the
// apiserver busy on 2 cores without the creator itself starving the
// scheduler under test.
const createWorkers = 8

// parallel runs f(i) for i in [0, n) on workers goroutines and returns the
// first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}

// createPods creates n pods built by build(i).
func createPods(ctx context.Context, c kubernetes.Interface, n int, build func(i int) *v1.Pod) error {
	return parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		p := build(i)
		if _, err := c.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
}

// podWatch counts, from an informer on one namespace, the pods of each
// phase that were bound and those the scheduler reported unschedulable
// (PodScheduled=False, reason Unschedulable): what the API shows, as
// scheduler_perf counts. A pod held before the queue (wasmsched writes
// PodScheduled=False with the holder as reason, e.g. DynamicResources while
// its ResourceClaim is not created yet; the apiserver's SchedulingGated) is
// waiting, not refused.
type podWatch struct {
	mu          sync.Mutex
	bound       map[string]map[types.UID]bool // phase -> pods seen bound
	unscheduled map[string]map[types.UID]bool // phase -> pods seen PodScheduled=False
	// firstUnscheduled is, per phase, the first pod seen PodScheduled=False
	// and the condition's reason and message.
	firstUnscheduled map[string]string
	stop             chan struct{}
}

func watchPods(ctx context.Context, c kubernetes.Interface, ns string) (*podWatch, error) {
	w := &podWatch{bound: map[string]map[types.UID]bool{}, unscheduled: map[string]map[types.UID]bool{},
		firstUnscheduled: map[string]string{}, stop: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	observe := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		phase := p.Labels[phaseLabel]
		w.mu.Lock()
		defer w.mu.Unlock()
		if p.Spec.NodeName != "" {
			mark(w.bound, phase, p.UID)
			return
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				mark(w.unscheduled, phase, p.UID)
				if _, ok := w.firstUnscheduled[phase]; !ok {
					w.firstUnscheduled[phase] = fmt.Sprintf("pod %s: %s: %s", p.Name, c.Reason, c.Message)
				}
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
	}); err != nil {
		return nil, err
	}
	f.Start(w.stop)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		close(w.stop)
		return nil, fmt.Errorf("pod informer of namespace %s did not sync", ns)
	}
	return w, nil
}

func mark(m map[string]map[types.UID]bool, phase string, uid types.UID) {
	s := m[phase]
	if s == nil {
		s = map[types.UID]bool{}
		m[phase] = s
	}
	s[uid] = true
}

// boundCount is how many pods of phase were seen bound.
func (w *podWatch) boundCount(phase string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound[phase])
}

// unschedulableCount is how many pods of phase were seen PodScheduled=False.
func (w *podWatch) unschedulableCount(phase string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.unscheduled[phase])
}

// unschedulable returns, when a pod of phase was seen PodScheduled=False,
// which one and the scheduler's reason and message.
func (w *podWatch) unschedulable(phase string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.firstUnscheduled[phase]
	return s, ok
}

func (w *podWatch) close() { close(w.stop) }

// waitFor polls cond every 50 ms until it holds, ctx ends, or timeout
// passes; the error says what was being waited for and the last progress.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, string)) error {
	return waitOrFail(ctx, timeout, what, func() (bool, string, error) {
		ok, progress := cond()
		return ok, progress, nil
	})
}

// waitOrFail is waitFor with a cond that can also tell that the wait is
// hopeless: its error ends the wait at once.
func waitOrFail(ctx context.Context, timeout time.Duration, what string, cond func() (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, progress, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (%s)", what, ctx.Err(), progress)
		case <-t.C:
		}
	}
}
