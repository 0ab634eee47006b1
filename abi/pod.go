package abi

// Pod record layout (offsets from the record start; see record.go for refs):
//
//	  8 i32 priority              12 u32 flags (podPreemptNever, podLastFailureError)
//	 16 i64 creation time         24 i64 queued time
//	 32 i64 initial attempt time  40 i64 backoff expiry
//	 48 i32 attempts              52 i32 group minCount
//	 56 i32 group priority        60 i32 group members known to the scheduler
//	 64 u32 group disruption mode 68 u32 reserved
//	 72 uid  80 namespace  88 name  96 node name  104 group name        (strings)
//	112 labels [kv]  120 requests [quantity]  128 unschedulable plugins [str]
//	136 pending plugins [str]  144 scheduling gates [str]  152 node selector [kv]
//	160 tolerations [toleration]  168 host ports [hostPort]
//	176 required node affinity terms [term]
//	184 claims [str]  192 ephemeral claims [str]  200 inline volume drivers [str]   (minor 1)
//	208 resource claims [str]                                                     (minor 2)
//	216 namespace labels [kv]  224 owner kind str                                 (minor 3)
//	232 pod affinity [podTerm]  240 pod anti-affinity [podTerm]                   (minor 4)
//	248 preferred pod affinity [podTerm]  256 preferred pod anti-affinity [podTerm]
//	264 topology spread constraints [spread]  272 added node affinity [term]
//	280 required features [str]
//
// Times are Unix nanoseconds, 0 when unset. Element layouts:
//
//	kv         16: key str, value str
//	quantity   16: name str, i64 value (cpu in millicores, others in base units)
//	str         8: str
//	toleration 24: key str, value str, u32 operator, u32 effect
//	hostPort   16: hostIP str, i32 port, u32 protocol
//	term       16: matchExpressions [requirement], matchFields [requirement]
//	requirement 24: key str, u32 operator, u32 reserved, values [str]
//	podTerm    40: selector [requirement], namespaces [str],
//	               namespace selector [requirement], topology key str,
//	               u32 flags (termNoSelector, termNoNSSelector), i32 weight
//	spread     48: selector [requirement], topology key str, matchLabelKeys [str],
//	               i32 maxSkew, i32 minDomains, u32 whenUnsatisfiable,
//	               u32 nodeAffinityPolicy, u32 nodeTaintsPolicy, u32 flags (spreadNoSelector)
//
// A label selector is a requirement list: matchLabels as In with one value,
// then matchExpressions (In, NotIn, Exists, DoesNotExist), ANDed. A nil
// selector, which selects nothing, is a flag; an empty one selects
// everything.
const (
	podPriority       = 8
	podFlags          = 12
	podCreation       = 16
	podQueued         = 24
	podInitialAttempt = 32
	podBackoffExpiry  = 40
	podAttempts       = 48
	podGroupMinCount  = 52
	podGroupPriority  = 56
	podGroupMembers   = 60
	podGroupDisrupt   = 64
	podUID            = 72
	podNamespace      = 80
	podName           = 88
	podNodeName       = 96
	podGroupName      = 104
	podLabels         = 112
	podRequests       = 120
	podUnschedPlugins = 128
	podPendingPlugins = 136
	podGates          = 144
	podNodeSelector   = 152
	podTolerations    = 160
	podHostPorts      = 168
	podAffinity       = 176
	podClaims         = 184
	podEphemeral      = 192
	podVolumeDrivers  = 200
	podResourceClaims = 208
	podNSLabels       = 216
	podOwnerKind      = 224
	podPodAffinity    = 232
	podPodAnti        = 240
	podPrefAffinity   = 248
	podPrefAnti       = 256
	podSpread         = 264
	podAddedAffinity  = 272
	podFeatures       = 280
	podFixed          = 288

	podPreemptNever     = 1 << 0
	podLastFailureError = 1 << 1
	// podHasAddedAffinity (minor 4): the profile's NodeAffinity enforces an
	// addedAffinity required selector (the added affinity terms).
	podHasAddedAffinity = 1 << 2

	termNoSelector   = 1 << 0
	termNoNSSelector = 1 << 1
	spreadNoSelector = 1 << 0

	kvSize          = 16
	quantitySize    = 16
	strSize         = 8
	tolerationSize  = 24
	hostPortSize    = 16
	termSize        = 16
	requirementSize = 24
	podTermSize     = 40
	spreadSize      = 48
)

