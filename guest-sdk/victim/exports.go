//go:build tinygo.wasm || wasm

package victim

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

// The name is abi.ExportVictimOrder (the directive needs a literal);
// exports_test.go checks it.

// Scratch space reused between calls.
var (
	order   []uint32
	scratch []abi.Victim
)

//go:wasmexport wasmsched_victim_order
func victimOrder(n int32) int64 {
	if registered == nil {
		return int64(guest.Fail(abi.ErrUnsupported, "victim: no policy registered"))
	}
	batch, err := abi.ReadVictimBatch(guest.Input(int(n)))
	if err != nil {
		return int64(guest.Fail(abi.ErrDecode, "victim: "+err.Error()))
	}
	if cap(order) < batch.Len() {
		order = make([]uint32, batch.Len())
	}
	order = order[:batch.Len()]
	scratch = Order(registered, batch, order, scratch)
	return int64(guest.Output(abi.AppendOrder(guest.OutputBuffer(), order)))
}
