package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// Installer says where a slot's policy goes when it changes: the queue's
// setters for the four queue slots (queue.SetSort and so on), and whatever
// holds preemption's victim order. Each function receives a new adapter on
// every successful [Set.Load]; adapters are never changed after they are
// installed.
type Installer struct {
	Sort         func(Sort)
	BackoffSort  func(BackoffSort)
	PreEnqueue   func(PreEnqueue)
	QueueingHint func(QueueingHint)
	VictimOrder  func(VictimOrder)
}

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
}

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

// Set owns one profile's five slot modules and swaps them while the
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
	rec     Recorder
	install Installer
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

// loaded is a module installed in a slot. mod and brk are nil for a native
// policy (LoadNative): it has neither a module to close nor a breaker.
type loaded struct {
	mod     *wasm.Module
	brk     *breaker
	info    ModuleInfo
	adapter any // the adapter handed to the Installer
}

// NewSet returns a Set with no module loaded: until Load succeeds for a slot,
// the slot is whatever the Installer's target held before. rec may be nil.
func NewSet(rt *wasm.Runtime, limits wasm.Limits, rec Recorder, install Installer, opts ...SetOption) *Set {
	if rec == nil {
		rec = Discard{}
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
	if int(slot) >= len(s.slots) {
		s.rec.Swapped(slot, "slot")
		return fmt.Errorf("load policy %q: unknown slot %d: use one of %s", name, slot, slotNames())
	}
	ss := &s.slots[slot]
	ss.mu.Lock()
	defer ss.mu.Unlock()
	err := s.load(ctx, ss, slot, name, bin, sha256hex)
	if err != nil {
		reason := "invalid"
		if le, ok := errors.AsType[*loadError](err); ok {
			reason = le.reason
		}
		s.rec.Swapped(slot, reason)
		return fmt.Errorf("load policy %q for slot %s: %w; %s", name, slot, err, keeps(ss.cur.Load()))
	}
	s.rec.Swapped(slot, "success")
	return nil
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

func slotNames() string {
	names := make([]string, len(abi.Slots))
	for i, s := range abi.Slots {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// load does Load's work; the caller holds ss.mu.
func (s *Set) load(ctx context.Context, ss *setSlot, slot abi.Slot, name string, bin []byte, sha256hex string) error {
	if s.closed.Load() {
		return &loadError{"closed", errors.New("the policy set is closed (the scheduler is shutting down)")}
	}
	if !s.wired(slot) {
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
	m, err := s.rt.Load(ctx, name, bin, s.limits)
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
				slot, exp, sdkPackage(slot))}
		}
	}
	brk := newBreaker(slot, s.opts.failures, s.opts.window, s.opts.now, s.rec)
	adapter, install, err := s.adapter(ctx, m, slot, brk)
	if err != nil {
		return &loadError{"smoke", err}
	}

	major, minor := m.ABIVersion()
	l := &loaded{mod: m, brk: brk, adapter: adapter, info: ModuleInfo{
		Name: name, SHA256: hex.EncodeToString(sum[:]), Since: s.opts.now(), ABI: fmt.Sprintf("%d.%d", major, minor),
	}}
	install()
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
	old.brk.retire(l.adapter)
	if old.mod != nil {
		// Calls holding an instance of the old module finish on it; its
		// compiled code is released when they do.
		_ = old.mod.Close(ctx)
	}
}

// LoadNative installs impl, a policy compiled into the host, in slot through
// the Installer, in place of whatever the slot held. impl must implement the
// slot's interface (Sort, BackoffSort, PreEnqueue, QueueingHint or
// VictimOrder; a Sort or BackoffSort that is also a Keyer is keyed); any
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
	if int(slot) >= len(s.slots) {
		s.rec.Swapped(slot, "slot")
		return fmt.Errorf("load native policy %q: unknown slot %d: use one of %s", full, slot, slotNames())
	}
	ss := &s.slots[slot]
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := s.loadNative(ss, slot, full, impl); err != nil {
		reason := "invalid"
		if le, ok := errors.AsType[*loadError](err); ok {
			reason = le.reason
		}
		s.rec.Swapped(slot, reason)
		return fmt.Errorf("load native policy %q for slot %s: %w; %s", full, slot, err, keeps(ss.cur.Load()))
	}
	s.rec.Swapped(slot, "success")
	return nil
}