// Pod is everything the host tells a policy about a pod: the object's
// scheduling-relevant fields and its state in the queue.
type Pod struct {
	UID, Namespace, Name string
	// NodeName is set for bound pods (in events) and empty in the queue.
	NodeName string

	Priority int32
	// PreemptNever is preemptionPolicy: Never (KEP-902).
	PreemptNever bool

	// Unix nanoseconds; 0 when unset.
	CreationTime       int64
	QueuedTime         int64
	InitialAttemptTime int64
	BackoffExpiry      int64

	Attempts int32
	// LastFailureError: the last attempt failed with an error rather than
	// being rejected by a plugin (it backs off in the error heap, KEP-5142).
	// The host also puts a pod whose attempt failed with no rejecting plugin
	// recorded in the error heap, as upstream does.
	LastFailureError     bool
	UnschedulablePlugins []string
	PendingPlugins       []string

	// Group is the pod's PodGroup (spec.schedulingGroup.podGroupName); empty
	// Group.Name when the pod belongs to none.
	Group PodGroupRef

	Labels          []KV
	Requests        []Quantity
	SchedulingGates []string
	NodeSelector    []KV
	Tolerations     []Toleration
	HostPorts       []HostPort
	// RequiredAffinity holds the terms of
	// requiredDuringSchedulingIgnoredDuringExecution; the pod fits a node that
	// matches any term.
	RequiredAffinity []NodeSelectorTerm

	// Claims are the PersistentVolumeClaims the pod's volumes name
	// (persistentVolumeClaim.claimName), EphemeralClaims those its generic
	// ephemeral volumes create (<pod>-<volume>), in spec.volumes order (ABI
	// minor 1; empty from an older host).
	Claims          []string
	EphemeralClaims []string
	// VolumeDrivers are the CSI drivers of the pod's inline volumes: a csi
	// volume's driver, and the driver an in-tree volume migrates to.
	VolumeDrivers []string

	// ResourceClaims are the names of the ResourceClaims of the pod's
	// spec.resourceClaims, in order: resourceClaimName, or the claim
	// generated from resourceClaimTemplateName as status.resourceClaimStatuses
	// names it, "" while it has not been generated; a template claim the
	// controller chose not to create is left out (ABI minor 2).
	ResourceClaims []string

	// NamespaceLabels are the labels of the pod's namespace, sorted by key.
	// The host fills them in placement batches (the filter and score slots);
	// the queue's records leave them empty (ABI minor 3).
	NamespaceLabels []KV
	// OwnerKind is the kind of the pod's controller owner reference
	// ("ReplicaSet", "Job", ...), empty for a pod without one (ABI minor 3).
	OwnerKind string

	// PodAffinity and PodAntiAffinity are the terms of
	// spec.affinity.podAffinity and podAntiAffinity
	// requiredDuringSchedulingIgnoredDuringExecution, the Preferred ones
	// those of preferredDuringSchedulingIgnoredDuringExecution with their
	// weights (ABI minor 4). A term's matchLabelKeys and mismatchLabelKeys
	// are not there: the kube-apiserver merges them into its labelSelector
	// when it creates the pod (KEP-3633), which is all the scheduler reads.
	PodAffinity              []PodAffinityTerm
	PodAntiAffinity          []PodAffinityTerm
	PreferredPodAffinity     []PodAffinityTerm
	PreferredPodAntiAffinity []PodAffinityTerm
	// SpreadConstraints are spec.topologySpreadConstraints, defaults
	// applied (ABI minor 4). A pod without constraints of its own is spread
	// by the profile's default constraints, which the record does not carry.
	SpreadConstraints []SpreadConstraint
	// AddedAffinity holds the required terms of the addedAffinity of the
	// profile's NodeAffinity plugin (args.addedAffinity.
	// requiredDuringSchedulingIgnoredDuringExecution), which every pod of
	// the profile must match besides its own node affinity; HasAddedAffinity
	// says the profile has one (ABI minor 4). The same for every pod of a
	// profile; the queue's records carry it, event and placement records do
	// not.
	AddedAffinity    []NodeSelectorTerm
	HasAddedAffinity bool
	// RequiredFeatures are the node features the pod needs
	// (status.declaredFeatures of a node, upstream's NodeDeclaredFeatures),
	// sorted (ABI minor 4).
	RequiredFeatures []string
}

// PodAffinityTerm is one pod affinity or anti-affinity term (ABI minor 4).
type PodAffinityTerm struct {
	// Selector is the labelSelector as requirements (matchLabels as In
	// with one value, then matchExpressions); NoSelector says the
	// labelSelector is nil, which selects no pod. An empty Selector
	// without NoSelector selects every pod.
	Selector   []Requirement
	NoSelector bool
	// Namespaces and NamespaceSelector say which namespaces' pods the term
	// looks at: the listed ones and those whose labels the selector
	// matches. NoNamespaceSelector says namespaceSelector is nil; with no
	// namespaces either, the term looks at the pod's own namespace.
	Namespaces          []string
	NamespaceSelector   []Requirement
	NoNamespaceSelector bool
	TopologyKey         string
	// Weight of a preferred term, 0 for a required one.
	Weight int32
}

// SpreadConstraint is one topology spread constraint, with the API's
// defaults applied (ABI minor 4).
type SpreadConstraint struct {
	MaxSkew           int32
	TopologyKey       string
	WhenUnsatisfiable SpreadAction
	// Selector is the labelSelector as requirements, with the pod's value
	// of each matchLabelKeys key the pod has ANDed in as In, as the
	// scheduler merges them; NoSelector says the labelSelector is nil.
	Selector       []Requirement
	NoSelector     bool
	MatchLabelKeys []string
	// MinDomains is 1 when unset.
	MinDomains int32
	// NodeAffinityPolicy is InclusionHonor when unset, NodeTaintsPolicy
	// InclusionIgnore.
	NodeAffinityPolicy InclusionPolicy
	NodeTaintsPolicy   InclusionPolicy
}

// PodGroupRef is what a pod view carries about its group.
type PodGroupRef struct {
	Name           string
	MinCount       int32
	Priority       int32
	DisruptionMode DisruptionMode
	// Members is the number of the group's pods the scheduler knows about.
	Members int32
}

// KV is a label or node-selector entry.
type KV struct{ Key, Value string }

// Quantity is a resource amount: cpu in millicores, everything else in base
// units (bytes, pods, devices).
type Quantity struct {
	Name  string
	Value int64
}

// Toleration of a taint.
type Toleration struct {
	Key, Value string
	Operator   TolerationOperator
	Effect     TaintEffect
}

