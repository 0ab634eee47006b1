package wasmslot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// The breaker defaults: 5 failed calls within 10 s open a slot's breaker.
const (
	DefaultBreakerFailures = 5
	DefaultBreakerWindow   = 10 * time.Second
)

// SetOption configures a Set.
type SetOption func(*setOptions)

type setOptions struct {
	failures int
	window   time.Duration
	now      func() time.Time
	anyEmpty bool
}

// WithEmptySlots lets Empty empty every slot, not only the placement ones:
// for a Set whose Installer takes nil as "none" (the shadows', which a
// slot need not have).
func WithEmptySlots() SetOption { return func(o *setOptions) { o.anyEmpty = true } }

// WithBreaker sets when a slot's circuit breaker opens: after failures failed
// calls within window. failures 0 disables the breaker (a broken module is
// then called, and falls back, for every decision).
func WithBreaker(failures int, window time.Duration) SetOption {
	return func(o *setOptions) { o.failures, o.window = failures, window }
}

// WithClock sets the clock of the breakers and of ModuleInfo.Since (tests
// inject a fake one). The default is time.Now.
func WithClock(now func() time.Time) SetOption {
	return func(o *setOptions) {
		if now != nil {
			o.now = now
		}
	}
}

// ModuleInfo names the module serving a slot.
//
// A native policy installed by [Set.LoadNative] has no module: its Name is
// "native:<name>", its ABI is [NativeABI] and its SHA256 is empty (there is
// no binary to digest).
type ModuleInfo struct {
	// Name is the name given to Load (a path, or "builtin:<name>"), or
	// "native:<name>" for a native policy.
	Name string
	// SHA256 is the binary's digest, lowercase hex; "" for a native policy.
	SHA256 string
	// Since is when the module was installed.
	Since time.Time
	// ABI is the contract version the module speaks, "major.minor", or
	// NativeABI for a native policy.
	ABI string
}

// NativeABI is ModuleInfo.ABI of a native policy, which speaks Go, not the
// Wasm ABI.
const NativeABI = "native"

// IsNative reports whether the slot is served by a native policy
// ([Set.LoadNative]) rather than a Wasm module.
func (i ModuleInfo) IsNative() bool { return i.ABI == NativeABI }

// Set owns one profile's slot modules (abi.Slots) and swaps them while the
// scheduler runs. Its methods are safe for concurrent use.
//
// A swap never changes an installed adapter: Load builds a new adapter around
// the new module, with a new circuit breaker, hands it to the Installer, and
// then closes the previous module. Calls that already hold an instance of the
// previous module finish on it; a call that picked the previous adapter just
// before the swap but reaches the module after it was closed is handed to the
// adapter that replaced it (after Close, to the native default, counted as a
// fallback but not as a failure).
//
// LoadNative installs a policy compiled into the host instead of a module,
// through the same Installer and with the same retirement of what it
// replaces; a slot may go from Wasm to native and back while it is used.
type Set struct {
	rt      *wasm.Runtime
	limits  wasm.Limits
	rec     policy.Recorder
	install policy.Installer
	opts    setOptions

	closed atomic.Bool
	slots  [len(abi.Slots)]setSlot
}

type setSlot struct {
	// mu serialises Load and Close of the slot: it is held while a new
	// module is compiled, smoke-tested and installed and the old one closed.
	mu  sync.Mutex
	cur atomic.Pointer[loaded] // nil until the first successful Load
}

// loaded is a module installed in a slot. mod, brk and wasm are nil for a
// native policy (LoadNative): it has neither a module to close nor a
// breaker, and nothing to retire.
type loaded struct {
	mod  *wasm.Module
	brk  *breaker
	info ModuleInfo
	impl any     // what was handed to the Installer
	wasm adapter // impl, when it is a Wasm adapter
}

// retire tells a replaced policy what replaced it (nil: nothing, the Set
// closed); a native policy has nothing to retire.
func (l *loaded) retire(next any) {
	if l.wasm != nil {
		l.wasm.retire(next)
	}
}

