package preempt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
)

// errNoPlugins is a caller's error: preemption dry-runs the profile's
// filters.
var errNoPlugins = errors.New("preempt: Input.Plugins is nil: preemption needs the preemptor's profile")

// Input is what a preemption reads. Nothing in it is changed.
type Input struct {
	// Snapshot is the cluster the failed cycle saw, without anything that
	// cycle placed tentatively (a pod-group cycle's members must have been
	// taken off again: Cache.UpdateSnapshot does that).
	Snapshot *cache.Snapshot
	// Plugins are the filters the dry runs check nodes with: the
	// preemptor's profile. Required.
	Plugins *framework.Profile
	// Diagnosis is the failed cycle's: Pod dry-runs only the nodes it
	// rejected as Unschedulable (upstream's nodes where preemption might
	// help). Required by Pod; Group does not use it.
	Diagnosis *framework.Diagnosis
	// PDBs are every PodDisruptionBudget of the cluster.
	PDBs []*policyv1.PodDisruptionBudget
	// Order is the victim-order slot; nil is the native default
	// (policy.Importance).
	Order policy.VictimOrder
	// Group returns the PodGroup namespace/name, nil when there is none or
	// it is not known. Nil Group ignores pod groups altogether (upstream
	// with GenericWorkload off).
	Group func(namespace, name string) *schedv1beta1.PodGroup
	// Nominated returns the pods nominated to node (status.nominatedNodeName)
	// and not bound or assumed yet, as pod infos placed on node (read-only:
	// the cycle's Nominator builds them once per nomination); nil for none.
	Nominated func(node string) []*cache.PodInfo
	// Rand picks the node Pod starts its dry runs at, as upstream picks a
	// random offset; nil starts at the first node.
	Rand *rand.Rand
	// MinCandidates are DefaultPreemption's args (minCandidateNodesPercentage
	// and minCandidateNodesAbsolute): how many candidate nodes Pod looks for
	// before it stops dry-running; the zero value is upstream's defaults
	// (10%, 100).
	MinCandidates framework.PreemptionArgs
	// Parallelism is how many candidate nodes Pod dry-runs at once
	// (upstream's parallelism, 16 by default). 0 or 1 dry-runs them one
	// after another in order, the deterministic path. In parallel the
	// victim-order slot is called from several goroutines.
	Parallelism int
}

// Result is a preemption's outcome.
type Result struct {
	// Node is the node Pod nominates the preemptor to; "" for Group.
	Node string
	// Placements are, for Group, the node each placed member is nominated
	// to (upstream's NominatingInfos, ModeOverride). After an ongoing
	// preemption they are the members' current nominations, "" included.
	Placements []Placement
	// Victims are the pods to evict, most important victim first. A pod
	// group with DisruptionMode all contributes all its pods, on every node.
	// Empty when a Group finds its earlier preemption still in progress.
	Victims []*v1.Pod
	// PDBViolations is the number of victim pods whose eviction violates a
	// PodDisruptionBudget.
	PDBViolations int
	// GroupDisruptions is upstream's NumPodGroupDisruptions (the
	// scheduler_preemption_workload_disruptions observation): the victims
	// that are a pod group or a member of one. Upstream leaves it 0 for a
	// pod preemptor, and so does Pod.
	GroupDisruptions int
	// ClearNomination is set when the preemptor's nominatedNodeName should
	// be cleared: Pod found no candidate (upstream's PostFilterResult with
	// an empty nominated node). Otherwise, when nothing is found, the
	// nomination is left as it is.
	ClearNomination bool
	// Message is the PostFilter status message upstream reports, found or
	// not: "preemption: found a potential placement for pod on node n1,
	// preempting 2 victims", "preemption: 0/3 nodes are available: 1
	// Insufficient cpu, 2 Preemption is not helpful for scheduling.",
	// "preemption: not eligible due to preemptionPolicy=Never.", and for a
	// group "pod group preemption: ...". It is the FitError's PostFilter
	// message (framework.Diagnosis.SetPostFilterMessage).
	Message string
}

