package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The workloads of the inter-pod and spreading constraints (InterPodAffinity,
// PodTopologySpread and its system default constraints), modelled on
// scheduler_perf's affinity/ and topology_spreading/ performance-config.yaml
// of k8s.io/kubernetes v1.37.1 and its templates, with the nodes and
// initial pods of their 500Nodes variants (as Preemption has
// PreemptionBasic's) and twice their 1000 measured pods, which upstream
// schedules in about 5 s here: upstream's own thresholds put these
// workloads 1.5 to 10 times below SchedulingBasic's, and their 5000-node
// variants would take most of an hour a round on 2 cores.
// SchedulingPodAntiAffinity, one pod per node, has twice the nodes and
// measured pods of its 500Nodes variant (1000 nodes, 100 initial and 800
// measured pods). The differences from upstream:
//   - one namespace per run instead of sched-0 and sched-1: the terms name
//     no namespace (the pod's own), which selects the same pods as
//     upstream's namespaces: ["sched-1", "sched-0"];
//   - nodes are labelled with their zone when created, round-robin over the
//     zones as labelNodePrepareStrategy does, instead of patched afterwards;
//     the anti-affinity and preferred-affinity workloads get the three zones
//     too (upstream's nodes there have none; only the hostname matters);
//   - the default-spreading pods request 100m/500Mi like every other pod
//     here (upstream's pod-with-label.yaml requests nothing), and a
//     ReplicaSet owns them besides the Service selecting them, so that both
//     of the scheduler's default-selector sources are read.
//
// No pod of these workloads ever has to wait for room, so each sets
// allSchedulable: a pod reported unschedulable fails the run at once with
// the scheduler's message (wasmsched refuses a required pod affinity or a
// DoNotSchedule spread constraint until it has the plugin) rather than
// after the timeout. The hard constraints that can be broken are checked
// after the measured phase (one green pod per node; the blue pods' skew
// over the zones), so that a scheduler ignoring them fails instead of
// looking fast. (With upstream's single zone the required affinity cannot
// be broken.)

// Labels of the constraint workloads: upstream's templates select on
// "color"; spreadApp is what the default-spreading Service and ReplicaSet
// select.
const (
	colorLabel = "color"
	appLabel   = "app"
	spreadApp  = "scheduler-perf"
	// spreadOwner names the Service and the ReplicaSet of the default-spreading workload.
	spreadOwner = "perf-spread"
)

// Upstream's zone labels: topology_spreading/ uses three "moon" zones,
// SchedulingPodAffinity one zone, "zone1".
var (
	threeZones = []string{"moon-1", "moon-2", "moon-3"}
	oneZone    = []string{"zone1"}
)

// withColor returns small labelled color=c.
func withColor(c string) podSpec {
	s := small
	s.labels = map[string]string{colorLabel: c}
	return s
}

// colorTerm is a pod affinity term selecting color=c over topologyKey.
func colorTerm(c, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{colorLabel: c}},
		TopologyKey:   topologyKey,
	}
}

// The pods of upstream's templates (pod-with-pod-anti-affinity.yaml and
// the others): small, labelled with a color, and constrained relative to
// the pods of that color.
var (
	antiAffinityPod = func() podSpec {
		s := withColor("green")
		s.affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{colorTerm("green", v1.LabelHostname)},
		}}
		return s
	}()
	affinityPod = func() podSpec {
		s := withColor("blue")
		s.affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{colorTerm("blue", v1.LabelTopologyZone)},
		}}
		return s
	}()
	preferredAffinityPod = func() podSpec {
		s := withColor("red")
		s.affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: colorTerm("red", v1.LabelHostname)}},
		}}
		return s
	}()
	preferredAntiAffinityPod = func() podSpec {
		s := withColor("yellow")
		s.affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: colorTerm("yellow", v1.LabelHostname)}},
		}}
		return s
	}()
)

// spreadPod is pod-with-topology-spreading.yaml (DoNotSchedule) or
// pod-with-preferred-topology-spreading.yaml (ScheduleAnyway): maxSkew 5
// over the zones among the blue pods.
func spreadPod(when v1.UnsatisfiableConstraintAction) podSpec {
	s := withColor("blue")
	s.spread = []v1.TopologySpreadConstraint{{
		MaxSkew: 5, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{colorLabel: "blue"}},
	}}
	return s
}

