package cycle_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/host/framework/plugins"

	v1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/queue"
)

// t0 is on a whole second, so that the queue's 1-second backoff windows
// are easy to read.
var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

const profile = "wasmsched"

// Builders of v1 test objects, after kube-scheduler's st.MakePod():
//
//	makePod("p").req("cpu", "500m").selector("zone", "a").obj()
//
// obj returns a deep copy, so one builder can yield several revisions.

type podBuilder struct{ p v1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{p: v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: v1.PodSpec{SchedulerName: profile, Containers: []v1.Container{{Name: "c"}}},
	}}
}

func (b *podBuilder) obj() *v1.Pod { return b.p.DeepCopy() }

func (b *podBuilder) uid(s string) *podBuilder { b.p.UID = types.UID(s); return b }

// req sets the requests of the pod's container ("cpu", "500m", ...).
func (b *podBuilder) req(kv ...string) *podBuilder {
	b.p.Spec.Containers[0].Resources.Requests = res(kv...)
	return b
}

func (b *podBuilder) selector(k, v string) *podBuilder {
	if b.p.Spec.NodeSelector == nil {
		b.p.Spec.NodeSelector = map[string]string{}
	}
	b.p.Spec.NodeSelector[k] = v
	return b
}

func (b *podBuilder) tolerate(key string, effect v1.TaintEffect) *podBuilder {
	b.p.Spec.Tolerations = append(b.p.Spec.Tolerations,
		v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect})
	return b
}

func (b *podBuilder) priority(v int32) *podBuilder { b.p.Spec.Priority = &v; return b }

func (b *podBuilder) group(name string) *podBuilder {
	b.p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return b
}

func (b *podBuilder) deleting() *podBuilder {
	ts := metav1.NewTime(t0)
	b.p.DeletionTimestamp = &ts
	return b
}

func res(kv ...string) v1.ResourceList {
	l := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

type nodeBuilder struct{ n v1.Node }

// makeNode is a node with the given allocatable resources and room for 110
// pods.
func makeNode(name string, alloc ...string) *nodeBuilder {
	rl := res(alloc...)
	if _, ok := rl[v1.ResourcePods]; !ok {
		rl[v1.ResourcePods] = resource.MustParse("110")
	}
	return &nodeBuilder{n: v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name), Labels: map[string]string{}},
		Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
	}}
}

func (b *nodeBuilder) obj() *v1.Node                  { return b.n.DeepCopy() }
func (b *nodeBuilder) label(k, v string) *nodeBuilder { b.n.Labels[k] = v; return b }
func (b *nodeBuilder) unschedulable() *nodeBuilder    { b.n.Spec.Unschedulable = true; return b }
func (b *nodeBuilder) taint(key string, effect v1.TaintEffect) *nodeBuilder {
	b.n.Spec.Taints = append(b.n.Spec.Taints, v1.Taint{Key: key, Value: "x", Effect: effect})
	return b
}

func makePodGroup(name string, minCount int32) *schedv1beta1.PodGroup {
	return &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pg-" + name),
			CreationTimestamp: metav1.NewTime(t0)},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
}

// fakeAPI is a cycle.API over an in-memory apiserver: pods holds what the
// informer shows, and Bind behaves as the pods/binding subresource does
// (NotFound for a pod that is gone or replaced, Conflict for one already
// bound). A hook may inject a failure or change pods first.
type fakeAPI struct {
	mu        sync.Mutex
	pods      map[string]*v1.Pod // by namespace/name
	binds     []bindCall
	conds     []condCall
	pgConds   []pgCondCall
	nominated []string // "namespace/name node" per Nominate
	evicted   []string // "namespace/name: message" per Evict
	// writes are the Bind, Nominate and Evict calls in the order they came:
	// "bind namespace/name node", "nominate namespace/name node",
	// "evict namespace/name".
	writes []string
	// evictHook, if set, runs at the start of every Evict without mu held
	// (it may block, e.g. until a test releases the eviction); an error
	// fails the eviction, which then deletes nothing.
	evictHook func(victim *v1.Pod) error
	// hook, if set, runs at the start of every Bind with mu held; a non-nil
	// error fails the Bind without binding.
	hook func(a *fakeAPI, pod *v1.Pod, node string) error
	// doubleBinds counts Binds of a pod the fake already showed bound when
	// the Bind came.
	doubleBinds int
}

type bindCall struct {
	Pod, Node string
	Err       string // "" on success
}

