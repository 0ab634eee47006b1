package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// TestNoLostWakeups is the randomized event storm of issue 30, against
// upstream kube-scheduler v1.37.1 and wasmsched, each on a control plane of
// its own (KWOK, kube-controller-manager's PV binder and resource claim
// controller), seed by seed. A seeded mix of cluster changes (nodes added,
// removed, relabelled, tainted, untainted, their allocatable changed; pods
// and whole pod groups deleted; pods relabelled, assigned or waiting, and
// waiting pods given a toleration; PersistentVolumes created for waiting
// claims, which the PV binder binds; devices published, devices freed by
// the resource claim controller when their pod or claim goes) runs while
// pods of every constraint kind arrive and wait: resources, node selector,
// node affinity, tolerations, host ports, inter-pod affinity and
// anti-affinity, topology spread, volumes, DRA claims and gangs. Once the
// scheduler has settled, a release phase frees one kind of constraint at a
// time (release: volumes, untaints, devices, room, pod labels); then the test waits
// for quiescence: no binding and nothing in activeQ or backoffQ
// (scheduler_pending_pods) for stormQuiet.
//
// At quiescence every pending pod must be truly unschedulable: the test
// runs the native filters of the default profile (host/framework's
// plugins, without wasmsched's placement plugins) on a snapshot of the
// final cluster built from its own informers, outside either scheduler
// (checkPending). A pending pod some node fits is a missed wake-up: no
// event, or no QueueingHint, moved it. And wasmsched must leave no more
// pods pending than upstream on the same seed (give or take
// stormPendingSlack and a tenth: where the other pods went differs between
// the two), nor make more than
// stormSpinFactor times upstream's unschedulable attempts (plus
// stormSpinSlack): the opposite failure, pods retried in a loop with
// nothing changed, is as invisible without a count.
//
// The storm and the wait together stay under upstream's
// podMaxInUnschedulablePodsDuration (5 min), so upstream's periodic flush
// rescues nothing either; wasmsched's is set to stormFlush, longer than the
// test, so that a missed wake-up shows as a pod left pending instead of a
// late binding.
//
// The mix of changes is a function of the seed alone: every choice is drawn
// from a math/rand/v2 PCG seeded with it and picks among the objects the
// test itself created, by index; what the schedulers do meanwhile is not
// reproducible, and so neither are which pods a node removal takes with it
// nor which pods are pending at the end. STORM_SEEDS (comma-separated
// uint64s) replaces the default seeds:
//
//	go test ./e2e -run TestNoLostWakeups -count=1 -v
//	STORM_SEEDS=3,4,5,6,7,8 go test ./e2e -run TestNoLostWakeups -count=1 -v -timeout 60m
//	make flake         # then seeds FLAKE_STORM_SEEDS (3 to 10), after the -race runs
//
// Each seed costs about 2 x 95 s on 2 cores (5 s setup, 56 s storm, 6-30 s
// settling, 10 s release, 15-30 s wait for quiescence, which may take up
// to stormQuiesceTimeout).
func TestNoLostWakeups(t *testing.T) {
	for _, seed := range stormSeeds(t) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			results := map[string]stormResult{}
			for _, impl := range []string{implUpstream, implWasmsched} {
				t.Run(impl, func(t *testing.T) {
					if only != "" && only != impl {
						t.Skipf("%s=%s", onlyEnv, only)
					}
					if r, ok := runStorm(t, impl, seed); ok {
						results[impl] = r
					}
				})
			}
			up, okU := results[implUpstream]
			ws, okW := results[implWasmsched]
			t.Logf("seed %d: pods pending at quiescence: upstream %s, wasmsched %s; unschedulable attempts: upstream %s, wasmsched %s",
				seed, countText(okU, up.pending), countText(okW, ws.pending), countText(okU, up.unschedulable), countText(okW, ws.unschedulable))
			if !okU || !okW {
				return
			}
			// Each pending pod was checked truly unschedulable above; how
			// many are left depends also on where the others were placed
			// (the two schedulers' scores and timing differ), hence the
			// slack: this catches wasmsched leaving pods behind
			// systematically, not one placement that went otherwise.
			if limit := up.pending + stormPendingSlack + up.pending/10; ws.pending > limit {
				t.Errorf("seed %d: wasmsched left %d pods pending, upstream %d: want no more than upstream (limit %d)", seed, ws.pending, up.pending, limit)
			}
			// Not a lost wake-up but its opposite, as invisible without a
			// count: pods retried in a loop with nothing changed. Upstream's
			// count is the yardstick; wasmsched may retry more where its
			// hints are less selective (issue 30), not by orders of
			// magnitude.
			if limit := stormSpinFactor*up.unschedulable + stormSpinSlack; ws.unschedulable > limit {
				t.Errorf("seed %d: wasmsched made %d unschedulable attempts, upstream %d (limit %d): pods retried in a loop; "+
					"the pods with the most attempts: %s; the most frequent moves: %s",
					seed, ws.unschedulable, up.unschedulable, limit, ws.spinners, ws.moves)
			}
		})
	}
}

