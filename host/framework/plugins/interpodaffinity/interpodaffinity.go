// Package interpodaffinity is upstream's InterPodAffinity plugin: the pod's
// required pod affinity and anti-affinity terms, and the existing pods'
// anti-affinity, as a filter; the preferred terms as a score. Extension
// points PreFilter, Filter, PreScore, Score, NormalizeScore; rejects
// UnschedulableAndUnresolvable (ReasonPodAffinity) or Unschedulable
// (ReasonPodAntiAffinity, ReasonExistingAntiAffinity). Weight 2.
package interpodaffinity

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corelisters "k8s.io/client-go/listers/core/v1"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins/helper"
)

// Upstream's InterPodAffinity reasons.
const (
	// ReasonPodAffinity rejects a node whose topology domains hold no pod
	// matching all of the pod's required affinity terms.
	ReasonPodAffinity = "node(s) didn't match pod affinity rules"
	// ReasonPodAntiAffinity rejects a node whose topology domain holds a
	// pod the pod's required anti-affinity refuses.
	ReasonPodAntiAffinity = "node(s) didn't match pod anti-affinity rules"
	// ReasonExistingAntiAffinity rejects a node whose topology domain holds
	// a pod whose required anti-affinity refuses the pod.
	ReasonExistingAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"
)

var (
	statusPodAffinity = &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginInterPodAffinity,
		Reasons: []string{ReasonPodAffinity}}
	statusPodAntiAffinity = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginInterPodAffinity,
		Reasons: []string{ReasonPodAntiAffinity}}
	statusExistingAntiAffinity = &framework.Status{Code: framework.Unschedulable, Plugin: abi.PluginInterPodAffinity,
		Reasons: []string{ReasonExistingAntiAffinity}}
)

// weightInterPodAffinity is upstream's default score weight.
const weightInterPodAffinity = 2

// defaultHardPodAffinityWeight is upstream's default InterPodAffinityArgs
// HardPodAffinityWeight: what an existing pod's required affinity term the
// incoming pod matches adds to its topology domain's score.
const defaultHardPodAffinityWeight = 1

// interPodAffinity is upstream's InterPodAffinity plugin with its default
// arguments (HardPodAffinityWeight 1, IgnorePreferredTermsOfExistingPods
// false) and its feature gates at their v1.37 defaults
// (InterPodAffinityHostnameFastPath, alpha, off). A node passes when, in
// the topology domains its labels name,
//   - some pod matches all of the pod's required affinity terms (or no pod
//     anywhere does, the pod matches them itself and the node has every
//     topology key: the first pod of a group with affinity to itself),
//   - no pod matches any of the pod's required anti-affinity terms,
//   - no pod has a required anti-affinity term the pod matches.
//
// Among feasible nodes, a node scores the weights of the pod's preferred
// terms (anti-affinity negative) that pods in its domains match, plus those
// of the existing pods' preferred terms and required affinity terms
// (weight 1) the pod matches, normalised min-max.
//
// Extension points: PreFilter (skips a pod without required terms when no
// pod in the cluster has a required anti-affinity term it matches),
// Filter, AddPod/RemovePod (PodUpdater), PreScore (skips a pod without
// preferred terms when no pod in the cluster has affinity terms, or no
// term matches anything), Score, NormalizeScore. Rejects:
// UnschedulableAndUnresolvable (ReasonPodAffinity; at PreFilter, terms that
// do not parse, as upstream), Unschedulable (ReasonPodAntiAffinity,
// ReasonExistingAntiAffinity: preemption may remove the pods in the way).
// Weight 2.
//
// A term's namespaceSelector is resolved into its namespaces through the
// namespace lister once per pod, as upstream's PreFilter and PreScore do,
// and an existing pod's terms see the incoming pod's namespace labels. The
// matchLabelKeys and mismatchLabelKeys of a term need nothing here: the
// kube-apiserver merges them into its labelSelector when the pod is
// created (KEP-3633), and upstream's scheduler does not read them either.
//
// The args: hardPodAffinityWeight (0 leaves the existing pods' required
// terms out of the score), ignorePreferredTermsOfExistingPods (a pod
// without preferred terms of its own skips the score).
type interPodAffinity struct {
	namespaces              corelisters.NamespaceLister // nil: no namespace has labels
	hardPodAffinityWeight   int64
	ignoreExistingPreferred bool
}

