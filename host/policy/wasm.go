package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/wasm"
)

var (
	_ Sort         = (*WasmSort)(nil)
	_ Keyer        = (*WasmSort)(nil)
	_ BackoffSort  = (*WasmBackoffSort)(nil)
	_ PreEnqueue   = (*WasmPreEnqueue)(nil)
	_ QueueingHint = (*WasmQueueingHint)(nil)
	_ VictimOrder  = (*WasmVictimOrder)(nil)
)

// slotModule is what every adapter shares: the module, the slot it serves,
// where failures are counted and, for adapters built by a [Set], the
// module's circuit breaker and whether a swap has retired the module.
type slotModule struct {
	mod  *wasm.Module
	slot abi.Slot
	rec  Recorder
	// brk is nil for adapters built by the NewWasm* constructors: no breaker.
	brk *breaker
}

func newSlotModule(m *wasm.Module, slot abi.Slot, rec Recorder) (slotModule, error) {
	if rec == nil {
		rec = Discard{}
	}
	for _, name := range slot.RequiredExports() {
		if !m.HasExport(name) {
			return slotModule{}, fmt.Errorf("module %q cannot serve the %s slot: it does not export %s (register the slot with the guest SDK's %s package)",
				m.Name(), slot, name, sdkPackage(slot))
		}
	}
	return slotModule{mod: m, slot: slot, rec: rec}, nil
}

func sdkPackage(s abi.Slot) string {
	switch s {
	case abi.SlotQueueSort:
		return "queuesort"
	case abi.SlotBackoffSort:
		return "backoffsort"
	case abi.SlotPreEnqueue:
		return "preenqueue"
	case abi.SlotQueueingHint:
		return "hint"
	case abi.SlotVictimOrder:
		return "victim"
	}
	return "?"
}

// Module returns the module the adapter calls.
func (s *slotModule) Module() *wasm.Module { return s.mod }

// acquire returns an instance, or nil when the caller must not call the
// module: the breaker is open (the module is not called), the module was
// retired by a swap after the caller picked this adapter (not a failure of
// the module: the caller hands the decision to brk.successor() if there is
// one), or instantiation failed (counted). Otherwise the native default
// answers.
func (s *slotModule) acquire() *wasm.Instance {
	if s.brk.isOpen() {
		return nil
	}
	inst, err := s.mod.Acquire(context.Background())
	if err != nil {
		if s.brk.isRetired() {
			return nil
		}
		s.rec.Failed(s.slot, "instantiate", err)
		s.brk.fail()
		return nil
	}
	s.rec.Called(s.slot)
	return inst
}

// failed counts a failed call by the kind of its error.
func (s *slotModule) failed(err error) {
	s.rec.Failed(s.slot, wasm.KindOf(err).String(), err)
	s.brk.fail()
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

// WasmSort runs the queue-sort (or backoff-sort) slot through a module. When
// the module computes sort keys, heaps compare keys natively and Less is
// called only by code that needs a pairwise answer.
type WasmSort struct {
	slotModule
	fallback      Sort
	fallbackKeyer Keyer
	less, key     wasm.FuncID
	keyed         bool
}

// NewWasmSort adapts m to slot (SlotQueueSort or SlotBackoffSort). fallback
// answers when a call fails; if the module computes keys, fallback must be a
// keyed Keyer too, so that a failed key can be replaced by a native one.
func NewWasmSort(m *wasm.Module, slot abi.Slot, fallback Sort, rec Recorder) (*WasmSort, error) {
	var less, key wasm.FuncID
	switch slot {
	case abi.SlotQueueSort:
		less, key = wasm.FuncQueueSortLess, wasm.FuncQueueSortKey
	case abi.SlotBackoffSort:
		less, key = wasm.FuncBackoffSortLess, wasm.FuncBackoffSortKey
	default:
		return nil, fmt.Errorf("NewWasmSort: %s is not a sort slot", slot)
	}
	sm, err := newSlotModule(m, slot, rec)
	if err != nil {
		return nil, err
	}
	s := &WasmSort{slotModule: sm, fallback: fallback, less: less, key: key}
	if m.HasFunc(key) {
		keyed, err := s.probeKey()
		if err != nil {
			return nil, err
		}
		s.keyed = keyed
	}
	if s.keyed {
		k, ok := fallback.(Keyer)
		if !ok || !k.Keyed() {
			return nil, fmt.Errorf("module %q computes %s keys, but the native fallback %T does not", m.Name(), slot, fallback)
		}
		s.fallbackKeyer = k
	}
	return s, nil
}

// probeKey asks the module for the key of an empty pod: a module built with
// the guest SDK exports the key function whether or not the policy
// registered one, and answers ErrUnsupported when it did not.
func (s *WasmSort) probeKey() (bool, error) {
	inst, err := s.mod.Acquire(context.Background())
	if err != nil {
		return false, err
	}
	defer s.mod.Release(inst)
	_, err = s.callKey(inst, abi.AppendPod(nil, &abi.Pod{}))
	var ce *wasm.CallError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ce) && ce.Kind == wasm.KindGuestError && ce.Code == abi.ErrUnsupported:
		return false, nil
	}
	return false, fmt.Errorf("module %q: probing its %s key function: %w", s.mod.Name(), s.slot, err)
}

