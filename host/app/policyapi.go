package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/shadow"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/policyapi"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// DefaultIdentity is this replica's name: $POD_NAME (the Deployment sets it
// from the downward API), else the host name and the process id. It names
// the replica in the leader-election Lease and in SchedulingPolicy status.
func DefaultIdentity() string {
	if n := os.Getenv("POD_NAME"); n != "" {
		return n
	}
	host, _ := os.Hostname()
	return host + "_" + strconv.Itoa(os.Getpid())
}

// pruneAfter is how many status intervals a replica's entry may go
// unrefreshed before another replica removes it (a replica that is gone).
const pruneAfter = 10

// policyWatch makes SchedulingPolicy objects the first source of each slot's
// module: every replica, leader or not, watches them from start-up and
// loads the module of the object that holds a slot through the same
// validate + smoke + swap path as any swap (wasmslot.Set), so a replica that
// becomes leader already serves them. It writes what it did into each
// object's status: the shared Accepted condition, computed the same way by
// every replica, and its own entry of status.replicas, with server-side
// apply under a field manager of its own so that replicas never overwrite
// each other.
type policyWatch struct {
	log      *slog.Logger
	dyn      dynamic.Interface
	swap     *swapper
	identity string
	manager  string // the server-side apply field manager
	// namespace holds the ConfigMaps spec.module.configMapRef names.
	namespace string
	leading   *atomic.Bool
	limits    wasm.Limits // the configured sandbox limits, which spec.sandbox overrides
	interval  time.Duration
	counters  map[string]*slotCounter // by profile name
	kick      chan struct{}           // a sync is due (capacity 1)
	now       func() time.Time

	policies cache.SharedIndexInformer
	cms      listersv1.ConfigMapLister
	start    []func(stop <-chan struct{})
	synced   []cache.InformerSynced

	// tried is what was last loaded (or refused) for each held slot, and
	// shadowTried for each shadowed one. Guarded by swap.mu.
	tried, shadowTried map[policyapi.SlotKey]*attempt
	// written is what this replica last applied to each object's status, and
	// when; only the sync goroutine uses it.
	written map[types.UID]written
}

// attempt is one load of an object's module into a slot.
type attempt struct {
	uid    types.UID
	sum    string // the bytes' sha256; "" when there were none
	pin    string
	limits wasm.Limits
	err    error // nil: the module serves
	reason string
}

func (a *attempt) same(b *attempt) bool {
	return a.uid == b.uid && a.sum == b.sum && a.pin == b.pin && a.limits == b.limits
}

type written struct {
	fingerprint string
	at          time.Time
}

// servesPolicyAPI reports whether the apiserver serves SchedulingPolicies
// (the CRD of deploy/crd.yaml is installed).
func servesPolicyAPI(client kubernetes.Interface) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(policyapi.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discover %s: %w", policyapi.GroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == policyapi.Resource {
			return true, nil
		}
	}
	return false, nil
}

// newPolicyWatch builds the informers of SchedulingPolicies and of the
// ConfigMaps of cfg.Namespace; Run starts them.
func newPolicyWatch(log *slog.Logger, client kubernetes.Interface, dyn dynamic.Interface, cfg config.PolicyAPI, a *App, limits wasm.Limits) *policyWatch {
	manager := "wasmsched-" + a.identity
	if len(manager) > 128 { // the apiserver's limit on a field manager's name
		manager = manager[:128]
	}
	w := &policyWatch{
		log: log, dyn: dyn, swap: a.swap, identity: a.identity, manager: manager, namespace: cfg.Namespace, leading: &a.leading,
		limits: limits, interval: cfg.StatusInterval, counters: a.counters, kick: a.policyKick, now: time.Now,
		tried: map[policyapi.SlotKey]*attempt{}, shadowTried: map[policyapi.SlotKey]*attempt{}, written: map[types.UID]written{},
	}
	kick := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.trigger() },
		UpdateFunc: func(any, any) { w.trigger() },
		DeleteFunc: func(any) { w.trigger() },
	}
	df := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	w.policies = df.ForResource(policyapi.GVR).Informer()
	_, _ = w.policies.AddEventHandler(kick)
	cf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(cfg.Namespace))
	cmi := cf.Core().V1().ConfigMaps()
	_, _ = cmi.Informer().AddEventHandler(kick)
	w.cms = cmi.Lister()
	w.start = []func(<-chan struct{}){df.Start, cf.Start}
	w.synced = []cache.InformerSynced{w.policies.HasSynced, cmi.Informer().HasSynced}
	return w
}

