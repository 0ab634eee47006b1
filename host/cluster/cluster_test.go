package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cluster"
	"github.com/wasmsched/wasmsched/host/podview"
)

// Builders of v1 test objects, after kube-scheduler's st.MakePod().

type podBuilder struct{ p v1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{p: v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{SchedulerName: "wasmsched", Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}}}},
	}}
}

func (b *podBuilder) obj() *v1.Pod                      { return b.p.DeepCopy() }
func (b *podBuilder) scheduler(name string) *podBuilder { b.p.Spec.SchedulerName = name; return b }
func (b *podBuilder) node(name string) *podBuilder      { b.p.Spec.NodeName = name; return b }
func (b *podBuilder) phase(p v1.PodPhase) *podBuilder   { b.p.Status.Phase = p; return b }
func (b *podBuilder) group(name string) *podBuilder {
	b.p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return b
}

func makeNode(name string) *v1.Node {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("110")}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)},
		Status:     v1.NodeStatus{Allocatable: rl, Capacity: rl},
	}
}

func makePodGroup(name string, minCount int32) *schedv1beta1.PodGroup {
	return &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pg-" + name)},
		Spec: schedv1beta1.PodGroupSpec{SchedulingPolicy: schedv1beta1.PodGroupSchedulingPolicy{
			Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: minCount}}},
	}
}

// callLog records the calls the handlers make, in order, as
// "<who> <method> <object> [details]".
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

