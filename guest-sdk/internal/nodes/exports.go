//go:build tinygo.wasm || wasm

package nodes

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

// The names are abi.ExportNodes and abi.ExportPlacementOptions (the
// directive needs literals); exports_test.go checks them.

//go:wasmexport wasmsched_nodes
func syncNodes(n int32) int32 {
	if err := Held.Sync(guest.Input(int(n))); err != nil {
		return guest.FailBool(abi.ErrDecode, "nodes: "+err.Error())
	}
	return 0
}

//go:wasmexport wasmsched_placement_options
func placementOptions() int64 {
	return int64(guest.Output(AppendOptions(guest.OutputBuffer())))
}