// Placement is a member of a preempting pod group and its node.
type Placement struct {
	Pod  *v1.Pod
	Node string
}

// Upstream's status texts.
const (
	msgNever        = "not eligible due to preemptionPolicy=Never."
	msgTerminating  = "not eligible due to a terminating pod on the nominated node."
	msgNoVictims    = "No preemption victims found for incoming pod"
	msgNotHelpful   = "Preemption is not helpful for scheduling"
	prefixPod       = "preemption: "
	prefixGroup     = "pod group preemption: "
	noNodeAvailable = "0/%d nodes are available:"
)

// Eligible is upstream's PodEligibleToPreemptOthers (KEP-902): a pod with
// preemptionPolicy Never never preempts; nor does a pod whose nominated
// node still holds a pod of lower preemption priority that is terminating
// because the scheduler preempted it (deletionTimestamp set, condition
// DisruptionTarget True with reason PreemptionByScheduler), unless the
// failed cycle rejected that node as UnschedulableAndUnresolvable
// (in.Diagnosis). It uses in.Snapshot, in.Diagnosis (may be nil) and
// in.Group. The message is upstream's, without the "preemption: " prefix.
func Eligible(pod *v1.Pod, in Input) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, msgNever
	}
	nom := pod.Status.NominatedNodeName
	if nom == "" {
		return true, ""
	}
	if in.Diagnosis != nil && in.Diagnosis.NodeStatus(nom).Code == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if in.Snapshot == nil {
		return true, ""
	}
	ni := in.Snapshot.Get(nom)
	if ni == nil {
		return true, ""
	}
	r := newRun(in)
	prio := corev1helpers.PodPriority(pod)
	for _, pi := range ni.Pods() {
		if terminatingByPreemption(pi.Pod) && r.priorityOf(pi.Pod) < prio {
			return false, msgTerminating
		}
	}
	return true, ""
}

// Pod runs DefaultPreemption for preemptor, which the cycle found no node
// for. found is true when a node and victims were chosen (Result.Node,
// Result.Victims). Otherwise Result.Message says why and
// Result.ClearNomination whether to clear the pod's nomination. An error
// is an internal failure (upstream's Error status): the nomination stays.
//
// Steps, as upstream's Evaluator.evaluate: Eligible; the nodes the cycle
// rejected as Unschedulable; a dry run on each (from a random offset, until
// enough candidates are found, see calculateNumCandidates): remove every
// victim of lower priority from the node, check the preemptor fits (with
// the nominated pods it must leave room for), order the victims through the
// slot, reprieve the PDB-violating ones, then the others, most important
// first, each as long as the preemptor still fits; then pick one node
// (pickOneNodeForPreemption).
func Pod(ctx context.Context, preemptor *v1.Pod, in Input) (Result, bool, error) {
	if in.Plugins == nil {
		return Result{}, false, errNoPlugins
	}
	if in.Snapshot == nil || in.Diagnosis == nil {
		return Result{}, false, errors.New("preemption: snapshot and diagnosis are required")
	}
	if ok, msg := Eligible(preemptor, in); !ok {
		return Result{Message: prefixPod + msg}, false, nil
	}
	nodes := in.Snapshot.List()
	if len(nodes) == 0 {
		return Result{}, false, fmt.Errorf("preemption for pod %s/%s: no nodes available", preemptor.Namespace, preemptor.Name)
	}
	var potential []*cache.NodeInfo
	for _, ni := range nodes {
		if in.Diagnosis.NodeStatus(ni.Name()).Code == framework.Unschedulable {
			potential = append(potential, ni)
		}
	}
	if len(potential) == 0 {
		return Result{ClearNomination: true, Message: prefixPod + fitMessage(len(nodes), nil)}, false, nil
	}

	r := newRun(in)
	var err error
	if r.preemptor, err = r.podView(preemptor); err != nil {
		return Result{}, false, err
	}
	ps, st := r.plugins.Prepare(cache.NewPodInfo(preemptor), in.Snapshot)
	if st != nil && st.Code == framework.Error {
		return Result{}, false, fmt.Errorf("preemption for pod %s/%s: %w", preemptor.Namespace, preemptor.Name, st.Err)
	}
	defer ps.Done()

	n := len(potential)
	offset := 0
	if in.Rand != nil {
		offset = in.Rand.IntN(n)
	}
	d := dryRun{
		r: r, ps: ps, pre: st, prio: corev1helpers.PodPriority(preemptor), nodes: potential, offset: offset,
		want: numCandidates(n, in.MinCandidates), statuses: map[string]*framework.Status{},
	}
	if in.Parallelism > 1 && n > 1 && st == nil {
		d.parallel(ctx, min(in.Parallelism, n))
	} else {
		d.sequential(ctx)
	}
	if d.fatal != nil {
		ni := d.nodes[(d.offset+d.fatalAt)%n]
		return Result{}, false, fmt.Errorf("preemption for pod %s/%s on node %s: %w", preemptor.Namespace, preemptor.Name, ni.Name(), d.fatal)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, false, err
	}
	cands := d.candidates()
	statuses, errs := d.statuses, d.errs
	if len(cands) == 0 {
		if len(errs) > 0 {
			return Result{}, false, fmt.Errorf("preemption for pod %s/%s: %w", preemptor.Namespace, preemptor.Name, errors.Join(errs...))
		}
		return Result{ClearNomination: true, Message: prefixPod + fitMessage(len(nodes), statuses)}, false, nil
	}
	best := pick(cands)
	return Result{
		Node:          best.node,
		Victims:       best.pods,
		PDBViolations: best.violations,
		Message:       prefixPod + fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.node, len(best.pods)),
	}, true, nil
}

