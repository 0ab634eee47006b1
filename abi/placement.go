package abi

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// Names of the placement plugins: how the filter and score slots appear in a
// profile's plugin lists, in a pod's unschedulable plugins and in its
// FailedScheduling message.
const (
	PluginWasmFilter = "wasmsched.io/WasmFilter"
	PluginWasmScore  = "wasmsched.io/WasmScore"
)

// The placement slots cross the boundary once per pod and extension point,
// whatever the number of nodes, and send each node only when it changed:
//
//   - [ExportNodes] hands the guest the node records its instance lacks (new
//     nodes, nodes whose snapshot generation moved since it last saw them),
//     each under a host-assigned id; the guest keeps them in its memory.
//   - [ExportFilter] and [ExportScore] then receive one [Placement]: the pod
//     record and the ids of the nodes to judge. A node that is not the
//     snapshot's (preemption's dry run of a node without its victims) is
//     sent whole in the same record and not kept.
//
// A new instance (the first, or one that replaced a discarded or recycled
// instance) starts empty and is sent every node it is asked about.

// Placement record layout:
//
//	 8 u32 flags (0)  12 u32 reserved
//	16 pod (nested record)
//	24 ids [u32]: nodes the guest holds, by the ids [NodeSync] gave them
//	32 nodes [nested node record]: nodes sent whole; they follow the ids
const (
	placementPod    = 16
	placementIDs    = 24
	placementNodes  = 32
	placementFixed  = 40
	placementIDSize = 4
)

// PlacementLen is the size of the record AppendPlacement appends.
func PlacementLen(pod []byte, ids []uint32, inline [][]byte) int {
	n := placementFixed + len(pod) + len(ids)*placementIDSize + len(inline)*nestedSize
	for _, b := range inline {
		n += len(b)
	}
	return n
}

// AppendPlacement appends a placement record for the pod record pod, the
// nodes held by the guest under ids and the node records inline. Appending
// to dst[:0] of a buffer of PlacementLen bytes does not allocate.
func AppendPlacement(dst []byte, pod []byte, ids []uint32, inline [][]byte) []byte {
	b := beginRecord(dst, TagPlacement, placementFixed)
	b.bytesAt(b.start+placementPod, pod)
	if len(ids) > 0 {
		at := b.list(placementIDs, len(ids), placementIDSize)
		for i, id := range ids {
			b.elemU32(at+i*placementIDSize, id)
		}
	}
	at := b.list(placementNodes, len(inline), nestedSize)
	for i, n := range inline {
		b.bytesAt(at+i*nestedSize, n)
	}
	return b.finish()
}

// PlacementView reads a placement record in place.
type PlacementView struct {
	r      rec
	ids    list
	inline list
}

// ReadPlacement checks the record header and its lists.
func ReadPlacement(b []byte) (PlacementView, error) {
	r, err := readRecord(b, TagPlacement)
	if err != nil {
		return PlacementView{}, err
	}
	for _, f := range [...]struct {
		off  uint32
		elem uint32
		name string
	}{{placementIDs, placementIDSize, "ids"}, {placementNodes, nestedSize, "nodes"}} {
		if r.has(f.off, refSize) {
			if _, _, ok := r.refAt(f.off, f.elem); !ok {
				return PlacementView{}, &Error{Record: TagPlacement, Field: f.name, Problem: "list out of bounds"}
			}
		}
	}
	return PlacementView{r: r, ids: r.list(placementIDs, placementIDSize), inline: r.list(placementNodes, nestedSize)}, nil
}

// Pod returns the pod to place.
func (p PlacementView) Pod() (PodView, error) {
	if !p.r.has(placementPod, refSize) {
		return PodView{}, &Error{Record: TagPlacement, Field: "pod", Problem: "missing or out of bounds"}
	}
	b, ok := p.r.bytesAt(placementPod)
	if !ok || len(b) == 0 {
		return PodView{}, &Error{Record: TagPlacement, Field: "pod", Problem: "missing or out of bounds"}
	}
	return ReadPod(b)
}

// Len is the number of nodes: the ids, then the inline nodes.
func (p PlacementView) Len() int { return p.ids.len() + p.inline.len() }

// NumIDs is the number of nodes named by id; nodes NumIDs() to Len()-1 are
// inline.
func (p PlacementView) NumIDs() int { return p.ids.len() }

// ID returns the id of node i < NumIDs().
func (p PlacementView) ID(i int) uint32 { return p.ids.u32(i, 0) }

// Inline returns node i, NumIDs() <= i < Len(), sent whole.
func (p PlacementView) Inline(i int) (NodeView, error) {
	at, ok := p.inline.at(i - p.ids.len())
	if !ok {
		return NodeView{}, &Error{Record: TagPlacement, Field: "nodes", Problem: "index " + strconv.Itoa(i) + " out of range"}
	}
	b, ok := p.r.bytesAt(at)
	if !ok {
		return NodeView{}, &Error{Record: TagPlacement, Field: "nodes", Problem: "node " + strconv.Itoa(i) + " out of bounds"}
	}
	return ReadNode(b)
}

