package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// workload is one scenario measured under every scheduler. Sizes are for 2
// cores running etcd, kube-apiserver, the scheduler and this harness at
// once; -scale multiplies the counts (not the gang sizes).
type workload struct {
	name, description string
	nodes             int
	node              testenv.NodeSpec
	// zones, when set, label the nodes topology.kubernetes.io/zone
	// round-robin over these values (scheduler_perf's
	// labelNodePrepareStrategy).
	zones []string
	// allSchedulable says every pod fits at once: the first pod reported
	// unschedulable fails the run with the scheduler's message instead of
	// waiting for the timeout (wasmsched refuses constraints it has no
	// plugin for yet that way).
	allSchedulable bool
	// init creates what the scheduler meets before the measured phase and
	// waits until the scheduler has handled it.
	init func(ctx context.Context, r *run) error
	// measured is how many measured pods must be bound to end the run.
	measured int
	// create creates the measured pods (the harness samples meanwhile).
	create func(ctx context.Context, r *run) error
	// churn, when set, runs during the measured phase until ctx ends.
	churn func(ctx context.Context, r *run)
	// timeout bounds the measured phase.
	timeout time.Duration
	// verify, when set, checks the placements after the measured phase
	// (outside the measurement): a scheduler that ignores a hard
	// constraint fails the run rather than winning it.
	verify func(ctx context.Context, r *run) error
	// controllers, when set, are the kube-controller-manager controllers
	// the workload needs (the PV binder for the volume workload): the run
	// starts it with them before the scheduler and stops it before the
	// cleanup, so that no other workload shares the machine with it.
	controllers []string
	// cleanup, when set, deletes what the workload created outside the
	// run's namespace and nodes (cluster-scoped objects), after the run's
	// own cleanup.
	cleanup func(ctx context.Context, r *run) error
	// noCeiling, when set, says why the ceiling does not run the
	// workload: a scheduler writes more here than a binding and an event
	// per pod (or the workload needs pods left unscheduled), so a binder
	// is no bound on it. The ceiling runs the others without verify: it
	// honours no constraint.
	noCeiling string
}

// Priority classes of the preemption workload.
const (
	pcLow  = "perf-low"
	pcHigh = "perf-high"
)

// node is scheduler_perf's default node: 4 cpu, 32Gi, 110 pods.
var node = testenv.NodeSpec{CPU: "4", Memory: "32Gi", Pods: 110}

// small is a pod that fits anywhere many times over.
var small = podSpec{cpu: "100m", memory: "500Mi"}

func scaled(n int, scale float64) int {
	return max(1, int(math.Round(float64(n)*scale)))
}