// Limits relative to upstream's on the same seed: of the pods wasmsched
// leaves pending, upstream's plus stormPendingSlack plus a tenth; of its
// unschedulable attempts, stormSpinFactor times upstream's plus
// stormSpinSlack.
const (
	stormPendingSlack = 2
	stormSpinFactor   = 3
	stormSpinSlack    = 300
)

// stormResult is what one implementation's run of a seed measured.
type stormResult struct {
	pending       int    // pods pending at quiescence
	unschedulable int    // scheduler_schedule_attempts_total{result="unschedulable"}
	moves         string // the most frequent scheduler_queue_incoming_pods_total samples
	spinners      string // wasmsched: the pods with the most "unable to schedule" log lines
}

// countText is n, or "-" when not ok (the run did not measure it).
func countText(ok bool, n int) string {
	if !ok {
		return "-"
	}
	return strconv.Itoa(n)
}

// The storm's shape.
const (
	// stormSeedsEnv replaces defaultStormSeeds.
	stormSeedsEnv = "STORM_SEEDS"
	// stormSteps changes, one every stormStep: about a minute.
	stormSteps = 160
	stormStep  = 350 * time.Millisecond
	// stormQuiet: quiescence is this long without a binding and with
	// nothing in activeQ or backoffQ (upstream's maximum backoff is 10 s).
	stormQuiet = 15 * time.Second
	// stormQuiesceTimeout bounds the wait for quiescence.
	stormQuiesceTimeout = 100 * time.Second
	// Between the storm and the release phase the scheduler settles:
	// stormSettleQuiet without a change, or stormSettleTimeout.
	stormSettleQuiet   = 6 * time.Second
	stormSettleTimeout = 30 * time.Second
	// stormReleaseGap separates the release phase's kinds of change.
	stormReleaseGap = 2 * time.Second
	// stormFlush is wasmsched's queue.maxInUnschedulable here: longer than
	// the test.
	stormFlush = "30m"
)

var defaultStormSeeds = []uint64{1, 2}

// stormSeeds are the seeds to run: STORM_SEEDS, or defaultStormSeeds.
func stormSeeds(t *testing.T) []uint64 {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(stormSeedsEnv))
	if v == "" {
		return defaultStormSeeds
	}
	var seeds []uint64
	for _, f := range strings.Split(v, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want comma-separated unsigned integers: %v", stormSeedsEnv, v, err)
		}
		seeds = append(seeds, s)
	}
	return seeds
}

// Labels, taint, classes and drivers of the storm.
const (
	stormTier     = "storm.wasmsched.test/tier"
	stormTaint    = "storm.wasmsched.test/dedicated"
	stormClass    = "storm-immediate" // StorageClass, Immediate binding, no provisioner
	stormHostPort = 8080
	stormAppLabel = "app"
	// stormMirrorValue is the app label of relabelled pods, which the
	// mirror pods want one of in their zone.
	stormMirrorValue = "mirrored"
	stormNodeCount   = 4 // nodes before the storm
)

