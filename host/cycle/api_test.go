package cycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
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

func TestAPISetPodGroupCondition(t *testing.T) {
	then := metav1.NewTime(t0.Add(-time.Hour))
	scheduled := metav1.Condition{Type: schedv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue,
		Reason: "Scheduled", Message: "3 pods placed", LastTransitionTime: then}
	unschedulable := metav1.Condition{Type: schedv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse,
		Reason: schedv1beta1.PodGroupReasonUnschedulable, Message: "0/2 nodes are available: 2 Insufficient cpu.",
		LastTransitionTime: then}
	group := func(gen int64, conds ...metav1.Condition) *schedv1beta1.PodGroup {
		pg := makePodGroup("g", 3)
		pg.Generation = gen
		for _, c := range conds {
			c.ObservedGeneration = gen
			pg.Status.Conditions = append(pg.Status.Conditions, c)
		}
		return pg
	}
	withGen := func(c metav1.Condition, gen int64) metav1.Condition { c.ObservedGeneration = gen; return c }

	tests := []struct {
		name      string
		pg        *schedv1beta1.PodGroup
		server    bool // the clientset holds pg
		cond      metav1.Condition
		wantPatch *metav1.Condition // nil: no patch
	}{{
		name:      "first condition",
		pg:        group(2),
		server:    true,
		cond:      unschedulable,
		wantPatch: func() *metav1.Condition { c := withGen(unschedulable, 2); return &c }(),
	}, {
		name:   "the same condition: no patch",
		pg:     group(2, unschedulable),
		server: true,
		cond:   unschedulable,
	}, {
		name:      "unschedulable, then scheduled",
		pg:        group(2, unschedulable),
		server:    true,
		cond:      scheduled,
		wantPatch: func() *metav1.Condition { c := withGen(scheduled, 2); return &c }(),
	}, {
		name:   "scheduled is terminal: never back to False",
		pg:     group(2, scheduled),
		server: true,
		cond:   unschedulable,
	}, {
		name:      "the PodGroup is gone: NotFound is not an error",
		pg:        group(2),
		cond:      unschedulable,
		wantPatch: func() *metav1.Condition { c := withGen(unschedulable, 2); return &c }(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			if tt.server {
				objs = append(objs, tt.pg.DeepCopy())
			}
			client := fake.NewClientset(objs...)
			api := cycle.NewAPI(client, listerOf(t))

			if err := api.SetPodGroupCondition(context.Background(), tt.pg, tt.cond); err != nil {
				t.Fatalf("SetPodGroupCondition: %v", err)
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
			if p.GetResource().Resource != "podgroups" || p.GetSubresource() != "status" || p.GetName() != "g" {
				t.Errorf("patch of %s %s/%s, want podgroups g/status", p.GetResource().Resource, p.GetName(), p.GetSubresource())
			}
			var body struct {
				Metadata struct {
					UID types.UID `json:"uid"`
				} `json:"metadata"`
				Status struct {
					Conditions []metav1.Condition `json:"conditions"`
				} `json:"status"`
			}
			if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
				t.Fatalf("patch %s: %v", p.GetPatch(), err)
			}
			if body.Metadata.UID != tt.pg.UID {
				t.Errorf("patch guarded by uid %q, want %q", body.Metadata.UID, tt.pg.UID)
			}
			if diff := cmp.Diff([]metav1.Condition{*tt.wantPatch}, body.Status.Conditions); diff != "" {
				t.Errorf("patched conditions (-want, +got):\n%s", diff)
			}
			if !tt.server {
				return
			}
			got, err := client.SchedulingV1beta1().PodGroups("default").Get(context.Background(), "g", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]metav1.Condition{*tt.wantPatch}, got.Status.Conditions); diff != "" {
				t.Errorf("conditions on the server (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestAPINominate(t *testing.T) {
	pod := makePod("p").obj()
	client := fake.NewClientset(pod)
	api := cycle.NewAPI(client, listerOf(t, pod))
	get := func() string {
		t.Helper()
		p, err := client.CoreV1().Pods("default").Get(context.Background(), "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Status.NominatedNodeName
	}

	if err := api.Nominate(context.Background(), pod, "n1"); err != nil {
		t.Fatalf("Nominate(n1): %v", err)
	}
	if got := get(); got != "n1" {
		t.Errorf("nominatedNodeName %q, want n1", got)
	}
	if err := api.Nominate(context.Background(), pod, ""); err != nil {
		t.Fatalf("Nominate(\"\"): %v", err)
	}
	if got := get(); got != "" {
		t.Errorf("nominatedNodeName %q after clearing it", got)
	}
	if diff := cmp.Diff([]string{"patch pods/status", "get pods/", "patch pods/status", "get pods/"}, actions(client)); diff != "" {
		t.Errorf("actions (-want, +got):\n%s", diff)
	}
	if err := api.Nominate(context.Background(), makePod("gone").obj(), "n1"); err != nil {
		t.Errorf("Nominate of a pod that is gone: %v, want nil", err)
	}
}

func TestAPIEvict(t *testing.T) {
	victim := makePod("victim").obj()
	victim.Spec.NodeName = "n1"
	client := fake.NewClientset(victim)
	var deleted *metav1.DeleteOptions
	client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.DeleteAction).GetDeleteOptions()
		deleted = &opts
		return false, nil, nil
	})
	api := cycle.NewAPI(client, listerOf(t, victim))

	if err := api.Evict(context.Background(), victim, "preempted by default/p on node n1"); err != nil {
		t.Fatalf("Evict: %v", err)
	}

	if diff := cmp.Diff([]string{"patch pods/status", "delete pods/"}, actions(client)); diff != "" {
		t.Fatalf("actions (-want, +got):\n%s", diff)
	}
	var body struct {
		Status struct {
			Conditions []v1.PodCondition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(client.Actions()[0].(k8stesting.PatchAction).GetPatch(), &body); err != nil {
		t.Fatal(err)
	}
	if c := body.Status.Conditions; len(c) != 1 || c[0].Type != v1.DisruptionTarget || c[0].Status != v1.ConditionTrue ||
		c[0].Reason != v1.PodReasonPreemptionByScheduler || c[0].Message != "preempted by default/p on node n1" {
		t.Errorf("condition patched: %+v, want DisruptionTarget=True, PreemptionByScheduler", c)
	}
	if deleted == nil || deleted.Preconditions == nil || deleted.Preconditions.UID == nil || *deleted.Preconditions.UID != victim.UID {
		t.Errorf("delete options %+v, want a precondition on uid %s", deleted, victim.UID)
	}
	if _, err := client.CoreV1().Pods("default").Get(context.Background(), "victim", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the victim is still there (%v)", err)
	}
	// A victim already gone is not an error.
	if err := api.Evict(context.Background(), victim, "again"); err != nil {
		t.Errorf("Evict of a victim already gone: %v", err)
	}
}

// TestAPIBindRequest checks the request Bind sends through a real REST
// client: the typed client's path, no query parameters, the content type the
// configuration names (protobuf when it names none), and the conflict the
// server answers comes back as an error.
func TestAPIBindRequest(t *testing.T) {
	pod := makePod("p").obj()
	for _, tc := range []struct{ configured, want string }{
		{"", "application/vnd.kubernetes.protobuf"},
		{"application/json", "application/json"},
	} {
		t.Run("content type "+tc.want, func(t *testing.T) {
			var got *http.Request
			var body []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, body = r, must(io.ReadAll(r.Body))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusConflict)
				_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
					Status: metav1.StatusFailure, Reason: metav1.StatusReasonConflict, Code: http.StatusConflict})
			}))
			defer srv.Close()
			client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: tc.configured}})

			err := cycle.NewAPI(client, listerOf(t, pod)).Bind(context.Background(), pod, "n1")
			if !apierrors.IsConflict(err) {
				t.Errorf("Bind: %v, want the server's Conflict", err)
			}
			if got == nil {
				t.Fatal("no request reached the server")
			}
			if got.Method != http.MethodPost || got.URL.Path != "/api/v1/namespaces/default/pods/p/binding" || got.URL.RawQuery != "" {
				t.Errorf("request %s %s, want POST /api/v1/namespaces/default/pods/p/binding and no query", got.Method, got.URL)
			}
			if ct := got.Header.Get("Content-Type"); ct != tc.want {
				t.Fatalf("Content-Type %q, want %q", ct, tc.want)
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
			if err != nil {
				t.Fatalf("decode the body: %v", err)
			}
			want := &v1.Binding{
				TypeMeta:   metav1.TypeMeta{Kind: "Binding", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: pod.UID},
				Target:     v1.ObjectReference{Kind: "Node", Name: "n1"},
			}
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("binding (-want, +got):\n%s", diff)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