func (w *policyWatch) trigger() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// initialSyncTimeout bounds the wait for the first lists at start-up: a
// scheduler without the RBAC to read the objects still schedules, with the
// configuration's modules, and says why.
const initialSyncTimeout = 30 * time.Second

// startAndSync starts the informers, waits for their first lists and
// loads the objects' modules, so that the replica serves them before it
// reports ready (and before it may become leader).
func (w *policyWatch) startAndSync(ctx context.Context) {
	for _, start := range w.start {
		start(ctx.Done())
	}
	sctx, cancel := context.WithTimeout(ctx, initialSyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), w.synced...) {
		if ctx.Err() == nil {
			w.log.Warn("SchedulingPolicies or their ConfigMaps not listed yet (RBAC? see deploy/clusterrole.yaml and deploy/role.yaml); scheduling with the configuration's modules meanwhile")
		}
		return
	}
	w.sync(ctx, false)
}

// run syncs on every change of an object or a ConfigMap, and refreshes
// this replica's status entries every interval, until ctx ends.
func (w *policyWatch) run(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			w.sync(ctx, false)
		case <-tick.C:
			w.sync(ctx, true)
		}
	}
}

// objects are the informer's SchedulingPolicies, converted.
func (w *policyWatch) objects() []*policyapi.SchedulingPolicy {
	var out []*policyapi.SchedulingPolicy
	for _, o := range w.policies.GetStore().List() {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		p, err := policyapi.FromUnstructured(u)
		if err != nil {
			w.log.Error("SchedulingPolicy ignored: it does not convert (does deploy/crd.yaml match this scheduler's version?)", "object", u.GetName(), "err", err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// sync loads the module of every object that holds a slot, and of every
// Shadow, gives back the slots no object holds any more, ends the shadows
// no object asks for any more, and writes each object's status (all of it
// when refresh, else where it changed).
func (w *policyWatch) sync(ctx context.Context, refresh bool) {
	objs := w.objects()
	def := w.swap.profiles[0].name
	holders := policyapi.Holders(objs, def, false)
	shadows := policyapi.Holders(objs, def, true)

	w.swap.mu.Lock()
	if w.swap.held == nil {
		w.swap.held = map[policyapi.SlotKey]string{}
	}
	for key := range w.swap.held {
		if h, ok := holders[key]; !ok || w.swap.profile(key.Profile) == nil {
			delete(w.swap.held, key)
			delete(w.tried, key)
			w.swap.restore(ctx, key, "SchedulingPolicy removed")
		} else {
			w.swap.held[key] = h.Name
		}
	}
	for key := range w.shadowTried {
		if _, ok := shadows[key]; !ok {
			delete(w.shadowTried, key)
			if prof := w.swap.profile(key.Profile); prof != nil {
				_ = prof.shadows.Empty(key.Slot)
				w.log.Info("shadow ended", "profile", key.Profile, "slot", key.Slot.String())
			}
		}
	}
	for key, p := range holders {
		prof := w.swap.profile(key.Profile)
		if prof == nil {
			continue
		}
		w.swap.held[key] = p.Name
		if key.Slot.Placement() {
			fp, _ := policy.ParseFailurePolicy(p.Spec.FailurePolicy) // validated
			prof.placement.SetFailurePolicy(key.Slot, fp)
		}
		w.load(ctx, prof.set, w.tried, key, p)
	}
	for key, p := range shadows {
		prof := w.swap.profile(key.Profile)
		if prof == nil {
			continue
		}
		prof.shadow.Configure(key.Slot, p.Name, p.Spec.SampleRate(shadow.DefaultRate(key.Slot)))
		w.load(ctx, prof.shadows, w.shadowTried, key, p)
	}
	tried := make(map[policyapi.SlotKey]attempt, len(w.tried))
	for k, a := range w.tried {
		tried[k] = *a
	}
	shadowTried := make(map[policyapi.SlotKey]attempt, len(w.shadowTried))
	for k, a := range w.shadowTried {
		shadowTried[k] = *a
	}
	w.swap.mu.Unlock()

	seen := map[types.UID]bool{}
	for _, p := range objs {
		seen[p.UID] = true
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.IsShadow() {
			w.report(ctx, p, shadows, shadowTried, refresh)
		} else {
			w.report(ctx, p, holders, tried, refresh)
		}
	}
	for uid := range w.written {
		if !seen[uid] {
			delete(w.written, uid)
		}
	}
}

// load loads p's module into its slot of set unless this very module, pin
// and limits were tried last (tried, set's record). The caller holds
// swap.mu.
func (w *policyWatch) load(ctx context.Context, set *wasmslot.Set, tried map[policyapi.SlotKey]*attempt, key policyapi.SlotKey, p *policyapi.SchedulingPolicy) {
	limits := specLimits(&p.Spec, w.limits)
	bin, err := w.module(p)
	a := &attempt{uid: p.UID, pin: p.Spec.SHA256, limits: limits}
	if bin != nil {
		sum := sha256.Sum256(bin)
		a.sum = hex.EncodeToString(sum[:])
	}
	if prev := tried[key]; prev != nil && prev.same(a) {
		return
	}
	tried[key] = a
	what, verb := "the previous module keeps serving", "policy swapped"
	if p.Spec.IsShadow() {
		what, verb = "the slot keeps its shadow, if any", "shadow loaded"
	}
	if err != nil {
		a.err, a.reason = fmt.Errorf("%w; %s", err, keepsCurrent(set.Current()[key.Slot])), policyapi.ReasonModuleNotFound
		w.log.Warn("SchedulingPolicy refused; "+what, "object", p.Name, "profile", key.Profile, "slot", key.Slot.String(), "err", a.err)
		return
	}
	start := time.Now()
	if err := set.LoadWithLimits(ctx, key.Slot, "schedulingpolicy/"+p.Name, bin, p.Spec.SHA256, limits); err != nil {
		a.err, a.reason = err, refusalReason(err)
		w.log.Warn("SchedulingPolicy refused; "+what, "object", p.Name, "profile", key.Profile, "slot", key.Slot.String(), "reason", a.reason, "err", err)
		return
	}
	w.log.Info(verb, "trigger", "SchedulingPolicy", "object", p.Name, "profile", key.Profile, "slot", key.Slot.String(),
		"sha256", a.sum, "took", time.Since(start).Round(time.Microsecond))
}

// specLimits are base with the spec's sandbox overrides applied.
func specLimits(s *policyapi.Spec, base wasm.Limits) wasm.Limits {
	if s.Sandbox == nil {
		return base
	}
	if s.Sandbox.MemoryPages != nil {
		base.MemoryPages = uint32(max(*s.Sandbox.MemoryPages, 0))
	}
	if s.Sandbox.Deadline != nil {
		base.Deadline = s.Sandbox.Deadline.Duration
	}
	return base
}

// refusalReason is the Accepted condition's reason for an error of
// wasmslot.Set.Load. It is here, not in package policyapi, so that the API
// types do not link the Wasm runtime.
func refusalReason(err error) string {
	switch {
	case errors.Is(err, wasm.ErrForbiddenImport):
		return policyapi.ReasonForbiddenImport
	case errors.Is(err, wasm.ErrABIMismatch):
		return policyapi.ReasonABIMismatch
	case errors.Is(err, wasm.ErrTooLarge):
		return policyapi.ReasonTooLarge
	}
	switch wasmslot.Refusal(err) {
	case "slot":
		return policyapi.ReasonABIMismatch // the module does not export the slot's functions
	case "sha256":
		return policyapi.ReasonSHA256Mismatch
	case "smoke":
		return policyapi.ReasonSmokeFailed
	}
	return policyapi.ReasonInvalid
}

func keepsCurrent(cur wasmslot.ModuleInfo) string {
	if cur.Name == "" {
		return "the slot keeps its current policy"
	}
	return fmt.Sprintf("the slot keeps %q", cur.Name)
}

// module reads p's module bytes: inline, or the binaryData key of the
// ConfigMap it names.
func (w *policyWatch) module(p *policyapi.SchedulingPolicy) ([]byte, error) {
	if len(p.Spec.Module.Inline) > 0 {
		return p.Spec.Module.Inline, nil
	}
	ref := p.Spec.Module.ConfigMapRef
	if ref == nil {
		return nil, errors.New("spec.module has neither inline nor configMapRef")
	}
	cm, err := w.cms.ConfigMaps(w.namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("ConfigMap %s/%s not found: create it (kubectl -n %s create configmap %s --from-file=%s=FILE.wasm)",
			w.namespace, ref.Name, w.namespace, ref.Name, ref.Key)
	}
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", w.namespace, ref.Name, err)
	}
	if b, ok := cm.BinaryData[ref.Key]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("ConfigMap %s/%s has no binaryData key %q (kubectl create configmap --from-file puts a .wasm file under binaryData)%s",
		w.namespace, ref.Name, ref.Key, dataHint(cm, ref.Key))
}

func dataHint(cm *corev1.ConfigMap, key string) string {
	if _, ok := cm.Data[key]; ok {
		return "; it is under data, as text, which cannot be a Wasm module"
	}
	return ""
}

// statusApply is what a replica applies to an object's status: the fields
// it shares with the other replicas and its own entry.
type statusApply struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		ObservedGeneration int64                     `json:"observedGeneration"`
		Conditions         []metav1.Condition        `json:"conditions"`
		Digest             string                    `json:"digest,omitempty"`
		ShortDigest        string                    `json:"shortDigest,omitempty"`
		Agreement          string                    `json:"agreement,omitempty"`
		Replicas           []policyapi.ReplicaStatus `json:"replicas"`
	} `json:"status"`
}

// report computes p's status as this replica sees it and applies it when it
// changed or refresh asks (every interval); it also prunes the entries of
// replicas that stopped refreshing theirs.
func (w *policyWatch) report(ctx context.Context, p *policyapi.SchedulingPolicy, holders map[policyapi.SlotKey]*policyapi.SchedulingPolicy,
	tried map[policyapi.SlotKey]attempt, refresh bool) {
	cond := metav1.Condition{Type: policyapi.ConditionAccepted, ObservedGeneration: p.Generation}
	entry := policyapi.ReplicaStatus{Name: w.identity, Leader: w.leading.Load(), ObservedGeneration: p.Generation}
	var digest string
	key, _ := p.Key(w.swap.profiles[0].name)
	prof := w.swap.profile(key.Profile)
	isShadow := p.Spec.IsShadow()
	if prof != nil {
		set := prof.set
		if isShadow {
			set = prof.shadows
		}
		cur := set.Current()[key.Slot]
		entry.Digest = cur.SHA256
		if cur.IsNative() {
			entry.Digest = cur.Name
		}
		entry.BreakerOpen = set.Breakers()[key.Slot].Open
		if c := w.counters[prof.name]; c != nil && !isShadow {
			entry.Fallbacks = c.fallbacks[key.Slot].Load()
		}
	}
	refuse := func(reason, state, msg string) {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, msg
		entry.State, entry.Message = state, msg
	}
	holder := holders[key]
	var agreement string
	switch a, ok := tried[key]; {
	case p.Spec.Validate() != nil:
		refuse(policyapi.ReasonInvalid, policyapi.StateRefused, p.Spec.Validate().Error())
	case prof == nil:
		refuse(policyapi.ReasonUnknownProfile, policyapi.StateUnknownProfile,
			fmt.Sprintf("no profile %q on this scheduler: set spec.profile to a configured scheduler name (empty: the default profile %s)", key.Profile, w.swap.profiles[0].name))
	case holder == nil || holder.UID != p.UID:
		what := "held"
		if isShadow {
			what = "shadowed"
		}
		refuse(policyapi.ReasonConflict, policyapi.StateConflict,
			fmt.Sprintf("profile %s slot %s is %s by SchedulingPolicy %q, which is older; delete one of the two", key.Profile, key.Slot, what, holderName(holder)))
	case !ok || a.uid != p.UID:
		return // not tried yet: the next sync reports it
	case a.err != nil:
		refuse(a.reason, policyapi.StateRefused, a.err.Error())
	case isShadow:
		cond.Status, cond.Reason = metav1.ConditionTrue, policyapi.ReasonLoaded
		cond.Message = fmt.Sprintf("shadows profile %s slot %s (sha256 %s): evaluated beside %s, deciding nothing", key.Profile, key.Slot, a.sum, servingName(prof, key.Slot))
		entry.State, entry.Message = policyapi.StateShadowing, cond.Message
		digest = a.sum
		if st, ok := prof.shadow.Stats(key.Slot); ok {
			entry.Shadow = shadowStatus(st)
			if entry.Leader {
				agreement = agreementWords(st)
			}
		}
		if entry.BreakerOpen {
			entry.Message += "; its circuit breaker is open: its decisions count as errors until a new module is loaded"
		}
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, policyapi.ReasonLoaded
		cond.Message = fmt.Sprintf("serves profile %s slot %s (sha256 %s)", key.Profile, key.Slot, a.sum)
		entry.State, entry.Message = policyapi.StateServing, cond.Message
		digest = a.sum
		if entry.BreakerOpen {
			entry.Message += "; its circuit breaker is open: the native default answers until a new module is loaded"
		}
	}

	var ap statusApply
	ap.APIVersion, ap.Kind, ap.Metadata.Name = policyapi.GroupVersion.String(), policyapi.Kind, p.Name
	ap.Status.ObservedGeneration = p.Generation
	ap.Status.Digest = digest
	ap.Status.Agreement = agreement
	if digest != "" {
		ap.Status.ShortDigest = digest[:12]
	}
	// The condition keeps its lastTransitionTime while its status does not
	// change (meta.SetStatusCondition), so that every replica computes the
	// same one.
	conds := slices.Clone(p.Status.Conditions)
	meta.SetStatusCondition(&conds, cond)
	ap.Status.Conditions = []metav1.Condition{*policyapi.Condition(conds)}
	fp, _ := json.Marshal(struct {
		A statusApply
		C metav1.Condition
		E policyapi.ReplicaStatus
	}{ap, cond, entry})
	now := w.now()
	last, ok := w.written[p.UID]
	if ok && last.fingerprint == string(fp) && !(refresh && now.Sub(last.at) >= w.interval/2) {
		return
	}
	entry.LastUpdateTime = metav1.NewTime(now)
	ap.Status.Replicas = []policyapi.ReplicaStatus{entry}
	data, err := json.Marshal(ap)
	if err != nil {
		w.log.Error("SchedulingPolicy status", "object", p.Name, "err", err)
		return
	}
	force := true
	_, err = w.dyn.Resource(policyapi.GVR).Patch(ctx, p.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: w.manager, Force: &force}, "status")
	if err != nil {
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			w.log.Warn("SchedulingPolicy status not written; retried at the next change or refresh", "object", p.Name, "err", err)
		}
		return
	}
	w.written[p.UID] = written{fingerprint: string(fp), at: now}
	if refresh {
		w.prune(ctx, p, now)
	}
}

