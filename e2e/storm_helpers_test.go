package e2e

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/wasmsched/wasmsched/e2e/testenv"
	"github.com/wasmsched/wasmsched/host/app"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	intree "github.com/wasmsched/wasmsched/host/framework/plugins"
)

// quiesce waits until the scheduler has been quiet for quiet: no pod
// bound, created or deleted, none in activeQ and none in backoffQ but
// pending gang members (scheduler_pending_pods{queue="active"|"backoff"},
// which both serve): a rejected pod group is not parked with the
// unschedulable pods but backs off and retries for ever, upstream's as
// wasmsched's. A pod's backoff is at most 10 s, shorter than quiet, so a
// pod that would bind after its backoff does so within the window. After
// timeout it fails the test if must, else it returns false.
func (st *storm) quiesce(quiet, timeout time.Duration, must bool) bool {
	t, s := st.t, st.s
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	quietSince := start
	last := ""
	for {
		list, err := s.c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list pods: %v", err)
		}
		bound, gang := 0, 0
		for _, p := range list.Items {
			switch {
			case p.Spec.NodeName != "":
				bound++
			case p.Spec.SchedulingGroup != nil && p.DeletionTimestamp == nil:
				gang++
			}
		}
		page := s.page(t)
		active := testenv.SumSamples(page, "scheduler_pending_pods", `queue="active"`)
		backoff := testenv.SumSamples(page, "scheduler_pending_pods", `queue="backoff"`)
		state := fmt.Sprintf("%d pods, %d bound, %d pending gang members", len(list.Items), bound, gang)
		queues := fmt.Sprintf("%v in activeQ, %v in backoffQ", active, backoff)
		now := time.Now()
		if state != last || active > 0 || backoff > float64(gang) {
			quietSince = now
			last = state
		}
		if now.Sub(quietSince) >= quiet {
			s.logf(t, "quiet for %v after %v: %s; %s", quiet, now.Sub(start).Round(time.Second), state, queues)
			return true
		}
		if now.Sub(start) > timeout {
			if must {
				t.Errorf("[%s] not quiescent within %v: %s; scheduler_pending_pods:\n%s", s.name, timeout, state,
					strings.Join(samples(page, "scheduler_pending_pods"), "\n"))
			} else {
				s.logf(t, "not quiet within %v: %s; %s", timeout, state, queues)
			}
			return false
		}
		time.Sleep(time.Second)
	}
}

// woken counts the pods the watch saw bound after a version of theirs
// reported PodScheduled=False: pods some event woke.
func (w *podWatch) woken() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, versions := range w.history {
		rejected := false
		for _, p := range versions {
			if p.Spec.NodeName != "" {
				if rejected {
					n++
				}
				break
			}
			if c := scheduledCondition(p); c != nil && c.Status == v1.ConditionFalse {
				rejected = true
			}
		}
	}
	return n
}

// topSamples renders the n largest samples of a metric family, largest
// first, as "{labels}=value".
func topSamples(page []byte, name string, n int) string {
	type sample struct {
		labels string
		v      float64
	}
	var all []sample
	for _, l := range samples(page, name) {
		i, j := strings.IndexByte(l, '{'), strings.LastIndexByte(l, ' ')
		var v float64
		if i < 0 || j < i {
			continue
		}
		if _, err := fmt.Sscanf(l[j+1:], "%g", &v); err != nil || v == 0 {
			continue
		}
		all = append(all, sample{l[i:j], v})
	}
	slices.SortStableFunc(all, func(a, b sample) int { return cmp.Compare(b.v, a.v) })
	var out []string
	for _, s := range all[:min(n, len(all))] {
		out = append(out, fmt.Sprintf("%s=%v", s.labels, s.v))
	}
	return strings.Join(out, " ")
}

// mostAttempted renders the n pods with the most "unable to schedule pod"
// lines in a wasmsched log file (at level debug, one per failed attempt),
// most first, with the time of their first and last such line. The file
// is streamed: a pod retried in a loop writes hundreds of megabytes.
func mostAttempted(path string, n int) string {
	type pod struct {
		name        string
		count       int
		first, last string
	}
	byName := map[string]*pod{}
	err := scanLines(path, func(l string) {
		if !strings.Contains(l, `msg="unable to schedule pod"`) {
			return
		}
		name, at := logField(l, "pod="), logField(l, "time=")
		p := byName[name]
		if p == nil {
			p = &pod{name: name, first: at}
			byName[name] = p
		}
		p.count++
		p.last = at
	})
	if err != nil {
		return err.Error()
	}
	all := make([]*pod, 0, len(byName))
	for _, p := range byName {
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b *pod) int { return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.name, b.name)) })
	var out []string
	for _, p := range all[:min(n, len(all))] {
		out = append(out, fmt.Sprintf("%s=%d (%s to %s)", p.name, p.count, p.first, p.last))
	}
	return strings.Join(out, " ")
}