// HostPort a container asks for.
type HostPort struct {
	HostIP   string
	Port     int32
	Protocol Protocol
}

// NodeSelectorTerm is one term of a required node affinity; its requirements are ANDed.
type NodeSelectorTerm struct {
	MatchExpressions []Requirement
	MatchFields      []Requirement
}

// Requirement is one node selector requirement.
type Requirement struct {
	Key      string
	Operator SelectorOperator
	Values   []string
}

// AppendPod appends the record of p to dst. It allocates only to grow dst.
func AppendPod(dst []byte, p *Pod) []byte {
	b := beginRecord(dst, TagPod, podFixed)
	b.putU32(podPriority, uint32(p.Priority))
	b.putU32(podFlags, boolBit(p.PreemptNever, podPreemptNever)|boolBit(p.LastFailureError, podLastFailureError)|
		boolBit(p.HasAddedAffinity, podHasAddedAffinity))
	b.putI64(podCreation, p.CreationTime)
	b.putI64(podQueued, p.QueuedTime)
	b.putI64(podInitialAttempt, p.InitialAttemptTime)
	b.putI64(podBackoffExpiry, p.BackoffExpiry)
	b.putU32(podAttempts, uint32(p.Attempts))
	b.putU32(podGroupMinCount, uint32(p.Group.MinCount))
	b.putU32(podGroupPriority, uint32(p.Group.Priority))
	b.putU32(podGroupMembers, uint32(p.Group.Members))
	b.putU32(podGroupDisrupt, uint32(p.Group.DisruptionMode))
	b.str(podUID, p.UID)
	b.str(podNamespace, p.Namespace)
	b.str(podName, p.Name)
	b.str(podNodeName, p.NodeName)
	b.str(podGroupName, p.Group.Name)
	b.appendKVs(b.start+podLabels, p.Labels)
	b.appendQuantities(b.start+podRequests, p.Requests)
	b.appendStrings(b.start+podUnschedPlugins, p.UnschedulablePlugins)
	b.appendStrings(b.start+podPendingPlugins, p.PendingPlugins)
	b.appendStrings(b.start+podGates, p.SchedulingGates)
	b.appendKVs(b.start+podNodeSelector, p.NodeSelector)
	at := b.list(podTolerations, len(p.Tolerations), tolerationSize)
	for i := range p.Tolerations {
		t := &p.Tolerations[i]
		e := at + i*tolerationSize
		b.strAt(e, t.Key)
		b.strAt(e+8, t.Value)
		b.elemU32(e+16, uint32(t.Operator))
		b.elemU32(e+20, uint32(t.Effect))
	}
	at = b.list(podHostPorts, len(p.HostPorts), hostPortSize)
	for i := range p.HostPorts {
		h := &p.HostPorts[i]
		e := at + i*hostPortSize
		b.strAt(e, h.HostIP)
		b.elemU32(e+8, uint32(h.Port))
		b.elemU32(e+12, uint32(h.Protocol))
	}
	b.appendTerms(b.start+podAffinity, p.RequiredAffinity)
	b.appendStrings(b.start+podClaims, p.Claims)
	b.appendStrings(b.start+podEphemeral, p.EphemeralClaims)
	b.appendStrings(b.start+podVolumeDrivers, p.VolumeDrivers)
	b.appendStrings(b.start+podResourceClaims, p.ResourceClaims)
	b.appendKVs(b.start+podNSLabels, p.NamespaceLabels)
	b.str(podOwnerKind, p.OwnerKind)
	b.appendPodTerms(b.start+podPodAffinity, p.PodAffinity)
	b.appendPodTerms(b.start+podPodAnti, p.PodAntiAffinity)
	b.appendPodTerms(b.start+podPrefAffinity, p.PreferredPodAffinity)
	b.appendPodTerms(b.start+podPrefAnti, p.PreferredPodAntiAffinity)
	at = b.list(podSpread, len(p.SpreadConstraints), spreadSize)
	for i := range p.SpreadConstraints {
		c := &p.SpreadConstraints[i]
		e := at + i*spreadSize
		b.appendRequirements(e, c.Selector)
		b.strAt(e+8, c.TopologyKey)
		b.appendStrings(e+16, c.MatchLabelKeys)
		b.elemU32(e+24, uint32(c.MaxSkew))
		b.elemU32(e+28, uint32(c.MinDomains))
		b.elemU32(e+32, uint32(c.WhenUnsatisfiable))
		b.elemU32(e+36, uint32(c.NodeAffinityPolicy))
		b.elemU32(e+40, uint32(c.NodeTaintsPolicy))
		b.elemU32(e+44, boolBit(c.NoSelector, spreadNoSelector))
	}
	b.appendTerms(b.start+podAddedAffinity, p.AddedAffinity)
	b.appendStrings(b.start+podFeatures, p.RequiredFeatures)
	return b.finish()
}

func (b *builder) appendTerms(ref int, ts []NodeSelectorTerm) {
	at := b.listAt(ref, len(ts), termSize)
	for i := range ts {
		e := at + i*termSize
		b.appendRequirements(e, ts[i].MatchExpressions)
		b.appendRequirements(e+8, ts[i].MatchFields)
	}
}

func (b *builder) appendPodTerms(ref int, ts []PodAffinityTerm) {
	at := b.listAt(ref, len(ts), podTermSize)
	for i := range ts {
		t := &ts[i]
		e := at + i*podTermSize
		b.appendRequirements(e, t.Selector)
		b.appendStrings(e+8, t.Namespaces)
		b.appendRequirements(e+16, t.NamespaceSelector)
		b.strAt(e+24, t.TopologyKey)
		b.elemU32(e+32, boolBit(t.NoSelector, termNoSelector)|boolBit(t.NoNamespaceSelector, termNoNSSelector))
		b.elemU32(e+36, uint32(t.Weight))
	}
}

