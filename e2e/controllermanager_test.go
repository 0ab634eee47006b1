package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestControllerManager: with upstream kube-controller-manager v1.37.1
// running on the test control plane (testenv.StartControllerManager), the
// controllers the volume scenarios of issue 15 rely on do their part. No
// scheduler runs: these are the control plane's own steps.
func TestControllerManager(t *testing.T) {
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	cm, err := env.StartControllerManager(ctx, testenv.ControllerManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-controller-manager log (tail of %s):\n%s", cm.LogPath(), cm.Tail(100))
		}
	})
	t.Logf("kube-controller-manager ready on %s", cm.Addr)

	const class = "kcm-immediate"
	_, err = c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: class},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The PV binder binds an Immediate claim to the one pre-created PV that
	// matches it: same class, enough capacity. The other two stay
	// Available: one is too small, one has another class.
	t.Run("pv binder", func(t *testing.T) {
		ns := env.Namespace(t)
		pvs := []string{"kcm-small", "kcm-other-class", "kcm-match"}
		for _, pv := range []*v1.PersistentVolume{
			hostPathPV(pvs[0], class, "512Mi"),
			hostPathPV(pvs[1], "kcm-other", "4Gi"),
			hostPathPV(pvs[2], class, "2Gi"),
		} {
			if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The binder moves new PVs from Pending to Available once it has
		// them in its cache. A claim it syncs before that finds no match
		// and waits for the next resync (--pvclaimbinder-sync-period,
		// 15 s), so the claim comes after.
		for _, name := range pvs {
			waitFor(t, 60*time.Second, "PV "+name+" Available", func() (bool, error) {
				pv, err := c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
				return err == nil && pv.Status.Phase == v1.VolumeAvailable, err
			})
		}
		pvc := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec:       claimSpec(class, "1Gi"),
		}
		if _, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var got *v1.PersistentVolumeClaim
		waitFor(t, 60*time.Second, "claim data Bound", func() (bool, error) {
			got, err = c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
			return err == nil && got.Status.Phase == v1.ClaimBound, err
		})
		if got.Spec.VolumeName != "kcm-match" {
			t.Errorf("claim bound to PV %q, want kcm-match (the only one of class %s with >= 1Gi)", got.Spec.VolumeName, class)
		}
		var pv *v1.PersistentVolume
		waitFor(t, 60*time.Second, "PV kcm-match Bound", func() (bool, error) {
			pv, err = c.CoreV1().PersistentVolumes().Get(ctx, "kcm-match", metav1.GetOptions{})
			return err == nil && pv.Status.Phase == v1.VolumeBound, err
		})
		if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != ns || ref.Name != "data" || ref.UID != got.UID {
			t.Errorf("PV kcm-match claimRef = %+v, want %s/data uid %s", ref, ns, got.UID)
		}
		for _, name := range []string{"kcm-small", "kcm-other-class"} {
			pv, err := c.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pv.Status.Phase != v1.VolumeAvailable || pv.Spec.ClaimRef != nil {
				t.Errorf("PV %s: phase %s, claimRef %+v; want Available and unclaimed", name, pv.Status.Phase, pv.Spec.ClaimRef)
			}
		}
	})

	// The ephemeral-volume controller creates <pod>-<volume> from the
	// pod's template, owned by the pod; the garbage collector deletes it
	// with the pod.
	t.Run("ephemeral volume", func(t *testing.T) {
		ns := env.Namespace(t)
		pod := makePod(ns, "eph", "no-such-scheduler", "")
		pod.Spec.Volumes = []v1.Volume{{
			Name: "scratch",
			VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
				VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"from": "template"}},
					Spec:       claimSpec(class, "3Gi"),
				},
			}},
		}}
		pod = createPod(t, c, pod)
		var pvc *v1.PersistentVolumeClaim
		waitFor(t, 60*time.Second, "claim eph-scratch created", func() (bool, error) {
			pvc, err = c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "eph-scratch", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		})
		owner := metav1.GetControllerOf(pvc)
		if owner == nil || owner.Kind != "Pod" || owner.Name != "eph" || owner.UID != pod.UID {
			t.Errorf("claim eph-scratch controller = %+v, want Pod eph uid %s", owner, pod.UID)
		}
		if got := pvc.Spec.Resources.Requests[v1.ResourceStorage]; got.Cmp(resource.MustParse("3Gi")) != 0 {
			t.Errorf("claim eph-scratch requests %s, want the template's 3Gi", got.String())
		}
		if pvc.Labels["from"] != "template" {
			t.Errorf("claim eph-scratch labels %v, want the template's from=template", pvc.Labels)
		}

		// Never bound to a node, the pod goes at once; its claim follows
		// (garbage collector, then PVC protection lifting its finalizer).
		if err := c.CoreV1().Pods(ns).Delete(ctx, "eph", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 60*time.Second, "claim eph-scratch deleted with its pod", func() (bool, error) {
			_, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "eph-scratch", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})
}

// TestControllerManagerMissingUnderCI: under CI=true a missing
// kube-controller-manager is a clear failure naming the make target that
// builds it, not a build inside the test nor a skip.
func TestControllerManagerMissingUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	dir := t.TempDir()
	_, err := testenv.ControllerManagerBinary(context.Background(), dir, nil)
	if err == nil {
		t.Fatalf("ControllerManagerBinary(%s) under CI=true: no error, want one for the missing binary", dir)
	}
	for _, want := range []string{filepath.Join(dir, "kube-controller-manager"), "make cluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%s has %d entries after the call, want none (nothing built)", dir, len(entries))
	}
}

func hostPathPV(name, class, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				HostPath: &v1.HostPathVolumeSource{Path: "/tmp/wasmsched-e2e/" + name},
			},
		},
	}
}

func claimSpec(class, size string) v1.PersistentVolumeClaimSpec {
	return v1.PersistentVolumeClaimSpec{
		AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		StorageClassName: ptr.To(class),
		Resources: v1.VolumeResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
		},
	}
}
