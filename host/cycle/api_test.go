package cycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/host/cycle"
)

// listerOf is a pod lister over an informer store holding pods.
func listerOf(t *testing.T, pods ...*v1.Pod) corelisters.PodLister {
	t.Helper()
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(idx)
}

// actions lists a fake clientset's actions as "verb resource/subresource".
func actions(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetSubresource())
	}
	return out
}

func TestAPIBind(t *testing.T) {
	pod := makePod("p").obj()
	client := fake.NewClientset(pod)
	api := cycle.NewAPI(client, listerOf(t, pod))

	if err := api.Bind(context.Background(), pod, "n1"); err != nil {
		t.Fatalf("Bind: %v", err)
	}

	if diff := cmp.Diff([]string{"create pods/binding"}, actions(client)); diff != "" {
		t.Fatalf("actions (-want, +got):\n%s", diff)
	}
	got := client.Actions()[0].(k8stesting.CreateAction).GetObject()
	want := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: "n1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("binding (-want, +got):\n%s", diff)
	}
	if ns := client.Actions()[0].GetNamespace(); ns != "default" {
		t.Errorf("binding created in namespace %q", ns)
	}
}

func TestAPIBindReturnsTheServersError(t *testing.T) {
	pod := makePod("p").obj()
	client := fake.NewClientset(pod)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, "p", errors.New("already bound"))
	})
	err := cycle.NewAPI(client, listerOf(t, pod)).Bind(context.Background(), pod, "n1")
	if !apierrors.IsConflict(err) {
		t.Errorf("Bind: %v, want the Conflict", err)
	}
}

func TestAPICurrent(t *testing.T) {
	pod := makePod("p").obj()
	api := cycle.NewAPI(fake.NewClientset(), listerOf(t, pod))
	got, ok := api.Current("default", "p")
	if !ok || got.UID != pod.UID {
		t.Errorf("Current(default/p) = %v, %v; want the informer's pod", got, ok)
	}
	if got, ok := api.Current("default", "gone"); ok {
		t.Errorf("Current(default/gone) = %v, true; want false", got)
	}
	if got, ok := api.Current("other", "p"); ok {
		t.Errorf("Current(other/p) = %v, true; want false", got)
	}
}

