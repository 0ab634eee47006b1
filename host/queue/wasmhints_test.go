package queue

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
)

// TestWasmHintsMoveWhatFits is a differential test of the built-in hints
// module (KEP-4247) in the real queue against the native filters.
//
// A generated cluster (the scheduler cache: nodes with allocatable cpu,
// memory, pods and an extended resource, labels, taints, the unschedulable
// flag; bound pods holding room and host ports) and pending pods (requests,
// init containers and sidecars, nodeSelector, required node affinity,
// tolerations, host ports) feed two queues the same events, built as
// host/cluster builds them: one queue asks hints.wasm, the other the native
// AlwaysQueue, which moves every pod on every event. Each pending pod's
// attempt runs the native filters over every node (framework.FindFeasible) and
// hands the pod back with the plugins that rejected it, or binds it to the
// first feasible node.
//
// Each step (1) adds a few pods and attempts them, keeping them in flight;
// (2) applies one cluster event: a node add, a node update (relabel, taint
// removed or added, allocatable raised or lowered, uncordon or cordon, or two
// of these at once), a bound pod's delete, or a bound pod's add (another
// scheduler's); (3) hands the in-flight pods back, so the event reaches them
// through the in-flight replay; (4) compares; (5) retries every pod either
// queue moved, in name order, binding those that fit, then sends the binds'
// bound-pod Adds, until both queues are quiet. Now and then a step deletes a
// node instead (with its pods), not compared, so that nodes keep coming and
// going.
//
// What is compared: after (5), no pending pod fits any node, because the
// AlwaysQueue queue retried every one of them against the current cluster.
// An event changes one node (the added or updated node, or the deleted pod's
// node), so after it the pods the native filters accept anywhere are exactly
// those they accept on that node (checked on a sample). Every such pod must
// have left the hints queue's unschedulable pool (PodState): a pod that fits
// and stayed is a false negative, and fails the test. A pod moved that does
// not fit that node is a false positive; KEP-4247 allows them, and each is
// attributed to the rejecting plugins whose hint queued it (asked one plugin
// at a time) and to the filter that still rejects it on the node. A node
// hint that queued a pod its own plugin's filter still rejects on the node
// would be a disagreement between hint and filter, not upstream's
// one-plugin-at-a-time imprecision, and fails the test. The AlwaysQueue
// queue must move every pending pod (the sanity bound), and its retries are
// what keeps one cluster for both queues: they see the same binds.
func TestWasmHintsMoveWhatFits(t *testing.T) {
	events := 3000
	if raceEnabled {
		events = 400
	}
	m := loadBuiltin(t, abi.SlotQueueingHint)
	rec := newSlotRecorder(t)
	hint, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	total := newHintCounts()
	seeds := []uint64{1, 2, 3, 4}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newHintsWorld(t, seed, hint)
			for w.counts.events < events/len(seeds) && !t.Failed() {
				w.step()
			}
			t.Logf("seed %d: %s", seed, w.counts.summary())
			total.add(&w.counts)
		})
	}
	if n := rec.called(abi.SlotQueueingHint); n == 0 {
		t.Error("the hints module was never called")
	}
	t.Logf("all seeds: %s", total.summary())
	t.Logf("false positives (moved, fitting no node the step changed), by event, queuing plugins and the filter rejecting the pod on the node:\n%s",
		total.fpTable())
}

// Which queue: the one with hints.wasm, the one with AlwaysQueue.
const (
	qHints = iota
	qAlways
)

var hintsQueueNames = [2]string{"hints", "AlwaysQueue"}

// hintCounts are the figures of a run.
type hintCounts struct {
	steps      int // compared steps
	multi      int // of which with several events
	events     int
	byKind     map[string]int // events by label
	byChange   map[string]int // node updates by change
	candidates int            // pending pods at events
	fits       int            // of which the filters accept on the event's node
	moved      [2]int         // of which each queue moved
	falseNeg   int
	falsePos   int
	// disagreements are false positives queued by the hint of the very
	// plugin whose filter rejects the pod on the event's node.
	disagreements int
	fp            map[string]int // false positives by explanation
	binds         int
	attempts      int
	// replayed were in flight during the step's events; of them,
	// replayedFits fit a changed node and replayedMoved were requeued.
	replayed, replayedFits, replayedMoved int
	nodeDeletes                           int // not compared
}

func newHintCounts() hintCounts {
	return hintCounts{byKind: map[string]int{}, byChange: map[string]int{}, fp: map[string]int{}}
}