// scanLines calls f with each line of the file at path.
func scanLines(path string, f func(string)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		f(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// logField returns the value of key (written "key=") in a logfmt line.
func logField(line, key string) string {
	i := strings.Index(line, " "+key)
	if i < 0 {
		if !strings.HasPrefix(line, key) {
			return ""
		}
	} else {
		line = line[i+1:]
	}
	v := strings.TrimPrefix(line, key)
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// samples returns the sample lines of a metric family.
func samples(page []byte, name string) []string {
	var out []string
	for _, l := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(l, name+"{") || strings.HasPrefix(l, name+" ") {
			out = append(out, l)
		}
	}
	return out
}

// pendingReport is what checkPending found.
type pendingReport struct {
	total   int            // pods pending at quiescence
	byKind  map[string]int // by the kind in their name
	checked bool           // the check ran to its end
}

// checkPending checks that every pod of the namespace left pending is truly
// unschedulable: it runs the default profile's native filters (verifier)
// on a snapshot of the cluster as the API shows it now, outside the
// scheduler. A pod some node fits is a missed wake-up, reported with its
// PodScheduled condition (the scheduler's last verdict, which names what
// rejected it) and the node. Gang members are checked a group at a time: a
// group with fewer members than its minCount waits at its gate, and a group
// whose pending members all fit together (placed one after another) is a
// missed wake-up.
func checkPending(t *testing.T, s *scheduler) pendingReport {
	t.Helper()
	v := newVerifier(t, s.c)
	defer v.stop()
	rep := pendingReport{byKind: map[string]int{}}
	groups := map[string][]*v1.Pod{}
	var missed []string
	for _, p := range v.pods {
		if p.Namespace != s.ns || p.DeletionTimestamp != nil || p.Spec.NodeName != "" {
			continue
		}
		rep.total++
		rep.byKind[podKind(p.Name)]++
		if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
			groups[*g.PodGroupName] = append(groups[*g.PodGroupName], p)
			continue
		}
		if node, _ := v.fits(t, v.snapshot(t), p); node != "" {
			missed = append(missed, missedText(s, p, node))
		}
	}
	for _, name := range sortedKeys(groups) {
		pending := groups[name]
		members, minCount := v.group(t, s.ns, name)
		if members < minCount || members > len(pending) {
			continue // gated below its quorum, or partly bound (not all-or-nothing): not checked
		}
		snap := v.snapshot(t)
		var placed []string
		for _, p := range pending {
			node, _ := v.fits(t, snap, p)
			if node == "" {
				break
			}
			placed = append(placed, p.Name+"->"+node)
			q := p.DeepCopy()
			q.Spec.NodeName = node
			if err := snap.Assume(cache.NewPodInfo(q)); err != nil {
				t.Fatalf("assume %s on %s in the verifier's snapshot: %v", p.Name, node, err)
			}
		}
		if len(placed) == len(pending) {
			missed = append(missed, fmt.Sprintf("pod group %s (minCount %d): all %d pending members fit together (%s); %s",
				name, minCount, len(pending), strings.Join(placed, ", "), missedText(s, pending[0], "")))
		}
	}
	if len(missed) > 0 {
		t.Errorf("[%s] %d of %d pending pods fit a node at quiescence (missed wake-ups):\n%s", s.name, len(missed), rep.total,
			strings.Join(missed, "\n"))
	}
	rep.checked = true
	return rep
}

// missedText describes a pending pod that fits node: its PodScheduled
// condition and, for wasmsched, the last lines of its log naming the pod.
func missedText(s *scheduler, p *v1.Pod, node string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s", p.Name)
	if node != "" {
		fmt.Fprintf(&b, " fits node %s", node)
	}
	fmt.Fprintf(&b, "; scheduler's last verdict: %s", conditionText(scheduledCondition(p)))
	if s.wasm != nil {
		var lines []string
		if err := scanLines(s.wasm.LogPath(), func(l string) {
			if strings.Contains(l, "/"+p.Name+" ") || strings.Contains(l, "/"+p.Name+`"`) {
				lines = append(lines, "      "+l)
				if len(lines) > 8 {
					lines = lines[1:]
				}
			}
		}); err != nil {
			lines = append(lines, "      "+err.Error())
		}
		fmt.Fprintf(&b, "\n    wasmsched log lines naming it (last %d):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// podKind is the kind a storm pod's name ends with ("p-12-spread" ->
// "spread", "g-7-gang-1" -> "gang").
func podKind(name string) string {
	parts := strings.Split(name, "-")
	if len(parts) >= 3 && parts[0] == "g" {
		return kindGang
	}
	return parts[len(parts)-1]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// verifier runs the default profile's native filters (host/framework's
// in-tree plugins, wasmsched's own placement plugins left out) over the
// cluster as the API shows it, with informers of its own: the same code
// paths as the scheduler's filters, none of its queue.
type verifier struct {
	c       kubernetes.Interface
	factory informers.SharedInformerFactory
	cancel  context.CancelFunc
	profile *framework.Profile
	nodes   []*v1.Node
	pods    []*v1.Pod
}

// verifierRegistry is the in-tree registry less wasmsched's own plugins
// (which do nothing without a module): upstream's plugins.
var verifierRegistry = sync.OnceValue(func() *framework.Registry {
	var rows []framework.Row
	for _, r := range intree.InTree().Rows() {
		if !strings.HasPrefix(r.Name, "wasmsched.io/") {
			rows = append(rows, r)
		}
	}
	return framework.MustRegistry(rows...)
})

func newVerifier(t *testing.T, c kubernetes.Interface) *verifier {
	t.Helper()
	f := informers.NewSharedInformerFactory(c, 0)
	h := framework.NewHandle(framework.HandleOptions{Listers: app.Listers(f, c)})
	prof, err := verifierRegistry().Default(h)
	if err != nil {
		t.Fatalf("build the default profile: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &verifier{c: c, factory: f, cancel: cancel, profile: prof}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			v.stop()
			t.Fatalf("the verifier's %v informer did not sync", typ)
		}
	}
	mgr, err := h.DRA()
	if err != nil {
		v.stop()
		t.Fatalf("the verifier's DRA state: %v", err)
	}
	if !waitForSoft(30*time.Second, mgr.Synced) {
		v.stop()
		t.Fatal("the verifier's DRA state did not sync")
	}
	if v.nodes, err = f.Core().V1().Nodes().Lister().List(labels.Everything()); err != nil {
		t.Fatal(err)
	}
	if v.pods, err = f.Core().V1().Pods().Lister().List(labels.Everything()); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(v.pods, func(a, b *v1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return v
}

func (v *verifier) stop() { v.cancel(); v.factory.Shutdown() }

// snapshot is a fresh snapshot of the nodes with the pods bound to them
// (terminating ones too: they hold their room until they are gone).
func (v *verifier) snapshot(t *testing.T) *cache.Snapshot {
	t.Helper()
	c := cache.New()
	names := map[string]bool{}
	for _, n := range v.nodes {
		c.AddNode(n)
		names[n.Name] = true
	}
	for _, p := range v.pods {
		if p.Spec.NodeName != "" && names[p.Spec.NodeName] {
			if err := c.AddPod(p); err != nil {
				t.Fatalf("verifier: add pod %s: %v", p.Name, err)
			}
		}
	}
	snap := cache.NewSnapshot()
	if err := c.UpdateSnapshot(snap); err != nil {
		t.Fatalf("verifier: snapshot: %v", err)
	}
	return snap
}

// fits returns the first node the filters let p on in snap, or "" and the
// filters' message.
func (v *verifier) fits(t *testing.T, snap *cache.Snapshot, p *v1.Pod) (node, why string) {
	t.Helper()
	var d framework.Diagnosis
	ps, st := v.profile.Prepare(cache.NewPodInfo(p), snap)
	if st != nil {
		if st.Code == framework.Error {
			t.Fatalf("verifier: PreFilter of %s: %v", p.Name, st.Err)
		}
		d.RecordPreFilter(st)
		return "", d.Message(snap.NumNodes())
	}
	feasible, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, 0, 1, &d)
	if err := d.Err(); err != nil {
		t.Fatalf("verifier: filter %s: %v", p.Name, err)
	}
	if len(feasible) == 0 {
		return "", d.Message(snap.NumNodes())
	}
	return feasible[0].Node().Name, ""
}

// group returns how many members of PodGroup name exist (not terminating)
// and its minCount.
func (v *verifier) group(t *testing.T, ns, name string) (members, minCount int) {
	t.Helper()
	pg, err := v.c.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("verifier: get PodGroup %s: %v", name, err)
	}
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
		minCount = int(g.MinCount)
	}
	for _, p := range v.pods {
		if p.Namespace == ns && p.DeletionTimestamp == nil && p.Spec.SchedulingGroup != nil &&
			p.Spec.SchedulingGroup.PodGroupName != nil && *p.Spec.SchedulingGroup.PodGroupName == name {
			members++
		}
	}
	return members, minCount
}
