package wasmslot

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

var (
	_ policy.Sort         = (*Sort)(nil)
	_ policy.Keyer        = (*Sort)(nil)
	_ policy.BackoffSort  = (*BackoffSort)(nil)
	_ policy.Keyer        = (*BackoffSort)(nil)
	_ policy.PreEnqueue   = (*PreEnqueue)(nil)
	_ policy.QueueingHint = (*QueueingHint)(nil)
	_ policy.VictimOrder  = (*VictimOrder)(nil)

	_ adapter = (*Sort)(nil)
	_ adapter = (*BackoffSort)(nil)
	_ adapter = (*PreEnqueue)(nil)
	_ adapter = (*QueueingHint)(nil)
	_ adapter = (*VictimOrder)(nil)
)

// adapter is what a [Set] needs of every slot's adapter besides the slot's
// interface.
type adapter interface {
	module() *slotModule
	// smoke asks the module the slot's question about the smoke input on
	// inst, reporting a failed call.
	smoke(inst *wasm.Instance, in *policy.SmokeInput) error
	// retire records that a swap replaced the module (next is the policy
	// that replaced it, nil when the Set closed), see [handoff].
	retire(next any)
}

// builder builds a slot's adapter around m, with fallback (the slot's native
// default, or what the caller of [New] gave) answering failed calls.
type builder func(m *wasm.Module, slot abi.Slot, fallback any, rec policy.Recorder) (adapter, error)

// builders is this package's column of the slot table (policy.SpecOf): how
// each slot's adapter is built.
var builders = [...]builder{
	abi.SlotQueueSort: build(NewSort),
	abi.SlotBackoffSort: build(func(m *wasm.Module, _ abi.Slot, fb policy.BackoffSort, rec policy.Recorder) (*BackoffSort, error) {
		return NewBackoffSort(m, fb, rec)
	}),
	abi.SlotPreEnqueue: build(func(m *wasm.Module, _ abi.Slot, fb policy.PreEnqueue, rec policy.Recorder) (*PreEnqueue, error) {
		return NewPreEnqueue(m, fb, rec)
	}),
	abi.SlotQueueingHint: build(func(m *wasm.Module, _ abi.Slot, fb policy.QueueingHint, rec policy.Recorder) (*QueueingHint, error) {
		return NewQueueingHint(m, fb, rec)
	}),
	abi.SlotVictimOrder: build(func(m *wasm.Module, _ abi.Slot, fb policy.VictimOrder, rec policy.Recorder) (*VictimOrder, error) {
		return NewVictimOrder(m, fb, rec)
	}),
	// The placement adapters report failures instead of falling back: the
	// plugin applies the slot's failure policy.
	abi.SlotFilter: build(func(m *wasm.Module, _ abi.Slot, _ policy.Filter, rec policy.Recorder) (*Filter, error) {
		return NewFilter(m, rec)
	}),
	abi.SlotScore: build(func(m *wasm.Module, _ abi.Slot, _ policy.Score, rec policy.Recorder) (*Score, error) {
		return NewScore(m, rec)
	}),
}

// Every slot has a builder.
var _ [len(abi.Slots)]builder = builders

