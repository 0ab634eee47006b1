package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// The reference scenarios run twice, once with upstream kube-scheduler
// v1.37.1 and once with wasmsched, each on a control plane of its own, and
// assert the same things about what the API shows. Upstream is the
// reference: a scenario whose upstream subtest fails is a wrong scenario.

// schedulerName is the profile both implementations serve, so that the same
// pods are scheduled by either.
const schedulerName = "wasmsched"

// onlyEnv restricts forEachScheduler to one implementation (for development).
const onlyEnv = "WASMSCHED_E2E_ONLY"

// only is onlyEnv's value. wasmsched refuses to start with an unknown
// WASMSCHED_* variable in its environment (its configuration reads them all),
// and children inherit the test binary's: so the variable is read once and
// removed from the environment before any test starts a child.
var only = os.Getenv(onlyEnv)

func init() { os.Unsetenv(onlyEnv) }

// Implementations, as subtest names.
const (
	implUpstream  = "upstream"
	implWasmsched = "wasmsched"
)

// scheduler is one implementation under test on its own control plane:
// KWOK runs (a deleted pod on a fake node goes away at once), the namespace
// is created, and the scheduler is not started yet: scenarios set up what
// already runs (nodes, pre-bound victims, PDBs) and then call start, so
// that both implementations begin from the same synced state.
type scheduler struct {
	name  string // implUpstream or implWasmsched
	env   *testenv.Env
	c     kubernetes.Interface
	ns    string
	gates []string // extra feature gates, given to kube-apiserver and upstream

	upstream *upstreamProc
	wasm     *proc
}

// forEachScheduler runs f as subtests "upstream" and "wasmsched".
func forEachScheduler(t *testing.T, f func(t *testing.T, s *scheduler)) {
	t.Helper()
	forEachSchedulerWithGates(t, nil, f)
}

// forEachSchedulerWithGates is forEachScheduler with extra feature gates
// ("Name=true") on kube-apiserver and upstream kube-scheduler. wasmsched
// has no feature gates: it sees what the apiserver serves.
func forEachSchedulerWithGates(t *testing.T, gates []string, f func(t *testing.T, s *scheduler)) {
	t.Helper()
	if only != "" && only != implUpstream && only != implWasmsched {
		t.Fatalf("%s=%q: want %q, %q or unset", onlyEnv, only, implUpstream, implWasmsched)
	}
	for _, impl := range []string{implUpstream, implWasmsched} {
		t.Run(impl, func(t *testing.T) {
			if only != "" && only != impl {
				t.Skipf("%s=%s", onlyEnv, only)
			}
			var opts []testenv.Option
			if len(gates) > 0 {
				opts = append(opts, testenv.WithAPIServerFlags("--feature-gates="+strings.Join(gates, ",")))
			}
			env := testenv.Start(t, opts...)
			ctx := context.Background()
			if _, err := env.StartKWOK(ctx, testenv.KWOKOptions{}); err != nil {
				t.Fatal(err)
			}
			ns, err := env.CreateNamespace(ctx, "ref")
			if err != nil {
				t.Fatal(err)
			}
			s := &scheduler{name: impl, env: env, c: env.Client, ns: ns, gates: gates}
			t.Cleanup(func() {
				if !t.Failed() {
					return
				}
				t.Logf("[%s] pods at the end of the failed test:\n%s", impl, s.dump())
				if s.wasm != nil { // its tail is printed by startScheduler; a spin can hide the cause
					t.Logf("wasmsched log, head (scheduling lines only):\n%s", headMatching(s.wasm.Log(), 40, "component="))
				}
			})
			f(t, s)
		})
	}
}

// start runs the implementation against the control plane and waits until
// it is ready; it stops at the end of the test.
func (s *scheduler) start(t *testing.T) {
	t.Helper()
	switch s.name {
	case implUpstream:
		s.upstream = startUpstream(t, s.env, s.gates...)
	default:
		s.wasm = startScheduler(t, s.env.Kubeconfig)
	}
}

// metric sums the samples of a metric family whose labels contain every
// given label (testenv.SumSamples) on the running implementation's
// /metrics: both serve the upstream names.
func (s *scheduler) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	return testenv.SumSamples(s.page(t), name, labels...)
}

// page is the running implementation's /metrics.
func (s *scheduler) page(t *testing.T) []byte {
	t.Helper()
	var page []byte
	var err error
	switch {
	case s.upstream != nil:
		page, err = s.upstream.Get(context.Background(), "/metrics")
	case s.wasm != nil:
		page, err = s.wasm.Get(context.Background(), "/metrics")
	default:
		t.Fatalf("[%s] /metrics asked before start", s.name)
	}
	if err != nil || page == nil {
		t.Fatalf("[%s] GET /metrics: %v", s.name, err)
	}
	return page
}

