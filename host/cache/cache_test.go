package cache

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// logSink collects log lines.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

func (l *logSink) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// newTestCache returns a cache on a fake clock with nodes n1..n3 (4 cpu).
func newTestCache(t *testing.T, opts ...Option) (*Cache, *testingclock.FakeClock, *logSink) {
	t.Helper()
	fc := testingclock.NewFakeClock(t0)
	logs := &logSink{}
	c := New(append([]Option{WithClock(fc), WithLogger(logs.logger())}, opts...)...)
	for _, n := range []string{"n1", "n2", "n3"} {
		c.AddNode(makeNode(n, res("cpu", "4", "pods", "110")))
	}
	return c, fc, logs
}

func mustNil(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// nodePods returns the pods of node name in a fresh snapshot of c.
func nodePods(t *testing.T, c *Cache, name string) []string {
	t.Helper()
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	return uids(s.Get(name))
}

func TestAssumeFinishConfirm(t *testing.T) {
	c, fc, _ := newTestCache(t)
	p := podOn("p", "n1", "1")
	mustNil(t, "AssumePod", c.AssumePod(p))
	if !c.IsAssumed(p.UID) {
		t.Fatalf("not assumed after AssumePod")
	}
	if diff := cmp.Diff(Stats{Nodes: 3, Pods: 1, AssumedPods: 1}, c.Stats()); diff != "" {
		t.Errorf("Stats after AssumePod (-want, +got):\n%s", diff)
	}
	mustNil(t, "FinishBinding", c.FinishBinding(p))

	bound := p.DeepCopy()
	bound.Status.Phase = v1.PodRunning
	mustNil(t, "AddPod", c.AddPod(bound))
	if c.IsAssumed(p.UID) {
		t.Errorf("still assumed after the informer added it")
	}
	if got, ok := c.GetPod(p.UID); !ok || got != bound {
		t.Errorf("GetPod = %v, %v; want the informer's object", got, ok)
	}
	// A confirmed pod never expires, and FinishBinding after the informer
	// confirmed leaves it alone.
	mustNil(t, "FinishBinding", c.FinishBinding(p))
	fc.Step(time.Hour)
	c.cleanupExpired()
	if diff := cmp.Diff(Stats{Nodes: 3, Pods: 1}, c.Stats()); diff != "" {
		t.Errorf("Stats after confirm and an hour (-want, +got):\n%s", diff)
	}
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	n1 := s.Get("n1")
	if diff := cmp.Diff([]string{"uid-p"}, uids(n1)); diff != "" {
		t.Errorf("pods on n1 (-want, +got):\n%s", diff)
	}
	if n1.Requested().MilliCPU != 1000 || n1.Pods()[0].Pod != bound {
		t.Errorf("n1 requested %d cpu, pod %p; want 1000 and the informer's object", n1.Requested().MilliCPU, n1.Pods()[0].Pod)
	}
}

func TestAssumeForget(t *testing.T) {
	c, _, _ := newTestCache(t)
	p := podOn("p", "n1", "1")
	mustNil(t, "AssumePod", c.AssumePod(p))
	if err := c.AssumePod(p); err == nil || !strings.Contains(err.Error(), "default/p") {
		t.Errorf("AssumePod twice: %v, want an error naming the pod", err)
	}
	elsewhere := p.DeepCopy()
	elsewhere.Spec.NodeName = "n2"
	if err := c.ForgetPod(elsewhere); err == nil || !strings.Contains(err.Error(), "default/p") {
		t.Errorf("ForgetPod on another node: %v, want an error naming the pod", err)
	}
	mustNil(t, "ForgetPod", c.ForgetPod(p))
	if _, ok := c.GetPod(p.UID); ok || c.IsAssumed(p.UID) {
		t.Errorf("pod still in the cache after ForgetPod")
	}
	if diff := cmp.Diff(Stats{Nodes: 3}, c.Stats()); diff != "" {
		t.Errorf("Stats after ForgetPod (-want, +got):\n%s", diff)
	}
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if got := s.Get("n1"); len(got.Pods()) != 0 || got.Requested().MilliCPU != 0 {
		t.Errorf("n1 after ForgetPod: pods %v, cpu %d", uids(got), got.Requested().MilliCPU)
	}
	mustNil(t, "ForgetPod of a pod no longer cached", c.ForgetPod(p))

	q := podOn("q", "n1", "1")
	mustNil(t, "AddPod", c.AddPod(q))
	if err := c.ForgetPod(q); err == nil || !strings.Contains(err.Error(), "default/q") {
		t.Errorf("ForgetPod of an added pod: %v, want an error naming the pod", err)
	}
}

func TestAssumedExpiry(t *testing.T) {
	const ttl = 10 * time.Second
	tests := []struct {
		name        string
		ttl         time.Duration
		finish      bool
		wait        time.Duration
		wantExpired bool
	}{
		{name: "finished, past TTL", ttl: ttl, finish: true, wait: ttl + time.Second, wantExpired: true},
		{name: "finished, at TTL", ttl: ttl, finish: true, wait: ttl},
		{name: "binding not finished", ttl: ttl, wait: time.Hour},
		{name: "TTL 0 never expires", ttl: 0, finish: true, wait: time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, fc, logs := newTestCache(t, WithAssumedTTL(tc.ttl))
			p := podOn("p", "n1", "1")
			mustNil(t, "AssumePod", c.AssumePod(p))
			fc.Step(time.Minute) // time before FinishBinding does not count
			if tc.finish {
				mustNil(t, "FinishBinding", c.FinishBinding(p))
			}
			fc.Step(tc.wait)
			c.cleanupExpired()

			want := Stats{Nodes: 3, Pods: 1, AssumedPods: 1}
			wantPods := []string{"uid-p"}
			wantLogs := 0
			if tc.wantExpired {
				want = Stats{Nodes: 3, Expired: 1}
				wantPods = nil
				wantLogs = 1
			}
			if diff := cmp.Diff(want, c.Stats()); diff != "" {
				t.Errorf("Stats (-want, +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantPods, nodePods(t, c, "n1")); diff != "" {
				t.Errorf("pods on n1 (-want, +got):\n%s", diff)
			}
			if got := logs.count(`"msg"="Pod expired"`); got != wantLogs {
				t.Errorf("logged %d expiries, want %d", got, wantLogs)
			}
			if tc.wantExpired {
				// A binder that fails late forgets a pod that is gone: fine.
				mustNil(t, "ForgetPod after expiry", c.ForgetPod(p))
				// A binding that succeeded late: the informer adds it.
				mustNil(t, "AddPod after expiry", c.AddPod(p))
			}
		})
	}
}

func TestRunExpires(t *testing.T) {
	c, fc, _ := newTestCache(t, WithAssumedTTL(5*time.Second))
	p := podOn("p", "n1", "1")
	mustNil(t, "AssumePod", c.AssumePod(p))
	mustNil(t, "FinishBinding", c.FinishBinding(p))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().Expired == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("pod did not expire; fake time %v", fc.Now().Sub(t0))
		}
		if fc.HasWaiters() {
			fc.Step(time.Second)
		}
		time.Sleep(time.Millisecond)
	}
	if got := fc.Now().Sub(t0); got < 6*time.Second {
		t.Errorf("expired after %v, before the 5 s TTL had passed", got)
	}
	cancel()
	<-done
}

