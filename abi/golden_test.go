// Golden vectors pin the wire format, for the host and the guests alike.
// abitest.Cases() is the table; testdata/golden/<case>.bin holds the
// committed bytes of each case.
// After an intended change of the format (and a bump of abi.VersionMinor or
// VersionMajor), rewrite them with
//
//	go test ./abi -run TestGolden -update
//
// and rebuild the golden guest (make policies), whose test in
// golden_guest_test.go holds the TinyGo build of the codecs to the same bytes.
package abi_test

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

var update = flag.Bool("update", false, "rewrite abi/testdata/golden from abitest.Cases()")

const goldenDir = "testdata/golden"

var caseName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// equateEmpty: the decoders return nil for empty lists, the cases may say []T{}.
var equateEmpty = cmpopts.EquateEmpty()

func goldenPath(name string) string { return filepath.Join(goldenDir, name+".bin") }

// readGolden returns the committed vector of a case.
func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatalf("read golden vector: %v (new case? run: go test ./abi -run TestGolden -update)", err)
	}
	return b
}

// hexDiff explains a byte mismatch: the first differing offset and the
// 16-byte rows of the hex dumps that differ, want (-) above got (+).
func hexDiff(want, got []byte) string {
	first := 0
	for first < len(want) && first < len(got) && want[first] == got[first] {
		first++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at byte %d (0x%x); want %d bytes, got %d\n", first, first, len(want), len(got))
	wr, gr := hexRows(want), hexRows(got)
	shown := 0
	for i := first / 16; i < max(len(wr), len(gr)); i++ {
		w, g := row(wr, i), row(gr, i)
		if w == g {
			continue
		}
		if shown == 12 {
			b.WriteString("  ... more rows differ\n")
			break
		}
		shown++
		if w != "" {
			b.WriteString("- " + w + "\n")
		}
		if g != "" {
			b.WriteString("+ " + g + "\n")
		}
	}
	return b.String()
}

func hexRows(b []byte) []string { return strings.Split(strings.TrimSuffix(hex.Dump(b), "\n"), "\n") }

func row(rows []string, i int) string {
	if i < len(rows) {
		return rows[i]
	}
	return ""
}

// isRawCase reports whether a case is not a record (sort keys, victim orders).
func isRawCase(name string) bool {
	return strings.HasPrefix(name, "sortkey-") || strings.HasPrefix(name, "order-")
}

func TestGolden(t *testing.T) {
	cases := abitest.Cases()
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Fatalf("duplicate case name %q", c.Name)
		}
		if !caseName.MatchString(c.Name) {
			t.Fatalf("case name %q is not a stable file name (lowercase letters and digits, dashes between)", c.Name)
		}
		names[c.Name] = true
	}
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := c.Encode(nil)
			if *update {
				if err := os.WriteFile(goldenPath(c.Name), got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readGolden(t, c.Name)
			if !bytes.Equal(got, want) {
				t.Fatalf("wire format changed: if intended, bump abi.VersionMinor/Major and run with -update\n%s", hexDiff(want, got))
			}

			// Encoders append: a prefix in dst is kept and the record is
			// position independent.
			prefix := []byte("prefix")
			if out := c.Encode(slices.Clone(prefix)); !bytes.Equal(out, append(prefix, want...)) {
				t.Errorf("Encode(dst) does not append to dst\n%s", hexDiff(append(prefix, want...), out))
			}

			// A record vector must read as one, a raw vector must not
			// (RoundTrip tells them apart that way).
			_, tagErr := abi.RecordTag(want)
			if raw := isRawCase(c.Name); raw != (tagErr != nil) {
				t.Errorf("RecordTag error = %v; want an error only for raw (sortkey-, order-) cases", tagErr)
			}

			rt, err := abitest.RoundTrip(nil, want)
			if err != nil {
				t.Fatalf("decode golden vector: %v", err)
			}
			if !bytes.Equal(rt, want) {
				t.Errorf("decode and re-encode changed the bytes\n%s", hexDiff(want, rt))
			}
		})
	}

	// Every committed vector belongs to a case.
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".bin")
		if names[name] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("stale golden vector %s has no case in abitest.Cases(); delete it or run with -update", f)
	}
}

