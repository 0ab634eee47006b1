package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The volume workload (issue 15): pods whose claims use a
// WaitForFirstConsumer StorageClass of static local volumes, the setup of
// local-static-provisioner and of most StatefulSets on local disks.
// scheduler_perf's volume workloads (volumes/performance-config.yaml:
// SchedulingInTreePVs, SchedulingCSIPVs...) give each pod a claim already
// bound to its volume, which only exercises the bound-claim path; here the
// scheduler matches each claim against the volumes available on each
// node, assumes one at reserve, writes its claimRef at pre-bind and binds
// the pod only once kube-controller-manager's PV binder has completed the
// binding, as on a real cluster. Each pod has a claim of its own and there
// is one volume per pod, spread round-robin over the nodes (three per
// node): every claim fits, on the nodes that still have a volume left,
// and the last pods have few such nodes.
//
// Sizes: 200 nodes, 200 initial and 400 measured pods. scheduler_perf's
// SchedulingCSIPVs/500Nodes has 500 nodes and 500+1000 pods, but matching
// WaitForFirstConsumer claims costs upstream (nodes looked at) x
// (volumes available) node-affinity checks per pod, each compiling the
// volume's node selector (about 1.6 us here; three quarters of its CPU in
// a profile of this workload): at that size one upstream run would take
// about 8 minutes on 2 cores, at this one it takes under a minute.
//
// The PV binder is part of every pod's path, for both schedulers alike: it
// syncs one claim at a time, so it bounds the throughput of both. It runs
// with the client limits of the schedulers (clientQPS), and only for this
// workload's runs.

const (
	volumeWorkloadName = "SchedulingWaitForFirstConsumerPVs"
	// volumeClass is the workload's StorageClass (cluster-scoped; kept
	// between runs, which all use it alike).
	volumeClass = "perf-local-wffc"
	// volumeSize is each claim's request and each volume's capacity.
	volumeSize = "1Gi"
)

// pvControllers are the kube-controller-manager controllers the volume
// workload needs: the PV binder and the protection controllers (which
// lift the finalizers the StorageObjectInUseProtection admission plugin
// adds, as on a real cluster).
var pvControllers = []string{
	"persistentvolume-binder-controller",
	"persistentvolume-protection-controller",
	"persistentvolumeclaim-protection-controller",
}

// volumeWorkloads returns the volume workload at scale.
func volumeWorkloads(scale float64) []*workload {
	nodes, initN, measuredN := scaled(200, scale), scaled(200, scale), scaled(400, scale)
	spec := func(phase string) func(i int) podSpec {
		return func(i int) podSpec {
			s := small
			s.claim = phase + "-" + strconv.Itoa(i)
			return s
		}
	}
	return []*workload{{
		name: volumeWorkloadName,
		description: fmt.Sprintf("%d nodes, %d local PersistentVolumes (%s, node affinity to one node each, round-robin) of a WaitForFirstConsumer StorageClass, "+
			"%d initial and %d measured pods (100m cpu, 500Mi) each with its own unbound claim; kube-controller-manager's PV binder completes each binding the scheduler starts, "+
			"and the pod is bound after it (scheduler_perf's SchedulingCSIPVs has claims that come bound)",
			nodes, initN+measuredN, volumeSize, initN, measuredN),
		nodes: nodes, node: node, allSchedulable: true,
		controllers: pvControllers,
		init: func(ctx context.Context, r *run) error {
			if err := createVolumes(ctx, r, initN+measuredN); err != nil {
				return err
			}
			if err := createClaims(ctx, r, phaseInit, initN); err != nil {
				return err
			}
			if err := createClaims(ctx, r, phaseMeasured, measuredN); err != nil {
				return err
			}
			return r.createAndBind(ctx, phaseInit, initN, spec(phaseInit))
		},
		measured: measuredN,
		create: func(ctx context.Context, r *run) error {
			return r.create(ctx, phaseMeasured, measuredN, spec(phaseMeasured))
		},
		timeout:   10 * time.Minute,
		verify:    volumesOnTheirNodes,
		cleanup:   deleteVolumes,
		noCeiling: "a scheduler also writes each claim's selected node and waits for the PV binder there, which a binder does not",
	}}
}

// startControllers runs kube-controller-manager with the given controllers
// and the schedulers' client limits (its default, 20 requests/s, would
// make it the bottleneck of any workload that needs it).
func startControllers(ctx context.Context, env *testenv.Env, controllers []string) (*testenv.ControllerManager, error) {
	cm, err := env.StartControllerManager(ctx, testenv.ControllerManagerOptions{
		Controllers: controllers, Verbosity: 1,
		Args: []string{"--kube-api-qps=" + strconv.Itoa(clientQPS), "--kube-api-burst=" + strconv.Itoa(clientBurst)},
	})
	if err != nil {
		return nil, fmt.Errorf("kube-controller-manager (%v): %w", controllers, err)
	}
	return cm, nil
}