// Keyed reports whether the module computes sort keys.
func (s *WasmSort) Keyed() bool { return s.keyed }

func (s *WasmSort) Less(a, b abi.PodView) bool {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(Sort); ok {
			return next.Less(a, b)
		}
		s.rec.FellBack(s.slot, 1)
		return s.fallback.Less(a, b)
	}
	defer s.mod.Release(inst)
	less, err := s.callLess(inst, a.Bytes(), b.Bytes())
	if err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, 1)
		return s.fallback.Less(a, b)
	}
	return less
}

func (s *WasmSort) callLess(inst *wasm.Instance, a, b []byte) (bool, error) {
	if _, err := put(inst, a, b); err != nil {
		return false, err
	}
	r, err := inst.Call(s.less, uint64(len(a)), uint64(len(b)))
	if err != nil {
		return false, err
	}
	return inst.Bool(r)
}

func (s *WasmSort) Key(p abi.PodView) abi.SortKey {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(Keyer); ok && next.Keyed() {
			return next.Key(p)
		}
		s.rec.FellBack(s.slot, 1)
		return s.fallbackKeyer.Key(p)
	}
	defer s.mod.Release(inst)
	k, err := s.callKey(inst, p.Bytes())
	if err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, 1)
		return s.fallbackKeyer.Key(p)
	}
	return k
}

func (s *WasmSort) callKey(inst *wasm.Instance, rec []byte) (abi.SortKey, error) {
	n, err := put(inst, rec)
	if err != nil {
		return abi.SortKey{}, err
	}
	r, err := inst.Call(s.key, uint64(n), 0)
	if err != nil {
		return abi.SortKey{}, err
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil {
		return abi.SortKey{}, err
	}
	if len(out) != abi.SortKeySize {
		return abi.SortKey{}, badOutput(inst, s.mod, s.slot, s.slot.KeyExport(), fmt.Sprintf("sort key of %d bytes, want %d", len(out), abi.SortKeySize))
	}
	return abi.DecodeSortKey(out)
}

// WasmBackoffSort runs the backoff-sort slot through a module.
type WasmBackoffSort struct {
	*WasmSort
	fallback BackoffSort
}

// NewWasmBackoffSort adapts m to the backoff-sort slot.
func NewWasmBackoffSort(m *wasm.Module, fallback BackoffSort, rec Recorder) (*WasmBackoffSort, error) {
	s, err := NewWasmSort(m, abi.SlotBackoffSort, fallback, rec)
	if err != nil {
		return nil, err
	}
	return &WasmBackoffSort{WasmSort: s, fallback: fallback}, nil
}

func (s *WasmBackoffSort) MayPop(p abi.PodView) bool {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(BackoffSort); ok {
			return next.MayPop(p)
		}
		s.rec.FellBack(s.slot, 1)
		return s.fallback.MayPop(p)
	}
	defer s.mod.Release(inst)
	may, err := s.callMayPop(inst, p.Bytes())
	if err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, 1)
		return s.fallback.MayPop(p)
	}
	return may
}

