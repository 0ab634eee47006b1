package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
)

var (
	nodepoolWasm = filepath.Join("..", "..", "guest-sdk", "examples", "nodepool", "nodepool.wasm")
	gpupackWasm  = filepath.Join("..", "..", "guest-sdk", "examples", "gpupack", "gpupack.wasm")
)

// placementState is a placement slot in GET /policies.
type placementState struct {
	Module        string `json:"module"`
	FailurePolicy string `json:"failurePolicy"`
}

func getPlacement(t *testing.T, a *App) map[string]placementState {
	t.Helper()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/policies")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]map[string]placementState
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /policies: %s, %v", res.Status, err)
	}
	return map[string]placementState{"filter": out["wasmsched"]["filter"], "score": out["wasmsched"]["score"]}
}

// TestPlacementSlotsFromConfig: the placement slots are empty by default,
// load from policies.{filter,score}.module with their failure policies,
// show in GET /policies, and empty again when a reload removes them; the
// profile's WasmFilter then has nothing to call.
func TestPlacementSlotsFromConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("{}\n")
	a := newTestApp(t, map[string]string{"file": file}, nil)
	if got := getPlacement(t, a); got["filter"] != (placementState{FailurePolicy: "Fail"}) || got["score"] != (placementState{FailurePolicy: "Ignore"}) {
		t.Errorf("default placement slots %+v, want empty with Fail and Ignore", got)
	}
	if f, _ := a.profiles[0].placement.Filter(); f != nil {
		t.Errorf("an empty filter slot serves %T", f)
	}

	write("policies:\n  filter: {module: " + nodepoolWasm + ", failurePolicy: Ignore}\n  score: {module: " + gpupackWasm + "}\n")
	a.swap.reload(t.Context(), "test")
	got := getPlacement(t, a)
	if got["filter"] != (placementState{Module: nodepoolWasm, FailurePolicy: "Ignore"}) || got["score"] != (placementState{Module: gpupackWasm, FailurePolicy: "Ignore"}) {
		t.Errorf("loaded placement slots %+v", got)
	}
	if f, fp := a.profiles[0].placement.Filter(); f == nil || fp.String() != "Ignore" {
		t.Errorf("profile filter %T with %v, want nodepool with Ignore", f, fp)
	}

	write("policies:\n  score: {module: " + gpupackWasm + ", failurePolicy: Fail}\n")
	a.swap.reload(t.Context(), "test")
	got = getPlacement(t, a)
	if got["filter"].Module != "" || got["score"].FailurePolicy != "Fail" {
		t.Errorf("after removing the filter: %+v, want it empty and the score's failure policy Fail", got)
	}
	if f, _ := a.profiles[0].placement.Filter(); f != nil {
		t.Errorf("the filter slot still serves %T after the reload emptied it", f)
	}
}

// TestPlacementConfigErrors: a placement slot cannot be native, and a
// failure policy needs a module and a known value.
func TestPlacementConfigErrors(t *testing.T) {
	for _, c := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"policies.filter.module": "native"}, "the filter slot has no policy compiled into the binary"},
		{map[string]string{"policies.score.failurePolicy": "Fail"}, "policies.score.failurePolicy: set without policies.score.module"},
		{map[string]string{"policies.filter.module": nodepoolWasm, "policies.filter.failurePolicy": "Retry"}, `"Retry": use Fail`},
		{map[string]string{"policies.queueSort.failurePolicy": "Fail"}, "policies.queueSort.failurePolicy"},
	} {
		_, err := config.Load(config.Source{Overrides: c.over})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.over, err, c.want)
		}
	}
	// A filter module in a slot it does not serve is refused at start.
	cfg, err := config.Load(config.Source{Overrides: map[string]string{"policies.score.module": nodepoolWasm}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadSlotsFor(t, cfg); err == nil || !strings.Contains(err.Error(), "does not export "+abi.ExportScore) {
		t.Errorf("nodepool as the score: %v, want a refusal naming %s", err, abi.ExportScore)
	}
}

// loadSlotsFor loads cfg's slots into a test Set.
func loadSlotsFor(t *testing.T, cfg *config.Config) (*wasmslot.Set, error) {
	t.Helper()
	set := newTestSet(t, nil)
	return set, loadSlots(t.Context(), set, &policy.Placement{}, cfg.Policies)
}
