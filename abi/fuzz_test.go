package abi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

// The fuzz tests hold every decoder of untrusted bytes to four properties:
//
//   - it never panics, and its errors are *abi.Error;
//   - on any input that passes the Read* header check every view accessor can
//     be called (all of them, on every list index and just outside, nested
//     lists included) and agrees with itself (see views_test.go);
//   - when Decode succeeds, the view reads what Decode returned, and encoding
//     the result and decoding it again yields an equal value;
//   - Decode copies no more than the record holds: the wire size of the
//     decoded value (strings, list elements, nested records) is at most the
//     record's size, so a few KiB cannot turn into hundreds of MiB.
//
// Seeds are the golden vectors plus truncations, bit flips and corrupted
// references of each (goldenSeeds). Run one with, e.g.,
//
//	go test ./abi -run '^$' -fuzz FuzzDecodePod -fuzztime 20s

// goldenSeeds returns every golden vector and deterministic corruptions of it.
func goldenSeeds(f *testing.F) [][]byte {
	f.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.bin"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden vectors in %s (%v): run go test ./abi -run TestGolden -update", goldenDir, err)
	}
	var seeds [][]byte
	add := func(b []byte) { seeds = append(seeds, b) }
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
		for _, n := range []int{len(b) - 1, len(b) / 2, 8, 7} {
			if n >= 0 && n < len(b) {
				add(slices.Clone(b[:n]))
			}
		}
		for _, p := range []int{0, 4, 6, 8, 12, 16, len(b) / 2, len(b) - 1} {
			if p >= 0 && p < len(b) {
				c := slices.Clone(b)
				c[p] ^= 0x80
				add(c)
			}
		}
		if len(b) < 8 {
			continue
		}
		fixed := int(binary.LittleEndian.Uint16(b[6:]))
		if fixed > len(b) {
			continue
		}
		// An older minor (shorter fixed part) and a shortened one.
		for _, fx := range []int{8, fixed - 8} {
			if fx >= 8 {
				c := slices.Clone(b)
				binary.LittleEndian.PutUint16(c[6:], uint16(fx))
				add(c)
			}
		}
		// Every 8-byte slot of the fixed part read as a reference: overrun it
		// by one element, and alias it onto the header.
		for off := 8; off+8 <= fixed; off += 8 {
			c := slices.Clone(b)
			binary.LittleEndian.PutUint32(c[off+4:], binary.LittleEndian.Uint32(c[off+4:])+1)
			add(c)
			c = slices.Clone(b)
			binary.LittleEndian.PutUint32(c[off:], 0)
			add(c)
		}
	}
	return seeds
}

func addSeeds(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s)
	}
}

// mustABIError fails unless err is an *abi.Error with a message.
func mustABIError(t *testing.T, err error) {
	t.Helper()
	var e *abi.Error
	if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "abi: ") {
		t.Fatalf("error %T %q is not an *abi.Error", err, err)
	}
}

// mustFit fails when a decoded value claims more bytes than its record holds.
func mustFit(t *testing.T, what string, wire, record int) {
	t.Helper()
	if wire > record {
		t.Fatalf("%s: decoded %d wire bytes out of a %d-byte record", what, wire, record)
	}
}