var (
	stormZones = []string{"zone-a", "zone-b", "zone-c"}
	stormTiers = []string{"gold", "silver"}
	// stormControllers: the PV binder binds the claims to the volumes the
	// storm creates; the resource claim controller frees the devices of
	// deleted pods' claims.
	stormControllers = []string{
		"persistentvolume-binder-controller",
		"persistentvolume-protection-controller",
		"persistentvolumeclaim-protection-controller",
		"resourceclaim-controller",
	}
)

// Pod kinds: the constraint each pod of the storm waits on (besides room).
const (
	kindPlain       = "plain"       // a large cpu request
	kindWeb         = "web"         // small, labelled app=web: what kindPodAffinity pods need in their zone
	kindSelector    = "selector"    // nodeSelector tier=gold
	kindNodeAff     = "nodeaff"     // required node affinity to one zone
	kindToleration  = "tolerate"    // tolerates the storm taint
	kindHostPort    = "hostport"    // hostPort 8080
	kindAntiAff     = "anti"        // required anti-affinity to its kind per hostname
	kindPodAffinity = "podaff"      // required affinity to app=web per zone
	kindMirror      = "mirror"      // required affinity to app=mirror per zone, a label only relabelled pods carry
	kindSpread      = "spread"      // zone spread, maxSkew 1, DoNotSchedule
	kindVolume      = "pvc"         // an Immediate claim, unbound until the storm creates its volume
	kindDevice      = "dra"         // a ResourceClaim for one device
	kindGang        = "gang"        // a PodGroup member (minCount 2 or 3)
	stormDeleteKind = "deleted-pod" // for the action counts
)

var stormPodKinds = []string{kindPlain, kindWeb, kindSelector, kindNodeAff, kindToleration, kindHostPort,
	kindAntiAff, kindPodAffinity, kindMirror, kindSpread, kindVolume, kindDevice}

// runStorm runs seed's storm against impl on a control plane of its own
// and checks the pods pending at quiescence; it returns what it measured,
// and false if the run did not reach the check.
func runStorm(t *testing.T, impl string, seed uint64) (stormResult, bool) {
	ctx := context.Background()
	env := testenv.Start(t)
	if _, err := env.StartKWOK(ctx, testenv.KWOKOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := env.CreateNamespace(ctx, "storm")
	if err != nil {
		t.Fatal(err)
	}
	s := &scheduler{name: impl, env: env, c: env.Client, ns: ns}
	cm, err := env.StartControllerManager(ctx, testenv.ControllerManagerOptions{Controllers: stormControllers})
	if err != nil {
		t.Fatal(err)
	}
	st := newStorm(t, s, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("[%s] pods at the end of the failed test:\n%s", impl, s.dump())
			t.Logf("kube-controller-manager log (tail of %s):\n%s", cm.LogPath(), cm.Tail(40))
		}
	})
	st.setup()
	w := watchPods(t, s.c, ns)

	switch impl {
	case implUpstream:
		s.upstream = startUpstream(t, env)
	default:
		s.wasm = startScheduler(t, env.Kubeconfig, "-set", "queue.maxInUnschedulable="+stormFlush)
	}
	t0 := time.Now()
	st.run()
	stormEnd := time.Since(t0)
	st.quiesce(stormSettleQuiet, stormSettleTimeout, false)
	st.release()
	st.quiesce(stormQuiet, stormQuiesceTimeout, true)
	quiet := time.Since(t0)
	pending := checkPending(t, s)
	page := s.page(t)
	attempts := func(result string) float64 {
		return testenv.SumSamples(page, "scheduler_schedule_attempts_total", `result="`+result+`"`)
	}
	s.logf(t, "seed %d: %d steps of %v; storm %v, released and quiescent after %v, checked after %v; actions: %v; created %d pods, %d groups; "+
		"attempts: %v scheduled, %v unschedulable, %v error; %d pods bound after being reported unschedulable (woken); pending at quiescence: %d %v",
		seed, stormSteps, stormStep, stormEnd.Round(time.Second), quiet.Round(time.Second), time.Since(t0).Round(time.Second),
		st.countsText(), len(st.pods)+st.gangPods, len(st.groups),
		attempts("scheduled"), attempts("unschedulable"), attempts("error"), w.woken(), pending.total, pending.byKind)
	r := stormResult{pending: pending.total, unschedulable: int(attempts("unschedulable")),
		moves: topSamples(page, "scheduler_queue_incoming_pods_total", 12)}
	s.logf(t, "the most frequent moves (scheduler_queue_incoming_pods_total): %s", r.moves)
	if s.wasm != nil {
		r.spinners = mostAttempted(s.wasm.LogPath(), 6)
		s.logf(t, "the pods with the most attempts: %s", r.spinners)
	}
	// What the storm's length guards against, read rather than timed: a
	// pod the periodic flush moved (upstream's 5 minutes) was not woken by
	// an event, and the comparison would not hold.
	if n := testenv.SumSamples(page, "scheduler_queue_incoming_pods_total", `event="UnschedulableTimeout"`); n > 0 {
		t.Errorf("%v pods moved by the unschedulable-pods flush (UnschedulableTimeout) after %v: the run outlasted the flush; shorten the storm",
			n, time.Since(t0).Round(time.Second))
	}
	return r, !t.Failed() || pending.checked
}

