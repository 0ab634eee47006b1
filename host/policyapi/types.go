// Package policyapi is the SchedulingPolicy API (wasmsched.io/v1alpha1): a
// cluster-scoped object that puts a policy module in one slot of one
// profile, so that who may change scheduling policy is a question for RBAC,
// every change is in the audit log, and every replica of the scheduler
// loads the same module and says so in the object's status.
//
// The Go types are written by hand and converted from the dynamic
// informer's unstructured objects with runtime.DefaultUnstructuredConverter:
// no code generation, no typed client. deploy/crd.yaml is the schema the
// apiserver enforces; an e2e test round-trips a fully populated object
// through it, so a field the two disagree on is pruned and fails the test.
//
// # Notes
//
//   - Precedence of a slot's module: a SchedulingPolicy, then the
//     configuration file, then the module built into the binary.
//   - Two objects for the same profile and slot: the older one (creation
//     time, then name) holds the slot, the other is refused with reason
//     Conflict (see Holders).
package policyapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API's names.
const (
	Group    = "wasmsched.io"
	Version  = "v1alpha1"
	Kind     = "SchedulingPolicy"
	Resource = "schedulingpolicies"
)

// GroupVersion is wasmsched.io/v1alpha1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// GVR is the resource the informer watches.
var GVR = GroupVersion.WithResource(Resource)

// SchedulingPolicy puts a policy module in one slot of one profile.
type SchedulingPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec"`
	Status Status `json:"status,omitempty"`
}

// Spec is what the object asks for.
type Spec struct {
	// Profile is the scheduler name (a profile of the configuration); empty
	// is the default profile (schedulerName).
	Profile string `json:"profile,omitempty"`
	// Slot is the ABI slot name: queueSort, backoffSort, preEnqueue,
	// queueingHint, victimOrder, filter or score.
	Slot string `json:"slot"`
	// Module is where the module's bytes are.
	Module Module `json:"module"`
	// SHA256 pins the module's content (64 lowercase hex digits): a module
	// with another digest is refused.
	SHA256 string `json:"sha256,omitempty"`
	// Sandbox overrides the configured sandbox limits for this module.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// FailurePolicy is what a placement slot (filter, score) does when the
	// module fails: Fail or Ignore; empty is the slot's default (Fail for
	// the filter, Ignore for the score). Not allowed for the other slots.
	FailurePolicy string `json:"failurePolicy,omitempty"`
	// Mode is Active (empty: the default), the module serves the slot, or
	// Shadow: the module is loaded and evaluated beside whatever serves the
	// slot, on the inputs it really received, and decides nothing.
	// Promotion is setting Mode to Active.
	Mode string `json:"mode,omitempty"`
	// Shadow tunes a Shadow's evaluation; only with Mode Shadow.
	Shadow *ShadowSpec `json:"shadow,omitempty"`
}

// The values of Spec.Mode.
const (
	ModeActive = "Active"
	ModeShadow = "Shadow"
)

// IsShadow reports whether the object asks for a shadow.
func (s *Spec) IsShadow() bool { return s.Mode == ModeShadow }

// ShadowSpec tunes the evaluation of a Shadow.
type ShadowSpec struct {
	// SampleRate is the fraction of decisions evaluated, from 0 to 1, as a
	// decimal string ("0.25"): default 1 for preEnqueue, queueingHint,
	// victimOrder, filter and score, 0.1 for the sorts' pops.
	SampleRate string `json:"sampleRate,omitempty"`
}

// Module holds exactly one source of the module's bytes.
type Module struct {
	// Inline is the module itself (base64 in JSON and YAML). An object is
	// at most about 1.5 MiB in etcd: larger modules go in a ConfigMap.
	Inline []byte `json:"inline,omitempty"`
	// ConfigMapRef names a binaryData key of a ConfigMap in the scheduler's
	// namespace (policyAPI.namespace); an update of the bytes reloads it.
	ConfigMapRef *ConfigMapKeyRef `json:"configMapRef,omitempty"`
}

// ConfigMapKeyRef is a binaryData key of a ConfigMap.
type ConfigMapKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Sandbox are per-module limits; an unset field keeps the configured value
// (sandbox.memoryPages, sandbox.deadline).
type Sandbox struct {
	// MemoryPages caps the module's linear memory, in 64 KiB pages.
	MemoryPages *int32 `json:"memoryPages,omitempty"`
	// Deadline bounds one call into the module, e.g. "50ms".
	Deadline *metav1.Duration `json:"deadline,omitempty"`
}

// Status is what the scheduler's replicas report.
type Status struct {
	// ObservedGeneration is the generation the conditions describe.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Accepted (True: the module serves the slot; False: it was
	// refused, and the reason says why).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Digest is the sha256 of the module while it serves the slot.
	Digest string `json:"digest,omitempty"`
	// ShortDigest is Digest's first 12 hex digits, for kubectl's printer
	// column (a column's JSONPath cannot cut a string).
	ShortDigest string `json:"shortDigest,omitempty"`
	// Agreement is the leader's shadow agreement, for kubectl's printer
	// column: "97.5% of 400" (only a Shadow's status has it).
	Agreement string `json:"agreement,omitempty"`
	// Replicas is each scheduler replica's own report, keyed by name. Each
	// replica writes only its entry (server-side apply, a field manager per
	// replica).
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
}

