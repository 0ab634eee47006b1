package nodes

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/exportcheck"
)

func TestExportNames(t *testing.T) {
	exportcheck.Check(t, ".", abi.ExportNodes, abi.ExportPlacementOptions)
}

// node encodes a node named name with n labels.
func node(name string, labels int) []byte {
	n := abi.Node{Name: name, Allocatable: []abi.Quantity{{Name: "cpu", Value: 4000}}}
	for i := range labels {
		n.Labels = append(n.Labels, abi.KV{Key: "k" + strings.Repeat("x", i), Value: "v"})
	}
	return abi.AppendNode(nil, &n)
}

func sync(reset bool, removed []uint32, upserts ...abi.NodeUpsert) []byte {
	return abi.AppendNodeSync(nil, reset, upserts, removed)
}

// names lists the names of the records s holds under ids 0..n-1, "" for none.
func names(s *Store, n int) []string {
	out := make([]string, n)
	for id := range n {
		if v, ok := s.Get(uint32(id)); ok {
			out[id] = v.Name()
		}
	}
	return out
}

func TestSync(t *testing.T) {
	var s Store
	steps := []struct {
		name string
		sync []byte
		want []string
	}{
		{"empty", sync(false, nil), []string{"", "", "", ""}},
		{"upserts", sync(false, nil, abi.NodeUpsert{ID: 0, Node: node("a", 0)}, abi.NodeUpsert{ID: 2, Node: node("c", 1)}),
			[]string{"a", "", "c", ""}},
		{"replace and add", sync(false, nil, abi.NodeUpsert{ID: 2, Node: node("c2", 0)}, abi.NodeUpsert{ID: 1, Node: node("b", 3)}),
			[]string{"a", "b", "c2", ""}},
		{"remove, also an id never held", sync(false, []uint32{0, 3, 1 << 30}), []string{"", "b", "c2", ""}},
		{"reset, then upsert", sync(true, nil, abi.NodeUpsert{ID: 3, Node: node("d", 0)}), []string{"", "", "", "d"}},
		{"reset alone", sync(true, nil), []string{"", "", "", ""}},
	}
	for _, st := range steps {
		if err := s.Sync(st.sync); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, names(&s, 4)); diff != "" {
			t.Errorf("%s: held (-want, +got):\n%s", st.name, diff)
		}
		held := 0
		for _, n := range st.want {
			if n != "" {
				held++
			}
		}
		if s.Len() != held {
			t.Errorf("%s: Len() = %d, want %d", st.name, s.Len(), held)
		}
	}
}

func TestSyncErrors(t *testing.T) {
	var s Store
	for _, c := range []struct {
		name, want string
		sync       []byte
	}{
		{"not a sync", "tag", abi.AppendNode(nil, &abi.Node{})},
		{"truncated", "exceeds", sync(false, nil, abi.NodeUpsert{ID: 1, Node: node("a", 0)})[:40]},
		{"id too large", "above the largest", sync(false, nil, abi.NodeUpsert{ID: MaxID + 1, Node: node("a", 0)})},
		{"not a node", "node", sync(false, nil, abi.NodeUpsert{ID: 1, Node: abi.AppendPod(nil, &abi.Pod{})})},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Sync(c.sync); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Sync error = %v, want one containing %q", err, c.want)
			}
		})
	}
	if s.Len() != 0 {
		t.Errorf("after failed syncs Len() = %d, want 0", s.Len())
	}
}

// TestCopies: the store keeps copies, not views of the sync's bytes, which
// the host overwrites with the next call's input.
func TestCopies(t *testing.T) {
	var s Store
	in := sync(false, nil, abi.NodeUpsert{ID: 0, Node: node("a", 2)})
	if err := s.Sync(in); err != nil {
		t.Fatal(err)
	}
	clear(in)
	if v, _ := s.Get(0); v.Name() != "a" || v.Labels().Len() != 2 {
		t.Errorf("after the input was overwritten: name %q, %d labels; want a, 2", v.Name(), v.Labels().Len())
	}
}

