package plugins

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
)

// PodState is what the filters and scorers need from one pod, worked out
// once per scheduling cycle by Prepare (upstream's PreFilter and PreScore), so
// that looking at a node does not redo it. It is safe for concurrent use by
// the filters; it must not be copied.
type PodState struct {
	pod *cache.PodInfo

	// NodeName and NodeUnschedulable.
	nodeName               string
	toleratesUnschedulable bool

	// TaintToleration: the tolerations that can tolerate a NoSchedule or
	// NoExecute taint (filter), a PreferNoSchedule one (score).
	filterTolerations []v1.Toleration
	scoreTolerations  []v1.Toleration

	// NodeAffinity: nodeSelector and required affinity (checked only when
	// the pod has either, as upstream skips the filter otherwise), and the
	// preferred terms (nil when there are none).
	hasRequired bool
	required    nodeaffinity.RequiredNodeAffinity
	preferred   *nodeaffinity.PreferredSchedulingTerms

	// nodeNames restricts the nodes worth filtering (sorted): spec.nodeName
	// and metadata.name matchFields, upstream's PreFilterResult. nil means
	// every node; restrictedBy names the plugins that restricted, absent is
	// the status of the nodes left out.
	nodeNames    []string
	restrictedBy []string
	absent       *Status

	// NodeResourcesFit: the scalar resources the pod requests, sorted so
	// that a node's reasons come in a stable order.
	scalars []v1.ResourceName
	// fitStatuses caches the NodeResourcesFit verdicts without scalar
	// reasons, indexed by fitMask, so that rejecting thousands of nodes for
	// the same reasons allocates once.
	fitStatuses [fitMaskLen]atomic.Pointer[Status]

	// NodeDeclaredFeatures: the node features the pod needs; the filter is
	// skipped when it needs none.
	features      ndf.FeatureSet
	needsFeatures bool

	// NodeResourcesBalancedAllocation is skipped for a pod that requests
	// neither cpu nor memory (upstream's best-effort PreScore skip).
	balanced bool
}

// discard is the logger the component-helpers toleration checks log parse
// errors of Lt/Gt tolerations to; those operators are off, so it never logs.
var discard = logr.Discard()

// Prepare works out pod's state for a cycle. A non-nil Status is upstream's
// PreFilter rejecting the pod before any node is looked at
// (UnschedulableAndUnresolvable: its required node affinity names no node
// any term agrees on, or it carries a constraint only an unimplemented
// plugin checks), or an Error; PodState is nil then.
func Prepare(pod *cache.PodInfo) (*PodState, *Status) {
	if pod == nil || pod.Pod == nil {
		return nil, &Status{Code: Error, Err: errors.New("prepare a nil pod")}
	}
	if st := unsupported(pod.Pod); st != nil {
		return nil, st
	}
	spec := &pod.Pod.Spec
	ps := &PodState{
		pod:      pod,
		nodeName: spec.NodeName,
		toleratesUnschedulable: corev1helpers.TolerationsTolerateTaint(discard, spec.Tolerations,
			&v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}, false),
		filterTolerations: tolerationsFor(spec.Tolerations, v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute),
		scoreTolerations:  tolerationsFor(spec.Tolerations, v1.TaintEffectPreferNoSchedule, ""),
		balanced:          pod.Requests.MilliCPU != 0 || pod.Requests.Memory != 0,
	}

	var required *v1.NodeSelector
	var preferred []v1.PreferredSchedulingTerm
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		preferred = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if required != nil || spec.NodeSelector != nil {
		ps.hasRequired = true
		ps.required = nodeaffinity.GetRequiredNodeAffinity(pod.Pod)
	}
	if len(preferred) > 0 {
		terms, err := nodeaffinity.NewPreferredSchedulingTerms(preferred)
		if err != nil {
			// API validation rejects such a pod; upstream fails its PreScore.
			return nil, &Status{Code: Error, Plugin: abi.PluginNodeAffinity,
				Err: fmt.Errorf("parse preferred node affinity of pod %s/%s: %w", pod.Pod.Namespace, pod.Pod.Name, err)}
		}
		ps.preferred = terms
	}

	if st := ps.restrict(required); st != nil {
		return nil, st
	}

	features, st := requiredFeatures(pod.Pod)
	if st != nil {
		return nil, st
	}
	ps.features, ps.needsFeatures = features, !features.IsEmpty()

	for name, v := range pod.Requests.Scalar {
		if v != 0 {
			ps.scalars = append(ps.scalars, name)
		}
	}
	slices.Sort(ps.scalars)
	return ps, nil
}

