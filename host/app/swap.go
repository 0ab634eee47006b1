package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/policyapi"
	"github.com/wasmsched/wasmsched/host/wasm/instrument"
)

// swapper changes the policy modules of the running scheduler: through the
// admin endpoint (POST /policies/{slot}), and by reloading the
// configuration on SIGHUP or when the configuration file or a module file
// changes. A swap that fails keeps the previous module and says why. A slot
// held by a SchedulingPolicy (policyWatch) is out of reach of both: the
// object takes precedence.
type swapper struct {
	profiles []*profile
	src      config.Source
	log      *slog.Logger
	admin    bool // serve POST /policies/{slot} (policies.adminEndpoint)

	mu      sync.Mutex // serialises reloads, admin swaps and the policy API's loads
	current *config.Config
	// held are the slots a SchedulingPolicy holds (the object's name): a
	// reload leaves them alone and the admin endpoint refuses them; the
	// policy API gives them back (restore). Guarded by mu.
	held map[policyapi.SlotKey]string
}

// heldBy names the SchedulingPolicy holding a slot; "" when none does. The
// caller holds s.mu.
func (s *swapper) heldBy(p *profile, slot abi.Slot) string {
	return s.held[policyapi.SlotKey{Profile: p.name, Slot: slot}]
}

// restore loads a slot's configured module (from the current
// configuration) once no SchedulingPolicy holds it. The caller holds s.mu.
func (s *swapper) restore(ctx context.Context, key policyapi.SlotKey, why string) {
	p := s.profile(key.Profile)
	if p == nil || s.current == nil {
		return
	}
	var files map[abi.Slot]config.Module
	for _, pc := range s.current.Profiles {
		if pc.SchedulerName == p.name {
			files = pc.Policies
		}
	}
	src, err := source(key.Slot, files)
	if err != nil {
		s.log.Error("restoring the configured module: the previous module keeps serving", "trigger", why, "profile", p.name, "slot", key.Slot.String(), "err", err)
		return
	}
	if src.serves(p.set.Current()[key.Slot]) {
		src.setFailure(p.placement, key.Slot)
		return
	}
	if err := src.load(ctx, p.set, p.placement, key.Slot); err != nil {
		s.log.Error("restoring the configured module refused; the previous module keeps serving", "trigger", why, "profile", p.name, "slot", key.Slot.String(), "module", src.name, "err", err)
		return
	}
	s.log.Info("policy swapped: the configured module is back", "trigger", why, "profile", p.name, "slot", key.Slot.String(), "module", src.name, "sha256", src.digest())
}

func (s *swapper) profile(name string) *profile {
	if name == "" {
		return s.profiles[0]
	}
	for _, p := range s.profiles {
		if p.name == name {
			return p
		}
	}
	return nil
}

// swapResult is the admin endpoint's answer.
type swapResult struct {
	Profile string  `json:"profile"`
	Slot    string  `json:"slot"`
	Module  string  `json:"module"`
	SHA256  string  `json:"sha256"`
	TookMS  float64 `json:"tookMilliseconds"`
	Error   string  `json:"error,omitempty"`
}

// register adds the policy routes to mux: GET /policies always (read
// only, like /metrics), POST /policies/{slot} only on a listener that may
// upload (the plain one, never the secure one) when the admin endpoint is
// on, which config allows on a loopback listener only: it has no
// authentication.
func (s *swapper) register(mux *http.ServeMux, upload bool) {
	mux.HandleFunc("GET /policies", s.get)
	if upload && s.admin {
		mux.HandleFunc("POST /policies/{slot}", s.post)
	}
}

