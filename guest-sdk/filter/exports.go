//go:build tinygo.wasm || wasm

package filter

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

// The names are abi.ExportFilter and abi.ExportPreFilter (the directive
// needs literals); exports_test.go checks them. Package nodes exports the
// node sync and the placement options.

var scratch call

//go:wasmexport wasmsched_filter
func filterNodes(n int32) int64 {
	if registered == nil {
		return int64(guest.Fail(abi.ErrUnsupported, "filter: no policy registered"))
	}
	out, code, err := scratch.answer(registered, &nodes.Held, guest.Input(int(n)), guest.OutputBuffer())
	if err != nil {
		return int64(guest.Fail(code, "filter: "+err.Error()))
	}
	return int64(guest.Output(out))
}

//go:wasmexport wasmsched_pre_filter
func preFilter(n int32) int32 {
	if registered == nil {
		return guest.FailBool(abi.ErrUnsupported, "filter: no policy registered")
	}
	pod, err := abi.ReadPod(guest.Input(int(n)))
	if err != nil {
		return guest.FailBool(abi.ErrDecode, "filter: "+err.Error())
	}
	return guest.Bool(registered.Concerns(pod))
}
