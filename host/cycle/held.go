package cycle

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/queue"
)

// Held pods say why (KEP-5501's proposal, which upstream v1.37 does not
// implement: its PreEnqueue rejections are only logged). A pod held before
// the queue carries PodScheduled=False with a reason naming the holder and
// the holder's message, written when either changes and removed when the
// pod enters the queue.
//
// The queue notifies changes under its lock (queue.WithHeldNotify);
// HeldWriter records the latest state per pod and writes it from one
// goroutine of its own (Run, on the leader only), so no API call is made
// under the queue's lock or on the cycle, and a pod whose state changes
// many times before its write is written once.

// HeldRecorder counts the pods held, per profile and holder
// (wasmsched_preenqueue_held_pods).
type HeldRecorder interface {
	HeldPods(profile, holder string, delta int)
}

// Which holders get no condition of HeldWriter's:
//   - scheduling gates: the apiserver sets PodScheduled=False reason
//     SchedulingGated on a pod created with gates, and gates can only be
//     removed, so the condition is there already; as upstream, it stays
//     until the pod's attempt replaces it.
//   - DefaultPreemption: it holds a preemptor for the moment its victims'
//     deletion is written, right after the attempt that wrote its
//     Unschedulable condition; a condition of its own would flap with it.
//
// Both are counted in the gauge.
func writesHolder(plugin string) bool {
	return plugin != abi.PluginSchedulingGates && plugin != abi.PluginDefaultPreemption
}

// reasonPattern is what a holder's name must look like to be the
// condition's reason (metav1.Condition's reason syntax), and maxReason its
// length; another name (a module's, unchecked beyond abi's UTF-8 and
// length limits) gives the slot's name, PreEnqueue, the message then
// naming the holder.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

const maxReason = 128

// holderLabel is the holder label of the gauge: the plugin's name, or the
// slot's (slotReason) when the name is not one a reason may carry.
func holderLabel(plugin string) string {
	if plugin == "" || (len(plugin) <= maxReason && reasonPattern.MatchString(plugin)) {
		return plugin
	}
	return slotReason
}

// slotReason names the PreEnqueue slot in a reason.
const slotReason = "PreEnqueue"

// heldCondition is the condition that says plugin holds a pod for reason.
func heldCondition(plugin, reason string) (condReason, msg string) {
	if plugin == abi.PluginSchedulingGates {
		return v1.PodReasonSchedulingGated, reason
	}
	if condReason = holderLabel(plugin); condReason != plugin {
		reason = plugin + ": " + reason
	}
	return condReason, truncate(reason, abi.MaxReasonLen)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	i := n - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + mark
}

// HeldWriter writes held pods' PodScheduled conditions. Build it with
// NewHeldWriter; give Note to the queues (queue.WithHeldNotify) and run Run
// while leading.
type HeldWriter struct {
	api   *clientAPI
	rec   HeldRecorder
	log   *slog.Logger
	clock clock.WithTicker
	kick  chan struct{} // a write is pending; capacity 1

	// mu guards pods and order. Lock order: the queue's mu, then mu (Note
	// is called under the queue's lock); Run never calls the queue.
	mu   sync.Mutex
	pods map[types.UID]*heldPod
	// order holds the *heldPod with a write pending, oldest first: each pod
	// at most once, so with pods it is bounded by the pods the queues hold.
	order list.List
}

// heldPod is what the writer knows of a pod noted held (until it is gone).
type heldPod struct {
	pod             *v1.Pod
	profile, holder string // counted in the gauge; holder "": not held
	// reason and msg are the condition the pod should carry; reason "": none
	// of the writer's. stale are the reasons of the writer's that it should
	// no longer carry (earlier holders, written or not).
	reason, msg string
	stale       []string
	gen         uint64        // bumped by every note: a write of an older gen is superseded
	el          *list.Element // in order while a write is pending
	lastRV      string        // resourceVersion of the writer's last write
}