// of returns the calls whose caller is one of who, in order.
func (l *callLog) of(who ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, c := range l.calls {
		for _, w := range who {
			if strings.HasPrefix(c, w+" ") {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func ref(m metav1.Object) string { return m.GetNamespace() + "/" + m.GetName() }

// fakeQueue is a cluster.Queue that records its calls.
type fakeQueue struct {
	name string
	log  *callLog
}

var _ cluster.Queue = (*fakeQueue)(nil)

func (q *fakeQueue) Add(pod *v1.Pod)          { q.log.add("%s Add %s", q.name, ref(pod)) }
func (q *fakeQueue) Update(_, newPod *v1.Pod) { q.log.add("%s Update %s", q.name, ref(newPod)) }
func (q *fakeQueue) Delete(pod *v1.Pod)       { q.log.add("%s Delete %s", q.name, ref(pod)) }
func (q *fakeQueue) AddPodGroup(pg *schedv1beta1.PodGroup) {
	q.log.add("%s AddPodGroup %s", q.name, ref(pg))
}
func (q *fakeQueue) UpdatePodGroup(pg *schedv1beta1.PodGroup) {
	q.log.add("%s UpdatePodGroup %s", q.name, ref(pg))
}
func (q *fakeQueue) DeletePodGroup(pg *schedv1beta1.PodGroup) {
	q.log.add("%s DeletePodGroup %s", q.name, ref(pg))
}
func (q *fakeQueue) MoveOnEvent(ev abi.Event) { q.log.add("%s Move %s", q.name, describe(ev)) }

// MoveOnLazyEvent records the event built, as MoveOnEvent, after checking
// that it is of the resource and action announced.
func (q *fakeQueue) MoveOnLazyEvent(res abi.EventResource, act abi.ActionType, build func() abi.Event) {
	ev := build()
	if ev.Resource != res || ev.Action != act {
		q.log.add("%s MoveLazy announced %v/%v, built %v/%v", q.name, res, act, ev.Resource, ev.Action)
		return
	}
	q.MoveOnEvent(ev)
}

// MoveOnEventFor records the event with the node of its pod and the
// highest of a few priorities its check accepts.
func (q *fakeQueue) MoveOnEventFor(ev abi.Event, only func(abi.PodView) bool) {
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &ev))
	if err != nil {
		q.log.add("%s MoveFor undecodable: %v", q.name, err)
		return
	}
	node := "?"
	if p, ok := v.OldPod(); ok {
		node = p.NodeName()
	}
	accepts := "none"
	for _, prio := range []int32{0, 5, 10, 11, 1000} {
		pod := makePod("probe").obj()
		pod.Spec.Priority = &prio
		rec := podview.Pod(pod, nil, abi.PodQueueState{}, podview.Plugins{})
		pv, err := abi.ReadPod(abi.AppendPod(nil, &rec))
		if err == nil && only(pv) {
			accepts = fmt.Sprintf("<=%d", prio)
		}
	}
	q.log.add("%s MoveFor %s on %s priority%s", q.name, describe(ev), node, accepts)
}

// describe decodes an event with the abi views: "<resource> <action>
// <object>", the object being the new one, or the old one on Delete, with
// what the record says about the pods on a node or a group's members.
func describe(ev abi.Event) string {
	v, err := abi.ReadEvent(abi.AppendEvent(nil, &ev))
	if err != nil {
		return "undecodable: " + err.Error()
	}
	s := v.Resource().String() + " " + v.Action().String()
	switch v.Resource() {
	case abi.ResourceNode:
		n, ok := v.NewNode()
		if !ok {
			n, ok = v.OldNode()
		}
		if ok {
			s += fmt.Sprintf(" %s pods=%d", n.Name(), n.Requested().Get("pods"))
		}
	case abi.ResourcePod, abi.ResourceUnscheduledPod:
		p, ok := v.NewPod()
		if !ok {
			p, ok = v.OldPod()
		}
		if ok {
			s += " " + p.Namespace() + "/" + p.Name()
			if p.GroupName() != "" {
				s += fmt.Sprintf(" group=%s members=%d", p.GroupName(), p.GroupMembers())
			}
		}
	case abi.ResourcePodGroup:
		g, ok := v.NewPodGroup()
		if !ok {
			g, ok = v.OldPodGroup()
		}
		if ok {
			s += fmt.Sprintf(" %s/%s members=%d", g.Namespace(), g.Name(), g.Members())
		}
	default:
		o, ok := v.NewStorage()
		if !ok {
			o, ok = v.OldStorage()
		}
		if ok {
			s += " " + o.Namespace() + "/" + o.Name()
		}
	}
	return s
}

// recCache is the real cache with the handlers' writes recorded.
type recCache struct {
	*cache.Cache
	log *callLog
}

var _ cluster.Cache = (*recCache)(nil)

func (c *recCache) AddNode(n *v1.Node) { c.log.add("cache AddNode %s", n.Name); c.Cache.AddNode(n) }
func (c *recCache) UpdateNode(o, n *v1.Node) {
	c.log.add("cache UpdateNode %s", n.Name)
	c.Cache.UpdateNode(o, n)
}
func (c *recCache) RemoveNode(n *v1.Node) error {
	c.log.add("cache RemoveNode %s", n.Name)
	return c.Cache.RemoveNode(n)
}
func (c *recCache) AddPod(p *v1.Pod) error {
	c.log.add("cache AddPod %s %s", ref(p), p.Spec.NodeName)
	return c.Cache.AddPod(p)
}
func (c *recCache) UpdatePod(o, p *v1.Pod) error {
	c.log.add("cache UpdatePod %s %s", ref(p), p.Spec.NodeName)
	return c.Cache.UpdatePod(o, p)
}
func (c *recCache) RemovePod(p *v1.Pod) error {
	c.log.add("cache RemovePod %s", ref(p))
	return c.Cache.RemovePod(p)
}

// syncBuffer is a bytes.Buffer for a logger's handler.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// clusterEnv is a Cluster over a fake clientset, with two profiles'
// queues ("wasmsched" as q1, "second" as q2) and a recorded real cache.
type clusterEnv struct {
	t       *testing.T
	ctx     context.Context
	client  *fake.Clientset
	cache   *cache.Cache
	log     *callLog
	members *cluster.Members
	cl      *cluster.Cluster
	logs    *syncBuffer
}

// newCluster starts a Cluster; gangs says whether discovery serves
// scheduling.k8s.io/v1beta1 podgroups. objs exist before the informers
// start.
func newCluster(t *testing.T, gangs bool, objs ...runtime.Object) *clusterEnv {
	t.Helper()
	return newClusterWith(t, gangs, nil, objs...)
}

func newClusterWith(t *testing.T, gangs bool, opts []cluster.Option, objs ...runtime.Object) *clusterEnv {
	t.Helper()
	e := &clusterEnv{t: t, client: fake.NewClientset(objs...), cache: cache.New(), log: &callLog{},
		members: cluster.NewMembers(), logs: &syncBuffer{}}
	disc := e.client.Discovery().(*fakediscovery.FakeDiscovery)
	if gangs {
		disc.Resources = []*metav1.APIResourceList{{
			GroupVersion: schedv1beta1.SchemeGroupVersion.String(),
			APIResources: []metav1.APIResource{{Name: "podgroups", Namespaced: true, Kind: "PodGroup"},
				{Name: "workloads", Namespaced: true, Kind: "Workload"}},
		}}
	}
	queues := map[string]cluster.Queue{
		"wasmsched": &fakeQueue{name: "q1", log: e.log},
		"second":    &fakeQueue{name: "q2", log: e.log},
	}
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	e.ctx = ctx
	cl, err := cluster.New(ctx, e.client, &recCache{Cache: e.cache, log: e.log}, queues, e.members, logger, opts...)
	if err != nil {
		cancel()
		t.Fatalf("New: %v", err)
	}
	e.cl = cl
	t.Cleanup(cl.Shutdown)
	t.Cleanup(cancel) // runs first: stops the informers Shutdown waits for
	// ctx is the informers' lifetime too.
	if err := cl.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return e
}

// expect waits until the calls of who are want, and fails if they are
// something else once they are as many. A call that should not happen is
// caught by a later expected one: the handlers of one informer run in order.
func (e *clusterEnv) expect(want []string, who ...string) {
	e.t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			got = e.log.of(who...)
			return len(got) >= len(want), nil
		})
	if err != nil {
		e.t.Fatalf("waiting for %d calls of %v: %v; got %q", len(want), who, err, got)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		e.t.Fatalf("calls of %v (-want, +got):\n%s", who, diff)
	}
}