// NewSet returns a Set with no module loaded: until Load succeeds for a slot,
// the slot is whatever the Installer's target held before. rec may be nil.
func NewSet(rt *wasm.Runtime, limits wasm.Limits, rec policy.Recorder, install policy.Installer, opts ...SetOption) *Set {
	if rec == nil {
		rec = policy.Discard{}
	}
	o := setOptions{failures: DefaultBreakerFailures, window: DefaultBreakerWindow, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return &Set{rt: rt, limits: limits, rec: rec, install: install, opts: o}
}

// loadError is a refused Load: the reason is the Swapped result label.
type loadError struct {
	reason string
	err    error
}

func (e *loadError) Error() string { return e.err.Error() }
func (e *loadError) Unwrap() error { return e.err }

// Refusal is why Load, LoadWithLimits or LoadNative refused a module, as
// counted with Recorder.Swapped: "invalid", "slot", "sha256", "smoke",
// "closed" or "unwired" ("invalid" for any other error; "" when err is nil). Callers
// that need a finer reason than "invalid" look for the sentinels of package
// wasm (wasm.ErrForbiddenImport, wasm.ErrABIMismatch, wasm.ErrTooLarge) with
// errors.Is.
func Refusal(err error) string {
	if le, ok := errors.AsType[*loadError](err); ok {
		return le.reason
	}
	if err != nil {
		return "invalid"
	}
	return ""
}

// Load compiles and validates bin (ABI version, imports, exports, memory),
// checks that it serves slot, verifies its sha256 when sha256hex is not empty
// (lowercase hex; a mismatch is refused), runs a smoke call through the
// slot's adapter on a synthetic input (a trap, an overrun deadline or a bad
// output refuses the module), builds the adapter with the slot's native
// default as fallback behind a new circuit breaker, installs it through the
// Installer, and only then closes the previous module. On any failure the
// previous module stays installed, and the error says what was wrong and what
// to do.
//
// Every attempt is counted with Recorder.Swapped: "success", or why it was
// refused: "invalid" (not a loadable policy module), "slot" (does not serve
// the slot, or no such slot), "sha256", "smoke" (failed a call on synthetic
// input), "closed" (the Set is closed) or "unwired" (the Installer has no
// function for the slot: a host bug).
//
// Loads of one slot are serialised; Load is safe to call while the slots are
// being used.
func (s *Set) Load(ctx context.Context, slot abi.Slot, name string, bin []byte, sha256hex string) error {
	return s.LoadWithLimits(ctx, slot, name, bin, sha256hex, s.limits)
}

// LoadWithLimits is Load with sandbox limits of the module's own instead of
// the Set's (a SchedulingPolicy's spec.sandbox); limits out of range refuse
// the module ("invalid"). The limits stay with the module: the next Load of
// the slot uses the Set's again.
func (s *Set) LoadWithLimits(ctx context.Context, slot abi.Slot, name string, bin []byte, sha256hex string, limits wasm.Limits) error {
	spec, ok := policy.SpecOf(slot)
	if !ok {
		s.rec.Swapped(slot, "slot")
		return fmt.Errorf("load policy %q: unknown slot %d: use one of %s", name, slot, abi.SlotNames())
	}
	ss := &s.slots[slot]
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return s.swapped(ss, slot, "policy "+strconv.Quote(name), s.load(ctx, ss, spec, name, bin, sha256hex, limits))
}

// swapped records the outcome of a load into ss (under ss.mu) and returns
// the caller's error: what was refused, why, and what keeps serving.
func (s *Set) swapped(ss *setSlot, slot abi.Slot, what string, err error) error {
	if err == nil {
		s.rec.Swapped(slot, "success")
		return nil
	}
	reason := "invalid"
	if le, ok := errors.AsType[*loadError](err); ok {
		reason = le.reason
	}
	s.rec.Swapped(slot, reason)
	return fmt.Errorf("load %s for slot %s: %w; %s", what, slot, err, keeps(ss.cur.Load()))
}

func keeps(l *loaded) string {
	if l == nil {
		return "the slot keeps its current policy"
	}
	if l.mod == nil {
		return fmt.Sprintf("the slot keeps the native policy %q", l.info.Name)
	}
	return fmt.Sprintf("the slot keeps module %q (sha256 %s)", l.info.Name, l.info.SHA256)
}

// load does Load's work; the caller holds ss.mu.
func (s *Set) load(ctx context.Context, ss *setSlot, spec *policy.Spec, name string, bin []byte, sha256hex string, limits wasm.Limits) error {
	slot := spec.Slot
	if s.closed.Load() {
		return &loadError{"closed", errors.New("the policy set is closed (the scheduler is shutting down)")}
	}
	if !spec.Wired(s.install) {
		return &loadError{"unwired", fmt.Errorf("the policy set has no installer for the %s slot (a host bug: report it)", slot)}
	}
	sum := sha256.Sum256(bin)
	if sha256hex != "" {
		if err := checkSHA256Hex(sha256hex); err != nil {
			return &loadError{"sha256", err}
		}
		if got := hex.EncodeToString(sum[:]); got != sha256hex {
			return &loadError{"sha256", fmt.Errorf("the module's sha256 is %s, not the expected %s: send the intended file, or update the pin", got, sha256hex)}
		}
	}
	m, err := s.rt.Load(ctx, name, bin, limits)
	if err != nil {
		return &loadError{"invalid", err}
	}
	installed := false
	defer func() {
		if !installed {
			_ = m.Close(ctx)
		}
	}()
	for _, exp := range slot.RequiredExports() {
		if !m.HasExport(exp) {
			return &loadError{"slot", fmt.Errorf("the module cannot serve the %s slot: it does not export %s (build it with the guest SDK's %s package, or load it into the slot it was built for)",
				slot, exp, spec.SDK)}
		}
	}
	brk := newBreaker(slot, s.opts.failures, s.opts.window, s.opts.now, s.rec)
	a, err := s.adapter(ctx, m, spec, brk)
	if err != nil {
		return &loadError{"smoke", err}
	}

	major, minor := m.ABIVersion()
	l := &loaded{mod: m, brk: brk, impl: a, wasm: a, info: ModuleInfo{
		Name: name, SHA256: hex.EncodeToString(sum[:]), Since: s.opts.now(), ABI: fmt.Sprintf("%d.%d", major, minor),
	}}
	spec.Install(s.install, a)
	installed = true
	s.replace(ctx, ss, l)
	return nil
}

// replace makes l the slot's current policy once it is installed, and
// retires the previous one: its breaker hands late calls to l's adapter, and
// its module, if it was not native, is closed. The caller holds ss.mu.
func (s *Set) replace(ctx context.Context, ss *setSlot, l *loaded) {
	old := ss.cur.Swap(l)
	if old == nil {
		return
	}
	old.retire(l.impl)
	old.close(ctx)
}

// close closes a retired module: at once, or, for a placement module that
// scheduling cycles hold, once the last of them is over (the cycle that
// began with a filter ends with it). Calls holding an instance of the
// module finish on it either way; its compiled code is released when they
// do. A native policy has nothing to close.
func (l *loaded) close(ctx context.Context) error {
	if l.mod == nil {
		return nil
	}
	if h, ok := l.wasm.(interface{ closeWhenFree(func()) }); ok {
		h.closeWhenFree(func() { _ = l.mod.Close(context.Background()) })
		return nil
	}
	return l.mod.Close(ctx)
}

// LoadNative installs impl, a policy compiled into the host, in slot through
// the Installer, in place of whatever the slot held. impl must implement the
// slot's interface of package policy (the slot table's Spec.Interface:
// policy.Sort, policy.BackoffSort, policy.PreEnqueue, policy.QueueingHint,
// policy.VictimOrder, policy.Filter or policy.Score; a sort that is also a
// policy.Keyer is keyed); any
// other value is refused with an error naming what it lacks. name says where
// the policy comes from (policies.Native names the built-in module its logic
// is from); Current reports the slot as ModuleInfo{Name: "native:" + name,
// ABI: NativeABI} with an empty SHA256.
//
// A native policy runs without the sandbox: it is called directly, with no
// smoke test, no deadline, no fallback to the native default and no circuit
// breaker (Breakers reports the zero BreakerState for its slot), and its
// calls are not counted with Recorder.Called. A Wasm module it replaces is
// retired and closed as Load does, and a module loaded later replaces it the
// same way.
//
// Every attempt is counted with Recorder.Swapped: "success", or "slot" (impl
// does not implement the slot's interface, or no such slot), "closed" or
// "unwired", as for Load. LoadNative is serialised with the slot's Loads and
// is safe to call while the slots are being used.
func (s *Set) LoadNative(slot abi.Slot, name string, impl any) error {
	full := "native:" + name
	spec, ok := policy.SpecOf(slot)
	if !ok {
		s.rec.Swapped(slot, "slot")
		return fmt.Errorf("load native policy %q: unknown slot %d: use one of %s", full, slot, abi.SlotNames())
	}
	ss := &s.slots[slot]
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return s.swapped(ss, slot, "native policy "+strconv.Quote(full), s.loadNative(ss, spec, full, impl))
}

// loadNative does LoadNative's work; the caller holds ss.mu.
func (s *Set) loadNative(ss *setSlot, spec *policy.Spec, name string, impl any) error {
	if s.closed.Load() {
		return &loadError{"closed", errors.New("the policy set is closed (the scheduler is shutting down)")}
	}
	if !spec.Wired(s.install) {
		return &loadError{"unwired", fmt.Errorf("the policy set has no installer for the %s slot (a host bug: report it)", spec.Slot)}
	}
	if !spec.Implements(impl) {
		return &loadError{"slot", fmt.Errorf("%T cannot serve the %s slot: it does not implement policy.%s (pass the slot's value from policies.Native, or build one with package guest-sdk/native)",
			impl, spec.Slot, spec.Interface)}
	}
	l := &loaded{impl: impl, info: ModuleInfo{Name: name, Since: s.opts.now(), ABI: NativeABI}}
	spec.Install(s.install, impl)
	s.replace(context.Background(), ss, l)
	return nil
}

// Empty empties a placement slot (filter or score): its policy is retired
// and its module closed as a swap retires them, and the slot's plugin does
// nothing until a module is loaded again. Current no longer reports the
// slot. The other slots always serve a policy and cannot be emptied, unless
// the Set was built WithEmptySlots. Emptying an empty slot succeeds and is
// not counted.
func (s *Set) Empty(slot abi.Slot) error {
	spec, ok := policy.SpecOf(slot)
	if !ok || !slot.Placement() && !s.opts.anyEmpty {
		return fmt.Errorf("empty slot %s: only the placement slots (filter, score) can be empty; load a module to replace the policy", slot)
	}
	ss := &s.slots[slot]
	ss.mu.Lock()
	defer ss.mu.Unlock()
	old := ss.cur.Load()
	if old == nil {
		return nil
	}
	if !spec.Clear(s.install) {
		return fmt.Errorf("empty slot %s: the policy set has no installer for it (a host bug: report it)", slot)
	}
	ss.cur.Store(nil)
	old.retire(nil)
	_ = old.close(context.Background())
	s.rec.Swapped(slot, "emptied")
	return nil
}

func checkSHA256Hex(h string) error {
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size || strings.ToLower(h) != h {
		return fmt.Errorf("%q is not a sha256: want 64 lowercase hex digits (sha256sum FILE prints it)", h)
	}
	return nil
}

// adapter builds the slot's adapter around m with the native default as
// fallback and smoke-tests it. brk is attached only after the smoke test, so
// that the test's failures do not count against the module.
func (s *Set) adapter(ctx context.Context, m *wasm.Module, spec *policy.Spec, brk *breaker) (adapter, error) {
	a, err := builders[spec.Slot](m, spec.Slot, spec.Default, s.rec)
	if err != nil {
		return nil, err
	}
	if err := smoke(ctx, m, func(inst *wasm.Instance) error { return a.smoke(inst, policy.Smoke()) }); err != nil {
		return nil, err
	}
	a.module().brk = brk
	return a, nil
}

// smoke runs call on an instance of m and wraps its error.
func smoke(ctx context.Context, m *wasm.Module, call func(*wasm.Instance) error) error {
	inst, err := m.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("smoke test: %w", err)
	}
	defer m.Release(inst)
	if err := call(inst); err != nil {
		return fmt.Errorf("smoke test on a synthetic pod failed, so the module would fall back on real ones: %w: fix the policy and test it with the guest SDK's policytest package", err)
	}
	return nil
}

