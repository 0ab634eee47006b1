package cycle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
)

// API is what the cycle reads from and writes to the apiserver. The
// informer-backed reads never leave the process.
type API interface {
	// Bind binds pod to node through the pods/binding subresource.
	Bind(ctx context.Context, pod *v1.Pod, node string) error
	// SetCondition writes cond into pod's status unless pod already has it
	// (same status, reason and message).
	SetCondition(ctx context.Context, pod *v1.Pod, cond v1.PodCondition) error
	// Current is the informer's copy of the pod, false if it is gone.
	Current(namespace, name string) (*v1.Pod, bool)
	// SetPodGroupCondition writes cond into pg's status unless pg already
	// has it, and never turns a True PodGroupInitiallyScheduled back to
	// False (the API documents it as terminal once True).
	SetPodGroupCondition(ctx context.Context, pg *schedv1beta1.PodGroup, cond metav1.Condition) error
	// Nominate sets pod's status.nominatedNodeName ("" clears it).
	Nominate(ctx context.Context, pod *v1.Pod, node string) error
	// Evict preempts victim: condition DisruptionTarget (reason
	// PreemptionByScheduler, message msg), then delete. A victim already
	// gone is not an error.
	Evict(ctx context.Context, victim *v1.Pod, msg string) error
}

// NewAPI returns the API of a real cluster: writes through client, reads
// from the pod informer's lister.
func NewAPI(client kubernetes.Interface, pods corelisters.PodLister) API {
	return &clientAPI{client: client, core: restClient(client.CoreV1()), pods: pods}
}

type clientAPI struct {
	client kubernetes.Interface
	core   *rest.RESTClient // client's core/v1; nil for a fake clientset
	pods   corelisters.PodLister

	// written remembers the last condition written per object and type, so
	// that a retry loop faster than the informer (a pod group retried from
	// backoffQ while its preemption is under way) does not patch the same
	// condition again and again, starving the client's rate limit.
	mu      sync.Mutex
	written map[writtenKey]string

	// groupMu serialises the PodGroup condition writes, check and patch
	// together: each runs on a goroutine of its own (Scheduler.groupCondition),
	// and a failed attempt's False, checked before and patched after a later
	// attempt's True, would overwrite it. Lock order: groupMu, then mu.
	groupMu sync.Mutex
}

type writtenKey struct {
	uid  types.UID
	kind string
}

// maxWritten bounds the memo; past it, it starts over (a repeated write is
// harmless, just wasted).
const maxWritten = 10000

// fresh records value as written for key and reports whether it differs
// from what was last written.
func (a *clientAPI) fresh(key writtenKey, value string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.written[key] == value {
		return false
	}
	if a.written == nil || len(a.written) >= maxWritten {
		a.written = map[writtenKey]string{}
	}
	a.written[key] = value
	return true
}

// last is the value last written for key, "" if none is remembered.
func (a *clientAPI) last(key writtenKey) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.written[key]
}

// forget drops key from the memo after a failed write, so it is retried.
func (a *clientAPI) forget(key writtenKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.written, key)
}

func (a *clientAPI) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	if a.core == nil {
		return a.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	}
	// The typed Bind's request without its options: encoding empty
	// CreateOptions into no query parameters walks them by reflection, 5% of
	// the process's CPU on plain pods (docs/benchmarks/PROFILES.md). The
	// body is protobuf unless the client's configuration names a content
	// type, as client-go sends its typed requests for built-in types.
	return a.core.Post().UseProtobufAsDefault().Namespace(pod.Namespace).Resource("pods").Name(pod.Name).
		SubResource("binding").Body(b).Do(ctx).Error()
}

// restClient is c's REST client, nil when c is not backed by one (client-go's
// fake clientsets return a nil *rest.RESTClient).
func restClient(c interface{ RESTClient() rest.Interface }) *rest.RESTClient {
	rc, _ := c.RESTClient().(*rest.RESTClient)
	return rc
}

func (a *clientAPI) Current(namespace, name string) (*v1.Pod, bool) {
	p, err := a.pods.Pods(namespace).Get(name)
	if err != nil {
		return nil, false
	}
	return p, true
}

// statusPatch is a strategic-merge patch of an object's status (condition
// lists merge on type), guarded by the object's UID so that an object
// deleted and recreated under the same name is not patched.
func statusPatch(uid types.UID, status any) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid}, "status": status})
}

