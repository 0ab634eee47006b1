package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The churn workload of issue 30: Unschedulable's question (what does each
// cluster event cost while pods wait?) for pods that wait on InterPodAffinity
// and PodTopologySpread instead of NodeResourcesFit. Which waiting pods an
// event moves is what the QueueingHints decide: non-selective hints (the
// hints module before ABI minor 4) move every such pod on every assigned-pod
// or node event, selective ones (upstream's, and policies/hints since) only
// those the event can help. Each move is an attempt that fails again, so
// attempts per bound pod measure the hints, and CPU per pod their cost.
//
// The waiting pods are of three kinds, a third each, none fits any node and
// none can be helped by anything the workload does while measuring:
//   - anti: a required anti-affinity to color=green on the zone, with a
//     green pod bound in every zone;
//   - affinity: a required affinity to color=purple on the zone, which no
//     pod has (the pod does not match its own term, so upstream's
//     first-pod exception does not apply);
//   - spread: color=orange, spread over the zones among color=orange with
//     maxSkew 1 and minDomains 4: with 3 zones the global minimum counts
//     as 0, and an orange pod is bound in every zone, so every zone's skew
//     would be 2.
//
// While the measured pods (TopologySpreading's blue pods) bind, a churn
// loop every 100 ms changes a label of an existing node (not a topology
// key), creates a pod already assigned to a node and deletes the one
// created before: a node update, an assigned-pod add and delete, none of
// which matches a waiting pod's terms. Each measured pod's binding is an
// assigned-pod add too.

// Labels and values of the churn workload.
const (
	waitingLabel  = "wasmsched-perf/waiting" // the waiting pod's kind
	waitAnti      = "anti"
	waitAffinity  = "affinity"
	waitSpread    = "spread"
	churnNodeKey  = "wasmsched-perf/churn"
	churnAppValue = "churn" // app= of the assigned churn pods
)

// waitKinds are the waiting kinds, by index modulo 3.
var waitKinds = [...]string{waitAnti, waitAffinity, waitSpread}

// waitReason is, per waiting kind, the only reason the scheduler may give
// for every node (upstream's and wasmsched's plugins word it alike).
var waitReason = map[string]string{
	waitAnti:     "node(s) didn't match pod anti-affinity rules",
	waitAffinity: "node(s) didn't match pod affinity rules",
	waitSpread:   "node(s) didn't match pod topology spread constraints",
}

// inZone returns s pinned to zone by a required node affinity.
func inZone(s podSpec, zone string) podSpec {
	s.affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
		}}},
	}}
	return s
}

// waitingPod is the waiting pod of kind.
func waitingPod(kind string) podSpec {
	s := small
	s.labels = map[string]string{waitingLabel: kind}
	switch kind {
	case waitAnti:
		s.affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{colorTerm("green", v1.LabelTopologyZone)},
		}}
	case waitAffinity:
		s.affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{colorTerm("purple", v1.LabelTopologyZone)},
		}}
	case waitSpread:
		s.labels[colorLabel] = "orange"
		minDomains := int32(len(threeZones) + 1)
		s.spread = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, MinDomains: &minDomains, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{colorLabel: "orange"}},
		}}
	}
	return s
}