// constraintWorkloads returns the constraint workloads at scale.
func constraintWorkloads(scale float64) []*workload {
	// Upstream's 500Nodes sizes (500 initial pods for the affinity
	// workloads, 1000 for the spreading ones), twice its measured pods.
	nodes, affinityInit, spreadInit, pods := scaled(500, scale), scaled(500, scale), scaled(1000, scale), scaled(2000, scale)
	antiNodes, antiInit, antiPods := scaled(1000, scale), scaled(100, scale), scaled(800, scale)

	// twoPhase is a workload on nodeN nodes labelled with zones: initN
	// pods of initSpec, bound before measuring, then n measured pods of
	// spec.
	twoPhase := func(name, desc string, nodeN int, zones []string, initN int, initSpec podSpec, n int, spec podSpec) *workload {
		return &workload{
			name: name, description: desc,
			nodes: nodeN, node: node, zones: zones, allSchedulable: true,
			init: func(ctx context.Context, r *run) error {
				return r.createAndBind(ctx, phaseInit, initN, func(int) podSpec { return initSpec })
			},
			measured: n,
			create: func(ctx context.Context, r *run) error {
				return r.create(ctx, phaseMeasured, n, func(int) podSpec { return spec })
			},
			timeout: 10 * time.Minute,
		}
	}

	anti := twoPhase("SchedulingPodAntiAffinity", fmt.Sprintf(
		"%d nodes in 3 zones, %d initial and %d measured pods (color=green) with a required anti-affinity to color=green on kubernetes.io/hostname: one per node, as scheduler_perf's SchedulingPodAntiAffinity/500Nodes with twice its nodes and measured pods",
		antiNodes, antiInit, antiPods),
		antiNodes, threeZones, antiInit, antiAffinityPod, antiPods, antiAffinityPod)
	anti.verify = func(ctx context.Context, r *run) error { return onePerNode(ctx, r, colorLabel+"=green") }

	affinity := twoPhase("SchedulingPodAffinity", fmt.Sprintf(
		"%d nodes in one zone, %d initial and %d measured pods (color=blue) with a required affinity to color=blue on topology.kubernetes.io/zone, as scheduler_perf's SchedulingPodAffinity/500Nodes with twice its measured pods",
		nodes, affinityInit, pods),
		nodes, oneZone, affinityInit, affinityPod, pods, affinityPod)

	preferred := twoPhase("SchedulingPreferredPodAffinity", fmt.Sprintf(
		"%d nodes in 3 zones, %d initial and %d measured pods (color=red) with a preferred affinity (weight 1) to color=red on kubernetes.io/hostname, as scheduler_perf's SchedulingPreferredPodAffinity/500Nodes with twice its measured pods",
		nodes, affinityInit, pods),
		nodes, threeZones, affinityInit, preferredAffinityPod, pods, preferredAffinityPod)

	preferredAnti := twoPhase("SchedulingPreferredPodAntiAffinity", fmt.Sprintf(
		"%d nodes in 3 zones, %d initial and %d measured pods (color=yellow) with a preferred anti-affinity (weight 1) to color=yellow on kubernetes.io/hostname, as scheduler_perf's SchedulingPreferredPodAntiAffinity/500Nodes with twice its measured pods",
		nodes, affinityInit, pods),
		nodes, threeZones, affinityInit, preferredAntiAffinityPod, pods, preferredAntiAffinityPod)

	spread := twoPhase("TopologySpreading", fmt.Sprintf(
		"%d nodes in 3 zones, %d initial pods without constraints, then %d measured pods (color=blue) spread over the zones (maxSkew 5, DoNotSchedule), as scheduler_perf's TopologySpreading/500Nodes with twice its measured pods",
		nodes, spreadInit, pods),
		nodes, threeZones, spreadInit, small, pods, spreadPod(v1.DoNotSchedule))
	spread.verify = func(ctx context.Context, r *run) error { return zoneSkew(ctx, r, colorLabel+"=blue", threeZones, 5) }

	preferredSpread := twoPhase("PreferredTopologySpreading", fmt.Sprintf(
		"%d nodes in 3 zones, %d initial pods without constraints, then %d measured pods (color=blue) spread over the zones (maxSkew 5, ScheduleAnyway), as scheduler_perf's PreferredTopologySpreading/500Nodes with twice its measured pods",
		nodes, spreadInit, pods),
		nodes, threeZones, spreadInit, small, pods, spreadPod(v1.ScheduleAnyway))

	dflt := twoPhase("SchedulingWithDefaultSpreading", fmt.Sprintf(
		"%d nodes in 3 zones, a Service and a ReplicaSet selecting app=%s, %d initial pods without labels, then %d measured pods (app=%s, owned by the ReplicaSet) without constraints of their own: the system default spreading (zone maxSkew 5, hostname maxSkew 3, ScheduleAnyway) over the Service's and ReplicaSet's selectors applies, as scheduler_perf's DefaultTopologySpreading/500Nodes with twice its measured pods",
		nodes, spreadApp, spreadInit, pods, spreadApp),
		nodes, threeZones, spreadInit, small, pods, small)
	dflt.init = func(ctx context.Context, r *run) error {
		// Before any pod, so that the scheduler's listers have both when
		// the measured pods arrive.
		if err := createSpreadOwners(ctx, r, pods); err != nil {
			return err
		}
		return r.createAndBind(ctx, phaseInit, spreadInit, func(int) podSpec { return small })
	}
	dflt.create = func(ctx context.Context, r *run) error {
		rs, err := r.c.AppsV1().ReplicaSets(r.ns).Get(ctx, spreadOwner, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get ReplicaSet %s: %w", spreadOwner, err)
		}
		s := small
		s.labels = map[string]string{appLabel: spreadApp}
		s.owner = metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
		return r.create(ctx, phaseMeasured, pods, func(int) podSpec { return s })
	}

	return []*workload{anti, affinity, preferred, preferredAnti, spread, preferredSpread, dflt, constraintMix(scale)}
}

