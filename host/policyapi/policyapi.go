package policyapi

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wasmsched/wasmsched/abi"
)

// FromUnstructured converts what the dynamic informer holds. The
// apiserver has already validated it against the CRD's schema; Validate
// checks what a stale schema might let through.
func FromUnstructured(u *unstructured.Unstructured) (*SchedulingPolicy, error) {
	var p SchedulingPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
		return nil, fmt.Errorf("SchedulingPolicy %s: %w", u.GetName(), err)
	}
	return &p, nil
}

// ToUnstructured converts p for the dynamic client, with its apiVersion and
// kind set.
func ToUnstructured(p *SchedulingPolicy) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind(Kind)
	return u, nil
}

// New returns a SchedulingPolicy with its apiVersion and kind set.
func New(name string, spec Spec) *SchedulingPolicy {
	return &SchedulingPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	}
}

var sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Validate checks the spec as the CRD's schema does: a known slot, exactly
// one module source, a well-formed pin and limits in range.
func (s *Spec) Validate() error {
	var errs []error
	slot, ok := abi.ParseSlot(s.Slot)
	if !ok {
		errs = append(errs, fmt.Errorf("spec.slot %q: want one of %s", s.Slot, abi.SlotNames()))
	}
	switch {
	case s.FailurePolicy == "":
	case ok && !slot.Placement():
		errs = append(errs, fmt.Errorf("spec.failurePolicy: only the placement slots (filter, score) have one, not %s: remove it", s.Slot))
	case s.FailurePolicy != "Fail" && s.FailurePolicy != "Ignore":
		errs = append(errs, fmt.Errorf("spec.failurePolicy %q: want Fail or Ignore", s.FailurePolicy))
	}
	switch s.Mode {
	case "", ModeActive:
		if s.Shadow != nil {
			errs = append(errs, errors.New("spec.shadow: only a Shadow has one: set spec.mode: Shadow, or remove spec.shadow"))
		}
	case ModeShadow:
		if s.Shadow != nil && s.Shadow.SampleRate != "" {
			if _, err := ParseSampleRate(s.Shadow.SampleRate); err != nil {
				errs = append(errs, fmt.Errorf("spec.shadow.sampleRate: %w", err))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("spec.mode %q: want Active or Shadow", s.Mode))
	}
	switch {
	case len(s.Module.Inline) > 0 && s.Module.ConfigMapRef != nil:
		errs = append(errs, errors.New("spec.module: set exactly one of inline and configMapRef, not both"))
	case len(s.Module.Inline) == 0 && s.Module.ConfigMapRef == nil:
		errs = append(errs, errors.New("spec.module: set exactly one of inline and configMapRef"))
	case s.Module.ConfigMapRef != nil && (s.Module.ConfigMapRef.Name == "" || s.Module.ConfigMapRef.Key == ""):
		errs = append(errs, errors.New("spec.module.configMapRef: set both name and key"))
	}
	if s.SHA256 != "" && !sha256Pattern.MatchString(s.SHA256) {
		errs = append(errs, fmt.Errorf("spec.sha256 %q: want 64 lowercase hex digits (sha256sum FILE prints them)", s.SHA256))
	}
	return errors.Join(errs...)
}

// ParseSampleRate reads a sample rate: a decimal from 0 to 1.
func ParseSampleRate(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 || f != f {
		return 0, fmt.Errorf("%q: want a decimal from 0 to 1, e.g. \"0.25\"", s)
	}
	return f, nil
}

// SampleRate is the spec's sample rate, or def when it sets none.
func (s *Spec) SampleRate(def float64) float64 {
	if s.Shadow == nil || s.Shadow.SampleRate == "" {
		return def
	}
	f, err := ParseSampleRate(s.Shadow.SampleRate)
	if err != nil {
		return def
	}
	return f
}

// SlotKey is one slot of one profile.
type SlotKey struct {
	Profile string // the scheduler name, never "" (see Holders)
	Slot    abi.Slot
}

func (k SlotKey) String() string { return k.Profile + "/" + k.Slot.String() }

// Key is the slot p asks for, with an empty profile read as defaultProfile;
// false when the slot is unknown.
func (p *SchedulingPolicy) Key(defaultProfile string) (SlotKey, bool) {
	slot, ok := abi.ParseSlot(p.Spec.Slot)
	prof := p.Spec.Profile
	if prof == "" {
		prof = defaultProfile
	}
	return SlotKey{Profile: prof, Slot: slot}, ok
}

// Older orders objects for the same slot: the earlier creation time first,
// then the name (creation times have one-second resolution).
func Older(a, b *SchedulingPolicy) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// Holders picks, for every slot some object of the given mode asks for
// (shadow: Mode Shadow; else Active), the object that holds it: the oldest
// (Older). The others of that mode for the same slot are refused with
// reason Conflict; a slot has one active holder and at most one shadow.
// Objects that are being deleted or whose spec is invalid hold nothing.
func Holders(objs []*SchedulingPolicy, defaultProfile string, shadow bool) map[SlotKey]*SchedulingPolicy {
	sorted := slices.SortedFunc(slices.Values(objs), Older)
	out := map[SlotKey]*SchedulingPolicy{}
	for _, p := range sorted {
		if p.DeletionTimestamp != nil || p.Spec.Validate() != nil || p.Spec.IsShadow() != shadow {
			continue
		}
		k, _ := p.Key(defaultProfile)
		if _, taken := out[k]; !taken {
			out[k] = p
		}
	}
	return out
}

// Condition returns the Accepted condition in conds, or nil.
func Condition(conds []metav1.Condition) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == ConditionAccepted {
			return &conds[i]
		}
	}
	return nil
}
