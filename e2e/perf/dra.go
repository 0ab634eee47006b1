package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The Dynamic Resource Allocation workload (issue 16), modelled on
// scheduler_perf's dra/ SchedulingWithResourceClaimTemplate of
// k8s.io/kubernetes v1.37.1 in its 2000pods_200nodes variant: 200 nodes,
// each publishing one ResourceSlice of 10 devices (upstream's
// resourceslice-basic-devices.yaml: its driver and attributes), one
// DeviceClass selecting the driver by CEL, 1000 claims allocated before
// the measured phase (upstream's allocResourceClaims), then 1000 measured
// pods, each with a claim for one device from a ResourceClaimTemplate: the
// resource claim controller of kube-controller-manager (running for these
// runs only) creates each pod's claim, and the scheduler allocates it. The
// 2000 claims take every device, so the last pods search for the last free
// ones. The differences from upstream:
//   - one namespace per run instead of init and test;
//   - the pods request 100m/500Mi like every other pod here (upstream's
//     pod-with-claim-template.yaml requests nothing);
//   - the initial claims are allocated round-robin over the nodes
//     (node i mod nodes, its next free device) by writing their status,
//     not by running the allocator;
//   - the DeviceClass is named after the run (the slices are labelled with
//     it), so that a run's cluster-scoped objects go with it.
//
// Every pod fits, so the workload sets allSchedulable; after the measured
// phase every claim is checked to be allocated on its pod's node, reserved
// for it, and no device to be allocated twice: a scheduler that ignores
// the claims fails instead of looking fast.

// Upstream's driver, devices per slice, claim template name.
const (
	perfDriver        = "test-driver.cdi.k8s.io"
	perfDevices       = 10
	perfClaimTemplate = "test-claim-template"
	perfPodClaim      = "resource"
)

// draControllers are the kube-controller-manager controllers the DRA
// workload needs: the resource claim controller creates the pods' claims
// from the template.
var draControllers = []string{"resourceclaim-controller"}

func draWorkloads(scale float64) []*workload {
	nodes, initClaims, pods := scaled(200, scale), scaled(1000, scale), scaled(1000, scale)
	devices := max(perfDevices, (initClaims+pods+nodes-1)/nodes) // rounding at small scales
	return []*workload{{
		name: "SchedulingWithResourceClaimTemplate",
		description: fmt.Sprintf("%d nodes each publishing %d devices (one ResourceSlice), %d claims allocated beforehand, then %d measured pods (100m cpu, 500Mi) each with a claim for one device from a ResourceClaimTemplate (created by kube-controller-manager's resource claim controller), as scheduler_perf's dra/SchedulingWithResourceClaimTemplate/2000pods_200nodes",
			nodes, devices, initClaims, pods),
		nodes: nodes, node: node,
		allSchedulable: true,
		controllers:    draControllers,
		init: func(ctx context.Context, r *run) error {
			return draInit(ctx, r, devices, initClaims)
		},
		measured: pods,
		create: func(ctx context.Context, r *run) error {
			return createPods(ctx, r.c, pods, func(i int) *v1.Pod {
				p := makePod(r.ns, phaseMeasured+"-"+strconv.Itoa(i), phaseMeasured, small)
				p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: perfPodClaim, ResourceClaimTemplateName: ptr.To(perfClaimTemplate)}}
				p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: perfPodClaim}}
				return p
			})
		},
		timeout:   10 * time.Minute,
		verify:    devicesOnTheirNodes,
		cleanup:   deleteDevices,
		noCeiling: "a scheduler also writes each claim's allocation and reservation there, which a binder does not",
	}}
}

// draClass is the run's DeviceClass.
func draClass(r *run) string { return "perf-gpu-" + r.nodePrefix }

// draInit publishes the devices (one slice per node, its pool named after
// the node), creates the DeviceClass and the template, and n claims
// allocated round-robin over the nodes.
func draInit(ctx context.Context, r *run, devices, n int) error {
	if len(r.nodeNames) == 0 || n > len(r.nodeNames)*devices {
		return fmt.Errorf("%d initial claims for %d nodes of %d devices", n, len(r.nodeNames), devices)
	}
	err := parallel(ctx, len(r.nodeNames), createWorkers, func(ctx context.Context, i int) error {
		s := deviceSlice(r, r.nodeNames[i], devices)
		if _, err := r.c.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create ResourceSlice %s: %w", s.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = r.c.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: draClass(r)},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", perfDriver)},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create DeviceClass: %w", err)
	}
	_, err = r.c.ResourceV1().ResourceClaimTemplates(r.ns).Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: perfClaimTemplate},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: oneDevice(draClass(r))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ResourceClaimTemplate: %w", err)
	}
	return parallel(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		c, err := r.c.ResourceV1().ResourceClaims(r.ns).Create(ctx, &resourcev1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: phaseInit + "-" + strconv.Itoa(i)},
			Spec:       oneDevice(draClass(r)),
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create ResourceClaim: %w", err)
		}
		nodeName := r.nodeNames[i%len(r.nodeNames)]
		c.Status.Allocation = &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
				Request: "req-0", Driver: perfDriver, Pool: nodeName, Device: "basic-device-" + strconv.Itoa(i/len(r.nodeNames)),
			}}},
			NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}}},
			}}},
		}
		if _, err := r.c.ResourceV1().ResourceClaims(r.ns).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("allocate ResourceClaim %s: %w", c.Name, err)
		}
		return nil
	})
}

