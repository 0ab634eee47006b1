package queue

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
)

// TestDRAEventsMovePods: the queue with the built-in hints module moves a
// pod rejected by DynamicResources on an event about its claim, every such
// pod when a claim is deallocated, and a pod whose generated claim got
// named by its own update; with the native default every rejected pod
// moves on a claim event. The events are labelled as upstream's.
func TestDRAEventsMovePods(t *testing.T) {
	m := loadBuiltin(t, abi.SlotQueueingHint)
	hint, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, newSlotRecorder(t))
	if err != nil {
		t.Fatal(err)
	}
	withClaim := func(name, claim string) *v1.Pod {
		p := makePod(name).obj()
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new(claim)}}
		return p
	}
	claim := func(name string, allocated bool) *resourceapi.ResourceClaim {
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		if allocated {
			c.Status.Allocation = &resourceapi.AllocationResult{}
		}
		return c
	}
	event := func(act abi.ActionType, old, new any) abi.Event {
		t.Helper()
		ev, ok := podview.StorageEvent(act, old, new)
		if !ok {
			t.Fatal("no event for a claim")
		}
		return ev
	}
	for _, tc := range []struct {
		name  string
		opts  []Option
		ev    abi.Event
		label string
		want  map[string]string
	}{
		{"hints.wasm, the pod's claim added", []Option{WithQueueingHint(hint)}, event(abi.ActionAdd, nil, claim("gpu-0", false)),
			"resource.k8s.io/ResourceClaimAdd", map[string]string{"uses": "backoff", "other": "unschedulable", "fit": "unschedulable"}},
		{"hints.wasm, a claim deallocated", []Option{WithQueueingHint(hint)},
			event(abi.ActionUpdateOther, claim("gpu-9", true), claim("gpu-9", false)),
			"resource.k8s.io/ResourceClaimUpdate", map[string]string{"uses": "backoff", "other": "backoff", "fit": "unschedulable"}},
		{"AlwaysQueue", nil, event(abi.ActionAdd, nil, claim("gpu-0", false)),
			"resource.k8s.io/ResourceClaimAdd", map[string]string{"uses": "backoff", "other": "backoff", "fit": "backoff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts...)
			e.failOnce(t, withClaim("uses", "gpu-0"), rejectedBy(abi.PluginDynamicResources))
			e.failOnce(t, withClaim("other", "gpu-1"), rejectedBy(abi.PluginDynamicResources))
			e.failOnce(t, withClaim("fit", "gpu-0"), rejectedBy(abi.PluginNodeResourcesFit))
			e.q.MoveOnEvent(tc.ev)
			moved := 0
			for name, want := range tc.want {
				if got := e.where(types.UID("uid-" + name)); got != want {
					t.Errorf("%s is %s, want %s", name, got, want)
				}
				if want == "backoff" {
					moved++
				}
			}
			if got := e.rec.incomingOf("backoff", tc.label); got != moved {
				t.Errorf("incoming pods labelled %s: %d, want %d", tc.label, got, moved)
			}
			e.check(t)
		})
	}

	t.Run("hints.wasm, generated claim named", func(t *testing.T) { generatedClaimNamed(t, WithQueueingHint(hint)) })
	t.Run("AlwaysQueue, generated claim named", func(t *testing.T) { generatedClaimNamed(t) })
}

// generatedClaimNamed: two pods wait for the claims of their templates;
// the one whose status names its claim moves, the other stays.
func generatedClaimNamed(t *testing.T, opts ...Option) {
	e := newEnv(t, opts...)
	tmpl := makePod("tmpl").obj()
	tmpl.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: new("gpu-template")}}
	other := tmpl.DeepCopy()
	other.Name, other.UID = "waiting", "uid-waiting"
	e.failOnce(t, tmpl, rejectedBy(abi.PluginDynamicResources))
	e.failOnce(t, other, rejectedBy(abi.PluginDynamicResources))
	named := tmpl.DeepCopy()
	named.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: new("tmpl-gpu-x7k2p")}}
	e.q.Update(tmpl, named)
	if got := e.where("uid-tmpl"); got != "backoff" {
		t.Errorf("tmpl is %s, want backoff", got)
	}
	if got := e.where("uid-waiting"); got != "unschedulable" {
		t.Errorf("waiting is %s, want unschedulable", got)
	}
	e.check(t)
}

// TestNativePreEnqueue: a pod the native PreEnqueue (DynamicResources'
// wait for its claim) holds back is gated before the slot is asked, moves
// on an event DynamicResources registered that the hint queues (its claim
// added) and is admitted once the native check passes; other pods never see
// the gate.
func TestNativePreEnqueue(t *testing.T) {
	m := loadBuiltin(t, abi.SlotQueueingHint)
	hint, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, newSlotRecorder(t))
	if err != nil {
		t.Fatal(err)
	}
	pe := &countingPreEnqueue{inner: policy.Admit{}}
	e := newEnv(t, WithQueueingHint(hint), WithPreEnqueue(pe))
	claimed := false
	e.q.SetNativePreEnqueue(func(p *v1.Pod) abi.Gate {
		if len(p.Spec.ResourceClaims) == 0 || claimed {
			return abi.Gate{}
		}
		return abi.Gate{Code: abi.GateWait, Plugin: abi.PluginDynamicResources, Reason: "waiting for gpu-0"}
	})
	p := makePod("p").obj()
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: new("gpu-0")}}
	e.q.Add(p)
	e.q.Add(makePod("plain").obj())
	if got := e.where("uid-p"); got != "gated" {
		t.Fatalf("the pod waiting for its claim is %s, want gated", got)
	}
	if got := e.where("uid-plain"); got != "active" {
		t.Fatalf("the pod without claims is %s, want active", got)
	}
	if pe.count("p") != 0 {
		t.Error("the PreEnqueue slot was asked about a pod the native PreEnqueue held back")
	}
	other := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu-1"}}
	ev, _ := podview.StorageEvent(abi.ActionAdd, nil, other)
	e.q.MoveOnEvent(ev)
	if got := e.where("uid-p"); got != "gated" {
		t.Fatalf("after another claim's Add the pod is %s, want gated", got)
	}
	claimed = true
	mine := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu-0"}}
	ev, _ = podview.StorageEvent(abi.ActionAdd, nil, mine)
	e.q.MoveOnEvent(ev)
	if got := e.where("uid-p"); got == "gated" || got == "unschedulable" {
		t.Fatalf("after its claim's Add the pod is %s, want it on its way to activeQ", got)
	}
	if pe.count("p") != 1 {
		t.Errorf("PreEnqueue slot calls = %d, want 1 (once the native check passed)", pe.count("p"))
	}
	e.check(t)
}
