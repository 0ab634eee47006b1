package podview

import (
	"iter"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wasmsched/wasmsched/abi"
)

// Encodings of enum values the ABI has no name for (see the package notes).
const (
	unknownSelectorOperator   = abi.SelectorUnknown
	unknownTolerationOperator = abi.TolerationUnknown
	unknownEffect             = abi.EffectUnknown
	unknownProtocol           = abi.ProtocolUnknown
)

// resourcePods is the pseudo-resource counting pods, always present in a
// pod's requests (as 1) and a node's requested list.
const resourcePods = string(v1.ResourcePods)

// GroupInfo is what a pod's record carries about its PodGroup besides the
// name, which comes from the pod. Build it with [Group].
type GroupInfo struct {
	MinCount       int32
	Priority       int32
	DisruptionMode abi.DisruptionMode
	// Members is the number of the group's pods the scheduler knows about.
	Members int32
}

// Ref is what a member's record carries about group name.
func (g GroupInfo) Ref(name string) abi.PodGroupRef {
	return abi.PodGroupRef{Name: name, MinCount: g.MinCount, Priority: g.Priority, DisruptionMode: g.DisruptionMode, Members: g.Members}
}

// Plugins are the plugins that rejected a pod in its last attempt, as the
// queue tracks them. Order and duplicates do not matter; [Pod] sorts and
// deduplicates copies.
type Plugins struct {
	Unschedulable []string
	Pending       []string
}

// Normalized returns a copy of p with each list sorted and without
// duplicates, the form records carry them in.
func (p Plugins) Normalized() Plugins {
	return Plugins{Unschedulable: sortedSet(p.Unschedulable), Pending: sortedSet(p.Pending)}
}

// Pod returns the record of pod for a policy. group describes the PodGroup
// named by pod.spec.schedulingGroup.podGroupName; it is nil when the
// scheduler has not seen that PodGroup yet (the record then carries the name
// with zero counts) and is ignored when the pod names no group. q is the
// pod's queue state; the queue later patches it in the encoded record with
// abi.SetPodQueueState instead of calling Pod again.
//
// The result's slices are its own: it shares no mutable memory with pod or
// plugins.
func Pod(pod *v1.Pod, group *GroupInfo, q abi.PodQueueState, plugins Plugins) abi.Pod {
	p := abi.Pod{
		UID:          string(pod.UID),
		Namespace:    pod.Namespace,
		Name:         pod.Name,
		NodeName:     pod.Spec.NodeName,
		Priority:     podPriority(pod),
		PreemptNever: pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever,
		CreationTime: nanos(&pod.CreationTimestamp),

		UnschedulablePlugins: sortedSet(plugins.Unschedulable),
		PendingPlugins:       sortedSet(plugins.Pending),
		Labels:               sortedKVs(pod.Labels),
		Requests:             Requests(pod),
		NodeSelector:         sortedKVs(pod.Spec.NodeSelector),
		Tolerations:          tolerations(pod.Spec.Tolerations),
		HostPorts:            hostPorts(pod),
		RequiredAffinity:     requiredAffinity(pod.Spec.Affinity),
		RequiredFeatures:     RequiredFeatures(pod),
	}
	if a := pod.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			p.PodAffinity = podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			p.PreferredPodAffinity = weightedPodTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			p.PodAntiAffinity = podTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution)
			p.PreferredPodAntiAffinity = weightedPodTerms(pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		p.SpreadConstraints = spreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels)
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		p.OwnerKind = ref.Kind
	}
	p.Claims, p.EphemeralClaims, p.VolumeDrivers = podVolumes(pod)
	p.ResourceClaims = podResourceClaims(pod)
	p.SetQueueState(q)
	if name := GroupName(pod); name != "" {
		p.Group.Name = name
		if group != nil {
			p.Group = group.Ref(name)
		}
	}
	if n := len(pod.Spec.SchedulingGates); n > 0 {
		p.SchedulingGates = make([]string, n)
		for i, g := range pod.Spec.SchedulingGates {
			p.SchedulingGates[i] = g.Name
		}
	}
	return p
}

// NamespaceLabels returns a namespace's labels in record form, sorted by key
// (abi.Pod.NamespaceLabels).
func NamespaceLabels(labels map[string]string) []abi.KV { return sortedKVs(labels) }