var (
	_ framework.PreFilterPlugin = interPodAffinity{}
	_ framework.PreScorePlugin  = interPodAffinity{}
	_ framework.PodUpdater      = (*podAffinityFilter)(nil)
	_ framework.Detacher        = (*podAffinityFilter)(nil)
	_ framework.ScoreNormalizer = (*podAffinityScorer)(nil)
)

func (interPodAffinity) Name() string { return abi.PluginInterPodAffinity }

// topologyPair is one topology domain: a node label key and value.
type topologyPair struct{ key, value string }

// topologyCounts counts pods per topology domain: domainCounts' delta over
// the snapshot's counts, so a count may be negative (a pod RemovePod took
// out). A count down to 0 is deleted.
type topologyCounts map[topologyPair]int64

// add adds delta to the domain of key on node, if node has the label, and
// returns what it added.
func (m topologyCounts) add(node *v1.Node, key string, delta int64) int64 {
	v, ok := node.Labels[key]
	if !ok {
		return 0
	}
	m.addTo(topologyPair{key, v}, delta)
	return delta
}

// addTo adds delta to the count of tp, deleting a count down to 0.
func (m topologyCounts) addTo(tp topologyPair, delta int64) {
	if n := m[tp] + delta; n != 0 {
		m[tp] = n
	} else {
		delete(m, tp)
	}
}

// domainCounts counts, per topology domain, the pods matching a set of
// terms: the snapshot's counts, read in place (pods, terms), plus
// what AddPod and RemovePod changed in this pod's state (delta). Copying
// the snapshot's counts into a map per pod, as PreFilter did, costs an
// entry per domain (on the hostname, per node) for every pod with a term.
// The layers are the snapshot's and never written here; they are valid
// while the snapshot does not change (podAffinityFilter.changes), which it
// does not under a cycle's filters. detach copies them into the delta for
// a caller that changes the snapshot while it filters with the state.
type domainCounts struct {
	pods  []podLayer
	terms []termLayer
	delta topologyCounts // nil until AddPod or RemovePod counts something
	// sum is the pods counted in every domain, layers and delta: 0 means
	// none anywhere (counts are never negative).
	sum int64
}

// podLayer is a selector index's counts of key (Snapshot.PodCounts).
type podLayer struct {
	key string
	pc  *cache.PodCounts
}

// termLayer is an existing term's carriers per domain of key
// (Snapshot.AffinityTerms).
type termLayer struct {
	key     string
	domains map[string]int
}

// addPods counts the matching pods of each domain of pc, of key.
func (c *domainCounts) addPods(key string, pc *cache.PodCounts) {
	if n := pc.Pods(); n > 0 {
		c.pods = append(c.pods, podLayer{key, pc})
		c.sum += int64(n)
	}
}

// addTerms counts the carriers of tc in each domain of key.
func (c *domainCounts) addTerms(key string, tc *cache.TermCounts) {
	if n := tc.Pods(); n > 0 {
		c.terms = append(c.terms, termLayer{key, tc.Domains})
		c.sum += int64(n)
	}
}

// add adds delta to the domain of key on node, if node has the label.
func (c *domainCounts) add(node *v1.Node, key string, delta int64) {
	if c.delta == nil {
		c.delta = topologyCounts{}
	}
	c.sum += c.delta.add(node, key, delta)
}

// get is the count of the domain of key with value v.
func (c *domainCounts) get(key, v string) int64 {
	n := c.delta[topologyPair{key, v}]
	for i := range c.pods {
		if l := &c.pods[i]; l.key == key {
			n += int64(l.pc.Domains()[v].Pods)
		}
	}
	for i := range c.terms {
		if l := &c.terms[i]; l.key == key {
			n += int64(l.domains[v])
		}
	}
	return n
}

