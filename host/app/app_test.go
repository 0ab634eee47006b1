package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
)

// prioritySort is a queueSort module other than the built-in one.
var prioritySort = filepath.Join("..", "..", "guest-sdk", "examples", "prioritysort", "prioritysort.wasm")

// newTestApp builds the App of the default configuration with over (and
// the configuration file over["file"], if any) on a fake cluster, without
// running it; its logs go to logs if not nil. It reloads from the same
// source. The metrics listener is on a free loopback port and closed with
// the App; the secure listener is off unless over sets it.
func newTestApp(t *testing.T, over map[string]string, logs io.Writer) *App {
	t.Helper()
	o := map[string]string{
		"metrics.bindAddress":       "127.0.0.1:0",
		"secureServing.bindAddress": "",
		// A deadline no call reaches: the default 100 ms is wall-clock,
		// and a smoke call descheduled that long on a loaded machine would
		// fail.
		"sandbox.deadline": "10s",
	}
	for k, v := range over {
		o[k] = v
	}
	src := config.Source{Overrides: o}
	if f, ok := over["file"]; ok {
		delete(o, "file")
		src.File = f
	}
	cfg, err := config.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	if logs == nil {
		logs = io.Discard
	}
	a, err := New(context.Background(), cfg, fake.NewClientset(), WithLogger(slog.New(slog.NewTextHandler(logs, nil))), WithReload(src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// slotState is a slot in GET /policies.
type slotState struct {
	Module      string `json:"module"`
	SHA256      string `json:"sha256"`
	Native      bool   `json:"native"`
	BreakerOpen bool   `json:"breakerOpen"`
}

// getPolicies is GET /policies of srv.
func getPolicies(t *testing.T, srv *httptest.Server) map[string]map[string]slotState {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + "/policies")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]map[string]slotState
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /policies: %s, %v", res.Status, err)
	}
	return out
}

// post is POST /policies/{slot}?query of srv with body; it returns the
// status and the decoded answer (zero if it is not JSON).
func post(t *testing.T, srv *httptest.Server, slot, query string, body []byte) (int, swapResult) {
	t.Helper()
	url := srv.URL + "/policies/" + slot
	if query != "" {
		url += "?" + query
	}
	res, err := srv.Client().Post(url, "application/wasm", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out swapResult
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func readModule(t *testing.T, path string) []byte {
	t.Helper()
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAdminEndpoint: with policies.adminEndpoint, POST /policies/{slot}
// swaps a module and GET /policies shows it; a module that is refused (not
// Wasm, a wrong pin) keeps the previous one; unknown slots and profiles are
// 404.
func TestAdminEndpoint(t *testing.T) {
	a := newTestApp(t, map[string]string{"policies.adminEndpoint": "true"}, nil)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	builtin := slotState{Module: "builtin:backoffpop", SHA256: digest(policies.Builtin(abi.SlotQueueSort).Wasm)}
	if got := getPolicies(t, srv)["wasmsched"]["queueSort"]; got != builtin {
		t.Fatalf("queueSort at start: %+v, want %+v", got, builtin)
	}

	bin := readModule(t, prioritySort)
	swapped := slotState{Module: "admin:" + digest(bin)[:12], SHA256: digest(bin)}
	refused := []struct {
		name, slot, query string
		body              []byte
		status            int
		err               string
	}{
		{"not Wasm", "queueSort", "", []byte("not wasm at all"), http.StatusUnprocessableEntity, "admin:"},
		{"wrong pin", "queueSort", "sha256=" + strings.Repeat("0", 64), bin, http.StatusUnprocessableEntity, "sha256"},
		{"wrong slot", "preEnqueue", "", bin, http.StatusUnprocessableEntity, "wasmsched_pre_enqueue"},
		{"unknown slot", "queueOrder", "", bin, http.StatusNotFound, ""},
		{"unknown profile", "queueSort", "profile=nosuch", bin, http.StatusNotFound, ""},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			status, res := post(t, srv, tt.slot, tt.query, tt.body)
			if status != tt.status || !strings.Contains(res.Error, tt.err) {
				t.Errorf("POST: %d, %+v; want %d and an error with %q", status, res, tt.status, tt.err)
			}
			if got := getPolicies(t, srv)["wasmsched"]["queueSort"]; got != builtin {
				t.Errorf("queueSort after a refused swap: %+v, want the previous %+v", got, builtin)
			}
		})
	}

	status, res := post(t, srv, "queueSort", "", bin)
	want := swapResult{Profile: "wasmsched", Slot: "queueSort", Module: swapped.Module, SHA256: swapped.SHA256}
	res.TookMS = 0
	if status != http.StatusOK || res != want {
		t.Fatalf("POST /policies/queueSort: %d, %+v; want 200, %+v", status, res, want)
	}
	if got := getPolicies(t, srv)["wasmsched"]["queueSort"]; got != swapped {
		t.Errorf("queueSort after the swap: %+v, want %+v", got, swapped)
	}
	if got := a.Policies("wasmsched")[abi.SlotQueueSort].Name; got != swapped.Module {
		t.Errorf("Policies: queueSort %q, want %q", got, swapped.Module)
	}

	// A refused module after a swap keeps the swapped one.
	if status, _ := post(t, srv, "queueSort", "", []byte("\x00asm garbage")); status != http.StatusUnprocessableEntity {
		t.Errorf("POST garbage: %d, want 422", status)
	}
	if got := getPolicies(t, srv)["wasmsched"]["queueSort"]; got != swapped {
		t.Errorf("queueSort after a refused swap: %+v, want %+v", got, swapped)
	}

	// ?name= names the module, ?sha256= pins it.
	status, res = post(t, srv, "queueSort", "name=mine&sha256="+digest(bin), bin)
	if status != http.StatusOK || res.Module != "mine" {
		t.Errorf("POST ?name=mine with its pin: %d, %+v", status, res)
	}
}

// TestAdminEndpointOff: without policies.adminEndpoint (the default) there
// is no POST route, and GET /policies is served all the same.
func TestAdminEndpointOff(t *testing.T) {
	a := newTestApp(t, nil, nil)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, slot := range []string{"queueSort", "nosuch"} {
		status, _ := post(t, srv, slot, "", readModule(t, prioritySort))
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			t.Errorf("POST /policies/%s with the endpoint off: %d, want 404 or 405", slot, status)
		}
	}
	got := getPolicies(t, srv)
	if m := got["wasmsched"]["queueSort"].Module; m != "builtin:backoffpop" {
		t.Errorf("queueSort: %q, want builtin:backoffpop", m)
	}
	if len(got["wasmsched"]) != len(abi.Slots) {
		t.Errorf("GET /policies lists %d slots, want %d: %v", len(got["wasmsched"]), len(abi.Slots), got)
	}
}

