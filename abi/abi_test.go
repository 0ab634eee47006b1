package abi_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

func TestResult(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ptr, n uint32
	}{
		{"empty", 0, 0},
		{"small", 1024, 32},
		{"max length", 0, math.MaxUint32},
		{"below 2 GiB", 1<<31 - 1, 1},
		{"at 2 GiB", 1 << 31, 16}, // packs to a negative value
		{"last page", math.MaxUint32 - 65535, 65535},
		{"last byte", math.MaxUint32, 1},
		{"end of memory", math.MaxUint32, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptr, n, code, ok := abi.PackResult(tc.ptr, tc.n).Unpack()
			if !ok || ptr != tc.ptr || n != tc.n || code != 0 {
				t.Errorf("PackResult(%#x, %d).Unpack() = %#x, %d, %v, %v", tc.ptr, tc.n, ptr, n, code, ok)
			}
		})
	}
	for _, c := range []abi.ErrCode{abi.ErrDecode, abi.ErrPolicy, abi.ErrUnsupported, abi.ErrBuffer, 1000, math.MaxInt32} {
		r := abi.ErrResult(c)
		if r >= 0 {
			t.Errorf("ErrResult(%v) = %d, want negative", c, r)
		}
		if ptr, n, code, ok := r.Unpack(); ok || code != c || ptr != 0 || n != 0 {
			t.Errorf("ErrResult(%d).Unpack() = %d, %d, %v, %v", c, ptr, n, code, ok)
		}
	}
	for c, want := range map[abi.ErrCode]string{
		abi.ErrDecode: "decode", abi.ErrPolicy: "policy", abi.ErrUnsupported: "unsupported", abi.ErrBuffer: "buffer", 9: "unknown",
	} {
		if got := c.String(); got != want {
			t.Errorf("ErrCode(%d).String() = %q, want %q", c, got, want)
		}
	}
	// The i64 a guest returns as a Wasm value is the same bits.
	if r := abi.Result(int64(uint64(abi.PackResult(0xdeadbeef, 7)))); r != abi.PackResult(0xdeadbeef, 7) {
		t.Error("Result does not survive a uint64 round trip")
	}
}

func TestSplitVersion(t *testing.T) {
	for _, tc := range []struct {
		v            uint32
		major, minor uint16
	}{
		{abi.Version, abi.VersionMajor, abi.VersionMinor},
		{0x0001_0000, 1, 0},
		{0x0002_0003, 2, 3},
		{0, 0, 0},
		{0xffff_ffff, 0xffff, 0xffff},
	} {
		if major, minor := abi.SplitVersion(tc.v); major != tc.major || minor != tc.minor {
			t.Errorf("SplitVersion(%#x) = %d.%d, want %d.%d", tc.v, major, minor, tc.major, tc.minor)
		}
	}
}