func (s *WasmBackoffSort) callMayPop(inst *wasm.Instance, rec []byte) (bool, error) {
	n, err := put(inst, rec)
	if err != nil {
		return false, err
	}
	r, err := inst.Call(wasm.FuncBackoffMayPop, uint64(n), 0)
	if err != nil {
		return false, err
	}
	return inst.Bool(r)
}

// WasmPreEnqueue runs the PreEnqueue slot through a module.
type WasmPreEnqueue struct {
	slotModule
	fallback PreEnqueue
}

// NewWasmPreEnqueue adapts m to the PreEnqueue slot.
func NewWasmPreEnqueue(m *wasm.Module, fallback PreEnqueue, rec Recorder) (*WasmPreEnqueue, error) {
	sm, err := newSlotModule(m, abi.SlotPreEnqueue, rec)
	if err != nil {
		return nil, err
	}
	return &WasmPreEnqueue{slotModule: sm, fallback: fallback}, nil
}

func (s *WasmPreEnqueue) PreEnqueue(p abi.PodView) abi.Gate {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(PreEnqueue); ok {
			return next.PreEnqueue(p)
		}
		s.rec.FellBack(s.slot, 1)
		return s.fallback.PreEnqueue(p)
	}
	defer s.mod.Release(inst)
	var g abi.Gate
	if err := s.callPreEnqueue(inst, p.Bytes(), &g); err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, 1)
		return s.fallback.PreEnqueue(p)
	}
	return g
}

func (s *WasmPreEnqueue) callPreEnqueue(inst *wasm.Instance, rec []byte, g *abi.Gate) error {
	n, err := put(inst, rec)
	if err != nil {
		return err
	}
	r, err := inst.Call(wasm.FuncPreEnqueue, uint64(n), 0)
	if err != nil {
		return err
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil {
		return err
	}
	if err := abi.DecodeGate(out, g); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportPreEnqueue, err.Error())
	}
	return nil
}

// WasmQueueingHint runs the QueueingHint slot through a module: one call per
// event for every candidate pod.
type WasmQueueingHint struct {
	slotModule
	fallback QueueingHint
	regs     []abi.Registration
}

// NewWasmQueueingHint adapts m to the QueueingHint slot, reading the events it
// registers once.
func NewWasmQueueingHint(m *wasm.Module, fallback QueueingHint, rec Recorder) (*WasmQueueingHint, error) {
	sm, err := newSlotModule(m, abi.SlotQueueingHint, rec)
	if err != nil {
		return nil, err
	}
	inst, err := m.Acquire(context.Background())
	if err != nil {
		return nil, err
	}
	defer m.Release(inst)
	r, err := inst.Call(wasm.FuncHintEvents, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("module %q: reading its registered events: %w", m.Name(), err)
	}
	out, err := inst.Output(abi.Result(r))
	if err != nil {
		return nil, fmt.Errorf("module %q: reading its registered events: %w", m.Name(), err)
	}
	regs, err := abi.DecodeRegistrations(out)
	if err != nil {
		return nil, fmt.Errorf("module %q: its registered events are malformed: %w", m.Name(), err)
	}
	if len(regs) == 0 {
		return nil, fmt.Errorf("module %q registers no events: a QueueingHint module must register the events its hints handle", m.Name())
	}
	return &WasmQueueingHint{slotModule: sm, fallback: fallback, regs: regs}, nil
}

// Registrations returns a copy of the events the module registered.
func (s *WasmQueueingHint) Registrations() []abi.Registration {
	return append([]abi.Registration(nil), s.regs...)
}

func (s *WasmQueueingHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	if len(pods) == 0 {
		return
	}
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(QueueingHint); ok {
			next.Hints(ev, pods, out)
			return
		}
		s.rec.FellBack(s.slot, len(pods))
		s.fallback.Hints(ev, pods, out)
		return
	}
	defer s.mod.Release(inst)
	start := time.Now()
	err := s.callHints(inst, ev, pods, out)
	s.rec.Observe(s.slot, time.Since(start))
	if err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, len(pods))
		s.fallback.Hints(ev, pods, out)
	}
}

