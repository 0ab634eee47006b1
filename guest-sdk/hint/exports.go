//go:build tinygo.wasm || wasm

package hint

import (
	"unsafe"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

// The names are abi.ExportHintEvents and abi.ExportQueueingHint (the
// directive needs literals); exports_test.go checks them.

//go:wasmexport wasmsched_hint_events
func hintEvents() int64 {
	if len(regs) == 0 {
		return int64(guest.Fail(abi.ErrUnsupported, "hint: no plugin registered an event"))
	}
	return int64(guest.Output(abi.AppendRegistrations(guest.OutputBuffer(), regs)))
}

//go:wasmexport wasmsched_queueing_hint
func queueingHint(n int32) int64 {
	batch, err := abi.ReadHintBatch(guest.Input(int(n)))
	if err != nil {
		return int64(guest.Fail(abi.ErrDecode, "hint: "+err.Error()))
	}
	out := guest.OutputBytes(batch.Len())
	// abi.Hint is a byte: the output is written in place.
	hints := unsafe.Slice((*abi.Hint)(unsafe.SliceData(out)), len(out))
	if err := Decide(registered, batch, hints); err != nil {
		return int64(guest.Fail(abi.ErrDecode, "hint: "+err.Error()))
	}
	return int64(guest.Output(out))
}