// dump renders every pod of the namespace: node, nomination, PodScheduled
// and DisruptionTarget conditions, deletion; for failure reports.
func (s *scheduler) dump() string {
	list, err := s.c.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		fmt.Fprintf(&b, "  %s: node=%q nominated=%q %s", p.Name, p.Spec.NodeName, p.Status.NominatedNodeName, conditionText(scheduledCondition(&p)))
		if c := podCondition(&p, v1.DisruptionTarget); c != nil {
			fmt.Fprintf(&b, " %s", conditionText(c))
		}
		if p.DeletionTimestamp != nil {
			b.WriteString(" terminating")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// headMatching returns the first n lines of log containing substr.
func headMatching(log string, n int, substr string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// logf logs a line marked with the implementation, for the report.
func (s *scheduler) logf(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("["+s.name+"] "+format, args...)
}

// ---- upstream kube-scheduler ----

// upstreamProc is a running kube-scheduler v1.37.1.
type upstreamProc = testenv.KubeScheduler

// startUpstream runs upstream kube-scheduler with one profile named
// schedulerName (testenv.StartKubeScheduler) and stops it at the end of the
// test, printing its log if the test failed. Gang scheduling (KEP-4671) and
// workload-aware preemption (KEP-5710) are behind GenericWorkload alone in
// 1.37 (beta, off by default; there is no GangScheduling or
// WorkloadAwarePreemption gate), which StartKubeScheduler always sets, as
// testenv's apiserver does. SchedulerAsyncPreemption and
// NominatedNodeNameForExpectation (beta) are on by default.
// PodGroupPreemptionPolicy (alpha) is off unless a scenario asks for it on
// both sides (forEachSchedulerWithGates).
func startUpstream(t *testing.T, env *testenv.Env, extraGates ...string) *upstreamProc {
	t.Helper()
	p, err := env.StartKubeScheduler(context.Background(), testenv.KubeSchedulerOptions{
		SchedulerName: schedulerName, QPS: 500, Burst: 1000, FeatureGates: extraGates,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("upstream kube-scheduler log (tail of %s):\n%s", p.LogPath(), p.Tail(200))
		}
	})
	t.Logf("upstream kube-scheduler ready on %s (extra gates %v)", p.Addr, extraGates)
	return p
}

// ---- objects ----

// Priority classes every reference scenario may use.
const (
	pcLow       = "ref-low"        // 10
	pcMid       = "ref-mid"        // 20
	pcHigh      = "ref-high"       // 1000
	pcHighNever = "ref-high-never" // 1000, preemptionPolicy Never
)

// createPriorityClasses creates pcLow, pcMid, pcHigh and pcHighNever.
func createPriorityClasses(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	never := v1.PreemptNever
	for _, pc := range []schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: pcLow}, Value: 10},
		{ObjectMeta: metav1.ObjectMeta{Name: pcMid}, Value: 20},
		{ObjectMeta: metav1.ObjectMeta{Name: pcHigh}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: pcHighNever}, Value: 1000, PreemptionPolicy: &never},
	} {
		if _, err := c.SchedulingV1().PriorityClasses().Create(context.Background(), &pc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create PriorityClass %s: %v", pc.Name, err)
		}
	}
}

// podOpt changes a pod built by newPod.
type podOpt func(*v1.Pod)

func withPriorityClass(name string) podOpt {
	return func(p *v1.Pod) { p.Spec.PriorityClassName = name }
}

func inGroup(group string) podOpt {
	return func(p *v1.Pod) { p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group} }
}

func withLabels(kv ...string) podOpt {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withNodeSelector(k, v string) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[k] = v
	}
}

// newPod builds a pause pod for schedulerName requesting cpu (and 100Mi).
func newPod(ns, name, cpu string, opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name:  "c",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(cpu),
					v1.ResourceMemory: resource.MustParse("100Mi"),
				}},
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// submit creates a pod, retrying while the Priority admission plugin does
// not know a just created PriorityClass yet (it reads an informer).
func submit(t *testing.T, c kubernetes.Interface, p *v1.Pod) *v1.Pod {
	t.Helper()
	var out *v1.Pod
	waitFor(t, 30*time.Second, "create pod "+p.Name, func() (bool, error) {
		var err error
		out, err = c.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
		if err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no PriorityClass") {
			return false, nil
		}
		return err == nil, err
	})
	return out
}