// empty reports whether no domain counts a pod.
func (c *domainCounts) empty() bool { return c.sum == 0 }

// detach adds the layers into the delta and drops them: the counts no
// longer read the snapshot.
func (c *domainCounts) detach() {
	if len(c.pods) == 0 && len(c.terms) == 0 {
		return
	}
	if c.delta == nil {
		c.delta = topologyCounts{}
	}
	for _, l := range c.pods {
		for v, d := range l.pc.Domains() {
			c.delta.addTo(topologyPair{l.key, v}, int64(d.Pods))
		}
	}
	for _, l := range c.terms {
		for v, n := range l.domains {
			c.delta.addTo(topologyPair{l.key, v}, int64(n))
		}
	}
	c.pods, c.terms = nil, nil
}

// clone shares the layers (read-only) and copies the delta.
func (c domainCounts) clone() domainCounts {
	c.pods, c.terms = slices.Clip(c.pods), slices.Clip(c.terms)
	c.delta = maps.Clone(c.delta)
	return c
}

// podAffinityFilter is a pod's state for InterPodAffinity's Filter
// (upstream's preFilterState): its required terms with namespaceSelector
// resolved, and the pods counted per topology domain. It is read-only
// once PreFilter returns it, except through AddPod, RemovePod and Detach
// by the state's owner (a Clone, or group preemption's own states).
type podAffinityFilter struct {
	pod *cache.PodInfo
	// required and requiredAnti are the pod's required terms, their
	// namespaceSelector merged into their namespaces (so they match a pod
	// without its namespace's labels).
	required, requiredAnti []fwk.AffinityTerm
	// nsLabels are the labels of the pod's namespace, which the existing
	// pods' terms match against.
	nsLabels labels.Set
	// matchesItself: the pod matches all of its own required affinity
	// terms.
	matchesItself bool
	// affinity counts the pods matching all of required, once per term;
	// anti the pods matching each term of requiredAnti; existingAnti the
	// required anti-affinity terms of other pods that the pod matches.
	affinity, anti, existingAnti domainCounts
	// existingAntiKeys are the topology keys existingAnti has counted
	// (usually one or two), so that Filter looks up those of the node's
	// labels rather than walking every label as upstream does: the same
	// answer with fewer lookups (the walk was half the cost of filtering
	// in BenchmarkInterPodAffinity/refusedByExisting).
	existingAntiKeys []string
	// snap is the snapshot the counts' layers read, at its changes count
	// when PreFilter ran; nil once detached (Detach).
	snap    *cache.Snapshot
	changes uint64
}

func (pl interPodAffinity) PreFilter(pod *cache.PodInfo, snap *cache.Snapshot) (framework.PodFilter, []string, *framework.Status) {
	pa := pod.Affinity
	if pa != nil && pa.Err != nil {
		return nil, nil, &framework.Status{Code: framework.UnschedulableAndUnresolvable, Plugin: abi.PluginInterPodAffinity,
			Reasons: []string{"parsing pod: " + affinityParseError(pod.Pod).Error()}}
	}
	hasTerms := pa != nil && (len(pa.Required) > 0 || len(pa.RequiredAnti) > 0)
	existing := snap.AffinityTerms(cache.RequiredAntiAffinity)
	if !hasTerms && len(existing) == 0 {
		return nil, nil, nil
	}
	f := &podAffinityFilter{pod: pod, nsLabels: pl.namespaceLabels(pod.Pod.Namespace), snap: snap, changes: snap.Changes()}
	// The existing pods' terms, once per distinct term.
	for _, tc := range existing {
		if key := tc.Term.TopologyKey; tc.Term.Matches(pod.Pod, f.nsLabels) && len(tc.Domains) > 0 {
			f.existingAnti.addTerms(key, tc)
			if !slices.Contains(f.existingAntiKeys, key) {
				f.existingAntiKeys = append(f.existingAntiKeys, key)
			}
		}
	}
	if !hasTerms {
		if f.existingAnti.empty() {
			return nil, nil, nil
		}
		return f, nil, nil
	}
	var err error
	if f.required, err = pl.mergeNamespaces(pa.Required); err == nil {
		f.requiredAnti, err = pl.mergeNamespaces(pa.RequiredAnti)
	}
	if err != nil {
		return nil, nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginInterPodAffinity,
			Err: fmt.Errorf("list namespaces for the pod affinity of pod %s/%s: %w", pod.Pod.Namespace, pod.Pod.Name, err)}
	}
	f.matchesItself = matchesAll(f.required, pod.Pod)
	// The pods matching all of the pod's affinity terms and those matching
	// each anti-affinity term, from the snapshot's selector indexes.
	if len(f.required) > 0 {
		id, match := matchAllIndex(f.required)
		for i := range f.required {
			key := f.required[i].TopologyKey
			f.affinity.addPods(key, snap.PodCounts(id, key, match))
		}
	}
	for i := range f.requiredAnti {
		ct := compileTerm(&f.requiredAnti[i], 0)
		f.anti.addPods(ct.key, snap.PodCounts(termIndexID(&f.requiredAnti[i]), ct.key, ct.matchInfo))
	}
	return f, nil, nil
}

