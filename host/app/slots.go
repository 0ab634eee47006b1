package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/config"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/policies"
)

// moduleSource is where a slot's policy comes from: a file of the
// configuration (with its optional sha256 pin), the binary's built-in
// module, or the built-in policy compiled natively (module: native).
type moduleSource struct {
	name   string // the file's path, "builtin:<name>" or "native:<name>", as Set.Current names it
	bin    []byte // nil when native
	sha256 string // the pin, lowercase hex; "" when not pinned
	// native is the natively compiled policy; nil for a Wasm module.
	native *policies.NativePolicy
	// empty: a placement slot with no module (its plugin does nothing).
	empty bool
	// failure is a placement slot's failure policy.
	failure policy.FailurePolicy
}

// source reads the module configured for slot, or picks its native policy.
func source(slot abi.Slot, files map[abi.Slot]config.Module) (moduleSource, error) {
	fp, err := policy.ParseFailurePolicy(files[slot].FailurePolicy)
	if err != nil {
		return moduleSource{}, fmt.Errorf("policy for slot %s: %w", slot, err)
	}
	if slot.Placement() && files[slot].Path == "" {
		return moduleSource{name: "none", empty: true}, nil
	}
	if f, ok := files[slot]; ok && f.Native {
		np, ok := policies.Native(slot)
		if !ok {
			return moduleSource{}, fmt.Errorf("policy for slot %s: no native policy for the slot (a bug: report it)", slot)
		}
		return moduleSource{name: "native:" + np.Name, native: &np}, nil
	}
	if f, ok := files[slot]; ok && f.Path != "" {
		bin, err := os.ReadFile(f.Path)
		if err != nil {
			return moduleSource{}, fmt.Errorf("policy for slot %s: %w", slot, err)
		}
		return moduleSource{name: f.Path, bin: bin, sha256: f.SHA256, failure: fp}, nil
	}
	b := policies.Builtin(slot)
	return moduleSource{name: "builtin:" + b.Name, bin: b.Wasm}, nil
}

// load installs the source in slot of set, and a placement slot's failure
// policy in pl.
func (m moduleSource) load(ctx context.Context, set *wasmslot.Set, pl *policy.Placement, slot abi.Slot) error {
	m.setFailure(pl, slot)
	if m.empty {
		return set.Empty(slot)
	}
	if m.native != nil {
		return set.LoadNative(slot, m.native.Name, m.native.Impl)
	}
	return set.Load(ctx, slot, m.name, m.bin, m.sha256)
}

// setFailure installs a placement slot's failure policy in pl (nothing for
// the other slots).
func (m moduleSource) setFailure(pl *policy.Placement, slot abi.Slot) {
	if slot.Placement() {
		pl.SetFailurePolicy(slot, m.failure)
	}
}

// serves reports whether cur, what a Set reports for a slot, is this source
// already: the same native policy, or the same name and content.
func (m moduleSource) serves(cur wasmslot.ModuleInfo) bool {
	if m.empty {
		return cur.Name == ""
	}
	if m.native != nil || cur.IsNative() {
		return m.native != nil && cur.IsNative() && cur.Name == m.name
	}
	return cur.Name == m.name && cur.SHA256 == digest(m.bin)
}

// digest is the module's sha256, lowercase hex; "" for a native policy.
func (m moduleSource) digest() string {
	if m.native != nil {
		return ""
	}
	return digest(m.bin)
}

func digest(bin []byte) string {
	sum := sha256.Sum256(bin)
	return hex.EncodeToString(sum[:])
}

// loadSlots loads every slot of a profile into its Set (a native slot with
// Set.LoadNative), or fails with the first slot that cannot be loaded (at
// start-up, a bad module is fatal: the operator gets the error at once rather
// than a scheduler on native defaults).
func loadSlots(ctx context.Context, set *wasmslot.Set, pl *policy.Placement, files map[abi.Slot]config.Module) error {
	for _, slot := range abi.Slots {
		src, err := source(slot, files)
		if err != nil {
			return err
		}
		if err := src.load(ctx, set, pl, slot); err != nil {
			return fmt.Errorf("policy for slot %s: %w", slot, err)
		}
	}
	return nil
}