func TestSlot(t *testing.T) {
	want := []string{"queueSort", "backoffSort", "preEnqueue", "queueingHint", "victimOrder", "filter", "score"}
	// The placement slots need the node sync export besides their own.
	placement := map[abi.Slot][]string{
		abi.SlotFilter: {abi.ExportNodes, abi.ExportFilter},
		abi.SlotScore:  {abi.ExportNodes, abi.ExportScore},
	}
	var got []string
	for _, s := range abi.Slots {
		got = append(got, s.String())
		if exports, ok := placement[s]; s.Placement() != ok || ok && !slices.Equal(s.RequiredExports(), exports) {
			t.Errorf("%v: Placement() = %v, RequiredExports() = %v", s, s.Placement(), s.RequiredExports())
		}
		if s.Placement() && s.KeyExport() != "" {
			t.Errorf("placement slot %v has a key export %q", s, s.KeyExport())
		}
		p, ok := abi.ParseSlot(s.String())
		if !ok || p != s {
			t.Errorf("ParseSlot(%q) = %v, %v", s.String(), p, ok)
		}
		if len(s.RequiredExports()) == 0 {
			t.Errorf("%v requires no export", s)
		}
		for _, e := range append(s.RequiredExports(), s.KeyExport()) {
			if e == "" {
				continue
			}
			if _, ok := abi.ExportSignature(e); !ok || !strings.HasPrefix(e, abi.ExportPrefix) {
				t.Errorf("%v export %q has no signature or lacks the prefix", s, e)
			}
		}
	}
	if got := abi.SlotNames(); got != strings.Join(want, ", ") {
		t.Errorf("SlotNames() = %q, want %q", got, strings.Join(want, ", "))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("slot names (-want +got):\n%s", diff)
	}
	for _, name := range []string{"", "unknown", "QueueSort", "queuesort", "queueSort "} {
		if s, ok := abi.ParseSlot(name); ok {
			t.Errorf("ParseSlot(%q) = %v, true", name, s)
		}
	}
	if got := abi.Slot(200).String(); got != "unknown" {
		t.Errorf("Slot(200).String() = %q", got)
	}
	if s := abi.Slot(200); s.Placement() || s.RequiredExports() != nil || s.KeyExport() != "" {
		t.Errorf("Slot(200): Placement %v, exports %v, key %q", s.Placement(), s.RequiredExports(), s.KeyExport())
	}
	// RequiredExports returns the caller's slice.
	e := abi.SlotFilter.RequiredExports()
	e[0] = "changed"
	if abi.SlotFilter.RequiredExports()[0] != abi.ExportNodes {
		t.Error("RequiredExports returned the table's slice")
	}
}

func TestActionTypeString(t *testing.T) {
	for _, tc := range []struct {
		a    abi.ActionType
		want string
	}{
		{0, "None"},
		{abi.ActionAdd, "Add"},
		{abi.ActionAdd | abi.ActionDelete, "Add|Delete"},
		{abi.ActionUpdateNodeTaint | abi.ActionUpdateNodeAllocatable, "UpdateNodeAllocatable|UpdateNodeTaint"},
		{abi.ActionUpdateOther, "UpdateOther"},
		{abi.ActionAll, "All"},
		{abi.ActionUpdate, "UpdateNodeAllocatable|UpdateNodeLabel|UpdateNodeTaint|UpdateNodeCondition|" +
			"UpdateNodeAnnotation|UpdatePodLabel|UpdatePodScaleDown|UpdatePodToleration|" +
			"UpdatePodSchedulingGatesEliminated|UpdatePodGeneratedResourceClaim|UpdateOther|UpdatePodScaleUp|" +
			"UpdateNodePreemptionPolicy|UpdateNodeDeclaredFeature"},
		{1 << 20, "0x100000"},
		{abi.ActionAdd | 1<<20 | 1<<31, "Add|0x80100000"},
		{abi.ActionAll | 1<<16, "Add|Delete|UpdateNodeAllocatable|UpdateNodeLabel|UpdateNodeTaint|UpdateNodeCondition|" +
			"UpdateNodeAnnotation|UpdatePodLabel|UpdatePodScaleDown|UpdatePodToleration|" +
			"UpdatePodSchedulingGatesEliminated|UpdatePodGeneratedResourceClaim|UpdateOther|UpdatePodScaleUp|" +
			"UpdateNodePreemptionPolicy|UpdateNodeDeclaredFeature|0x10000"},
	} {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("ActionType(%#x).String() = %q, want %q", uint32(tc.a), got, tc.want)
		}
	}
}