// storm is one run's state: the objects it created, in order, which is all
// its choices pick from, so that the sequence of changes depends on the
// seed only.
type storm struct {
	t   *testing.T
	s   *scheduler
	rng *rand.Rand
	seq int // names

	nodes    []string        // live nodes, in creation order
	tainted  map[string]bool // nodes carrying the storm taint
	pods     []string        // non-gang pods created, in order (deleted ones too)
	groups   []stormGroup    // pod groups created, in order
	gangPods int
	waitPV   []string // claims without a volume yet, oldest first
	// relabelled: pods whose app label the storm changed to
	// stormMirrorValue; relabelling again restores it.
	relabelled map[string]bool
	counts     map[string]int
	failures   int // API errors during the storm (logged)
}

type stormGroup struct {
	name    string
	members []string
	done    bool
}

func newStorm(t *testing.T, s *scheduler, seed uint64) *storm {
	t.Logf("[%s] storm seed %d", s.name, seed)
	return &storm{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 0x5705)), tainted: map[string]bool{}, relabelled: map[string]bool{}, counts: map[string]int{}}
}

func (st *storm) name(prefix string) string {
	st.seq++
	return fmt.Sprintf("%s-%d", prefix, st.seq)
}

// pick returns one of xs, drawn from the seeded source.
func pick[T any](st *storm, xs []T) T { return xs[st.rng.IntN(len(xs))] }

// setup creates what exists before the scheduler starts: stormNodeCount
// nodes of 4 cpu over the zones and tiers, one device each, the DeviceClass
// and the StorageClass.
func (st *storm) setup() {
	st.t.Helper()
	createDeviceClass(st.t, st.s, draClass, false)
	createClass(st.t, st.s, stormClass, "kubernetes.io/no-provisioner", storagev1.VolumeBindingImmediate)
	for i := range stormNodeCount {
		if err := st.addNode("4", stormZones[i%len(stormZones)], stormTiers[i%len(stormTiers)], false, 1); err != nil {
			st.t.Fatal(err)
		}
	}
	if err := st.s.env.WaitNodesReady(context.Background(), st.nodes...); err != nil {
		st.t.Fatal(err)
	}
}

// stormAction is one kind of change, drawn with weight.
type stormAction struct {
	name   string
	weight int
	do     func() error
}

// errSkip: the action had nothing to act on (drawn deterministically too).
var errSkip = errors.New("nothing to do")

func (st *storm) actions() []stormAction {
	return []stormAction{
		{"create-pod", 52, st.createPod},
		{"create-gang", 5, st.createGang},
		{"delete-pod", 6, st.deletePod},
		{"complete-group", 2, st.completeGroup},
		{"add-node", 2, st.addRandomNode},
		{"remove-node", 3, st.removeNode},
		{"relabel-node", 6, st.relabelNode},
		{"taint-node", 6, st.taintNode},
		{"untaint-node", 3, st.untaintNode},
		{"allocatable", 6, st.changeAllocatable},
		{"create-pv", 4, st.createPV},
		{"publish-devices", 3, st.publishDevices},
		{"relabel-pod", 6, st.relabelPod},
		{"tolerate-pod", 3, st.toleratePod},
	}
}