func TestConfirmOnOtherNode(t *testing.T) {
	c, _, logs := newTestCache(t)
	p := podOn("p", "n1", "1")
	mustNil(t, "AssumePod", c.AssumePod(p))
	mustNil(t, "FinishBinding", c.FinishBinding(p))
	bound := p.DeepCopy()
	bound.Spec.NodeName = "n2"
	mustNil(t, "AddPod", c.AddPod(bound))

	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if diff := cmp.Diff(map[string][]string{"n1": nil, "n2": {"uid-p"}, "n3": nil},
		map[string][]string{"n1": uids(s.Get("n1")), "n2": uids(s.Get("n2")), "n3": uids(s.Get("n3"))}); diff != "" {
		t.Errorf("pods per node (-want, +got):\n%s", diff)
	}
	if s.Get("n1").Requested().MilliCPU != 0 || s.Get("n2").Requested().MilliCPU != 1000 {
		t.Errorf("requested cpu n1 %d, n2 %d; want 0, 1000", s.Get("n1").Requested().MilliCPU, s.Get("n2").Requested().MilliCPU)
	}
	if c.IsAssumed(p.UID) {
		t.Errorf("still assumed")
	}
	if logs.count("different node") != 1 {
		t.Errorf("the move was not logged: %v", logs.lines)
	}
}