func TestEventResource(t *testing.T) {
	for r, want := range map[abi.EventResource]string{
		abi.ResourcePod: "Pod", abi.ResourceUnscheduledPod: "UnscheduledPod", abi.ResourceNode: "Node",
		abi.ResourcePodGroup: "PodGroup", abi.ResourceWildcard: "*", 16: "Resource(16)",
		abi.ResourcePersistentVolume: "PersistentVolume", abi.ResourcePersistentVolumeClaim: "PersistentVolumeClaim",
		abi.ResourceStorageClass: "StorageClass", abi.ResourceCSINode: "CSINode", abi.ResourceCSIDriver: "CSIDriver",
		abi.ResourceCSIStorageCapacity: "CSIStorageCapacity", abi.ResourceVolumeAttachment: "VolumeAttachment",
		abi.ResourceResourceClaim: "ResourceClaim", abi.ResourceResourceSlice: "ResourceSlice",
		abi.ResourceDeviceClass: "DeviceClass", abi.ResourceDeviceTaintRule: "DeviceTaintRule",
	} {
		if got := r.String(); got != want {
			t.Errorf("EventResource(%d).String() = %q, want %q", r, got, want)
		}
	}
	if !abi.ResourceWildcard.Matches(abi.ResourceNode) || !abi.ResourcePod.Matches(abi.ResourcePod) ||
		abi.ResourcePod.Matches(abi.ResourceUnscheduledPod) || abi.ResourceNode.Matches(abi.ResourceWildcard) {
		t.Error("EventResource.Matches")
	}
}

// sortEdges are the int64 values where sign and width bugs hide.
var sortEdges = []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt32 - 1, math.MinInt32, -2, -1, 0, 1, 2,
	math.MaxInt32, math.MaxInt32 + 1, math.MaxInt64 - 1, math.MaxInt64}

// sortValues returns the edges and pseudo-random values (fixed seed).
func sortValues() []int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := append([]int64(nil), sortEdges...)
	for range 200 {
		vs = append(vs, int64(rng.Uint64()), rng.Int64N(2000)-1000)
	}
	return vs
}

// TestSortKeyOrder: Asc preserves int64 order and Desc reverses it, as single
// words and as the first word of a key; Less is a strict order by words.
func TestSortKeyOrder(t *testing.T) {
	vs := sortValues()
	for _, a := range vs {
		for _, b := range vs {
			if got, want := abi.Asc(a) < abi.Asc(b), a < b; got != want {
				t.Fatalf("Asc(%d) < Asc(%d) = %v, want %v", a, b, got, want)
			}
			if got, want := abi.Desc(a) < abi.Desc(b), a > b; got != want {
				t.Fatalf("Desc(%d) < Desc(%d) = %v, want %v", a, b, got, want)
			}
			ka, kb := abi.SortKey{abi.Asc(a), 7}, abi.SortKey{abi.Asc(b), 3}
			if got, want := ka.Less(kb), a < b; got != want {
				t.Fatalf("{Asc(%d), 7}.Less({Asc(%d), 3}) = %v, want %v", a, b, got, want)
			}
			ka, kb = abi.SortKey{abi.Desc(a)}, abi.SortKey{abi.Desc(b)}
			if got, want := ka.Less(kb), a > b; got != want {
				t.Fatalf("{Desc(%d)}.Less({Desc(%d)}) = %v, want %v", a, b, got, want)
			}
		}
	}

	// Priority descending, then creation time ascending, the default queue order.
	type pod struct{ prio, created int64 }
	key := func(p pod) abi.SortKey { return abi.SortKey{abi.Desc(p.prio), abi.Asc(p.created)} }
	ordered := []pod{{math.MaxInt32, -5}, {100, math.MinInt64}, {100, -1}, {100, 0}, {0, 3}, {-1, 1}, {math.MinInt32, math.MaxInt64}}
	for i := range ordered {
		for j := range ordered {
			if got, want := key(ordered[i]).Less(key(ordered[j])), i < j; got != want {
				t.Errorf("key(%v).Less(key(%v)) = %v, want %v", ordered[i], ordered[j], got, want)
			}
		}
	}
	// Later words break ties only.
	if !(abi.SortKey{0, 0, 0, 1}).Less(abi.SortKey{0, 0, 1, 0}) || (abi.SortKey{1}).Less(abi.SortKey{0, ^uint64(0)}) {
		t.Error("Less does not compare words in order")
	}
}