// candidate is a node the preemptor fits on once its victims are gone.
type candidate struct {
	node       string
	pods       []*v1.Pod // the victims' pods, most important victim first
	violations int
	at         int // its place in the dry-run order (from the offset)
}

// dryRun is Pod's search for candidates (upstream's DryRunPreemption):
// nodes from offset on, wrapping around, until want candidates are found,
// one of which violates no PodDisruptionBudget.
type dryRun struct {
	r      *run
	ps     *framework.PodState
	pre    *framework.Status // the PreFilter rejection, nil if none
	prio   int32
	nodes  []*cache.NodeInfo
	offset int
	want   int

	mu                      sync.Mutex // guards what follows, in parallel
	nonViolating, violating []candidate
	statuses                map[string]*framework.Status
	errs                    []error
	fatal                   error // a failure of the slot: the preemption fails
	fatalAt                 int
}

// check dry-runs the i-th node and records the outcome; it reports whether
// the search may stop (enough candidates, or a fatal error). w is the run
// of the calling worker.
func (d *dryRun) check(w *run, i int) (stop bool) {
	ni := d.nodes[(d.offset+i)%len(d.nodes)]
	if d.pre != nil { // rejected before any node (PreFilter)
		d.mu.Lock()
		d.statuses[ni.Name()] = d.pre
		d.mu.Unlock()
		return false
	}
	c, st, err := w.selectOnNode(d.ps, d.prio, ni)
	c.at = i
	if err == nil && st.IsSuccess() && len(c.pods) == 0 {
		st = &framework.Status{Code: framework.Error, Err: fmt.Errorf("expected at least one victim pod on node %q", ni.Name())}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err != nil:
		if d.fatal == nil || i < d.fatalAt {
			d.fatal, d.fatalAt = err, i
		}
		return true
	case !st.IsSuccess():
		if st.Code == framework.Error {
			d.errs = append(d.errs, st.Err)
		}
		d.statuses[ni.Name()] = st
		return false
	case c.violations == 0:
		d.nonViolating = append(d.nonViolating, c)
	default:
		d.violating = append(d.violating, c)
	}
	return len(d.nonViolating) > 0 && len(d.nonViolating)+len(d.violating) >= d.want
}