// servingName names what serves slot of prof, in words.
func servingName(prof *profile, slot abi.Slot) string {
	cur := prof.set.Current()[slot]
	switch {
	case cur.Name == "":
		return "an empty slot"
	case cur.IsNative():
		return "the native policy " + strconv.Quote(cur.Name)
	}
	return "module " + strconv.Quote(cur.Name)
}

// shadowStatus is st as the API reports it.
func shadowStatus(st shadow.Stats) *policyapi.ShadowStatus {
	out := &policyapi.ShadowStatus{Decisions: st.Decisions, Disagreements: st.Disagreements, Errors: st.Errors, Dropped: st.Dropped,
		Kinds: st.Kinds, Since: metav1.NewTime(st.Since)}
	if len(out.Kinds) == 0 {
		out.Kinds = nil
	}
	for _, s := range st.Samples {
		out.Samples = append(out.Samples, policyapi.ShadowSample{Pod: s.Pod, Event: s.Event, Active: s.Active, Shadow: s.Shadow, Kind: s.Kind,
			Time: metav1.NewTime(s.Time), Case: s.Case})
	}
	return out
}

// agreementWords is the printer column's "97.5% of 400": the share of the
// decisions evaluated where the shadow agreed (errors disagree).
func agreementWords(st shadow.Stats) string {
	if st.Decisions == 0 {
		return "no decisions yet"
	}
	agree := st.Decisions - st.Disagreements - st.Errors
	return strconv.FormatFloat(100*float64(agree)/float64(st.Decisions), 'f', 1, 64) + "% of " + strconv.FormatInt(st.Decisions, 10)
}