// NodeSync record layout:
//
//	 8 u32 flags (syncReset)  12 u32 reserved
//	16 upserts [upsert]  24 removed [u32]
//
//	upsert 16: u32 id, u32 reserved, node (nested record)
//
// With syncReset the guest forgets every node before applying the upserts.
const (
	syncFlags   = 8
	syncUpserts = 16
	syncRemoved = 24
	syncFixed   = 32
	upsertSize  = 16

	syncReset = 1 << 0
)

// NodeUpsert is one node record for the guest to keep under ID, replacing
// what it held there.
type NodeUpsert struct {
	ID   uint32
	Node []byte
}

// NodeSyncLen is the size of the record AppendNodeSync appends.
func NodeSyncLen(upserts []NodeUpsert, removed []uint32) int {
	n := syncFixed + len(upserts)*upsertSize + len(removed)*4
	for i := range upserts {
		n += len(upserts[i].Node)
	}
	return n
}

// AppendNodeSync appends a node sync record. Appending to dst[:0] of a
// buffer of NodeSyncLen bytes does not allocate.
func AppendNodeSync(dst []byte, reset bool, upserts []NodeUpsert, removed []uint32) []byte {
	b := beginRecord(dst, TagNodeSync, syncFixed)
	b.putU32(syncFlags, boolBit(reset, syncReset))
	at := b.list(syncUpserts, len(upserts), upsertSize)
	for i := range upserts {
		e := at + i*upsertSize
		b.elemU32(e, upserts[i].ID)
		b.bytesAt(e+8, upserts[i].Node)
	}
	at = b.list(syncRemoved, len(removed), 4)
	for i, id := range removed {
		b.elemU32(at+i*4, id)
	}
	return b.finish()
}

// NodeSyncView reads a node sync record in place.
type NodeSyncView struct {
	r       rec
	upserts list
	removed list
}

// ReadNodeSync checks the record header and its lists.
func ReadNodeSync(b []byte) (NodeSyncView, error) {
	r, err := readRecord(b, TagNodeSync)
	if err != nil {
		return NodeSyncView{}, err
	}
	for _, f := range [...]struct {
		off  uint32
		elem uint32
		name string
	}{{syncUpserts, upsertSize, "upserts"}, {syncRemoved, 4, "removed"}} {
		if r.has(f.off, refSize) {
			if _, _, ok := r.refAt(f.off, f.elem); !ok {
				return NodeSyncView{}, &Error{Record: TagNodeSync, Field: f.name, Problem: "list out of bounds"}
			}
		}
	}
	return NodeSyncView{r: r, upserts: r.list(syncUpserts, upsertSize), removed: r.list(syncRemoved, 4)}, nil
}

// Reset reports whether the guest must forget every node first.
func (s NodeSyncView) Reset() bool { return s.r.u32(syncFlags)&syncReset != 0 }

// NumUpserts is the number of node records to keep.
func (s NodeSyncView) NumUpserts() int { return s.upserts.len() }

// Upsert returns upsert i: the id and the node record's bytes (which alias
// the input: a guest that keeps them copies them).
func (s NodeSyncView) Upsert(i int) (uint32, []byte, error) {
	at, ok := s.upserts.at(i)
	if !ok {
		return 0, nil, &Error{Record: TagNodeSync, Field: "upserts", Problem: "index " + strconv.Itoa(i) + " out of range"}
	}
	b, ok := s.r.bytesAt(at + 8)
	if !ok || len(b) == 0 {
		return 0, nil, &Error{Record: TagNodeSync, Field: "upserts", Problem: "node " + strconv.Itoa(i) + " missing or out of bounds"}
	}
	if _, err := ReadNode(b); err != nil {
		return 0, nil, err
	}
	return s.upserts.u32(i, 0), b, nil
}

// NumRemoved is the number of ids to forget.
func (s NodeSyncView) NumRemoved() int { return s.removed.len() }

// Removed returns removed id i.
func (s NodeSyncView) Removed(i int) uint32 { return s.removed.u32(i, 0) }

// FilterCode is a filter module's verdict on one node.
type FilterCode uint8

const (
	// FilterPass: the pod may run on the node.
	FilterPass FilterCode = 0
	// FilterUnschedulable: not now; removing pods from the node might help
	// (preemption may try it).
	FilterUnschedulable FilterCode = 1
	// FilterUnresolvable: never, whatever is removed from the node
	// (upstream's UnschedulableAndUnresolvable).
	FilterUnresolvable FilterCode = 2
)