// sequential dry-runs the nodes one after another, in order.
func (d *dryRun) sequential(ctx context.Context) {
	for i := range d.nodes {
		if ctx.Err() != nil || d.check(d.r, i) {
			return
		}
	}
}

// parallel dry-runs the nodes with workers goroutines, each taking the
// next node in order, until the search may stop (upstream's parallelizer
// with its cancel once enough candidates are found).
func (d *dryRun) parallel(ctx context.Context, workers int) {
	var (
		next atomic.Int64
		done atomic.Bool
		wg   sync.WaitGroup
	)
	d.r.share()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := d.r.fork()
			for !done.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(d.nodes) {
					return
				}
				if d.check(w, i) {
					done.Store(true)
				}
			}
		}()
	}
	wg.Wait()
}

// candidates are the candidates found, in dry-run order, at most want of
// each kind, the non-violating ones first (upstream's candidate lists).
func (d *dryRun) candidates() []candidate {
	byOrder := func(a, b candidate) int { return a.at - b.at }
	slices.SortFunc(d.nonViolating, byOrder)
	slices.SortFunc(d.violating, byOrder)
	nv, v := d.nonViolating, d.violating
	nv, v = nv[:min(len(nv), d.want)], v[:min(len(v), d.want)]
	return append(slices.Clip(nv), v...)
}

// selectOnNode is upstream's SelectVictimsOnNode on a copy of ni. A
// rejecting status says why the node is no candidate.
func (r *run) selectOnNode(ps *framework.PodState, prio int32, ni *cache.NodeInfo) (candidate, *framework.Status, error) {
	node := ni.Name()
	potential := r.victimsOn([]*cache.NodeInfo{ni}, prio)
	if len(potential) == 0 {
		return candidate{}, &framework.Status{Code: framework.UnschedulableAndUnresolvable, Reasons: []string{msgNoVictims}}, nil
	}
	// The nominated pods never leave: put them on the copy once. The
	// pod's state follows the copy (framework.PodUpdater).
	work := ni.Clone()
	ps = ps.Clone()
	for _, pi := range r.holding(ps.Pod().Pod, ni, nil) {
		work.AddPod(pi)
		ps.AddPod(pi, work)
	}
	remove := func(v *victim) {
		for _, pi := range v.pods {
			if pi.Pod.Spec.NodeName == node {
				work.RemovePod(pi.Pod.UID)
				ps.RemovePod(pi, work)
			}
		}
	}
	for _, v := range potential {
		remove(v)
	}
	if st := framework.Filter(ps, work); !st.IsSuccess() {
		return candidate{}, st, nil
	}
	if err := r.sortByImportance(potential); err != nil {
		return candidate{}, nil, err
	}
	violating, counts, others := r.budgets.split(potential)
	chosen := make([]bool, len(potential))
	reprieve := func(i int) bool {
		v := potential[i]
		for _, pi := range v.pods {
			if pi.Pod.Spec.NodeName == node {
				work.AddPod(pi)
				ps.AddPod(pi, work)
			}
		}
		if framework.Filter(ps, work).IsSuccess() {
			return true
		}
		remove(v)
		chosen[i] = true
		return false
	}
	c := candidate{node: node}
	for k, i := range violating {
		if !reprieve(i) {
			c.violations += counts[k]
		}
	}
	for _, i := range others {
		reprieve(i)
	}
	var vs []*victim
	for i, v := range potential {
		if chosen[i] {
			vs = append(vs, v)
		}
	}
	c.pods = podsOf(vs)
	return c, nil, nil
}

// numCandidates is upstream's calculateNumCandidates: args' percentage of
// the n nodes (10% by default), at least its absolute number (100), at most
// all of them.
func numCandidates(n int, args framework.PreemptionArgs) int {
	args = args.Defaulted()
	want := n * int(args.MinCandidateNodesPercentage) / 100
	want = max(want, int(args.MinCandidateNodesAbsolute))
	return min(want, n)
}