// runOn creates p bound to node (no scheduler involved), waits until KWOK
// runs it, and sets its status.startTime to start: victims' start times are
// part of upstream's victim order, and KWOK stamps "now" with a resolution
// of one second.
func runOn(t *testing.T, c kubernetes.Interface, p *v1.Pod, node string, start time.Time) *v1.Pod {
	t.Helper()
	p.Spec.NodeName = node
	submit(t, c, p)
	waitFor(t, 60*time.Second, "pod "+p.Name+" Running on "+node, func() (bool, error) {
		got, err := c.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Phase == v1.PodRunning, nil
	})
	patch := fmt.Sprintf(`{"status":{"startTime":%q}}`, start.UTC().Format(time.RFC3339))
	out, err := c.CoreV1().Pods(p.Namespace).Patch(context.Background(), p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("set startTime of %s: %v", p.Name, err)
	}
	return out
}

// fakeNodes creates n KWOK nodes with cpu and 32Gi and returns their names.
func fakeNodes(t *testing.T, s *scheduler, n int, cpu string, labels map[string]string) []string {
	t.Helper()
	nodes, err := s.env.CreateFakeNodes(context.Background(), n, testenv.NodeSpec{CPU: cpu, Memory: "32Gi", Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(nodes))
	for i, nd := range nodes {
		names[i] = nd.Name
	}
	if err := s.env.WaitNodesReady(context.Background(), names...); err != nil {
		t.Fatal(err)
	}
	return names
}

// groupSpec describes a PodGroup for createGroup.
type groupSpec struct {
	name          string
	minCount      int32
	priorityClass string
	all           bool // DisruptionMode all (default single)
	// preemptionPolicy, when set, is written in the spec (needs the
	// PodGroupPreemptionPolicy gate). With that gate on, v1.37.1 defaults an
	// unset policy to PreemptLowerPriority *before* the Priority admission
	// plugin runs, which then rejects a group whose PriorityClass says Never
	// ("the string value of PreemptionPolicy (PreemptLowerPriority) must not
	// be provided"): such a group must spell out Never itself.
	preemptionPolicy string
}

func createGroup(t *testing.T, s *scheduler, g groupSpec) *schedulingv1beta1.PodGroup {
	t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: g.name},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: g.minCount},
			},
			PriorityClassName: g.priorityClass,
		},
	}
	if g.all {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	if g.preemptionPolicy != "" {
		pp := schedulingv1beta1.PreemptionPolicy(g.preemptionPolicy)
		pg.Spec.PreemptionPolicy = &pp
	}
	var out *schedulingv1beta1.PodGroup
	waitFor(t, 30*time.Second, "create PodGroup "+g.name, func() (bool, error) {
		var err error
		out, err = s.c.SchedulingV1beta1().PodGroups(s.ns).Create(context.Background(), pg, metav1.CreateOptions{})
		if err != nil && apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no PriorityClass") {
			return false, nil
		}
		return err == nil, err
	})
	return out
}

// protect creates a PDB with minAvailable 1 over pods labelled app=value
// and, since no disruption controller runs, writes its status as that
// controller would for one healthy pod: disruptionsAllowed 0.
func protect(t *testing.T, s *scheduler, name, value string) {
	t.Helper()
	ctx := context.Background()
	one := intstr.FromInt32(1)
	pdb, err := s.c.PolicyV1().PodDisruptionBudgets(s.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &one,
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create PDB %s: %v", name, err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: 0,
		CurrentHealthy:     1,
		DesiredHealthy:     1,
		ExpectedPods:       1,
	}
	if _, err := s.c.PolicyV1().PodDisruptionBudgets(s.ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set the status of PDB %s: %v", name, err)
	}
}

// ---- observing ----

// podWatch records every version of every pod of a namespace from the
// moment it is started, deletions included: victims of preemption on KWOK
// nodes disappear within milliseconds, and only a watch sees the conditions
// they carried on the way out.
type podWatch struct {
	mu      sync.Mutex
	seq     int                  // events so far: one watch orders them all (by resourceVersion)
	history map[string][]*v1.Pod // by name, in order
	deleted map[string]int       // name -> seq of its Deleted event
	marked  map[string]int       // name -> seq of the first version with a deletionTimestamp
	bound   map[string]int       // name -> seq of the first version with spec.nodeName
	cancel  context.CancelFunc
	done    chan struct{}
}