// run applies stormSteps changes, one every stormStep.
func (st *storm) run() {
	acts := st.actions()
	next := time.Now()
	for step := range stormSteps {
		total := 0
		for _, a := range acts {
			total += a.weight
		}
		r := st.rng.IntN(total)
		var a stormAction
		for _, a = range acts {
			if r < a.weight {
				break
			}
			r -= a.weight
		}
		switch err := a.do(); {
		case errors.Is(err, errSkip):
			st.counts[a.name+"(skipped)"]++
		case err != nil:
			st.failures++
			st.t.Logf("[%s] step %d %s: %v", st.s.name, step, a.name, err)
		default:
			st.counts[a.name]++
		}
		next = next.Add(stormStep)
		time.Sleep(time.Until(next))
	}
	if st.failures > stormSteps/10 {
		st.t.Errorf("%d of %d storm steps failed (see above)", st.failures, stormSteps)
	}
}

// release is the phase after the storm has settled: one kind of freeing
// change at a time, in an order drawn from the seed, stormReleaseGap
// apart: volumes for every waiting claim, the storm taint off every
// node, a device more on every node, every node's cpu raised to 8, a
// third of the pods deleted. In the storm a pod rejected by one plugin is
// usually woken by some later event of another kind which that plugin's
// hints also answer (a node added queues almost everything); here the
// change of one kind is the last that can free a pod waiting on it, so a
// hint that misses it leaves the pod pending for the check. Nodes are
// neither added nor relabelled here for that reason.
func (st *storm) release() {
	kinds := []struct {
		name string
		do   func() error
	}{
		{"volumes", func() error {
			for len(st.waitPV) > 0 {
				if err := st.createPV(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"untaint", func() error {
			for _, n := range st.nodes {
				if st.tainted[n] {
					st.tainted[n] = false
					if err := st.updateNode(n, func(n *v1.Node) {
						n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == stormTaint })
					}); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"devices", func() error {
			for _, n := range st.nodes {
				if err := st.publish(n, 1); err != nil {
					return err
				}
			}
			return nil
		}},
		{"allocatable", func() error {
			for _, n := range st.nodes {
				if err := st.setCPU(n, "8"); err != nil {
					return err
				}
			}
			return nil
		}},
		// Every pod but the mirror ones labelled app=mirror: the mirror
		// pods, which wait for such a pod in their zone, and the spread
		// pods waiting for their zone's count to fall are then freed by
		// assigned pods' label updates alone (upstream's
		// AssignedPod/UpdatePodLabel for InterPodAffinity and
		// PodTopologySpread).
		{"label-mirror", func() error {
			for _, name := range st.pods {
				if podKind(name) == kindMirror || st.relabelled[name] {
					continue
				}
				if err := st.relabelPodNamed(name); err != nil && !errors.Is(err, errSkip) {
					return err
				}
			}
			return nil
		}},
		{"delete-pods", func() error {
			for i := 0; i < len(st.pods); i += 3 {
				if err := st.deletePodNamed(st.pods[i]); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	var order []string
	for _, i := range st.rng.Perm(len(kinds)) {
		k := kinds[i]
		order = append(order, k.name)
		if err := k.do(); err != nil {
			st.t.Errorf("[%s] release %s: %v", st.s.name, k.name, err)
		}
		time.Sleep(stormReleaseGap)
	}
	st.s.logf(st.t, "released, in this order: %v", order)
}

func (st *storm) countsText() string {
	keys := make([]string, 0, len(st.counts))
	for k := range st.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, st.counts[k])
	}
	return b.String()
}

// ---- nodes ----

func (st *storm) addRandomNode() error {
	return st.addNode(pick(st, []string{"2", "3", "4"}), pick(st, stormZones), pick(st, stormTiers),
		st.rng.IntN(5) == 0, st.rng.IntN(3))
}

// addNode creates a KWOK node with cpu, zone and tier labels, the storm
// taint when tainted, and devices devices.
func (st *storm) addNode(cpu, zone, tier string, tainted bool, devices int) error {
	spec := testenv.NodeSpec{NamePrefix: "storm", CPU: cpu, Memory: "32Gi",
		Labels: map[string]string{v1.LabelTopologyZone: zone, stormTier: tier}}
	if tainted {
		spec.Taints = []v1.Taint{stormTaintOf()}
	}
	nodes, err := st.s.env.CreateFakeNodes(context.Background(), 1, spec)
	if err != nil {
		return err
	}
	name := nodes[0].Name
	st.nodes = append(st.nodes, name)
	st.tainted[name] = tainted
	if devices > 0 {
		return st.publish(name, devices)
	}
	return nil
}

func stormTaintOf() v1.Taint {
	return v1.Taint{Key: stormTaint, Value: "true", Effect: v1.TaintEffectNoSchedule}
}

// removeNode deletes a node (never one of the last three) and, as the pod
// garbage collector would, the pods bound to it.
func (st *storm) removeNode() error {
	if len(st.nodes) <= 3 {
		return errSkip
	}
	i := st.rng.IntN(len(st.nodes))
	name := st.nodes[i]
	st.nodes = slices.Delete(st.nodes, i, i+1)
	delete(st.tainted, name)
	ctx := context.Background()
	list, err := st.s.c.CoreV1().Pods(st.s.ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return err
	}
	for _, p := range list.Items {
		if err := st.deletePodNamed(p.Name); err != nil {
			return err
		}
	}
	return st.s.c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
}

// updateNode changes a node by get and update, retried on conflicts (KWOK
// writes node status).
func (st *storm) updateNode(name string, change func(*v1.Node)) error {
	ctx := context.Background()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := st.s.c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(n)
		_, err = st.s.c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// relabelNode moves a node to a drawn zone or flips its tier.
func (st *storm) relabelNode() error {
	name := pick(st, st.nodes)
	zone := ""
	if st.rng.IntN(2) == 0 {
		zone = pick(st, stormZones)
	}
	return st.updateNode(name, func(n *v1.Node) {
		if zone != "" {
			n.Labels[v1.LabelTopologyZone] = zone
			return
		}
		if n.Labels[stormTier] == "gold" {
			n.Labels[stormTier] = "silver"
		} else {
			n.Labels[stormTier] = "gold"
		}
	})
}

func (st *storm) taintNode() error {
	var clean []string
	for _, n := range st.nodes {
		if !st.tainted[n] {
			clean = append(clean, n)
		}
	}
	if len(clean) <= 1 {
		return errSkip
	}
	name := pick(st, clean)
	st.tainted[name] = true
	return st.updateNode(name, func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, stormTaintOf())
	})
}

func (st *storm) untaintNode() error {
	var tainted []string
	for _, n := range st.nodes {
		if st.tainted[n] {
			tainted = append(tainted, n)
		}
	}
	if len(tainted) == 0 {
		return errSkip
	}
	name := pick(st, tainted)
	st.tainted[name] = false
	return st.updateNode(name, func(n *v1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == stormTaint })
	})
}

// changeAllocatable sets a node's cpu capacity and allocatable.
func (st *storm) changeAllocatable() error {
	name := pick(st, st.nodes)
	return st.setCPU(name, pick(st, []string{"2", "3", "4", "6", "8"}))
}

// setCPU sets a node's cpu capacity and allocatable.
func (st *storm) setCPU(name, cpu string) error {
	patch := fmt.Sprintf(`{"status":{"capacity":{"cpu":%q},"allocatable":{"cpu":%q}}}`, cpu, cpu)
	_, err := st.s.c.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// ---- devices and volumes ----

// publishDevices publishes one or two more devices on a node, in a pool of
// their own.
func (st *storm) publishDevices() error {
	return st.publish(pick(st, st.nodes), 1+st.rng.IntN(2))
}

func (st *storm) publish(node string, n int) error {
	name := st.name("slice")
	devs := make([]resourcev1.Device, n)
	for i := range devs {
		devs[i] = resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)}
	}
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   draDriver,
			Pool:     resourcev1.ResourcePool{Name: node + "-" + name, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
			Devices:  devs,
		},
	}
	_, err := st.s.c.ResourceV1().ResourceSlices().Create(context.Background(), slice, metav1.CreateOptions{})
	return err
}

// createPV creates the volume of the oldest claim still without one,
// pre-bound to it (the PV binder completes the binding): a local volume on
// a drawn node, or a hostPath one any node can mount.
func (st *storm) createPV() error {
	if len(st.waitPV) == 0 {
		return errSkip
	}
	claim := st.waitPV[0]
	st.waitPV = st.waitPV[1:]
	name := st.name("pv")
	var pv *v1.PersistentVolume
	if st.rng.IntN(2) == 0 {
		pv = localPV(name, stormClass, "1Gi", pick(st, st.nodes))
	} else {
		pv = hostPathPV(name, stormClass, "1Gi")
	}
	pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: st.s.ns, Name: claim}
	_, err := st.s.c.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{})
	return err
}