// loadNative does LoadNative's work; the caller holds ss.mu.
func (s *Set) loadNative(ss *setSlot, slot abi.Slot, name string, impl any) error {
	if s.closed.Load() {
		return &loadError{"closed", errors.New("the policy set is closed (the scheduler is shutting down)")}
	}
	if !s.wired(slot) {
		return &loadError{"unwired", fmt.Errorf("the policy set has no installer for the %s slot (a host bug: report it)", slot)}
	}
	var install func()
	switch slot {
	case abi.SlotQueueSort:
		if a, ok := impl.(Sort); ok {
			install = func() { s.install.Sort(a) }
		}
	case abi.SlotBackoffSort:
		if a, ok := impl.(BackoffSort); ok {
			install = func() { s.install.BackoffSort(a) }
		}
	case abi.SlotPreEnqueue:
		if a, ok := impl.(PreEnqueue); ok {
			install = func() { s.install.PreEnqueue(a) }
		}
	case abi.SlotQueueingHint:
		if a, ok := impl.(QueueingHint); ok {
			install = func() { s.install.QueueingHint(a) }
		}
	case abi.SlotVictimOrder:
		if a, ok := impl.(VictimOrder); ok {
			install = func() { s.install.VictimOrder(a) }
		}
	}
	if install == nil {
		return &loadError{"slot", fmt.Errorf("%T cannot serve the %s slot: it does not implement policy.%s (pass the slot's value from policies.Native, or build one with package guest-sdk/native)",
			impl, slot, slotInterface(slot))}
	}
	l := &loaded{adapter: impl, info: ModuleInfo{Name: name, Since: s.opts.now(), ABI: NativeABI}}
	install()
	s.replace(context.Background(), ss, l)
	return nil
}

// slotInterface names the interface of package policy that a slot's policy
// implements.
func slotInterface(slot abi.Slot) string {
	switch slot {
	case abi.SlotQueueSort:
		return "Sort"
	case abi.SlotBackoffSort:
		return "BackoffSort"
	case abi.SlotPreEnqueue:
		return "PreEnqueue"
	case abi.SlotQueueingHint:
		return "QueueingHint"
	case abi.SlotVictimOrder:
		return "VictimOrder"
	}
	return "?"
}

func (s *Set) wired(slot abi.Slot) bool {
	switch slot {
	case abi.SlotQueueSort:
		return s.install.Sort != nil
	case abi.SlotBackoffSort:
		return s.install.BackoffSort != nil
	case abi.SlotPreEnqueue:
		return s.install.PreEnqueue != nil
	case abi.SlotQueueingHint:
		return s.install.QueueingHint != nil
	case abi.SlotVictimOrder:
		return s.install.VictimOrder != nil
	}
	return false
}

func checkSHA256Hex(h string) error {
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size || strings.ToLower(h) != h {
		return fmt.Errorf("%q is not a sha256: want 64 lowercase hex digits (sha256sum FILE prints it)", h)
	}
	return nil
}