func TestSortKeyWire(t *testing.T) {
	k := abi.SortKey{abi.Desc(-5), abi.Asc(-1000), 0, math.MaxUint64}
	var b [abi.SortKeySize]byte
	abi.PutSortKey(b[:], k)
	if binary.LittleEndian.Uint64(b[8:]) != abi.Asc(-1000) {
		t.Errorf("word 1 is not little-endian at byte 8: %x", b)
	}
	got, err := abi.DecodeSortKey(b[:])
	if err != nil || got != k {
		t.Errorf("DecodeSortKey(PutSortKey(%x)) = %x, %v", k, got, err)
	}
	for _, n := range []int{0, 31, 33, 64} {
		_, err := abi.DecodeSortKey(make([]byte, n))
		if err == nil || err.Error() != "abi: sort key: want 32 bytes, got "+strconv.Itoa(n) {
			t.Errorf("DecodeSortKey(%d bytes) error = %v", n, err)
		}
	}
}

func TestTagString(t *testing.T) {
	for tag, want := range map[abi.Tag]string{
		abi.TagPod: "pod", abi.TagHintBatch: "hint batch", abi.TagRegistrations: "registrations", 0: "tag 0", 99: "tag 99",
		abi.TagStorage: "storage object", abi.TagPlacement: "placement", abi.TagNodeSync: "node sync",
		abi.TagVerdicts: "verdicts", abi.TagPlacementOptions: "placement options", abi.TagPlacementOptions + 1: "tag 14",
	} {
		if got := tag.String(); got != want {
			t.Errorf("Tag(%d).String() = %q, want %q", tag, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  abi.Error
		want string
	}{
		{abi.Error{Record: abi.TagPod, Field: "labels", Problem: "list out of bounds"}, "abi: pod field labels: list out of bounds"},
		{abi.Error{Record: abi.TagGate, Problem: "tag is pod"}, "abi: gate: tag is pod"},
		{abi.Error{Field: "hints", Problem: "bad"}, "abi: hints: bad"},
		{abi.Error{Problem: "shorter than the 8-byte header (3 bytes)"}, "abi: shorter than the 8-byte header (3 bytes)"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestReadRecordRejects(t *testing.T) {
	pod := readGolden(t, "pod-minimal")
	header := func(size uint32, tag abi.Tag, fixed uint16) []byte {
		b := bytes.Clone(pod)
		binary.LittleEndian.PutUint32(b, size)
		binary.LittleEndian.PutUint16(b[4:], uint16(tag))
		binary.LittleEndian.PutUint16(b[6:], fixed)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "shorter than the 8-byte header (0 bytes)"},
		{"short", pod[:7], "shorter than the 8-byte header (7 bytes)"},
		{"wrong tag", header(uint32(len(pod)), abi.TagNode, 184), "abi: pod: tag is node"},
		{"unknown tag", header(uint32(len(pod)), 42, 184), "abi: pod: tag is tag 42"},
		{"size beyond", header(uint32(len(pod))+1, abi.TagPod, 184), "exceeds the 336 bytes available"},
		{"fixed too small", header(uint32(len(pod)), abi.TagPod, 7), "fixed part length 7 outside [8, size]"},
		{"fixed beyond size", header(100, abi.TagPod, 101), "fixed part length 101 outside [8, size]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := abi.ReadPod(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadPod: error %v, want %q", err, tc.want)
			}
		})
	}
	// A size shorter than the bytes is fine: the rest is the next record's.
	two := append(bytes.Clone(pod), readGolden(t, "pod-full")...)
	v, err := abi.ReadPod(two)
	if err != nil || len(v.Bytes()) != len(pod) || v.Name() != "web-0" {
		t.Errorf("ReadPod of two records: %d bytes, %q, %v", len(v.Bytes()), v.Name(), err)
	}
	if tag, err := abi.RecordTag(readGolden(t, "gate-wait")); tag != abi.TagGate || err != nil {
		t.Errorf("RecordTag(gate) = %v, %v", tag, err)
	}
}

func gateRecord(code abi.GateCode, plugin, reason string) []byte {
	return abi.AppendGate(nil, &abi.Gate{Code: code, Plugin: plugin, Reason: reason})
}

func TestDecodeGate(t *testing.T) {
	long := strings.Repeat("x", abi.MaxReasonLen)
	outOfBounds := gateRecord(abi.GateWait, "P", "r")
	binary.LittleEndian.PutUint32(outOfBounds[24+4:], 1000) // reason length
	for _, tc := range []struct {
		name    string
		b       []byte
		want    abi.Gate
		wantErr string
	}{
		{name: "admit", b: gateRecord(abi.GateAdmit, "", ""), want: abi.Gate{}},
		{name: "admit with reason", b: gateRecord(abi.GateAdmit, "P", "fine"), want: abi.Gate{Plugin: "P", Reason: "fine"}},
		{name: "wait", b: gateRecord(abi.GateWait, "P", ""), want: abi.Gate{Code: abi.GateWait, Plugin: "P"}},
		{name: "longest reason", b: gateRecord(abi.GateWait, long, long), want: abi.Gate{Code: abi.GateWait, Plugin: long, Reason: long}},
		{name: "unknown code", b: gateRecord(2, "P", ""), wantErr: "abi: gate field code: unknown code 2"},
		{name: "huge code", b: gateRecord(math.MaxUint32, "P", ""), wantErr: "abi: gate field code: unknown code"},
		{name: "wait without plugin", b: gateRecord(abi.GateWait, "", "why"), wantErr: "abi: gate field plugin: a gated pod needs the gating plugin's name"},
		{name: "plugin too long", b: gateRecord(abi.GateWait, long+"x", ""), wantErr: "abi: gate field plugin: longer than 1024 bytes"},
		{name: "reason too long", b: gateRecord(abi.GateWait, "P", long+"x"), wantErr: "abi: gate field reason: longer than 1024 bytes"},
		{name: "plugin not UTF-8", b: gateRecord(abi.GateWait, "P\xff", ""), wantErr: "abi: gate field plugin: not valid UTF-8"},
		{name: "reason not UTF-8", b: gateRecord(abi.GateAdmit, "", "half \xe2\x80"), wantErr: "abi: gate field reason: not valid UTF-8"},
		{name: "reason out of bounds", b: outOfBounds, wantErr: "abi: gate field reason: string out of bounds"},
		{name: "not a gate", b: readGolden(t, "pod-minimal"), wantErr: "abi: gate: tag is pod"},
		{name: "truncated", b: gateRecord(abi.GateWait, "P", "r")[:20], wantErr: "exceeds the 20 bytes available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := abi.Gate{Code: 9, Plugin: "stale", Reason: "stale"}
			err := abi.DecodeGate(tc.b, &got)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) && !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("DecodeGate: error %v, want %q", err, tc.wantErr)
				}
				if got.Plugin != "stale" {
					t.Errorf("DecodeGate wrote dst before failing: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeGate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeGate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRegistrations(t *testing.T) {
	reg := func(plugin string, r abi.EventResource, a abi.ActionType) abi.Registration {
		return abi.Registration{Plugin: plugin, Resource: r, Actions: a}
	}
	many := func(n int) []abi.Registration {
		regs := make([]abi.Registration, n)
		for i := range regs {
			regs[i] = reg("P", abi.ResourceNode, abi.ActionAdd)
		}
		return regs
	}
	outOfBounds := abi.AppendRegistrations(nil, abitest.Registrations())
	binary.LittleEndian.PutUint32(outOfBounds[8+4:], 1000) // count
	for _, tc := range []struct {
		name    string
		regs    []abi.Registration
		b       []byte // instead of regs
		wantErr string
	}{
		{name: "none"},
		{name: "all resources", regs: abitest.Registrations()},
		{name: "most", regs: many(abi.MaxRegistrations)},
		{name: "too many", regs: many(abi.MaxRegistrations + 1), wantErr: "abi: registrations: 257 registrations, at most 256 allowed"},
		{name: "empty plugin", regs: []abi.Registration{reg("P", abi.ResourcePod, abi.ActionAdd), reg("", abi.ResourcePod, abi.ActionAdd)},
			wantErr: "abi: registrations field registration 1: empty plugin name"},
		{name: "plugin too long", regs: []abi.Registration{reg(strings.Repeat("p", abi.MaxReasonLen+1), abi.ResourcePod, abi.ActionAdd)},
			wantErr: "abi: registrations field registration 0: longer than 1024 bytes"},
		{name: "plugin not UTF-8", regs: []abi.Registration{reg("\xc3", abi.ResourcePod, abi.ActionAdd)},
			wantErr: "abi: registrations field registration 0: not valid UTF-8"},
		{name: "resource 0", regs: []abi.Registration{reg("P", 0, abi.ActionAdd)},
			wantErr: "abi: registrations field registration 0: unknown resource Resource(0)"},
		{name: "resource 16", regs: []abi.Registration{reg("P", 16, abi.ActionAdd)},
			wantErr: "abi: registrations field registration 0: unknown resource Resource(16)"},
		{name: "no actions", regs: []abi.Registration{reg("P", abi.ResourceNode, 0)},
			wantErr: "abi: registrations field registration 0: invalid actions None"},
		{name: "unknown action", regs: []abi.Registration{reg("P", abi.ResourceNode, abi.ActionAdd|1<<20)},
			wantErr: "abi: registrations field registration 0: invalid actions Add|0x100000"},
		{name: "list out of bounds", b: outOfBounds, wantErr: "abi: registrations field registrations: list out of bounds"},
		{name: "not registrations", b: readGolden(t, "gate-wait"), wantErr: "abi: registrations: tag is gate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if b == nil {
				b = abi.AppendRegistrations(nil, tc.regs)
			}
			got, err := abi.DecodeRegistrations(b)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("DecodeRegistrations: error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeRegistrations: %v", err)
			}
			if diff := cmp.Diff(tc.regs, got, equateEmpty); diff != "" {
				t.Errorf("DecodeRegistrations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeOrder(t *testing.T) {
	order := func(idx ...uint32) []byte { return abi.AppendOrder(nil, idx) }
	for _, tc := range []struct {
		name    string
		b       []byte
		n       int
		dst     int // len of dst and seen; n when 0
		wantErr string
	}{
		{name: "empty", b: nil, n: 0},
		{name: "one", b: order(0), n: 1},
		{name: "permutation", b: order(4, 0, 3, 1, 2), n: 5},
		{name: "larger dst", b: order(1, 0), n: 2, dst: 10},
		{name: "duplicate", b: order(0, 2, 0), n: 3, wantErr: "abi: victim order: index 0 appears twice"},
		{name: "out of range", b: order(0, 3, 1), n: 3, wantErr: "abi: victim order: position 1: index 3 out of range [0, 3)"},
		{name: "huge index", b: order(math.MaxUint32), n: 1, wantErr: "abi: victim order: position 0: index 4294967295 out of range [0, 1)"},
		{name: "too short", b: order(0, 1), n: 3, wantErr: "abi: victim order: want 3 u32 indices (12 bytes), got 8 bytes"},
		{name: "too long", b: order(0, 1, 2, 3), n: 3, wantErr: "abi: victim order: want 3 u32 indices (12 bytes), got 16 bytes"},
		{name: "not whole u32s", b: []byte{0, 0, 0, 0, 1}, n: 1, wantErr: "abi: victim order: want 1 u32 indices (4 bytes), got 5 bytes"},
		{name: "missing order", b: nil, n: 2, wantErr: "abi: victim order: want 2 u32 indices (8 bytes), got 0 bytes"},
		{name: "negative n", b: nil, n: -1, wantErr: "abi: victim order: want -1 u32 indices"},
		{name: "dst too small", b: order(1, 0), n: 2, dst: 1, wantErr: "abi: victim order: destination too small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := tc.dst
			if size == 0 {
				size = max(tc.n, 0)
			}
			dst, seen := make([]uint32, size), make([]bool, size)
			for i := range seen {
				seen[i] = true // stale scratch must not matter
			}
			err := abi.DecodeOrder(tc.b, tc.n, dst, seen)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("DecodeOrder: error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeOrder: %v", err)
			}
			if got := abi.AppendOrder(nil, dst[:tc.n]); !bytes.Equal(got, tc.b) {
				t.Errorf("DecodeOrder wrote %v", dst[:tc.n])
			}
		})
	}
}

func TestCheckHints(t *testing.T) {
	for _, tc := range []struct {
		b       []byte
		n       int
		wantErr string
	}{
		{nil, 0, ""},
		{[]byte{byte(abi.HintSkip), byte(abi.HintQueue), byte(abi.HintError)}, 3, ""},
		{[]byte{1, 1}, 3, "abi: hints: want one byte per pod (3), got 2"},
		{[]byte{1, 1, 1, 1}, 3, "abi: hints: want one byte per pod (3), got 4"},
		{nil, 1, "abi: hints: want one byte per pod (1), got 0"},
		{[]byte{0, 3}, 2, "abi: hints: pod 1: invalid hint 3"},
		{[]byte{255}, 1, "abi: hints: pod 0: invalid hint 255"},
	} {
		err := abi.CheckHints(tc.b, tc.n)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("CheckHints(%v, %d) = %q, want %q", tc.b, tc.n, got, tc.wantErr)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = abi.CheckHints([]byte{0, 1, 2, 1}, 4) }); allocs != 0 {
		t.Errorf("CheckHints allocates %v times", allocs)
	}
}

// TestExportSignatures: every export name the contract defines has a
// signature, and the required ones are listed.
func TestExportSignatures(t *testing.T) {
	for _, name := range abi.RequiredExports {
		if _, ok := abi.ExportSignature(name); !ok {
			t.Errorf("required export %q has no signature", name)
		}
	}
	if sig, ok := abi.ExportSignature(abi.ExportBuffer); !ok || len(sig.Params) != 1 || sig.Params[0] != abi.I32 || sig.Results[0] != abi.I32 {
		t.Errorf("%s signature %+v", abi.ExportBuffer, sig)
	}
	if _, ok := abi.ExportSignature("wasmsched_nope"); ok {
		t.Error("unknown export has a signature")
	}
	// The placement exports (minor 3).
	i32, i64 := []abi.ValType{abi.I32}, []abi.ValType{abi.I64}
	for _, tc := range []struct {
		name            string
		params, results []abi.ValType
	}{
		{abi.ExportNodes, i32, i32},
		{abi.ExportFilter, i32, i64},
		{abi.ExportScore, i32, i64},
		{abi.ExportPreFilter, i32, i32},
		{abi.ExportPreScore, i32, i32},
		{abi.ExportPlacementOptions, nil, i64},
	} {
		sig, ok := abi.ExportSignature(tc.name)
		if !ok || !slices.Equal(sig.Params, tc.params) || !slices.Equal(sig.Results, tc.results) || !strings.HasPrefix(tc.name, abi.ExportPrefix) {
			t.Errorf("ExportSignature(%q) = %v -> %v, %v; want %v -> %v", tc.name, sig.Params, sig.Results, ok, tc.params, tc.results)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