func (e *clusterEnv) createPod(p *v1.Pod) {
	e.t.Helper()
	if _, err := e.client.CoreV1().Pods(p.Namespace).Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *clusterEnv) updatePod(p *v1.Pod) {
	e.t.Helper()
	if _, err := e.client.CoreV1().Pods(p.Namespace).Update(e.ctx, p, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *clusterEnv) deletePod(p *v1.Pod) {
	e.t.Helper()
	if err := e.client.CoreV1().Pods(p.Namespace).Delete(e.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestNewNeedsAProfile(t *testing.T) {
	_, err := cluster.New(context.Background(), fake.NewClientset(), cache.New(), nil, cluster.NewMembers(),
		slog.New(slog.DiscardHandler))
	if err == nil {
		t.Error("New without queues: want an error")
	}
}

func TestUnassignedPodsGoToTheirProfilesQueue(t *testing.T) {
	e := newCluster(t, false)

	e.createPod(makePod("ours").obj())
	e.createPod(makePod("theirs").scheduler("default-scheduler").obj())
	e.createPod(makePod("second").scheduler("second").obj())

	// Both queues hear of every pod added; only its profile's queue gets it.
	e.expect([]string{
		"q1 Add default/ours",
		"q1 Move UnscheduledPod Add default/ours",
		"q1 Move UnscheduledPod Add default/second",
	}, "q1")
	e.expect([]string{
		"q2 Move UnscheduledPod Add default/ours",
		"q2 Add default/second",
		"q2 Move UnscheduledPod Add default/second",
	}, "q2")
	if got := e.log.of("cache"); len(got) != 0 {
		t.Errorf("cache calls for unassigned pods: %q", got)
	}
}

func TestPendingPodUpdateAndDelete(t *testing.T) {
	e := newCluster(t, false)
	pod := makePod("p").obj()
	e.createPod(pod)
	e.expect([]string{"q1 Add default/p", "q1 Move UnscheduledPod Add default/p"}, "q1")

	// A status-only change: the queue gets the object, no event.
	st := makePod("p").obj()
	st.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
	e.updatePod(st)
	// A label change is an event.
	labelled := st.DeepCopy()
	labelled.Labels = map[string]string{"app": "x"}
	e.updatePod(labelled)
	e.deletePod(labelled)

	e.expect([]string{
		"q1 Add default/p",
		"q1 Move UnscheduledPod Add default/p",
		"q1 Update default/p",
		"q1 Update default/p",
		"q1 Move UnscheduledPod UpdatePodLabel default/p",
		"q1 Delete default/p",
		"q1 Move UnscheduledPod Delete default/p",
	}, "q1")
	e.expect([]string{
		"q2 Move UnscheduledPod Add default/p",
		"q2 Move UnscheduledPod UpdatePodLabel default/p",
		"q2 Move UnscheduledPod Delete default/p",
	}, "q2")
}

func TestAssignedPodsGoToTheCache(t *testing.T) {
	e := newCluster(t, false)
	e.createPod(makePod("ours").node("n1").obj())
	e.createPod(makePod("theirs").scheduler("default-scheduler").node("n1").obj())

	e.expect([]string{
		"cache AddPod default/ours n1",
		"q1 Move Pod Add default/ours",
		"cache AddPod default/theirs n1",
		"q1 Move Pod Add default/theirs",
	}, "cache", "q1")
	if n := e.cache.PodCount(); n != 2 {
		t.Errorf("cache holds %d pods, want 2", n)
	}

	e.deletePod(makePod("theirs").obj())
	e.expect([]string{
		"cache AddPod default/ours n1",
		"q1 Move Pod Add default/ours",
		"cache AddPod default/theirs n1",
		"q1 Move Pod Add default/theirs",
		"cache RemovePod default/theirs",
		"q1 Move Pod Delete default/theirs",
	}, "cache", "q1")
	if _, ok := e.cache.GetPod("uid-theirs"); ok {
		t.Error("the deleted pod is still in the cache")
	}
}

// A pod the informer reports replaced under its name (a relist after the
// pod was deleted and created again) is the old pod's deletion and the new
// one's addition, in the cache and in the queue: the old one must not
// keep its node's room.
func TestPodReplacedUnderItsName(t *testing.T) {
	e := newCluster(t, false)
	e.createPod(makePod("assigned").node("n1").obj())
	e.createPod(makePod("pending").obj())
	e.expect([]string{"cache AddPod default/assigned n1"}, "cache")
	e.expect([]string{"q1 Move Pod Add default/assigned", "q1 Add default/pending", "q1 Move UnscheduledPod Add default/pending"}, "q1")

	again := makePod("assigned").node("n2").obj()
	again.UID = "uid-assigned-2"
	e.updatePod(again)
	pending := makePod("pending").obj()
	pending.UID = "uid-pending-2"
	e.updatePod(pending)
	e.expect([]string{
		"cache AddPod default/assigned n1",
		"cache RemovePod default/assigned",
		"cache AddPod default/assigned n2",
	}, "cache")
	e.expect([]string{
		"q1 Move Pod Add default/assigned", "q1 Add default/pending", "q1 Move UnscheduledPod Add default/pending",
		"q1 Move Pod Delete default/assigned", "q1 Move Pod Add default/assigned",
		"q1 Delete default/pending", "q1 Move UnscheduledPod Delete default/pending",
		"q1 Add default/pending", "q1 Move UnscheduledPod Add default/pending",
	}, "q1")
	if _, ok := e.cache.GetPod("uid-assigned"); ok {
		t.Error("the replaced pod is still in the cache")
	}
	if _, ok := e.cache.GetPod("uid-assigned-2"); !ok {
		t.Error("the new pod is not in the cache")
	}
}

// A pod that gets bound leaves its queue and enters the cache, as with
// upstream's handler (cache first), and its binding is one event, an
// assigned pod's Add: not also an unscheduled pod's Delete, since the pod
// was not deleted.
func TestBindingMovesThePodFromItsQueueToTheCache(t *testing.T) {
	e := newCluster(t, false)
	pod := makePod("p").obj()
	e.createPod(pod)
	e.expect([]string{"q1 Add default/p", "q1 Move UnscheduledPod Add default/p"}, "cache", "q1")

	bound := pod.DeepCopy()
	bound.Spec.NodeName = "n1"
	e.updatePod(bound)
	// A later pod, so that a stray call for p shows up before it.
	e.createPod(makePod("sentinel").obj())

	e.expect([]string{
		"q1 Add default/p",
		"q1 Move UnscheduledPod Add default/p",
		"cache AddPod default/p n1",
		"q1 Move Pod Add default/p",
		"q1 Delete default/p",
		"q1 Add default/sentinel",
		"q1 Move UnscheduledPod Add default/sentinel",
	}, "cache", "q1")
	if got, ok := e.cache.GetPod(pod.UID); !ok || got.Spec.NodeName != "n1" {
		t.Errorf("cache has %v, %v; want the pod on n1", got, ok)
	}
}

// An update of a pod the cache has assumed (its binding in flight) is not
// passed to the queue, as upstream.
func TestUpdateOfAnAssumedPodIsSkipped(t *testing.T) {
	e := newCluster(t, false)
	pod := makePod("p").obj()
	e.createPod(pod)
	e.expect([]string{"q1 Add default/p", "q1 Move UnscheduledPod Add default/p"}, "q1")
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = "n1"
	if err := e.cache.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}

	labelled := pod.DeepCopy()
	labelled.Labels = map[string]string{"app": "x"}
	e.updatePod(labelled)
	e.createPod(makePod("sentinel").obj())

	e.expect([]string{
		"q1 Add default/p",
		"q1 Move UnscheduledPod Add default/p",
		"q1 Add default/sentinel",
		"q1 Move UnscheduledPod Add default/sentinel",
	}, "q1")
}

func TestNodeEvents(t *testing.T) {
	e := newCluster(t, false)
	if err := e.cache.AddPod(makePod("running").node("n1").obj()); err != nil {
		t.Fatal(err)
	}
	nodes := e.client.CoreV1().Nodes()
	n := makeNode("n1")
	if _, err := nodes.Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labelled := n.DeepCopy()
	labelled.Labels = map[string]string{"zone": "a"}
	if _, err := nodes.Update(e.ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A heartbeat changes nothing a pod's placement depends on: no event.
	heartbeat := labelled.DeepCopy()
	heartbeat.Status.NodeInfo.KubeletVersion = "v1.37.1"
	if _, err := nodes.Update(e.ctx, heartbeat, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tainted := heartbeat.DeepCopy()
	tainted.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
	tainted.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("8"), v1.ResourcePods: resource.MustParse("110")}
	if _, err := nodes.Update(e.ctx, tainted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := nodes.Delete(e.ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The records carry the pods the cache has on the node.
	e.expect([]string{
		"cache AddNode n1",
		"q1 Move Node Add n1 pods=1",
		"cache UpdateNode n1",
		"q1 Move Node UpdateNodeLabel n1 pods=1",
		"cache UpdateNode n1",
		"cache UpdateNode n1",
		"q1 Move Node UpdateNodeAllocatable|UpdateNodeTaint n1 pods=1",
		"cache RemoveNode n1",
		"q1 Move Node Delete n1 pods=0",
	}, "cache", "q1")
	e.expect([]string{
		"q2 Move Node Add n1 pods=1",
		"q2 Move Node UpdateNodeLabel n1 pods=1",
		"q2 Move Node UpdateNodeAllocatable|UpdateNodeTaint n1 pods=1",
		"q2 Move Node Delete n1 pods=0",
	}, "q2")
	if n := e.cache.NodeCount(); n != 1 {
		t.Errorf("cache has %d node infos, want only the one kept for the pod of the deleted node", n)
	}
}

func TestMembersFollowTheInformer(t *testing.T) {
	e := newCluster(t, false)
	count := func() int32 { n, _ := e.members.Count("default", "g"); return n }
	waitCount := func(want int32) {
		t.Helper()
		err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return count() == want, nil })
		if err != nil {
			t.Fatalf("members of default/g: %d, want %d", count(), want)
		}
	}
	e.createPod(makePod("m1").group("g").obj())
	e.createPod(makePod("m2").group("g").node("n1").obj())
	e.createPod(makePod("m3").group("g").scheduler("default-scheduler").obj())
	waitCount(3)
	e.updatePod(makePod("m2").group("g").node("n1").phase(v1.PodSucceeded).obj())
	waitCount(2)
	e.updatePod(makePod("m3").group("h").scheduler("default-scheduler").obj())
	waitCount(1)
	e.deletePod(makePod("m1").obj())
	waitCount(0)
	if n, ok := e.members.Count("default", "h"); n != 1 || !ok {
		t.Errorf("members of default/h: %d, %v; want 1, true", n, ok)
	}
}

func TestWithoutPodGroups(t *testing.T) {
	e := newCluster(t, false, makePodGroup("g", 2))

	if e.cl.Gangs() {
		t.Error("Gangs() = true; the cluster does not serve podgroups")
	}
	if e.cl.PodGroupLister() != nil {
		t.Error("a PodGroup lister without PodGroups")
	}
	for _, a := range e.client.Actions() {
		if r := a.GetResource().Resource; r == "podgroups" || r == "workloads" {
			t.Errorf("%s %s: no informer should watch %s", a.GetVerb(), r, r)
		}
	}
	if n := strings.Count(e.logs.String(), "does not serve scheduling.k8s.io/v1beta1 podgroups"); n != 1 {
		t.Errorf("the missing podgroups were logged %d times, want once:\n%s", n, e.logs)
	}
	// A member is queued as a pod without a group record.
	e.createPod(makePod("m1").group("g").obj())
	e.expect([]string{"q1 Add default/m1", "q1 Move UnscheduledPod Add default/m1 group=g members=0"}, "q1")
}

func TestServedPodGroups(t *testing.T) {
	e := newCluster(t, true)

	if !e.cl.Gangs() {
		t.Fatal("Gangs() = false; the cluster serves podgroups")
	}
	if e.cl.PodGroupLister() == nil {
		t.Fatal("no PodGroup lister")
	}
	// Synced informers have listed (their watches may start later).
	listed := map[string]bool{}
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "list" {
			listed[a.GetResource().Resource] = true
		}
	}
	for _, r := range []string{"pods", "nodes", "poddisruptionbudgets", "podgroups", "workloads"} {
		if !listed[r] {
			t.Errorf("no informer lists %s (listed: %v)", r, listed)
		}
	}
	if strings.Contains(e.logs.String(), "does not serve") {
		t.Errorf("logged a missing podgroups API:\n%s", e.logs)
	}

	// A member arrives before its PodGroup: its record names the group
	// with zero counts (podview.Pod with no GroupInfo).
	e.createPod(makePod("m1").group("g").obj())
	e.expect([]string{"q1 Add default/m1", "q1 Move UnscheduledPod Add default/m1 group=g members=0"}, "q1")
	groups := e.client.SchedulingV1beta1().PodGroups("default")
	pg := makePodGroup("g", 2)
	if _, err := groups.Create(e.ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect([]string{
		"q1 Add default/m1",
		"q1 Move UnscheduledPod Add default/m1 group=g members=0",
		"q1 AddPodGroup default/g",
		"q1 Move PodGroup Add default/g members=1",
	}, "q1")
	// Wait for the lister to have the group, as the pod handler reads it.
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			_, err := e.cl.PodGroupLister().PodGroups("default").Get("g")
			return err == nil, nil
		}); err != nil {
		t.Fatal(err)
	}
	// A bound member the queues do not hold changes the count: they are
	// told through UpdatePodGroup.
	e.createPod(makePod("m2").group("g").node("n1").obj())
	e.expect([]string{
		"q1 Add default/m1",
		"q1 Move UnscheduledPod Add default/m1 group=g members=0",
		"q1 AddPodGroup default/g",
		"q1 Move PodGroup Add default/g members=1",
		"q1 Move Pod Add default/m2 group=g members=2",
		"q1 UpdatePodGroup default/g",
	}, "q1")

	updated := pg.DeepCopy()
	updated.Labels = map[string]string{"team": "a"}
	if _, err := groups.Update(e.ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := groups.Delete(e.ctx, "g", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expect([]string{
		"q1 Add default/m1",
		"q1 Move UnscheduledPod Add default/m1 group=g members=0",
		"q1 AddPodGroup default/g",
		"q1 Move PodGroup Add default/g members=1",
		"q1 Move Pod Add default/m2 group=g members=2",
		"q1 UpdatePodGroup default/g",
		"q1 UpdatePodGroup default/g",
		"q1 Move PodGroup UpdateOther default/g members=2",
		"q1 DeletePodGroup default/g",
		"q1 Move PodGroup Delete default/g members=2",
	}, "q1")
}

// fakeNominator records what it observes as "nominator <old> -> <new>",
// each "name@nominatedNodeName" or "nil".
type fakeNominator struct{ log *callLog }

func (n fakeNominator) Observe(old, pod *v1.Pod) {
	str := func(p *v1.Pod) string {
		if p == nil {
			return "nil"
		}
		return p.Name + "@" + p.Status.NominatedNodeName
	}
	n.log.add("nominator %s -> %s", str(old), str(pod))
}

// The nominator sees every pod change, ours or not, bound or not.
func TestNominatorObservesEveryPodChange(t *testing.T) {
	log := &callLog{}
	e := newClusterWith(t, false, []cluster.Option{cluster.WithNominator(fakeNominator{log})})
	// Each change waits for the one before to be observed: an informer that
	// lists after two changes sees them as one.
	observed := func(n int) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return len(log.of("nominator")) >= n, nil }); err != nil {
			t.Fatalf("waiting for %d observations: %v; got %q", n, err, log.of("nominator"))
		}
	}
	e.createPod(makePod("p").obj())
	observed(1)
	nominated := makePod("p").obj()
	nominated.Status.NominatedNodeName = "n1"
	e.updatePod(nominated)
	observed(2)
	e.createPod(makePod("theirs").scheduler("default-scheduler").node("n2").obj())
	observed(3)
	e.deletePod(nominated)

	want := []string{
		"nominator nil -> p@",
		"nominator p@ -> p@n1",
		"nominator nil -> theirs@",
		"nominator p@n1 -> nil",
	}
	if err := wait.PollUntilContextTimeout(e.ctx, time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return len(log.of("nominator")) >= len(want), nil }); err != nil {
		t.Fatalf("waiting for %d observations: %v; got %q", len(want), err, log.of("nominator"))
	}
	if diff := cmp.Diff(want, log.of("nominator")); diff != "" {
		t.Errorf("observed (-want, +got):\n%s", diff)
	}
}