// ---- pods ----

func (st *storm) createPod() error {
	kind := pick(st, stormPodKinds)
	name := st.name("p") + "-" + kind
	cpu := fmt.Sprintf("%dm", 100*(3+st.rng.IntN(8)))
	var opts []podOpt
	ctx := context.Background()
	switch kind {
	case kindPlain:
		cpu = fmt.Sprintf("%dm", 500*(2+st.rng.IntN(4)))
	case kindWeb:
		opts = append(opts, withLabels(stormAppLabel, kindWeb))
	case kindSelector:
		opts = append(opts, withNodeSelector(stormTier, "gold"))
	case kindNodeAff:
		zone := pick(st, stormZones)
		opts = append(opts, func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{zone}}},
				}}},
			}}
		})
	case kindToleration:
		opts = append(opts, func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: stormTaint, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		})
	case kindHostPort:
		opts = append(opts, func(p *v1.Pod) {
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: stormHostPort, HostPort: stormHostPort, Protocol: v1.ProtocolTCP}}
		})
	case kindAntiAff:
		opts = append(opts, withLabels(stormAppLabel, kindAntiAff), func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm(kindAntiAff, v1.LabelHostname)},
			}}
		})
	case kindPodAffinity, kindMirror:
		target := kindWeb
		if kind == kindMirror {
			target = stormMirrorValue
		}
		opts = append(opts, withLabels(stormAppLabel, kind), func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{appTerm(target, v1.LabelTopologyZone)},
			}}
		})
	case kindSpread:
		opts = append(opts, withLabels(stormAppLabel, kindSpread), func(p *v1.Pod) {
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{stormAppLabel: kindSpread}},
			}}
		})
	case kindVolume:
		claim := "pvc-" + name
		if _, err := st.s.c.CoreV1().PersistentVolumeClaims(st.s.ns).Create(ctx, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: st.s.ns, Name: claim},
			Spec:       claimSpec(stormClass, "1Gi"),
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
		st.waitPV = append(st.waitPV, claim)
		opts = append(opts, withClaims(claim))
	case kindDevice:
		claim := "rc-" + name
		if _, err := st.s.c.ResourceV1().ResourceClaims(st.s.ns).Create(ctx, &resourcev1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: st.s.ns, Name: claim},
			Spec:       gpuClaimSpec(draClass),
		}, metav1.CreateOptions{}); err != nil {
			return err
		}
		opts = append(opts, withDeviceClaim(claim, false))
	}
	st.pods = append(st.pods, name)
	_, err := st.s.c.CoreV1().Pods(st.s.ns).Create(ctx, newPod(st.s.ns, name, cpu, opts...), metav1.CreateOptions{})
	return err
}

