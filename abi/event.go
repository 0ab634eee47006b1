package abi

import "strconv"

// Event record layout:
//
//	 8 u32 resource  12 u32 action
//	16 old object (nested record)  24 new object (nested record)
//
// The objects are Pod records for pod resources, Node records for nodes,
// PodGroup records for pod groups and StorageObject records for the storage
// resources (minor 1) and the DRA resources (minor 2); old is absent on Add,
// new on Delete.
const (
	eventResource = 8
	eventAction   = 12
	eventOld      = 16
	eventNew      = 24
	eventFixed    = 32
)

// Event is a cluster event as the QueueingHint slot sees it.
type Event struct {
	Resource EventResource
	Action   ActionType
	// Old and New are encoded object records (AppendPod, AppendNode,
	// AppendPodGroup), empty when absent.
	Old, New []byte
}

// AppendEvent appends the record of e to dst.
func AppendEvent(dst []byte, e *Event) []byte {
	b := beginRecord(dst, TagEvent, eventFixed)
	b.putU32(eventResource, uint32(e.Resource))
	b.putU32(eventAction, uint32(e.Action))
	b.bytesAt(b.start+eventOld, e.Old)
	b.bytesAt(b.start+eventNew, e.New)
	return b.finish()
}

// EventView reads an event record in place.
type EventView struct{ r rec }

// ReadEvent checks the record header at the start of b and returns a view.
func ReadEvent(b []byte) (EventView, error) {
	r, err := readRecord(b, TagEvent)
	return EventView{r}, err
}

func (e EventView) Bytes() []byte           { return e.r.b }
func (e EventView) Resource() EventResource { return EventResource(e.r.u32(eventResource)) }
func (e EventView) Action() ActionType      { return ActionType(e.r.u32(eventAction)) }

// OldBytes and NewBytes return the nested object records, nil when absent.
func (e EventView) OldBytes() []byte { return e.nested(eventOld) }
func (e EventView) NewBytes() []byte { return e.nested(eventNew) }

func (e EventView) nested(off uint32) []byte {
	if !e.r.has(off, refSize) {
		return nil
	}
	b, _ := e.r.bytesAt(off)
	return b
}

// OldPod, NewPod, OldNode, ... read the nested objects; ok is false when the
// object is absent or is not of that kind.
func (e EventView) OldPod() (PodView, bool)           { return podOf(e.OldBytes()) }
func (e EventView) NewPod() (PodView, bool)           { return podOf(e.NewBytes()) }
func (e EventView) OldNode() (NodeView, bool)         { return nodeOf(e.OldBytes()) }
func (e EventView) NewNode() (NodeView, bool)         { return nodeOf(e.NewBytes()) }
func (e EventView) OldPodGroup() (PodGroupView, bool) { return groupOf(e.OldBytes()) }
func (e EventView) NewPodGroup() (PodGroupView, bool) { return groupOf(e.NewBytes()) }
func (e EventView) OldStorage() (StorageView, bool)   { return storageOf(e.OldBytes()) }
func (e EventView) NewStorage() (StorageView, bool)   { return storageOf(e.NewBytes()) }

// ChangeFault says why the objects of an event cannot be read as a change
// (PodChange, NodeChange, StorageChange).
type ChangeFault uint8

const (
	// ChangeOK: the objects there are readable, and one at least is there.
	ChangeOK ChangeFault = iota
	// ChangeBadNew: the new object is there but is not a readable record
	// of the kind asked for.
	ChangeBadNew
	// ChangeBadOld: the old object is there but is not readable.
	ChangeBadOld
	// ChangeEmpty: the event carries neither object.
	ChangeEmpty
)

// PodChange returns the pods of a pod event that may be an Add (no old pod),
// an update (both) or a Delete (no new pod), as upstream tells them apart by
// nil objects. An object that is there but unreadable, or an event with
// neither, is a fault; the views are then not to be read.
func (e EventView) PodChange() (old PodView, hasOld bool, pod PodView, hasNew bool, fault ChangeFault) {
	return change(e, podOf)
}

// NodeChange is PodChange for a node event.
func (e EventView) NodeChange() (old NodeView, hasOld bool, node NodeView, hasNew bool, fault ChangeFault) {
	return change(e, nodeOf)
}

// StorageChange is PodChange for a storage or DRA event.
func (e EventView) StorageChange() (old StorageView, hasOld bool, obj StorageView, hasNew bool, fault ChangeFault) {
	return change(e, storageOf)
}

// change reads an event's objects with of, the reader of their kind: the
// one rule PodChange, NodeChange and StorageChange share.
func change[V any](e EventView, of func([]byte) (V, bool)) (old V, hasOld bool, obj V, hasNew bool, fault ChangeFault) {
	if b := e.NewBytes(); b != nil {
		if obj, hasNew = of(b); !hasNew {
			return old, false, obj, false, ChangeBadNew
		}
	}
	if b := e.OldBytes(); b != nil {
		if old, hasOld = of(b); !hasOld {
			return old, false, obj, false, ChangeBadOld
		}
	}
	if !hasOld && !hasNew {
		return old, false, obj, false, ChangeEmpty
	}
	return old, hasOld, obj, hasNew, ChangeOK
}

func storageOf(b []byte) (StorageView, bool) {
	if b == nil {
		return StorageView{}, false
	}
	v, err := ReadStorage(b)
	return v, err == nil
}

func podOf(b []byte) (PodView, bool) {
	if b == nil {
		return PodView{}, false
	}
	v, err := ReadPod(b)
	return v, err == nil
}

func nodeOf(b []byte) (NodeView, bool) {
	if b == nil {
		return NodeView{}, false
	}
	v, err := ReadNode(b)
	return v, err == nil
}