// workloads returns the scenarios at scale.
func workloads(scale float64) []*workload {
	basicInit, basicPods := scaled(500, scale), scaled(5000, scale)
	unschedInit := scaled(200, scale)
	preemptNodes := scaled(500, scale)
	groups := scaled(250, scale)
	groupSizes := make([]int, groups)
	gangPods := 0
	for i := range groupSizes {
		groupSizes[i] = 8 + i%9 // 8..16
		gangPods += groupSizes[i]
	}
	return append([]*workload{
		{
			name: "SchedulingBasic",
			description: fmt.Sprintf("%d nodes (4 cpu, 32Gi, 110 pods), %d initial pods, then %d measured pods (100m cpu, 500Mi), as scheduler_perf's SchedulingBasic",
				scaled(1000, scale), basicInit, basicPods),
			nodes: scaled(1000, scale), node: node,
			init: func(ctx context.Context, r *run) error {
				return r.createAndBind(ctx, phaseInit, basicInit, func(int) podSpec { return small })
			},
			measured: basicPods,
			create: func(ctx context.Context, r *run) error {
				return r.create(ctx, phaseMeasured, basicPods, func(int) podSpec { return small })
			},
			timeout: 10 * time.Minute,
		},
		{
			name: "Unschedulable",
			description: fmt.Sprintf("%d nodes, %d pods that fit no node (5 cpu) left unschedulable, then %d measured pods while a node is added, a node's labels changed and a node deleted every 200 ms (each event is checked against every unschedulable pod)",
				scaled(1000, scale), unschedInit, basicPods),
			nodes: scaled(1000, scale), node: node,
			init: func(ctx context.Context, r *run) error {
				big := podSpec{cpu: "5", memory: "500Mi"}
				if err := r.create(ctx, phaseInit, unschedInit, func(int) podSpec { return big }); err != nil {
					return err
				}
				return waitFor(ctx, 5*time.Minute, "the unschedulable pods' first attempts", func() (bool, string) {
					n := r.pods.unschedulableCount(phaseInit)
					return n >= unschedInit, fmt.Sprintf("%d/%d PodScheduled=False", n, unschedInit)
				})
			},
			measured: basicPods,
			create: func(ctx context.Context, r *run) error {
				return r.create(ctx, phaseMeasured, basicPods, func(int) podSpec { return small })
			},
			churn:     nodeChurn,
			timeout:   10 * time.Minute,
			noCeiling: "its initial pods must stay unschedulable, and a binder binds every pod",
		},
		churnWorkload(scale),
		{
			name: "Preemption",
			description: fmt.Sprintf("%d nodes (4 cpu) filled by %d low-priority pods (1 cpu), then %d measured high-priority pods (1 cpu) that each preempt one, as scheduler_perf's PreemptionBasic",
				preemptNodes, 4*preemptNodes, preemptNodes),
			nodes: preemptNodes, node: node,
			init: func(ctx context.Context, r *run) error {
				low := podSpec{cpu: "1", memory: "500Mi", priorityClass: pcLow}
				return r.createAndBind(ctx, phaseInit, 4*preemptNodes, func(int) podSpec { return low })
			},
			measured: preemptNodes,
			create: func(ctx context.Context, r *run) error {
				high := podSpec{cpu: "1", memory: "500Mi", priorityClass: pcHigh}
				return r.create(ctx, phaseMeasured, preemptNodes, func(int) podSpec { return high })
			},
			timeout:   10 * time.Minute,
			noCeiling: noCeilingPreemption,
		},
		{
			name: "PreemptionAsync",
			description: fmt.Sprintf("%d nodes (4 cpu) filled by %d low-priority pods (900m cpu, 500Mi), then %d measured pods (100m cpu, 500Mi) while a high-priority pod (3970m cpu, 500Mi) that preempts its node's four is created every 200 ms until those are bound; only the measured pods are counted, as scheduler_perf's PreemptionAsync/500Nodes",
				preemptNodes, 4*preemptNodes, preemptNodes),
			nodes: preemptNodes, node: node,
			init: func(ctx context.Context, r *run) error {
				low := podSpec{cpu: "900m", memory: "500Mi", priorityClass: pcLow}
				return r.createAndBind(ctx, phaseInit, 4*preemptNodes, func(int) podSpec { return low })
			},
			measured: preemptNodes,
			create: func(ctx context.Context, r *run) error {
				return r.create(ctx, phaseMeasured, preemptNodes, func(int) podSpec { return small })
			},
			churn:     preemptorChurn,
			timeout:   10 * time.Minute,
			verify:    preemptorsBound,
			noCeiling: noCeilingPreemption,
		},
		{
			name: "Gang",
			description: fmt.Sprintf("%d nodes, %d initial pods, then %d PodGroups (scheduling.k8s.io/v1beta1, gang minCount = size, sizes 8-16) with %d measured pods, each group created before its members",
				scaled(1000, scale), basicInit, groups, gangPods),
			nodes: scaled(1000, scale), node: node,
			init: func(ctx context.Context, r *run) error {
				return r.createAndBind(ctx, phaseInit, basicInit, func(int) podSpec { return small })
			},
			measured: gangPods,
			create: func(ctx context.Context, r *run) error {
				return parallel(ctx, groups, createWorkers, func(ctx context.Context, g int) error {
					name := "gang-" + strconv.Itoa(g)
					if _, err := r.env.CreatePodGroup(ctx, r.ns, name, int32(groupSizes[g])); err != nil {
						return err
					}
					for m := range groupSizes[g] {
						s := small
						s.group = name
						p := makePod(r.ns, name+"-"+strconv.Itoa(m), phaseMeasured, s)
						if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
							return fmt.Errorf("create pod %s: %w", p.Name, err)
						}
					}
					return nil
				})
			},
			timeout: 10 * time.Minute,
		},
	}, append(append(constraintWorkloads(scale), volumeWorkloads(scale)...), draWorkloads(scale)...)...)
}