// A pending pod's nomination that is cleared, moved, or deleted with the
// pod frees the room it held: the queues are offered the deletion of an
// assigned pod on the node it was nominated to, for pods of lower or equal
// priority only (upstream's AssignedPodDelete with getLEPriorityPreCheck).
func TestNominationGoneMovesLowerOrEqualPods(t *testing.T) {
	e := newCluster(t, false)
	w := makePod("p")
	prio := int32(10)
	w.p.Spec.Priority = &prio
	// Each change waits for the one before: an informer may see two
	// quick updates as one.
	steps := []struct {
		nominated string
		want      []string // q1's calls after the step
	}{
		{"", []string{"q1 Add default/p", "q1 Move UnscheduledPod Add default/p"}},
		{"n1", []string{"q1 Update default/p"}},
		{"n2", []string{"q1 Update default/p", "q1 MoveFor Pod Delete default/p on n1 priority<=10"}},
		{"", []string{"q1 Update default/p", "q1 MoveFor Pod Delete default/p on n2 priority<=10"}},
		{"n3", []string{"q1 Update default/p"}},
	}
	var want []string
	for i, st := range steps {
		w.p.Status.NominatedNodeName = st.nominated
		w.p.ResourceVersion = fmt.Sprint(i + 1)
		if i == 0 {
			e.createPod(w.obj())
		} else {
			e.updatePod(w.obj())
		}
		want = append(want, st.want...)
		e.expect(want, "q1")
	}
	e.deletePod(w.obj())
	want = append(want, "q1 Delete default/p", "q1 Move UnscheduledPod Delete default/p",
		"q1 MoveFor Pod Delete default/p on n3 priority<=10")
	e.expect(want, "q1")
	// The other profile's queue hears of it too: its pods counted the
	// nomination as well.
	e.expect([]string{
		"q2 Move UnscheduledPod Add default/p",
		"q2 MoveFor Pod Delete default/p on n1 priority<=10",
		"q2 MoveFor Pod Delete default/p on n2 priority<=10",
		"q2 Move UnscheduledPod Delete default/p",
		"q2 MoveFor Pod Delete default/p on n3 priority<=10",
	}, "q2")
}