// NewHeldWriter returns a writer through api, which must come from NewAPI
// (it shares its client, its informer reads and its memo of written
// conditions, so that an attempt's Unschedulable condition replaced by a
// held one is written again when the attempt says it again).
func NewHeldWriter(api API, rec HeldRecorder, log *slog.Logger) (*HeldWriter, error) {
	ca, ok := api.(*clientAPI)
	if !ok {
		return nil, errors.New("cycle.NewHeldWriter needs the API of cycle.NewAPI")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HeldWriter{api: ca, rec: rec, log: log, clock: clock.RealClock{}, kick: make(chan struct{}, 1),
		pods: map[types.UID]*heldPod{}}, nil
}

// Note records a change the queue notified (queue.WithHeldNotify). It never
// blocks on the API.
func (w *HeldWriter) Note(h queue.Held) {
	uid := h.Pod.UID
	w.mu.Lock()
	defer w.mu.Unlock()
	hp := w.pods[uid]
	if h.Gone {
		if hp != nil {
			w.count(hp, "", "")
			w.unqueue(hp)
			delete(w.pods, uid)
		}
		return
	}
	if hp == nil {
		if h.Plugin == "" {
			return // never held: nothing of the writer's to remove
		}
		hp = &heldPod{}
		w.pods[uid] = hp
	}
	w.count(hp, h.Profile, holderLabel(h.Plugin))
	hp.pod = h.Pod
	reason, msg := "", ""
	if h.Plugin != "" && writesHolder(h.Plugin) {
		reason, msg = heldCondition(h.Plugin, h.Reason)
	}
	if hp.reason != "" && hp.reason != reason && !slices.Contains(hp.stale, hp.reason) {
		hp.stale = append(hp.stale, hp.reason)
	}
	hp.reason, hp.msg = reason, msg
	hp.gen++
	if reason == "" && len(hp.stale) == 0 {
		w.unqueue(hp) // nothing to write or remove
		return
	}
	if hp.el == nil {
		hp.el = w.order.PushBack(hp)
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// count moves hp in the gauge to profile and holder ("": out). mu held.
func (w *HeldWriter) count(hp *heldPod, profile, holder string) {
	if hp.profile == profile && hp.holder == holder {
		return
	}
	if w.rec != nil && hp.holder != "" {
		w.rec.HeldPods(hp.profile, hp.holder, -1)
	}
	if w.rec != nil && holder != "" {
		w.rec.HeldPods(profile, holder, 1)
	}
	hp.profile, hp.holder = profile, holder
}

func (w *HeldWriter) unqueue(hp *heldPod) {
	if hp.el != nil {
		w.order.Remove(hp.el)
		hp.el = nil
	}
}

// heldJob is a pending write taken by Run.
type heldJob struct {
	hp          *heldPod
	pod         *v1.Pod
	reason, msg string
	stale       []string
	gen         uint64
	lastRV      string
}

// next takes the oldest pending write, if any.
func (w *HeldWriter) next() (heldJob, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	el := w.order.Front()
	if el == nil {
		return heldJob{}, false
	}
	hp := el.Value.(*heldPod)
	w.unqueue(hp)
	return heldJob{hp: hp, pod: hp.pod, reason: hp.reason, msg: hp.msg, stale: slices.Clone(hp.stale),
		gen: hp.gen, lastRV: hp.lastRV}, true
}

// current reports whether j is still the pod's latest state (no later note,
// not gone).
func (w *HeldWriter) current(j heldJob) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pods[j.pod.UID] == j.hp && j.hp.gen == j.gen
}

// finish records a write of j done (rv: the object it returned, "" if none
// was made): the stale reasons are no longer to be looked for, unless a
// later note came meanwhile.
func (w *HeldWriter) finish(j heldJob, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods[j.pod.UID] != j.hp {
		return
	}
	if rv != "" {
		j.hp.lastRV = rv
	}
	if j.hp.gen == j.gen {
		j.hp.stale = nil
	}
}

// Run writes the pending changes, oldest first, one at a time, until ctx
// ends. Notes made before Run (on a replica that was not leading) are
// written when it starts.
func (w *HeldWriter) Run(ctx context.Context) {
	for {
		j, ok := w.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
				continue
			}
		}
		if err := w.write(ctx, j); err != nil && ctx.Err() == nil {
			w.log.Warn("write why a held pod waits into its PodScheduled condition", "pod", klogRef(j.pod), "err", err)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// Retries of a write: a conflict is retried at once with the object read
// again; another error after a backoff (heldBackoff, doubling to
// heldMaxBackoff), heldAttempts times in all.
const (
	heldAttempts   = 8
	heldBackoff    = 100 * time.Millisecond
	heldMaxBackoff = 5 * time.Second
)

// write brings the pod's condition to j's state: it reads the pod (the
// informer's copy, or the apiserver's when the copy may predate the
// writer's own last write), decides, and patches under the object's
// resourceVersion, so that nothing written meanwhile (the binding's
// PodScheduled=True, an attempt's Unschedulable) is overwritten by a
// decision made on an older object. A pod gone or replaced is not an
// error.
func (w *HeldWriter) write(ctx context.Context, j heldJob) error {
	pods := w.api.client.CoreV1().Pods(j.pod.Namespace)
	cur, ok := w.api.Current(j.pod.Namespace, j.pod.Name)
	fresh := ok && cur.UID == j.pod.UID && (j.lastRV == "" || cur.ResourceVersion == j.lastRV)
	backoff := heldBackoff
	var err error
	for range heldAttempts {
		if !fresh {
			cur, err = pods.Get(ctx, j.pod.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
		}
		if err == nil {
			if cur.UID != j.pod.UID {
				return nil // replaced under the same name
			}
			body := heldPatch(cur, j, w.clock.Now())
			if body == nil {
				w.finish(j, "")
				return nil
			}
			var out *v1.Pod
			out, err = pods.Patch(ctx, j.pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
			switch {
			case err == nil:
				// The cycle's memo of the last Unschedulable written no
				// longer says what the pod carries.
				w.api.forget(writtenKey{j.pod.UID, string(v1.PodScheduled)})
				w.finish(j, out.ResourceVersion)
				return nil
			case apierrors.IsNotFound(err):
				return nil
			case apierrors.IsConflict(err):
				fresh = false
				continue
			}
		}
		fresh = false
		if !w.current(j) {
			return nil // a later note is pending: it is written instead
		}
		t := w.clock.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
		backoff = min(2*backoff, heldMaxBackoff)
		if !w.current(j) {
			return nil
		}
	}
	return fmt.Errorf("gave up after %d attempts: %w", heldAttempts, err)
}

// heldPatch is the status patch that brings cur to j's state, nil if none
// is needed: the condition set when it differs, or removed when it is one
// of j's stale reasons. A bound pod's condition is the binding's. The patch
// is guarded by cur's UID and resourceVersion (Conflict if either changed).
func heldPatch(cur *v1.Pod, j heldJob, now time.Time) []byte {
	if cur.Spec.NodeName != "" {
		return nil
	}
	old := findCondition(cur.Status.Conditions, v1.PodScheduled)
	var cond map[string]any
	switch {
	case j.reason != "":
		if old != nil && old.Status == v1.ConditionFalse && old.Reason == j.reason && old.Message == j.msg {
			return nil
		}
		ltt := metav1.NewTime(now)
		if old != nil && old.Status == v1.ConditionFalse && !old.LastTransitionTime.IsZero() {
			ltt = old.LastTransitionTime
		}
		cond = map[string]any{"type": v1.PodScheduled, "status": v1.ConditionFalse, "reason": j.reason,
			"message": j.msg, "lastTransitionTime": ltt}
	case old != nil && old.Status == v1.ConditionFalse && slices.Contains(j.stale, old.Reason):
		cond = map[string]any{"type": v1.PodScheduled, "$patch": "delete"}
	default:
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": cur.UID, "resourceVersion": cur.ResourceVersion},
		"status":   map[string]any{"conditions": []any{cond}},
	})
	if err != nil {
		panic("cycle: marshal a held pod's status patch: " + err.Error())
	}
	return body
}