func (c *hintCounts) add(o *hintCounts) {
	c.steps += o.steps
	c.multi += o.multi
	c.events += o.events
	c.candidates += o.candidates
	c.fits += o.fits
	c.moved[qHints] += o.moved[qHints]
	c.moved[qAlways] += o.moved[qAlways]
	c.falseNeg += o.falseNeg
	c.falsePos += o.falsePos
	c.disagreements += o.disagreements
	c.binds += o.binds
	c.nodeDeletes += o.nodeDeletes
	c.replayed += o.replayed
	c.replayedFits += o.replayedFits
	c.replayedMoved += o.replayedMoved
	c.attempts += o.attempts
	for k, v := range o.byKind {
		c.byKind[k] += v
	}
	for k, v := range o.byChange {
		c.byChange[k] += v
	}
	for k, v := range o.fp {
		c.fp[k] += v
	}
}

func (c *hintCounts) summary() string {
	return fmt.Sprintf("%d steps (%d of several events), %d events %v (node updates by change: %v), and %d node deletes (not compared); "+
		"%d pending pods at steps, %d of them fit a changed node; "+
		"moved by hints %d, by AlwaysQueue %d; false negatives %d, false positives %d (hint and filter disagreeing: %d); "+
		"%d in flight during the events (%d fit, %d requeued by the replay); %d attempts, %d binds",
		c.steps, c.multi, c.events, sortedCounts(c.byKind), sortedCounts(c.byChange), c.nodeDeletes, c.candidates, c.fits,
		c.moved[qHints], c.moved[qAlways], c.falseNeg, c.falsePos, c.disagreements,
		c.replayed, c.replayedFits, c.replayedMoved, c.attempts, c.binds)
}