// noCeilingPreemption is why the ceiling skips the preemption workloads.
const noCeilingPreemption = "a scheduler also nominates each preemptor and deletes its victims there, which a binder does not"

// nodeChurn adds a node, changes a label of an existing node and deletes
// the node added before, every 200 ms: the node events a cluster
// autoscaler and node-labelling controllers make, each of which the
// scheduler checks against its unschedulable pods.
func nodeChurn(ctx context.Context, r *run) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	var prev string
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		spec := node
		spec.NamePrefix = r.nodePrefix + "-churn"
		spec.Labels = map[string]string{runLabel: r.id}
		nodes, err := r.env.CreateFakeNodes(ctx, 1, spec)
		if err != nil {
			if ctx.Err() == nil {
				r.logf("churn: %v", err)
			}
			return
		}
		if len(r.nodeNames) > 0 {
			name := r.nodeNames[i%len(r.nodeNames)]
			patch := fmt.Sprintf(`{"metadata":{"labels":{"wasmsched-perf/churn":"%d"}}}`, i)
			if _, err := r.c.CoreV1().Nodes().Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
				r.logf("churn: label node %s: %v", name, err)
			}
		}
		if prev != "" {
			if err := r.c.CoreV1().Nodes().Delete(ctx, prev, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				r.logf("churn: delete node %s: %v", prev, err)
			}
		}
		prev = nodes[0].Name
	}
}

// preemptorChurn creates a high-priority pod that needs a whole node
// (3970m of 4 cpu) at once and then every 200 ms until ctx ends, as
// scheduler_perf's churn op in create mode: each one preempts the low
// pods of a node. They stay (cleanup deletes them with the run's other
// pods); once every node holds one, the later ones stay pending. The
// first is created at once so that even a measured phase shorter than the
// interval meets one.
func preemptorChurn(ctx context.Context, r *run) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	high := podSpec{cpu: "3970m", memory: "500Mi", priorityClass: pcHigh}
	for i := 0; ; i++ {
		p := makePod(r.ns, phaseChurn+"-"+strconv.Itoa(i), phaseChurn, high)
		if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			if ctx.Err() == nil {
				r.logf("churn: create pod %s: %v", p.Name, err)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// preemptorsBound waits up to preemptorWait for one of the preemptors
// created to be bound and logs how many were: a scheduler that never
// completes a preemption fails the run. It does not wait for all of them:
// those created last had no time, and once every node holds one the rest
// cannot fit.
func preemptorsBound(ctx context.Context, r *run) error {
	l, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: phaseLabel + "=" + phaseChurn})
	if err != nil {
		return fmt.Errorf("list the preemptors: %w", err)
	}
	created := len(l.Items)
	if created == 0 {
		r.logf("no preemptor was created during the measured phase")
		return nil
	}
	err = waitFor(ctx, preemptorWait, "a preemptor to be bound", func() (bool, string) {
		b := r.pods.boundCount(phaseChurn)
		return b > 0, fmt.Sprintf("%d/%d preemptors bound", b, created)
	})
	r.logf("%d/%d preemptors bound", r.pods.boundCount(phaseChurn), created)
	return err
}

// preemptorWait bounds preemptorsBound's wait, generously: the first
// preemptor was created when the measured phase began.
const preemptorWait = 30 * time.Second

// ensurePriorityClasses creates the preemption workload's classes.
func ensurePriorityClasses(ctx context.Context, env *testenv.Env) error {
	for _, pc := range []schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: pcLow}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: pcHigh}, Value: 1000},
	} {
		if _, err := env.Client.SchedulingV1().PriorityClasses().Create(ctx, &pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PriorityClass %s: %w", pc.Name, err)
		}
	}
	return nil
}

// unmatchable is a required node affinity no node satisfies.
var unmatchable = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
	RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: "wasmsched-perf/never", Operator: v1.NodeSelectorOpIn, Values: []string{"true"}}},
	}}},
}}
