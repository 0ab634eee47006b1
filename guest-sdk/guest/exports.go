//go:build tinygo.wasm || wasm

package guest

import (
	"unsafe"

	"github.com/wasmsched/wasmsched/abi"
)

// The names below are abi.ExportABIVersion, abi.ExportBuffer and
// abi.ExportLastError (the directive needs literals); exports_test.go checks
// that they match.

//go:wasmexport wasmsched_abi_version
func abiVersion() uint32 { return abi.Version }

//go:wasmexport wasmsched_buffer
func buffer(size int32) uint32 {
	b := Buffer(int(size))
	if b == nil {
		return 0
	}
	return addr(b)
}

//go:wasmexport wasmsched_last_error
func lastError() int64 {
	s := LastError()
	if s == "" {
		return int64(abi.PackResult(0, 0))
	}
	return int64(abi.PackResult(stringAddr(s), uint32(len(s))))
}

// stringAddr is the guest address of s's first byte.
func stringAddr(s string) uint32 {
	return uint32(uintptr(unsafe.Pointer(unsafe.StringData(s))))
}
