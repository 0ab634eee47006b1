package abi

import (
	"bytes"
	"testing"
)

func TestBatchLens(t *testing.T) {
	ev := AppendEvent(nil, &Event{Resource: ResourceNode, Action: ActionAdd, New: AppendNode(nil, &Node{Name: "n"})})
	var views []PodView
	var recs [][]byte
	for _, name := range []string{"a", "bb", ""} {
		rec := AppendPod(nil, &Pod{Name: name, Labels: []KV{{"k", name}}})
		v, err := ReadPod(rec)
		if err != nil {
			t.Fatal(err)
		}
		views, recs = append(views, v), append(recs, rec)
	}
	want := AppendHintBatch(nil, ev, recs)
	if n := HintBatchLen(ev, views); n != len(want) {
		t.Errorf("HintBatchLen = %d, want %d", n, len(want))
	}
	buf := make([]byte, len(want))
	got := AppendHintBatchViews(buf[:0:len(buf)], ev, views)
	if !bytes.Equal(got, want) {
		t.Error("AppendHintBatchViews differs from AppendHintBatch")
	}
	if &got[0] != &buf[0] {
		t.Error("AppendHintBatchViews reallocated a buffer of exactly HintBatchLen bytes")
	}

	victims := []Victim{{Kind: VictimGroup, UID: "u", Namespace: "ns", Name: "g", Members: 3}, {UID: "v"}}
	pre := AppendPod(nil, &Pod{Name: "pre"})
	if n, want := VictimBatchLen(pre, victims), len(AppendVictimBatch(nil, pre, victims)); n != want {
		t.Errorf("VictimBatchLen = %d, want %d", n, want)
	}
}