func (c *hintCounts) fpTable() string {
	keys := slices.Collect(maps.Keys(c.fp))
	sort.Slice(keys, func(i, j int) bool {
		if c.fp[keys[i]] != c.fp[keys[j]] {
			return c.fp[keys[i]] > c.fp[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	rest, restPods := 0, 0
	for i, k := range keys {
		if i >= 30 {
			rest++
			restPods += c.fp[k]
			continue
		}
		fmt.Fprintf(&b, "%7d  %s\n", c.fp[k], k)
	}
	if rest > 0 {
		fmt.Fprintf(&b, "%7d  in %d more lines", restPods, rest)
	}
	return b.String()
}

func sortedCounts(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// pendingPod is a pod waiting to be scheduled, in both queues.
type pendingPod struct {
	obj *v1.Pod
	ps  *framework.PodState
	rec abi.Pod // its record, without plugins
	// rejected is what the pod's last attempt popped from each queue was
	// rejected by: the plugins the queue asks the hints about.
	rejected [2]podview.Plugins
	popped   [2]*Pod // while in flight in each queue
}

// hintsWorld is the cluster, its pending pods and the two queues.
type hintsWorld struct {
	t      *testing.T
	rng    *rand.Rand
	hint   policy.QueueingHint
	cache  *cache.Cache
	snap   *cache.Snapshot
	nodes  map[string]*v1.Node
	names  []string  // node names, sorted
	bound  []*v1.Pod // bound pods, in bind order
	queues [2]*env
	// pending are the pods waiting, by UID; binds are the bound-pod Add
	// events not yet sent (the informer reports a bind after the cycle).
	pending map[types.UID]*pendingPod
	binds   []abi.Event
	seq     int
	diag    framework.Diagnosis
	counts  hintCounts
}

// Sizes of the generated world.
const (
	hintsInitialNodes   = 10
	hintsMinNodes       = 6
	hintsMaxNodes       = 16
	hintsInitialPending = 60
	hintsMaxPending     = 100
	hintsMaxReported    = 5 // false negatives described in full
)

func newHintsWorld(t *testing.T, seed uint64, hint policy.QueueingHint) *hintsWorld {
	w := &hintsWorld{
		t: t, rng: rand.New(rand.NewPCG(seed, 4247)), hint: hint,
		cache: cache.New(), snap: cache.NewSnapshot(), nodes: map[string]*v1.Node{},
		pending: map[types.UID]*pendingPod{}, counts: newHintCounts(),
	}
	w.queues[qHints] = newEnv(t, WithQueueingHint(hint))
	w.queues[qAlways] = newEnv(t) // AlwaysQueue
	for range hintsInitialNodes {
		n := w.newNode()
		w.cache.AddNode(n)
		w.setNode(n)
		for range w.rng.IntN(4) {
			if err := w.cache.AddPod(w.newBoundPod(n.Name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range hintsInitialPending {
		w.addPending()
	}
	w.settle()
	return w
}

// step is one event; see TestWasmHintsMoveWhatFits.
func (w *hintsWorld) step() {
	t := w.t
	arrivals := w.rng.IntN(3)
	if len(w.pending) < hintsInitialPending/2 {
		arrivals += 3
	}
	if len(w.pending) >= hintsMaxPending {
		arrivals = 0
	}
	for range arrivals {
		w.addPending()
	}
	if len(w.nodes) > hintsMinNodes && w.percent(5) {
		// Not compared: nothing can fit because a node went away. It keeps
		// the node count moving, so that nodes keep being added.
		w.deleteNode()
		w.settle()
		return
	}
	inFlight := w.attemptPopped(true)

	changes := make([]change, 1, 3)
	if w.percent(20) {
		changes = changes[:2+w.pick(2)]
	}
	for i := range changes {
		c := &changes[i]
		c.ev, c.kind, c.node = w.event()
		c.view = policytest.MakeEvent(&c.ev)
		for _, e := range w.queues {
			e.q.MoveOnEvent(c.ev)
		}
	}
	for _, pp := range inFlight {
		w.handBack(pp)
	}
	w.compare(changes, inFlight)
	w.settle()
	for _, e := range w.queues {
		e.check(t)
		if s := e.q.Stats(); s.Unschedulable != len(w.pending) || s.InFlightPods != 0 || s.InFlightEvents != 0 {
			t.Fatalf("queue after settling: %+v, want all %d pending pods unschedulable", s, len(w.pending))
		}
	}
}

// change is an event applied to the cluster, its label and the node it
// changes.
type change struct {
	ev   abi.Event
	view abi.EventView
	kind string
	node string
}

// compare checks the pods either queue moved for the changes; inFlight
// were in flight during them.
func (w *hintsWorld) compare(changes []change, inFlight []*pendingPod) {
	t := w.t
	w.counts.steps++
	if len(changes) > 1 {
		w.counts.multi++
	}
	var changed []*cache.NodeInfo
	w.update()
	for _, c := range changes {
		w.counts.events++
		w.counts.byKind[c.kind]++
		ni := w.snap.Get(c.node)
		if ni == nil {
			t.Fatalf("the node %s of event %s is not in the snapshot", c.node, c.kind)
		}
		if !slices.Contains(changed, ni) {
			changed = append(changed, ni)
		}
	}
	var fps []falsePositive
	for _, pp := range w.sortedPending() {
		w.counts.candidates++
		fits := false
		var st *framework.Status // the last changed node's verdict
		for _, ni := range changed {
			if st = framework.Filter(pp.ps, ni); st == nil {
				fits = true
				break
			}
		}
		if !fits && w.counts.steps%16 == 0 {
			// What makes the comparison sound: the pods that fit after the
			// events fit a node they changed. (Sampled: it costs a filter
			// per node.)
			for _, other := range w.snap.List() {
				if framework.Filter(pp.ps, other) == nil {
					t.Fatalf("%s fits %s, which no event changed: the harness let a pod that fits wait", pp.obj.Name, other.Name())
				}
			}
		}
		var moved [2]bool
		for i, e := range w.queues {
			s, ok := e.q.PodState(pp.obj.UID)
			if !ok {
				t.Fatalf("%s queue does not hold %s", hintsQueueNames[i], pp.obj.Name)
			}
			if moved[i] = s.Queue != QueueUnschedulable; moved[i] {
				w.counts.moved[i]++
			}
		}
		if fits {
			w.counts.fits++
		}
		if slices.Contains(inFlight, pp) {
			w.counts.replayed++
			if fits {
				w.counts.replayedFits++
			}
			if moved[qHints] {
				w.counts.replayedMoved++
			}
		}
		if !moved[qAlways] {
			t.Errorf("AlwaysQueue did not move %s", pp.obj.Name)
		}
		switch {
		case fits && !moved[qHints]:
			w.counts.falseNeg++
			if w.counts.falseNeg <= hintsMaxReported {
				t.Errorf("false negative: %s fits a node the events changed, but hints left it unschedulable\n%s",
					pp.obj.Name, w.describe(pp, changes))
			}
		case !fits && moved[qHints]:
			w.counts.falsePos++
			fps = append(fps, falsePositive{pp, st})
		}
	}
	w.explain(fps, changes)
}

// selfChecking are the plugins whose node hints decide by their own
// filter's condition on the changed node (TaintToleration, NodeAffinity,
// NodeUnschedulable exactly; NodeResourcesFit against allocatable minus
// requested, as its filter). NodePorts and NodeName queue on any node add.
var selfChecking = map[string]bool{
	abi.PluginTaintToleration: true, abi.PluginNodeAffinity: true,
	abi.PluginNodeUnschedulable: true, abi.PluginNodeResourcesFit: true,
}

// falsePositive is a pod moved that the filters reject on the event's
// node, and their verdict.
type falsePositive struct {
	pp *pendingPod
	st *framework.Status
}

// explain attributes the false positives of a step: which of each pod's
// rejecting plugins queue it (each asked alone, in one batch per event),
// and, for a step of one event, which filter still rejects it on the
// event's node.
func (w *hintsWorld) explain(fps []falsePositive, changes []change) {
	if len(fps) == 0 {
		return
	}
	var views []abi.PodView
	for _, fp := range fps {
		views = append(views, fp.pp.viewsByPlugin()...)
	}
	queuers := make([][]string, len(fps))
	for _, c := range changes {
		hints := make([]abi.Hint, len(views))
		w.hint.Hints(c.view, views, hints)
		for i, fp := range fps {
			rejected := fp.pp.rejected[qHints].Unschedulable
			for _, q := range queuingOf(rejected, hints[:len(rejected)]) {
				if !slices.Contains(queuers[i], q) {
					queuers[i] = append(queuers[i], q)
				}
			}
			hints = hints[len(rejected):]
		}
	}
	for i, fp := range fps {
		rejected := fp.pp.rejected[qHints].Unschedulable
		slices.Sort(queuers[i])
		if len(queuers[i]) == 0 {
			w.t.Errorf("%s was moved, but no hint of its rejecting plugins %v queues it\n%s", fp.pp.obj.Name, rejected, w.describe(fp.pp, changes))
		}
		if len(changes) > 1 {
			w.counts.fp[fmt.Sprintf("%-17s queued by %s", "several events", strings.Join(queuers[i], "+"))]++
			continue
		}
		c := changes[0]
		family := c.kind
		if strings.HasPrefix(family, "NodeUpdate") {
			family = "NodeUpdate"
		}
		// A node hint that checks its own plugin's condition on the new
		// node must not queue a pod that plugin's filter still rejects there.
		if family != "AssignedPodDelete" && selfChecking[fp.st.Plugin] && slices.Contains(queuers[i], fp.st.Plugin) {
			w.counts.disagreements++
			w.t.Errorf("on %s the %s hint queued %s, whose %s filter rejects node %s: %s\n%s", c.kind, fp.st.Plugin,
				fp.pp.obj.Name, fp.st.Plugin, c.node, fp.st.Message(), w.describe(fp.pp, changes))
		}
		note := ""
		if !slices.Contains(rejected, fp.st.Plugin) {
			note = " (not among its rejecting plugins)"
		}
		w.counts.fp[fmt.Sprintf("%-17s queued by %-28s rejected by %s%s", family, strings.Join(queuers[i], "+"), fp.st.Plugin, note)]++
	}
}

// viewsByPlugin are the pod's records with one of the plugins that rejected
// it in the hints queue each.
func (pp *pendingPod) viewsByPlugin() []abi.PodView {
	var views []abi.PodView
	for _, name := range pp.rejected[qHints].Unschedulable {
		rec := pp.rec
		rec.UnschedulablePlugins = []string{name}
		views = append(views, policytest.PodView(&rec))
	}
	return views
}

// queuingOf names the plugins whose hint did not say Skip.
func queuingOf(plugins []string, hints []abi.Hint) []string {
	var out []string
	for i, h := range hints {
		switch h {
		case abi.HintQueue:
			out = append(out, plugins[i])
		case abi.HintSkip:
		default:
			out = append(out, plugins[i]+"(error)")
		}
	}
	return out
}

// queuingPlugins asks the hint slot about pp once per rejecting plugin.
func (w *hintsWorld) queuingPlugins(pp *pendingPod, ev abi.EventView) []string {
	views := pp.viewsByPlugin()
	hints := make([]abi.Hint, len(views))
	w.hint.Hints(ev, views, hints)
	return queuingOf(pp.rejected[qHints].Unschedulable, hints)
}

// describe is a reproducer: the events, the pod, what it was rejected by
// and which of those plugins' hints queue it for each event.
func (w *hintsWorld) describe(pp *pendingPod, changes []change) string {
	var b strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&b, "event: %s on node %s; hints queuing the pod: %v\n", c.kind, c.node, w.queuingPlugins(pp, c.view))
		if o, ok := c.view.OldNode(); ok {
			fmt.Fprintf(&b, "  old node record: %s\n", nodeRecord(o))
		}
		if n, ok := c.view.NewNode(); ok {
			fmt.Fprintf(&b, "  new node record: %s\n", nodeRecord(n))
		}
		if p, ok := c.view.OldPod(); ok {
			fmt.Fprintf(&b, "  deleted pod: %s on %s, requests %v, host ports %v\n", p.Name(), p.NodeName(), quantitiesOf(p.Requests()), portsOf(p.HostPorts()))
		}
		if p, ok := c.view.NewPod(); ok {
			fmt.Fprintf(&b, "  added pod: %s on %s, requests %v, host ports %v\n", p.Name(), p.NodeName(), quantitiesOf(p.Requests()), portsOf(p.HostPorts()))
		}
	}
	spec := pp.obj.Spec
	var tols []string
	for _, tol := range spec.Tolerations {
		tols = append(tols, fmt.Sprintf("%s %s %s:%s", tol.Key, tol.Operator, tol.Value, tol.Effect))
	}
	fmt.Fprintf(&b, "pod %s: containers %v, init containers %v, nodeSelector %v, affinity %v, tolerations %q\n",
		pp.obj.Name, containersOf(spec.Containers), containersOf(spec.InitContainers), spec.NodeSelector, affinityOf(spec.Affinity), tols)
	fmt.Fprintf(&b, "rejected (last attempt popped from the hints queue) by %v", pp.rejected[qHints])
	return b.String()
}

func nodeRecord(n abi.NodeView) string {
	var taints []string
	for i := range n.Taints().Len() {
		tt := n.Taints().At(i)
		taints = append(taints, fmt.Sprintf("%s=%s:%v", tt.Key, tt.Value, tt.Effect))
	}
	var labels []string
	for i := range n.Labels().Len() {
		k, v := n.Labels().At(i)
		labels = append(labels, k+"="+v)
	}
	return fmt.Sprintf("unschedulable=%v labels=%v taints=%v allocatable=%v requested=%v",
		n.Unschedulable(), labels, taints, quantitiesOf(n.Allocatable()), quantitiesOf(n.Requested()))
}

func quantitiesOf(qs abi.QuantityList) []string {
	var out []string
	for i := range qs.Len() {
		name, v := qs.At(i)
		out = append(out, name+"="+strconv.FormatInt(v, 10))
	}
	return out
}

func portsOf(ps abi.HostPortList) []string {
	var out []string
	for i := range ps.Len() {
		p := ps.At(i)
		out = append(out, fmt.Sprintf("%s:%d/%v", p.HostIP, p.Port, p.Protocol))
	}
	return out
}

func containersOf(cs []v1.Container) []string {
	var out []string
	for _, c := range cs {
		var reqs []string
		for _, name := range slices.Sorted(maps.Keys(c.Resources.Requests)) {
			q := c.Resources.Requests[name]
			reqs = append(reqs, string(name)+"="+q.String())
		}
		s := c.Name + "{" + strings.Join(reqs, ",") + "}"
		if c.RestartPolicy != nil {
			s += "(sidecar)"
		}
		for _, p := range c.Ports {
			s += fmt.Sprintf(" port %s:%d/%s", p.HostIP, p.HostPort, p.Protocol)
		}
		out = append(out, s)
	}
	return out
}

func affinityOf(a *v1.Affinity) string {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "none"
	}
	return fmt.Sprint(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
}

// settle retries the pods the queues moved, and sends the binds' events,
// until both queues hold every pending pod in the unschedulable pool.
func (w *hintsWorld) settle() {
	for {
		w.attemptPopped(false)
		if len(w.binds) == 0 {
			return
		}
		// The hints queue gets the binds' events; the AlwaysQueue queue
		// would retry every pod once more for nothing (a bind only takes
		// room).
		for _, ev := range w.binds {
			w.queues[qHints].q.MoveOnEvent(ev)
		}
		w.binds = w.binds[:0]
	}
}

// attemptPopped pops everything both queues hand out and attempts each pod
// once, in name order: a pod that fits is bound; the others are handed back
// with the plugins that rejected them, or, with keep, returned still in
// flight.
func (w *hintsWorld) attemptPopped(keep bool) []*pendingPod {
	var popped []*pendingPod
	for i, e := range w.queues {
		for {
			en := e.tryPop(w.t)
			if en == nil {
				break
			}
			p := en.(*Pod)
			pp := w.pending[p.uid]
			if pp == nil {
				w.t.Fatalf("%s queue popped %s, which is not pending", hintsQueueNames[i], p.obj.Name)
			}
			if pp.popped[qHints] == nil && pp.popped[qAlways] == nil {
				popped = append(popped, pp)
			}
			pp.popped[i] = p
		}
	}
	slices.SortFunc(popped, func(a, b *pendingPod) int { return strings.Compare(a.obj.Name, b.obj.Name) })
	var kept []*pendingPod
	for _, pp := range popped {
		w.counts.attempts++
		rejected, node := w.attempt(pp)
		switch {
		case node != "":
			w.bind(pp, node)
		default:
			for i := range w.queues {
				if pp.popped[i] != nil {
					pp.rejected[i] = rejected
				}
			}
			if keep {
				kept = append(kept, pp)
			} else {
				w.handBack(pp)
			}
		}
	}
	return kept
}

// attempt runs the native filters over every node, as the cycle does: the
// first feasible node, or the plugins that rejected the pod.
func (w *hintsWorld) attempt(pp *pendingPod) (podview.Plugins, string) {
	w.update()
	d := &w.diag
	d.Reset()
	feasible, _ := framework.FindFeasible(context.Background(), pp.ps, w.snap.List(), 0, 0, 1, d)
	if err := d.Err(); err != nil {
		w.t.Fatal(err)
	}
	if len(feasible) > 0 {
		return podview.Plugins{}, feasible[0].Name()
	}
	r := podview.Plugins{Unschedulable: d.UnschedulablePlugins(), Pending: d.PendingPlugins()}
	if len(r.Unschedulable) == 0 {
		w.t.Fatalf("%s fits no node, and no plugin rejected it", pp.obj.Name)
	}
	return r, ""
}

// handBack returns a popped pod to the queues that popped it.
func (w *hintsWorld) handBack(pp *pendingPod) {
	for i, e := range w.queues {
		if p := pp.popped[i]; p != nil {
			if err := e.q.AddUnschedulableIfNotPresent(p, pp.rejected[i]); err != nil {
				w.t.Fatal(err)
			}
			pp.popped[i] = nil
		}
	}
}

// bind binds pp to node: the queues that popped it are done with it, a
// queue still holding it deletes it (the informer's update of a bound pod),
// and the bound pod's Add is sent once the queues are quiet.
func (w *hintsWorld) bind(pp *pendingPod, node string) {
	for i, e := range w.queues {
		if p := pp.popped[i]; p != nil {
			e.q.Done(p.uid)
		} else {
			e.q.Delete(pp.obj)
		}
	}
	delete(w.pending, pp.obj.UID)
	b := pp.obj.DeepCopy()
	b.Spec.NodeName = node
	if err := w.cache.AddPod(b); err != nil {
		w.t.Fatal(err)
	}
	w.bound = append(w.bound, b)
	w.binds = append(w.binds, podview.PodEvent(abi.ActionAdd, nil, b, nil))
	w.counts.binds++
}

func (w *hintsWorld) update() {
	if err := w.cache.UpdateSnapshot(w.snap); err != nil {
		w.t.Fatal(err)
	}
}

func (w *hintsWorld) sortedPending() []*pendingPod {
	out := slices.Collect(maps.Values(w.pending))
	slices.SortFunc(out, func(a, b *pendingPod) int { return strings.Compare(a.obj.Name, b.obj.Name) })
	return out
}

// deleteNode deletes a node and the pods bound to it, sending their events
// as host/cluster does.
func (w *hintsWorld) deleteNode() {
	name := w.names[w.pick(len(w.names))]
	var evs []abi.Event
	w.bound = slices.DeleteFunc(w.bound, func(p *v1.Pod) bool {
		if p.Spec.NodeName != name {
			return false
		}
		if err := w.cache.RemovePod(p); err != nil {
			w.t.Fatal(err)
		}
		evs = append(evs, podview.PodEvent(abi.ActionDelete, p, nil, nil))
		return true
	})
	n := w.nodes[name]
	if err := w.cache.RemoveNode(n); err != nil {
		w.t.Fatal(err)
	}
	delete(w.nodes, name)
	w.names = slices.DeleteFunc(w.names, func(s string) bool { return s == name })
	evs = append(evs, podview.NodeEvent(abi.ActionDelete, n, nil, nil, 0))
	for _, ev := range evs {
		for _, e := range w.queues {
			e.q.MoveOnEvent(ev)
		}
	}
	w.counts.nodeDeletes++
}

func (w *hintsWorld) setNode(n *v1.Node) {
	if _, ok := w.nodes[n.Name]; !ok {
		i, _ := slices.BinarySearch(w.names, n.Name)
		w.names = slices.Insert(w.names, i, n.Name)
	}
	w.nodes[n.Name] = n
}

// event applies one generated change to the cluster and returns its event
// (as host/cluster builds it), its label and the node it changes.
func (w *hintsWorld) event() (abi.Event, string, string) {
	for {
		switch r := w.rng.IntN(100); {
		case r < 15 && len(w.nodes) < hintsMaxNodes:
			n := w.newNode()
			w.cache.AddNode(n)
			w.setNode(n)
			req, pods := w.cache.NodeUsage(n.Name)
			return podview.NodeEvent(abi.ActionAdd, nil, n, req, pods), "NodeAdd", n.Name
		case r < 32 && len(w.bound) > 0:
			i := w.rng.IntN(len(w.bound))
			p := w.bound[i]
			w.bound = slices.Delete(w.bound, i, i+1)
			if err := w.cache.RemovePod(p); err != nil {
				w.t.Fatal(err)
			}
			return podview.PodEvent(abi.ActionDelete, p, nil, nil), "AssignedPodDelete", p.Spec.NodeName
		case r < 40:
			// Another scheduler's pod: takes room, moves nothing.
			p := w.newBoundPod(w.names[w.rng.IntN(len(w.names))])
			if err := w.cache.AddPod(p); err != nil {
				w.t.Fatal(err)
			}
			return podview.PodEvent(abi.ActionAdd, nil, p, nil), "AssignedPodAdd", p.Spec.NodeName
		default:
			old := w.nodes[w.names[w.rng.IntN(len(w.names))]]
			n := old.DeepCopy()
			var changes []string
			for range 1 + min(w.rng.IntN(6), 1) { // one change, sometimes two
				changes = append(changes, w.changeNode(n))
			}
			w.cache.UpdateNode(old, n)
			w.setNode(n)
			act := podview.NodeUpdateActions(old, n)
			if act == 0 {
				continue // no event, as host/cluster sends none (cordon, no-op)
			}
			for _, c := range changes {
				w.counts.byChange[c]++
			}
			req, pods := w.cache.NodeUsage(n.Name)
			return podview.NodeEvent(act, old, n, req, pods), eventLabel(abi.ResourceNode, act), n.Name
		}
	}
}

// Generated names and values: few, so that they collide.
var (
	genZones     = []string{"a", "b", "c"}
	genTiers     = []string{"1", "2", "3", "5", "10", "x"}
	genHostPorts = []v1.ContainerPort{
		{HostPort: 8080, ContainerPort: 8080},
		{HostPort: 8080, ContainerPort: 8080, HostIP: "10.0.0.1", Protocol: v1.ProtocolTCP},
		{HostPort: 8080, ContainerPort: 8080, Protocol: v1.ProtocolUDP},
		{HostPort: 9090, ContainerPort: 9090, HostIP: "10.0.0.2"},
		{HostPort: 9100, ContainerPort: 9100, HostIP: "0.0.0.0", Protocol: v1.ProtocolTCP},
	}
	genTaints = []v1.Taint{
		{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Value: "true", Effect: v1.TaintEffectNoExecute},
		{Key: "maint", Effect: v1.TaintEffectPreferNoSchedule},
	}
	genTolerations = []v1.Toleration{
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "batch", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra"}, // operator "" is Equal; no effect is every effect
		{Key: "spot", Operator: v1.TolerationOpExists},
		{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}, // not NoSchedule
		{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Operator: v1.TolerationOpExists}, // every taint
	}
	genAffinityExprs = []v1.NodeSelectorRequirement{
		{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		{Key: "zone", Operator: v1.NodeSelectorOpNotIn, Values: []string{"c"}},
		{Key: "gpu", Operator: v1.NodeSelectorOpExists},
		{Key: "gpu", Operator: v1.NodeSelectorOpDoesNotExist},
		{Key: "tier", Operator: v1.NodeSelectorOpGt, Values: []string{"2"}},
		{Key: "tier", Operator: v1.NodeSelectorOpLt, Values: []string{"5"}},
		{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}},
	}
)

const gpuResource v1.ResourceName = "example.com/gpu"

func (w *hintsWorld) pick(n int) int { return w.rng.IntN(n) }

func (w *hintsWorld) percent(p int) bool { return w.rng.IntN(100) < p }

func cpuMilli(v int64) resource.Quantity { return *resource.NewMilliQuantity(v, resource.DecimalSI) }

func countQty(v int64) resource.Quantity { return *resource.NewQuantity(v, resource.DecimalSI) }

func memMiB(v int64) resource.Quantity { return *resource.NewQuantity(v<<20, resource.BinarySI) }

func (w *hintsWorld) newNode() *v1.Node {
	w.seq++
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%03d", w.seq), Labels: map[string]string{"zone": genZones[w.pick(3)]}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    cpuMilli(int64(2+w.pick(15)) * 500),
			v1.ResourceMemory: memMiB(int64(2+w.pick(15)) * 1024),
			v1.ResourcePods:   countQty(int64(2 + w.pick(9))),
		}},
	}
	if w.percent(40) {
		n.Status.Allocatable[gpuResource] = countQty(int64(w.pick(3)))
	}
	if w.percent(70) {
		n.Labels["disk"] = []string{"ssd", "hdd"}[w.pick(2)]
	}
	if w.percent(60) {
		n.Labels["tier"] = genTiers[w.pick(len(genTiers))]
	}
	if w.percent(30) {
		n.Labels["gpu"] = "true"
	}
	for _, tt := range genTaints {
		if w.percent(20) {
			n.Spec.Taints = append(n.Spec.Taints, tt)
		}
	}
	n.Spec.Unschedulable = w.percent(15)
	return n
}

// changeNode changes n once and names the change. Most changes can make a
// pod fit; the others make room scarcer.
func (w *hintsWorld) changeNode(n *v1.Node) string {
	switch r := w.pick(100); {
	case r < 20:
		switch k := []string{"zone", "disk", "tier", "gpu"}[w.pick(4)]; {
		case w.percent(30):
			delete(n.Labels, k)
		case k == "zone":
			n.Labels[k] = genZones[w.pick(3)]
		case k == "disk":
			n.Labels[k] = []string{"ssd", "hdd"}[w.pick(2)]
		case k == "tier":
			n.Labels[k] = genTiers[w.pick(len(genTiers))]
		default:
			n.Labels[k] = "true"
		}
		return "relabel"
	case r < 40 && len(n.Spec.Taints) > 0:
		i := w.pick(len(n.Spec.Taints))
		n.Spec.Taints = slices.Delete(n.Spec.Taints, i, i+1)
		return "remove taint"
	case r < 50:
		tt := genTaints[w.pick(len(genTaints))]
		if !slices.ContainsFunc(n.Spec.Taints, func(o v1.Taint) bool { return o.Key == tt.Key && o.Effect == tt.Effect }) {
			n.Spec.Taints = append(n.Spec.Taints, tt)
		}
		return "add taint"
	case r < 70:
		w.scaleAllocatable(n, 1)
		return "raise allocatable"
	case r < 80:
		w.scaleAllocatable(n, -1)
		return "lower allocatable"
	case r < 92 && n.Spec.Unschedulable:
		n.Spec.Unschedulable = false
		return "uncordon"
	case r < 92:
		w.scaleAllocatable(n, 1)
		return "raise allocatable"
	default:
		n.Spec.Unschedulable = true
		return "cordon"
	}
}

func (w *hintsWorld) scaleAllocatable(n *v1.Node, sign int64) {
	a := n.Status.Allocatable
	switch w.pick(4) {
	case 0:
		a[v1.ResourceCPU] = cpuMilli(max(0, a.Cpu().MilliValue()+sign*int64(1+w.pick(4))*500))
	case 1:
		a[v1.ResourceMemory] = memMiB(max(0, a.Memory().Value()>>20+sign*int64(1+w.pick(4))*1024))
	case 2:
		a[v1.ResourcePods] = countQty(max(0, a.Pods().Value()+sign*int64(1+w.pick(3))))
	default:
		q := a[gpuResource]
		a[gpuResource] = countQty(max(0, q.Value()+sign))
	}
}

// newBoundPod is a pod of another scheduler's bound to node.
func (w *hintsWorld) newBoundPod(node string) *v1.Pod {
	w.seq++
	c := v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
		v1.ResourceCPU:    cpuMilli(int64(1+w.pick(10)) * 100),
		v1.ResourceMemory: memMiB(int64(1+w.pick(16)) * 128),
	}}}
	if w.percent(10) {
		c.Resources.Requests[gpuResource] = countQty(1)
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bound-%04d", w.seq), Namespace: "default",
			UID: types.UID(fmt.Sprintf("uid-bound-%04d", w.seq))},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{c}},
	}
	if w.percent(35) {
		port := genHostPorts[w.pick(len(genHostPorts))]
		if w.percent(20) {
			// Held by a sidecar: restartable init containers' ports count.
			restart := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []v1.Container{{Name: "sidecar", RestartPolicy: &restart, Ports: []v1.ContainerPort{port}}}
		} else {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{port}
		}
	}
	w.bound = append(w.bound, p)
	return p
}