func (b *builder) appendKVs(ref int, kvs []KV) {
	at := b.listAt(ref, len(kvs), kvSize)
	for i := range kvs {
		b.strAt(at+i*kvSize, kvs[i].Key)
		b.strAt(at+i*kvSize+8, kvs[i].Value)
	}
}

func (b *builder) appendQuantities(ref int, qs []Quantity) {
	at := b.listAt(ref, len(qs), quantitySize)
	for i := range qs {
		b.strAt(at+i*quantitySize, qs[i].Name)
		b.elemI64(at+i*quantitySize+8, qs[i].Value)
	}
}

func (b *builder) appendStrings(ref int, ss []string) {
	at := b.listAt(ref, len(ss), strSize)
	for i, s := range ss {
		b.strAt(at+i*strSize, s)
	}
}

func (b *builder) appendRequirements(ref int, rs []Requirement) {
	at := b.listAt(ref, len(rs), requirementSize)
	for i := range rs {
		e := at + i*requirementSize
		b.strAt(e, rs[i].Key)
		b.elemU32(e+8, uint32(rs[i].Operator))
		b.appendStrings(e+16, rs[i].Values)
	}
}

// PodView reads a pod record in place. Its strings alias the record's bytes:
// they are valid as long as those bytes are (in a guest, until the call
// returns); copy what you keep. Accessors never panic; a malformed field reads
// as empty, and [PodView.Decode] reports it.
type PodView struct{ r rec }

// ReadPod checks the record header at the start of b and returns a view.
func ReadPod(b []byte) (PodView, error) {
	r, err := readRecord(b, TagPod)
	return PodView{r}, err
}

// Bytes returns the record's bytes.
func (p PodView) Bytes() []byte { return p.r.b }

func (p PodView) UID() string               { return p.r.str(podUID) }
func (p PodView) Namespace() string         { return p.r.str(podNamespace) }
func (p PodView) Name() string              { return p.r.str(podName) }
func (p PodView) NodeName() string          { return p.r.str(podNodeName) }
func (p PodView) Priority() int32           { return p.r.i32(podPriority) }
func (p PodView) PreemptNever() bool        { return p.r.u32(podFlags)&podPreemptNever != 0 }
func (p PodView) LastFailureError() bool    { return p.r.u32(podFlags)&podLastFailureError != 0 }
func (p PodView) CreationTime() int64       { return p.r.i64(podCreation) }
func (p PodView) QueuedTime() int64         { return p.r.i64(podQueued) }
func (p PodView) InitialAttemptTime() int64 { return p.r.i64(podInitialAttempt) }
func (p PodView) BackoffExpiry() int64      { return p.r.i64(podBackoffExpiry) }
func (p PodView) Attempts() int32           { return p.r.i32(podAttempts) }
func (p PodView) GroupName() string         { return p.r.str(podGroupName) }
func (p PodView) GroupMinCount() int32      { return p.r.i32(podGroupMinCount) }
func (p PodView) GroupPriority() int32      { return p.r.i32(podGroupPriority) }
func (p PodView) GroupMembers() int32       { return p.r.i32(podGroupMembers) }
func (p PodView) GroupDisruption() DisruptionMode {
	return DisruptionMode(p.r.u32(podGroupDisrupt))
}

func (p PodView) Labels() KVList                { return KVList{p.r.list(podLabels, kvSize)} }
func (p PodView) Requests() QuantityList        { return QuantityList{p.r.list(podRequests, quantitySize)} }
func (p PodView) UnschedulablePlugins() StrList { return StrList{p.r.list(podUnschedPlugins, strSize)} }
func (p PodView) PendingPlugins() StrList       { return StrList{p.r.list(podPendingPlugins, strSize)} }
func (p PodView) SchedulingGates() StrList      { return StrList{p.r.list(podGates, strSize)} }
func (p PodView) NodeSelector() KVList          { return KVList{p.r.list(podNodeSelector, kvSize)} }
func (p PodView) Tolerations() TolerationList {
	return TolerationList{p.r.list(podTolerations, tolerationSize)}
}
func (p PodView) HostPorts() HostPortList    { return HostPortList{p.r.list(podHostPorts, hostPortSize)} }
func (p PodView) RequiredAffinity() TermList { return TermList{p.r.list(podAffinity, termSize)} }
func (p PodView) Claims() StrList            { return StrList{p.r.list(podClaims, strSize)} }
func (p PodView) EphemeralClaims() StrList   { return StrList{p.r.list(podEphemeral, strSize)} }
func (p PodView) VolumeDrivers() StrList     { return StrList{p.r.list(podVolumeDrivers, strSize)} }
func (p PodView) ResourceClaims() StrList    { return StrList{p.r.list(podResourceClaims, strSize)} }
func (p PodView) NamespaceLabels() KVList    { return KVList{p.r.list(podNSLabels, kvSize)} }
func (p PodView) OwnerKind() string          { return p.r.str(podOwnerKind) }

// TermsKnown reports whether the record carries the fields of ABI minor 4
// (pod affinity terms, spread constraints, added affinity, required
// features): a host of an older minor writes a shorter fixed part, whose
// absent lists read as empty, which does not mean the pod has none. A
// policy that would skip a pod for lack of a term must check this first.
func (p PodView) TermsKnown() bool { return p.r.has(podFeatures, refSize) }