type condCall struct {
	Pod                string
	Type               v1.PodConditionType
	Status             v1.ConditionStatus
	Reason, Message    string
	LastTransitionTime time.Time
}

type pgCondCall struct {
	Group           string
	Type            string
	Status          metav1.ConditionStatus
	Reason, Message string
	GroupUID        types.UID
}

var _ cycle.API = (*fakeAPI)(nil)

func newFakeAPI() *fakeAPI { return &fakeAPI{pods: map[string]*v1.Pod{}} }

func key(namespace, name string) string { return namespace + "/" + name }

func (a *fakeAPI) add(pod *v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pods[key(pod.Namespace, pod.Name)] = pod.DeepCopy()
}

// removeLocked deletes a pod (from a hook: mu held).
func (a *fakeAPI) removeLocked(namespace, name string) { delete(a.pods, key(namespace, name)) }

// bindElsewhereLocked shows the pod bound to node by someone else (from a
// hook: mu held).
func (a *fakeAPI) bindElsewhereLocked(namespace, name, node string) {
	p := a.pods[key(namespace, name)].DeepCopy()
	p.Spec.NodeName = node
	a.pods[key(namespace, name)] = p
}

func (a *fakeAPI) Bind(_ context.Context, pod *v1.Pod, node string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := key(pod.Namespace, pod.Name)
	a.writes = append(a.writes, "bind "+k+" "+node)
	if cur := a.pods[k]; cur != nil && cur.UID == pod.UID && cur.Spec.NodeName != "" {
		a.doubleBinds++
	}
	err := func() error {
		if a.hook != nil {
			if err := a.hook(a, pod, node); err != nil {
				return err
			}
		}
		cur := a.pods[k]
		if cur == nil || cur.UID != pod.UID {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod.Name)
		}
		if cur.Spec.NodeName != "" {
			return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, pod.Name,
				fmt.Errorf("pod %s is already assigned to node %q", pod.Name, cur.Spec.NodeName))
		}
		cur = cur.DeepCopy()
		cur.Spec.NodeName = node
		a.pods[k] = cur
		return nil
	}()
	c := bindCall{Pod: k, Node: node}
	if err != nil {
		c.Err = err.Error()
	}
	a.binds = append(a.binds, c)
	return err
}

func (a *fakeAPI) SetCondition(_ context.Context, pod *v1.Pod, cond v1.PodCondition) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conds = append(a.conds, condCall{
		Pod: key(pod.Namespace, pod.Name), Type: cond.Type, Status: cond.Status, Reason: cond.Reason,
		Message: cond.Message, LastTransitionTime: cond.LastTransitionTime.Time.UTC(),
	})
	return nil
}

func (a *fakeAPI) SetPodGroupCondition(_ context.Context, pg *schedv1beta1.PodGroup, cond metav1.Condition) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pgConds = append(a.pgConds, pgCondCall{Group: key(pg.Namespace, pg.Name), Type: cond.Type, Status: cond.Status,
		Reason: cond.Reason, Message: cond.Message, GroupUID: pg.UID})
	return nil
}

func (a *fakeAPI) Nominate(_ context.Context, pod *v1.Pod, node string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nominated = append(a.nominated, key(pod.Namespace, pod.Name)+" "+node)
	a.writes = append(a.writes, "nominate "+key(pod.Namespace, pod.Name)+" "+node)
	return nil
}

func (a *fakeAPI) Evict(_ context.Context, victim *v1.Pod, msg string) error {
	if a.evictHook != nil {
		if err := a.evictHook(victim); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.evicted = append(a.evicted, key(victim.Namespace, victim.Name)+": "+msg)
	a.writes = append(a.writes, "evict "+key(victim.Namespace, victim.Name))
	a.removeLocked(victim.Namespace, victim.Name)
	return nil
}

// nominations are the Nominate calls ("namespace/name node"), in call order.
func (a *fakeAPI) nominations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.nominated...)
}

// evictions are the Evict calls ("namespace/name: message"), sorted (the
// victims are evicted in parallel).
func (a *fakeAPI) evictions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := append([]string(nil), a.evicted...)
	slices.Sort(out)
	return out
}

// writeLog is writes, in call order.
func (a *fakeAPI) writeLog() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.writes...)
}

func (a *fakeAPI) podGroupConditions() []pgCondCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]pgCondCall(nil), a.pgConds...)
}

