package wasmslot

import (
	"context"
	"errors"
	"fmt"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
)

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
