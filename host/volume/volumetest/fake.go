// Package volumetest gives tests of the volume binder a fake API that keeps
// resourceVersions of PersistentVolumes and PersistentVolumeClaims as the
// API server does: the binder tells its own writes from older versions by
// them, which client-go's fake tracker does not maintain.
package volumetest

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// NewClientset is a fake clientset holding objs whose PV and claim updates
// must carry the stored resourceVersion (else Conflict, as the API server's
// optimistic concurrency) and bump it. Give objects a numeric
// resourceVersion ("1").
func NewClientset(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	for _, res := range []string{"persistentvolumes", "persistentvolumeclaims"} {
		client.PrependReactor("update", res, versionedUpdate(client))
	}
	return client
}

func versionedUpdate(client *fake.Clientset) k8stesting.ReactionFunc {
	return func(action k8stesting.Action) (bool, runtime.Object, error) {
		u := action.(k8stesting.UpdateAction)
		obj := u.GetObject().DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		cur, err := client.Tracker().Get(u.GetResource(), u.GetNamespace(), m.GetName())
		if err != nil {
			return true, nil, err
		}
		cm, err := meta.Accessor(cur)
		if err != nil {
			return true, nil, err
		}
		if cm.GetResourceVersion() != m.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(u.GetResource().GroupResource(), m.GetName(),
				fmt.Errorf("stored version %s, update of %s", cm.GetResourceVersion(), m.GetResourceVersion()))
		}
		n, _ := strconv.Atoi(cm.GetResourceVersion())
		m.SetResourceVersion(strconv.Itoa(n + 1))
		if err := client.Tracker().Update(u.GetResource(), obj, u.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}