func (p PodView) PodAffinity() PodTermList     { return PodTermList{p.r.list(podPodAffinity, podTermSize)} }
func (p PodView) PodAntiAffinity() PodTermList { return PodTermList{p.r.list(podPodAnti, podTermSize)} }
func (p PodView) PreferredPodAffinity() PodTermList {
	return PodTermList{p.r.list(podPrefAffinity, podTermSize)}
}
func (p PodView) PreferredPodAntiAffinity() PodTermList {
	return PodTermList{p.r.list(podPrefAnti, podTermSize)}
}
func (p PodView) SpreadConstraints() SpreadList { return SpreadList{p.r.list(podSpread, spreadSize)} }
func (p PodView) AddedAffinity() TermList       { return TermList{p.r.list(podAddedAffinity, termSize)} }
func (p PodView) HasAddedAffinity() bool        { return p.r.u32(podFlags)&podHasAddedAffinity != 0 }
func (p PodView) RequiredFeatures() StrList     { return StrList{p.r.list(podFeatures, strSize)} }

// UsesResourceClaim reports whether the pod's spec.resourceClaims resolve to
// the ResourceClaim called name in its namespace.
func (p PodView) UsesResourceClaim(namespace, name string) bool {
	return name != "" && namespace == p.Namespace() && p.ResourceClaims().Has(name)
}

// ResourceClaimsGenerated reports whether every claim of the pod's
// spec.resourceClaims has a name (none waits for its generated claim).
func (p PodView) ResourceClaimsGenerated() bool { return !p.ResourceClaims().Has("") }

// UsesClaim reports whether the pod's volumes use the claim called name in
// its namespace, through a persistentVolumeClaim or an ephemeral volume.
func (p PodView) UsesClaim(namespace, name string) bool {
	return namespace == p.Namespace() && (p.Claims().Has(name) || p.EphemeralClaims().Has(name))
}

// Decode copies the whole record into dst, reusing dst's slices, and reports
// the first malformed field. Strings are copied, so dst outlives the bytes.
func (p PodView) Decode(dst *Pod) error {
	r := p.r
	bud := newBudget(r)
	if err := checkRefs(r, TagPod, &bud, strRefs{
		{"uid", podUID}, {"namespace", podNamespace}, {"name", podName},
		{"nodeName", podNodeName}, {"group name", podGroupName}, {"owner kind", podOwnerKind},
	}); err != nil {
		return err
	}
	dst.UID = clone(p.UID())
	dst.Namespace = clone(p.Namespace())
	dst.Name = clone(p.Name())
	dst.NodeName = clone(p.NodeName())
	dst.OwnerKind = clone(p.OwnerKind())
	dst.Priority = p.Priority()
	dst.PreemptNever = p.PreemptNever()
	dst.CreationTime = p.CreationTime()
	dst.QueuedTime = p.QueuedTime()
	dst.InitialAttemptTime = p.InitialAttemptTime()
	dst.BackoffExpiry = p.BackoffExpiry()
	dst.Attempts = p.Attempts()
	dst.LastFailureError = p.LastFailureError()
	dst.Group = PodGroupRef{
		Name: clone(p.GroupName()), MinCount: p.GroupMinCount(), Priority: p.GroupPriority(),
		DisruptionMode: p.GroupDisruption(), Members: p.GroupMembers(),
	}
	var err error
	if dst.Labels, err = decodeKVs(r, &bud, podLabels, "labels", dst.Labels); err != nil {
		return err
	}
	if dst.Requests, err = decodeQuantities(r, &bud, podRequests, "requests", dst.Requests); err != nil {
		return err
	}
	if dst.UnschedulablePlugins, err = decodeStrs(r, &bud, podUnschedPlugins, "unschedulable plugins", dst.UnschedulablePlugins); err != nil {
		return err
	}
	if dst.PendingPlugins, err = decodeStrs(r, &bud, podPendingPlugins, "pending plugins", dst.PendingPlugins); err != nil {
		return err
	}
	if dst.SchedulingGates, err = decodeStrs(r, &bud, podGates, "scheduling gates", dst.SchedulingGates); err != nil {
		return err
	}
	if dst.NodeSelector, err = decodeKVs(r, &bud, podNodeSelector, "node selector", dst.NodeSelector); err != nil {
		return err
	}
	tl, err := checkedList(r, &bud, podTolerations, tolerationSize, "tolerations", 0, 8)
	if err != nil {
		return err
	}
	dst.Tolerations = dst.Tolerations[:0]
	for i := 0; i < tl.len(); i++ {
		dst.Tolerations = append(dst.Tolerations, Toleration{
			Key: clone(tl.str(i, 0)), Value: clone(tl.str(i, 8)),
			Operator: TolerationOperator(tl.u32(i, 16)), Effect: TaintEffect(tl.u32(i, 20)),
		})
	}
	hl, err := checkedList(r, &bud, podHostPorts, hostPortSize, "host ports", 0)
	if err != nil {
		return err
	}
	dst.HostPorts = dst.HostPorts[:0]
	for i := 0; i < hl.len(); i++ {
		dst.HostPorts = append(dst.HostPorts, HostPort{
			HostIP: clone(hl.str(i, 0)), Port: int32(hl.u32(i, 8)), Protocol: Protocol(hl.u32(i, 12)),
		})
	}
	if dst.RequiredAffinity, err = decodeTerms(r, &bud, podAffinity, "required affinity", dst.RequiredAffinity); err != nil {
		return err
	}
	if dst.Claims, err = decodeStrs(r, &bud, podClaims, "claims", dst.Claims); err != nil {
		return err
	}
	if dst.EphemeralClaims, err = decodeStrs(r, &bud, podEphemeral, "ephemeral claims", dst.EphemeralClaims); err != nil {
		return err
	}
	if dst.VolumeDrivers, err = decodeStrs(r, &bud, podVolumeDrivers, "volume drivers", dst.VolumeDrivers); err != nil {
		return err
	}
	if dst.ResourceClaims, err = decodeStrs(r, &bud, podResourceClaims, "resource claims", dst.ResourceClaims); err != nil {
		return err
	}
	if dst.NamespaceLabels, err = decodeKVs(r, &bud, podNSLabels, "namespace labels", dst.NamespaceLabels); err != nil {
		return err
	}
	for _, f := range [...]struct {
		off  uint32
		name string
		out  *[]PodAffinityTerm
	}{
		{podPodAffinity, "pod affinity", &dst.PodAffinity}, {podPodAnti, "pod anti-affinity", &dst.PodAntiAffinity},
		{podPrefAffinity, "preferred pod affinity", &dst.PreferredPodAffinity},
		{podPrefAnti, "preferred pod anti-affinity", &dst.PreferredPodAntiAffinity},
	} {
		if *f.out, err = decodePodTerms(r, &bud, f.off, f.name, *f.out); err != nil {
			return err
		}
	}
	sl, err := checkedList(r, &bud, podSpread, spreadSize, "spread constraints", 8)
	if err != nil {
		return err
	}
	dst.SpreadConstraints = dst.SpreadConstraints[:0]
	for i := 0; i < sl.len(); i++ {
		c := SpreadConstraint{
			TopologyKey: clone(sl.str(i, 8)), MaxSkew: int32(sl.u32(i, 24)), MinDomains: int32(sl.u32(i, 28)),
			WhenUnsatisfiable: SpreadAction(sl.u32(i, 32)), NodeAffinityPolicy: InclusionPolicy(sl.u32(i, 36)),
			NodeTaintsPolicy: InclusionPolicy(sl.u32(i, 40)), NoSelector: sl.u32(i, 44)&spreadNoSelector != 0,
		}
		if c.Selector, err = decodeRequirements(sl, i, 0, &bud, "spread constraints"); err != nil {
			return err
		}
		if c.MatchLabelKeys, err = decodeSubStrs(sl, i, 16, &bud, "spread constraints"); err != nil {
			return err
		}
		dst.SpreadConstraints = append(dst.SpreadConstraints, c)
	}
	if dst.AddedAffinity, err = decodeTerms(r, &bud, podAddedAffinity, "added affinity", dst.AddedAffinity); err != nil {
		return err
	}
	dst.HasAddedAffinity = p.HasAddedAffinity()
	if dst.RequiredFeatures, err = decodeStrs(r, &bud, podFeatures, "required features", dst.RequiredFeatures); err != nil {
		return err
	}
	return nil
}