// adapter builds the slot's adapter around m with the native default as
// fallback, smoke-tests it, and returns it with the function that installs
// it. brk is attached only after the smoke test, so that the test's failures
// do not count against the module.
func (s *Set) adapter(ctx context.Context, m *wasm.Module, slot abi.Slot, brk *breaker) (any, func(), error) {
	in := smokeInputs()
	switch slot {
	case abi.SlotQueueSort:
		a, err := NewWasmSort(m, slot, PrioritySort{}, s.rec)
		if err != nil {
			return nil, nil, err
		}
		if err := smoke(ctx, m, func(inst *wasm.Instance) error { return a.smoke(inst, in) }); err != nil {
			return nil, nil, err
		}
		a.brk = brk
		return a, func() { s.install.Sort(a) }, nil
	case abi.SlotBackoffSort:
		a, err := NewWasmBackoffSort(m, BackoffExpiry{}, s.rec)
		if err != nil {
			return nil, nil, err
		}
		if err := smoke(ctx, m, func(inst *wasm.Instance) error {
			if err := a.WasmSort.smoke(inst, in); err != nil {
				return err
			}
			_, err := a.callMayPop(inst, in.pods[0].Bytes())
			return err
		}); err != nil {
			return nil, nil, err
		}
		a.brk = brk
		return a, func() { s.install.BackoffSort(a) }, nil
	case abi.SlotPreEnqueue:
		a, err := NewWasmPreEnqueue(m, Admit{}, s.rec)
		if err != nil {
			return nil, nil, err
		}
		if err := smoke(ctx, m, func(inst *wasm.Instance) error {
			var g abi.Gate
			return a.callPreEnqueue(inst, in.pods[0].Bytes(), &g)
		}); err != nil {
			return nil, nil, err
		}
		a.brk = brk
		return a, func() { s.install.PreEnqueue(a) }, nil
	case abi.SlotQueueingHint:
		a, err := NewWasmQueueingHint(m, AlwaysQueue{}, s.rec)
		if err != nil {
			return nil, nil, err
		}
		if err := smoke(ctx, m, func(inst *wasm.Instance) error {
			out := make([]abi.Hint, 1)
			return a.callHints(inst, in.event, in.pods[:1], out)
		}); err != nil {
			return nil, nil, err
		}
		a.brk = brk
		return a, func() { s.install.QueueingHint(a) }, nil
	case abi.SlotVictimOrder:
		a, err := NewWasmVictimOrder(m, Importance{}, s.rec)
		if err != nil {
			return nil, nil, err
		}
		if err := smoke(ctx, m, func(inst *wasm.Instance) error {
			order := make([]uint32, len(in.victims))
			return a.callOrder(inst, in.pods[0], in.victims, order)
		}); err != nil {
			return nil, nil, err
		}
		a.brk = brk
		return a, func() { s.install.VictimOrder(a) }, nil
	}
	return nil, nil, fmt.Errorf("unknown slot %d", slot)
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

// smoke calls the sort functions the adapter uses.
func (s *WasmSort) smoke(inst *wasm.Instance, in *smokeInput) error {
	if s.keyed {
		if _, err := s.callKey(inst, in.pods[0].Bytes()); err != nil {
			return err
		}
	}
	_, err := s.callLess(inst, in.pods[0].Bytes(), in.pods[1].Bytes())
	return err
}

// smokeInput is what the smoke calls send: two pods, a node-add event and
// two victims.
type smokeInput struct {
	pods    []abi.PodView
	event   abi.EventView
	victims []abi.Victim
}

var smokeInputs = sync.OnceValue(func() *smokeInput {
	const t0 = int64(1_700_000_000) * int64(time.Second)
	pod := func(i int, prio int32) abi.PodView {
		n := fmt.Sprint(i)
		v, err := abi.ReadPod(abi.AppendPod(nil, &abi.Pod{
			UID: "wasmsched-smoke-" + n, Namespace: "wasmsched-smoke", Name: "smoke-" + n,
			Priority: prio, CreationTime: t0, QueuedTime: t0 + int64(i)*int64(time.Second),
			InitialAttemptTime: t0, BackoffExpiry: t0 + 10*int64(time.Second), Attempts: 1,
			UnschedulablePlugins: []string{"NodeResourcesFit"},
			Labels:               []abi.KV{{Key: "app", Value: "smoke"}},
			Requests:             []abi.Quantity{{Name: "cpu", Value: 100}, {Name: "memory", Value: 64 << 20}},
		}))
		if err != nil {
			panic("policy: encoding the smoke pod: " + err.Error()) // abi's own encoding: a bug
		}
		return v
	}
	node := abi.AppendNode(nil, &abi.Node{
		Name:        "wasmsched-smoke-node",
		Labels:      []abi.KV{{Key: "kubernetes.io/hostname", Value: "wasmsched-smoke-node"}},
		Allocatable: []abi.Quantity{{Name: "cpu", Value: 4000}, {Name: "memory", Value: 8 << 30}, {Name: "pods", Value: 110}},
	})
	ev, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd, New: node}))
	if err != nil {
		panic("policy: encoding the smoke event: " + err.Error())
	}
	return &smokeInput{
		pods:  []abi.PodView{pod(0, 100), pod(1, 0)},
		event: ev,
		victims: []abi.Victim{
			{Kind: abi.VictimPod, Priority: 10, StartTime: t0, UID: "wasmsched-smoke-v0", Namespace: "wasmsched-smoke", Name: "v0"},
			{Kind: abi.VictimGroup, Priority: 20, StartTime: t0, Members: 2, UID: "wasmsched-smoke-v1", Namespace: "wasmsched-smoke", Name: "v1"},
		},
	}
})

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
// failures; a native policy still installed keeps answering itself. It waits
// for a Load in progress.
func (s *Set) Close(ctx context.Context) error {
	s.closed.Store(true)
	var errs []error
	for i := range s.slots {
		ss := &s.slots[i]
		ss.mu.Lock()
		if l := ss.cur.Load(); l != nil {
			l.brk.retire(nil)
			if l.mod != nil { // a native policy has nothing to close
				if err := l.mod.Close(ctx); err != nil {
					errs = append(errs, fmt.Errorf("close policy %q of slot %s: %w", l.info.Name, abi.Slot(i), err))
				}
			}
		}
		ss.mu.Unlock()
	}
	return errors.Join(errs...)
}