func watchPods(t *testing.T, c kubernetes.Interface, ns string) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &podWatch{history: map[string][]*v1.Pod{}, deleted: map[string]int{}, marked: map[string]int{}, bound: map[string]int{}, cancel: cancel, done: make(chan struct{})}
	for i := range list.Items {
		w.record(watch.Added, &list.Items[i])
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, podWatcher{c: c, ns: ns})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				p, isPod := ev.Object.(*v1.Pod)
				if !isPod {
					continue
				}
				w.record(ev.Type, p)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

func (w *podWatch) record(typ watch.EventType, p *v1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	w.history[p.Name] = append(w.history[p.Name], p.DeepCopy())
	if _, ok := w.bound[p.Name]; !ok && p.Spec.NodeName != "" {
		w.bound[p.Name] = w.seq
	}
	if _, ok := w.marked[p.Name]; !ok && (p.DeletionTimestamp != nil || typ == watch.Deleted) {
		w.marked[p.Name] = w.seq
	}
	if typ == watch.Deleted {
		w.deleted[p.Name] = w.seq
	}
}

// boundAfterDeletions asserts that pod was bound only after the deletion of
// every one of victims had begun, and after at least one of them was gone.
// (Upstream binds as soon as enough room is free: with three victims it
// may bind while the last one is still being deleted.)
func (w *podWatch) boundAfterDeletions(t *testing.T, pod string, victims ...string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.bound[pod]
	if !ok {
		t.Errorf("pod %s: the watch never saw it bound", pod)
		return
	}
	gone := false
	for _, v := range victims {
		m, ok := w.marked[v]
		switch {
		case !ok:
			t.Errorf("victim %s: the watch never saw its deletion", v)
		case m > b:
			t.Errorf("pod %s was bound before the deletion of victim %s began", pod, v)
		}
		if d, ok := w.deleted[v]; ok && d < b {
			gone = true
		}
	}
	if len(victims) > 0 && !gone {
		t.Errorf("pod %s was bound before any of its victims %v was gone", pod, victims)
	}
}

// pendingConditions returns the distinct PodScheduled conditions the pod
// carried before it was bound, in order.
func (w *podWatch) pendingConditions(name string) []string {
	var out []string
	for _, p := range w.versions(name) {
		if p.Spec.NodeName != "" {
			break
		}
		if c := scheduledCondition(p); c != nil {
			txt := conditionText(c)
			if len(out) == 0 || out[len(out)-1] != txt {
				out = append(out, txt)
			}
		}
	}
	return out
}

// checkPendingUnschedulable asserts that the pod, before it was bound,
// reported PodScheduled=False reason Unschedulable with a message containing
// every want (as upstream does for a preemptor while its victims go).
func (w *podWatch) checkPendingUnschedulable(t *testing.T, name string, want ...string) {
	t.Helper()
	for _, p := range w.versions(name) {
		if p.Spec.NodeName != "" {
			break
		}
		c := scheduledCondition(p)
		if c == nil || c.Status != v1.ConditionFalse || c.Reason != v1.PodReasonUnschedulable {
			continue
		}
		missing := false
		for _, s := range want {
			missing = missing || !strings.Contains(c.Message, s)
		}
		if !missing {
			return
		}
	}
	t.Errorf("pod %s: no PodScheduled=False reason Unschedulable with %q before it was bound; saw %q", name, want, w.pendingConditions(name))
}

type podWatcher struct {
	c  kubernetes.Interface
	ns string
}

func (w podWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return w.c.CoreV1().Pods(w.ns).Watch(ctx, o)
}

// deletedPods returns the names of the pods deleted so far, sorted.
func (w *podWatch) deletedPods() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for n := range w.deleted {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// versions returns the recorded versions of a pod.
func (w *podWatch) versions(name string) []*v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.history[name])
}

// firstNominated returns the first nominatedNodeName the pod carried while
// it was not bound, or "".
func (w *podWatch) firstNominated(name string) string {
	for _, p := range w.versions(name) {
		if p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" {
			return p.Status.NominatedNodeName
		}
	}
	return ""
}

// preemptionCondition returns the DisruptionTarget condition a pod carried
// in its last version before it was marked for deletion, and whether that
// version existed (the condition was written before the delete call).
func (w *podWatch) preemptionCondition(name string) (*v1.PodCondition, bool) {
	var cond *v1.PodCondition
	for _, p := range w.versions(name) {
		if p.DeletionTimestamp != nil {
			return cond, cond != nil
		}
		if c := podCondition(p, v1.DisruptionTarget); c != nil {
			cond = c
		}
	}
	return cond, false
}