// decodeTerms decodes the node selector terms at off.
func decodeTerms(r rec, bud *budget, off uint32, name string, dst []NodeSelectorTerm) ([]NodeSelectorTerm, error) {
	l, err := checkedList(r, bud, off, termSize, name)
	if err != nil {
		return dst, err
	}
	dst = dst[:0]
	for i := 0; i < l.len(); i++ {
		var t NodeSelectorTerm
		if t.MatchExpressions, err = decodeRequirements(l, i, 0, bud, name); err != nil {
			return dst, err
		}
		if t.MatchFields, err = decodeRequirements(l, i, 8, bud, name); err != nil {
			return dst, err
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// decodePodTerms decodes the pod affinity terms at off.
func decodePodTerms(r rec, bud *budget, off uint32, name string, dst []PodAffinityTerm) ([]PodAffinityTerm, error) {
	l, err := checkedList(r, bud, off, podTermSize, name, 24)
	if err != nil {
		return dst, err
	}
	dst = dst[:0]
	for i := 0; i < l.len(); i++ {
		flags := l.u32(i, 32)
		t := PodAffinityTerm{TopologyKey: clone(l.str(i, 24)), Weight: int32(l.u32(i, 36)),
			NoSelector: flags&termNoSelector != 0, NoNamespaceSelector: flags&termNoNSSelector != 0}
		if t.Selector, err = decodeRequirements(l, i, 0, bud, name); err != nil {
			return dst, err
		}
		if t.Namespaces, err = decodeSubStrs(l, i, 8, bud, name); err != nil {
			return dst, err
		}
		if t.NamespaceSelector, err = decodeRequirements(l, i, 16, bud, name); err != nil {
			return dst, err
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// decodeSubStrs decodes the string list referenced by field of element i.
func decodeSubStrs(l list, i int, field uint32, bud *budget, name string) ([]string, error) {
	tag := l.r.tag
	p, _ := l.at(i)
	if _, _, ok := l.r.refAt(p+field, strSize); !ok {
		return nil, &Error{Record: tag, Field: name, Problem: "string list out of bounds"}
	}
	sl := l.sub(i, field, strSize)
	if !bud.take(uint64(sl.n) * strSize) {
		return nil, overlapError(tag, name)
	}
	n, ok := sl.stringBytes(0)
	if !ok {
		return nil, &Error{Record: tag, Field: name, Problem: "string out of bounds"}
	}
	if !bud.take(n) {
		return nil, overlapError(tag, name)
	}
	var out []string
	for k := 0; k < sl.len(); k++ {
		out = append(out, clone(sl.str(k, 0)))
	}
	return out, nil
}

// StrList is a list of strings in a record.
type StrList struct{ l list }

func (s StrList) Len() int          { return s.l.len() }
func (s StrList) At(i int) string   { return s.l.str(i, 0) }
func (s StrList) Has(v string) bool { return s.Index(v) >= 0 }

// Index returns the position of v, or -1.
func (s StrList) Index(v string) int {
	for i := 0; i < s.Len(); i++ {
		if s.At(i) == v {
			return i
		}
	}
	return -1
}

// KVList is a list of key/value pairs (labels, node selector).
type KVList struct{ l list }

func (k KVList) Len() int                     { return k.l.len() }
func (k KVList) At(i int) (key, value string) { return k.l.str(i, 0), k.l.str(i, 8) }

// Get returns the value for key.
func (k KVList) Get(key string) (string, bool) {
	for i := 0; i < k.Len(); i++ {
		if k.l.str(i, 0) == key {
			return k.l.str(i, 8), true
		}
	}
	return "", false
}

// QuantityList is a list of resource amounts.
type QuantityList struct{ l list }

func (q QuantityList) Len() int                        { return q.l.len() }
func (q QuantityList) At(i int) (name string, v int64) { return q.l.str(i, 0), q.l.i64(i, 8) }

// Get returns the amount of resource name, 0 when absent.
func (q QuantityList) Get(name string) int64 {
	for i := 0; i < q.Len(); i++ {
		if q.l.str(i, 0) == name {
			return q.l.i64(i, 8)
		}
	}
	return 0
}

// TolerationList is a pod's tolerations.
type TolerationList struct{ l list }

func (t TolerationList) Len() int { return t.l.len() }
func (t TolerationList) At(i int) Toleration {
	return Toleration{Key: t.l.str(i, 0), Value: t.l.str(i, 8),
		Operator: TolerationOperator(t.l.u32(i, 16)), Effect: TaintEffect(t.l.u32(i, 20))}
}

// HostPortList is a pod's host ports.
type HostPortList struct{ l list }

func (h HostPortList) Len() int { return h.l.len() }
func (h HostPortList) At(i int) HostPort {
	return HostPort{HostIP: h.l.str(i, 0), Port: int32(h.l.u32(i, 8)), Protocol: Protocol(h.l.u32(i, 12))}
}

// TermList is the terms of a required node affinity.
type TermList struct{ l list }

func (t TermList) Len() int { return t.l.len() }
func (t TermList) MatchExpressions(i int) RequirementList {
	return RequirementList{t.l.sub(i, 0, requirementSize)}
}
func (t TermList) MatchFields(i int) RequirementList {
	return RequirementList{t.l.sub(i, 8, requirementSize)}
}

// PodTermList is a list of pod affinity or anti-affinity terms.
type PodTermList struct{ l list }

func (t PodTermList) Len() int { return t.l.len() }

// Selector is term i's labelSelector; NoSelector reports a nil one.
func (t PodTermList) Selector(i int) RequirementList {
	return RequirementList{t.l.sub(i, 0, requirementSize)}
}
func (t PodTermList) NoSelector(i int) bool    { return t.l.u32(i, 32)&termNoSelector != 0 }
func (t PodTermList) Namespaces(i int) StrList { return StrList{t.l.sub(i, 8, strSize)} }
func (t PodTermList) NamespaceSelector(i int) RequirementList {
	return RequirementList{t.l.sub(i, 16, requirementSize)}
}
func (t PodTermList) NoNamespaceSelector(i int) bool { return t.l.u32(i, 32)&termNoNSSelector != 0 }
func (t PodTermList) TopologyKey(i int) string       { return t.l.str(i, 24) }
func (t PodTermList) Weight(i int) int32             { return int32(t.l.u32(i, 36)) }

// SpreadList is a pod's topology spread constraints.
type SpreadList struct{ l list }

func (s SpreadList) Len() int { return s.l.len() }

// Selector is constraint i's labelSelector with matchLabelKeys merged;
// NoSelector reports a nil labelSelector.
func (s SpreadList) Selector(i int) RequirementList {
	return RequirementList{s.l.sub(i, 0, requirementSize)}
}
func (s SpreadList) NoSelector(i int) bool        { return s.l.u32(i, 44)&spreadNoSelector != 0 }
func (s SpreadList) TopologyKey(i int) string     { return s.l.str(i, 8) }
func (s SpreadList) MatchLabelKeys(i int) StrList { return StrList{s.l.sub(i, 16, strSize)} }
func (s SpreadList) MaxSkew(i int) int32          { return int32(s.l.u32(i, 24)) }
func (s SpreadList) MinDomains(i int) int32       { return int32(s.l.u32(i, 28)) }
func (s SpreadList) WhenUnsatisfiable(i int) SpreadAction {
	return SpreadAction(s.l.u32(i, 32))
}
func (s SpreadList) NodeAffinityPolicy(i int) InclusionPolicy { return InclusionPolicy(s.l.u32(i, 36)) }
func (s SpreadList) NodeTaintsPolicy(i int) InclusionPolicy   { return InclusionPolicy(s.l.u32(i, 40)) }

// RequirementList is the requirements of one term.
type RequirementList struct{ l list }

func (r RequirementList) Len() int                        { return r.l.len() }
func (r RequirementList) Key(i int) string                { return r.l.str(i, 0) }
func (r RequirementList) Operator(i int) SelectorOperator { return SelectorOperator(r.l.u32(i, 8)) }
func (r RequirementList) Values(i int) StrList            { return StrList{r.l.sub(i, 16, strSize)} }

type strRefs []struct {
	name string
	off  uint32
}

// budget bounds the bytes one decoder copies or walks in a record: every
// string, list element and nested record it reads is charged its size on the
// wire, and together they may not exceed the record's size. The Append
// functions never let two references share bytes, so their records always
// fit. A crafted record whose references overlap (every affinity term naming
// one requirement list, every requirement one value list, every value one long
// string) would otherwise make a 4 KiB record decode into hundreds of MiB.
type budget uint64

func newBudget(r rec) budget { return budget(len(r.b)) }

// take charges n bytes and reports whether they were left.
func (b *budget) take(n uint64) bool {
	if n > uint64(*b) {
		return false
	}
	*b -= budget(n)
	return true
}

func overlapError(tag Tag, field string) error {
	return &Error{Record: tag, Field: field, Problem: "references overlap: together they span more bytes than the record holds"}
}

func checkRefs(r rec, tag Tag, bud *budget, refs strRefs) error {
	for _, f := range refs {
		if !r.has(f.off, refSize) {
			continue
		}
		s, ok := r.strAt(f.off)
		if !ok {
			return &Error{Record: tag, Field: f.name, Problem: "string out of bounds"}
		}
		if !bud.take(uint64(len(s))) {
			return overlapError(tag, f.name)
		}
	}
	return nil
}

// checkedList returns the list at off after checking its bounds and the
// string refs at the given element fields, and charges their bytes to bud.
func checkedList(r rec, bud *budget, off, elem uint32, name string, strFields ...uint32) (list, error) {
	if r.has(off, refSize) {
		if _, _, ok := r.refAt(off, elem); !ok {
			return list{}, &Error{Record: r.tag, Field: name, Problem: "list out of bounds"}
		}
	}
	l := r.list(off, elem)
	if !bud.take(uint64(l.n) * uint64(elem)) {
		return list{}, overlapError(r.tag, name)
	}
	n, ok := l.stringBytes(strFields...)
	if !ok {
		return list{}, &Error{Record: r.tag, Field: name, Problem: "string out of bounds"}
	}
	if !bud.take(n) {
		return list{}, overlapError(r.tag, name)
	}
	return l, nil
}

func decodeKVs(r rec, bud *budget, off uint32, name string, dst []KV) ([]KV, error) {
	l, err := checkedList(r, bud, off, kvSize, name, 0, 8)
	if err != nil {
		return dst, err
	}
	dst = dst[:0]
	for i := 0; i < l.len(); i++ {
		dst = append(dst, KV{Key: clone(l.str(i, 0)), Value: clone(l.str(i, 8))})
	}
	return dst, nil
}

func decodeQuantities(r rec, bud *budget, off uint32, name string, dst []Quantity) ([]Quantity, error) {
	l, err := checkedList(r, bud, off, quantitySize, name, 0)
	if err != nil {
		return dst, err
	}
	dst = dst[:0]
	for i := 0; i < l.len(); i++ {
		dst = append(dst, Quantity{Name: clone(l.str(i, 0)), Value: l.i64(i, 8)})
	}
	return dst, nil
}

func decodeStrs(r rec, bud *budget, off uint32, name string, dst []string) ([]string, error) {
	l, err := checkedList(r, bud, off, strSize, name, 0)
	if err != nil {
		return dst, err
	}
	dst = dst[:0]
	for i := 0; i < l.len(); i++ {
		dst = append(dst, clone(l.str(i, 0)))
	}
	return dst, nil
}

// decodeRequirements decodes the requirement list referenced by field of
// term i, charging what it reads to bud.
func decodeRequirements(terms list, i int, field uint32, bud *budget, name string) ([]Requirement, error) {
	tag := terms.r.tag
	p, _ := terms.at(i)
	if _, _, ok := terms.r.refAt(p+field, requirementSize); !ok {
		return nil, &Error{Record: tag, Field: name, Problem: "requirement list out of bounds"}
	}
	l := terms.sub(i, field, requirementSize)
	if !bud.take(uint64(l.n) * requirementSize) {
		return nil, overlapError(tag, name)
	}
	n, ok := l.stringBytes(0)
	if !ok {
		return nil, &Error{Record: tag, Field: name, Problem: "requirement key out of bounds"}
	}
	if !bud.take(n) {
		return nil, overlapError(tag, name)
	}
	var out []Requirement
	for j := 0; j < l.len(); j++ {
		q, _ := l.at(j)
		if _, _, ok := l.r.refAt(q+16, strSize); !ok {
			return nil, &Error{Record: tag, Field: name, Problem: "requirement values out of bounds"}
		}
		vl := l.sub(j, 16, strSize)
		if !bud.take(uint64(vl.n) * strSize) {
			return nil, overlapError(tag, name)
		}
		n, ok := vl.stringBytes(0)
		if !ok {
			return nil, &Error{Record: tag, Field: name, Problem: "requirement value out of bounds"}
		}
		if !bud.take(n) {
			return nil, overlapError(tag, name)
		}
		req := Requirement{Key: clone(l.str(j, 0)), Operator: SelectorOperator(l.u32(j, 8))}
		for k := 0; k < vl.len(); k++ {
			req.Values = append(req.Values, clone(vl.str(k, 0)))
		}
		out = append(out, req)
	}
	return out, nil
}

// clone copies s out of the record's bytes.
func clone(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}
