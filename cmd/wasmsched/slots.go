package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies"
)

// slots are one profile's five policy slots, each a Wasm module with its
// native default as the per-decision fallback.
type slots struct {
	sort        policy.Sort
	backoffSort policy.BackoffSort
	preEnqueue  policy.PreEnqueue
	hint        policy.QueueingHint
	victims     policy.VictimOrder
	// describe says where each slot's module came from, for the log.
	describe map[abi.Slot]string
}

// moduleSet loads each distinct module once (the built-in backoffpop serves
// two slots, and profiles share built-ins).
type moduleSet struct {
	rt      *wasm.Runtime
	limits  wasm.Limits
	modules map[[32]byte]*wasm.Module
}

func (ms *moduleSet) load(ctx context.Context, name string, bin []byte) (*wasm.Module, error) {
	sum := sha256.Sum256(bin)
	if m := ms.modules[sum]; m != nil {
		return m, nil
	}
	m, err := ms.rt.Load(ctx, name, bin, ms.limits)
	if err != nil {
		return nil, err
	}
	ms.modules[sum] = m
	return m, nil
}

// moduleFor returns the module configured for slot: the file named in the
// profile (checked against its sha256 pin), or the built-in policy.
func (ms *moduleSet) moduleFor(ctx context.Context, slot abi.Slot, files map[abi.Slot]config.Module) (*wasm.Module, string, error) {
	if f, ok := files[slot]; ok && f.Path != "" {
		bin, err := os.ReadFile(f.Path)
		if err != nil {
			return nil, "", fmt.Errorf("policy for slot %s: %w", slot, err)
		}
		if f.SHA256 != "" {
			if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != f.SHA256 {
				return nil, "", fmt.Errorf("policy for slot %s: %s has sha256 %x, but the configuration pins %s: "+
					"update policies.%s.sha256 or restore the file", slot, f.Path, sum, f.SHA256, slot)
			}
		}
		m, err := ms.load(ctx, f.Path, bin)
		if err != nil {
			return nil, "", fmt.Errorf("policy for slot %s: %w", slot, err)
		}
		return m, f.Path, nil
	}
	b := policies.Builtin(slot)
	m, err := ms.load(ctx, "builtin:"+b.Name, b.Wasm)
	if err != nil {
		return nil, "", fmt.Errorf("built-in policy %s for slot %s: %w", b.Name, slot, err)
	}
	return m, "builtin:" + b.Name, nil
}

// loadSlots builds a profile's slots.
func (ms *moduleSet) loadSlots(ctx context.Context, files map[abi.Slot]config.Module, rec policy.Recorder) (*slots, error) {
	s := &slots{describe: map[abi.Slot]string{}}
	mod := func(slot abi.Slot) (*wasm.Module, error) {
		m, from, err := ms.moduleFor(ctx, slot, files)
		if err == nil {
			s.describe[slot] = from
		}
		return m, err
	}
	var err error
	var m *wasm.Module
	if m, err = mod(abi.SlotQueueSort); err != nil {
		return nil, err
	}
	if s.sort, err = policy.NewWasmSort(m, abi.SlotQueueSort, policy.PrioritySort{}, rec); err != nil {
		return nil, fmt.Errorf("policy for slot %s: %w", abi.SlotQueueSort, err)
	}
	if m, err = mod(abi.SlotBackoffSort); err != nil {
		return nil, err
	}
	if s.backoffSort, err = policy.NewWasmBackoffSort(m, policy.BackoffExpiry{}, rec); err != nil {
		return nil, fmt.Errorf("policy for slot %s: %w", abi.SlotBackoffSort, err)
	}
	if m, err = mod(abi.SlotPreEnqueue); err != nil {
		return nil, err
	}
	if s.preEnqueue, err = policy.NewWasmPreEnqueue(m, policy.Admit{}, rec); err != nil {
		return nil, fmt.Errorf("policy for slot %s: %w", abi.SlotPreEnqueue, err)
	}
	if m, err = mod(abi.SlotQueueingHint); err != nil {
		return nil, err
	}
	if s.hint, err = policy.NewWasmQueueingHint(m, policy.AlwaysQueue{}, rec); err != nil {
		return nil, fmt.Errorf("policy for slot %s: %w", abi.SlotQueueingHint, err)
	}
	if m, err = mod(abi.SlotVictimOrder); err != nil {
		return nil, err
	}
	if s.victims, err = policy.NewWasmVictimOrder(m, policy.Importance{}, rec); err != nil {
		return nil, fmt.Errorf("policy for slot %s: %w", abi.SlotVictimOrder, err)
	}
	return s, nil
}

// close closes every loaded module.
func (ms *moduleSet) close(ctx context.Context) {
	for _, m := range ms.modules {
		_ = m.Close(ctx)
	}
}
