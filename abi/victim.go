package abi

import (
	"encoding/binary"
	"strconv"
)

// VictimBatch record layout:
//
//	 8 preemptor (nested Pod record, optional)  16 victims [victim]
//
//	victim 48: u32 kind, i32 priority, i64 start time, i32 members,
//	           u32 flags (victimPDBViolating), uid str, namespace str, name str
//
// For a group victim, priority is the group's priority, start time the
// earliest start among its members and name the PodGroup's name.
const (
	vbPreemptor = 8
	vbVictims   = 16
	vbFixed     = 24

	victimSize         = 48
	victimPDBViolating = 1 << 0
)

// Victim is one preemption candidate: a pod, or a pod group with
// DisruptionMode all, which is preempted or reprieved as one.
type Victim struct {
	Kind     VictimKind
	Priority int32
	// StartTime is when the pod started (a group: its earliest-started
	// member), Unix nanoseconds; 0 means not started, which ranks as the
	// least important at equal priority.
	StartTime    int64
	Members      int32
	PDBViolating bool
	UID          string
	Namespace    string
	Name         string
}

// MoreImportantVictim reports whether victim a is more important than b,
// i.e. is preempted later and reprieved earlier. It is the one definition of
// upstream's MoreImportantVictim (pkg/scheduler/framework/preemption/util.go,
// used by podgrouppreemption.go's selectVictimsOnDomain) in wasmsched: the
// host's native victim order (host/policy.Importance) and the reference
// guests (policies/gangpreempt, guest-sdk/examples/importance) all call it,
// so they cannot drift apart. Rule by rule:
//
//  1. higher priority first;
//  2. at equal priority a pod group (victimRank: a group outranks a pod)
//     before a single pod; a kind other than VictimGroup is a pod;
//  3. between groups, more members first (upstream compares len(Pods()),
//     which is 1 for every pod, so members do not order pods);
//  4. the earlier start first; a victim that has not started (StartTime 0)
//     is the least important, as upstream's GetPodStartTime makes it;
//  5. then the lower UID, as upstream's podIdentityLess, so that the order
//     does not depend on the batch order.
//
// It is a strict weak order; victims equal on every rule (same UID) are
// neither more important than the other. It reads its arguments only (a
// guest may pass the addresses of its own copies without them escaping).
func MoreImportantVictim(a, b *Victim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if ag, bg := a.Kind == VictimGroup, b.Kind == VictimGroup; ag != bg {
		return ag
	} else if ag && a.Members != b.Members {
		return a.Members > b.Members
	}
	if as, bs := a.StartTime != 0, b.StartTime != 0; as != bs {
		return as
	}
	if a.StartTime != b.StartTime {
		return a.StartTime < b.StartTime
	}
	return a.UID < b.UID
}

// AppendVictimBatch appends a batch to be ordered by importance. preemptor is
// an encoded Pod record or nil.
func AppendVictimBatch(dst []byte, preemptor []byte, victims []Victim) []byte {
	b := beginRecord(dst, TagVictimBatch, vbFixed)
	b.bytesAt(b.start+vbPreemptor, preemptor)
	at := b.list(vbVictims, len(victims), victimSize)
	for i := range victims {
		v := &victims[i]
		e := at + i*victimSize
		b.elemU32(e, uint32(v.Kind))
		b.elemU32(e+4, uint32(v.Priority))
		b.elemI64(e+8, v.StartTime)
		b.elemU32(e+16, uint32(v.Members))
		b.elemU32(e+20, boolBit(v.PDBViolating, victimPDBViolating))
		b.strAt(e+24, v.UID)
		b.strAt(e+32, v.Namespace)
		b.strAt(e+40, v.Name)
	}
	return b.finish()
}

// VictimBatchView reads a victim batch in place.
type VictimBatchView struct {
	r       rec
	victims list
}

// ReadVictimBatch checks the batch header, its victim table and the victims' strings.
func ReadVictimBatch(b []byte) (VictimBatchView, error) {
	r, err := readRecord(b, TagVictimBatch)
	if err != nil {
		return VictimBatchView{}, err
	}
	bud := newBudget(r)
	l, err := checkedList(r, &bud, vbVictims, victimSize, "victims", 24, 32, 40)
	if err != nil {
		return VictimBatchView{}, err
	}
	return VictimBatchView{r: r, victims: l}, nil
}

// Preemptor returns the preempting pod, if the host sent it.
func (v VictimBatchView) Preemptor() (PodView, bool) {
	if !v.r.has(vbPreemptor, refSize) {
		return PodView{}, false
	}
	b, ok := v.r.bytesAt(vbPreemptor)
	if !ok {
		return PodView{}, false
	}
	return podOf(b)
}

// Len is the number of victims.
func (v VictimBatchView) Len() int { return v.victims.len() }

// At returns victim i; its strings alias the batch's bytes.
func (v VictimBatchView) At(i int) Victim {
	l := v.victims
	return Victim{
		Kind: VictimKind(l.u32(i, 0)), Priority: int32(l.u32(i, 4)), StartTime: l.i64(i, 8),
		Members: int32(l.u32(i, 16)), PDBViolating: l.u32(i, 20)&victimPDBViolating != 0,
		UID: l.str(i, 24), Namespace: l.str(i, 32), Name: l.str(i, 40),
	}
}

// Decode copies every victim into dst, reusing its backing array.
func (v VictimBatchView) Decode(dst []Victim) []Victim {
	dst = dst[:0]
	for i := 0; i < v.Len(); i++ {
		x := v.At(i)
		x.UID, x.Namespace, x.Name = clone(x.UID), clone(x.Namespace), clone(x.Name)
		dst = append(dst, x)
	}
	return dst
}

// AppendOrder appends a victim order in its wire form (u32 indices).
func AppendOrder(dst []byte, order []uint32) []byte {
	for _, i := range order {
		dst = binary.LittleEndian.AppendUint32(dst, i)
	}
	return dst
}

// DecodeOrder checks a guest's victim order for a batch of n victims, which
// must be a permutation of 0..n-1, and writes it into dst (len n). seen must
// have room for n bools; it is scratch space so the check does not allocate.
func DecodeOrder(b []byte, n int, dst []uint32, seen []bool) error {
	if len(b) != 4*n {
		return &Error{Field: "victim order", Problem: "want " + strconv.Itoa(n) + " u32 indices (" + strconv.Itoa(4*n) + " bytes), got " + strconv.Itoa(len(b)) + " bytes"}
	}
	if len(dst) < n || len(seen) < n {
		return &Error{Field: "victim order", Problem: "destination too small"}
	}
	clear(seen[:n])
	for i := 0; i < n; i++ {
		idx := binary.LittleEndian.Uint32(b[4*i:])
		if uint64(idx) >= uint64(n) {
			return &Error{Field: "victim order", Problem: "position " + strconv.Itoa(i) + ": index " + strconv.FormatUint(uint64(idx), 10) + " out of range [0, " + strconv.Itoa(n) + ")"}
		}
		if seen[idx] {
			return &Error{Field: "victim order", Problem: "index " + strconv.FormatUint(uint64(idx), 10) + " appears twice"}
		}
		seen[idx] = true
		dst[i] = idx
	}
	return nil
}
