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
	podFixed          = 232

	podPreemptNever     = 1 << 0
	podLastFailureError = 1 << 1

	kvSize          = 16
	quantitySize    = 16
	strSize         = 8
	tolerationSize  = 24
	hostPortSize    = 16
	termSize        = 16
	requirementSize = 24
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
	b.putU32(podFlags, boolBit(p.PreemptNever, podPreemptNever)|boolBit(p.LastFailureError, podLastFailureError))
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
	at = b.list(podAffinity, len(p.RequiredAffinity), termSize)
	for i := range p.RequiredAffinity {
		t := &p.RequiredAffinity[i]
		e := at + i*termSize
		b.appendRequirements(e, t.MatchExpressions)
		b.appendRequirements(e+8, t.MatchFields)
	}
	b.appendStrings(b.start+podClaims, p.Claims)
	b.appendStrings(b.start+podEphemeral, p.EphemeralClaims)
	b.appendStrings(b.start+podVolumeDrivers, p.VolumeDrivers)
	b.appendStrings(b.start+podResourceClaims, p.ResourceClaims)
	b.appendKVs(b.start+podNSLabels, p.NamespaceLabels)
	b.str(podOwnerKind, p.OwnerKind)
	return b.finish()
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
	al, err := checkedList(r, &bud, podAffinity, termSize, "required affinity")
	if err != nil {
		return err
	}
	dst.RequiredAffinity = dst.RequiredAffinity[:0]
	for i := 0; i < al.len(); i++ {
		var t NodeSelectorTerm
		if t.MatchExpressions, err = decodeRequirements(al, i, 0, &bud, "required affinity"); err != nil {
			return err
		}
		if t.MatchFields, err = decodeRequirements(al, i, 8, &bud, "required affinity"); err != nil {
			return err
		}
		dst.RequiredAffinity = append(dst.RequiredAffinity, t)
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
	return nil
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
