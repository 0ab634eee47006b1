// Package policies holds the reference policy modules and embeds their
// committed builds, so that the scheduler binary carries a Wasm policy for
// every slot without any file beside it:
//
//   - backoffpop (KEP-5142): queue sort and backoff sort;
//   - gangpreempt (KEP-4671, KEP-5710): PreEnqueue and victim order;
//   - hints (KEP-4247): QueueingHint.
//
// Each module's source is the TinyGo main package in the folder of its name
// (main.go marked //wasmsched:guest, logic in <name>/logic); `make policies`
// rebuilds <name>/<name>.wasm, which is what is embedded here. This package
// is ordinary Go and is not a guest: hack/guests.sh only picks folders whose
// main.go carries the marker.
package policies

import (
	_ "embed"
	"maps"
	"slices"

	"github.com/wasmsched/wasmsched/abi"
)

var (
	//go:embed backoffpop/backoffpop.wasm
	backoffpop string
	//go:embed gangpreempt/gangpreempt.wasm
	gangpreempt string
	//go:embed hints/hints.wasm
	hints string
)

// Module is a built-in policy module: its name (the folder under policies/)
// and its compiled bytes.
type Module struct {
	Name string
	// Wasm is the module binary. Each call to Builtin returns a fresh copy,
	// so a caller may keep or change it.
	Wasm []byte
}

// modules are the built-in modules by name; the strings never change.
var modules = map[string]string{
	"backoffpop":  backoffpop,
	"gangpreempt": gangpreempt,
	"hints":       hints,
}

// bySlot names the built-in module of each slot.
var bySlot = map[abi.Slot]string{
	abi.SlotQueueSort:    "backoffpop",
	abi.SlotBackoffSort:  "backoffpop",
	abi.SlotPreEnqueue:   "gangpreempt",
	abi.SlotQueueingHint: "hints",
	abi.SlotVictimOrder:  "gangpreempt",
}

// Builtin returns the built-in module of a slot. Every slot in abi.Slots has
// one; any other value gets the zero Module.
func Builtin(slot abi.Slot) Module {
	name, ok := bySlot[slot]
	if !ok {
		return Module{}
	}
	return Module{Name: name, Wasm: []byte(modules[name])}
}

// Names lists the built-in modules, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(modules))
}
