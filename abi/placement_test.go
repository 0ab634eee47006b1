package abi_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

// Tests of the placement records (placement.go, ABI minor 3). Offsets below
// are those of the layout comments in placement.go:
//
//	placement  16 pod  24 ids [u32]  32 nodes [nested]
//	node sync   8 flags  16 upserts [id u32, reserved u32, node nested]  24 removed [u32]
//	verdicts   16 verdicts [u32]  24 reasons [str]
//	options     8 flags  16 filter events [resource u32, actions u32]

func u32At(b []byte, off int) uint32       { return binary.LittleEndian.Uint32(b[off:]) }
func putU32At(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }

func appendTestPod(p abi.Pod) []byte   { return abi.AppendPod(nil, &p) }
func appendTestNode(n abi.Node) []byte { return abi.AppendNode(nil, &n) }

// wantErr fails unless err is an *abi.Error whose message contains want.
func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %q", what, want)
	}
	mustABIError(t, err)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: error %q, want %q", what, err, want)
	}
}

// placementCase is the input of AppendPlacement.
type placementCase struct {
	name   string
	pod    abi.Pod
	ids    []uint32
	inline []abi.Node
}

func placementCases() []placementCase {
	return []placementCase{
		{name: "pod only", pod: abitest.MinimalPod()},
		{name: "ids", pod: abitest.GangPod(), ids: []uint32{0, 1, 2, math.MaxUint32}},
		{name: "inline", pod: abitest.FullPod(), inline: []abi.Node{abitest.FullNode()}},
		{name: "ids and inline", pod: abitest.FullPod(), ids: []uint32{9, 4},
			inline: []abi.Node{abitest.MinimalNode(), abitest.FullNode(), {}}},
	}
}

func (c placementCase) records() (pod []byte, inline [][]byte) {
	for _, n := range c.inline {
		inline = append(inline, appendTestNode(n))
	}
	return appendTestPod(c.pod), inline
}

func TestPlacementRoundTrip(t *testing.T) {
	for _, tc := range placementCases() {
		t.Run(tc.name, func(t *testing.T) {
			pod, inline := tc.records()
			prefix := []byte("prefix")
			b := abi.AppendPlacement(slices.Clone(prefix), pod, tc.ids, inline)
			if !bytes.HasPrefix(b, prefix) {
				t.Fatal("AppendPlacement does not append to dst")
			}
			b = b[len(prefix):] // position independent
			if tag, err := abi.RecordTag(b); tag != abi.TagPlacement || err != nil {
				t.Fatalf("RecordTag = %v, %v", tag, err)
			}
			v, err := abi.ReadPlacement(b)
			if err != nil {
				t.Fatal(err)
			}
			pv, err := v.Pod()
			if err != nil {
				t.Fatalf("Pod(): %v", err)
			}
			if !bytes.Equal(pv.Bytes(), pod) {
				t.Error("Pod() bytes differ from the pod record")
			}
			checkPod(t, pv, tc.pod)
			if v.Len() != len(tc.ids)+len(tc.inline) || v.NumIDs() != len(tc.ids) {
				t.Fatalf("Len() = %d, NumIDs() = %d; want %d ids, %d inline", v.Len(), v.NumIDs(), len(tc.ids), len(tc.inline))
			}
			for i, id := range tc.ids {
				if got := v.ID(i); got != id {
					t.Errorf("ID(%d) = %d, want %d", i, got, id)
				}
			}
			for i, want := range tc.inline {
				nv, err := v.Inline(len(tc.ids) + i)
				if err != nil {
					t.Fatalf("Inline(%d): %v", len(tc.ids)+i, err)
				}
				if !bytes.Equal(nv.Bytes(), inline[i]) {
					t.Errorf("Inline(%d) bytes differ from the node record", len(tc.ids)+i)
				}
				checkNode(t, nv, want)
			}
			for _, i := range []int{-1, v.Len(), v.Len() + 100} {
				_, err := v.Inline(i)
				wantErr(t, "Inline out of range", err, "out of range")
			}
			if len(tc.ids) > 0 {
				_, err := v.Inline(0)
				wantErr(t, "Inline of a node named by id", err, "out of range")
			}
		})
	}
}

// TestAppendPlacementExactBuffer: PlacementLen is the appended size, and
// appending into a buffer of that size neither allocates nor moves.
func TestAppendPlacementExactBuffer(t *testing.T) {
	for _, tc := range placementCases() {
		t.Run(tc.name, func(t *testing.T) {
			pod, inline := tc.records()
			n := abi.PlacementLen(pod, tc.ids, inline)
			if want := len(abi.AppendPlacement(nil, pod, tc.ids, inline)); n != want {
				t.Fatalf("PlacementLen = %d, AppendPlacement wrote %d bytes", n, want)
			}
			buf := make([]byte, n)
			var out []byte
			if allocs := testing.AllocsPerRun(100, func() { out = abi.AppendPlacement(buf[:0], pod, tc.ids, inline) }); allocs != 0 {
				t.Errorf("AppendPlacement into a buffer of PlacementLen bytes: %v allocs", allocs)
			}
			if len(out) != n || &out[0] != &buf[0] {
				t.Error("AppendPlacement did not write the record in place")
			}
		})
	}
	// The golden vectors' sizes.
	if n, want := abi.PlacementLen(appendTestPod(abitest.FullPod()), []uint32{3}, abitest.InlineNodes()), len(readGolden(t, "placement-inline")); n != want {
		t.Errorf("PlacementLen(placement-inline) = %d, want %d", n, want)
	}
	if n, want := abi.PlacementLen(appendTestPod(abitest.GangPod()), []uint32{0, 7, math.MaxUint32}, nil), len(readGolden(t, "placement-ids")); n != want {
		t.Errorf("PlacementLen(placement-ids) = %d, want %d", n, want)
	}
}

func TestNodeSyncRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reset   bool
		upserts []abi.NodeUpsert
		removed []uint32
	}{
		{name: "empty"},
		{name: "reset only", reset: true},
		{name: "upserts", reset: true, upserts: abitest.NodeUpserts()},
		{name: "removed", removed: []uint32{0, 3, math.MaxUint32}},
		{name: "both", upserts: abitest.NodeUpserts()[1:], removed: []uint32{7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := abi.NodeSyncLen(tc.upserts, tc.removed)
			b := abi.AppendNodeSync(nil, tc.reset, tc.upserts, tc.removed)
			if n != len(b) {
				t.Errorf("NodeSyncLen = %d, AppendNodeSync wrote %d bytes", n, len(b))
			}
			v, err := abi.ReadNodeSync(b)
			if err != nil {
				t.Fatal(err)
			}
			if v.Reset() != tc.reset || v.NumUpserts() != len(tc.upserts) || v.NumRemoved() != len(tc.removed) {
				t.Fatalf("Reset %v, %d upserts, %d removed", v.Reset(), v.NumUpserts(), v.NumRemoved())
			}
			for i, want := range tc.upserts {
				id, node, err := v.Upsert(i)
				if err != nil {
					t.Fatalf("Upsert(%d): %v", i, err)
				}
				if id != want.ID || !bytes.Equal(node, want.Node) {
					t.Errorf("Upsert(%d) = %d, %d bytes; want %d, %d bytes", i, id, len(node), want.ID, len(want.Node))
				}
			}
			for _, i := range []int{-1, len(tc.upserts)} {
				_, _, err := v.Upsert(i)
				wantErr(t, "Upsert out of range", err, "out of range")
			}
			for i, want := range tc.removed {
				if got := v.Removed(i); got != want {
					t.Errorf("Removed(%d) = %d, want %d", i, got, want)
				}
			}

			// Appending into a buffer of NodeSyncLen bytes does not allocate.
			buf := make([]byte, n)
			var out []byte
			if allocs := testing.AllocsPerRun(100, func() { out = abi.AppendNodeSync(buf[:0], tc.reset, tc.upserts, tc.removed) }); allocs != 0 {
				t.Errorf("AppendNodeSync into a buffer of NodeSyncLen bytes: %v allocs", allocs)
			}
			if !bytes.Equal(out, b) || &out[0] != &buf[0] {
				t.Error("AppendNodeSync did not write the same record in place")
			}
		})
	}
	if n, want := abi.NodeSyncLen(abitest.NodeUpserts(), nil), len(readGolden(t, "nodesync-reset")); n != want {
		t.Errorf("NodeSyncLen(nodesync-reset) = %d, want %d", n, want)
	}
}

func TestVerdictPacking(t *testing.T) {
	for _, code := range []abi.FilterCode{abi.FilterPass, abi.FilterUnschedulable, abi.FilterUnresolvable} {
		for _, reason := range []int{0, 1, 255, 256, abi.MaxReasons - 1} {
			v := abi.Verdict(code, reason)
			if c, idx := abi.FilterCode(v&0xff), int(v>>8); c != code || idx != reason {
				t.Errorf("Verdict(%v, %d) = %#x", code, reason, v)
			}
		}
	}
	for c, want := range map[abi.FilterCode]string{
		abi.FilterPass: "Pass", abi.FilterUnschedulable: "Unschedulable", abi.FilterUnresolvable: "UnschedulableAndUnresolvable",
		3: "FilterCode(3)", 255: "FilterCode(255)",
	} {
		if got := c.String(); got != want {
			t.Errorf("FilterCode(%d).String() = %q, want %q", c, got, want)
		}
	}
}