// TestStorageEvents: the storage informers' changes reach every profile's
// queue as the actions upstream's volume plugins register (Add and Update,
// CSIDriver Update, VolumeAttachment Delete), and an update that changes
// nothing but the resourceVersion sends nothing. Each informer's handlers
// run in order, so a change that must send nothing is followed by one that
// must, on the same informer.
func TestStorageEvents(t *testing.T) {
	e := newCluster(t, false)
	var want [2][]string // q1's calls, q2's (broadcast has no order between queues)
	step := func(do func() error, events ...string) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			want[0], want[1] = append(want[0], "q1 Move "+ev), append(want[1], "q2 Move "+ev)
		}
		e.expect(want[0], "q1")
		e.expect(want[1], "q2")
	}
	pvcs := e.client.CoreV1().PersistentVolumeClaims("ns")
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"}}
	step(func() error { _, err := pvcs.Create(e.ctx, pvc, metav1.CreateOptions{}); return err },
		"PersistentVolumeClaim Add ns/data")
	resync := pvc.DeepCopy()
	resync.ResourceVersion = "7"
	bound := pvc.DeepCopy()
	bound.Spec.VolumeName = "pv1"
	step(func() error {
		if _, err := pvcs.Update(e.ctx, resync, metav1.UpdateOptions{}); err != nil {
			return err
		}
		_, err := pvcs.Update(e.ctx, bound, metav1.UpdateOptions{})
		return err
	}, "PersistentVolumeClaim UpdateOther ns/data")
	// A claim deleted is no event (no plugin registers it); the next claim's is.
	step(func() error {
		if err := pvcs.Delete(e.ctx, "data", metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err := pvcs.Create(e.ctx, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "logs"}}, metav1.CreateOptions{})
		return err
	}, "PersistentVolumeClaim Add ns/logs")

	step(func() error {
		_, err := e.client.CoreV1().PersistentVolumes().Create(e.ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1"}}, metav1.CreateOptions{})
		return err
	}, "PersistentVolume Add /pv1")
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	step(func() error {
		_, err := e.client.StorageV1().StorageClasses().Create(e.ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"},
			VolumeBindingMode: &wffc}, metav1.CreateOptions{})
		return err
	}, "StorageClass Add /local")
	csinode := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	step(func() error {
		if _, err := e.client.StorageV1().CSINodes().Create(e.ctx, csinode, metav1.CreateOptions{}); err != nil {
			return err
		}
		c := csinode.DeepCopy()
		c.Spec.Drivers = []storagev1.CSINodeDriver{{Name: "d", NodeID: "n1"}}
		_, err := e.client.StorageV1().CSINodes().Update(e.ctx, c, metav1.UpdateOptions{})
		return err
	}, "CSINode Add /n1", "CSINode UpdateOther /n1")
	// A CSIDriver added is no event; its update is.
	driver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: new(true)}}
	step(func() error {
		if _, err := e.client.StorageV1().CSIDrivers().Create(e.ctx, driver, metav1.CreateOptions{}); err != nil {
			return err
		}
		d := driver.DeepCopy()
		d.Spec.StorageCapacity = new(false)
		_, err := e.client.StorageV1().CSIDrivers().Update(e.ctx, d, metav1.UpdateOptions{})
		return err
	}, "CSIDriver UpdateOther /d")
	step(func() error {
		_, err := e.client.StorageV1().CSIStorageCapacities("ns").Create(e.ctx, &storagev1.CSIStorageCapacity{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cap"}, StorageClassName: "local"}, metav1.CreateOptions{})
		return err
	}, "CSIStorageCapacity Add ns/cap")
	// A VolumeAttachment added is no event; its deletion is.
	vas := e.client.StorageV1().VolumeAttachments()
	step(func() error {
		if _, err := vas.Create(e.ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "d", NodeName: "n1"}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		return vas.Delete(e.ctx, "va", metav1.DeleteOptions{})
	}, "VolumeAttachment Delete /va")
}

// TestDRAEvents: the DRA informers send what upstream's DynamicResources
// registers, DeviceTaintRule changes too, and no claim update that leaves
// the status as it was.
func TestDRAEvents(t *testing.T) {
	e := newCluster(t, false)
	var want [2][]string
	step := func(do func() error, events ...string) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			want[0], want[1] = append(want[0], "q1 Move "+ev), append(want[1], "q2 Move "+ev)
		}
		e.expect(want[0], "q1")
		e.expect(want[1], "q2")
	}
	dra := e.client.ResourceV1()
	claims := dra.ResourceClaims("ns")
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gpu"}}
	step(func() error { _, err := claims.Create(e.ctx, claim, metav1.CreateOptions{}); return err },
		"ResourceClaim Add ns/gpu")
	finalizer := claim.DeepCopy()
	finalizer.Finalizers = []string{"resource.kubernetes.io/delete-protection"}
	allocated := finalizer.DeepCopy()
	allocated.Status.Allocation = &resourceapi.AllocationResult{}
	step(func() error {
		if _, err := claims.Update(e.ctx, finalizer, metav1.UpdateOptions{}); err != nil {
			return err
		}
		_, err := claims.UpdateStatus(e.ctx, allocated, metav1.UpdateOptions{})
		return err
	}, "ResourceClaim UpdateOther ns/gpu")
	step(func() error { return claims.Delete(e.ctx, "gpu", metav1.DeleteOptions{}) }, "ResourceClaim Delete ns/gpu")

	slice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "n1-gpu"},
		Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.example.com", Pool: resourceapi.ResourcePool{Name: "n1", ResourceSliceCount: 1}, NodeName: new("n1")}}
	step(func() error {
		if _, err := dra.ResourceSlices().Create(e.ctx, slice, metav1.CreateOptions{}); err != nil {
			return err
		}
		s := slice.DeepCopy()
		s.Spec.Devices = []resourceapi.Device{{Name: "gpu-0"}}
		if _, err := dra.ResourceSlices().Update(e.ctx, s, metav1.UpdateOptions{}); err != nil {
			return err
		}
		// A slice deleted is no event (upstream registers Add|Update); the
		// next slice's add is.
		if err := dra.ResourceSlices().Delete(e.ctx, "n1-gpu", metav1.DeleteOptions{}); err != nil {
			return err
		}
		s.Name = "n2-gpu"
		_, err := dra.ResourceSlices().Create(e.ctx, s, metav1.CreateOptions{})
		return err
	}, "ResourceSlice Add /n1-gpu", "ResourceSlice UpdateOther /n1-gpu", "ResourceSlice Add /n2-gpu")
	step(func() error {
		_, err := dra.DeviceClasses().Create(e.ctx, &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}, metav1.CreateOptions{})
		return err
	}, "DeviceClass Add /gpu.example.com")
	rule := &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "drain"},
		Spec: resourceapi.DeviceTaintRuleSpec{DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: new("gpu.example.com")},
			Taint: resourceapi.DeviceTaint{Key: "k", Effect: resourceapi.DeviceTaintEffectNoSchedule}}}
	step(func() error {
		if _, err := dra.DeviceTaintRules().Create(e.ctx, rule, metav1.CreateOptions{}); err != nil {
			return err
		}
		return dra.DeviceTaintRules().Delete(e.ctx, "drain", metav1.DeleteOptions{})
	}, "DeviceTaintRule Add /drain", "DeviceTaintRule Delete /drain")
}