// appTerm selects the pods labelled app=value over topologyKey.
func appTerm(value, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{stormAppLabel: value}},
		TopologyKey:   topologyKey,
	}
}

// createGang creates a PodGroup of minCount 2 or 3 and as many members.
func (st *storm) createGang() error {
	ctx := context.Background()
	g := stormGroup{name: st.name("g")}
	minCount := 2 + st.rng.IntN(2)
	cpu := fmt.Sprintf("%dm", 300*(1+st.rng.IntN(3)))
	for i := range minCount {
		g.members = append(g.members, fmt.Sprintf("%s-%s-%d", g.name, kindGang, i))
	}
	st.groups = append(st.groups, g)
	st.gangPods += minCount
	if _, err := st.s.env.CreatePodGroup(ctx, st.s.ns, g.name, int32(minCount)); err != nil {
		return err
	}
	for _, m := range g.members {
		if _, err := st.s.c.CoreV1().Pods(st.s.ns).Create(ctx, newPod(st.s.ns, m, cpu, inGroup(g.name)), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// completeGroup ends a pod group as a finished job does: its pods go, then
// the group (its protection finalizer lifted, as its controller would once
// the pods are gone).
func (st *storm) completeGroup() error {
	var open []int
	for i, g := range st.groups {
		if !g.done {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return errSkip
	}
	g := &st.groups[pick(st, open)]
	g.done = true
	for _, m := range g.members {
		if err := st.deletePodNamed(m); err != nil {
			return err
		}
	}
	ctx := context.Background()
	pgs := st.s.c.SchedulingV1beta1().PodGroups(st.s.ns)
	if _, err := pgs.Patch(ctx, g.name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if err := pgs.Delete(ctx, g.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// deletePod deletes one of the non-gang pods created so far, bound or
// pending (drawn among all of them: which are still there depends on the
// scheduler's timing, the draw does not), and the ResourceClaim of a
// device pod with it, as the claim of a template would go: its device is
// freed by the claim's deletion as well as by the pod's.
func (st *storm) deletePod() error {
	if len(st.pods) == 0 {
		return errSkip
	}
	name := pick(st, st.pods)
	if err := st.deletePodNamed(name); err != nil {
		return err
	}
	if podKind(name) != kindDevice {
		return nil
	}
	err := st.s.c.ResourceV1().ResourceClaims(st.s.ns).Delete(context.Background(), "rc-"+name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deletePodNamed deletes a pod at once (grace period 0); a pod already
// gone is not an error.
func (st *storm) deletePodNamed(name string) error {
	err := st.s.c.CoreV1().Pods(st.s.ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		st.counts[stormDeleteKind]++
	}
	return err
}

// relabelPod toggles a drawn pod's app label (relabelPodNamed), assigned or
// waiting: an assigned pod's label update may free pods waiting on
// inter-pod affinity, anti-affinity or spread (upstream's
// AssignedPod/UpdatePodLabel), a waiting pod's may free itself.
func (st *storm) relabelPod() error {
	if len(st.pods) == 0 {
		return errSkip
	}
	return st.relabelPodNamed(pick(st, st.pods))
}

// relabelPodNamed sets name's app label to stormMirrorValue, or back to
// its kind if the storm changed it before; a pod already gone is skipped.
func (st *storm) relabelPodNamed(name string) error {
	value := podKind(name)
	if !st.relabelled[name] {
		value = stormMirrorValue
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, stormAppLabel, value)
	_, err := st.s.c.CoreV1().Pods(st.s.ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return errSkip
	}
	if err == nil {
		st.relabelled[name] = !st.relabelled[name]
	}
	return err
}

// toleratePod gives a drawn waiting pod the storm taint's toleration
// (upstream's UnscheduledPod/UpdatePodToleration); a pod gone, bound or
// tolerating already is skipped.
func (st *storm) toleratePod() error {
	if len(st.pods) == 0 {
		return errSkip
	}
	name := pick(st, st.pods)
	ctx := context.Background()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := st.s.c.CoreV1().Pods(st.s.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return errSkip
		}
		if err != nil {
			return err
		}
		if p.Spec.NodeName != "" || slices.ContainsFunc(p.Spec.Tolerations, func(t v1.Toleration) bool { return t.Key == stormTaint }) {
			return errSkip
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: stormTaint, Operator: v1.TolerationOpExists})
		_, err = st.s.c.CoreV1().Pods(st.s.ns).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
}