func (a *fakeAPI) Current(namespace, name string) (*v1.Pod, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pods[key(namespace, name)]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

func (a *fakeAPI) bindCalls() []bindCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]bindCall(nil), a.binds...)
}

// conditions are the SetCondition calls, sorted by pod (they are made
// asynchronously); a pod's own calls stay in call order.
func (a *fakeAPI) conditions() []condCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	cs := append([]condCall(nil), a.conds...)
	slices.SortStableFunc(cs, func(x, y condCall) int { return strings.Compare(x.Pod, y.Pod) })
	return cs
}

// boundTo maps each pod the fake shows bound to its node.
func (a *fakeAPI) boundTo() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string]string{}
	for k, p := range a.pods {
		if p.Spec.NodeName != "" {
			m[k] = p.Spec.NodeName
		}
	}
	return m
}

// eventLog is an events.EventRecorder that keeps what it is told.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

type event struct {
	Object, Type, Reason, Action, Note string
}

func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	obj := "?"
	if m, err := meta.Accessor(regarding); err == nil {
		obj = key(m.GetNamespace(), m.GetName())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event{Object: obj, Type: eventtype, Reason: reason, Action: action,
		Note: fmt.Sprintf(note, args...)})
}

func (l *eventLog) all() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

// attemptLog is a cycle.Recorder that keeps what it is told.
type attemptLog struct {
	mu          sync.Mutex
	attempts    []attempt
	scheduled   []scheduled
	preemptions []preemption
	groupPreems []groupPreemption
	written     []string
	points      []string
	plugins     map[string]int
}

type preemption struct {
	Victims int
	Found   bool
}

type groupPreemption struct {
	Result  string
	Victims int
}

type attempt struct {
	Profile, Result string
	D               time.Duration
}

type scheduled struct {
	Profile  string
	Attempts int
	SLI      time.Duration
}

var _ cycle.Recorder = (*attemptLog)(nil)

func (r *attemptLog) Attempt(profile, result string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, attempt{profile, result, d})
}

func (r *attemptLog) Preempted(a cycle.PreemptionAttempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.Preemptor == cycle.PreemptorPod {
		r.preemptions = append(r.preemptions, preemption{a.Victims, a.Result == cycle.PreemptionSuccess})
		return
	}
	r.groupPreems = append(r.groupPreems, groupPreemption{a.Result, a.Victims})
}

func (r *attemptLog) PreemptionWritten(preemptor, result string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, preemptor+" "+result)
}

func (r *attemptLog) ExtensionPoint(profile, point, status string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.points = append(r.points, profile+" "+point+" "+status)
}

func (r *attemptLog) PluginObserver(plugin, point, status string) func(time.Duration) {
	k := plugin + " " + point + " " + status
	return func(time.Duration) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.plugins == nil {
			r.plugins = map[string]int{}
		}
		r.plugins[k]++
	}
}

// extensionPoints are the ExtensionPoint calls ("profile point status").
func (r *attemptLog) extensionPoints() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.points...)
}

// pluginRuns counts the observed plugin runs by "plugin point status".
func (r *attemptLog) pluginRuns() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.plugins)
}

// writtenPreemptions are the PreemptionWritten calls ("pod success").
func (r *attemptLog) writtenPreemptions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.written...)
}

func (r *attemptLog) podPreemptions() []preemption {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]preemption(nil), r.preemptions...)
}

func (r *attemptLog) groupPreemptions() []groupPreemption {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]groupPreemption(nil), r.groupPreems...)
}

func (r *attemptLog) Scheduled(profile string, attempts int, sli time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scheduled = append(r.scheduled, scheduled{profile, attempts, sli})
}

func (r *attemptLog) results() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.attempts))
	for i, a := range r.attempts {
		out[i] = a.Result
	}
	return out
}

// spyQueue is the real queue with the hand-backs recorded.
type spyQueue struct {
	*queue.Queue
	mu       sync.Mutex
	rejected map[types.UID][]podview.Plugins // per AddUnschedulableIfNotPresent
	groups   []queue.GroupResult
}

var _ cycle.Queue = (*spyQueue)(nil)

func (q *spyQueue) AddUnschedulableIfNotPresent(p *queue.Pod, rejected podview.Plugins) error {
	q.mu.Lock()
	q.rejected[p.UID()] = append(q.rejected[p.UID()], rejected)
	q.mu.Unlock()
	return q.Queue.AddUnschedulableIfNotPresent(p, rejected)
}