func (c FilterCode) String() string {
	switch c {
	case FilterPass:
		return "Pass"
	case FilterUnschedulable:
		return "Unschedulable"
	case FilterUnresolvable:
		return "UnschedulableAndUnresolvable"
	}
	return "FilterCode(" + strconv.Itoa(int(c)) + ")"
}

// Verdicts record layout (the filter's output):
//
//	 8 u32 reserved  12 u32 reserved
//	16 verdicts [u32]  24 reasons [str]
//
// A verdict is a [FilterCode] in its low 8 bits and, for a rejection, the
// index of its reason in reasons above them. Reasons are written once and
// shared by the nodes rejected for the same reason; the host counts them in
// the pod's FailedScheduling message ("3 node(s) are reserved for pool gpu").
const (
	verdictsList    = 16
	verdictsReasons = 24
	verdictsFixed   = 32

	// MaxReasons bounds the distinct reasons of one verdicts record.
	MaxReasons = 1 << 16
)

// Verdict packs a node's verdict: code, and the index of its reason.
func Verdict(code FilterCode, reason int) uint32 { return uint32(code) | uint32(reason)<<8 }

// AppendVerdicts appends a verdicts record to dst.
func AppendVerdicts(dst []byte, verdicts []uint32, reasons []string) []byte {
	b := beginRecord(dst, TagVerdicts, verdictsFixed)
	at := b.list(verdictsList, len(verdicts), 4)
	for i, v := range verdicts {
		b.elemU32(at+i*4, v)
	}
	at = b.list(verdictsReasons, len(reasons), strSize)
	for i, r := range reasons {
		b.strAt(at+i*strSize, r)
	}
	return b.finish()
}

// VerdictsView reads a checked verdicts record in place.
type VerdictsView struct {
	r        rec
	verdicts list
	reasons  list
}

// ReadVerdicts checks a verdicts record for a batch of n nodes: n verdicts,
// each a known code, each rejection with a reason that exists, each reason
// non-empty UTF-8 text of at most MaxReasonLen bytes.
func ReadVerdicts(b []byte, n int) (VerdictsView, error) {
	r, err := readRecord(b, TagVerdicts)
	if err != nil {
		return VerdictsView{}, err
	}
	bud := newBudget(r)
	vl, err := checkedList(r, &bud, verdictsList, 4, "verdicts")
	if err != nil {
		return VerdictsView{}, err
	}
	if vl.len() != n {
		return VerdictsView{}, &Error{Record: TagVerdicts, Field: "verdicts", Problem: strconv.Itoa(vl.len()) + " verdicts for " + strconv.Itoa(n) + " nodes"}
	}
	rl, err := checkedList(r, &bud, verdictsReasons, strSize, "reasons", 0)
	if err != nil {
		return VerdictsView{}, err
	}
	if rl.len() > MaxReasons {
		return VerdictsView{}, &Error{Record: TagVerdicts, Field: "reasons", Problem: strconv.Itoa(rl.len()) + " reasons, at most " + strconv.Itoa(MaxReasons) + " allowed"}
	}
	for i := range rl.len() {
		// The field name is built on failure only: the host reads a
		// verdicts record on every filter call.
		if s := rl.str(i, 0); s == "" || len(s) > MaxReasonLen || !utf8.ValidString(s) {
			return VerdictsView{}, reasonError(i, s)
		}
	}
	for i := range n {
		v := vl.u32(i, 0)
		code, reason := FilterCode(v&0xff), int(v>>8)
		switch {
		case code > FilterUnresolvable:
			return VerdictsView{}, &Error{Record: TagVerdicts, Field: "verdict " + strconv.Itoa(i), Problem: "unknown code " + strconv.Itoa(int(code))}
		case code != FilterPass && reason >= rl.len():
			return VerdictsView{}, &Error{Record: TagVerdicts, Field: "verdict " + strconv.Itoa(i), Problem: "reason " + strconv.Itoa(reason) + " of " + strconv.Itoa(rl.len())}
		}
	}
	return VerdictsView{r: r, verdicts: vl, reasons: rl}, nil
}

// reasonError says why reason i, s, is refused.
//
//go:noinline
func reasonError(i int, s string) error {
	field := "reason " + strconv.Itoa(i)
	if s == "" {
		return &Error{Record: TagVerdicts, Field: field, Problem: "empty"}
	}
	return checkText(TagVerdicts, field, s)
}

// Len is the number of verdicts.
func (v VerdictsView) Len() int { return v.verdicts.len() }

// Code returns node i's verdict.
func (v VerdictsView) Code(i int) FilterCode { return FilterCode(v.verdicts.u32(i, 0) & 0xff) }

// ReasonIndex returns the index of node i's reason (meaningless for a pass).
func (v VerdictsView) ReasonIndex(i int) int { return int(v.verdicts.u32(i, 0) >> 8) }

