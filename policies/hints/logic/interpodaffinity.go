package logic

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
)

// The InterPodAffinity hints. Upstream's decide with the pending pod's
// required pod affinity and anti-affinity terms (label selectors,
// namespaces, topology keys) and, for a deleted pod, with that pod's
// anti-affinity terms. The pod record carries them from ABI minor 4
// (abi.PodView.TermsKnown); a record of an older host does not, and then each
// hint makes upstream's checks that need no term and queues where the answer
// depends on one (the moves upstream makes for a plugin without hints).
//
// With the terms, the hints skip what upstream's skip, with three
// exceptions where upstream's would leave a pod the native filter now
// accepts waiting for the flush (a false negative):
//   - a term's namespaceSelector: upstream's hints match it against no
//     labels (the filter merges it into namespaces through the namespace
//     lister); the records carry no namespace labels, so a term with a
//     namespaceSelector with requirements counts every namespace;
//   - other pods' anti-affinity: the filter also rejects a node because an
//     existing pod's required anti-affinity term matches the pod, which
//     upstream's node hints never consider. That term's topology key is not
//     in any record, so a node added, or a node update that removed a
//     label or changed its value, queues; an update that only added labels
//     cannot move a node out of an existing pod's domain, and skips unless a
//     pod affinity term's topology key appeared;
//   - the pod's affinity to itself: the filter lets the first pod of a
//     group with affinity to its own labels go anywhere its topology keys
//     exist once no pod matches its terms; a bound pod that matched them
//     deleted or relabelled away queues such a pod.

// errPodTermSyntax stands for the errors upstream's GetAffinityTerms and
// getConstraints report for a label selector that does not parse; upstream
// queues with them.
var errPodTermSyntax = errors.New("hints: the pod has a pod affinity term or spread constraint whose label selector does not parse")

// interPodAffinityAfterAssignedPodChange mirrors interpodaffinity's
// isSchedulableAfterAssignedPodChange for a bound pod added, deleted or
// relabelled:
//   - Skip a pod without a node (upstream: without a node and without a
//     nominated node; the ABI has no nominatedNodeName, and the host sends
//     these events for bound pods only);
//   - on an update, Skip when the labels did not change: whether a pod
//     matches a term depends on its labels and namespace alone;
//   - an update queues when the pod now matches all affinity terms and did
//     not, or no longer matches an anti-affinity term it matched; an add
//     when the pod matches all affinity terms; a delete when the pod
//     matched an anti-affinity term or the pending pod matches one of the
//     deleted pod's; and either when the pod matched all affinity terms
//     that the pending pod matches too (see the notes above).
func interPodAffinityAfterAssignedPodChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, cur, hasNew, err := podChange(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if (hasNew && cur.NodeName() == "") || (hasOld && old.NodeName() == "") {
		return abi.HintSkip, nil
	}
	if hasOld && hasNew && sameLabels(old.Labels(), cur.Labels()) {
		return abi.HintSkip, nil
	}
	if !p.TermsKnown() {
		return abi.HintQueue, nil
	}
	aff, anti := p.PodAffinity(), p.PodAntiAffinity()
	if !podTermsWellFormed(aff) || !podTermsWellFormed(anti) {
		return abi.HintQueue, errPodTermSyntax
	}
	switch {
	case hasOld && hasNew:
		was, is := matchesAllTerms(aff, p, old), matchesAllTerms(aff, p, cur)
		return queueIf(!was && is ||
			matchesAnyTerm(anti, p, old) && !matchesAnyTerm(anti, p, cur) ||
			was && !is && matchesAllTerms(aff, p, p)), nil
	case hasNew:
		return queueIf(matchesAllTerms(aff, p, cur)), nil
	}
	if matchesAnyTerm(anti, p, old) || matchesAllTerms(aff, p, old) && matchesAllTerms(aff, p, p) {
		return abi.HintQueue, nil
	}
	if !old.TermsKnown() {
		return abi.HintQueue, nil
	}
	theirs := old.PodAntiAffinity()
	if !podTermsWellFormed(theirs) {
		return abi.HintQueue, errPodTermSyntax
	}
	return queueIf(matchesAnyTerm(theirs, old, p)), nil
}

// interPodAffinityAfterPodLabelChange mirrors interpodaffinity's
// isSchedulableAfterTargetPodUpdateLabel: the pod's own labels changed, and
// a bound pod's anti-affinity may no longer select it, so Queue.
func interPodAffinityAfterPodLabelChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	_, self, err := targetPod(ev, p)
	if err != nil {
		return abi.HintQueue, err
	}
	return queueIf(self), nil
}