// TestGoldenViews reads every golden vector through its view and checks the
// accessors against the values abitest encoded.
func TestGoldenViews(t *testing.T) {
	podCase := func(want abi.Pod) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			v, err := abi.ReadPod(b)
			if err != nil {
				t.Fatal(err)
			}
			checkPod(t, v, want)
		}
	}
	nodeCase := func(want abi.Node) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			v, err := abi.ReadNode(b)
			if err != nil {
				t.Fatal(err)
			}
			checkNode(t, v, want)
		}
	}
	groupCase := func(want abi.PodGroup) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			v, err := abi.ReadPodGroup(b)
			if err != nil {
				t.Fatal(err)
			}
			checkPodGroup(t, v, want)
		}
	}
	storageCase := func(want abi.StorageObject) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			v, err := abi.ReadStorage(b)
			if err != nil {
				t.Fatal(err)
			}
			checkStorage(t, v, want)
		}
	}
	// eventCase checks the header fields and that exactly the expected nested
	// objects are present, each readable only through its kind's accessor.
	eventCase := func(want *abi.Event) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			v, err := abi.ReadEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			checkEvent(t, v, want)
		}
	}
	sortKeyCase := func(want abi.SortKey) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			k, err := abi.DecodeSortKey(b)
			if err != nil {
				t.Fatal(err)
			}
			if k != want {
				t.Errorf("DecodeSortKey = %x, want %x", k, want)
			}
		}
	}
	orderCase := func(want []uint32) func(*testing.T, []byte) {
		return func(t *testing.T, b []byte) {
			n := len(b) / 4
			got := make([]uint32, n)
			if err := abi.DecodeOrder(b, n, got, make([]bool, n)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodeOrder (-want +got):\n%s", diff)
			}
		}
	}

	checks := map[string]func(*testing.T, []byte){
		"pod-empty":        podCase(abi.Pod{}),
		"pod-minimal":      podCase(abitest.MinimalPod()),
		"pod-full":         podCase(abitest.FullPod()),
		"pod-gang-member":  podCase(abitest.GangPod()),
		"node-minimal":     nodeCase(abitest.MinimalNode()),
		"node-full":        nodeCase(abitest.FullNode()),
		"podgroup-minimal": groupCase(abi.PodGroup{Namespace: "default", Name: "g"}),
		"podgroup-full":    groupCase(abitest.FullPodGroup()),
		"storage-minimal":  storageCase(abi.StorageObject{Name: "pv-1"}),
		"storage-full":     storageCase(abitest.FullStorage()),
		"storage-csinode":  storageCase(abitest.CSINode()),

		"event-pod-add":        eventCase(abitest.PodAddEvent()),
		"event-node-update":    eventCase(abitest.NodeUpdateEvent()),
		"event-podgroup-add":   eventCase(abitest.PodGroupAddEvent()),
		"event-pod-delete":     eventCase(abitest.PodDeleteEvent()),
		"event-pvc-add":        eventCase(abitest.ClaimAddEvent()),
		"event-csinode-update": eventCase(abitest.CSINodeUpdateEvent()),

		"event-resourceclaim-deallocate": eventCase(abitest.ResourceClaimDeallocateEvent()),
		"event-resourceslice-add":        eventCase(abitest.ResourceSliceAddEvent()),

		"hintbatch-no-pods": func(t *testing.T, b []byte) {
			checkHintBatch(t, b, abitest.NodeUpdateEvent(), nil)
		},
		"hintbatch-3-pods": func(t *testing.T, b []byte) {
			checkHintBatch(t, b, abitest.NodeUpdateEvent(), []abi.Pod{abitest.MinimalPod(), abitest.FullPod(), abitest.GangPod()})
		},
		"victimbatch-no-preemptor": func(t *testing.T, b []byte) {
			checkVictimBatch(t, b, nil, abitest.Victims()[:2])
		},
		"victimbatch-preemptor": func(t *testing.T, b []byte) {
			p := abitest.GangPod()
			checkVictimBatch(t, b, &p, abitest.Victims())
		},

		"gate-admit": func(t *testing.T, b []byte) { checkGate(t, b, abi.Gate{Code: abi.GateAdmit}) },
		"gate-wait":  func(t *testing.T, b []byte) { checkGate(t, b, abitest.WaitGate()) },
		"registrations-empty": func(t *testing.T, b []byte) {
			checkRegistrations(t, b, nil)
		},
		"registrations": func(t *testing.T, b []byte) {
			checkRegistrations(t, b, abitest.Registrations())
		},

		"placement-ids": func(t *testing.T, b []byte) {
			checkPlacement(t, b, abitest.GangPod(), []uint32{0, 7, math.MaxUint32}, nil)
		},
		"placement-inline": func(t *testing.T, b []byte) {
			checkPlacement(t, b, abitest.FullPod(), []uint32{3}, []abi.Node{abitest.MinimalNode(), abitest.FullNode()})
		},
		"placement-inline-only": func(t *testing.T, b []byte) {
			checkPlacement(t, b, abitest.MinimalPod(), nil, []abi.Node{abitest.MinimalNode()})
		},
		"nodesync-reset": func(t *testing.T, b []byte) {
			checkNodeSync(t, b, true, []uint32{0, 1, math.MaxUint32},
				[]abi.Node{abitest.MinimalNode(), abitest.FullNode(), abitest.MinimalNode()}, nil)
		},
		"nodesync-delta": func(t *testing.T, b []byte) {
			checkNodeSync(t, b, false, []uint32{1, math.MaxUint32},
				[]abi.Node{abitest.FullNode(), abitest.MinimalNode()}, []uint32{2, math.MaxUint32})
		},
		"nodesync-empty": func(t *testing.T, b []byte) { checkNodeSync(t, b, false, nil, nil, nil) },
		"verdicts-all-pass": func(t *testing.T, b []byte) {
			checkVerdicts(t, b, []abi.FilterCode{abi.FilterPass, abi.FilterPass}, []int{0, 0}, nil)
		},
		"verdicts": func(t *testing.T, b []byte) {
			_, reasons := abitest.Verdicts()
			checkVerdicts(t, b,
				[]abi.FilterCode{abi.FilterPass, abi.FilterUnschedulable, abi.FilterUnresolvable, abi.FilterUnschedulable, abi.FilterPass},
				[]int{0, 0, 1, 0, 0}, reasons)
		},
		"placementoptions-default": func(t *testing.T, b []byte) {
			checkPlacementOptions(t, b, abi.PlacementOptions{})
		},
		"placementoptions": func(t *testing.T, b []byte) {
			checkPlacementOptions(t, b, abitest.FullPlacementOptions())
		},

		"sortkey-zero":          sortKeyCase(abi.SortKey{}),
		"sortkey-priority-time": sortKeyCase(abi.SortKey{abi.Desc(100), abi.Asc(1_700_000_000_000_000_000)}),
		"sortkey-negative": sortKeyCase(abi.SortKey{
			abi.Desc(-5), abi.Asc(-1_000), abi.Asc(-1 << 63), abi.Desc(1<<63 - 1),
		}),
		"sortkey-max": sortKeyCase(abi.SortKey{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}),
		"order-one":   orderCase([]uint32{0}),
		"order-five":  orderCase([]uint32{4, 0, 3, 1, 2}),
	}
	for _, c := range abitest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			check, ok := checks[c.Name]
			if !ok {
				t.Fatalf("no view check for case %q: add one to TestGoldenViews", c.Name)
			}
			check(t, readGolden(t, c.Name))
		})
	}
}

