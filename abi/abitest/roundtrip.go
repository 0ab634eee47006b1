package abitest

import (
	"encoding/binary"
	"strconv"

	"github.com/wasmsched/wasmsched/abi"
)

// RoundTrip decodes b, one golden vector, with the matching view and Decode
// function, re-encodes the result and appends it to dst. A vector of a known
// record whose header size covers all of b is decoded as that record; any
// other vector is raw: a [abi.SortKeySize]-byte one is a sort key, the rest a
// victim order of len(b)/4 indices. The host tests and the golden guest both
// call it, so the Go and the TinyGo builds of the codecs face the same bytes.
func RoundTrip(dst, b []byte) ([]byte, error) {
	tag, err := abi.RecordTag(b)
	if err != nil || tag == 0 || tag > abi.TagPlacementOptions {
		return roundTripRaw(dst, b)
	}
	// The record must be all of b: trailing bytes would be silently dropped.
	if size := binary.LittleEndian.Uint32(b); uint64(size) != uint64(len(b)) {
		return dst, &abi.Error{Record: tag, Problem: "record size " + strconv.FormatUint(uint64(size), 10) +
			" is not the vector's " + strconv.Itoa(len(b)) + " bytes"}
	}
	switch tag {
	case abi.TagPod:
		v, _ := abi.ReadPod(b)
		var p abi.Pod
		if err := v.Decode(&p); err != nil {
			return dst, err
		}
		return abi.AppendPod(dst, &p), nil
	case abi.TagNode:
		v, _ := abi.ReadNode(b)
		var n abi.Node
		if err := v.Decode(&n); err != nil {
			return dst, err
		}
		return abi.AppendNode(dst, &n), nil
	case abi.TagPodGroup:
		v, _ := abi.ReadPodGroup(b)
		var g abi.PodGroup
		if err := v.Decode(&g); err != nil {
			return dst, err
		}
		return abi.AppendPodGroup(dst, &g), nil
	case abi.TagEvent:
		v, _ := abi.ReadEvent(b)
		var e abi.Event
		if err := v.Decode(&e); err != nil {
			return dst, err
		}
		return abi.AppendEvent(dst, &e), nil
	case abi.TagHintBatch:
		return roundTripHintBatch(dst, b)
	case abi.TagVictimBatch:
		v, err := abi.ReadVictimBatch(b)
		if err != nil {
			return dst, err
		}
		var preemptor []byte
		if pv, ok := v.Preemptor(); ok {
			var p abi.Pod
			if err := pv.Decode(&p); err != nil {
				return dst, err
			}
			preemptor = abi.AppendPod(nil, &p)
		}
		return abi.AppendVictimBatch(dst, preemptor, v.Decode(nil)), nil
	case abi.TagGate:
		var g abi.Gate
		if err := abi.DecodeGate(b, &g); err != nil {
			return dst, err
		}
		return abi.AppendGate(dst, &g), nil
	case abi.TagRegistrations:
		regs, err := abi.DecodeRegistrations(b)
		if err != nil {
			return dst, err
		}
		return abi.AppendRegistrations(dst, regs), nil
	case abi.TagStorage:
		v, _ := abi.ReadStorage(b)
		var o abi.StorageObject
		if err := v.Decode(&o); err != nil {
			return dst, err
		}
		return abi.AppendStorage(dst, &o), nil
	case abi.TagPlacement:
		return roundTripPlacement(dst, b)
	case abi.TagNodeSync:
		return roundTripNodeSync(dst, b)
	case abi.TagVerdicts:
		// A verdicts record is read for a known number of nodes: take the
		// count of its verdicts list (the reference at byte 16, whose count
		// is the u32 at byte 20), absent in a fixed part too short for it.
		n := 0
		if fixed := binary.LittleEndian.Uint16(b[6:]); fixed >= 24 {
			n = int(binary.LittleEndian.Uint32(b[20:]))
		}
		v, err := abi.ReadVerdicts(b, n)
		if err != nil {
			return dst, err
		}
		verdicts := make([]uint32, v.Len())
		for i := range verdicts {
			verdicts[i] = abi.Verdict(v.Code(i), v.ReasonIndex(i))
		}
		reasons := make([]string, v.NumReasons())
		for j := range reasons {
			reasons[j] = v.Reason(j)
		}
		return abi.AppendVerdicts(dst, verdicts, reasons), nil
	case abi.TagPlacementOptions:
		o, err := abi.DecodePlacementOptions(b)
		if err != nil {
			return dst, err
		}
		return abi.AppendPlacementOptions(dst, &o), nil
	}
	panic("unreachable")
}

