package wasmslot

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

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
	// storageAware: the module speaks ABI minor >= abi.MinorStorage;
	// draAware: >= abi.MinorDRA.
	storageAware, draAware bool
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
	_, minor := m.ABIVersion()
	s.storageAware = minor >= abi.MinorStorage
	s.draAware = minor >= abi.MinorDRA
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
	if res := ev.Resource(); res.IsStorage() && !s.storageAware || res.IsDRA() && !s.draAware {
		// A module built before the minor that added these resources
		// (1: storage, 2: DRA) registered their events only through a
		// wildcard and cannot read their records: the pods are queued, as
		// upstream does for a plugin without a hint.
		for i := range out[:len(pods)] {
			out[i] = abi.HintQueue
		}
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
