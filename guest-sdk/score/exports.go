//go:build tinygo.wasm || wasm

package score

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

// The names are abi.ExportScore and abi.ExportPreScore (the directive
// needs literals); exports_test.go checks them. Package nodes exports the
// node sync and the placement options.

//go:wasmexport wasmsched_score
func scoreNodes(n int32) int64 {
	if registered == nil {
		return int64(guest.Fail(abi.ErrUnsupported, "score: no policy registered"))
	}
	out, err := answer(registered, &nodes.Held, guest.Input(int(n)), guest.OutputBuffer())
	if err != nil {
		return int64(guest.Fail(abi.ErrDecode, "score: "+err.Error()))
	}
	return int64(guest.Output(out))
}

//go:wasmexport wasmsched_pre_score
func preScore(n int32) int32 {
	if registered == nil {
		return guest.FailBool(abi.ErrUnsupported, "score: no policy registered")
	}
	pod, err := abi.ReadPod(guest.Input(int(n)))
	if err != nil {
		return guest.FailBool(abi.ErrDecode, "score: "+err.Error())
	}
	return guest.Bool(registered.Concerns(pod))
}