// TestBuffersReused: a record that fits its id's buffer goes there; a
// forgotten record's buffer serves a new id.
func TestBuffersReused(t *testing.T) {
	var s Store
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Put(0, node("a", 4)))
	v, _ := s.Get(0)
	first := &v.Bytes()[0]
	must(s.Put(0, node("a", 3))) // smaller
	if v, _ := s.Get(0); &v.Bytes()[0] != first || v.Labels().Len() != 3 {
		t.Errorf("a smaller record did not reuse the buffer (or was not kept)")
	}
	must(s.Put(0, node("a", 5))) // within the quarter of room
	if v, _ := s.Get(0); &v.Bytes()[0] != first || v.Labels().Len() != 5 {
		t.Errorf("a slightly larger record did not reuse the buffer (or was not kept)")
	}
	s.Remove(0)
	must(s.Put(7, node("b", 1)))
	if v, _ := s.Get(7); &v.Bytes()[0] != first || v.Name() != "b" {
		t.Errorf("a new id did not reuse a forgotten record's buffer")
	}
	if _, ok := s.Get(0); ok {
		t.Error("id 0 still held after Remove")
	}
}

// TestSteadyStateDoesNotAllocate: once every node has been seen, syncing
// changed records (requested resources move, labels come and go within the
// room a record has) and resolving a placement allocate nothing. A module's
// memory is never freed, so this is what keeps a long-lived instance from
// growing.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	var s Store
	const n = 100
	recs := make([][]abi.NodeUpsert, 3)
	for round := range recs {
		for id := range n {
			rec := abi.Node{Name: "n", Labels: []abi.KV{{Key: "a", Value: "b"}},
				Requested: []abi.Quantity{{Name: "cpu", Value: int64(round*1000 + id)}}}
			if round == 2 && id%2 == 0 {
				rec.Labels = nil // smaller
			}
			recs[round] = append(recs[round], abi.NodeUpsert{ID: uint32(id), Node: abi.AppendNode(nil, &rec)})
		}
	}
	syncs := [][]byte{sync(false, nil, recs[0]...), sync(false, nil, recs[1]...), sync(false, nil, recs[2]...)}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	pl, err := abi.ReadPlacement(abi.AppendPlacement(nil, abi.AppendPod(nil, &abi.Pod{Name: "p"}), ids, [][]byte{node("dry", 0)}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(syncs[0]); err != nil {
		t.Fatal(err)
	}
	round := 0
	allocs := testing.AllocsPerRun(50, func() {
		round++
		if err := s.Sync(syncs[round%3]); err != nil {
			t.Fatal(err)
		}
		for i := range pl.Len() {
			if _, err := s.Node(pl, i); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("a sync of %d changed nodes and a placement allocate %v times, want 0", n, allocs)
	}
	if v, _ := s.Get(1); v.Requested().Get("cpu") != int64((round%3)*1000+1) {
		t.Errorf("node 1 requests %d cpu, want the last sync's", v.Requested().Get("cpu"))
	}
}

func TestNode(t *testing.T) {
	var s Store
	if err := s.Sync(sync(false, nil, abi.NodeUpsert{ID: 4, Node: node("held", 0)})); err != nil {
		t.Fatal(err)
	}
	pod := abi.AppendPod(nil, &abi.Pod{Name: "p"})
	pl, err := abi.ReadPlacement(abi.AppendPlacement(nil, pod, []uint32{4, 4}, [][]byte{node("dry", 0)}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range pl.Len() {
		n, err := s.Node(pl, i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n.Name())
	}
	if diff := cmp.Diff([]string{"held", "held", "dry"}, got); diff != "" {
		t.Errorf("nodes (-want, +got):\n%s", diff)
	}
	pl, err = abi.ReadPlacement(abi.AppendPlacement(nil, pod, []uint32{5}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Node(pl, 0); err == nil || !strings.Contains(err.Error(), "node id 5 is not held") {
		t.Errorf("unknown id: error %v, want one saying id 5 is not held", err)
	}
}

func TestOptions(t *testing.T) {
	defer func() { options = abi.PlacementOptions{} }()
	events := []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}}
	SetFilterEvents(events)
	SetScoreNormalized(true)
	events[0].Resource = abi.ResourcePod // SetFilterEvents copied them
	got, err := abi.DecodePlacementOptions(AppendOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := abi.PlacementOptions{ScoreNormalized: true, FilterEvents: []abi.FilterEvent{{Resource: abi.ResourceNode, Actions: abi.ActionAdd}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, Options()); diff != "" {
		t.Errorf("Options (-want, +got):\n%s", diff)
	}
}