// canonicalNode decodes a nested node record and re-encodes it.
func canonicalNode(b []byte) ([]byte, error) {
	v, err := abi.ReadNode(b)
	if err != nil {
		return nil, err
	}
	var n abi.Node
	if err := v.Decode(&n); err != nil {
		return nil, err
	}
	return abi.AppendNode(nil, &n), nil
}

func roundTripPlacement(dst, b []byte) ([]byte, error) {
	v, err := abi.ReadPlacement(b)
	if err != nil {
		return dst, err
	}
	pv, err := v.Pod()
	if err != nil {
		return dst, err
	}
	var p abi.Pod
	if err := pv.Decode(&p); err != nil {
		return dst, err
	}
	ids := make([]uint32, v.NumIDs())
	for i := range ids {
		ids[i] = v.ID(i)
	}
	var inline [][]byte
	for i := v.NumIDs(); i < v.Len(); i++ {
		nv, err := v.Inline(i)
		if err != nil {
			return dst, err
		}
		n, err := canonicalNode(nv.Bytes())
		if err != nil {
			return dst, err
		}
		inline = append(inline, n)
	}
	return abi.AppendPlacement(dst, abi.AppendPod(nil, &p), ids, inline), nil
}

func roundTripNodeSync(dst, b []byte) ([]byte, error) {
	v, err := abi.ReadNodeSync(b)
	if err != nil {
		return dst, err
	}
	upserts := make([]abi.NodeUpsert, v.NumUpserts())
	for i := range upserts {
		id, nb, err := v.Upsert(i)
		if err != nil {
			return dst, err
		}
		n, err := canonicalNode(nb)
		if err != nil {
			return dst, err
		}
		upserts[i] = abi.NodeUpsert{ID: id, Node: n}
	}
	removed := make([]uint32, v.NumRemoved())
	for i := range removed {
		removed[i] = v.Removed(i)
	}
	return abi.AppendNodeSync(dst, v.Reset(), upserts, removed), nil
}

func roundTripHintBatch(dst, b []byte) ([]byte, error) {
	v, err := abi.ReadHintBatch(b)
	if err != nil {
		return dst, err
	}
	ev, err := v.Event()
	if err != nil {
		return dst, err
	}
	var e abi.Event
	if err := ev.Decode(&e); err != nil {
		return dst, err
	}
	pods := make([][]byte, v.Len())
	for i := range pods {
		pv, err := v.Pod(i)
		if err != nil {
			return dst, err
		}
		var p abi.Pod
		if err := pv.Decode(&p); err != nil {
			return dst, err
		}
		pods[i] = abi.AppendPod(nil, &p)
	}
	return abi.AppendHintBatch(dst, abi.AppendEvent(nil, &e), pods), nil
}

func roundTripRaw(dst, b []byte) ([]byte, error) {
	if len(b) == abi.SortKeySize {
		k, err := abi.DecodeSortKey(b)
		if err != nil {
			return dst, err
		}
		var w [abi.SortKeySize]byte
		abi.PutSortKey(w[:], k)
		return append(dst, w[:]...), nil
	}
	n := len(b) / 4
	order := make([]uint32, n)
	if err := abi.DecodeOrder(b, n, order, make([]bool, n)); err != nil {
		return dst, err
	}
	return abi.AppendOrder(dst, order), nil
}
