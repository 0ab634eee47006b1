// Package logic is the QueueingHint policy (KEP-4247) for the host's native
// filters: for each filter a [hint.Plugin] that registers the events of its
// upstream namesake (Kubernetes v1.37, pkg/scheduler/framework/plugins) and
// decides, as upstream's QueueingHintFn does, whether an event may make a
// pod that filter rejected schedulable.
//
// The host asks about a pod only for events a plugin that rejected it
// registered; the hints then look at the event's objects:
//
//   - NodeResourcesFit: a node added or its allocatable updated, if the pod
//     now fits it (and, for an update, the room for something the pod needs
//     grew); a bound pod deleted; a bound pod's requests scaled down for a
//     resource the pod requests; the pod's own requests scaled down.
//   - NodeAffinity: a node added that matches the profile's addedAffinity
//     and the pod's spec.nodeSelector and required node affinity, or a
//     label update after which it matches and before which it did not.
//   - TaintToleration: a node added or its taints updated, if it had a
//     NoSchedule/NoExecute taint the pod does not tolerate and now has none;
//     the pod's own toleration update.
//   - NodeUnschedulable: a node added schedulable or whose spec.unschedulable
//     went from true to false; the pod's own toleration update, if it now
//     tolerates node.kubernetes.io/unschedulable:NoSchedule.
//   - NodePorts: a bound pod deleted that held a host port the pod wants; a
//     node added.
//   - NodeName: a node added.
//   - NodeDeclaredFeatures: a node added, or its declared features updated
//     (the view has no features); the pod's own update that changed the
//     features it needs.
//   - SchedulingGates: the pod's own update that removed its last gate.
//   - GangScheduling: a pod (pending or bound) of the pod's group added; the
//     group added; the group's gang minCount lowered.
//   - InterPodAffinity: a bound pod added, deleted or relabelled that
//     matches (or stopped matching) the pod's required affinity or
//     anti-affinity terms, or whose anti-affinity selected the pod; the
//     pod's own label update; a node added, or a label update that added an
//     affinity term's topology key or removed or changed any label.
//   - PodTopologySpread: a bound pod in the pod's namespace added, deleted
//     or relabelled that a DoNotSchedule constraint selects (or selected);
//     the pod's own label or toleration change that a constraint sees; a
//     node added or deleted with every topology key, or updated so that its
//     keys, their values, its taints or its match of the pod's node
//     affinity changed.
//
// Everything else is Skip. Node-selector matching (In, NotIn, Exists,
// DoesNotExist, Gt, Lt; matchFields on metadata.name) and toleration
// matching (Equal, Exists, Lt, Gt) are written here, after
// k8s.io/component-helpers and k8s.io/api, with the same syntax checks.
//
// The package is pure Go and builds with TinyGo; a hint runs once per
// candidate pod on every event, and allocates nothing.
//
// # Notes
//
// Upstream's TargetPod resource (an update of the pending pod itself, which
// upstream's queue hands to that pod's hints only) has no ABI value; those
// registrations use abi.ResourceUnscheduledPod, and their hints skip updates
// of other pods (same UID, or namespace and name when a UID is missing).
//
// An event whose bits several routes of a plugin registered runs each of
// them, and queues if one does: upstream splits such an update into one
// event per bit.
//
// NodeResourcesFit checks fit against allocatable minus requested (the node
// record has both), where upstream builds a node without its pods; see
// fitAfterNodeChange.
//
// The ABI carries no status.nominatedNodeName, so an assigned-pod event is
// judged by spec.nodeName alone (the host sends such events for bound pods
// only).
//
// The pod record carries the pod affinity terms, the spread constraints,
// the profile's addedAffinity and the required node features from ABI minor
// 4. A record of an older host lacks them (abi.PodView.TermsKnown): the
// hints then queue wherever upstream's would consult them, skipping only
// what upstream skips whatever they are, as before minor 4. For a pod
// without spread constraints of its own (spread by the profile's defaults,
// which no record carries) the PodTopologySpread hints do the same. Where
// upstream's hints would leave a pod the native filters now accept waiting
// (namespaceSelectors matched against no labels, other pods'
// anti-affinity on node updates, affinity to the pod's own labels, node
// affinity inclusion of spread domains, matchLabelKeys values, an update
// into the addedAffinity), these hints queue; interpodaffinity.go and
// podtopologyspread.go list the cases.
//
// Unknown enum values (abi.*Unknown) match nothing: an unknown toleration
// operator or effect tolerates nothing, an unknown taint effect is not a
// NoSchedule/NoExecute taint, an unknown protocol conflicts with nothing. An
// unknown node-selector operator is a malformed term, as in upstream, which
// makes the NodeAffinity hint fail (abi.HintError, queued by the host) when
// no well-formed term matches.
package logic