// TestGoldenPodViewSpots checks the lookups a policy makes on pod-full.
func TestGoldenPodViewSpots(t *testing.T) {
	v, err := abi.ReadPod(readGolden(t, "pod-full"))
	if err != nil {
		t.Fatal(err)
	}
	labels := v.Labels()
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"app", "trainer", true}, {"emoji", "🚀", true}, {"empty-value", "", true}, {"missing", "", false}, {"", "", false},
	} {
		if got, ok := labels.Get(tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("Labels().Get(%q) = %q, %v; want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := v.NodeSelector().Get("kubernetes.io/os"); got != "linux" || !ok {
		t.Errorf("NodeSelector().Get(kubernetes.io/os) = %q, %v", got, ok)
	}
	for name, want := range map[string]int64{"cpu": 1500, "memory": 8 << 30, "ephemeral-storage": 1<<63 - 1, "example.com/negative": -1, "pods": 0} {
		if got := v.Requests().Get(name); got != want {
			t.Errorf("Requests().Get(%q) = %d, want %d", name, got, want)
		}
	}
	if !v.SchedulingGates().Has("ünïcödé/gate") || v.SchedulingGates().Has("ünïcödé") || v.UnschedulablePlugins().Index("TaintToleration") != 1 {
		t.Error("StrList lookups disagree with pod-full")
	}

	aff := v.RequiredAffinity()
	if aff.Len() != 3 {
		t.Fatalf("RequiredAffinity().Len() = %d, want 3", aff.Len())
	}
	exprs := aff.MatchExpressions(0)
	if exprs.Len() != 2 || exprs.Key(0) != "topology.kubernetes.io/zone" || exprs.Operator(0) != abi.SelectorIn {
		t.Errorf("term 0 expression 0 = %d exprs, %q %v", exprs.Len(), exprs.Key(0), exprs.Operator(0))
	}
	if vals := exprs.Values(0); vals.Len() != 3 || vals.At(2) != "ζώνη-γ" {
		t.Errorf("term 0 expression 0 values: len %d, [2] = %q", vals.Len(), vals.At(2))
	}
	if exprs.Operator(1) != abi.SelectorExists || exprs.Values(1).Len() != 0 {
		t.Errorf("term 0 expression 1: %v with %d values", exprs.Operator(1), exprs.Values(1).Len())
	}
	if f := aff.MatchFields(0); f.Len() != 1 || f.Key(0) != "metadata.name" || f.Operator(0) != abi.SelectorNotIn || f.Values(0).At(0) != "node-1" {
		t.Errorf("term 0 fields = %d: %q %v %q", f.Len(), f.Key(0), f.Operator(0), f.Values(0).At(0))
	}
	if aff.MatchFields(1).Len() != 0 || aff.MatchExpressions(2).Len() != 0 {
		t.Error("absent requirement lists must be empty")
	}
	if f := aff.MatchFields(2); f.Values(0).At(0) != "node-α" {
		t.Errorf("term 2 field value = %q", f.Values(0).At(0))
	}
	// Out of range reads are empty, never a panic.
	if aff.MatchExpressions(3).Len() != 0 || aff.MatchFields(-1).Len() != 0 || exprs.Key(2) != "" ||
		exprs.Values(7).Len() != 0 || exprs.Values(0).At(3) != "" || labels.Len() != 4 {
		t.Error("out of range reads must be empty")
	}
	if k, val := labels.At(4); k != "" || val != "" {
		t.Errorf("Labels().At(4) = %q, %q", k, val)
	}

	// Minor 3: the namespace's labels and the owner's kind.
	ns := v.NamespaceLabels()
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"kubernetes.io/metadata.name", "équipe-données", true}, {"pool", "gpu", true}, {"zz-empty", "", true},
		{"app", "", false}, {"", "", false},
	} {
		if got, ok := ns.Get(tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("NamespaceLabels().Get(%q) = %q, %v; want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if v.OwnerKind() != "StatefulSet" {
		t.Errorf("OwnerKind() = %q", v.OwnerKind())
	}
}

// TestGoldenNodeViewSpots checks the image lookups a placement policy makes
// on node-full (minor 3).
func TestGoldenNodeViewSpots(t *testing.T) {
	v, err := abi.ReadNode(readGolden(t, "node-full"))
	if err != nil {
		t.Fatal(err)
	}
	images := v.Images()
	for name, want := range map[string]bool{
		"registry.k8s.io/pause:3.10": true, "ghcr.io/équipe/trainer@sha256:0123456789abcdef": true,
		"example.com/unknown-size": true, "registry.k8s.io/pause": false, "": false,
	} {
		if got := images.Has(name); got != want {
			t.Errorf("Images().Has(%q) = %v, want %v", name, got, want)
		}
	}
	if img := images.At(1); img.Size != math.MaxInt64 {
		t.Errorf("Images().At(1) = %+v", img)
	}
	if img := images.At(3); img != (abi.Image{}) {
		t.Errorf("Images().At(3) = %+v, want zero", img)
	}
	m, err := abi.ReadNode(readGolden(t, "node-minimal"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Images().Len() != 0 || m.Images().Has("") {
		t.Errorf("node-minimal has %d images", m.Images().Len())
	}
}

func checkPod(t *testing.T, v abi.PodView, want abi.Pod) {
	t.Helper()
	if diff := cmp.Diff(want, podFromView(v), equateEmpty); diff != "" {
		t.Errorf("PodView accessors (-want +got):\n%s", diff)
	}
	var got abi.Pod
	if err := v.Decode(&got); err != nil {
		t.Fatalf("PodView.Decode: %v", err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("PodView.Decode (-want +got):\n%s", diff)
	}
}

func checkNode(t *testing.T, v abi.NodeView, want abi.Node) {
	t.Helper()
	if diff := cmp.Diff(want, nodeFromView(v), equateEmpty); diff != "" {
		t.Errorf("NodeView accessors (-want +got):\n%s", diff)
	}
	if got := v.Requested().Get("pods"); got != quantity(want.Requested, "pods") {
		t.Errorf("Requested().Get(pods) = %d", got)
	}
	var got abi.Node
	if err := v.Decode(&got); err != nil {
		t.Fatalf("NodeView.Decode: %v", err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("NodeView.Decode (-want +got):\n%s", diff)
	}
}

func checkPodGroup(t *testing.T, v abi.PodGroupView, want abi.PodGroup) {
	t.Helper()
	if diff := cmp.Diff(want, podGroupFromView(v)); diff != "" {
		t.Errorf("PodGroupView accessors (-want +got):\n%s", diff)
	}
	var got abi.PodGroup
	if err := v.Decode(&got); err != nil {
		t.Fatalf("PodGroupView.Decode: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodGroupView.Decode (-want +got):\n%s", diff)
	}
}

func checkStorage(t *testing.T, v abi.StorageView, want abi.StorageObject) {
	t.Helper()
	if diff := cmp.Diff(want, storageFromView(v), equateEmpty); diff != "" {
		t.Errorf("StorageView accessors (-want +got):\n%s", diff)
	}
	var got abi.StorageObject
	if err := v.Decode(&got); err != nil {
		t.Fatalf("StorageView.Decode: %v", err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("StorageView.Decode (-want +got):\n%s", diff)
	}
}

func checkEvent(t *testing.T, v abi.EventView, want *abi.Event) {
	t.Helper()
	if v.Resource() != want.Resource || v.Action() != want.Action {
		t.Errorf("event = %v %v, want %v %v", v.Resource(), v.Action(), want.Resource, want.Action)
	}
	if !bytes.Equal(v.OldBytes(), want.Old) || !bytes.Equal(v.NewBytes(), want.New) {
		t.Error("OldBytes/NewBytes differ from the encoded objects")
	}
	// Each nested object reads through exactly one kind's accessor.
	for _, side := range []struct {
		name string
		obj  []byte
		pod  func() (abi.PodView, bool)
		node func() (abi.NodeView, bool)
		grp  func() (abi.PodGroupView, bool)
		sto  func() (abi.StorageView, bool)
	}{
		{"old", want.Old, v.OldPod, v.OldNode, v.OldPodGroup, v.OldStorage},
		{"new", want.New, v.NewPod, v.NewNode, v.NewPodGroup, v.NewStorage},
	} {
		pv, isPod := side.pod()
		nv, isNode := side.node()
		gv, isGroup := side.grp()
		sv, isStorage := side.sto()
		var wantTag abi.Tag
		if side.obj != nil {
			wantTag, _ = abi.RecordTag(side.obj)
		}
		if isPod != (wantTag == abi.TagPod) || isNode != (wantTag == abi.TagNode) || isGroup != (wantTag == abi.TagPodGroup) ||
			isStorage != (wantTag == abi.TagStorage) {
			t.Errorf("%s object: pod %v node %v group %v storage %v, want a %v", side.name, isPod, isNode, isGroup, isStorage, wantTag)
		}
		switch wantTag {
		case abi.TagPod:
			var p abi.Pod
			mustDecode(t, pv.Decode(&p))
			if got, _ := abi.ReadPod(side.obj); got.Name() != pv.Name() || got.UID() != p.UID {
				t.Errorf("%s pod: %q", side.name, pv.Name())
			}
		case abi.TagNode:
			var n abi.Node
			mustDecode(t, nv.Decode(&n))
			if !bytes.Equal(abi.AppendNode(nil, &n), side.obj) {
				t.Errorf("%s node %q re-encodes differently", side.name, nv.Name())
			}
		case abi.TagPodGroup:
			var g abi.PodGroup
			mustDecode(t, gv.Decode(&g))
			if !bytes.Equal(abi.AppendPodGroup(nil, &g), side.obj) {
				t.Errorf("%s group %q re-encodes differently", side.name, gv.Name())
			}
		case abi.TagStorage:
			var o abi.StorageObject
			mustDecode(t, sv.Decode(&o))
			if !bytes.Equal(abi.AppendStorage(nil, &o), side.obj) {
				t.Errorf("%s storage object %q re-encodes differently", side.name, sv.Name())
			}
		}
	}
	var got abi.Event
	if err := v.Decode(&got); err != nil {
		t.Fatalf("EventView.Decode: %v", err)
	}
	if diff := cmp.Diff(*want, got, equateEmpty); diff != "" {
		t.Errorf("EventView.Decode (-want +got):\n%s", diff)
	}
}

func checkHintBatch(t *testing.T, b []byte, event *abi.Event, pods []abi.Pod) {
	t.Helper()
	v, err := abi.ReadHintBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := v.Event()
	if err != nil {
		t.Fatalf("Event(): %v", err)
	}
	checkEvent(t, ev, event)
	if v.Len() != len(pods) {
		t.Fatalf("Len() = %d, want %d", v.Len(), len(pods))
	}
	for i, want := range pods {
		pv, err := v.Pod(i)
		if err != nil {
			t.Fatalf("Pod(%d): %v", i, err)
		}
		checkPod(t, pv, want)
	}
	for _, i := range []int{-1, len(pods)} {
		if _, err := v.Pod(i); err == nil {
			t.Errorf("Pod(%d) of %d: no error", i, len(pods))
		}
	}
}

func checkVictimBatch(t *testing.T, b []byte, preemptor *abi.Pod, victims []abi.Victim) {
	t.Helper()
	v, err := abi.ReadVictimBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	pv, ok := v.Preemptor()
	if ok != (preemptor != nil) {
		t.Fatalf("Preemptor() ok = %v, want %v", ok, preemptor != nil)
	}
	if ok {
		checkPod(t, pv, *preemptor)
	}
	if v.Len() != len(victims) {
		t.Fatalf("Len() = %d, want %d", v.Len(), len(victims))
	}
	for i, want := range victims {
		if diff := cmp.Diff(want, v.At(i)); diff != "" {
			t.Errorf("At(%d) (-want +got):\n%s", i, diff)
		}
	}
	if got := v.At(len(victims)); got != (abi.Victim{}) {
		t.Errorf("At(out of range) = %+v", got)
	}
	if diff := cmp.Diff(victims, v.Decode(nil)); diff != "" {
		t.Errorf("Decode (-want +got):\n%s", diff)
	}
}

func checkGate(t *testing.T, b []byte, want abi.Gate) {
	t.Helper()
	var got abi.Gate
	if err := abi.DecodeGate(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeGate (-want +got):\n%s", diff)
	}
}

func checkRegistrations(t *testing.T, b []byte, want []abi.Registration) {
	t.Helper()
	got, err := abi.DecodeRegistrations(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("DecodeRegistrations (-want +got):\n%s", diff)
	}
}

func checkPlacement(t *testing.T, b []byte, pod abi.Pod, ids []uint32, inline []abi.Node) {
	t.Helper()
	v, err := abi.ReadPlacement(b)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := v.Pod()
	if err != nil {
		t.Fatalf("Pod(): %v", err)
	}
	checkPod(t, pv, pod)
	if v.Len() != len(ids)+len(inline) || v.NumIDs() != len(ids) {
		t.Fatalf("Len() = %d, NumIDs() = %d; want %d ids and %d inline", v.Len(), v.NumIDs(), len(ids), len(inline))
	}
	var gotIDs []uint32
	for i := range v.NumIDs() {
		gotIDs = append(gotIDs, v.ID(i))
		if _, err := v.Inline(i); err == nil {
			t.Errorf("Inline(%d) of a node named by id: no error", i)
		}
	}
	if diff := cmp.Diff(ids, gotIDs, equateEmpty); diff != "" {
		t.Errorf("ID (-want +got):\n%s", diff)
	}
	if got := v.ID(v.NumIDs()); got != 0 {
		t.Errorf("ID(out of range) = %d", got)
	}
	for i, want := range inline {
		nv, err := v.Inline(v.NumIDs() + i)
		if err != nil {
			t.Fatalf("Inline(%d): %v", v.NumIDs()+i, err)
		}
		checkNode(t, nv, want)
	}
	for _, i := range []int{-1, v.Len()} {
		if _, err := v.Inline(i); err == nil {
			t.Errorf("Inline(%d) of %d: no error", i, v.Len())
		}
	}
}

func checkNodeSync(t *testing.T, b []byte, reset bool, ids []uint32, nodes []abi.Node, removed []uint32) {
	t.Helper()
	v, err := abi.ReadNodeSync(b)
	if err != nil {
		t.Fatal(err)
	}
	if v.Reset() != reset || v.NumUpserts() != len(ids) || v.NumRemoved() != len(removed) {
		t.Fatalf("Reset() = %v, %d upserts, %d removed; want %v, %d, %d", v.Reset(), v.NumUpserts(), v.NumRemoved(), reset, len(ids), len(removed))
	}
	for i, want := range nodes {
		id, nb, err := v.Upsert(i)
		if err != nil {
			t.Fatalf("Upsert(%d): %v", i, err)
		}
		if id != ids[i] {
			t.Errorf("Upsert(%d) id = %d, want %d", i, id, ids[i])
		}
		nv, err := abi.ReadNode(nb)
		if err != nil {
			t.Fatal(err)
		}
		checkNode(t, nv, want)
	}
	for _, i := range []int{-1, len(ids)} {
		if _, _, err := v.Upsert(i); err == nil {
			t.Errorf("Upsert(%d) of %d: no error", i, len(ids))
		}
	}
	var got []uint32
	for i := range v.NumRemoved() {
		got = append(got, v.Removed(i))
	}
	if diff := cmp.Diff(removed, got, equateEmpty); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
	if v.Removed(len(removed)) != 0 {
		t.Error("Removed(out of range) is not 0")
	}
}

func checkVerdicts(t *testing.T, b []byte, codes []abi.FilterCode, reasonIdx []int, reasons []string) {
	t.Helper()
	v, err := abi.ReadVerdicts(b, len(codes))
	if err != nil {
		t.Fatal(err)
	}
	var gotCodes []abi.FilterCode
	var gotIdx []int
	for i := range v.Len() {
		gotCodes, gotIdx = append(gotCodes, v.Code(i)), append(gotIdx, v.ReasonIndex(i))
	}
	if diff := cmp.Diff(codes, gotCodes, equateEmpty); diff != "" {
		t.Errorf("Code (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(reasonIdx, gotIdx, equateEmpty); diff != "" {
		t.Errorf("ReasonIndex (-want +got):\n%s", diff)
	}
	var gotReasons []string
	for j := range v.NumReasons() {
		gotReasons = append(gotReasons, v.Reason(j))
	}
	if diff := cmp.Diff(reasons, gotReasons, equateEmpty); diff != "" {
		t.Errorf("Reason (-want +got):\n%s", diff)
	}
	if v.Reason(v.NumReasons()) != "" || v.Code(v.Len()) != abi.FilterPass {
		t.Error("out of range reads must be empty")
	}
	if _, err := abi.ReadVerdicts(b, len(codes)+1); err == nil {
		t.Errorf("ReadVerdicts for %d nodes accepted %d verdicts", len(codes)+1, len(codes))
	}
}

func checkPlacementOptions(t *testing.T, b []byte, want abi.PlacementOptions) {
	t.Helper()
	got, err := abi.DecodePlacementOptions(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
		t.Errorf("DecodePlacementOptions (-want +got):\n%s", diff)
	}
}

func mustDecode(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
}

func quantity(qs []abi.Quantity, name string) int64 {
	for _, q := range qs {
		if q.Name == name {
			return q.Value
		}
	}
	return 0
}