// pick is upstream's pickOneNodeForPreemption with the default score
// functions, each applied to the ties of the one before: fewest PDB
// violations; lowest priority of the first victim pod (the most important
// victim's); smallest sum of victim pod priorities (each shifted by
// MaxInt32+1 so that negative priorities do not favour more victims);
// fewest victim pods; latest earliest start time among the victim pods of
// the highest priority; then the first. Priorities here are the pods' own
// (spec.priority), as upstream's.
func pick(cands []candidate) candidate {
	if len(cands) == 1 {
		return cands[0]
	}
	scores := []func(c *candidate) int64{
		func(c *candidate) int64 { return -int64(c.violations) },
		func(c *candidate) int64 { return -int64(corev1helpers.PodPriority(c.pods[0])) },
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.pods {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32) + 1
			}
			return -sum
		},
		func(c *candidate) int64 { return -int64(len(c.pods)) },
		func(c *candidate) int64 { return earliestStart(c.pods) },
	}
	for _, f := range scores {
		var next []candidate
		best := int64(math.MinInt64)
		for i := range cands {
			s := f(&cands[i])
			if s > best {
				best, next = s, next[:0]
			}
			if s == best {
				next = append(next, cands[i])
			}
		}
		if len(next) == 1 {
			return next[0]
		}
		cands = next
	}
	return cands[0]
}

// notStarted ranks a pod without status.startTime as the latest start
// (upstream: now).
const notStarted = int64(math.MaxInt64)

// earliestStart is upstream's GetEarliestPodStartTime in Unix nanoseconds:
// the earliest start among the pods of the highest pod priority.
func earliestStart(pods []*v1.Pod) int64 {
	start := func(p *v1.Pod) int64 {
		if t := p.Status.StartTime; t != nil {
			return t.UnixNano()
		}
		return notStarted
	}
	earliest, top := start(pods[0]), corev1helpers.PodPriority(pods[0])
	for _, p := range pods {
		switch prio := corev1helpers.PodPriority(p); {
		case prio == top:
			earliest = min(earliest, start(p))
		case prio > top:
			top, earliest = prio, start(p)
		}
	}
	return earliest
}

// fitMessage is upstream's FitError text for the dry run: the reasons of
// the nodes tried (statuses) and "Preemption is not helpful for
// scheduling" for every other node, counted and sorted as strings.
func fitMessage(numAll int, statuses map[string]*framework.Status) string {
	counts := map[string]int{}
	for _, st := range statuses {
		for _, reason := range reasons(st) {
			counts[reason]++
		}
	}
	if absent := numAll - len(statuses); absent > 0 {
		counts[msgNotHelpful] += absent
	}
	lines := make([]string, 0, len(counts))
	for reason, n := range counts {
		lines = append(lines, fmt.Sprintf("%d %s", n, reason))
	}
	sort.Strings(lines)
	msg := fmt.Sprintf(noNodeAvailable, numAll)
	if len(lines) > 0 {
		msg += " " + strings.Join(lines, ", ") + "."
	}
	return msg
}

// reasons is upstream's Status.Reasons: the error's text first, if any.
func reasons(st *framework.Status) []string {
	if st.Err != nil {
		return append([]string{st.Err.Error()}, st.Reasons...)
	}
	return st.Reasons
}

// podView encodes pod's record for the victim-order slot, with its group's
// fields when it names a known PodGroup (members: the group's pods in the
// snapshot, plus this one).
func (r *run) podView(pod *v1.Pod) (abi.PodView, error) {
	var gi *podview.GroupInfo
	if name := podview.GroupName(pod); name != "" {
		if pg := r.podGroup(pod.Namespace, name); pg != nil {
			info := podview.Group(pg, int32(len(r.groupPods(groupKey{pod.Namespace, name})))+1)
			gi = &info
		}
	}
	rec := podview.Pod(pod, gi, abi.PodQueueState{}, podview.Plugins{})
	return readView(abi.AppendPod(nil, &rec))
}
