package policyapi

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/abi"
)

func obj(name string, created int64, profile, slot string) *SchedulingPolicy {
	p := New(name, Spec{Profile: profile, Slot: slot, Module: Module{Inline: []byte{0, 'a', 's', 'm'}}})
	p.CreationTimestamp = metav1.Unix(created, 0)
	return p
}

func shadow(p *SchedulingPolicy) *SchedulingPolicy {
	p.Spec.Mode = ModeShadow
	return p
}

func TestHolders(t *testing.T) {
	deleted := obj("a-deleted", 1, "", "queueSort")
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Unix(5, 0)}
	invalid := obj("a-invalid", 1, "", "queueSort")
	invalid.Spec.Module.Inline = nil
	objs := []*SchedulingPolicy{
		obj("young", 20, "", "queueSort"),
		obj("old-b", 10, "wasmsched", "queueSort"), // the default profile, named
		obj("old-a", 10, "", "queueSort"),          // same second: the name decides
		deleted, invalid,
		obj("fifo-profile", 30, "other", "queueSort"),
		obj("victims", 40, "", "victimOrder"),
		shadow(obj("shadow-old", 1, "", "queueSort")),
		shadow(obj("shadow-young", 50, "", "queueSort")),
		shadow(obj("shadow-hint", 60, "", "queueingHint")),
	}
	got := map[string]string{}
	for k, p := range Holders(objs, "wasmsched", false) {
		got[k.String()] = p.Name
	}
	shadows := map[string]string{}
	for k, p := range Holders(objs, "wasmsched", true) {
		shadows[k.String()] = p.Name
	}
	// A Shadow never holds the slot and an active object never shadows it:
	// each mode has its own holder, the oldest of that mode.
	if diff := cmp.Diff(map[string]string{"wasmsched/queueSort": "shadow-old", "wasmsched/queueingHint": "shadow-hint"}, shadows); diff != "" {
		t.Errorf("Holders of shadows (-want, +got):\n%s", diff)
	}
	want := map[string]string{
		"wasmsched/queueSort":   "old-a",
		"other/queueSort":       "fifo-profile",
		"wasmsched/victimOrder": "victims",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Holders (-want, +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	ok := Spec{Slot: "queueSort", Module: Module{Inline: []byte{1}}}
	for _, tc := range []struct {
		name string
		mod  func(*Spec)
		want string // "" valid
	}{
		{"inline", func(*Spec) {}, ""},
		{"configMap", func(s *Spec) { s.Module = Module{ConfigMapRef: &ConfigMapKeyRef{Name: "m", Key: "k"}} }, ""},
		{"both", func(s *Spec) { s.Module.ConfigMapRef = &ConfigMapKeyRef{Name: "m", Key: "k"} }, "not both"},
		{"neither", func(s *Spec) { s.Module = Module{} }, "exactly one of inline and configMapRef"},
		{"ref without key", func(s *Spec) { s.Module = Module{ConfigMapRef: &ConfigMapKeyRef{Name: "m"}} }, "set both name and key"},
		{"slot", func(s *Spec) { s.Slot = "placement" }, `spec.slot "placement": want one of queueSort`},
		{"failurePolicy on a queue slot", func(s *Spec) { s.FailurePolicy = "Fail" }, `spec.failurePolicy: only the placement slots`},
		{"shadow", func(s *Spec) { s.Mode = ModeShadow; s.Shadow = &ShadowSpec{SampleRate: "0.25"} }, ""},
		{"active", func(s *Spec) { s.Mode = ModeActive }, ""},
		{"mode", func(s *Spec) { s.Mode = "Canary" }, `spec.mode "Canary": want Active or Shadow`},
		{"shadow spec on an active object", func(s *Spec) { s.Shadow = &ShadowSpec{} }, "spec.shadow: only a Shadow has one"},
		{"sample rate", func(s *Spec) { s.Mode = ModeShadow; s.Shadow = &ShadowSpec{SampleRate: "1.5"} }, `spec.shadow.sampleRate: "1.5": want a decimal from 0 to 1`},
		{"failurePolicy unknown", func(s *Spec) { s.Slot, s.FailurePolicy = "filter", "Retry" }, `spec.failurePolicy "Retry": want Fail or Ignore`},
		{"sha", func(s *Spec) { s.SHA256 = strings.Repeat("A", 64) }, "64 lowercase hex digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			err := s.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestUnstructuredRoundTrip: every field survives the conversion both ways,
// inline bytes as base64, and a DeepCopy shares nothing.
func TestUnstructuredRoundTrip(t *testing.T) {
	pages := int32(64)
	p := New("fifo", Spec{Profile: "wasmsched", Slot: abi.SlotQueueSort.String(),
		Module: Module{Inline: []byte("\x00asm\x01\x00\x00\x00")}, SHA256: strings.Repeat("a", 64),
		Sandbox: &Sandbox{MemoryPages: &pages, Deadline: &metav1.Duration{Duration: 50 * time.Millisecond}}})
	p.Generation = 3
	now := metav1.Unix(100, 0)
	p.Status = Status{ObservedGeneration: 3, Digest: strings.Repeat("b", 64),
		Conditions: []metav1.Condition{{Type: ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonLoaded, Message: "m", ObservedGeneration: 3, LastTransitionTime: now}},
		Replicas:   []ReplicaStatus{{Name: "r1", Leader: true, Digest: "d", State: StateServing, BreakerOpen: true, Fallbacks: 7, ObservedGeneration: 3, LastUpdateTime: now, Message: "x"}}}
	u, err := ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Object["spec"].(map[string]any)["module"].(map[string]any)["inline"]; got != "AGFzbQEAAAA=" {
		t.Errorf("inline is %v, want base64", got)
	}
	back, err := FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("round trip (-want, +got):\n%s", diff)
	}
	cp := p.DeepCopy()
	cp.Spec.Module.Inline[0] = 'X'
	*cp.Spec.Sandbox.MemoryPages = 1
	cp.Status.Replicas[0].Name = "changed"
	cp.Status.Conditions[0].Reason = "changed"
	if diff := cmp.Diff(back, p); diff != "" {
		t.Errorf("DeepCopy shares with the original (-want, +got):\n%s", diff)
	}
}