func TestRemoveNodeWithPods(t *testing.T) {
	c, _, _ := newTestCache(t)
	mustNil(t, "AddPod", c.AddPod(podOn("a", "n1", "1")))
	mustNil(t, "AssumePod", c.AssumePod(podOn("b", "n1", "1")))
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))

	n1 := makeNode("n1", nil)
	mustNil(t, "RemoveNode", c.RemoveNode(n1))
	if err := c.RemoveNode(n1); err == nil {
		t.Errorf("RemoveNode twice: no error")
	}
	if diff := cmp.Diff(Stats{Nodes: 2, Pods: 2, AssumedPods: 1}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want, +got):\n%s", diff)
	}
	if got := c.NodeCount(); got != 3 {
		t.Errorf("NodeCount = %d, want 3 (n1 kept for its pods)", got)
	}
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if s.Get("n1") != nil || s.NumNodes() != 2 {
		t.Errorf("snapshot has n1 (%v) or %d nodes, want n2 and n3 only", s.Get("n1"), s.NumNodes())
	}

	// Re-adding the node brings its pods back with it.
	c.AddNode(makeNode("n1", res("cpu", "4")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if diff := cmp.Diff([]string{"uid-a", "uid-b"}, uids(s.Get("n1"))); diff != "" {
		t.Errorf("n1 re-added (-want, +got):\n%s", diff)
	}
	mustNil(t, "RemoveNode", c.RemoveNode(n1))

	mustNil(t, "RemovePod", c.RemovePod(podOn("a", "n1", "1")))
	mustNil(t, "RemovePod of an assumed pod", c.RemovePod(podOn("b", "n1", "1")))
	if got := c.NodeCount(); got != 2 {
		t.Errorf("NodeCount = %d after the last pod left the deleted node, want 2", got)
	}
	if diff := cmp.Diff(Stats{Nodes: 2}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want, +got):\n%s", diff)
	}
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if s.NumNodes() != 2 || s.Get("n1") != nil {
		t.Errorf("snapshot: %d nodes, n1 %v", s.NumNodes(), s.Get("n1"))
	}
}