// Images returns a node's images in record form: one entry per image name,
// with the image's size (abi.Node.Images).
func Images(node *v1.Node) []abi.Image {
	var out []abi.Image
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			out = append(out, abi.Image{Name: name, Size: img.SizeBytes})
		}
	}
	return out
}

// GroupName is the PodGroup a pod belongs to
// (spec.schedulingGroup.podGroupName), or "".
func GroupName(pod *v1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// Requests returns the pod's effective resource requests in record form:
// cpu in millicores, everything else in base units, sorted by name, zero
// amounts left out, and "pods": 1.
//
// The sum is upstream's (k8s.io/component-helpers/resource.PodRequests): the
// larger of the containers' sum and each init container's peak (with the
// sidecars started before it), sidecars added to the containers, pod-level
// requests replacing the containers' sum for the resources they name, then
// the pod overhead. For a pod bound to a node it also counts the resources
// the kubelet has allocated or actuated for an in-place resize, as upstream's
// NodeInfo does; for a pod waiting to be scheduled only the spec counts, as
// upstream's NodeResourcesFit does.
func Requests(pod *v1.Pod) []abi.Quantity {
	if q, ok := containerRequests(pod); ok {
		return q
	}
	return quantities(resourcehelper.PodRequests(pod, RequestOptions(pod.Spec.NodeName != "")), true, 1)
}

// containerRequests is Requests of a pending pod whose requests are its
// containers' alone (ContainerRequests); ok is false for any other pod.
func containerRequests(pod *v1.Pod) (_ []abi.Quantity, ok bool) {
	var buf [4]ResourceSum
	sums, ok := ContainerRequests(pod, buf[:0])
	if !ok {
		return nil, false
	}
	out := make([]abi.Quantity, 0, len(sums)+1)
	for _, s := range sums {
		if v := amount(s.Name, s.Sum); v != 0 && s.Name != v1.ResourcePods {
			out = append(out, abi.Quantity{Name: string(s.Name), Value: v})
		}
	}
	out = append(out, abi.Quantity{Name: resourcePods, Value: 1})
	slices.SortFunc(out, func(a, b abi.Quantity) int { return strings.Compare(a.Name, b.Name) })
	return out, true
}

// ResourceSum is a resource of ContainerRequests and its sum.
type ResourceSum struct {
	Name v1.ResourceName
	Sum  resource.Quantity
}

// ContainerRequests appends to buf, for a pending pod whose requests are
// its containers' alone (no init containers, pod-level resources or
// overhead), the sum of their requests per resource in the order first
// requested: what PodRequests sums, without the maps it builds. Every
// pod's record and PodInfo are built when it is pending, and those maps
// were a tenth of the process's allocations on plain pods. ok is false for
// any other pod. TestContainerRequests compares it with PodRequests.
func ContainerRequests(pod *v1.Pod, buf []ResourceSum) (_ []ResourceSum, ok bool) {
	if pod.Spec.NodeName != "" || len(pod.Spec.InitContainers) > 0 || pod.Spec.Resources != nil || pod.Spec.Overhead != nil {
		return buf, false
	}
	sums := buf
	for i := range pod.Spec.Containers {
	next:
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			for j := range sums {
				if sums[j].Name == name {
					sums[j].Sum.Add(q)
					continue next
				}
			}
			sums = append(sums, ResourceSum{name, q.DeepCopy()})
		}
	}
	return sums, true
}

// RequestOptions are upstream's PodRequests options with the v1.37 default
// feature gates: InPlacePodVerticalScaling (GA) and
// InPlacePodLevelResourcesVerticalScaling (beta, on) for bound pods,
// PodLevelResources (beta, on), DRANodeAllocatableResources (alpha, off).
func RequestOptions(bound bool) resourcehelper.PodResourcesOptions {
	return resourcehelper.PodResourcesOptions{
		UseStatusResources: bound,
		InPlacePodLevelResourcesVerticalScalingEnabled: bound,
	}
}

