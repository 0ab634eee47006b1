package testenv

import (
	"context"
	"fmt"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupProtectionFinalizer is the finalizer kube-apiserver v1.37's
// PodGroupProtection admission plugin (on with GenericWorkload) puts on every
// new PodGroup. Only kube-controller-manager's podgroup-protection
// controller removes it, and that does not run here: ClearPodGroupFinalizers
// and DeleteNamespace lift it.
const PodGroupProtectionFinalizer = "scheduling.k8s.io/podgroup-protection"

// CreatePodGroup creates a scheduling.k8s.io/v1beta1 PodGroup with the gang
// policy and minCount. Pods join it with
// spec.schedulingGroup.podGroupName (core/v1 PodSchedulingGroup).
func (e *Env) CreatePodGroup(ctx context.Context, namespace, name string, minCount int32) (*schedulingv1beta1.PodGroup, error) {
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
			},
		},
	}
	out, err := e.Client.SchedulingV1beta1().PodGroups(namespace).Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create PodGroup %s/%s (minCount %d): %w", namespace, name, minCount, err)
	}
	return out, nil
}

// ClearPodGroupFinalizers removes the finalizers of every PodGroup in
// namespace (all namespaces when empty), so that deleting them completes
// without kube-controller-manager.
func (e *Env) ClearPodGroupFinalizers(ctx context.Context, namespace string) error {
	list, err := e.Client.SchedulingV1beta1().PodGroups(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list PodGroups in %q: %w", namespace, err)
	}
	gvr := schedulingv1beta1.SchemeGroupVersion.WithResource("podgroups")
	for _, pg := range list.Items {
		if len(pg.Finalizers) == 0 {
			continue
		}
		if err := e.clearFinalizers(ctx, gvr, pg.Namespace, pg.Name); err != nil {
			return err
		}
	}
	return nil
}