// post loads the request body as the module of a slot: ?profile= names the
// profile (default: the first), ?sha256= pins the body, ?name= names the
// module in logs and metrics. A slot held by a SchedulingPolicy answers 409
// naming the object: the API takes precedence.
func (s *swapper) post(w http.ResponseWriter, r *http.Request) {
	slot, ok := abi.ParseSlot(r.PathValue("slot"))
	if !ok {
		http.Error(w, fmt.Sprintf("unknown slot %q: want one of %s", r.PathValue("slot"), abi.SlotNames()), http.StatusNotFound)
		return
	}
	p := s.profile(r.URL.Query().Get("profile"))
	if p == nil {
		http.Error(w, fmt.Sprintf("unknown profile %q", r.URL.Query().Get("profile")), http.StatusNotFound)
		return
	}
	bin, err := io.ReadAll(http.MaxBytesReader(w, r.Body, instrument.MaxModuleSize))
	if err != nil {
		http.Error(w, fmt.Sprintf("read the module: %v (at most %d bytes)", err, instrument.MaxModuleSize), http.StatusRequestEntityTooLarge)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "admin:" + digest(bin)[:12]
	}
	res := swapResult{Profile: p.name, Slot: slot.String(), Module: name, SHA256: digest(bin)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if obj := s.heldBy(p, slot); obj != "" {
		res.Error = fmt.Sprintf("profile %s slot %s is held by SchedulingPolicy %q, which takes precedence over this endpoint: change or delete that object (kubectl edit schedulingpolicy %s)",
			p.name, slot, obj, obj)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(res)
		return
	}
	start := time.Now()
	err = p.set.Load(r.Context(), slot, name, bin, r.URL.Query().Get("sha256"))
	res.TookMS = float64(time.Since(start).Microseconds()) / 1000
	status := http.StatusOK
	if err != nil {
		res.Error = err.Error()
		status = http.StatusUnprocessableEntity
		s.log.Warn("policy swap refused; the previous module keeps serving", "profile", p.name, "slot", slot.String(), "module", name, "err", err)
	} else {
		s.log.Info("policy swapped", "profile", p.name, "slot", slot.String(), "module", name, "sha256", res.SHA256, "took", time.Since(start).Round(time.Microsecond))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(res)
}

// get lists each profile's modules and breakers. A native slot has no
// sha256 and no breaker: it shows "native": true, the module
// "native:<name>" and no sha256.
func (s *swapper) get(w http.ResponseWriter, _ *http.Request) {
	type slotState struct {
		Module      string    `json:"module"`
		SHA256      string    `json:"sha256,omitempty"`
		Native      bool      `json:"native,omitempty"`
		Since       time.Time `json:"since"`
		BreakerOpen bool      `json:"breakerOpen"`
		// HeldBy names the SchedulingPolicy that holds the slot.
		HeldBy string `json:"heldBy,omitempty"`
		// FailurePolicy is a placement slot's (Fail or Ignore); its module
		// is "" while the slot is empty.
		FailurePolicy string `json:"failurePolicy,omitempty"`
		// Shadow names the module a Shadow evaluates beside the slot's.
		Shadow string `json:"shadow,omitempty"`
	}
	s.mu.Lock()
	held := maps.Clone(s.held)
	s.mu.Unlock()
	out := map[string]map[string]slotState{}
	for _, p := range s.profiles {
		cur, brk := p.set.Current(), p.set.Breakers()
		var shadows map[abi.Slot]wasmslot.ModuleInfo
		if p.shadows != nil {
			shadows = p.shadows.Current()
		}
		m := map[string]slotState{}
		for _, slot := range abi.Slots {
			st := slotState{Module: cur[slot].Name, SHA256: cur[slot].SHA256, Native: cur[slot].IsNative(), Since: cur[slot].Since, BreakerOpen: brk[slot].Open,
				HeldBy: held[policyapi.SlotKey{Profile: p.name, Slot: slot}], Shadow: shadows[slot].Name}
			if slot.Placement() {
				st.FailurePolicy = p.placement.FailurePolicy(slot).String()
			}
			m[slot.String()] = st
		}
		out[p.name] = m
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// readyDetail lists the open breakers, for /readyz: the scheduler works on
// native defaults then, so it stays ready, but says so.
func (s *swapper) readyDetail() []string {
	var out []string
	for _, p := range s.profiles {
		for slot, b := range p.set.Breakers() {
			switch {
			case b.Open && slot.Placement():
				out = append(out, fmt.Sprintf("profile %s slot %s: circuit breaker open since %s, failure policy %s applies to every pod until a new module is loaded",
					p.name, slot, b.Since.Format(time.RFC3339), p.placement.FailurePolicy(slot)))
			case b.Open:
				out = append(out, fmt.Sprintf("profile %s slot %s: circuit breaker open since %s, native default in use until a new module is loaded",
					p.name, slot, b.Since.Format(time.RFC3339)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// reload reads the configuration again and loads every slot whose module
// source changed (another file, another pin, new content, or to or from
// module native), except the slots a SchedulingPolicy holds: they get the
// new configuration's module when the object goes (restore). Settings other than the policies need a restart; a change
// to them is logged.
func (s *swapper) reload(ctx context.Context, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, err := config.Load(s.src)
	if err != nil {
		s.log.Error("configuration reload refused; the running policies stay", "trigger", why, "err", err)
		return
	}
	for _, pc := range cfg.Profiles {
		p := s.profile(pc.SchedulerName)
		if p == nil {
			s.log.Warn("configuration reload: a new profile needs a restart", "profile", pc.SchedulerName)
			continue
		}
		cur := p.set.Current()
		for _, slot := range abi.Slots {
			if obj := s.heldBy(p, slot); obj != "" {
				// API object > configuration file > built-in.
				s.log.Debug("configuration reload: the slot is held by a SchedulingPolicy", "profile", p.name, "slot", slot.String(), "object", obj)
				continue
			}
			src, err := source(slot, pc.Policies)
			if err != nil {
				s.log.Error("configuration reload: the previous module keeps serving", "profile", p.name, "slot", slot.String(), "err", err)
				continue
			}
			if src.serves(cur[slot]) {
				src.setFailure(p.placement, slot)
				continue
			}
			start := time.Now()
			if err := src.load(ctx, p.set, p.placement, slot); err != nil {
				s.log.Error("policy swap refused; the previous module keeps serving", "trigger", why, "profile", p.name, "slot", slot.String(), "module", src.name, "err", err)
				continue
			}
			s.log.Info("policy swapped", "trigger", why, "profile", p.name, "slot", slot.String(), "module", src.name,
				"sha256", src.digest(), "took", time.Since(start).Round(time.Microsecond))
		}
	}
	if s.current != nil {
		for _, pc := range cfg.Profiles {
			for _, old := range s.current.Profiles {
				if old.SchedulerName == pc.SchedulerName && !samePlugins(old, pc) {
					s.log.Warn("configuration reload: plugins, plugin args and percentageOfNodesToScore apply after a restart", "profile", pc.SchedulerName)
				}
			}
		}
	}
	if s.current != nil {
		old, cur := s.current.Sandbox, cfg.Sandbox
		if old.CompilationCacheDir != cur.CompilationCacheDir {
			s.log.Warn("configuration reload: sandbox.compilationCacheDir applies after a restart")
		}
		old.CompilationCacheDir, cur.CompilationCacheDir = "", ""
		if old != cur {
			s.log.Warn("configuration reload: sandbox limits apply to modules loaded from now on; restart to apply them everywhere")
		}
	}
	s.current = cfg
}

// watch reloads on SIGHUP and when the configuration file or a module file
// of the current configuration changes (ConfigMap updates swap a symlink in
// the directory, so directories are watched). Events are debounced.
func (s *swapper) watch(ctx context.Context) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch the configuration: %w", err)
	}
	defer w.Close()
	watched := map[string]bool{}
	files := map[string]bool{}
	rewatch := func() {
		s.mu.Lock()
		cfg := s.current
		s.mu.Unlock()
		var paths []string
		if s.src.File != "" {
			paths = append(paths, s.src.File)
		}
		if cfg != nil {
			for _, pc := range cfg.Profiles {
				for _, m := range pc.Policies {
					if m.Path != "" {
						paths = append(paths, m.Path)
					}
				}
			}
		}
		clear(files)
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			files[abs] = true
			dir := filepath.Dir(abs)
			if !watched[dir] {
				if err := w.Add(dir); err != nil {
					s.log.Warn("cannot watch a directory; SIGHUP still reloads", "dir", dir, "err", err)
					continue
				}
				watched[dir] = true
			}
		}
	}
	rewatch()

	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			s.reload(ctx, "SIGHUP")
			rewatch()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			abs, _ := filepath.Abs(ev.Name)
			if files[abs] || strings.HasPrefix(filepath.Base(ev.Name), "..") {
				debounce = time.After(200 * time.Millisecond)
			}
		case <-debounce:
			debounce = nil
			s.reload(ctx, "file change")
			rewatch()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				s.log.Warn("watching the configuration", "err", err)
			}
		}
	}
}

// samePlugins reports whether two loads of a profile configure the same
// plugins, which only a restart changes.
func samePlugins(a, b config.Profile) bool {
	return reflect.DeepEqual(a.Plugins, b.Plugins) && reflect.DeepEqual(a.PluginConfig, b.PluginConfig) &&
		reflect.DeepEqual(a.PercentageOfNodesToScore, b.PercentageOfNodesToScore)
}
