package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policyapi"
)

// TestHeldSlot: a slot held by a SchedulingPolicy is out of reach of a
// configuration reload and of the admin endpoint (409 naming the object),
// GET /policies names the object, and restore gives the slot the module of
// the configuration as it is then.
func TestHeldSlot(t *testing.T) {
	dir := t.TempDir()
	file, other := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "other.wasm")
	prio := readModule(t, prioritySort)
	fifo := readModule(t, filepath.Join("..", "..", "guest-sdk", "examples", "fifosort", "fifosort.wasm"))
	if err := os.WriteFile(other, prio, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("policies:\n  queueSort: {module: "+prioritySort+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, map[string]string{"file": file, "policies.adminEndpoint": "true"}, nil)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	ctx := context.Background()
	key := policyapi.SlotKey{Profile: "wasmsched", Slot: abi.SlotQueueSort}
	queueSort := func() string { return a.Policies("wasmsched")[abi.SlotQueueSort].Name }

	// What policyWatch does for an object "fifo".
	a.swap.mu.Lock()
	a.swap.held = map[policyapi.SlotKey]string{key: "fifo"}
	err := a.profiles[0].set.Load(ctx, abi.SlotQueueSort, "schedulingpolicy/fifo", fifo, "")
	a.swap.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(file, []byte("policies:\n  queueSort: {module: "+other+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.swap.reload(ctx, "test")
	if got := queueSort(); got != "schedulingpolicy/fifo" {
		t.Errorf("after a reload naming another module the held slot serves %s, want schedulingpolicy/fifo", got)
	}
	code, res := post(t, srv, "queueSort", "", prio)
	if code != http.StatusConflict || !strings.Contains(res.Error, `held by SchedulingPolicy "fifo"`) {
		t.Errorf("POST to the held slot: %d %q, want 409 naming the object", code, res.Error)
	}
	if got := queueSort(); got != "schedulingpolicy/fifo" {
		t.Errorf("after the refused POST the held slot serves %s", got)
	}
	if code, _ := post(t, srv, "backoffSort", "", prio); code == http.StatusConflict {
		t.Error("POST to a slot no object holds answered 409")
	}
	resp, err := srv.Client().Get(srv.URL + "/policies")
	if err != nil {
		t.Fatal(err)
	}
	var listing map[string]map[string]struct {
		HeldBy string `json:"heldBy"`
	}
	err = json.NewDecoder(resp.Body).Decode(&listing)
	resp.Body.Close()
	if err != nil || listing["wasmsched"]["queueSort"].HeldBy != "fifo" || listing["wasmsched"]["backoffSort"].HeldBy != "" {
		t.Errorf("GET /policies heldBy: %+v, %v; want fifo for queueSort only", listing["wasmsched"], err)
	}

	// The object goes: the configuration of the last reload serves.
	a.swap.mu.Lock()
	delete(a.swap.held, key)
	a.swap.restore(ctx, key, "test")
	a.swap.mu.Unlock()
	if got := queueSort(); got != other {
		t.Errorf("after restore queueSort serves %s, want the configured %s", got, other)
	}
}

// TestSlotCounter: fallbacks are counted per slot until a module is loaded
// into the slot, and an opened breaker asks for a status update.
func TestSlotCounter(t *testing.T) {
	kicks := 0
	c := &slotCounter{Recorder: policy.Discard{}, tripped: func() { kicks++ }}
	c.FellBack(abi.SlotQueueSort, 3)
	c.FellBack(abi.SlotQueueSort, 2)
	c.FellBack(abi.SlotPreEnqueue, 1)
	c.Swapped(abi.SlotPreEnqueue, "smoke") // a refused module changes nothing
	if q, p := c.fallbacks[abi.SlotQueueSort].Load(), c.fallbacks[abi.SlotPreEnqueue].Load(); q != 5 || p != 1 {
		t.Errorf("fallbacks queueSort %d preEnqueue %d, want 5 and 1", q, p)
	}
	c.Swapped(abi.SlotQueueSort, "success")
	if q, p := c.fallbacks[abi.SlotQueueSort].Load(), c.fallbacks[abi.SlotPreEnqueue].Load(); q != 0 || p != 1 {
		t.Errorf("after a load into queueSort: %d and %d, want 0 and 1", q, p)
	}
	c.BreakerTripped(abi.SlotVictimOrder)
	if kicks != 1 {
		t.Errorf("%d status updates asked for after a breaker opened, want 1", kicks)
	}
}