func TestPodBeforeNode(t *testing.T) {
	c := New()
	mustNil(t, "AddPod", c.AddPod(podOn("a", "n9", "1")))
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if s.NumNodes() != 0 || c.NodeCount() != 1 {
		t.Errorf("a node info without a node is listed: %d nodes in the snapshot, %d in the cache", s.NumNodes(), c.NodeCount())
	}
	c.AddNode(makeNode("n9", res("cpu", "2")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if diff := cmp.Diff([]string{"uid-a"}, uids(s.Get("n9"))); diff != "" {
		t.Errorf("n9 (-want, +got):\n%s", diff)
	}
}

func TestPodErrors(t *testing.T) {
	c, _, _ := newTestCache(t)
	added := podOn("added", "n1", "1")
	assumed := podOn("assumed", "n1", "1")
	mustNil(t, "AddPod", c.AddPod(added))
	mustNil(t, "AssumePod", c.AssumePod(assumed))

	tests := []struct {
		name string
		call func() error
	}{
		{"add twice", func() error { return c.AddPod(added) }},
		{"assume an added pod", func() error { return c.AssumePod(added) }},
		{"update an unknown pod", func() error { return c.UpdatePod(podOn("x", "n1", "1"), podOn("x", "n1", "2")) }},
		{"update an assumed pod", func() error { return c.UpdatePod(assumed, assumed) }},
		{"remove an unknown pod", func() error { return c.RemovePod(podOn("x", "n1", "1")) }},
		{"forget an added pod", func() error { return c.ForgetPod(added) }},
		{"assume without a node", func() error { return c.AssumePod(makePod("x").obj()) }},
		{"add without a uid", func() error { return c.AddPod(makePod("x").uid("").node("n1").obj()) }},
		{"finish binding without a uid", func() error { return c.FinishBinding(makePod("x").uid("").obj()) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err == nil {
				t.Errorf("no error")
			}
		})
	}
	if diff := cmp.Diff(Stats{Nodes: 3, Pods: 2, AssumedPods: 1}, c.Stats()); diff != "" {
		t.Errorf("failed calls changed the cache (-want, +got):\n%s", diff)
	}
}

func TestUpdatePod(t *testing.T) {
	c, _, logs := newTestCache(t)
	mustNil(t, "AddPod", c.AddPod(podOn("a", "n1", "1")))
	mustNil(t, "UpdatePod", c.UpdatePod(podOn("a", "n1", "1"), podOn("a", "n1", "3")))
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if got := s.Get("n1").Requested(); got.MilliCPU != 3000 || got.Pods != 1 {
		t.Errorf("n1 requested %+v, want 3000m cpu and 1 pod", got)
	}

	// A missed event: the cache moves the pod rather than exiting.
	mustNil(t, "UpdatePod", c.UpdatePod(podOn("a", "n1", "3"), podOn("a", "n2", "3")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	if len(s.Get("n1").Pods()) != 0 || len(s.Get("n2").Pods()) != 1 {
		t.Errorf("pod not moved: n1 %v, n2 %v", uids(s.Get("n1")), uids(s.Get("n2")))
	}
	if logs.count("different node") != 1 {
		t.Errorf("the move was not logged: %v", logs.lines)
	}
}

func TestUpdateSnapshotIncremental(t *testing.T) {
	c, _, _ := newTestCache(t)
	var s Snapshot // the zero Snapshot is valid
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(&s))
	names := func() []string {
		var out []string
		for _, n := range s.List() {
			out = append(out, n.Node().Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"n1", "n2", "n3"}, names()); diff != "" {
		t.Fatalf("List (-want, +got):\n%s", diff)
	}
	before := map[string]*NodeInfo{"n1": s.Get("n1"), "n2": s.Get("n2"), "n3": s.Get("n3")}
	gen := s.Generation()

	// Nothing changed: nothing replaced.
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(&s))
	for name, n := range before {
		if s.Get(name) != n {
			t.Errorf("%s replaced by an update with no change", name)
		}
	}

	mustNil(t, "AddPod", c.AddPod(podOn("a", "n2", "1")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(&s))
	if s.Get("n1") != before["n1"] || s.Get("n3") != before["n3"] {
		t.Errorf("unchanged n1 or n3 replaced")
	}
	if s.Get("n2") == before["n2"] {
		t.Fatalf("changed n2 not replaced")
	}
	if diff := cmp.Diff([]string{"uid-a"}, uids(s.Get("n2"))); diff != "" {
		t.Errorf("n2 (-want, +got):\n%s", diff)
	}
	if len(before["n2"].Pods()) != 0 {
		t.Errorf("the replaced node info changed")
	}
	if s.List()[1] != s.Get("n2") {
		t.Errorf("List not updated with the new n2")
	}
	if s.Generation() <= gen {
		t.Errorf("generation %d did not advance from %d", s.Generation(), gen)
	}

	// Removed and added nodes.
	mustNil(t, "RemoveNode", c.RemoveNode(makeNode("n3", nil)))
	c.AddNode(makeNode("n0", res("cpu", "1")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(&s))
	if diff := cmp.Diff([]string{"n0", "n1", "n2"}, names()); diff != "" {
		t.Errorf("List after removing n3, adding n0 (-want, +got):\n%s", diff)
	}
	if s.Get("n3") != nil || s.NumNodes() != 3 || s.Get("n1") != before["n1"] {
		t.Errorf("n3 %v, %d nodes, n1 replaced: %v", s.Get("n3"), s.NumNodes(), s.Get("n1") != before["n1"])
	}

	// A node removed and added back between updates is a new node info.
	n1 := s.Get("n1")
	mustNil(t, "RemoveNode", c.RemoveNode(makeNode("n1", nil)))
	c.AddNode(makeNode("n1", res("cpu", "8")))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(&s))
	if got := s.Get("n1"); got == n1 || got.Allocatable().MilliCPU != 8000 {
		t.Errorf("n1 re-added: same node info %v, allocatable %d", got == n1, got.Allocatable().MilliCPU)
	}

	// A snapshot built incrementally equals one built at once.
	fresh := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(fresh))
	if diff := cmp.Diff(snapshotState(fresh), snapshotState(&s)); diff != "" {
		t.Errorf("incremental snapshot differs from a fresh one (-want, +got):\n%s", diff)
	}
}

// snapshotState is a snapshot's contents, for comparisons.
func snapshotState(s *Snapshot) map[string]sums {
	out := map[string]sums{}
	for _, n := range s.List() {
		out[n.Node().Name] = sumsOf(n)
	}
	return out
}

func TestUpdateSnapshotSharesClones(t *testing.T) {
	c, _, _ := newTestCache(t)
	s1, s2 := NewSnapshot(), NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s1))
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s2))
	for _, name := range []string{"n1", "n2", "n3"} {
		if s1.Get(name) != s2.Get(name) {
			t.Errorf("%s cloned twice for two snapshots at one generation", name)
		}
	}
}