// ReplicaStatus is one replica's view of the object's slot.
type ReplicaStatus struct {
	// Name is the replica's identity ($POD_NAME in the Deployment), the
	// same as in the leader-election Lease.
	Name string `json:"name"`
	// Leader: this replica held the Lease (it schedules) when it wrote.
	Leader bool `json:"leader"`
	// Digest is the sha256 of the module serving the slot on this replica,
	// which is the previous module when this one was refused; "native:NAME"
	// for a policy compiled into the binary.
	Digest string `json:"digest,omitempty"`
	// State is Serving, Shadowing, Refused, Conflict or UnknownProfile.
	State string `json:"state"`
	// BreakerOpen: the slot's circuit breaker is open, the native default
	// answers until a new module is loaded.
	BreakerOpen bool `json:"breakerOpen"`
	// Fallbacks counts decisions answered by the native default since the
	// serving module was loaded on this replica.
	Fallbacks int64 `json:"fallbacks"`
	// ObservedGeneration is the generation this replica acted on.
	ObservedGeneration int64 `json:"observedGeneration"`
	// LastUpdateTime is when the replica last wrote its entry; entries not
	// refreshed for a long time are pruned (see the scheduler's
	// policyAPI.statusInterval).
	LastUpdateTime metav1.Time `json:"lastUpdateTime"`
	// Message says what serves and why, in words.
	Message string `json:"message,omitempty"`
	// Shadow is what a Shadow's evaluation found on this replica so far.
	Shadow *ShadowStatus `json:"shadow,omitempty"`
}

// ShadowStatus is one replica's comparison of a Shadow with what serves the
// slot, since the shadow module was loaded.
type ShadowStatus struct {
	// Decisions counts the comparisons made: a pop's sampled pair (the
	// sorts), a pod (preEnqueue, filter, score), a pod and event
	// (queueingHint) or a preemption (victimOrder).
	Decisions int64 `json:"decisions"`
	// Disagreements counts the decisions where the shadow answered
	// otherwise.
	Disagreements int64 `json:"disagreements"`
	// Kinds counts the disagreements by kind: orderInversions (the sorts),
	// wouldHold / wouldAdmit (preEnqueue), wouldHaveDelayed / extraAttempts
	// (queueingHint), victimOrderDiffers / victimSetDiffers (victimOrder),
	// feasibleDiffers (filter), chosenNodeDiffers (score).
	Kinds map[string]int64 `json:"kinds,omitempty"`
	// Errors counts the shadow's failed calls (traps, overrun deadlines,
	// malformed answers, an open breaker); they change nothing.
	Errors int64 `json:"errors"`
	// Dropped counts the decisions not evaluated because the evaluation had
	// fallen behind.
	Dropped int64 `json:"dropped"`
	// Since is when the shadow module was loaded on this replica.
	Since metav1.Time `json:"since"`
	// Samples are the last disagreements and errors, newest last (at most
	// 20).
	Samples []ShadowSample `json:"samples,omitempty"`
}

// ShadowSample is one decision where the shadow disagreed or failed.
type ShadowSample struct {
	// Pod is namespace/name of the pod decided about.
	Pod string `json:"pod"`
	// Event is the cluster event (queueingHint), or what was decided: Pop,
	// BackoffPop, PreEnqueue, Preemption, Filter, Score.
	Event string `json:"event"`
	// Active and Shadow are the two answers, in words.
	Active string `json:"active"`
	Shadow string `json:"shadow"`
	// Kind is the disagreement's kind (ShadowStatus.Kinds), or "error".
	Kind string      `json:"kind"`
	Time metav1.Time `json:"time"`
	// Case is the decision as one case of a policytest case file (JSON:
	// the inputs as the records the scheduler built, in base64, and the
	// serving policy's answer as want): `wasmsched policy diff` reads it.
	Case string `json:"case,omitempty"`
}

// The condition type and the reasons of its status.
const (
	ConditionAccepted = "Accepted"

	ReasonLoaded          = "Loaded"
	ReasonForbiddenImport = "ForbiddenImport"
	ReasonABIMismatch     = "ABIMismatch"
	ReasonSmokeFailed     = "SmokeFailed"
	ReasonSHA256Mismatch  = "SHA256Mismatch"
	ReasonTooLarge        = "TooLarge"
	ReasonInvalid         = "Invalid"
	ReasonModuleNotFound  = "ModuleNotFound"
	ReasonUnknownProfile  = "UnknownProfile"
	ReasonConflict        = "Conflict"
)

// The states of ReplicaStatus.State.
const (
	StateServing        = "Serving"
	StateShadowing      = "Shadowing"
	StateRefused        = "Refused"
	StateConflict       = "Conflict"
	StateUnknownProfile = "UnknownProfile"
)