// NumReasons is the number of distinct reasons.
func (v VerdictsView) NumReasons() int { return v.reasons.len() }

// Reason returns reason j (aliasing the record).
func (v VerdictsView) Reason(j int) string { return v.reasons.str(j, 0) }

// AppendScores appends the score output: one little-endian i64 per node.
func AppendScores(dst []byte, scores []int64) []byte {
	for _, s := range scores {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s))
	}
	return dst
}

// DecodeScores reads the score output of a batch of len(out) nodes into out.
func DecodeScores(b []byte, out []int64) error {
	if len(b) != 8*len(out) {
		return &Error{Field: "scores", Problem: strconv.Itoa(len(b)) + " bytes for " + strconv.Itoa(len(out)) + " nodes, want 8 per node"}
	}
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

// PlacementOptions record layout:
//
//	 8 u32 flags (optScoreNormalized)  12 u32 reserved
//	16 filter events [event]
//
//	event 8: u32 resource, u32 actions
const (
	optFlags   = 8
	optEvents  = 16
	optFixed   = 24
	optEvtSize = 8

	optScoreNormalized = 1 << 0
)

// PlacementOptions is what a placement module says about itself, once, when
// it is loaded.
type PlacementOptions struct {
	// ScoreNormalized: the module's scores are already in [0, MaxNodeScore]
	// and the host uses them as they are; otherwise the host scales them so
	// that the highest becomes MaxNodeScore (and negative ones count as 0).
	ScoreNormalized bool
	// FilterEvents are the events after which a pod the filter rejected may
	// fit: the host moves such pods back to the active queue on them. Empty:
	// [DefaultFilterEvents].
	FilterEvents []FilterEvent
}

// FilterEvent is one kind of event a filter's rejections may depend on.
type FilterEvent struct {
	Resource EventResource
	Actions  ActionType
}

// MaxNodeScore is the highest score a normalised score gives a node
// (upstream's framework.MaxNodeScore).
const MaxNodeScore = 100

// DefaultFilterEvents are the events that requeue pods a filter module
// rejected when the module names none: a node added, a node's labels,
// taints or allocatable changed, a pod deleted from a node (its resources
// freed).
func DefaultFilterEvents() []FilterEvent {
	return []FilterEvent{
		{Resource: ResourceNode, Actions: ActionAdd | ActionUpdateNodeLabel | ActionUpdateNodeTaint | ActionUpdateNodeAllocatable},
		{Resource: ResourcePod, Actions: ActionDelete},
	}
}

// AppendPlacementOptions appends the record of o to dst.
func AppendPlacementOptions(dst []byte, o *PlacementOptions) []byte {
	b := beginRecord(dst, TagPlacementOptions, optFixed)
	b.putU32(optFlags, boolBit(o.ScoreNormalized, optScoreNormalized))
	at := b.list(optEvents, len(o.FilterEvents), optEvtSize)
	for i, e := range o.FilterEvents {
		b.elemU32(at+i*optEvtSize, uint32(e.Resource))
		b.elemU32(at+i*optEvtSize+4, uint32(e.Actions))
	}
	return b.finish()
}

// DecodePlacementOptions checks a placement options record and returns a
// copy.
func DecodePlacementOptions(b []byte) (PlacementOptions, error) {
	r, err := readRecord(b, TagPlacementOptions)
	if err != nil {
		return PlacementOptions{}, err
	}
	bud := newBudget(r)
	l, err := checkedList(r, &bud, optEvents, optEvtSize, "filter events")
	if err != nil {
		return PlacementOptions{}, err
	}
	if l.len() > MaxRegistrations {
		return PlacementOptions{}, &Error{Record: TagPlacementOptions, Field: "filter events", Problem: strconv.Itoa(l.len()) + " events, at most " + strconv.Itoa(MaxRegistrations) + " allowed"}
	}
	o := PlacementOptions{ScoreNormalized: r.u32(optFlags)&optScoreNormalized != 0}
	for i := range l.len() {
		e := FilterEvent{Resource: EventResource(l.u32(i, 0)), Actions: ActionType(l.u32(i, 4))}
		field := "filter event " + strconv.Itoa(i)
		switch {
		case e.Resource >= ResourcePod && e.Resource <= ResourcePodGroup, e.Resource.IsStorage(), e.Resource.IsDRA(), e.Resource == ResourceWildcard:
		default:
			return PlacementOptions{}, &Error{Record: TagPlacementOptions, Field: field, Problem: "unknown resource " + e.Resource.String()}
		}
		if e.Actions == 0 || e.Actions&^ActionAll != 0 {
			return PlacementOptions{}, &Error{Record: TagPlacementOptions, Field: field, Problem: "invalid actions " + e.Actions.String()}
		}
		o.FilterEvents = append(o.FilterEvents, e)
	}
	return o, nil
}