// createVolumes creates the StorageClass if missing and n local volumes,
// volume i on node i mod len(nodes), labelled with the run, and waits until
// the PV binder has made them all Available: the scheduler offers only
// Available volumes to WaitForFirstConsumer claims.
func createVolumes(ctx context.Context, r *run, n int) error {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	_, err := r.c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: volumeClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &mode,
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass %s: %w", volumeClass, err)
	}
	size := resource.MustParse(volumeSize)
	err = parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		nodeName := r.nodeNames[i%len(r.nodeNames)]
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: r.nodePrefix + "-pv-" + strconv.Itoa(i), Labels: map[string]string{runLabel: r.id}},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName:              volumeClass,
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/perf/" + strconv.Itoa(i)}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}}},
				}}}},
			},
		}
		if _, err := r.c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PV %s: %w", pv.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return pollEvery(ctx, time.Minute, 500*time.Millisecond, "the PV binder to make the volumes Available", func() (bool, string, error) {
		l, err := r.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id})
		if err != nil {
			return false, "", err
		}
		avail := 0
		for i := range l.Items {
			if l.Items[i].Status.Phase == v1.VolumeAvailable {
				avail++
			}
		}
		return avail == n, fmt.Sprintf("%d/%d Available", avail, n), nil
	})
}

// createClaims creates the claims <phase>-<i> of the class, one per pod.
func createClaims(ctx context.Context, r *run, phase string, n int) error {
	return parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		pvc := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: phase + "-" + strconv.Itoa(i)},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName: ptr.To(volumeClass),
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(volumeSize)}},
			},
		}
		if _, err := r.c.CoreV1().PersistentVolumeClaims(r.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create claim %s/%s: %w", r.ns, pvc.Name, err)
		}
		return nil
	})
}

// volumesOnTheirNodes checks that every bound pod's claim is Bound to a
// volume of the run whose node affinity names the pod's node, and that no
// volume serves two claims: a scheduler that ignored the volumes' node
// affinity, or bound pods before their claims, fails the run.
func volumesOnTheirNodes(ctx context.Context, r *run) error {
	pods, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the run's pods: %w", err)
	}
	claims, err := r.c.CoreV1().PersistentVolumeClaims(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the run's claims: %w", err)
	}
	pvs, err := r.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id})
	if err != nil {
		return fmt.Errorf("list the run's volumes: %w", err)
	}
	claimByName := make(map[string]*v1.PersistentVolumeClaim, len(claims.Items))
	for i := range claims.Items {
		claimByName[claims.Items[i].Name] = &claims.Items[i]
	}
	nodeOf := make(map[string]string, len(pvs.Items)) // volume -> node
	claimOf := make(map[string]types.UID, len(pvs.Items))
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		nodeOf[pv.Name] = pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0]
		if pv.Spec.ClaimRef != nil {
			claimOf[pv.Name] = pv.Spec.ClaimRef.UID
		}
	}
	var errs []error
	users := map[string]string{} // volume -> pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || len(p.Spec.Volumes) == 0 {
			continue
		}
		name := p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName
		c := claimByName[name]
		switch {
		case c == nil:
			errs = append(errs, fmt.Errorf("pod %s is bound but its claim %s is gone", p.Name, name))
		case c.Spec.VolumeName == "" || c.Status.Phase != v1.ClaimBound:
			errs = append(errs, fmt.Errorf("pod %s is bound to %s but its claim %s is %s (volume %q)", p.Name, p.Spec.NodeName, name, c.Status.Phase, c.Spec.VolumeName))
		case nodeOf[c.Spec.VolumeName] != p.Spec.NodeName:
			errs = append(errs, fmt.Errorf("pod %s is on %s but its volume %s is on %q", p.Name, p.Spec.NodeName, c.Spec.VolumeName, nodeOf[c.Spec.VolumeName]))
		case claimOf[c.Spec.VolumeName] != c.UID:
			errs = append(errs, fmt.Errorf("claim %s names volume %s, whose claimRef is another claim", name, c.Spec.VolumeName))
		case users[c.Spec.VolumeName] != "":
			errs = append(errs, fmt.Errorf("pods %s and %s share volume %s", users[c.Spec.VolumeName], p.Name, c.Spec.VolumeName))
		default:
			users[c.Spec.VolumeName] = p.Name
		}
		if len(errs) >= 5 {
			break
		}
	}
	return errors.Join(errs...)
}

// deleteVolumes deletes the run's volumes. Their pv-protection finalizer
// is cleared first: the protection controller has stopped with the run,
// and nothing else would lift it.
func deleteVolumes(ctx context.Context, r *run) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: runLabel + "=" + r.id}
	l, err := r.c.CoreV1().PersistentVolumes().List(ctx, sel)
	if err != nil {
		return fmt.Errorf("list the run's volumes: %w", err)
	}
	err = parallel(ctx, len(l.Items), createWorkers, func(ctx context.Context, i int) error {
		if len(l.Items[i].Finalizers) == 0 {
			return nil
		}
		_, err := r.c.CoreV1().PersistentVolumes().Patch(ctx, l.Items[i].Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("clear the finalizers of the run's volumes: %w", err)
	}
	if err := r.c.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("delete the run's volumes: %w", err)
	}
	return pollEvery(ctx, 4*time.Minute, 500*time.Millisecond, "the run's volumes to be deleted", func() (bool, string, error) {
		l, err := r.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: sel.LabelSelector, Limit: 1})
		if err != nil {
			return false, "", err
		}
		return len(l.Items) == 0, "volumes left", nil
	})
}

// pollEvery is waitOrFail with its own interval, for conditions that list
// many objects.
func pollEvery(ctx context.Context, timeout, interval time.Duration, what string, cond func() (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, progress, err := cond()
		if err != nil && ctx.Err() == nil {
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