// amount is q in record units: millicores for cpu, base units otherwise
// (rounded up, as resource.Quantity.Value does).
func amount(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// quantities converts list to record form sorted by name. With omitZero,
// zero amounts are left out. pods >= 0 sets the "pods" entry (overriding any
// in list); pods < 0 leaves list's own entry, if any.
func quantities(list v1.ResourceList, omitZero bool, pods int64) []abi.Quantity {
	n := len(list)
	if pods >= 0 {
		n++
	}
	if n == 0 {
		return nil
	}
	out := make([]abi.Quantity, 0, n)
	for name, q := range list {
		if pods >= 0 && name == v1.ResourcePods {
			continue
		}
		v := amount(name, q)
		if omitZero && v == 0 {
			continue
		}
		out = append(out, abi.Quantity{Name: string(name), Value: v})
	}
	if pods >= 0 {
		out = append(out, abi.Quantity{Name: resourcePods, Value: pods})
	}
	slices.SortFunc(out, func(a, b abi.Quantity) int { return strings.Compare(a.Name, b.Name) })
	if len(out) == 0 {
		return nil
	}
	return out
}

func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	// As upstream (corev1helpers.PodPriority): a pod created when no default
	// priority class existed has no priority and counts as 0.
	return 0
}

// nanos is t in Unix nanoseconds, 0 for a nil or zero time.
func nanos(t *metav1.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func sortedKVs(m map[string]string) []abi.KV {
	if len(m) == 0 {
		return nil
	}
	out := make([]abi.KV, 0, len(m))
	for k, v := range m {
		out = append(out, abi.KV{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b abi.KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// sortedSet returns a sorted copy of ss without duplicates.
func sortedSet(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

func tolerations(ts []v1.Toleration) []abi.Toleration {
	if len(ts) == 0 {
		return nil
	}
	out := make([]abi.Toleration, len(ts))
	for i := range ts {
		t := &ts[i]
		out[i] = abi.Toleration{Key: t.Key, Value: t.Value, Operator: tolerationOperator(t.Operator), Effect: effect(t.Effect)}
	}
	return out
}

func tolerationOperator(op v1.TolerationOperator) abi.TolerationOperator {
	switch op {
	case v1.TolerationOpEqual, "": // the API defaults an empty operator to Equal
		return abi.TolerationEqual
	case v1.TolerationOpExists:
		return abi.TolerationExists
	}
	return unknownTolerationOperator
}

// effect maps a taint or toleration effect; "" (a toleration for every
// effect) is abi.EffectNone.
func effect(e v1.TaintEffect) abi.TaintEffect {
	switch e {
	case "":
		return abi.EffectNone
	case v1.TaintEffectNoSchedule:
		return abi.EffectNoSchedule
	case v1.TaintEffectPreferNoSchedule:
		return abi.EffectPreferNoSchedule
	case v1.TaintEffectNoExecute:
		return abi.EffectNoExecute
	}
	return unknownEffect
}

func protocol(p v1.Protocol) abi.Protocol {
	switch p {
	case v1.ProtocolTCP, "": // the API defaults an empty protocol to TCP
		return abi.ProtocolTCP
	case v1.ProtocolUDP:
		return abi.ProtocolUDP
	case v1.ProtocolSCTP:
		return abi.ProtocolSCTP
	}
	return unknownProtocol
}

// hostPorts lists the ports with a hostPort of the containers that run for
// the pod's whole life, as upstream's util.GetHostPorts does (see
// ContainerHostPorts).
func hostPorts(pod *v1.Pod) []abi.HostPort {
	var out []abi.HostPort
	for p := range ContainerHostPorts(pod) {
		out = append(out, abi.HostPort{HostIP: p.HostIP, Port: p.HostPort, Protocol: protocol(p.Protocol)})
	}
	return out
}

// ContainerHostPorts yields the container ports with a hostPort of the
// containers that run for the pod's whole life, as upstream's
// util.GetHostPorts walks them: restartable init containers (sidecars)
// first, then the regular containers. Ordinary init containers are left
// out, as upstream leaves them out. It is the one walker both the policy
// record (hostPorts) and the cache's port accounting use.
func ContainerHostPorts(pod *v1.Pod) iter.Seq[*v1.ContainerPort] {
	return func(yield func(*v1.ContainerPort) bool) {
		walk := func(cs []v1.Container, sidecarsOnly bool) bool {
			for i := range cs {
				c := &cs[i]
				if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
					continue
				}
				for j := range c.Ports {
					if c.Ports[j].HostPort > 0 && !yield(&c.Ports[j]) {
						return false
					}
				}
			}
			return true
		}
		if walk(pod.Spec.InitContainers, true) {
			walk(pod.Spec.Containers, false)
		}
	}
}

func requiredAffinity(a *v1.Affinity) []abi.NodeSelectorTerm {
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	return NodeSelectorTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
}

// NodeSelectorTerms returns the terms of a required node selector in record
// form (abi.Pod.RequiredAffinity, abi.Pod.AddedAffinity); nil for none.
func NodeSelectorTerms(ns *v1.NodeSelector) []abi.NodeSelectorTerm {
	if ns == nil {
		return nil
	}
	terms := ns.NodeSelectorTerms
	if len(terms) == 0 {
		return nil
	}
	out := make([]abi.NodeSelectorTerm, len(terms))
	for i := range terms {
		out[i] = abi.NodeSelectorTerm{
			MatchExpressions: requirements(terms[i].MatchExpressions),
			MatchFields:      requirements(terms[i].MatchFields),
		}
	}
	return out
}

func requirements(rs []v1.NodeSelectorRequirement) []abi.Requirement {
	if len(rs) == 0 {
		return nil
	}
	out := make([]abi.Requirement, len(rs))
	for i := range rs {
		out[i] = abi.Requirement{Key: rs[i].Key, Operator: selectorOperator(rs[i].Operator), Values: cloneStrings(rs[i].Values)}
	}
	return out
}

func selectorOperator(op v1.NodeSelectorOperator) abi.SelectorOperator {
	switch op {
	case v1.NodeSelectorOpIn:
		return abi.SelectorIn
	case v1.NodeSelectorOpNotIn:
		return abi.SelectorNotIn
	case v1.NodeSelectorOpExists:
		return abi.SelectorExists
	case v1.NodeSelectorOpDoesNotExist:
		return abi.SelectorDoesNotExist
	case v1.NodeSelectorOpGt:
		return abi.SelectorGt
	case v1.NodeSelectorOpLt:
		return abi.SelectorLt
	}
	return unknownSelectorOperator
}

// cloneStrings copies ss; an empty list is nil, as the record decoders return it.
func cloneStrings(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return slices.Clone(ss)
}

// podTerms converts required pod (anti-)affinity terms (abi.PodAffinityTerm).
func podTerms(ts []v1.PodAffinityTerm) []abi.PodAffinityTerm {
	if len(ts) == 0 {
		return nil
	}
	out := make([]abi.PodAffinityTerm, len(ts))
	for i := range ts {
		out[i] = podTerm(&ts[i], 0)
	}
	return out
}

func weightedPodTerms(ts []v1.WeightedPodAffinityTerm) []abi.PodAffinityTerm {
	if len(ts) == 0 {
		return nil
	}
	out := make([]abi.PodAffinityTerm, len(ts))
	for i := range ts {
		out[i] = podTerm(&ts[i].PodAffinityTerm, ts[i].Weight)
	}
	return out
}

// podTerm converts one term. Its matchLabelKeys and mismatchLabelKeys are
// left out: the kube-apiserver merged them into the labelSelector when it
// created the pod, and the scheduler reads the selector only.
func podTerm(t *v1.PodAffinityTerm, weight int32) abi.PodAffinityTerm {
	return abi.PodAffinityTerm{
		Selector: labelSelector(t.LabelSelector, nil), NoSelector: t.LabelSelector == nil,
		Namespaces: cloneStrings(t.Namespaces), NamespaceSelector: labelSelector(t.NamespaceSelector, nil),
		NoNamespaceSelector: t.NamespaceSelector == nil, TopologyKey: t.TopologyKey, Weight: weight,
	}
}

// spreadConstraints converts topology spread constraints with the API's
// defaults applied, as the scheduler reads them (upstream's
// filterTopologySpreadConstraints): minDomains 1, nodeAffinityPolicy Honor,
// nodeTaintsPolicy Ignore when unset, and the pod's value of each
// matchLabelKeys key it has merged into the selector (for a non-nil
// labelSelector, as labels.Selector.Add does).
func spreadConstraints(cs []v1.TopologySpreadConstraint, podLabels map[string]string) []abi.SpreadConstraint {
	out := make([]abi.SpreadConstraint, len(cs))
	for i := range cs {
		c := &cs[i]
		sc := abi.SpreadConstraint{
			MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, WhenUnsatisfiable: spreadAction(c.WhenUnsatisfiable),
			NoSelector: c.LabelSelector == nil, MatchLabelKeys: cloneStrings(c.MatchLabelKeys), MinDomains: 1,
			NodeAffinityPolicy: abi.InclusionHonor, NodeTaintsPolicy: abi.InclusionIgnore,
		}
		var merged []abi.Requirement
		if c.LabelSelector != nil {
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					merged = append(merged, abi.Requirement{Key: k, Operator: abi.SelectorIn, Values: []string{v}})
				}
			}
		}
		sc.Selector = labelSelector(c.LabelSelector, merged)
		if c.MinDomains != nil {
			sc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			sc.NodeAffinityPolicy = inclusionPolicy(*c.NodeAffinityPolicy)
		}
		if c.NodeTaintsPolicy != nil {
			sc.NodeTaintsPolicy = inclusionPolicy(*c.NodeTaintsPolicy)
		}
		out[i] = sc
	}
	return out
}

func spreadAction(a v1.UnsatisfiableConstraintAction) abi.SpreadAction {
	switch a {
	case v1.DoNotSchedule:
		return abi.SpreadDoNotSchedule
	case v1.ScheduleAnyway:
		return abi.SpreadScheduleAnyway
	}
	return abi.SpreadUnknown
}

func inclusionPolicy(p v1.NodeInclusionPolicy) abi.InclusionPolicy {
	switch p {
	case v1.NodeInclusionPolicyHonor:
		return abi.InclusionHonor
	case v1.NodeInclusionPolicyIgnore:
		return abi.InclusionIgnore
	}
	return abi.InclusionUnknown
}

// labelSelector converts a label selector into requirements: matchLabels
// sorted by key as In with one value, then matchExpressions in order, then
// extra. An operator the ABI does not know is abi.SelectorUnknown, which
// makes the selector malformed for a policy, as metav1.LabelSelectorAsSelector
// refuses it.
func labelSelector(ls *metav1.LabelSelector, extra []abi.Requirement) []abi.Requirement {
	if ls == nil || len(ls.MatchLabels)+len(ls.MatchExpressions)+len(extra) == 0 {
		return extra
	}
	out := make([]abi.Requirement, 0, len(ls.MatchLabels)+len(ls.MatchExpressions)+len(extra))
	for _, kv := range sortedKVs(ls.MatchLabels) {
		out = append(out, abi.Requirement{Key: kv.Key, Operator: abi.SelectorIn, Values: []string{kv.Value}})
	}
	for i := range ls.MatchExpressions {
		e := &ls.MatchExpressions[i]
		out = append(out, abi.Requirement{Key: e.Key, Operator: labelOperator(e.Operator), Values: cloneStrings(e.Values)})
	}
	return append(out, extra...)
}

func labelOperator(op metav1.LabelSelectorOperator) abi.SelectorOperator {
	switch op {
	case metav1.LabelSelectorOpIn:
		return abi.SelectorIn
	case metav1.LabelSelectorOpNotIn:
		return abi.SelectorNotIn
	case metav1.LabelSelectorOpExists:
		return abi.SelectorExists
	case metav1.LabelSelectorOpDoesNotExist:
		return abi.SelectorDoesNotExist
	}
	return unknownSelectorOperator
}

// featureVersion is the Kubernetes version whose features a pod may need,
// as host/framework/plugins/nodedeclaredfeatures infers them.
var featureVersion = version.MustParse("v1.37.1")

// RequiredFeatures returns the node features the pod needs
// (k8s.io/component-helpers/nodedeclaredfeatures, as upstream's
// NodeDeclaredFeatures plugin infers them), sorted; nil for none.
func RequiredFeatures(pod *v1.Pod) []string {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, featureVersion)
	if err != nil || reqs.IsEmpty() {
		return nil
	}
	names, err := ndf.DefaultFramework.Unmap(reqs)
	if err != nil {
		return nil
	}
	return names
}