// The constraint mix of issue 31: the constraints a cluster's Deployments
// combine, in one stream of pods, each kind among the pods of its own app.
const (
	mixPlain     = "mix-plain"     // no constraint
	mixPreferred = "mix-preferred" // preferred anti-affinity on hostname, weight 100
	mixSpread    = "mix-spread"    // DoNotSchedule spread over the zones, maxSkew 1
	mixRequired  = "mix-required"  // required anti-affinity on hostname: one per node
)

// appTerm is a pod affinity term selecting app=app over topologyKey.
func appTerm(app, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: app}},
		TopologyKey:   topologyKey,
	}
}

// mixSpecs are the four pods of the mix, by app.
var mixSpecs = func() map[string]podSpec {
	withApp := func(app string) podSpec {
		s := small
		s.labels = map[string]string{appLabel: app}
		return s
	}
	plain, preferred, spread, required := withApp(mixPlain), withApp(mixPreferred), withApp(mixSpread), withApp(mixRequired)
	preferred.affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: appTerm(mixPreferred, v1.LabelHostname)}},
	}}
	spread.spread = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: mixSpread}},
	}}
	required.affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm(mixRequired, v1.LabelHostname)},
	}}
	return map[string]podSpec{mixPlain: plain, mixPreferred: preferred, mixSpread: spread, mixRequired: required}
}()

// mixApp is the app of the mix's pod i: every tenth (i%10 == 9) has the
// required anti-affinity; the others cycle by i%3 through plain, preferred
// anti-affinity and zone spread (a third of the nine each over 30 pods).
func mixApp(i int) string {
	if i%10 == 9 {
		return mixRequired
	}
	return [...]string{mixPlain, mixPreferred, mixSpread}[i%3]
}

