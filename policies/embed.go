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
	"github.com/wasmsched/wasmsched/guest-sdk/native"
	backoffpoplogic "github.com/wasmsched/wasmsched/policies/backoffpop/logic"
	gangpreemptlogic "github.com/wasmsched/wasmsched/policies/gangpreempt/logic"
	hintslogic "github.com/wasmsched/wasmsched/policies/hints/logic"
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

// builtins is this package's column of the slot table (host/policy's
// SpecOf): each slot's built-in module, and its reference policy compiled
// natively, built from the same logic values as the module's main.go
// registers (see Native).
var builtins = [...]builtin{
	abi.SlotQueueSort:    {"backoffpop", func() any { return native.Sort(backoffpoplogic.QueueSort) }},
	abi.SlotBackoffSort:  {"backoffpop", func() any { return native.BackoffSort(backoffpoplogic.BackoffSort) }},
	abi.SlotPreEnqueue:   {"gangpreempt", func() any { return native.PreEnqueue(gangpreemptlogic.PreEnqueue) }},
	abi.SlotQueueingHint: {"hints", func() any { return native.QueueingHint(hintslogic.Plugins...) }},
	abi.SlotVictimOrder:  {"gangpreempt", func() any { return native.VictimOrder(gangpreemptlogic.MoreImportant) }},
	// The placement slots have no built-in module: empty, they do nothing.
	abi.SlotFilter: {},
	abi.SlotScore:  {},
}

// Every slot has a row; the placement slots' are empty.
var _ [len(abi.Slots)]builtin = builtins

type builtin struct {
	module string     // the folder under policies/
	native func() any // the logic run by package guest-sdk/native
}

// Builtin returns the built-in module of a slot. Every slot in abi.Slots
// but the placement slots has one; they and any other value get the zero
// Module.
func Builtin(slot abi.Slot) Module {
	if int(slot) >= len(builtins) || builtins[slot].module == "" {
		return Module{}
	}
	name := builtins[slot].module
	return Module{Name: name, Wasm: []byte(modules[name])}
}

// Names lists the built-in modules, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(modules))
}