// oneDevice is upstream's resourceclaimtemplate.yaml with one request.
func oneDevice(class string) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name:    "req-0",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
	}}}}
}

// deviceSlice is upstream's resourceslice-basic-devices.yaml for one node
// (two PCI roots), labelled with the run.
func deviceSlice(r *run, nodeName string, n int) *resourcev1.ResourceSlice {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: ptr.To(s)} }
	devs := make([]resourcev1.Device, n)
	for d := range devs {
		root := strconv.Itoa(d % 2)
		pci := fmt.Sprintf("0000:0%d:00.0", d)
		devs[d] = resourcev1.Device{
			Name: "basic-device-" + strconv.Itoa(d),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"driver":                          str("xe"),
				"driverVersion":                   {VersionValue: ptr.To("1.2.3")},
				"resource.k8s.io/pciRoot":         str(root),
				"family":                          str("Arc Pro B-Series"),
				"health":                          str("Healthy"),
				"model":                           str("B60"),
				"pciAddress":                      str(pci),
				"pciId":                           str("0xe211"),
				"pciRoot":                         str("0" + root),
				"resource.kubernetes.io/pciBusID": str(pci),
				"resource.kubernetes.io/pciRoot":  str("pci0000:0" + root),
				"sriov":                           {BoolValue: ptr.To(true)},
				"type":                            str("gpu"),
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory":     {Value: resource.MustParse("24480Mi")},
				"millicores": {Value: resource.MustParse("1k")},
			},
		}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "perf-" + nodeName, Labels: map[string]string{runLabel: r.id}},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   perfDriver,
			Pool:     resourcev1.ResourcePool{Name: nodeName, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(nodeName),
			Devices:  devs,
		},
	}
}

// devicesOnTheirNodes checks that every measured pod's claim is allocated
// on the pod's node (its pool), reserved for the pod, and that no device
// is allocated to two claims.
func devicesOnTheirNodes(ctx context.Context, r *run) error {
	pods, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: phaseLabel + "=" + phaseMeasured})
	if err != nil {
		return err
	}
	list, err := r.c.ResourceV1().ResourceClaims(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	claims := map[string]*resourcev1.ResourceClaim{}
	owner := map[string]string{} // pool/device -> claim
	var errs []error
	for i := range list.Items {
		c := &list.Items[i]
		claims[c.Name] = c
		if c.Status.Allocation == nil {
			continue
		}
		for _, d := range c.Status.Allocation.Devices.Results {
			key := d.Pool + "/" + d.Device
			if other, dup := owner[key]; dup {
				errs = append(errs, fmt.Errorf("device %s allocated to claims %s and %s", key, other, c.Name))
			}
			owner[key] = c.Name
		}
	}
	for _, p := range pods.Items {
		st := p.Status.ResourceClaimStatuses
		if len(st) != 1 || st[0].ResourceClaimName == nil {
			errs = append(errs, fmt.Errorf("pod %s: resourceClaimStatuses %+v, want its claim's name", p.Name, st))
			continue
		}
		c := claims[*st[0].ResourceClaimName]
		switch {
		case c == nil:
			errs = append(errs, fmt.Errorf("pod %s: claim %s missing", p.Name, *st[0].ResourceClaimName))
		case c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1:
			errs = append(errs, fmt.Errorf("pod %s on %s: claim %s not allocated one device", p.Name, p.Spec.NodeName, c.Name))
		case c.Status.Allocation.Devices.Results[0].Pool != p.Spec.NodeName:
			errs = append(errs, fmt.Errorf("pod %s on %s: claim %s allocated a device of %s", p.Name, p.Spec.NodeName, c.Name, c.Status.Allocation.Devices.Results[0].Pool))
		case len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != p.UID:
			errs = append(errs, fmt.Errorf("pod %s: claim %s reserved for %+v", p.Name, c.Name, c.Status.ReservedFor))
		}
		if len(errs) >= 10 {
			break
		}
	}
	return errors.Join(errs...)
}

// deleteDevices deletes the run's ResourceSlices and DeviceClass (its
// claims and template go with its namespace).
func deleteDevices(ctx context.Context, r *run) error {
	err := r.c.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: runLabel + "=" + r.id})
	if err != nil {
		err = fmt.Errorf("delete ResourceSlices: %w", err)
	}
	if cerr := r.c.ResourceV1().DeviceClasses().Delete(ctx, draClass(r), metav1.DeleteOptions{}); cerr != nil && !apierrors.IsNotFound(cerr) {
		err = errors.Join(err, fmt.Errorf("delete DeviceClass: %w", cerr))
	}
	return err
}