// constraintMix is issue 31's workload: 1000 nodes in 3 zones, 5500
// measured pods of the mix, no initial pods. At any scale the required
// pods (a tenth of 5.5 per node) fit one per node, so every pod fits at
// once; afterwards the required pods are checked one per node and the
// spread pods' zone skew at most 1.
func constraintMix(scale float64) *workload {
	nodes, pods := scaled(1000, scale), scaled(5500, scale)
	return &workload{
		name: "ConstraintMix",
		description: fmt.Sprintf("%d nodes in 3 zones, no initial pods, then %d measured pods (100m cpu, 500Mi) cycling through no constraint, "+
			"a preferred anti-affinity (weight 100) on kubernetes.io/hostname and a DoNotSchedule spread over the zones (maxSkew 1), "+
			"with every tenth pod instead a required anti-affinity on kubernetes.io/hostname, each among the pods of its own app label: issue 31's constraint mix",
			nodes, pods),
		nodes: nodes, node: node, zones: threeZones, allSchedulable: true,
		init:     func(context.Context, *run) error { return nil },
		measured: pods,
		create: func(ctx context.Context, r *run) error {
			return r.create(ctx, phaseMeasured, pods, func(i int) podSpec { return mixSpecs[mixApp(i)] })
		},
		timeout: 10 * time.Minute,
		verify: func(ctx context.Context, r *run) error {
			return errors.Join(onePerNode(ctx, r, appLabel+"="+mixRequired), zoneSkew(ctx, r, appLabel+"="+mixSpread, threeZones, 1))
		},
	}
}

// createSpreadOwners creates upstream's service.yaml (selector
// app=scheduler-perf) and a ReplicaSet of replicas pods with the same
// selector. No controller runs: the ReplicaSet creates no pods; the
// workload creates them with the ReplicaSet as their controller.
func createSpreadOwners(ctx context.Context, r *run, replicas int) error {
	sel := map[string]string{appLabel: spreadApp}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: spreadOwner, Namespace: r.ns},
		Spec: v1.ServiceSpec{Selector: sel, Ports: []v1.ServicePort{{
			Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8000),
		}}},
	}
	if _, err := r.c.CoreV1().Services(r.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s: %w", spreadOwner, err)
	}
	n := int32(replicas)
	tmpl := makePod(r.ns, "", phaseMeasured, podSpec{cpu: small.cpu, memory: small.memory, labels: sel})
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: spreadOwner, Namespace: r.ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels}, Spec: tmpl.Spec},
		},
	}
	if _, err := r.c.AppsV1().ReplicaSets(r.ns).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ReplicaSet %s: %w", spreadOwner, err)
	}
	return nil
}

// placements returns the nodes of r's pods that match the label selector
// sel ("color=green"), bound or not ("" for unbound).
func placements(ctx context.Context, r *run, sel string) ([]string, error) {
	l, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the pods %s: %w", sel, err)
	}
	out := make([]string, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].Spec.NodeName
	}
	return out, nil
}

// onePerNode checks a required anti-affinity on hostname among the pods
// matching sel: no node holds two of them.
func onePerNode(ctx context.Context, r *run, sel string) error {
	nodes, err := placements(ctx, r, sel)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if n == "" {
			continue
		}
		if seen[n] {
			return fmt.Errorf("node %s holds two pods %s, which have a required anti-affinity to each other on %s", n, sel, v1.LabelHostname)
		}
		seen[n] = true
	}
	return nil
}

// zoneSkew checks a DoNotSchedule spread constraint over the zones among
// the pods matching sel: their counts per zone (zones without any count 0)
// differ by at most maxSkew.
func zoneSkew(ctx context.Context, r *run, sel string, zones []string, maxSkew int) error {
	placed, err := placements(ctx, r, sel)
	if err != nil {
		return err
	}
	l, err := r.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id})
	if err != nil {
		return fmt.Errorf("list the run's nodes: %w", err)
	}
	zoneOf := make(map[string]string, len(l.Items))
	for i := range l.Items {
		zoneOf[l.Items[i].Name] = l.Items[i].Labels[v1.LabelTopologyZone]
	}
	count := make(map[string]int, len(zones))
	for _, z := range zones {
		count[z] = 0
	}
	for _, n := range placed {
		if n != "" {
			count[zoneOf[n]]++
		}
	}
	lo, hi := math.MaxInt, 0
	for _, k := range count {
		lo, hi = min(lo, k), max(hi, k)
	}
	if hi-lo > maxSkew {
		return fmt.Errorf("pods %s per zone %v: skew %d > maxSkew %d", sel, count, hi-lo, maxSkew)
	}
	return nil
}