func FuzzDecodePod(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadPod(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		viewed := podFromView(v)
		var p abi.Pod
		if err := v.Decode(&p); err != nil {
			mustABIError(t, err)
			return
		}
		mustFit(t, "pod", podWire(&p), len(v.Bytes()))
		if diff := cmp.Diff(p, viewed, equateEmpty); diff != "" {
			t.Fatalf("view disagrees with Decode (-decoded +view):\n%s", diff)
		}
		// Decoding into a used value gives the same result.
		dirty := fullPodForReuse()
		if err := v.Decode(&dirty); err != nil {
			t.Fatalf("Decode into a used Pod: %v", err)
		}
		if diff := cmp.Diff(p, dirty, equateEmpty); diff != "" {
			t.Fatalf("Decode into a used Pod (-fresh +reused):\n%s", diff)
		}
		enc := abi.AppendPod(nil, &p)
		if want := podFixedSize + podWire(&p); len(enc) != want {
			t.Fatalf("AppendPod wrote %d bytes, want %d + %d", len(enc), podFixedSize, podWire(&p))
		}
		var p2 abi.Pod
		if err := decodePod(enc, &p2); err != nil {
			t.Fatalf("decode re-encoded pod: %v", err)
		}
		if diff := cmp.Diff(p, p2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeNode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadNode(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		viewed := nodeFromView(v)
		var n abi.Node
		if err := v.Decode(&n); err != nil {
			mustABIError(t, err)
			return
		}
		mustFit(t, "node", nodeWire(&n), len(v.Bytes()))
		if diff := cmp.Diff(n, viewed, equateEmpty); diff != "" {
			t.Fatalf("view disagrees with Decode (-decoded +view):\n%s", diff)
		}
		enc := abi.AppendNode(nil, &n)
		if want := nodeFixedSize + nodeWire(&n); len(enc) != want {
			t.Fatalf("AppendNode wrote %d bytes, want %d + %d", len(enc), nodeFixedSize, nodeWire(&n))
		}
		v2, err := abi.ReadNode(enc)
		if err != nil {
			t.Fatal(err)
		}
		var n2 abi.Node
		if err := v2.Decode(&n2); err != nil {
			t.Fatalf("decode re-encoded node: %v", err)
		}
		if diff := cmp.Diff(n, n2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodePodGroup(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadPodGroup(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		viewed := podGroupFromView(v)
		var g abi.PodGroup
		if err := v.Decode(&g); err != nil {
			mustABIError(t, err)
			return
		}
		mustFit(t, "pod group", len(g.Namespace)+len(g.Name), len(v.Bytes()))
		if diff := cmp.Diff(g, viewed); diff != "" {
			t.Fatalf("view disagrees with Decode (-decoded +view):\n%s", diff)
		}
		v2, err := abi.ReadPodGroup(abi.AppendPodGroup(nil, &g))
		if err != nil {
			t.Fatal(err)
		}
		var g2 abi.PodGroup
		if err := v2.Decode(&g2); err != nil {
			t.Fatalf("decode re-encoded group: %v", err)
		}
		if diff := cmp.Diff(g, g2); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeStorage(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadStorage(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		viewed := storageFromView(v)
		var o abi.StorageObject
		if err := v.Decode(&o); err != nil {
			mustABIError(t, err)
			return
		}
		wire := len(o.Namespace) + len(o.Name) + len(o.StorageClass) + len(o.VolumeName) + len(o.ClaimNamespace) +
			len(o.ClaimName) + len(o.NodeName) + len(o.Driver) + len(o.MigratedPlugins) + kvWire(o.Labels) +
			len(o.Pool) + strsWire(o.DeviceClasses)
		for _, tm := range o.Topology {
			wire += 16
			for _, rs := range [][]abi.Requirement{tm.MatchExpressions, tm.MatchFields} {
				for _, r := range rs {
					wire += 24 + len(r.Key) + strsWire(r.Values)
				}
			}
		}
		for _, d := range o.Drivers {
			wire += 16 + len(d.Name)
		}
		mustFit(t, "storage object", wire, len(v.Bytes()))
		if diff := cmp.Diff(o, viewed, equateEmpty); diff != "" {
			t.Fatalf("view disagrees with Decode (-decoded +view):\n%s", diff)
		}
		// Decoding into a used value gives the same result.
		dirty := abitest.FullStorage()
		if err := v.Decode(&dirty); err != nil {
			t.Fatalf("Decode into a used StorageObject: %v", err)
		}
		if diff := cmp.Diff(o, dirty, equateEmpty); diff != "" {
			t.Fatalf("Decode into a used StorageObject (-fresh +reused):\n%s", diff)
		}
		enc := abi.AppendStorage(nil, &o)
		if want := 144 + wire; len(enc) != want {
			t.Fatalf("AppendStorage wrote %d bytes, want 144 + %d", len(enc), wire)
		}
		v2, err := abi.ReadStorage(enc)
		if err != nil {
			t.Fatal(err)
		}
		var o2 abi.StorageObject
		if err := v2.Decode(&o2); err != nil {
			t.Fatalf("decode re-encoded storage object: %v", err)
		}
		if diff := cmp.Diff(o, o2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadEvent(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		eventObjects(v)
		var e abi.Event
		if err := v.Decode(&e); err != nil {
			mustABIError(t, err)
			return
		}
		mustFit(t, "event", len(e.Old)+len(e.New), len(v.Bytes()))
		if !bytes.Equal(e.Old, v.OldBytes()) || !bytes.Equal(e.New, v.NewBytes()) {
			t.Fatal("Decode's objects differ from OldBytes/NewBytes")
		}
		v2, err := abi.ReadEvent(abi.AppendEvent(nil, &e))
		if err != nil {
			t.Fatal(err)
		}
		var e2 abi.Event
		if err := v2.Decode(&e2); err != nil {
			t.Fatalf("decode re-encoded event: %v", err)
		}
		if diff := cmp.Diff(e, e2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// hintBatch is a decoded HintBatch (the record has views only).
type hintBatch struct {
	Event abi.Event
	Pods  []abi.Pod
}

// decodeHintBatch decodes what a guest reads of a batch.
func decodeHintBatch(v abi.HintBatchView) (hintBatch, error) {
	var h hintBatch
	ev, err := v.Event()
	if err != nil {
		return h, err
	}
	if err := ev.Decode(&h.Event); err != nil {
		return h, err
	}
	for i := 0; i < v.Len(); i++ {
		pv, err := v.Pod(i)
		if err != nil {
			return h, err
		}
		var p abi.Pod
		if err := pv.Decode(&p); err != nil {
			return h, err
		}
		h.Pods = append(h.Pods, p)
	}
	return h, nil
}

func FuzzDecodeHintBatch(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadHintBatch(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if ev, err := v.Event(); err == nil {
			eventObjects(ev)
		} else {
			mustABIError(t, err)
		}
		for i := -1; i <= v.Len(); i++ {
			pv, err := v.Pod(i)
			if err != nil { // out of range, or a malformed pod
				mustABIError(t, err)
				continue
			}
			if i < 0 || i >= v.Len() {
				t.Fatalf("Pod(%d) of %d: no error", i, v.Len())
			}
			podFromView(pv)
		}
		h, err := decodeHintBatch(v)
		if err != nil {
			mustABIError(t, err)
			return
		}
		pods := make([][]byte, len(h.Pods))
		for i := range h.Pods {
			pods[i] = abi.AppendPod(nil, &h.Pods[i])
		}
		v2, err := abi.ReadHintBatch(abi.AppendHintBatch(nil, abi.AppendEvent(nil, &h.Event), pods))
		if err != nil {
			t.Fatal(err)
		}
		h2, err := decodeHintBatch(v2)
		if err != nil {
			t.Fatalf("decode re-encoded batch: %v", err)
		}
		if diff := cmp.Diff(h, h2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// victimBatch is a decoded VictimBatch.
type victimBatch struct {
	Preemptor *abi.Pod
	Victims   []abi.Victim
}

func decodeVictimBatch(v abi.VictimBatchView) (victimBatch, error) {
	b := victimBatch{Victims: v.Decode(nil)}
	if pv, ok := v.Preemptor(); ok {
		b.Preemptor = new(abi.Pod)
		if err := pv.Decode(b.Preemptor); err != nil {
			return b, err
		}
	}
	return b, nil
}

func FuzzDecodeVictimBatch(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := abi.ReadVictimBatch(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if pv, ok := v.Preemptor(); ok {
			podFromView(pv)
		}
		var viewed []abi.Victim
		for i := -1; i <= v.Len(); i++ {
			x := v.At(i)
			if i < 0 || i == v.Len() {
				if x != (abi.Victim{}) {
					t.Fatalf("At(%d) of %d = %+v", i, v.Len(), x)
				}
				continue
			}
			viewed = append(viewed, x)
		}
		// ReadVictimBatch checked everything Decode copies.
		victims := v.Decode(nil)
		wire := 0
		for _, x := range victims {
			wire += 48 + len(x.UID) + len(x.Namespace) + len(x.Name)
		}
		mustFit(t, "victims", wire, int(binary.LittleEndian.Uint32(data))) // record size
		if diff := cmp.Diff(viewed, victims, equateEmpty); diff != "" {
			t.Fatalf("Decode disagrees with At (-view +decoded):\n%s", diff)
		}
		b, err := decodeVictimBatch(v)
		if err != nil {
			mustABIError(t, err)
			return
		}
		var pre []byte
		if b.Preemptor != nil {
			pre = abi.AppendPod(nil, b.Preemptor)
		}
		v2, err := abi.ReadVictimBatch(abi.AppendVictimBatch(nil, pre, b.Victims))
		if err != nil {
			t.Fatal(err)
		}
		b2, err := decodeVictimBatch(v2)
		if err != nil {
			t.Fatalf("decode re-encoded batch: %v", err)
		}
		if diff := cmp.Diff(b, b2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeGate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var g abi.Gate
		if err := abi.DecodeGate(data, &g); err != nil {
			mustABIError(t, err)
			return
		}
		if g.Code > abi.GateWait || (g.Code == abi.GateWait && g.Plugin == "") ||
			len(g.Plugin) > abi.MaxReasonLen || len(g.Reason) > abi.MaxReasonLen ||
			!utf8.ValidString(g.Plugin) || !utf8.ValidString(g.Reason) {
			t.Fatalf("DecodeGate accepted an invalid gate %+v", g)
		}
		var g2 abi.Gate
		if err := abi.DecodeGate(abi.AppendGate(nil, &g), &g2); err != nil {
			t.Fatalf("decode re-encoded gate: %v", err)
		}
		if diff := cmp.Diff(g, g2); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func FuzzDecodeRegistrations(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		regs, err := abi.DecodeRegistrations(data)
		if err != nil {
			mustABIError(t, err)
			return
		}
		if len(regs) > abi.MaxRegistrations {
			t.Fatalf("%d registrations accepted", len(regs))
		}
		wire := 0
		for _, r := range regs {
			wire += 16 + len(r.Plugin)
			switch {
			case r.Plugin == "", len(r.Plugin) > abi.MaxReasonLen, !utf8.ValidString(r.Plugin):
				t.Fatalf("bad plugin name %q accepted", r.Plugin)
			case r.Actions == 0, r.Actions&^abi.ActionAll != 0:
				t.Fatalf("bad actions %v accepted", r.Actions)
			}
			if !knownResource(r.Resource) {
				t.Fatalf("bad resource %v accepted", r.Resource)
			}
		}
		mustFit(t, "registrations", wire, len(data))
		regs2, err := abi.DecodeRegistrations(abi.AppendRegistrations(nil, regs))
		if err != nil {
			t.Fatalf("decode re-encoded registrations: %v", err)
		}
		if diff := cmp.Diff(regs, regs2, equateEmpty); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// maxFuzzN bounds the n of the order and hint checks, which size buffers by it.
const maxFuzzN = 1 << 12

func FuzzDecodeOrder(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s, len(s)/4)
		f.Add(s, len(s)/4+1)
	}
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > maxFuzzN {
			return
		}
		dst, seen := make([]uint32, n), make([]bool, n)
		if err := abi.DecodeOrder(data, n, dst, seen); err != nil {
			mustABIError(t, err)
			return
		}
		sorted := slices.Sorted(slices.Values(dst))
		for i, x := range sorted {
			if x != uint32(i) {
				t.Fatalf("DecodeOrder accepted %v, not a permutation of 0..%d", dst, n-1)
			}
		}
		if enc := abi.AppendOrder(nil, dst); !bytes.Equal(enc, data) {
			t.Fatalf("AppendOrder(%v) = %x, want %x", dst, enc, data)
		}
		// Too small a destination is refused, not a panic.
		if n > 0 {
			if err := abi.DecodeOrder(data, n, dst[:n-1], seen); err == nil {
				t.Fatal("short dst accepted")
			}
		}
	})
}

func FuzzDecodeSortKey(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := abi.DecodeSortKey(data)
		if (err == nil) != (len(data) == abi.SortKeySize) {
			t.Fatalf("DecodeSortKey of %d bytes: error %v", len(data), err)
		}
		if err != nil {
			mustABIError(t, err)
		} else {
			var w [abi.SortKeySize]byte
			abi.PutSortKey(w[:], k)
			if !bytes.Equal(w[:], data) {
				t.Fatalf("PutSortKey(DecodeSortKey(%x)) = %x", data, w)
			}
			if k.Less(k) {
				t.Fatal("k.Less(k)")
			}
		}
		// Two keys from the first 64 bytes: Less is a strict order by words.
		if len(data) >= 2*abi.SortKeySize {
			a, errA := abi.DecodeSortKey(data[:abi.SortKeySize])
			b, errB := abi.DecodeSortKey(data[abi.SortKeySize : 2*abi.SortKeySize])
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			c := slices.Compare(a[:], b[:])
			if a.Less(b) != (c < 0) || b.Less(a) != (c > 0) {
				t.Fatalf("Less(%x, %x) disagrees with word order %d", a, b, c)
			}
		}
	})
}

func FuzzCheckHints(f *testing.F) {
	for _, s := range goldenSeeds(f) {
		f.Add(s, len(s))
	}
	f.Add([]byte{0, 1, 2}, 3)
	f.Add([]byte{0, 1, 3}, 3)
	f.Add([]byte{}, 0)
	f.Add([]byte{1}, 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < -1 || n > maxFuzzN {
			return
		}
		err := abi.CheckHints(data, n)
		valid := len(data) == n
		for _, h := range data {
			valid = valid && abi.Hint(h) <= abi.HintError
		}
		if (err == nil) != valid {
			t.Fatalf("CheckHints(%x, %d) = %v, want valid=%v", data, n, err, valid)
		}
		if err != nil {
			mustABIError(t, err)
		}
	})
}

func decodePod(b []byte, p *abi.Pod) error {
	v, err := abi.ReadPod(b)
	if err != nil {
		return err
	}
	return v.Decode(p)
}

// fullPodForReuse is a Pod with every slice and string set, to decode into.
func fullPodForReuse() abi.Pod {
	var p abi.Pod
	if err := decodePod(goldenPodFull, &p); err != nil {
		panic(err)
	}
	return p
}

var goldenPodFull = func() []byte {
	b, err := os.ReadFile(goldenPath("pod-full"))
	if err != nil {
		return nil // TestGolden reports it
	}
	return b
}()

// knownResource reports whether r is a resource a module may register for
// (or name in its placement options): every named kind and the wildcard.
func knownResource(r abi.EventResource) bool {
	switch r {
	case abi.ResourcePod, abi.ResourceUnscheduledPod, abi.ResourceNode, abi.ResourcePodGroup, abi.ResourceWildcard,
		abi.ResourcePersistentVolume, abi.ResourcePersistentVolumeClaim, abi.ResourceStorageClass, abi.ResourceCSINode,
		abi.ResourceCSIDriver, abi.ResourceCSIStorageCapacity, abi.ResourceVolumeAttachment,
		abi.ResourceResourceClaim, abi.ResourceResourceSlice, abi.ResourceDeviceClass, abi.ResourceDeviceTaintRule:
		return true
	}
	return false
}

// The fixed parts of today's pod and node records (ABI minor 4): what
// AppendPod and AppendNode write before the variable area.
const (
	podFixedSize  = 288
	nodeFixedSize = 64
)

// podWire is the wire size of p's variable area: every string, list element
// and nested list. Appending p writes exactly podFixedSize bytes plus this.
func podWire(p *abi.Pod) int {
	n := len(p.UID) + len(p.Namespace) + len(p.Name) + len(p.NodeName) + len(p.Group.Name)
	n += kvWire(p.Labels) + kvWire(p.NodeSelector) + quantityWire(p.Requests)
	n += strsWire(p.UnschedulablePlugins) + strsWire(p.PendingPlugins) + strsWire(p.SchedulingGates)
	for _, t := range p.Tolerations {
		n += 24 + len(t.Key) + len(t.Value)
	}
	for _, h := range p.HostPorts {
		n += 16 + len(h.HostIP)
	}
	for _, t := range p.RequiredAffinity {
		n += 16
		for _, rs := range [][]abi.Requirement{t.MatchExpressions, t.MatchFields} {
			for _, r := range rs {
				n += 24 + len(r.Key) + strsWire(r.Values)
			}
		}
	}
	n += strsWire(p.Claims) + strsWire(p.EphemeralClaims) + strsWire(p.VolumeDrivers) + strsWire(p.ResourceClaims)
	n += kvWire(p.NamespaceLabels) + len(p.OwnerKind)
	for _, ts := range [][]abi.PodAffinityTerm{p.PodAffinity, p.PodAntiAffinity, p.PreferredPodAffinity, p.PreferredPodAntiAffinity} {
		for _, t := range ts {
			n += 40 + requirementsWire(t.Selector) + strsWire(t.Namespaces) + requirementsWire(t.NamespaceSelector) + len(t.TopologyKey)
		}
	}
	for _, c := range p.SpreadConstraints {
		n += 48 + requirementsWire(c.Selector) + len(c.TopologyKey) + strsWire(c.MatchLabelKeys)
	}
	for _, t := range p.AddedAffinity {
		n += 16 + requirementsWire(t.MatchExpressions) + requirementsWire(t.MatchFields)
	}
	return n + strsWire(p.RequiredFeatures)
}

func requirementsWire(rs []abi.Requirement) int {
	n := 0
	for _, r := range rs {
		n += 24 + len(r.Key) + strsWire(r.Values)
	}
	return n
}

func nodeWire(nd *abi.Node) int {
	n := len(nd.Name) + kvWire(nd.Labels) + quantityWire(nd.Allocatable) + quantityWire(nd.Requested)
	for _, t := range nd.Taints {
		n += 24 + len(t.Key) + len(t.Value)
	}
	for _, img := range nd.Images {
		n += 16 + len(img.Name)
	}
	return n
}

func kvWire(kvs []abi.KV) int {
	n := 0
	for _, kv := range kvs {
		n += 16 + len(kv.Key) + len(kv.Value)
	}
	return n
}

func quantityWire(qs []abi.Quantity) int {
	n := 0
	for _, q := range qs {
		n += 16 + len(q.Name)
	}
	return n
}

func strsWire(ss []string) int {
	n := 0
	for _, s := range ss {
		n += 8 + len(s)
	}
	return n
}
