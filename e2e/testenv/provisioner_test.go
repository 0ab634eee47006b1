package testenv_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestProvisioner: the test provisioner creates a volume for a claim of its
// class once the claim names a node (selected-node), on that node (its
// hostname label), pre-bound to the claim, and nothing for a claim without
// a node or of another provisioner's class; it deletes a volume it made
// once Released with reclaim policy Delete. No scheduler or PV binder runs:
// the test writes selected-node and the Released phase itself.
func TestProvisioner(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ctx := ctxFor(t)
	ns := env.Namespace(t)
	// A node whose hostname label differs from its name, as on clouds
	// where the name is a FQDN.
	_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: "node-a.example", Labels: map[string]string{corev1.LabelHostname: "node-a"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, prov := range map[string]string{"ours": testenv.ProvisionerName, "theirs": "example.com/other"} {
		mode := storagev1.VolumeBindingWaitForFirstConsumer
		_, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: prov, VolumeBindingMode: &mode,
			MountOptions: []string{"noatime"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	var errs []error
	p, err := env.StartProvisioner(ctx, testenv.ProvisionerOptions{OnError: func(err error) { errs = append(errs, err) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)

	claim := func(name, class string, node string) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				StorageClassName: ptr.To(class),
				VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}},
			},
		}
		if node != "" {
			pvc.Annotations = map[string]string{volume.AnnSelectedNode: node}
		}
		out, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	unselected := claim("unselected", "ours", "")
	claim("theirs", "theirs", "node-a.example")
	selected := claim("selected", "ours", "node-a.example")

	name := "pvc-" + string(selected.UID)
	var pv *corev1.PersistentVolume
	// Wait on the provisioner's record, not on the volume: the record is
	// written after the Create returns, so a volume seen first could race it.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return slices.Contains(p.Provisioned(), name), nil
	})
	if err != nil {
		t.Fatalf("no volume %s provisioned for claim selected (provisioned %v): %v", name, p.Provisioned(), err)
	}
	if pv, err = c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("volume %s for claim selected: %v", name, err)
	}
	if got := pv.Annotations[volume.AnnDynamicallyProvisioned]; got != testenv.ProvisionerName {
		t.Errorf("%s=%q, want %q", volume.AnnDynamicallyProvisioned, got, testenv.ProvisionerName)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(resource.MustParse("5Gi")) != 0 {
		t.Errorf("capacity %s, want the claim's 5Gi", q.String())
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != ns || ref.Name != "selected" || ref.UID != selected.UID {
		t.Errorf("claimRef %+v, want %s/selected uid %s", ref, ns, selected.UID)
	}
	if pv.Spec.StorageClassName != "ours" || !slices.Equal(pv.Spec.AccessModes, selected.Spec.AccessModes) ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.Local == nil ||
		!slices.Equal(pv.Spec.MountOptions, []string{"noatime"}) || ptr.Deref(pv.Spec.VolumeMode, "") != corev1.PersistentVolumeFilesystem {
		t.Errorf("volume spec %+v: want class ours, the claim's access and volume modes, reclaim Delete, a local source, the class's mount options", pv.Spec)
	}
	terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || terms[0].MatchExpressions[0].Key != corev1.LabelHostname ||
		!slices.Equal(terms[0].MatchExpressions[0].Values, []string{"node-a"}) {
		t.Errorf("node affinity %+v, want %s In [node-a] (the node's hostname label)", terms, corev1.LabelHostname)
	}

	// Nothing for the claim without a node nor for another provisioner's.
	// (The provisioner handles its queue in order, and the selected claim
	// came last.)
	if got := p.Provisioned(); !slices.Equal(got, []string{name}) {
		t.Errorf("provisioned %v, want only %s (not for claim unselected %s, nor for claim theirs)", got, name, unselected.UID)
	}

	// Released (the claim gone, as the PV binder would mark it): deleted.
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := c.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		// The pv-protection finalizer stays: no controller lifts it here.
		return err == nil && got.DeletionTimestamp != nil, err
	})
	if err != nil {
		t.Fatalf("released volume %s not deleted: %v", name, err)
	}
	p.Stop()
	if len(errs) > 0 {
		t.Errorf("provisioner errors: %v", errs)
	}
}