// interPodAffinityAfterNodeChange mirrors interpodaffinity's
// isSchedulableAfterNodeChange. Upstream queues a node added with an
// affinity term's topology key (or any node added, for a pod with an
// anti-affinity term), and a label update that added an affinity term's
// topology key, removed an anti-affinity term's, or changed the value of
// either. Here, for existing pods' anti-affinity (see the notes above), a
// node added queues a pod without affinity terms too, and an update queues
// when it removed any label or changed any value; an update that only added
// labels queues when one is an affinity term's topology key. Without the
// terms (an older host): Queue an added node, and an update whose labels
// changed.
func interPodAffinityAfterNodeChange(ev abi.EventView, p abi.PodView) (abi.Hint, error) {
	old, hasOld, node, err := nodes(ev)
	if err != nil {
		return abi.HintQueue, err
	}
	if !hasOld {
		if !p.TermsKnown() || p.PodAffinity().Len() == 0 {
			return abi.HintQueue, nil
		}
	} else if sameLabels(old.Labels(), node.Labels()) {
		return abi.HintSkip, nil
	}
	if !p.TermsKnown() {
		return abi.HintQueue, nil
	}
	aff := p.PodAffinity()
	if !podTermsWellFormed(aff) || !podTermsWellFormed(p.PodAntiAffinity()) {
		return abi.HintQueue, errPodTermSyntax
	}
	labels := node.Labels()
	if !hasOld {
		for i := range aff.Len() {
			if _, ok := labels.Get(aff.TopologyKey(i)); ok {
				return abi.HintQueue, nil
			}
		}
		return abi.HintSkip, nil
	}
	before := old.Labels()
	if labelRemovedOrChanged(before, labels) {
		return abi.HintQueue, nil
	}
	for i := range aff.Len() {
		k := aff.TopologyKey(i)
		_, had := before.Get(k)
		if _, has := labels.Get(k); has && !had {
			return abi.HintQueue, nil
		}
	}
	return abi.HintSkip, nil
}

// labelRemovedOrChanged reports whether some label of before is missing
// from after or has another value there.
func labelRemovedOrChanged(before, after abi.KVList) bool {
	for i := range before.Len() {
		k, v := before.At(i)
		if w, ok := after.Get(k); !ok || w != v {
			return true
		}
	}
	return false
}

// podTermsWellFormed applies metav1.LabelSelectorAsSelector's checks to
// every term's labelSelector and namespaceSelector.
func podTermsWellFormed(ts abi.PodTermList) bool {
	for i := range ts.Len() {
		if !wellFormedExpressions(ts.Selector(i)) || !wellFormedExpressions(ts.NamespaceSelector(i)) {
			return false
		}
	}
	return true
}

// matchesAllTerms is upstream's podMatchesAllAffinityTerms: false without
// terms, else every term of owner's matches pod q.
func matchesAllTerms(ts abi.PodTermList, owner, q abi.PodView) bool {
	if ts.Len() == 0 {
		return false
	}
	for i := range ts.Len() {
		if !termMatches(ts, i, owner, q) {
			return false
		}
	}
	return true
}

// matchesAnyTerm is upstream's podMatchesAnyAffinityTerms.
func matchesAnyTerm(ts abi.PodTermList, owner, q abi.PodView) bool {
	for i := range ts.Len() {
		if termMatches(ts, i, owner, q) {
			return true
		}
	}
	return false
}

// termMatches is upstream's AffinityTerm.Matches for term i of owner's
// against pod q: q's namespace is one the term names (owner's own when it
// names none and has no namespaceSelector) or the namespaceSelector may
// select it (an empty one selects every namespace; one with requirements is
// taken to select q's, whose labels no record carries), and the
// labelSelector matches q's labels (a nil one matches nothing).
func termMatches(ts abi.PodTermList, i int, owner, q abi.PodView) bool {
	if ts.NoSelector(i) {
		return false
	}
	nss, ns := ts.Namespaces(i), q.Namespace()
	inNS := false
	switch {
	case !ts.NoNamespaceSelector(i):
		inNS = true
	case nss.Len() == 0:
		inNS = ns == owner.Namespace()
	default:
		inNS = nss.Has(ns)
	}
	return inNS && expressionsMatch(ts.Selector(i), q.Labels())
}
