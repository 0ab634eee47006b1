package wasmslot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

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
		return nil, fmt.Errorf("no slot %d: use one of %s", slot, policy.SlotNames())
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

// Sort runs the queue-sort (or backoff-sort) slot through a module. When
// the module computes sort keys, heaps compare keys natively and Less is
// called only by code that needs a pairwise answer.
type Sort struct {
	slotModule
	next          handoff[policy.Sort]
	fallback      policy.Sort
	fallbackKeyer policy.Keyer
	less, key     wasm.FuncID
	keyed         bool
}

// NewSort adapts m to slot (SlotQueueSort or SlotBackoffSort). fallback
// answers when a call fails; if the module computes keys, fallback must be a
// keyed Keyer too, so that a failed key can be replaced by a native one.
func NewSort(m *wasm.Module, slot abi.Slot, fallback policy.Sort, rec policy.Recorder) (*Sort, error) {
	var less, key wasm.FuncID
	switch slot {
	case abi.SlotQueueSort:
		less, key = wasm.FuncQueueSortLess, wasm.FuncQueueSortKey
	case abi.SlotBackoffSort:
		less, key = wasm.FuncBackoffSortLess, wasm.FuncBackoffSortKey
	default:
		return nil, fmt.Errorf("NewSort: %s is not a sort slot", slot)
	}
	s := &Sort{fallback: fallback, less: less, key: key}
	if err := s.init(m, slot, rec); err != nil {
		return nil, err
	}
	if m.HasFunc(key) {
		keyed, err := s.probeKey()
		if err != nil {
			return nil, err
		}
		s.keyed = keyed
	}
	if s.keyed {
		k, ok := fallback.(policy.Keyer)
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
func (s *Sort) probeKey() (bool, error) {
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
func (s *Sort) Keyed() bool { return s.keyed }

func (s *Sort) Less(a, b abi.PodView) bool {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
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

func (s *Sort) callLess(inst *wasm.Instance, a, b []byte) (bool, error) {
	if _, err := put(inst, a, b); err != nil {
		return false, err
	}
	r, err := inst.Call(s.less, uint64(len(a)), uint64(len(b)))
	if err != nil {
		return false, err
	}
	return inst.Bool(r)
}

func (s *Sort) Key(p abi.PodView) abi.SortKey {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
			if k, ok := next.(policy.Keyer); ok && k.Keyed() {
				return k.Key(p)
			}
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

func (s *Sort) callKey(inst *wasm.Instance, rec []byte) (abi.SortKey, error) {
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

// BackoffSort runs the backoff-sort slot through a module.
type BackoffSort struct {
	*Sort
	next     handoff[policy.BackoffSort]
	fallback policy.BackoffSort
}

// NewBackoffSort adapts m to the backoff-sort slot.
func NewBackoffSort(m *wasm.Module, fallback policy.BackoffSort, rec policy.Recorder) (*BackoffSort, error) {
	s, err := NewSort(m, abi.SlotBackoffSort, fallback, rec)
	if err != nil {
		return nil, err
	}
	return &BackoffSort{Sort: s, fallback: fallback}, nil
}

func (s *BackoffSort) MayPop(p abi.PodView) bool {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
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

func (s *BackoffSort) callMayPop(inst *wasm.Instance, rec []byte) (bool, error) {
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

// PreEnqueue runs the PreEnqueue slot through a module.
type PreEnqueue struct {
	slotModule
	next     handoff[policy.PreEnqueue]
	fallback policy.PreEnqueue
}

// NewPreEnqueue adapts m to the PreEnqueue slot.
func NewPreEnqueue(m *wasm.Module, fallback policy.PreEnqueue, rec policy.Recorder) (*PreEnqueue, error) {
	s := &PreEnqueue{fallback: fallback}
	if err := s.init(m, abi.SlotPreEnqueue, rec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *PreEnqueue) PreEnqueue(p abi.PodView) abi.Gate {
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
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

func (s *PreEnqueue) callPreEnqueue(inst *wasm.Instance, rec []byte, g *abi.Gate) error {
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

// QueueingHint runs the QueueingHint slot through a module: one call per
// event for every candidate pod.
type QueueingHint struct {
	slotModule
	next     handoff[policy.QueueingHint]
	fallback policy.QueueingHint
	regs     []abi.Registration
}

// NewQueueingHint adapts m to the QueueingHint slot, reading the events it
// registers once.
func NewQueueingHint(m *wasm.Module, fallback policy.QueueingHint, rec policy.Recorder) (*QueueingHint, error) {
	s := &QueueingHint{fallback: fallback}
	if err := s.init(m, abi.SlotQueueingHint, rec); err != nil {
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
	s.regs = regs
	return s, nil
}

// Registrations returns a copy of the events the module registered.
func (s *QueueingHint) Registrations() []abi.Registration {
	return append([]abi.Registration(nil), s.regs...)
}

func (s *QueueingHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	if len(pods) == 0 {
		return
	}
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
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

func (s *QueueingHint) callHints(inst *wasm.Instance, ev abi.EventView, pods []abi.PodView, out []abi.Hint) error {
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

// VictimOrder runs the victim-ordering slot through a module: one call
// orders a whole list.
type VictimOrder struct {
	slotModule
	next     handoff[policy.VictimOrder]
	fallback policy.VictimOrder
	scratch  sync.Pool // *[]bool, for validating permutations
}

// NewVictimOrder adapts m to the victim-ordering slot.
func NewVictimOrder(m *wasm.Module, fallback policy.VictimOrder, rec policy.Recorder) (*VictimOrder, error) {
	s := &VictimOrder{fallback: fallback}
	if err := s.init(m, abi.SlotVictimOrder, rec); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *VictimOrder) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	if len(victims) == 0 {
		return
	}
	inst := s.acquire()
	if inst == nil {
		if next, ok := s.next.to(&s.retired); ok {
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

func (s *VictimOrder) callOrder(inst *wasm.Instance, preemptor abi.PodView, victims []abi.Victim, order []uint32) error {
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
