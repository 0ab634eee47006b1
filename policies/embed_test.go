package policies_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
)

func TestNames(t *testing.T) {
	want := []string{"backoffpop", "gangpreempt", "hints"}
	if diff := cmp.Diff(want, policies.Names()); diff != "" {
		t.Errorf("Names (-want, +got):\n%s", diff)
	}
}

// TestEverySlot checks that every slot has a built-in module and that every
// module serves some slot.
func TestEverySlot(t *testing.T) {
	want := map[abi.Slot]string{
		abi.SlotQueueSort:    "backoffpop",
		abi.SlotBackoffSort:  "backoffpop",
		abi.SlotPreEnqueue:   "gangpreempt",
		abi.SlotQueueingHint: "hints",
		abi.SlotVictimOrder:  "gangpreempt",
	}
	got := map[abi.Slot]string{}
	var used []string
	for _, s := range abi.Slots {
		if s.Placement() {
			continue // no built-in placement policy: the slots start empty
		}
		m := policies.Builtin(s)
		if len(m.Wasm) == 0 {
			t.Errorf("slot %s: built-in module %q has no bytes", s, m.Name)
		}
		got[s] = m.Name
		used = append(used, m.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("built-in module per slot (-want, +got):\n%s", diff)
	}
	slices.Sort(used)
	if diff := cmp.Diff(policies.Names(), slices.Compact(used)); diff != "" {
		t.Errorf("modules serving no slot (-Names, +used):\n%s", diff)
	}
	if m := policies.Builtin(abi.Slot(200)); m.Name != "" || m.Wasm != nil {
		t.Errorf("Builtin(200) = %q with %d bytes, want the zero Module", m.Name, len(m.Wasm))
	}
}

// TestMatchesDisk checks that the embedded bytes are the committed files
// that `make policies` rebuilds.
func TestMatchesDisk(t *testing.T) {
	for _, s := range abi.Slots {
		if s.Placement() {
			continue // no built-in placement policy: the slots start empty
		}
		m := policies.Builtin(s)
		disk, err := os.ReadFile(filepath.Join(m.Name, m.Name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(disk, m.Wasm) {
			t.Errorf("slot %s: embedded %s differs from %s/%s.wasm (%d vs %d bytes)", s, m.Name, m.Name, m.Name, len(m.Wasm), len(disk))
		}
	}
}

func TestBuiltinCopies(t *testing.T) {
	a := policies.Builtin(abi.SlotQueueSort)
	orig := a.Wasm[0]
	a.Wasm[0] ^= 0xff
	if b := policies.Builtin(abi.SlotQueueSort); b.Wasm[0] != orig {
		t.Error("changing the bytes Builtin returned changed the embedded module")
	}
}

// TestGuestSources checks that each module's folder is a guest that
// hack/guests.sh finds (main.go with the marker in its first 20 lines) and
// that this package's folder is not one.
func TestGuestSources(t *testing.T) {
	for _, name := range policies.Names() {
		f, err := os.Open(filepath.Join(name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		sc := bufio.NewScanner(f)
		for i := 0; i < 20 && sc.Scan(); i++ {
			found = found || sc.Text() == "//wasmsched:guest"
		}
		f.Close()
		if !found {
			t.Errorf("%s/main.go lacks the //wasmsched:guest marker in its first 20 lines, so make policies would not rebuild %s.wasm", name, name)
		}
	}
	if _, err := os.Stat("main.go"); err == nil {
		t.Error("policies/main.go exists: hack/guests.sh would take the embedding package for a guest")
	}
}

// TestLoad loads every built-in module in the real runtime under the default
// limits and checks that it implements its slots.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	loaded := map[string]*wasm.Module{}
	for _, s := range abi.Slots {
		if s.Placement() {
			continue // no built-in placement policy: the slots start empty
		}
		b := policies.Builtin(s)
		m, ok := loaded[b.Name]
		if !ok {
			if m, err = rt.Load(ctx, b.Name, b.Wasm, wasm.DefaultLimits()); err != nil {
				t.Fatalf("slot %s: %v", s, err)
			}
			loaded[b.Name] = m
		}
		if major, minor := m.ABIVersion(); major != abi.VersionMajor {
			t.Errorf("%s speaks ABI %d.%d, the host %d.%d", b.Name, major, minor, abi.VersionMajor, abi.VersionMinor)
		}
		for _, e := range s.RequiredExports() {
			if !m.HasExport(e) {
				t.Errorf("slot %s: built-in module %s lacks the export %s", s, b.Name, e)
			}
		}
	}
}