// patched is the outcome of a write: an object gone or replaced (NotFound,
// or Conflict from the UID guard) is not an error, there is nothing to
// report on any more; another failure forgets key's memo, so that the
// write is tried again, and says what was being done.
func (a *clientAPI) patched(err error, key writtenKey, what string) error {
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if key != (writtenKey{}) {
		a.forget(key)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (a *clientAPI) SetCondition(ctx context.Context, pod *v1.Pod, cond v1.PodCondition) error {
	cur := pod
	if p, ok := a.Current(pod.Namespace, pod.Name); ok && p.UID == pod.UID {
		cur = p
	}
	if old := findCondition(cur.Status.Conditions, cond.Type); old != nil {
		if old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
			return nil
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	key := writtenKey{pod.UID, string(cond.Type)}
	if !a.fresh(key, string(cond.Status)+"\x00"+cond.Reason+"\x00"+cond.Message) {
		return nil
	}
	body, err := statusPatch(pod.UID, map[string]any{"conditions": []v1.PodCondition{cond}})
	if err != nil {
		return err
	}
	_, err = a.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body,
		metav1.PatchOptions{}, "status")
	return a.patched(err, key, fmt.Sprintf("set condition %s on pod %s/%s", cond.Type, pod.Namespace, pod.Name))
}

func findCondition(cs []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func (a *clientAPI) SetPodGroupCondition(ctx context.Context, pg *schedv1beta1.PodGroup, cond metav1.Condition) error {
	a.groupMu.Lock()
	defer a.groupMu.Unlock()
	old := apimeta.FindStatusCondition(pg.Status.Conditions, cond.Type)
	if old != nil && old.Status == metav1.ConditionTrue && cond.Status != metav1.ConditionTrue &&
		cond.Type == schedv1beta1.PodGroupInitiallyScheduled {
		return nil
	}
	cond.ObservedGeneration = pg.Generation
	conds := slices.Clone(pg.Status.Conditions)
	if !apimeta.SetStatusCondition(&conds, cond) {
		return nil
	}
	key := writtenKey{pg.UID, "podgroup/" + cond.Type}
	if cond.Type == schedv1beta1.PodGroupInitiallyScheduled && cond.Status != metav1.ConditionTrue &&
		strings.HasPrefix(a.last(key), string(metav1.ConditionTrue)+"\x00") {
		return nil // written True already; the popped PodGroup may not show it yet
	}
	if !a.fresh(key, string(cond.Status)+"\x00"+cond.Reason+"\x00"+cond.Message) {
		return nil
	}
	body, err := statusPatch(pg.UID, map[string]any{"conditions": []metav1.Condition{*apimeta.FindStatusCondition(conds, cond.Type)}})
	if err != nil {
		return err
	}
	_, err = a.client.SchedulingV1beta1().PodGroups(pg.Namespace).Patch(ctx, pg.Name, types.StrategicMergePatchType, body,
		metav1.PatchOptions{}, "status")
	return a.patched(err, key, fmt.Sprintf("set condition %s on PodGroup %s/%s", cond.Type, pg.Namespace, pg.Name))
}

func (a *clientAPI) Nominate(ctx context.Context, pod *v1.Pod, node string) error {
	var nn any = node
	if node == "" {
		nn = nil // JSON null removes the field
	}
	body, err := statusPatch(pod.UID, map[string]any{"nominatedNodeName": nn})
	if err != nil {
		return err
	}
	_, err = a.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body,
		metav1.PatchOptions{}, "status")
	return a.patched(err, writtenKey{}, fmt.Sprintf("nominate pod %s/%s to node %q", pod.Namespace, pod.Name, node))
}

func (a *clientAPI) Evict(ctx context.Context, victim *v1.Pod, msg string) error {
	cond := v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler,
		Message: msg, LastTransitionTime: metav1.Now(),
	}
	if err := a.SetCondition(ctx, victim, cond); err != nil {
		return err
	}
	err := a.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{
		Preconditions: metav1.NewUIDPreconditions(string(victim.UID)),
	})
	return a.patched(err, writtenKey{}, fmt.Sprintf("delete victim %s/%s", victim.Namespace, victim.Name))
}