// addPending adds a new pending pod to both queues.
func (w *hintsWorld) addPending() {
	w.seq++
	name := fmt.Sprintf("pod-%05d", w.seq)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}}},
	}
	req := p.Spec.Containers[0].Resources.Requests
	if w.percent(90) {
		req[v1.ResourceCPU] = cpuMilli(int64(1+w.pick(30)) * 100)
	}
	if w.percent(70) {
		req[v1.ResourceMemory] = memMiB(int64(1+w.pick(32)) * 128)
	}
	if w.percent(10) {
		req[gpuResource] = countQty(1)
	}
	if w.percent(8) {
		// An init container asking more cpu than the containers: the pod
		// needs its peak.
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: cpuMilli(int64(20+w.pick(40)) * 100)}}})
	}
	if w.percent(25) {
		var ports []v1.ContainerPort
		for range 1 + w.pick(2) {
			ports = append(ports, genHostPorts[w.pick(len(genHostPorts))])
		}
		if w.percent(20) {
			restart := v1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "sidecar", RestartPolicy: &restart, Ports: ports})
		} else {
			p.Spec.Containers[0].Ports = ports
		}
	}
	switch w.pick(4) {
	case 0:
		p.Spec.NodeSelector = map[string]string{"zone": genZones[w.pick(3)]}
		if w.percent(30) {
			p.Spec.NodeSelector["disk"] = "ssd"
		}
	case 1:
		var terms []v1.NodeSelectorTerm
		for range 1 + w.pick(2) {
			var term v1.NodeSelectorTerm
			for range 1 + w.pick(2) {
				term.MatchExpressions = append(term.MatchExpressions, genAffinityExprs[w.pick(len(genAffinityExprs))])
			}
			terms = append(terms, term)
		}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	for i, tol := range genTolerations {
		if w.percent([]int{35, 10, 25, 10, 5, 2}[i]) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, tol)
		}
	}
	ps, st := testProfile().Prepare(cache.NewPodInfo(p), nil)
	if st != nil {
		w.t.Fatalf("Prepare(%s): %v", name, st.Message())
	}
	w.pending[p.UID] = &pendingPod{obj: p, ps: ps, rec: podview.Pod(p, nil, abi.PodQueueState{}, podview.Plugins{})}
	for _, e := range w.queues {
		e.q.Add(p)
	}
}
