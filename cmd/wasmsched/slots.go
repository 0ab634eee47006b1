package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/policies"
)

// victimOrder is the victim-order slot as the cycle holds it: a swap stores
// a new adapter, and the next preemption uses it.
type victimOrder struct {
	p atomic.Pointer[policy.VictimOrder]
}

var _ policy.VictimOrder = (*victimOrder)(nil)

func newVictimOrder() *victimOrder {
	v := &victimOrder{}
	v.set(policy.Importance{})
	return v
}

func (v *victimOrder) set(o policy.VictimOrder) { v.p.Store(&o) }

func (v *victimOrder) Order(preemptor abi.PodView, victims []abi.Victim, order []uint32) {
	(*v.p.Load()).Order(preemptor, victims, order)
}

// moduleSource is where a slot's module comes from: a file of the
// configuration (with its optional sha256 pin) or the binary's built-in.
type moduleSource struct {
	name   string // the file's path, or "builtin:<name>"
	bin    []byte
	sha256 string // the pin, lowercase hex; "" when not pinned
}

// source reads the module configured for slot.
func source(slot abi.Slot, files map[abi.Slot]config.Module) (moduleSource, error) {
	if f, ok := files[slot]; ok && f.Path != "" {
		bin, err := os.ReadFile(f.Path)
		if err != nil {
			return moduleSource{}, fmt.Errorf("policy for slot %s: %w", slot, err)
		}
		return moduleSource{name: f.Path, bin: bin, sha256: f.SHA256}, nil
	}
	b := policies.Builtin(slot)
	return moduleSource{name: "builtin:" + b.Name, bin: b.Wasm}, nil
}

func digest(bin []byte) string {
	sum := sha256.Sum256(bin)
	return hex.EncodeToString(sum[:])
}

// loadSlots loads every slot of a profile into its Set, or fails with the
// first slot that cannot be loaded (at start-up, a bad module is fatal: the
// operator gets the error at once rather than a scheduler on native
// defaults).
func loadSlots(ctx context.Context, set *policy.Set, files map[abi.Slot]config.Module) error {
	for _, slot := range abi.Slots {
		src, err := source(slot, files)
		if err != nil {
			return err
		}
		if err := set.Load(ctx, slot, src.name, src.bin, src.sha256); err != nil {
			return fmt.Errorf("policy for slot %s: %w", slot, err)
		}
	}
	return nil
}