// TestReloadModuleFiles: a reload loads a slot whose file changed (another
// file, new content), keeps the running module when the new one is refused
// or the configuration is invalid, and loads nothing when nothing changed.
func TestReloadModuleFiles(t *testing.T) {
	dir := t.TempDir()
	file, mod := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "sort.wasm")
	write := func(path string, content []byte) {
		t.Helper()
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := readModule(t, prioritySort)
	write(mod, bin)
	write(file, []byte("policies:\n  queueSort: {module: "+mod+"}\n"))
	var logs syncBuffer
	a := newTestApp(t, map[string]string{"file": file}, &logs)
	ctx := context.Background()
	cur := func() (string, string, time.Time) {
		m := a.Policies("wasmsched")[abi.SlotQueueSort]
		return m.Name, m.SHA256, m.Since
	}
	name, sum, since := cur()
	if name != mod || sum != digest(bin) {
		t.Fatalf("queueSort at start: %s %s, want %s %s", name, sum, mod, digest(bin))
	}

	a.swap.reload(ctx, "test")
	if n, s, at := cur(); n != name || s != sum || !at.Equal(since) {
		t.Errorf("reload without a change loaded queueSort again: %s %s since %v (was %v)", n, s, at, since)
	}

	write(mod, []byte("not wasm at all"))
	a.swap.reload(ctx, "test")
	if n, s, at := cur(); n != name || s != sum || !at.Equal(since) {
		t.Errorf("a refused module replaced the running one: %s %s since %v", n, s, at)
	}
	if !strings.Contains(logs.String(), "policy swap refused; the previous module keeps serving") {
		t.Errorf("the refused swap is not logged:\n%s", logs.String())
	}

	write(file, []byte("policies:\n  queueSort: {modul: typo}\n"))
	a.swap.reload(ctx, "test")
	if n, _, _ := cur(); n != name || !strings.Contains(logs.String(), "configuration reload refused") {
		t.Errorf("invalid configuration: queueSort %s; log:\n%s", n, logs.String())
	}

	write(file, []byte("policies: {}\n"))
	a.swap.reload(ctx, "test")
	if n, s, _ := cur(); n != "builtin:backoffpop" || s != digest(policies.Builtin(abi.SlotQueueSort).Wasm) {
		t.Errorf("back to the built-in: queueSort %s %s", n, s)
	}
	want := map[abi.Slot]string{
		abi.SlotQueueSort: "builtin:backoffpop", abi.SlotBackoffSort: "builtin:backoffpop", abi.SlotPreEnqueue: "builtin:gangpreempt",
		abi.SlotQueueingHint: "builtin:hints", abi.SlotVictimOrder: "builtin:gangpreempt",
	}
	got := map[abi.Slot]string{}
	for s, m := range a.Policies("wasmsched") {
		got[s] = m.Name
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules after the reloads (-want, +got):\n%s", diff)
	}
}

