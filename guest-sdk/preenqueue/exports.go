//go:build tinygo.wasm || wasm

package preenqueue

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

// The name is abi.ExportPreEnqueue (the directive needs a literal);
// exports_test.go checks it.

//go:wasmexport wasmsched_pre_enqueue
func preEnqueue(n int32) int64 {
	if registered == nil {
		return int64(guest.Fail(abi.ErrUnsupported, "preenqueue: no policy registered"))
	}
	p, err := abi.ReadPod(guest.Input(int(n)))
	if err != nil {
		return int64(guest.Fail(abi.ErrDecode, "preenqueue: "+err.Error()))
	}
	g := Decide(registered, p)
	return int64(guest.Output(abi.AppendGate(guest.OutputBuffer(), &g)))
}