func TestSnapshotIsolation(t *testing.T) {
	c, _, _ := newTestCache(t)
	mustNil(t, "AddPod", c.AddPod(podOn("a", "n1", "1")))
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
	want := snapshotState(s)
	list := append([]*NodeInfo(nil), s.List()...)

	mustNil(t, "AddPod", c.AddPod(podOn("b", "n1", "1")))
	mustNil(t, "AssumePod", c.AssumePod(podOn("c", "n2", "1")))
	mustNil(t, "RemovePod", c.RemovePod(podOn("a", "n1", "1")))
	c.UpdateNode(nil, makeNode("n2", res("cpu", "64")))
	mustNil(t, "RemoveNode", c.RemoveNode(makeNode("n3", nil)))

	if diff := cmp.Diff(want, snapshotState(s)); diff != "" {
		t.Errorf("snapshot changed with the cache (-want, +got):\n%s", diff)
	}
	if !slices.Equal(list, s.List()) {
		t.Errorf("snapshot list changed with the cache")
	}
}

func TestUpdateSnapshotFromAnotherCache(t *testing.T) {
	b := New()
	b.AddNode(makeNode("x", nil))
	a := New()
	a.AddNode(makeNode("y", nil))
	a.AddNode(makeNode("z", nil))
	s := NewSnapshot()
	mustNil(t, "UpdateSnapshot from a", a.UpdateSnapshot(s))
	// s is newer than everything in b: the incremental update misses x.
	if err := b.UpdateSnapshot(s); err == nil {
		t.Errorf("no error for a snapshot inconsistent with the cache")
	}
	if s.NumNodes() != 1 || s.Get("x") == nil {
		t.Errorf("snapshot not rebuilt: %d nodes, x %v", s.NumNodes(), s.Get("x"))
	}
	mustNil(t, "UpdateSnapshot after the rebuild", b.UpdateSnapshot(s))
}

// The informer's version of an assumed pod replaces it with what its own
// spec requests when the spec changed (a resize before the binding landed:
// a new generation), and with the assumed derivation otherwise.
func TestConfirmResized(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gen     int64
		wantCPU int64
	}{{"same spec", 1, 1000}, {"resized", 2, 3000}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newTestCache(t)
			p := podOn("p", "n1", "1")
			p.Generation = 1
			mustNil(t, "AssumePod", c.AssumePod(p))
			bound := p.DeepCopy()
			bound.Generation = tc.gen
			if tc.gen != 1 {
				bound.Spec.Containers[0].Resources.Requests = res("cpu", "3")
			}
			mustNil(t, "AddPod", c.AddPod(bound))
			s := NewSnapshot()
			mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
			if got := s.Get("n1").Requested().MilliCPU; got != tc.wantCPU {
				t.Errorf("n1 requested %dm cpu, want %dm", got, tc.wantCPU)
			}
			if got := s.Get("n1").Pods()[0].Pod; got != bound {
				t.Errorf("n1 holds pod %p, want the informer's %p", got, bound)
			}
		})
	}
}