func (s *WasmQueueingHint) callHints(inst *wasm.Instance, ev abi.EventView, pods []abi.PodView, out []abi.Hint) error {
	n := abi.HintBatchLen(ev.Bytes(), pods)
	in, err := inst.Input(n)
	if err != nil {
		return err
	}
	// The batch is laid out in guest memory directly; the capacity bound
	// makes a size mistake reallocate instead of overwrite guest memory.
	if b := abi.AppendHintBatchViews(in[:0:n], ev.Bytes(), pods); len(b) != n || &b[0] != &in[0] {
		return fmt.Errorf("hint batch of %d bytes does not fill the %d reserved (host bug)", len(b), n)
	}
	r, err := inst.Call(wasm.FuncQueueingHint, uint64(n), 0)
	if err != nil {
		return err
	}
	res, err := inst.Output(abi.Result(r))
	if err != nil {
		return err
	}
	if err := abi.CheckHints(res, len(pods)); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportQueueingHint, err.Error())
	}
	for i, h := range res {
		out[i] = abi.Hint(h)
	}
	return nil
}

// WasmVictimOrder runs the victim-ordering slot through a module: one call
// orders a whole list.
type WasmVictimOrder struct {
	slotModule
	fallback VictimOrder
	scratch  sync.Pool // *[]bool, for validating permutations
}

// NewWasmVictimOrder adapts m to the victim-ordering slot.
func NewWasmVictimOrder(m *wasm.Module, fallback VictimOrder, rec Recorder) (*WasmVictimOrder, error) {
	sm, err := newSlotModule(m, abi.SlotVictimOrder, rec)
	if err != nil {
		return nil, err
	}
	return &WasmVictimOrder{slotModule: sm, fallback: fallback}, nil
}

func (s *WasmVictimOrder) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	if len(victims) == 0 {
		return
	}
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.brk.successor().(VictimOrder); ok {
			next.Order(preemptor, victims, order)
			return
		}
		s.rec.FellBack(s.slot, 1)
		s.fallback.Order(preemptor, victims, order)
		return
	}
	defer s.mod.Release(inst)
	start := time.Now()
	err := s.callOrder(inst, preemptor, victims, order)
	s.rec.Observe(s.slot, time.Since(start))
	if err != nil {
		s.failed(err)
		s.rec.FellBack(s.slot, 1)
		s.fallback.Order(preemptor, victims, order)
	}
}

func (s *WasmVictimOrder) callOrder(inst *wasm.Instance, preemptor abi.PodView, victims []abi.Victim, order []uint32) error {
	pre := preemptor.Bytes()
	n := abi.VictimBatchLen(pre, victims)
	in, err := inst.Input(n)
	if err != nil {
		return err
	}
	if b := abi.AppendVictimBatch(in[:0:n], pre, victims); len(b) != n || &b[0] != &in[0] {
		return fmt.Errorf("victim batch of %d bytes does not fill the %d reserved (host bug)", len(b), n)
	}
	r, err := inst.Call(wasm.FuncVictimOrder, uint64(n), 0)
	if err != nil {
		return err
	}
	res, err := inst.Output(abi.Result(r))
	if err != nil {
		return err
	}
	seen, _ := s.scratch.Get().(*[]bool)
	if seen == nil || cap(*seen) < len(victims) {
		b := make([]bool, len(victims))
		seen = &b
	}
	defer s.scratch.Put(seen)
	if err := abi.DecodeOrder(res, len(victims), order, (*seen)[:len(victims)]); err != nil {
		return badOutput(inst, s.mod, s.slot, abi.ExportVictimOrder, err.Error())
	}
	return nil
}

// badOutput is the error of a result that decodes but breaks the contract;
// the instance that gave it is discarded, as one that trapped is.
func badOutput(inst *wasm.Instance, m *wasm.Module, slot abi.Slot, fn, problem string) error {
	inst.Discard()
	return &wasm.CallError{Module: m.Name(), Function: fn, Kind: wasm.KindBadOutput,
		Err: fmt.Errorf("%s slot: %s", slot, problem)}
}