// termIndexID is the selector index id of t, a term with its
// namespaceSelector merged, matched as AffinityTerm.Matches(pod, nil).
// Terminating pods count, as in upstream's InterPodAffinity.
func termIndexID(t *fwk.AffinityTerm) string { return "ipa|" + cache.TermKey(t, 0) }

// matchAllIndex is the selector index id and matcher of the pods matching
// every one of terms (merged).
func matchAllIndex(terms []fwk.AffinityTerm) (string, func(*cache.PodInfo) bool) {
	if len(terms) == 1 {
		ct := compileTerm(&terms[0], 0)
		return termIndexID(&terms[0]), ct.matchInfo
	}
	id := "ipa-all"
	cts := make([]compiledTerm, len(terms))
	for i := range terms {
		id += "|" + cache.TermKey(&terms[i], 0)
		cts[i] = compileTerm(&terms[i], 0)
	}
	return id, func(pi *cache.PodInfo) bool {
		for i := range cts {
			if !cts[i].matches(pi.Pod) {
				return false
			}
		}
		return true
	}
}

// countExistingAnti counts, on node, the required anti-affinity terms of
// other that the pod matches (with its namespace's labels).
func (f *podAffinityFilter) countExistingAnti(other *cache.PodInfo, node *v1.Node, delta int64) {
	if other.Affinity == nil {
		return
	}
	for i := range other.Affinity.RequiredAnti {
		t := &other.Affinity.RequiredAnti[i]
		if t.Matches(f.pod.Pod, f.nsLabels) {
			f.existingAnti.add(node, t.TopologyKey, delta)
			if delta > 0 && !slices.Contains(f.existingAntiKeys, t.TopologyKey) {
				f.existingAntiKeys = append(f.existingAntiKeys, t.TopologyKey)
			}
		}
	}
}

// countIncoming counts other, a pod on node, against the pod's required
// terms: once per affinity term when it matches all of them, once per
// anti-affinity term it matches.
func (f *podAffinityFilter) countIncoming(other *v1.Pod, node *v1.Node, delta int64) {
	if matchesAll(f.required, other) {
		for i := range f.required {
			f.affinity.add(node, f.required[i].TopologyKey, delta)
		}
	}
	for i := range f.requiredAnti {
		// The terms' namespaceSelector is merged: no namespace labels.
		if t := &f.requiredAnti[i]; t.Matches(other, nil) {
			f.anti.add(node, t.TopologyKey, delta)
		}
	}
}