// TestReloadKubeSchedulerConfiguration: a reload of a
// KubeSchedulerConfiguration swaps the slots of its wasmsched.io/Policies
// entries, per profile, and says that a change to a profile's scoring
// needs a restart.
func TestReloadKubeSchedulerConfiguration(t *testing.T) {
	dir := t.TempDir()
	file, mod := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "sort.wasm")
	if err := os.WriteFile(mod, readModule(t, prioritySort), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(queueSort, percentage string) {
		t.Helper()
		text := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: wasmsched
- schedulerName: other
  percentageOfNodesToScore: ` + percentage + `
  pluginConfig:
  - name: wasmsched.io/Policies
    args:
      queueSort: {module: ` + queueSort + `}
`
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(mod, "50")
	var logs syncBuffer
	a := newTestApp(t, map[string]string{"file": file}, &logs)
	if got := a.Policies("other")[abi.SlotQueueSort].Name; got != mod {
		t.Fatalf("profile other: queueSort %s at start, want %s", got, mod)
	}
	write("native", "60")
	a.swap.reload(context.Background(), "test")
	if got := a.Policies("other")[abi.SlotQueueSort].Name; got != "native:backoffpop" {
		t.Errorf("profile other: queueSort %s after the reload, want native:backoffpop", got)
	}
	if got := a.Policies("wasmsched")[abi.SlotQueueSort].Name; got != "builtin:backoffpop" {
		t.Errorf("profile wasmsched: queueSort %s, want builtin:backoffpop (unchanged)", got)
	}
	if !strings.Contains(logs.String(), "apply after a restart") || !strings.Contains(logs.String(), "profile=other") {
		t.Errorf("the changed percentageOfNodesToScore is not reported as needing a restart:\n%s", logs.String())
	}
}

// TestReloadOnFileChange: while watch runs, writing the configuration file
// reloads it.
func TestReloadOnFileChange(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("policies: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, map[string]string{"file": file}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.swap.watch(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for a.Policies("wasmsched")[abi.SlotQueueSort].Name != "native:backoffpop" {
		if time.Now().After(deadline) {
			t.Fatalf("queueSort %s 30s after the file changed, want native:backoffpop", a.Policies("wasmsched")[abi.SlotQueueSort].Name)
		}
		// Written until seen: the watch may start after a first write.
		if err := os.WriteFile(file, []byte("policies:\n  queueSort: {module: native}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestRun: Run serves the listener, reports ready once the informers have
// synced, and returns nil when its context is canceled, closing the
// listener.
func TestRun(t *testing.T) {
	a := newTestApp(t, map[string]string{"metrics.profiling": "true"}, nil)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before Run: %d, want 503", rec.Code)
	}
	addr := a.Addr()
	if addr == "" {
		t.Fatal("no listener on metrics.bindAddress 127.0.0.1:0")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	get := getter(http.DefaultClient, "http://"+addr)
	waitReadyz(t, get, cancel, "")
	for path, want := range map[string]string{
		"/healthz": "ok", "/livez": "ok", "/metrics": "scheduler_pending_pods", "/debug/pprof/": "goroutine", "/policies": `"queueSort"`,
	} {
		if code, body, err := get(path); err != nil || code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, %v; want 200 and %q in:\n%.300s", path, code, err, want, body)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return 30s after its context ended")
	}
	if _, _, err := get("/healthz"); err == nil {
		t.Errorf("the listener still serves after Run returned")
	}
}

// TestNewRefusesBadModule: a module that cannot be loaded fails New, with
// the profile, slot and module named.
func TestNewRefusesBadModule(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("not wasm at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{Overrides: map[string]string{
		"policies.queueSort.module": bad, "metrics.bindAddress": "127.0.0.1:0", "secureServing.bindAddress": "127.0.0.1:0",
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), cfg, fake.NewClientset())
	if err == nil || !strings.Contains(err.Error(), "profile wasmsched: policy for slot queueSort: ") || !strings.Contains(err.Error(), bad) {
		t.Errorf("New: %v; want the profile, slot and module named", err)
	}
}

// TestConfigDefaultsMatchRuntime: every sandbox default of the
// configuration is the default of the part of the runtime it configures,
// field by field, so that a new field of config.Sandbox or wasm.Limits
// fails here until its defaults are held together.
func TestConfigDefaultsMatchRuntime(t *testing.T) {
	cfg, err := config.Load(config.Source{})
	if err != nil {
		t.Fatal(err)
	}
	// Each config.Sandbox field, and the runtime's default for it.
	runtimeDefault := map[string]any{
		"WatchdogTick":        wasm.DefaultWatchdogTick,
		"BreakerFailures":     wasmslot.DefaultBreakerFailures,
		"BreakerWindow":       wasmslot.DefaultBreakerWindow,
		"CompilationCacheDir": "", // in memory only: NewRuntime without WithCompilationCacheDir
	}
	limits := reflect.ValueOf(wasm.DefaultLimits())
	for i := range limits.NumField() {
		f := limits.Type().Field(i)
		if _, ok := reflect.TypeOf(config.Sandbox{}).FieldByName(f.Name); !ok {
			t.Errorf("wasm.Limits.%s has no config.Sandbox field of that name: add one, or map it here", f.Name)
			continue
		}
		runtimeDefault[f.Name] = limits.Field(i).Interface()
	}
	got := reflect.ValueOf(cfg.Sandbox)
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		want, ok := runtimeDefault[name]
		if !ok {
			t.Errorf("config.Sandbox.%s: no runtime default to compare it with: add it to this test", name)
			continue
		}
		if g := got.Field(i).Interface(); g != want {
			t.Errorf("config.Sandbox.%s defaults to %v (%T); the runtime's default is %v (%T)", name, g, g, want, want)
		}
	}
	// Limits carries every field that wasm.Limits has.
	if diff := cmp.Diff(wasm.DefaultLimits(), Limits(cfg.Sandbox)); diff != "" {
		t.Errorf("Limits(config defaults) (-want, +got):\n%s", diff)
	}
}

// TestCompilationCacheDir: sandbox.compilationCacheDir reaches the Wasm
// runtime, which keeps the compiled built-in modules there.
func TestCompilationCacheDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	newTestApp(t, map[string]string{"sandbox.compilationCacheDir": dir}, nil)
	var files int
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return err
	})
	if err != nil || files == 0 {
		t.Errorf("compilation cache %s: %d files, %v; want the compiled modules", dir, files, err)
	}
}

// TestSecureListener: with secureServing.bindAddress, Run serves HTTPS
// next to the plain listener: the probes to anyone, /metrics and
// /policies to no anonymous caller (who may be authorized is host/secure's
// and the e2e tests' business), and SecureAddr says where.
func TestSecureListener(t *testing.T) {
	a := newTestApp(t, map[string]string{"secureServing.bindAddress": "127.0.0.1:0"}, nil)
	addr := a.SecureAddr()
	if addr == "" {
		t.Fatal("no secure listener on secureServing.bindAddress 127.0.0.1:0")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test listener
	}}
	defer hc.CloseIdleConnections()
	get := getter(hc, "https://"+addr)
	waitReadyz(t, get, cancel, " over HTTPS")
	for path, want := range map[string]int{"/healthz": 200, "/livez": 200, "/metrics": 401, "/policies": 401} {
		if code, _, err := get(path); err != nil || code != want {
			t.Errorf("GET %s over HTTPS without credentials: %d, %v; want %d", path, code, err, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return 30s after its context ended")
	}
	if _, _, err := get("/livez"); err == nil {
		t.Errorf("the secure listener still serves after Run returned")
	}
}

// getter GETs base+path with hc, returning the status code and the body.
func getter(hc *http.Client, base string) func(path string) (int, string, error) {
	return func(path string) (int, string, error) {
		res, err := hc.Get(base + path)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
}

// waitReadyz polls /readyz through get until it answers "ok", for at most
// 30 s; on timeout it cancels the Run and fails the test.
func waitReadyz(t *testing.T, get func(string) (int, string, error), cancel func(), over string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, err := get("/readyz")
		if err == nil && code == http.StatusOK && body == "ok" {
			return
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("/readyz not ok%s 30s after Run: %d %q %v", over, code, body, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