// churnWorkload is the churn workload at scale: TopologySpreading's nodes
// and measured pods, Unschedulable's waiting pods made to wait on the
// inter-pod and spreading constraints.
func churnWorkload(scale float64) *workload {
	nodes, waiting, pods := scaled(500, scale), scaled(300, scale), scaled(2000, scale)
	// One green and one orange pod per zone, bound by the scheduler
	// (so that it has seen them before the waiting pods arrive).
	anchors := func(i int) podSpec {
		zone := threeZones[i%len(threeZones)]
		if i < len(threeZones) {
			return inZone(withColor("green"), zone)
		}
		return inZone(withColor("orange"), zone)
	}
	return &workload{
		name: "ChurnAffinity",
		description: fmt.Sprintf("%d nodes in 3 zones, a green and an orange pod bound in each zone, %d pods left unschedulable by InterPodAffinity or PodTopologySpread "+
			"(a third each: a required anti-affinity to the green pods on the zone, a required affinity to color=purple which no pod has, "+
			"an orange spread over the zones with maxSkew 1 and minDomains 4), then %d measured pods (color=blue, DoNotSchedule spread over the zones, maxSkew 5, as TopologySpreading's) "+
			"while every 100 ms a node's label (not a topology key) changes, a pod already assigned to a node is created and the one before deleted: "+
			"no event helps a waiting pod, so attempts per bound pod above 1 are the hints' requeues",
			nodes, waiting, pods),
		nodes: nodes, node: node, zones: threeZones,
		// The measured pods all fit: one refused fails the run. The
		// waiting pods are of their own phase, which refused() never asks
		// about.
		allSchedulable: true,
		init: func(ctx context.Context, r *run) error {
			if err := r.createAndBind(ctx, phaseInit, 2*len(threeZones), anchors); err != nil {
				return err
			}
			if err := r.create(ctx, phaseWaiting, waiting, func(i int) podSpec { return waitingPod(waitKinds[i%len(waitKinds)]) }); err != nil {
				return err
			}
			return waitFor(ctx, 5*time.Minute, "the waiting pods' first attempts", func() (bool, string) {
				n := r.pods.unschedulableCount(phaseWaiting)
				return n >= waiting, fmt.Sprintf("%d/%d PodScheduled=False", n, waiting)
			})
		},
		measured: pods,
		create: func(ctx context.Context, r *run) error {
			return r.create(ctx, phaseMeasured, pods, func(int) podSpec { return spreadPod(v1.DoNotSchedule) })
		},
		churn:   assignedChurn,
		timeout: 10 * time.Minute,
		verify: func(ctx context.Context, r *run) error {
			return errors.Join(zoneSkew(ctx, r, colorLabel+"=blue", threeZones, 5), stillWaiting(ctx, r, waiting))
		},
		noCeiling: "its waiting pods must stay unschedulable, and a binder binds every pod",
	}
}

// assignedChurn changes a label of one of the run's nodes, creates a pod
// already assigned to a node and deletes the one created before, every
// 100 ms until ctx ends: the events of node-labelling controllers and of
// pods that other schedulers (or kubelets' static pods) place, none of
// which matches the waiting pods' terms. The pods are deleted with the
// run's others.
func assignedChurn(ctx context.Context, r *run) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	s := small
	s.labels = map[string]string{appLabel: churnAppValue}
	prev := ""
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if len(r.nodeNames) == 0 {
			return
		}
		name := r.nodeNames[i%len(r.nodeNames)]
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"%d"}}}`, churnNodeKey, i)
		if _, err := r.c.CoreV1().Nodes().Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil && ctx.Err() == nil {
			r.logf("churn: label node %s: %v", name, err)
		}
		p := makePod(r.ns, phaseChurn+"-"+strconv.Itoa(i), phaseChurn, s)
		p.Spec.NodeName = r.nodeNames[(i*7)%len(r.nodeNames)]
		if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			if ctx.Err() == nil {
				r.logf("churn: create pod %s: %v", p.Name, err)
			}
			return
		}
		if prev != "" {
			zero := int64(0)
			if err := r.c.CoreV1().Pods(r.ns).Delete(ctx, prev, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				r.logf("churn: delete pod %s: %v", prev, err)
			}
		}
		prev = p.Name
	}
}

// stillWaiting checks that the n waiting pods are all still unbound and
// that the scheduler's last word on each is that every node failed for
// the one reason of its kind: none was helped by the churn, and none was
// refused by another plugin than the one meant.
func stillWaiting(ctx context.Context, r *run, n int) error {
	l, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: phaseLabel + "=" + phaseWaiting})
	if err != nil {
		return fmt.Errorf("list the waiting pods: %w", err)
	}
	if len(l.Items) != n {
		return fmt.Errorf("%d waiting pods, want %d", len(l.Items), n)
	}
	var errs []error
	for i := range l.Items {
		p := &l.Items[i]
		if p.Spec.NodeName != "" {
			errs = append(errs, fmt.Errorf("waiting pod %s (%s) was bound to %s", p.Name, p.Labels[waitingLabel], p.Spec.NodeName))
			continue
		}
		want := fmt.Sprintf("%d %s", len(r.nodeNames), waitReason[p.Labels[waitingLabel]])
		var msg string
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				msg = c.Message
			}
		}
		if !strings.Contains(msg, want) {
			errs = append(errs, fmt.Errorf("waiting pod %s (%s): PodScheduled says %q, want every node refused: %q", p.Name, p.Labels[waitingLabel], msg, want))
		}
		if len(errs) >= 3 {
			break
		}
	}
	return errors.Join(errs...)
}