// Current names the module serving each slot that a Load or LoadNative has
// filled.
func (s *Set) Current() map[abi.Slot]ModuleInfo {
	out := make(map[abi.Slot]ModuleInfo, len(s.slots))
	for i := range s.slots {
		if l := s.slots[i].cur.Load(); l != nil {
			out[abi.Slot(i)] = l.info
		}
	}
	return out
}

// Breakers reports the circuit breaker of each slot that a Load or
// LoadNative has filled. An open breaker means the slot answers with its
// native default. A slot served by a native policy has no breaker: its state
// is the zero BreakerState (not Enabled, never Open).
func (s *Set) Breakers() map[abi.Slot]BreakerState {
	out := make(map[abi.Slot]BreakerState, len(s.slots))
	for i := range s.slots {
		if l := s.slots[i].cur.Load(); l != nil {
			out[abi.Slot(i)] = l.brk.state()
		}
	}
	return out
}

// Close closes every slot's module (calls in flight finish first, on their
// instances) and makes further Loads and LoadNatives fail. Adapters still
// installed answer with their native defaults afterwards, without counting
// failures (the placement adapters with policy.ErrNoModule, which their
// plugins read as an empty slot); a native policy still installed keeps
// answering itself. It waits for a Load in progress.
func (s *Set) Close(ctx context.Context) error {
	s.closed.Store(true)
	var errs []error
	for i := range s.slots {
		ss := &s.slots[i]
		ss.mu.Lock()
		if l := ss.cur.Load(); l != nil {
			l.retire(nil)
			if l.mod != nil { // a native policy has nothing to close
				if err := l.close(ctx); err != nil {
					errs = append(errs, fmt.Errorf("close policy %q of slot %s: %w", l.info.Name, abi.Slot(i), err))
				}
			}
		}
		ss.mu.Unlock()
	}
	return errors.Join(errs...)
}