func TestReadVerdicts(t *testing.T) {
	pass, unsched, unres := abi.FilterPass, abi.FilterUnschedulable, abi.FilterUnresolvable
	long := strings.Repeat("x", abi.MaxReasonLen)
	manyReasons := make([]string, abi.MaxReasons+1)
	for i := range manyReasons {
		manyReasons[i] = "r"
	}
	rec := func(verdicts []uint32, reasons []string) []byte { return abi.AppendVerdicts(nil, verdicts, reasons) }
	listOOB := rec([]uint32{abi.Verdict(pass, 0)}, nil)
	putU32At(listOOB, 16+4, 1000) // verdict count
	reasonsOOB := rec([]uint32{abi.Verdict(unsched, 0)}, []string{"r"})
	putU32At(reasonsOOB, 24+4, 1000) // reason count
	reasonOOB := rec([]uint32{abi.Verdict(unsched, 0)}, []string{"r"})
	putU32At(reasonOOB, int(u32At(reasonOOB, 24))+4, 1000) // reason 0's length
	for _, tc := range []struct {
		name     string
		b        []byte
		n        int
		wantErr  string
		wantCode []abi.FilterCode
	}{
		{name: "no nodes", b: rec(nil, nil), n: 0},
		{name: "all pass", b: rec([]uint32{0, 0, 0}, nil), n: 3, wantCode: []abi.FilterCode{pass, pass, pass}},
		{name: "shared reason", b: rec([]uint32{abi.Verdict(unsched, 0), abi.Verdict(unres, 1), abi.Verdict(unsched, 0)}, []string{"a", "b"}),
			n: 3, wantCode: []abi.FilterCode{unsched, unres, unsched}},
		{name: "pass ignores its reason bits", b: rec([]uint32{abi.Verdict(pass, 7)}, nil), n: 1, wantCode: []abi.FilterCode{pass}},
		{name: "longest reason", b: rec([]uint32{abi.Verdict(unsched, 0)}, []string{long}), n: 1, wantCode: []abi.FilterCode{unsched}},
		{name: "unused reason", b: rec([]uint32{0}, []string{"spare"}), n: 1, wantCode: []abi.FilterCode{pass}},

		{name: "fewer verdicts than nodes", b: rec([]uint32{0, 0}, nil), n: 3, wantErr: "abi: verdicts field verdicts: 2 verdicts for 3 nodes"},
		{name: "more verdicts than nodes", b: rec([]uint32{0, 0}, nil), n: 1, wantErr: "abi: verdicts field verdicts: 2 verdicts for 1 nodes"},
		{name: "negative node count", b: rec(nil, nil), n: -1, wantErr: "abi: verdicts field verdicts: 0 verdicts for -1 nodes"},
		{name: "unknown code", b: rec([]uint32{0, abi.Verdict(3, 0)}, []string{"r"}), n: 2, wantErr: "abi: verdicts field verdict 1: unknown code 3"},
		{name: "code 255", b: rec([]uint32{0xff}, nil), n: 1, wantErr: "abi: verdicts field verdict 0: unknown code 255"},
		{name: "reason out of range", b: rec([]uint32{abi.Verdict(unsched, 0), abi.Verdict(unres, 1)}, []string{"r"}), n: 2,
			wantErr: "abi: verdicts field verdict 1: reason 1 of 1"},
		{name: "rejection without reasons", b: rec([]uint32{abi.Verdict(unsched, 0)}, nil), n: 1,
			wantErr: "abi: verdicts field verdict 0: reason 0 of 0"},
		{name: "huge reason index", b: rec([]uint32{abi.Verdict(unres, 1<<24-1)}, []string{"r"}), n: 1,
			wantErr: "abi: verdicts field verdict 0: reason 16777215 of 1"},
		{name: "empty reason", b: rec([]uint32{abi.Verdict(unsched, 1)}, []string{"r", ""}), n: 1, wantErr: "abi: verdicts field reason 1: empty"},
		{name: "reason not UTF-8", b: rec([]uint32{abi.Verdict(unsched, 0)}, []string{"half \xe2\x80"}), n: 1,
			wantErr: "abi: verdicts field reason 0: not valid UTF-8"},
		{name: "reason too long", b: rec([]uint32{abi.Verdict(unsched, 0)}, []string{long + "x"}), n: 1,
			wantErr: "abi: verdicts field reason 0: longer than 1024 bytes"},
		{name: "too many reasons", b: rec([]uint32{0}, manyReasons), n: 1,
			wantErr: "abi: verdicts field reasons: 65537 reasons, at most 65536 allowed"},
		{name: "verdicts out of bounds", b: listOOB, n: 1, wantErr: "abi: verdicts field verdicts: list out of bounds"},
		{name: "reasons out of bounds", b: reasonsOOB, n: 1, wantErr: "abi: verdicts field reasons: list out of bounds"},
		{name: "reason out of bounds", b: reasonOOB, n: 1, wantErr: "abi: verdicts field reasons: string out of bounds"},
		{name: "not verdicts", b: readGolden(t, "gate-wait"), n: 0, wantErr: "abi: verdicts: tag is gate"},
		{name: "truncated", b: rec([]uint32{0}, nil)[:20], n: 1, wantErr: "exceeds the 20 bytes available"},
		{name: "empty", b: nil, n: 0, wantErr: "abi: verdicts: shorter than the 8-byte header (0 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := abi.ReadVerdicts(tc.b, tc.n)
			if tc.wantErr != "" {
				wantErr(t, "ReadVerdicts", err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("ReadVerdicts: %v", err)
			}
			var got []abi.FilterCode
			for i := range v.Len() {
				got = append(got, v.Code(i))
			}
			if diff := cmp.Diff(tc.wantCode, got, equateEmpty); diff != "" {
				t.Errorf("codes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadVerdictsAllocs: the host reads a verdicts record on every filter
// call; reading a valid one does not allocate.
func TestReadVerdictsAllocs(t *testing.T) {
	b := readGolden(t, "verdicts")
	var v abi.VerdictsView
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if v, err = abi.ReadVerdicts(b, 5); err != nil {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ReadVerdicts of a valid record: %v allocs", allocs)
	}
	if v.Len() != 5 {
		t.Errorf("Len() = %d", v.Len())
	}
}

func TestScores(t *testing.T) {
	scores := []int64{0, 1, -1, abi.MaxNodeScore, math.MaxInt64, math.MinInt64}
	b := abi.AppendScores([]byte("pre"), scores)
	if !bytes.HasPrefix(b, []byte("pre")) || len(b) != 3+8*len(scores) {
		t.Fatalf("AppendScores wrote %d bytes after the prefix", len(b)-3)
	}
	b = b[3:]
	if got := int64(binary.LittleEndian.Uint64(b[8*4:])); got != math.MaxInt64 {
		t.Errorf("score 4 is not a little-endian i64 at byte 32: %d", got)
	}
	out := make([]int64, len(scores))
	if err := abi.DecodeScores(b, out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scores, out); diff != "" {
		t.Errorf("DecodeScores (-want +got):\n%s", diff)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = abi.DecodeScores(b, out) }); allocs != 0 {
		t.Errorf("DecodeScores: %v allocs", allocs)
	}
	if err := abi.DecodeScores(nil, nil); err != nil {
		t.Errorf("DecodeScores of no nodes: %v", err)
	}
	for _, tc := range []struct {
		b    []byte
		n    int
		want string
	}{
		{b[:16], 3, "abi: scores: 16 bytes for 3 nodes, want 8 per node"},
		{b, 5, "abi: scores: 48 bytes for 5 nodes, want 8 per node"},
		{b[:7], 1, "abi: scores: 7 bytes for 1 nodes, want 8 per node"},
		{nil, 1, "abi: scores: 0 bytes for 1 nodes, want 8 per node"},
		{b[:8], 0, "abi: scores: 8 bytes for 0 nodes, want 8 per node"},
	} {
		dst := make([]int64, tc.n)
		for i := range dst {
			dst[i] = 42
		}
		err := abi.DecodeScores(tc.b, dst)
		if err == nil || err.Error() != tc.want {
			t.Errorf("DecodeScores(%d bytes, %d nodes) = %v, want %q", len(tc.b), tc.n, err, tc.want)
		}
		mustABIError(t, err)
		for _, s := range dst {
			if s != 42 {
				t.Errorf("DecodeScores wrote out before failing: %v", dst)
				break
			}
		}
	}
}

func TestDecodePlacementOptions(t *testing.T) {
	ev := func(r abi.EventResource, a abi.ActionType) abi.FilterEvent {
		return abi.FilterEvent{Resource: r, Actions: a}
	}
	many := func(n int) []abi.FilterEvent {
		out := make([]abi.FilterEvent, n)
		for i := range out {
			out[i] = ev(abi.ResourceNode, abi.ActionAdd)
		}
		return out
	}
	// Every named resource is one a filter may depend on.
	var every []abi.FilterEvent
	for r := abi.EventResource(0); r <= 255; r++ {
		if knownResource(r) {
			every = append(every, ev(r, abi.ActionAll))
		}
	}
	outOfBounds := abi.AppendPlacementOptions(nil, &abi.PlacementOptions{FilterEvents: many(2)})
	putU32At(outOfBounds, 16+4, 1000) // event count
	for _, tc := range []struct {
		name    string
		o       abi.PlacementOptions
		b       []byte // instead of o
		wantErr string
	}{
		{name: "default"},
		{name: "normalized", o: abi.PlacementOptions{ScoreNormalized: true}},
		{name: "full", o: abitest.FullPlacementOptions()},
		{name: "default events", o: abi.PlacementOptions{FilterEvents: abi.DefaultFilterEvents()}},
		{name: "every resource", o: abi.PlacementOptions{FilterEvents: every}},
		{name: "most", o: abi.PlacementOptions{FilterEvents: many(abi.MaxRegistrations)}},

		{name: "too many", o: abi.PlacementOptions{FilterEvents: many(abi.MaxRegistrations + 1)},
			wantErr: "abi: placement options field filter events: 257 events, at most 256 allowed"},
		{name: "resource 0", o: abi.PlacementOptions{FilterEvents: []abi.FilterEvent{ev(abi.ResourceNode, abi.ActionAdd), ev(0, abi.ActionAdd)}},
			wantErr: "abi: placement options field filter event 1: unknown resource Resource(0)"},
		{name: "resource 16", o: abi.PlacementOptions{FilterEvents: []abi.FilterEvent{ev(16, abi.ActionAdd)}},
			wantErr: "abi: placement options field filter event 0: unknown resource Resource(16)"},
		{name: "resource 254", o: abi.PlacementOptions{FilterEvents: []abi.FilterEvent{ev(254, abi.ActionAdd)}},
			wantErr: "abi: placement options field filter event 0: unknown resource Resource(254)"},
		{name: "no actions", o: abi.PlacementOptions{FilterEvents: []abi.FilterEvent{ev(abi.ResourceNode, 0)}},
			wantErr: "abi: placement options field filter event 0: invalid actions None"},
		{name: "unknown action", o: abi.PlacementOptions{FilterEvents: []abi.FilterEvent{ev(abi.ResourcePod, abi.ActionDelete|1<<20)}},
			wantErr: "abi: placement options field filter event 0: invalid actions Delete|0x100000"},
		{name: "list out of bounds", b: outOfBounds, wantErr: "abi: placement options field filter events: list out of bounds"},
		{name: "not options", b: readGolden(t, "registrations"), wantErr: "abi: placement options: tag is registrations"},
		{name: "truncated", b: abi.AppendPlacementOptions(nil, &abi.PlacementOptions{})[:12], wantErr: "exceeds the 12 bytes available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b == nil {
				b = abi.AppendPlacementOptions(nil, &tc.o)
			}
			got, err := abi.DecodePlacementOptions(b)
			if tc.wantErr != "" {
				wantErr(t, "DecodePlacementOptions", err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("DecodePlacementOptions: %v", err)
			}
			if diff := cmp.Diff(tc.o, got, equateEmpty); diff != "" {
				t.Errorf("DecodePlacementOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultFilterEvents: the defaults are valid options and each call
// returns a fresh slice.
func TestDefaultFilterEvents(t *testing.T) {
	d := abi.DefaultFilterEvents()
	if len(d) == 0 {
		t.Fatal("no default filter events")
	}
	d[0].Resource = abi.ResourcePodGroup
	if abi.DefaultFilterEvents()[0].Resource == abi.ResourcePodGroup {
		t.Error("DefaultFilterEvents returned a shared slice")
	}
	want := abi.PlacementOptions{FilterEvents: abi.DefaultFilterEvents()}
	got, err := abi.DecodePlacementOptions(abi.AppendPlacementOptions(nil, &want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default events round trip (-want +got):\n%s", diff)
	}
}

// TestMalformedPlacementRecords: headers and references that do not fit
// the record are refused with an *abi.Error, by the Read function or by
// the accessor that follows the reference, never with a panic.
func TestMalformedPlacementRecords(t *testing.T) {
	readAll := map[abi.Tag]func([]byte) error{
		abi.TagPlacement:        func(b []byte) error { _, err := abi.ReadPlacement(b); return err },
		abi.TagNodeSync:         func(b []byte) error { _, err := abi.ReadNodeSync(b); return err },
		abi.TagVerdicts:         func(b []byte) error { _, err := abi.ReadVerdicts(b, verdictCount(b)); return err },
		abi.TagPlacementOptions: func(b []byte) error { _, err := abi.DecodePlacementOptions(b); return err },
	}
	golden := map[abi.Tag]string{
		abi.TagPlacement: "placement-inline", abi.TagNodeSync: "nodesync-reset",
		abi.TagVerdicts: "verdicts-all-pass", abi.TagPlacementOptions: "placementoptions",
	}
	for tag, read := range readAll {
		rec := readGolden(t, golden[tag])
		header := func(size uint32, tg abi.Tag, fixed uint16) []byte {
			b := bytes.Clone(rec)
			putU32At(b, 0, size)
			binary.LittleEndian.PutUint16(b[4:], uint16(tg))
			binary.LittleEndian.PutUint16(b[6:], fixed)
			return b
		}
		for _, tc := range []struct {
			name string
			b    []byte
			want string
		}{
			{"empty", nil, "shorter than the 8-byte header (0 bytes)"},
			{"short", rec[:7], "shorter than the 8-byte header (7 bytes)"},
			{"wrong tag", header(uint32(len(rec)), abi.TagPod, 16), "tag is pod"},
			{"unknown tag", header(uint32(len(rec)), 99, 16), "tag is tag 99"},
			{"size beyond", header(uint32(len(rec))+1, tag, 16), "exceeds the"},
			{"fixed too small", header(uint32(len(rec)), tag, 7), "fixed part length 7 outside [8, size]"},
			{"fixed beyond size", header(20, tag, 21), "fixed part length 21 outside [8, size]"},
		} {
			t.Run(tag.String()+"/"+tc.name, func(t *testing.T) {
				wantErr(t, "read", read(tc.b), tc.want)
			})
		}
		// Every list reference of the fixed part overrun by one element
		// and pointed past the end.
		fixed := int(binary.LittleEndian.Uint16(rec[6:]))
		for off := 16; off+8 <= fixed; off += 8 {
			if tag == abi.TagPlacement && off == 16 {
				continue // the pod, a nested record: see below
			}
			for _, mut := range []func([]byte){
				func(b []byte) { putU32At(b, off+4, u32At(b, off+4)+uint32(len(b))) },
				func(b []byte) { putU32At(b, off, uint32(len(b))); putU32At(b, off+4, max(u32At(b, off+4), 1)) },
			} {
				b := bytes.Clone(rec)
				mut(b)
				wantErr(t, fmt.Sprintf("%v list at %d", tag, off), read(b), "list out of bounds")
			}
		}
	}

	t.Run("placement pod", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			mut  func([]byte)
			want string
		}{
			{"missing", func(b []byte) { putU32At(b, 16, 0); putU32At(b, 20, 0) }, "abi: placement field pod: missing or out of bounds"},
			{"out of bounds", func(b []byte) { putU32At(b, 20, u32At(b, 20)+uint32(len(b))) }, "abi: placement field pod: missing or out of bounds"},
			{"not a pod", func(b []byte) { binary.LittleEndian.PutUint16(b[u32At(b, 16)+4:], uint16(abi.TagNode)) }, "abi: pod: tag is node"},
			{"pod header beyond its reference", func(b []byte) { putU32At(b, 20, 8) }, "abi: pod: size"},
		} {
			b := readGolden(t, "placement-ids")
			tc.mut(b)
			v, err := abi.ReadPlacement(b)
			if err != nil {
				t.Fatalf("%s: ReadPlacement: %v", tc.name, err)
			}
			_, err = v.Pod()
			wantErr(t, tc.name, err, tc.want)
		}
	})
	t.Run("placement inline node", func(t *testing.T) {
		b := readGolden(t, "placement-inline")
		v, _ := abi.ReadPlacement(b)
		list := int(u32At(b, 32))
		for _, tc := range []struct {
			name string
			mut  func([]byte)
			want string
		}{
			{"out of bounds", func(b []byte) { putU32At(b, list+8+4, uint32(len(b))) }, "abi: placement field nodes: node 2 out of bounds"},
			{"empty", func(b []byte) { putU32At(b, list+8, 0); putU32At(b, list+8+4, 0) }, "abi: node: shorter than the 8-byte header (0 bytes)"},
			{"not a node", func(b []byte) {
				binary.LittleEndian.PutUint16(b[u32At(b, list+8)+4:], uint16(abi.TagPod))
			}, "abi: node: tag is pod"},
		} {
			c := bytes.Clone(b)
			tc.mut(c)
			cv, err := abi.ReadPlacement(c)
			if err != nil {
				t.Fatalf("%s: ReadPlacement: %v", tc.name, err)
			}
			if _, err := cv.Inline(1); err != nil {
				t.Errorf("%s: Inline(1), the untouched node: %v", tc.name, err)
			}
			_, err = cv.Inline(v.NumIDs() + 1)
			wantErr(t, tc.name, err, tc.want)
		}
	})
	t.Run("node sync upsert", func(t *testing.T) {
		b := readGolden(t, "nodesync-reset")
		list := int(u32At(b, 16))
		for _, tc := range []struct {
			name string
			mut  func([]byte)
			want string
		}{
			{"out of bounds", func(b []byte) { putU32At(b, list+16+8+4, uint32(len(b))) }, "abi: node sync field upserts: node 1 missing or out of bounds"},
			{"missing", func(b []byte) { putU32At(b, list+16+8, 0); putU32At(b, list+16+8+4, 0) }, "abi: node sync field upserts: node 1 missing or out of bounds"},
			{"not a node", func(b []byte) {
				binary.LittleEndian.PutUint16(b[u32At(b, list+16+8)+4:], uint16(abi.TagPod))
			}, "abi: node: tag is pod"},
		} {
			c := bytes.Clone(b)
			tc.mut(c)
			v, err := abi.ReadNodeSync(c)
			if err != nil {
				t.Fatalf("%s: ReadNodeSync: %v", tc.name, err)
			}
			if _, _, err := v.Upsert(0); err != nil {
				t.Errorf("%s: Upsert(0), the untouched node: %v", tc.name, err)
			}
			_, _, err = v.Upsert(1)
			wantErr(t, tc.name, err, tc.want)
		}
	})
}

// The fuzz tests hold the placement decoders to the properties stated at
// the top of fuzz_test.go. Run one with, e.g.,
//
//	go test ./abi -run '^$' -fuzz FuzzReadPlacement -fuzztime 20s

func FuzzReadPlacement(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadPlacement(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if v.NumIDs() < 0 || v.Len() < v.NumIDs() {
			t.Fatalf("Len() = %d, NumIDs() = %d", v.Len(), v.NumIDs())
		}
		var pod *abi.Pod
		pv, podErr := v.Pod()
		if podErr != nil {
			mustABIError(t, podErr)
		} else {
			podFromView(pv)
			pod = new(abi.Pod)
			if err := pv.Decode(pod); err != nil {
				mustABIError(t, err)
				pod = nil
			}
		}
		ids := make([]uint32, 0, v.NumIDs())
		for i := range v.NumIDs() {
			ids = append(ids, v.ID(i))
		}
		if v.ID(-1) != 0 || v.ID(v.NumIDs()) != 0 {
			t.Fatal("ID out of range is not 0")
		}
		var nodes []abi.Node
		inlineOK := true
		for i := -1; i <= v.Len(); i++ {
			nv, err := v.Inline(i)
			if i < v.NumIDs() || i == v.Len() {
				if err == nil {
					t.Fatalf("Inline(%d) of %d with %d ids: no error", i, v.Len(), v.NumIDs())
				}
				mustABIError(t, err)
				continue
			}
			if err != nil {
				mustABIError(t, err)
				inlineOK = false
				continue
			}
			viewed := nodeFromView(nv)
			var n abi.Node
			if err := nv.Decode(&n); err != nil {
				mustABIError(t, err)
				inlineOK = false
				continue
			}
			if diff := cmp.Diff(n, viewed, equateEmpty); diff != "" {
				t.Fatalf("inline node %d: view disagrees with Decode (-decoded +view):\n%s", i, diff)
			}
			nodes = append(nodes, n)
		}
		if pod == nil || !inlineOK {
			return
		}
		// Everything decoded: re-encode and read back the same.
		podRec := abi.AppendPod(nil, pod)
		inline := make([][]byte, len(nodes))
		for i := range nodes {
			inline[i] = abi.AppendNode(nil, &nodes[i])
		}
		enc := abi.AppendPlacement(nil, podRec, ids, inline)
		if n := abi.PlacementLen(podRec, ids, inline); n != len(enc) {
			t.Fatalf("PlacementLen = %d, AppendPlacement wrote %d bytes", n, len(enc))
		}
		v2, err := abi.ReadPlacement(enc)
		if err != nil {
			t.Fatal(err)
		}
		pv2, err := v2.Pod()
		if err != nil {
			t.Fatal(err)
		}
		var pod2 abi.Pod
		if err := pv2.Decode(&pod2); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*pod, pod2, equateEmpty); diff != "" {
			t.Fatalf("pod round trip (-first +second):\n%s", diff)
		}
		if v2.NumIDs() != len(ids) || v2.Len() != len(ids)+len(nodes) {
			t.Fatalf("re-encoded: %d ids, %d nodes; want %d, %d", v2.NumIDs(), v2.Len(), len(ids), len(ids)+len(nodes))
		}
		for i, id := range ids {
			if v2.ID(i) != id {
				t.Fatalf("re-encoded ID(%d) = %d, want %d", i, v2.ID(i), id)
			}
		}
		for i := range nodes {
			nv, err := v2.Inline(len(ids) + i)
			if err != nil {
				t.Fatal(err)
			}
			var n abi.Node
			if err := nv.Decode(&n); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(nodes[i], n, equateEmpty); diff != "" {
				t.Fatalf("inline node %d round trip (-first +second):\n%s", i, diff)
			}
		}
	})
}

func FuzzReadNodeSync(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadNodeSync(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		var upserts []abi.NodeUpsert
		allOK := true
		for i := -1; i <= v.NumUpserts(); i++ {
			id, nb, err := v.Upsert(i)
			if i < 0 || i == v.NumUpserts() {
				if err == nil {
					t.Fatalf("Upsert(%d) of %d: no error", i, v.NumUpserts())
				}
				mustABIError(t, err)
				continue
			}
			if err != nil {
				mustABIError(t, err)
				allOK = false
				continue
			}
			nv, err := abi.ReadNode(nb)
			if err != nil {
				t.Fatalf("Upsert(%d) returned bytes ReadNode refuses: %v", i, err)
			}
			viewed := nodeFromView(nv)
			var n abi.Node
			if err := nv.Decode(&n); err != nil {
				mustABIError(t, err)
				allOK = false
				continue
			}
			if diff := cmp.Diff(n, viewed, equateEmpty); diff != "" {
				t.Fatalf("upsert %d: view disagrees with Decode (-decoded +view):\n%s", i, diff)
			}
			upserts = append(upserts, abi.NodeUpsert{ID: id, Node: abi.AppendNode(nil, &n)})
		}
		removed := make([]uint32, 0, v.NumRemoved())
		for i := range v.NumRemoved() {
			removed = append(removed, v.Removed(i))
		}
		if v.Removed(-1) != 0 || v.Removed(v.NumRemoved()) != 0 {
			t.Fatal("Removed out of range is not 0")
		}
		if !allOK {
			return
		}
		enc := abi.AppendNodeSync(nil, v.Reset(), upserts, removed)
		if n := abi.NodeSyncLen(upserts, removed); n != len(enc) {
			t.Fatalf("NodeSyncLen = %d, AppendNodeSync wrote %d bytes", n, len(enc))
		}
		v2, err := abi.ReadNodeSync(enc)
		if err != nil {
			t.Fatal(err)
		}
		if v2.Reset() != v.Reset() || v2.NumUpserts() != len(upserts) || v2.NumRemoved() != len(removed) {
			t.Fatalf("re-encoded: reset %v, %d upserts, %d removed", v2.Reset(), v2.NumUpserts(), v2.NumRemoved())
		}
		for i, u := range upserts {
			id, nb, err := v2.Upsert(i)
			if err != nil || id != u.ID || !bytes.Equal(nb, u.Node) {
				t.Fatalf("re-encoded Upsert(%d) = %d, %v; want %d", i, id, err, u.ID)
			}
		}
		for i, id := range removed {
			if v2.Removed(i) != id {
				t.Fatalf("re-encoded Removed(%d) = %d, want %d", i, v2.Removed(i), id)
			}
		}
	})
}

// verdictCount returns the count of a verdicts record's verdicts list (the
// u32 at byte 20), the n its reader is called with in the seeds.
func verdictCount(b []byte) int {
	if len(b) < 24 {
		return 0
	}
	return int(min(u32At(b, 20), maxFuzzN))
}

func FuzzReadVerdicts(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		n := verdictCount(s)
		f.Add(s, n)
		f.Add(s, n+1)
	}
	f.Add(abi.AppendVerdicts(nil, []uint32{abi.Verdict(abi.FilterUnschedulable, 0)}, []string{strings.Repeat("é", abi.MaxReasonLen/2)}), 1)
	f.Add(abi.AppendVerdicts(nil, []uint32{abi.Verdict(abi.FilterUnresolvable, 1)}, []string{"a", ""}), 1)
	f.Add(abi.AppendVerdicts(nil, []uint32{abi.Verdict(3, 0)}, []string{"a"}), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < -1 || n > maxFuzzN {
			return
		}
		v, err := abi.ReadVerdicts(data, n)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if v.Len() != n || v.NumReasons() > abi.MaxReasons {
			t.Fatalf("accepted %d verdicts for %d nodes, %d reasons", v.Len(), n, v.NumReasons())
		}
		wire := 4 * n
		reasons := make([]string, v.NumReasons())
		for j := range reasons {
			r := v.Reason(j)
			if r == "" || len(r) > abi.MaxReasonLen || !utf8.ValidString(r) {
				t.Fatalf("bad reason %d %q accepted", j, r)
			}
			reasons[j] = r
			wire += 8 + len(r)
		}
		mustFit(t, "verdicts", wire, len(data))
		verdicts := make([]uint32, n)
		for i := range verdicts {
			code, idx := v.Code(i), v.ReasonIndex(i)
			switch {
			case code > abi.FilterUnresolvable:
				t.Fatalf("verdict %d: code %v accepted", i, code)
			case code != abi.FilterPass && (idx < 0 || idx >= len(reasons)):
				t.Fatalf("verdict %d: reason %d of %d accepted", i, idx, len(reasons))
			}
			verdicts[i] = abi.Verdict(code, idx)
		}
		if v.Reason(-1) != "" || v.Reason(len(reasons)) != "" || v.Code(n) != abi.FilterPass {
			t.Fatal("out of range reads must be empty")
		}
		v2, err := abi.ReadVerdicts(abi.AppendVerdicts(nil, verdicts, reasons), n)
		if err != nil {
			t.Fatalf("read re-encoded verdicts: %v", err)
		}
		for i := range verdicts {
			if abi.Verdict(v2.Code(i), v2.ReasonIndex(i)) != verdicts[i] {
				t.Fatalf("re-encoded verdict %d = %v/%d, want %#x", i, v2.Code(i), v2.ReasonIndex(i), verdicts[i])
			}
		}
		for j := range reasons {
			if v2.Reason(j) != reasons[j] {
				t.Fatalf("re-encoded reason %d = %q, want %q", j, v2.Reason(j), reasons[j])
			}
		}
	})
}

func FuzzDecodePlacementOptions(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := abi.DecodePlacementOptions(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if len(o.FilterEvents) > abi.MaxRegistrations {
			t.Fatalf("%d filter events accepted", len(o.FilterEvents))
		}
		for _, e := range o.FilterEvents {
			if !knownResource(e.Resource) || e.Actions == 0 || e.Actions&^abi.ActionAll != 0 {
				t.Fatalf("bad filter event %v %v accepted", e.Resource, e.Actions)
			}
		}
		mustFit(t, "filter events", 8*len(o.FilterEvents), len(data))
		o2, err := abi.DecodePlacementOptions(abi.AppendPlacementOptions(nil, &o))
		if err != nil {
			t.Fatalf("decode re-encoded options: %v", err)
		}
		if diff := cmp.Diff(o, o2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeScores(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s, len(s)/8)
	}
	f.Add(abi.AppendScores(nil, []int64{math.MinInt64, 0, math.MaxInt64}), 3)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > maxFuzzN {
			return
		}
		out := make([]int64, n)
		err := abi.DecodeScores(data, out)
		if (err == nil) != (len(data) == 8*n) {
			t.Fatalf("DecodeScores(%d bytes, %d nodes) = %v", len(data), n, err)
		}
		if err != nil {
			mustABIError(t, err)
			return
		}
		if enc := abi.AppendScores(nil, out); !bytes.Equal(enc, data) {
			t.Fatalf("AppendScores(DecodeScores(%x)) = %x", data, enc)
		}
	})
}