// build makes a typed constructor a builder. The fallback's type was checked
// against the slot's row by the caller.
func build[A adapter, P any](f func(*wasm.Module, abi.Slot, P, policy.Recorder) (A, error)) builder {
	return func(m *wasm.Module, slot abi.Slot, fallback any, rec policy.Recorder) (adapter, error) {
		a, err := f(m, slot, fallback.(P), rec)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}

// New adapts m to slot with the slot's constructor (NewSort, NewBackoffSort,
// ...), chosen by the slot table. fallback answers when a call fails; nil
// means the slot's native default (policy.Spec.Default). The result
// implements the slot's interface of package policy (policy.Spec.Interface).
func New(m *wasm.Module, slot abi.Slot, fallback any, rec policy.Recorder) (any, error) {
	spec, ok := policy.SpecOf(slot)
	if !ok {
		return nil, fmt.Errorf("no slot %d: use one of %s", slot, abi.SlotNames())
	}
	if fallback == nil {
		fallback = spec.Default
	}
	if !spec.Implements(fallback) {
		return nil, fmt.Errorf("the fallback %T of the %s slot does not implement policy.%s", fallback, slot, spec.Interface)
	}
	return builders[slot](m, slot, fallback, rec)
}

// slotModule is what every adapter shares: the module, the slot it serves,
// where failures are counted and, for adapters built by a [Set], the
// module's circuit breaker and whether a swap has retired the module.
type slotModule struct {
	mod  *wasm.Module
	slot abi.Slot
	rec  policy.Recorder
	// brk is nil for adapters built by the New* constructors: no breaker.
	brk *breaker
	// retired is set once a swap replaced the module, or its Set closed:
	// the module may be closed, and the adapter's handoff says where its
	// calls go instead. The handoff is written before retired is set.
	retired atomic.Bool
}

func (s *slotModule) init(m *wasm.Module, slot abi.Slot, rec policy.Recorder) error {
	if rec == nil {
		rec = policy.Discard{}
	}
	for _, name := range slot.RequiredExports() {
		if !m.HasExport(name) {
			return fmt.Errorf("module %q cannot serve the %s slot: it does not export %s (register the slot with the guest SDK's %s package)",
				m.Name(), slot, name, sdkPackage(slot))
		}
	}
	s.mod, s.slot, s.rec = m, slot, rec
	return nil
}

func sdkPackage(s abi.Slot) string {
	if spec, ok := policy.SpecOf(s); ok {
		return spec.SDK
	}
	return "?"
}

func (s *slotModule) module() *slotModule { return s }

// handoff is an adapter's swap-retirement forwarder: once a swap retired the
// adapter's module, a call that picked the adapter just before the swap but
// reaches it after is answered by the policy that replaced it, typed as the
// slot's interface P. It is written once, by retire, before the module's
// retired flag is set, and read only after the flag is seen set.
type handoff[P any] struct {
	next P
	ok   bool // false when nothing replaced the module (its Set closed)
}

func (h *handoff[P]) set(next any) { h.next, h.ok = next.(P) }

// to returns the policy that replaced a retired module, or false when the
// module is not retired or nothing replaced it.
func (h *handoff[P]) to(retired *atomic.Bool) (P, bool) {
	if !retired.Load() || !h.ok {
		var zero P
		return zero, false
	}
	return h.next, true
}

// Module returns the module the adapter calls.
func (s *slotModule) Module() *wasm.Module { return s.mod }

// acquire returns an instance, or nil when the caller must not call the
// module: the breaker is open (the module is not called), the module was
// retired by a swap after the caller picked this adapter (not a failure of
// the module: the caller hands the decision to its handoff if it has a
// successor), or instantiation failed (counted). Otherwise the native
// default answers.
func (s *slotModule) acquire() *wasm.Instance {
	if s.brk.isOpen() {
		return nil
	}
	inst, err := s.mod.Acquire(context.Background())
	if err != nil {
		if s.retired.Load() {
			return nil
		}
		s.rec.Failed(s.slot, "instantiate", err)
		s.brk.fail(&s.retired)
		return nil
	}
	s.rec.Called(s.slot)
	return inst
}

// failed counts a failed call by the kind of its error.
func (s *slotModule) failed(err error) {
	s.rec.Failed(s.slot, wasm.KindOf(err).String(), err)
	s.brk.fail(&s.retired)
}

// put copies records into the guest's input buffer back to back.
func put(inst *wasm.Instance, recs ...[]byte) (int, error) {
	n := 0
	for _, r := range recs {
		n += len(r)
	}
	in, err := inst.Input(n)
	if err != nil {
		return 0, err
	}
	off := 0
	for _, r := range recs {
		off += copy(in[off:], r)
	}
	return n, nil
}

// badOutput is the error of a result that decodes but breaks the contract;
// the instance that gave it is discarded, as one that trapped is.
func badOutput(inst *wasm.Instance, m *wasm.Module, slot abi.Slot, fn, problem string) error {
	inst.Discard()
	return &wasm.CallError{Module: m.Name(), Function: fn, Kind: wasm.KindBadOutput,
		Err: fmt.Errorf("%s slot: %s", slot, problem)}
}

// retire of each adapter: the handoff is written before the module's retired
// flag is set.

func (s *Sort) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

func (s *BackoffSort) retire(next any) {
	s.next.set(next)
	s.Sort.retire(next)
}

func (s *PreEnqueue) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

func (s *QueueingHint) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

func (s *VictimOrder) retire(next any) {
	s.next.set(next)
	s.retired.Store(true)
}

// smoke of each adapter: the slot's question about the smoke input, asked
// straight of the module (a failure is returned, not answered by the
// fallback, and not counted).

// smoke calls the sort functions the adapter uses.
func (s *Sort) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	if s.keyed {
		if _, err := s.callKey(inst, in.Pods[0].Bytes()); err != nil {
			return err
		}
	}
	_, err := s.callLess(inst, in.Pods[0].Bytes(), in.Pods[1].Bytes())
	return err
}

func (s *BackoffSort) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	if err := s.Sort.smoke(inst, in); err != nil {
		return err
	}
	_, err := s.callMayPop(inst, in.Pods[0].Bytes())
	return err
}

func (s *PreEnqueue) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	var g abi.Gate
	return s.callPreEnqueue(inst, in.Pods[0].Bytes(), &g)
}

func (s *QueueingHint) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	out := make([]abi.Hint, 1)
	return s.callHints(inst, in.Event, in.Pods[:1], out)
}

func (s *VictimOrder) smoke(inst *wasm.Instance, in *policy.SmokeInput) error {
	order := make([]uint32, len(in.Victims))
	return s.callOrder(inst, in.Pods[0], in.Victims, order)
}