func podCondition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			c := p.Status.Conditions[i]
			return &c
		}
	}
	return nil
}

// conditionText renders a condition for the report.
func conditionText(c *v1.PodCondition) string {
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s=%s reason=%q message=%q", c.Type, c.Status, c.Reason, c.Message)
}

// waitDeleted waits until exactly the named pods are gone (among those the
// watch saw), and fails if others are.
func (w *podWatch) waitDeleted(t *testing.T, timeout time.Duration, want ...string) {
	t.Helper()
	sort.Strings(want)
	waitFor(t, timeout, fmt.Sprintf("pods %v deleted", want), func() (bool, error) {
		got := w.deletedPods()
		for _, n := range got {
			if !slices.Contains(want, n) {
				return false, fmt.Errorf("pod %s was deleted; want only %v deleted (deleted so far: %v)", n, want, got)
			}
		}
		return len(got) == len(want), nil
	})
}

// checkPreempted asserts that each victim carried DisruptionTarget=True
// reason PreemptionByScheduler before it was marked for deletion, and that a
// Preempted event regards it.
func checkPreempted(t *testing.T, s *scheduler, w *podWatch, victims ...string) {
	t.Helper()
	for _, v := range victims {
		cond, before := w.preemptionCondition(v)
		switch {
		case cond == nil:
			t.Errorf("victim %s: no DisruptionTarget condition was seen before its deletion", v)
		case !before:
			t.Errorf("victim %s: DisruptionTarget condition only after deletion started", v)
		case cond.Status != v1.ConditionTrue || cond.Reason != v1.PodReasonPreemptionByScheduler:
			t.Errorf("victim %s: %s, want DisruptionTarget=True reason %s", v, conditionText(cond), v1.PodReasonPreemptionByScheduler)
		default:
			s.logf(t, "victim %s before deletion: %s", v, conditionText(cond))
		}
		var ev string
		waitForSoft(30*time.Second, func() bool {
			for _, e := range eventsFor(t, s.c, s.ns, v) {
				if e.Reason == "Preempted" {
					ev = fmt.Sprintf("type=%s reason=%s action=%s note=%q related=%v", e.Type, e.Reason, e.Action, e.Note, relatedName(e.Related))
					return true
				}
			}
			return false
		})
		if ev == "" {
			t.Errorf("victim %s: no event with reason Preempted", v)
		} else {
			s.logf(t, "victim %s event: %s", v, ev)
		}
	}
}

func relatedName(r *v1.ObjectReference) string {
	if r == nil {
		return "<nil>"
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// waitForSoft polls cond every 100 ms until it holds or timeout passes,
// and reports which.
func waitForSoft(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitCondition waits until the pod's PodScheduled condition has reason
// and returns the pod.
func waitCondition(t *testing.T, s *scheduler, name string, reason string, timeout time.Duration) *v1.Pod {
	t.Helper()
	var p *v1.Pod
	var last *v1.PodCondition
	ok := waitForSoft(timeout, func() bool {
		var err error
		p, err = s.c.CoreV1().Pods(s.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = scheduledCondition(p)
		return last != nil && last.Reason == reason
	})
	if !ok {
		t.Fatalf("pod %s: PodScheduled reason %q not within %v; last condition %s", name, reason, timeout, conditionText(last))
	}
	return p
}

// schedulingEvents renders the events regarding a pod, for the report.
func schedulingEvents(t *testing.T, s *scheduler, name string) []string {
	t.Helper()
	var out []string
	for _, e := range eventsFor(t, s.c, s.ns, name) {
		out = append(out, fmt.Sprintf("%s/%s: %q", e.Type, e.Reason, e.Note))
	}
	return out
}

// stillThere asserts each pod exists, is not terminating and is bound to node
// (when node is not empty).
func stillThere(t *testing.T, s *scheduler, node string, names ...string) {
	t.Helper()
	for _, n := range names {
		p, err := s.c.CoreV1().Pods(s.ns).Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Errorf("pod %s: %v (it should not have been preempted)", n, err)
			continue
		}
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s is terminating; it should not have been preempted", n)
		}
		if node != "" && p.Spec.NodeName != node {
			t.Errorf("pod %s on %q, want %q", n, p.Spec.NodeName, node)
		}
	}
}

// bound returns the names of the pods bound so far among names.
func bound(t *testing.T, s *scheduler, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		if p := getPod(t, s.c, s.ns, n); p.Spec.NodeName != "" {
			out = append(out, n)
		}
	}
	return out
}