// Pod is the pod the state was prepared for.
func (ps *PodState) Pod() *cache.PodInfo { return ps.pod }

// tolerationsFor returns the tolerations that can tolerate a taint with effect
// a or b: those with that effect or none. It returns ts itself when all of
// them can.
func tolerationsFor(ts []v1.Toleration, a, b v1.TaintEffect) []v1.Toleration {
	keep := func(t *v1.Toleration) bool { return t.Effect == "" || t.Effect == a || (b != "" && t.Effect == b) }
	all := true
	for i := range ts {
		if !keep(&ts[i]) {
			all = false
			break
		}
	}
	if all {
		return ts
	}
	var out []v1.Toleration
	for i := range ts {
		if keep(&ts[i]) {
			out = append(out, ts[i])
		}
	}
	return out
}

// restrict applies upstream's NodeName and NodeAffinity PreFilter results
// (in that order): spec.nodeName restricts the pod to that node; required
// node affinity whose every term has metadata.name In matchFields restricts
// it to the union over the terms of each term's intersection. A union that
// is empty is a conflict; NodeName and NodeAffinity that agree on no node
// reject the pod too.
func (ps *PodState) restrict(required *v1.NodeSelector) *Status {
	var names []string // nil: every node
	if ps.nodeName != "" {
		names = []string{ps.nodeName}
		ps.restrictedBy = append(ps.restrictedBy, abi.PluginNodeName)
	}
	affinityNames, ok := affinityNodeNames(required)
	if ok && len(affinityNames) == 0 {
		return &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
			Reasons: []string{ReasonAffinityConflict}}
	}
	if ok {
		ps.restrictedBy = append(ps.restrictedBy, abi.PluginNodeAffinity)
		if names == nil {
			names = affinityNames
		} else {
			names = slices.DeleteFunc(names, func(n string) bool {
				_, found := slices.BinarySearch(affinityNames, n)
				return !found
			})
		}
	}
	if ps.restrictedBy == nil {
		return nil
	}
	slices.Sort(ps.restrictedBy)
	if len(names) == 0 {
		// Upstream's status names no plugin; both are NodeAffinity's
		// concern as far as requeueing goes (NodeName only re-queues on a
		// node add, which NodeAffinity's hint also sees).
		return &Status{Code: UnschedulableAndUnresolvable, Plugin: abi.PluginNodeAffinity,
			Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", ps.restrictedBy)}}
	}
	ps.nodeNames = names
	ps.absent = &Status{Code: UnschedulableAndUnresolvable,
		Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", ps.restrictedBy)}}
	return nil
}

// affinityNodeNames returns the node names the required terms restrict the
// pod to, sorted, and true; false when some term does not restrict names
// (or there are no terms). The result is empty when the terms cannot agree.
func affinityNodeNames(required *v1.NodeSelector) ([]string, bool) {
	if required == nil || len(required.NodeSelectorTerms) == 0 {
		return nil, false
	}
	union := map[string]struct{}{}
	for _, t := range required.NodeSelectorTerms {
		var term map[string]struct{} // nil: the term names no node
		for _, r := range t.MatchFields {
			if r.Key != metav1.ObjectNameField || r.Operator != v1.NodeSelectorOpIn {
				continue
			}
			s := make(map[string]struct{}, len(r.Values))
			for _, v := range r.Values {
				if term == nil {
					s[v] = struct{}{}
				} else if _, ok := term[v]; ok {
					s[v] = struct{}{}
				}
			}
			term = s
		}
		if term == nil {
			return nil, false
		}
		for n := range term {
			union[n] = struct{}{}
		}
	}
	names := make([]string, 0, len(union))
	for n := range union {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, true
}

// candidates returns the nodes the pod is restricted to, in nodes' order, or
// nodes itself when it is not restricted.
func (ps *PodState) candidates(nodes []*cache.NodeInfo) []*cache.NodeInfo {
	if ps.nodeNames == nil {
		return nodes
	}
	var out []*cache.NodeInfo
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			if _, ok := slices.BinarySearch(ps.nodeNames, n.Name); ok {
				out = append(out, ni)
			}
		}
	}
	return out
}