func groupOf(b []byte) (PodGroupView, bool) {
	if b == nil {
		return PodGroupView{}, false
	}
	v, err := ReadPodGroup(b)
	return v, err == nil
}

// Decode checks the record and its nested objects, and fills dst with copies.
func (e EventView) Decode(dst *Event) error {
	dst.Resource, dst.Action = e.Resource(), e.Action()
	bud := newBudget(e.r)
	for _, f := range [...]struct {
		name string
		off  uint32
		out  *[]byte
	}{{"old", eventOld, &dst.Old}, {"new", eventNew, &dst.New}} {
		*f.out = (*f.out)[:0]
		if !e.r.has(f.off, refSize) {
			continue
		}
		b, ok := e.r.bytesAt(f.off)
		if !ok {
			return &Error{Record: TagEvent, Field: f.name, Problem: "object out of bounds"}
		}
		if b == nil {
			continue
		}
		if !bud.take(uint64(len(b))) {
			return overlapError(TagEvent, f.name)
		}
		if err := validateObject(b, e.Resource()); err != nil {
			return &Error{Record: TagEvent, Field: f.name, Problem: err.Error()}
		}
		*f.out = append(*f.out, b...)
	}
	return nil
}

// validateObject fully decodes a nested object of the kind the resource implies.
func validateObject(b []byte, res EventResource) error {
	tag, err := RecordTag(b)
	if err != nil {
		return err
	}
	var want Tag
	switch res {
	case ResourcePod, ResourceUnscheduledPod:
		want = TagPod
	case ResourceNode:
		want = TagNode
	case ResourcePodGroup:
		want = TagPodGroup
	}
	if res.IsStorage() || res.IsDRA() {
		want = TagStorage
	}
	if want != 0 && tag != want {
		return &Error{Record: tag, Problem: "object of resource " + res.String() + " must be a " + want.String()}
	}
	switch tag {
	case TagPod:
		v, _ := ReadPod(b)
		return v.Decode(&Pod{})
	case TagNode:
		v, _ := ReadNode(b)
		return v.Decode(&Node{})
	case TagPodGroup:
		v, _ := ReadPodGroup(b)
		return v.Decode(&PodGroup{})
	case TagStorage:
		v, _ := ReadStorage(b)
		return v.Decode(&StorageObject{})
	}
	return &Error{Record: tag, Problem: "not an object record"}
}

// HintBatch record layout:
//
//	 8 event (nested record)  16 pods [nested]
//
//	nested 8: offset u32, length u32 of a Pod record inside this record
const (
	batchEvent = 8
	batchPods  = 16
	batchFixed = 24
	nestedSize = 8
)

// AppendHintBatch appends a batch asking for one hint per pod for one event.
// event and pods are encoded records (AppendEvent, AppendPod); it allocates
// only to grow dst.
func AppendHintBatch(dst []byte, event []byte, pods [][]byte) []byte {
	return appendHintBatch(dst, event, len(pods), func(i int) []byte { return pods[i] })
}

// appendHintBatch lays out a batch of n pods, pod(i) being the record of pod i.
func appendHintBatch(dst []byte, event []byte, n int, pod func(i int) []byte) []byte {
	b := beginRecord(dst, TagHintBatch, batchFixed)
	b.bytesAt(b.start+batchEvent, event)
	at := b.list(batchPods, n, nestedSize)
	for i := 0; i < n; i++ {
		b.bytesAt(at+i*nestedSize, pod(i))
	}
	return b.finish()
}

// HintBatchView reads a batch in place.
type HintBatchView struct {
	r    rec
	pods list
}

// ReadHintBatch checks the batch header and its pod table.
func ReadHintBatch(b []byte) (HintBatchView, error) {
	r, err := readRecord(b, TagHintBatch)
	if err != nil {
		return HintBatchView{}, err
	}
	if r.has(batchPods, refSize) {
		if _, _, ok := r.refAt(batchPods, nestedSize); !ok {
			return HintBatchView{}, &Error{Record: TagHintBatch, Field: "pods", Problem: "list out of bounds"}
		}
	}
	return HintBatchView{r: r, pods: r.list(batchPods, nestedSize)}, nil
}

// Event returns the batch's event.
func (h HintBatchView) Event() (EventView, error) {
	if !h.r.has(batchEvent, refSize) {
		return EventView{}, &Error{Record: TagHintBatch, Field: "event", Problem: "missing"}
	}
	b, ok := h.r.bytesAt(batchEvent)
	if !ok {
		return EventView{}, &Error{Record: TagHintBatch, Field: "event", Problem: "out of bounds"}
	}
	return ReadEvent(b)
}

// Len is the number of pods.
func (h HintBatchView) Len() int { return h.pods.len() }

// Pod returns pod i.
func (h HintBatchView) Pod(i int) (PodView, error) {
	p, ok := h.pods.at(i)
	if !ok {
		return PodView{}, &Error{Record: TagHintBatch, Field: "pods", Problem: "index " + strconv.Itoa(i) + " out of range"}
	}
	b, ok := h.r.bytesAt(p)
	if !ok {
		return PodView{}, &Error{Record: TagHintBatch, Field: "pods", Problem: "pod " + strconv.Itoa(i) + " out of bounds"}
	}
	return ReadPod(b)
}

// CheckHints validates a guest's answer to a batch of n pods in place,
// without allocating.
func CheckHints(b []byte, n int) error {
	if len(b) != n {
		return &Error{Field: "hints", Problem: "want one byte per pod (" + strconv.Itoa(n) + "), got " + strconv.Itoa(len(b))}
	}
	for i, v := range b {
		if Hint(v) > HintError {
			return &Error{Field: "hints", Problem: "pod " + strconv.Itoa(i) + ": invalid hint " + strconv.Itoa(int(v))}
		}
	}
	return nil
}