func (q *spyQueue) AddAttemptedGroupIfNeeded(g *queue.Group, r queue.GroupResult) error {
	q.mu.Lock()
	q.groups = append(q.groups, r)
	q.mu.Unlock()
	return q.Queue.AddAttemptedGroupIfNeeded(g, r)
}

func (q *spyQueue) rejections(uid types.UID) []podview.Plugins {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]podview.Plugins(nil), q.rejected[uid]...)
}

func (q *spyQueue) groupResults() []queue.GroupResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]queue.GroupResult(nil), q.groups...)
}

// env is one scheduler with a real queue (native policies) and cache on a
// fake clock, a fake API, and recorders.
type env struct {
	t      *testing.T
	clock  *testingclock.FakeClock
	q      *spyQueue
	cache  *cache.Cache
	api    *fakeAPI
	events *eventLog
	rec    *attemptLog
	s      *cycle.Scheduler
}

func newEnv(t *testing.T, opts ...cycle.Option) *env {
	t.Helper()
	return newEnvWithQueue(t, nil, opts...)
}

func newEnvWithQueue(t *testing.T, qopts []queue.Option, opts ...cycle.Option) *env {
	t.Helper()
	return newEnvWithEvents(t, nil, qopts, opts...)
}

// newEnvWithEvents is newEnvWithQueue whose scheduler records events with
// ev (e.events when nil).
func newEnvWithEvents(t *testing.T, ev events.EventRecorder, qopts []queue.Option, opts ...cycle.Option) *env {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	e := &env{
		t:      t,
		clock:  clk,
		q:      &spyQueue{rejected: map[types.UID][]podview.Plugins{}},
		cache:  cache.New(cache.WithClock(clk)),
		api:    newFakeAPI(),
		events: &eventLog{},
		rec:    &attemptLog{},
	}
	e.q.Queue = queue.New(append([]queue.Option{queue.WithClock(clk)}, qopts...)...)
	t.Cleanup(e.q.Close)
	all := append([]cycle.Option{
		// The default profile, untimed, unless opts say otherwise.
		cycle.WithBuilt(framework.Built{Entries: defaultEntries(framework.Listers{})}), cycle.WithPluginMetricsSample(0),
		cycle.WithClock(clk), cycle.WithRecorder(e.rec), cycle.WithSeed(1),
		cycle.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}, opts...)
	if ev == nil {
		ev = e.events
	}
	e.s = cycle.New(e.q, e.cache, e.api, ev, all...)
	return e
}

func (e *env) addNodes(nodes ...*v1.Node) {
	for _, n := range nodes {
		e.cache.AddNode(n)
	}
}

// addPods creates pods in the fake apiserver and adds them to the queue, as
// the informer would.
func (e *env) addPods(pods ...*v1.Pod) {
	for _, p := range pods {
		e.api.add(p)
		e.q.Add(p)
	}
}

// scheduleNext pops one entity, runs its cycle and waits for its bindings
// and reports.
func (e *env) scheduleNext() queue.Entity {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ent := e.startNext(ctx)
	e.s.WaitForBindings()
	return ent
}

// startNext pops the next entity and runs its cycle, without waiting for
// what the cycle left running (bindings, evictions).
func (e *env) startNext(ctx context.Context) queue.Entity {
	e.t.Helper()
	ent, err := e.q.Pop(ctx)
	if err != nil {
		e.t.Fatalf("Pop: %v", err)
	}
	e.s.ScheduleOne(ctx, ent)
	return ent
}

// state is where the queue holds the pod ("" if it does not).
func (e *env) state(uid types.UID) string {
	st, ok := e.q.PodState(uid)
	if !ok {
		return ""
	}
	return st.Queue
}

// cachedNode is the node the cache has the pod on ("" if it has none).
func (e *env) cachedNode(uid types.UID) string {
	p, ok := e.cache.GetPod(uid)
	if !ok {
		return ""
	}
	return p.Spec.NodeName
}

// defaultEntries are the default profile's entries over a Handle of l.
func defaultEntries(l framework.Listers) []framework.Entry {
	return handleEntries(framework.NewHandle(framework.HandleOptions{Listers: l}))
}

// handleEntries are the default profile's entries over h.
func handleEntries(h framework.Handle) []framework.Entry {
	b, err := plugins.InTree().Build(h, framework.Config{})
	if err != nil {
		panic(err)
	}
	return b.Entries
}