// matchesAll reports whether pod matches every one of terms, which are not
// empty and have their namespaceSelector merged (upstream's
// podMatchesAllAffinityTerms).
func matchesAll(terms []fwk.AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// Filter checks, in upstream's order, the pod's required affinity, its
// required anti-affinity and the existing pods' required anti-affinity
// against the counts of the node's topology domains. It allocates nothing.
// Counts read from a snapshot that changed since PreFilter are not the
// pod's: Filter fails closed with an Error then.
func (f *podAffinityFilter) Filter(ni *cache.NodeInfo) *framework.Status {
	if f.snap != nil && f.snap.Changes() != f.changes {
		return statusStale
	}
	nodeLabels := ni.Node().Labels
	if !f.affinityMatches(nodeLabels) {
		return statusPodAffinity
	}
	if !f.anti.empty() {
		for i := range f.requiredAnti {
			key := f.requiredAnti[i].TopologyKey
			if v, ok := nodeLabels[key]; ok && f.anti.get(key, v) > 0 {
				return statusPodAntiAffinity
			}
		}
	}
	if !f.existingAnti.empty() {
		for _, key := range f.existingAntiKeys {
			if v, ok := nodeLabels[key]; ok && f.existingAnti.get(key, v) > 0 {
				return statusExistingAntiAffinity
			}
		}
	}
	return nil
}

// affinityMatches is upstream's affinity check: the node must have every
// term's topology key, and some pod matching all terms must be in each of
// its domains; failing that, no such pod may exist anywhere and the pod
// must match its terms itself.
func (f *podAffinityFilter) affinityMatches(nodeLabels map[string]string) bool {
	podsExist := true
	for i := range f.required {
		key := f.required[i].TopologyKey
		v, ok := nodeLabels[key]
		if !ok {
			return false
		}
		if f.affinity.get(key, v) <= 0 {
			podsExist = false
		}
	}
	return podsExist || f.affinity.empty() && f.matchesItself
}

// Clone copies the delta of the counts; their snapshot layers, the terms
// and the pod are shared, read-only.
func (f *podAffinityFilter) Clone() framework.PodFilter {
	c := *f
	c.affinity, c.anti, c.existingAnti = f.affinity.clone(), f.anti.clone(), f.existingAnti.clone()
	c.existingAntiKeys = slices.Clone(f.existingAntiKeys)
	return &c
}

// statusStale is Filter's answer when the snapshot changed under the
// pod's state: a caller's bug, never a reason to place the pod.
var statusStale = &framework.Status{Code: framework.Error, Plugin: abi.PluginInterPodAffinity,
	Err: errors.New("the snapshot changed (UpdateSnapshot, Assume or Forget) after PreFilter while the pod's state reads its counts in place: the caller must Detach the state before changing the snapshot")}

// Detach makes the counts the pod's own, as they stand, so that the
// state no longer depends on the snapshot (framework.Detacher).
func (f *podAffinityFilter) Detach() {
	if f.snap == nil {
		return
	}
	f.affinity.detach()
	f.anti.detach()
	f.existingAnti.detach()
	f.snap = nil
}

// AddPod counts pod on ni's node (upstream's AddPod extension).
func (f *podAffinityFilter) AddPod(pod *cache.PodInfo, ni *cache.NodeInfo) { f.update(pod, ni, 1) }

// RemovePod uncounts pod on ni's node (upstream's RemovePod extension): a
// preemption victim whose anti-affinity refused the pod no longer does.
func (f *podAffinityFilter) RemovePod(pod *cache.PodInfo, ni *cache.NodeInfo) { f.update(pod, ni, -1) }

func (f *podAffinityFilter) update(pod *cache.PodInfo, ni *cache.NodeInfo, delta int64) {
	node := ni.Node()
	if node == nil {
		return
	}
	f.countExistingAnti(pod, node, delta)
	f.countIncoming(pod.Pod, node, delta)
}

// namespaceLabels are the labels of namespace ns (upstream's
// GetNamespaceLabelsSnapshot), nil when the lister does not know it. The
// informer's objects are never changed in place, so the map is not copied.
func (pl interPodAffinity) namespaceLabels(ns string) labels.Set {
	if pl.namespaces == nil {
		return nil
	}
	n, err := pl.namespaces.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

// mergeNamespaces returns terms with each namespaceSelector that selects
// something resolved into the namespaces it selects now, the selector then
// matching nothing (upstream's mergeAffinityTermNamespacesIfNotEmpty). The
// terms are the cached pod's, shared: they are copied when one changes, and
// terms itself is returned when none does (most terms have no selector).
func (pl interPodAffinity) mergeNamespaces(terms []fwk.AffinityTerm) ([]fwk.AffinityTerm, error) {
	var out []fwk.AffinityTerm
	for i := range terms {
		if !selectsSome(terms[i].NamespaceSelector) {
			continue
		}
		if out == nil {
			out = slices.Clone(terms)
		}
		if err := pl.mergeTerm(&out[i]); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return terms, nil
	}
	return out, nil
}

// mergeWeighted is mergeNamespaces for weighted terms.
func (pl interPodAffinity) mergeWeighted(terms []fwk.WeightedAffinityTerm) ([]fwk.WeightedAffinityTerm, error) {
	var out []fwk.WeightedAffinityTerm
	for i := range terms {
		if !selectsSome(terms[i].NamespaceSelector) {
			continue
		}
		if out == nil {
			out = slices.Clone(terms)
		}
		if err := pl.mergeTerm(&out[i].AffinityTerm); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return terms, nil
	}
	return out, nil
}

// selectsSome reports whether a namespaceSelector has requirements. A nil
// selector (labels.Nothing()) selects no namespace and {} (Everything) every
// one: both stay as they are, which is what upstream's merge ends with.
func selectsSome(sel labels.Selector) bool {
	reqs, selectable := sel.Requirements()
	return selectable && len(reqs) > 0
}

// mergeTerm resolves t's namespaceSelector into a copy of its namespaces.
func (pl interPodAffinity) mergeTerm(t *fwk.AffinityTerm) error {
	t.Namespaces = t.Namespaces.Clone()
	if pl.namespaces != nil {
		nss, err := pl.namespaces.List(t.NamespaceSelector)
		if err != nil {
			return err
		}
		for _, ns := range nss {
			t.Namespaces.Insert(ns.Name)
		}
	}
	t.NamespaceSelector = labels.Nothing()
	return nil
}

// affinityParseError is the error upstream's NewPodInfo reports for a pod
// whose affinity terms do not parse, for its messages (cache.PodAffinity.Err
// holds the first failure only).
func affinityParseError(pod *v1.Pod) error {
	a := pod.Spec.Affinity
	var preferred, preferredAnti []v1.WeightedPodAffinityTerm
	if a != nil && a.PodAffinity != nil {
		preferred = a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if a != nil && a.PodAntiAffinity != nil {
		preferredAnti = a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	var errs []error
	if _, err := fwk.GetAffinityTerms(pod, fwk.GetPodAffinityTerms(a)); err != nil {
		errs = append(errs, fmt.Errorf("requiredAffinityTerms: %w", err))
	}
	if _, err := fwk.GetAffinityTerms(pod, fwk.GetPodAntiAffinityTerms(a)); err != nil {
		errs = append(errs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
	}
	if _, err := fwk.GetWeightedAffinityTerms(pod, preferred); err != nil {
		errs = append(errs, fmt.Errorf("preferredAffinityTerms: %w", err))
	}
	if _, err := fwk.GetWeightedAffinityTerms(pod, preferredAnti); err != nil {
		errs = append(errs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
	}
	return utilerrors.NewAggregate(errs)
}

// PreScore collects, in both directions (upstream's PreScore), the terms
// that add to the score of a topology domain: the pod's preferred terms,
// with the pods they match per domain from the snapshot's selector
// indexes, and the existing pods' terms that the pod matches, with their
// carriers per domain from its term index. It skips the pod when nothing
// matched. The feasible nodes are not looked at: the domains count pods on
// every node, as upstream's.
func (pl interPodAffinity) PreScore(pod *cache.PodInfo, _ []*cache.NodeInfo, snap *cache.Snapshot) (framework.PodScorer, *framework.Status) {
	pa := pod.Affinity
	if pa != nil && pa.Err != nil {
		// PreFilter rejects such a pod first; upstream's PreScore fails.
		return nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginInterPodAffinity,
			Err: fmt.Errorf("failed to parse pod: %w", affinityParseError(pod.Pod))}
	}
	hasPreferred := pa != nil && (len(pa.Preferred) > 0 || len(pa.PreferredAnti) > 0)
	if pl.ignoreExistingPreferred && !hasPreferred || snap.NumNodes() == 0 {
		return nil, nil
	}
	s := &podAffinityScorer{}
	if hasPreferred {
		preferred, err := pl.mergeWeighted(pa.Preferred)
		var preferredAnti []fwk.WeightedAffinityTerm
		if err == nil {
			preferredAnti, err = pl.mergeWeighted(pa.PreferredAnti)
		}
		if err != nil {
			return nil, &framework.Status{Code: framework.Error, Plugin: abi.PluginInterPodAffinity,
				Err: fmt.Errorf("list namespaces for the preferred pod affinity of pod %s/%s: %w", pod.Pod.Namespace, pod.Pod.Name, err)}
		}
		for i := range preferred {
			s.addPreferred(snap, &preferred[i].AffinityTerm, int64(preferred[i].Weight))
		}
		for i := range preferredAnti {
			s.addPreferred(snap, &preferredAnti[i].AffinityTerm, -int64(preferredAnti[i].Weight))
		}
	}
	nsLabels := pl.namespaceLabels(pod.Pod.Namespace)
	if pl.hardPodAffinityWeight > 0 {
		s.addExisting(snap.AffinityTerms(cache.RequiredAffinity), pl.hardPodAffinityWeight, false, pod.Pod, nsLabels)
	}
	s.addExisting(snap.AffinityTerms(cache.PreferredAffinity), 1, true, pod.Pod, nsLabels)
	s.addExisting(snap.AffinityTerms(cache.PreferredAntiAffinity), -1, true, pod.Pod, nsLabels)
	if len(s.terms) == 0 {
		return nil, nil
	}
	return s, nil
}

// addPreferred adds t (merged), of weight, when it matches some pod.
func (s *podAffinityScorer) addPreferred(snap *cache.Snapshot, t *fwk.AffinityTerm, weight int64) {
	ct := compileTerm(t, weight)
	if pc := snap.PodCounts(termIndexID(t), ct.key, ct.matchInfo); pc.Pods() > 0 {
		s.terms = append(s.terms, scoredTerm{key: ct.key, weight: weight, pods: pc.Domains()})
	}
}

// addExisting adds each of the existing pods' terms that pod matches (with
// its namespace's labels nsLabels), of weight (times the term's own when
// weighted), when some pod on a node with its key carries it (upstream's
// processExistingPod, once per distinct term).
func (s *podAffinityScorer) addExisting(terms map[string]*cache.TermCounts, weight int64, weighted bool, pod *v1.Pod, nsLabels labels.Set) {
	for _, tc := range terms {
		if len(tc.Domains) == 0 || !tc.Term.Matches(pod, nsLabels) {
			continue
		}
		w := weight
		if weighted {
			w *= int64(tc.Weight)
		}
		s.terms = append(s.terms, scoredTerm{key: tc.Term.TopologyKey, weight: w, carriers: tc.Domains})
	}
}

// compiledTerm is one of the incoming pod's preferred terms, compiled for
// matching every pod of the cluster (the selector index's build): the
// namespaces as a short list, the selector as a helper.LabelMatcher.
type compiledTerm struct {
	key    string
	weight int64 // negative for anti-affinity
	// allNS: the namespaceSelector selects every namespace (as
	// AffinityTerm.Matches with no namespace labels, which is how the
	// incoming pod's terms are matched once merged); else ns or nsSet.
	allNS bool
	ns    []string
	nsSet sets.Set[string]
	sel   helper.LabelMatcher
}

// shortNamespaces is the size up to which a term's namespaces are
// searched as a list rather than a set.
const shortNamespaces = 8

func compileTerm(t *fwk.AffinityTerm, weight int64) compiledTerm {
	c := compiledTerm{key: t.TopologyKey, weight: weight, allNS: t.NamespaceSelector.Matches(labels.Set(nil)), sel: helper.CompileLabels(t.Selector)}
	if len(t.Namespaces) <= shortNamespaces {
		c.ns = sets.List(t.Namespaces)
	} else {
		c.nsSet = t.Namespaces
	}
	return c
}

// matchInfo is matches for a selector index.
func (c *compiledTerm) matchInfo(pi *cache.PodInfo) bool { return c.matches(pi.Pod) }

// matches is AffinityTerm.Matches(pod, nil).
func (c *compiledTerm) matches(pod *v1.Pod) bool {
	if !c.allNS && !slices.Contains(c.ns, pod.Namespace) && !c.nsSet.Has(pod.Namespace) {
		return false
	}
	return c.sel.Matches(pod.Labels)
}

// podAffinityScorer is a pod's state for InterPodAffinity's Score
// (upstream's preScoreState): the terms that score, each with its counts
// per domain read from the snapshot's indexes, which do not change before
// Score runs in the same cycle. Upstream sums them into one map per
// topology key in PreScore; reading the counts in Score instead costs
// nodes times matching terms there (no more than upstream's PreScore,
// pods times terms) and builds no map.
type podAffinityScorer struct {
	terms []scoredTerm
}

// scoredTerm is a term's weight and, per value of its topology key, the
// pods it matches (pods) or the pods carrying it (carriers).
type scoredTerm struct {
	key      string
	weight   int64
	pods     map[string]cache.Domain
	carriers map[string]int
}

// Score sums, for each node, the weight of every term times its count in
// the node's domain (raw, possibly negative).
func (s *podAffinityScorer) Score(nodes []*cache.NodeInfo, scores []int64) {
	for i, ni := range nodes {
		var score int64
		if node := ni.Node(); node != nil {
			for j := range s.terms {
				t := &s.terms[j]
				v, ok := node.Labels[t.key]
				if !ok {
					continue
				}
				if t.pods != nil {
					score += t.weight * int64(t.pods[v].Pods)
				} else {
					score += t.weight * int64(t.carriers[v])
				}
			}
		}
		scores[i] = score
	}
}

// NormalizeScores is upstream's min-max normalisation: the lowest score
// becomes 0 and the highest MaxNodeScore; all 0 when they are equal.
func (*podAffinityScorer) NormalizeScores(scores []int64) {
	lowest, highest := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range scores {
		lowest, highest = min(lowest, s), max(highest, s)
	}
	diff := highest - lowest
	for i, s := range scores {
		var f float64
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(s-lowest) / float64(diff))
		}
		scores[i] = int64(f)
	}
}

// Row is the plugin's registry row.
func Row() framework.Row {
	return framework.Row{Name: abi.PluginInterPodAffinity, Points: framework.PointsOf(framework.PointPreFilter, framework.PointFilter, framework.PointPreScore, framework.PointScore), Default: true,
		Weight: weightInterPodAffinity, Args: interPodAffinityArgs,
		New: func(h framework.Handle, args any) (framework.Plugin, error) {
			pl := args.(interPodAffinity)
			pl.namespaces = h.Listers().Namespaces
			return pl, nil
		}}
}

// interPodAffinityArgs is InterPodAffinity's Row.Args.
func interPodAffinityArgs(pc *kschedv1.PluginConfig, path *field.Path) (any, error) {
	var args kschedv1.InterPodAffinityArgs
	if err := framework.DecodeArgs(pc, path, &args); err != nil {
		return nil, err
	}
	if args.HardPodAffinityWeight == nil {
		w := int32(defaultHardPodAffinityWeight)
		args.HardPodAffinityWeight = &w
	}
	if w := *args.HardPodAffinityWeight; w < 0 || w > 100 {
		return nil, field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0, 100]")
	}
	return interPodAffinity{hardPodAffinityWeight: int64(*args.HardPodAffinityWeight),
		ignoreExistingPreferred: args.IgnorePreferredTermsOfExistingPods}, nil
}