func holderName(h *policyapi.SchedulingPolicy) string {
	if h == nil {
		return ""
	}
	return h.Name
}

// prune removes the status.replicas entries of other replicas that were not
// refreshed for pruneAfter intervals: replicas that are gone (a rollout
// renames the pods). A JSON patch tests each entry's name at its index, so
// a concurrent change makes it fail harmlessly; it is tried again at the
// next refresh.
func (w *policyWatch) prune(ctx context.Context, p *policyapi.SchedulingPolicy, now time.Time) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	for i := len(p.Status.Replicas) - 1; i >= 0; i-- {
		r := p.Status.Replicas[i]
		if r.Name == w.identity || now.Sub(r.LastUpdateTime.Time) < pruneAfter*w.interval {
			continue
		}
		path := "/status/replicas/" + strconv.Itoa(i)
		ops = append(ops, op{Op: "test", Path: path + "/name", Value: r.Name}, op{Op: "remove", Path: path})
	}
	if len(ops) == 0 {
		return
	}
	data, _ := json.Marshal(ops)
	if _, err := w.dyn.Resource(policyapi.GVR).Patch(ctx, p.Name, types.JSONPatchType, data, metav1.PatchOptions{}, "status"); err != nil {
		w.log.Debug("pruning stale replica entries of a SchedulingPolicy; retried at the next refresh", "object", p.Name, "err", err)
		return
	}
	w.log.Info("pruned the status entries of replicas that stopped reporting", "object", p.Name, "entries", len(ops)/2)
}

// slotCounter counts, per slot of one profile, the decisions answered by the
// native default since the serving module was loaded, for the replicas'
// status; it passes everything on to the metrics and asks for a status
// update when a breaker opens.
type slotCounter struct {
	policy.Recorder
	fallbacks [len(abi.Slots)]atomic.Int64
	tripped   func()
}

func (c *slotCounter) FellBack(s abi.Slot, n int) {
	c.Recorder.FellBack(s, n)
	if int(s) < len(c.fallbacks) {
		c.fallbacks[s].Add(int64(n))
	}
}

func (c *slotCounter) Swapped(s abi.Slot, result string) {
	c.Recorder.Swapped(s, result)
	if result == "success" && int(s) < len(c.fallbacks) {
		c.fallbacks[s].Store(0)
	}
}

func (c *slotCounter) BreakerTripped(s abi.Slot) {
	c.Recorder.BreakerTripped(s)
	c.tripped()
}