func TestAPISetCondition(t *testing.T) {
	then := metav1.NewTime(t0.Add(-time.Hour))
	now := metav1.NewTime(t0)
	cond := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: now}
	withCond := func(c v1.PodCondition) *v1.Pod {
		p := makePod("p").obj()
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, c}
		return p
	}
	old := cond
	old.LastTransitionTime = then
	otherMessage := old
	otherMessage.Message = "0/1 nodes are available: 1 node(s) were unschedulable."
	otherStatus := old
	otherStatus.Status, otherStatus.Reason, otherStatus.Message = v1.ConditionTrue, "", ""

	tests := []struct {
		name string
		// informer is what the lister shows; pod is what the cycle passes.
		informer, pod *v1.Pod
		// server is what the clientset holds (nil: nothing).
		server *v1.Pod
		// reactor, if set, answers the patch.
		reactor   k8stesting.ReactionFunc
		wantPatch *v1.PodCondition // nil: no patch
		wantErr   func(error) bool // nil: no error
	}{{
		name:      "no condition yet",
		informer:  makePod("p").obj(),
		pod:       makePod("p").obj(),
		server:    makePod("p").obj(),
		wantPatch: &cond,
	}, {
		name:     "the same condition: no patch",
		informer: withCond(old),
		pod:      makePod("p").obj(),
		server:   withCond(old),
	}, {
		name:     "not in the informer: the cycle's copy already has it",
		informer: nil,
		pod:      withCond(old),
		server:   withCond(old),
	}, {
		name:     "the informer is newer than the cycle's copy",
		informer: withCond(old),
		pod:      withCond(otherMessage),
		server:   withCond(old),
	}, {
		name:     "another message: patched, the transition time kept",
		informer: withCond(otherMessage),
		pod:      makePod("p").obj(),
		server:   withCond(otherMessage),
		wantPatch: func() *v1.PodCondition {
			c := cond
			c.LastTransitionTime = then
			return &c
		}(),
	}, {
		name:      "another status: patched with a new transition time",
		informer:  withCond(otherStatus),
		pod:       makePod("p").obj(),
		server:    withCond(otherStatus),
		wantPatch: &cond,
	}, {
		name:      "the informer shows a new pod of the same name: the cycle's copy counts",
		informer:  withCond(old),
		pod:       makePod("p").uid("uid-old").obj(),
		server:    makePod("p").uid("uid-old").obj(),
		wantPatch: &cond,
	}, {
		name:      "the pod is gone: NotFound is not an error",
		informer:  makePod("p").obj(),
		pod:       makePod("p").obj(),
		server:    nil,
		wantPatch: &cond,
	}, {
		name:      "the pod was replaced: Conflict is not an error",
		informer:  makePod("p").obj(),
		pod:       makePod("p").obj(),
		server:    makePod("p").obj(),
		wantPatch: &cond,
		reactor: func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("uid mismatch"))
		},
	}, {
		name:      "a server error is returned",
		informer:  makePod("p").obj(),
		pod:       makePod("p").obj(),
		server:    makePod("p").obj(),
		wantPatch: &cond,
		reactor: func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
		},
		wantErr: apierrors.IsInternalError,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			if tt.server != nil {
				objs = append(objs, tt.server)
			}
			client := fake.NewClientset(objs...)
			if tt.reactor != nil {
				client.PrependReactor("patch", "pods", tt.reactor)
			}
			var informer []*v1.Pod
			if tt.informer != nil {
				informer = append(informer, tt.informer)
			}
			api := cycle.NewAPI(client, listerOf(t, informer...))

			err := api.SetCondition(context.Background(), tt.pod, cond)

			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("SetCondition: %v", err)
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Errorf("SetCondition: %v, want a matching error", err)
			}
			var patches []k8stesting.PatchAction
			for _, a := range client.Actions() {
				if p, ok := a.(k8stesting.PatchAction); ok {
					patches = append(patches, p)
				}
			}
			if tt.wantPatch == nil {
				if len(patches) != 0 {
					t.Errorf("%d patches, want none: %s", len(patches), patches[0].GetPatch())
				}
				return
			}
			if len(patches) != 1 {
				t.Fatalf("%d patches, want 1 (actions %v)", len(patches), actions(client))
			}
			p := patches[0]
			if p.GetSubresource() != "status" || p.GetPatchType() != types.StrategicMergePatchType || p.GetName() != "p" {
				t.Errorf("patch of %s/%s with %s, want a strategic merge patch of p/status",
					p.GetName(), p.GetSubresource(), p.GetPatchType())
			}
			var body struct {
				Metadata struct {
					UID types.UID `json:"uid"`
				} `json:"metadata"`
				Status struct {
					Conditions []v1.PodCondition `json:"conditions"`
				} `json:"status"`
			}
			if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
				t.Fatalf("patch %s: %v", p.GetPatch(), err)
			}
			if body.Metadata.UID != tt.pod.UID {
				t.Errorf("patch guarded by uid %q, want the cycle's pod's %q", body.Metadata.UID, tt.pod.UID)
			}
			if diff := cmp.Diff([]v1.PodCondition{*tt.wantPatch}, body.Status.Conditions); diff != "" {
				t.Errorf("patched conditions (-want, +got):\n%s", diff)
			}
			if tt.reactor != nil || tt.server == nil {
				return
			}
			// The patch merges into the conditions by type.
			got, err := client.CoreV1().Pods("default").Get(context.Background(), "p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []v1.PodCondition{*tt.wantPatch}
			if len(tt.server.Status.Conditions) > 0 {
				want = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, *tt.wantPatch}
			}
			if diff := cmp.Diff(want, got.Status.Conditions); diff != "" {
				t.Errorf("conditions on the server (-want, +got):\n%s", diff)
			}
		})
	}
}