// TestInformerFactoryPods: the factory's pod informer, whoever asks for it
// first, lists and watches only pods that have not finished (upstream's
// field selector) and keeps them without their managedFields.
func TestInformerFactoryPods(t *testing.T) {
	p := makePod("running").node("n1").phase(v1.PodRunning).obj()
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	client := fake.NewClientset(p)
	var mu sync.Mutex
	var selectors []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		selectors = append(selectors, s)
	}
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		record("list " + a.(k8stesting.ListAction).GetListRestrictions().Fields.String())
		return false, nil, nil
	})
	client.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		record("watch " + a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.String())
		return false, nil, nil
	})
	f := cluster.NewInformerFactory(client)
	lister := f.Core().V1().Pods().Lister() // the default accessor gets the same informer
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	defer f.Shutdown()
	defer cancel() // before Shutdown, which waits for the informers to stop
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("%v informer did not sync", typ)
		}
	}
	got, err := lister.Pods("default").Get("running")
	if err != nil {
		t.Fatalf("the pod lister does not have the running pod: %v", err)
	}
	if got.ManagedFields != nil {
		t.Errorf("the cached pod kept its managedFields %v; want them dropped", got.ManagedFields)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(selectors) >= 2, nil
	}); err != nil {
		t.Fatalf("the informer did not list and watch: %v", selectors)
	}
	mu.Lock()
	defer mu.Unlock()
	// The fake client parses the selector, which sorts its terms.
	want := []string{"list status.phase!=Failed,status.phase!=Succeeded", "watch status.phase!=Failed,status.phase!=Succeeded"}
	if diff := cmp.Diff(want, selectors[:2]); diff != "" {
		t.Errorf("pod informer's requests (-want +got):\n%s", diff)
	}
}
