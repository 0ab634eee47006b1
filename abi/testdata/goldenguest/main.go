//wasmsched:guest

// Command goldenguest is the guest side of the golden-vector check: the abi
// codecs built by TinyGo encode every abitest case and round-trip every golden
// vector, and abi/golden_guest_test.go compares the results with
// abi/testdata/golden byte for byte. It implements no slot; besides the
// exports every module has, it exports:
//
//	golden_count() i32             the number of cases
//	golden_encode(i i32) i64       Result of case i's encoding
//	golden_roundtrip(n i32) i64    Result of decoding and re-encoding the n
//	                               input-buffer bytes (abitest.RoundTrip), or
//	                               -ErrDecode with the message in last_error
//
// Outputs live in one reused buffer, valid until the next call.
package main

import (
	"strconv"
	"unsafe"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/abi/abitest"
)

var (
	cases   = abitest.Cases()
	in      []byte // the input buffer handed out by wasmsched_buffer
	out     []byte // the output of the last call
	lastErr []byte // the message of the last failed call
)

func ptr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func result(b []byte) int64 { return int64(abi.PackResult(ptr(b), uint32(len(b)))) }

func fail(code abi.ErrCode, msg string) int64 {
	lastErr = append(lastErr[:0], msg...)
	return int64(abi.ErrResult(code))
}

//go:wasmexport wasmsched_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport wasmsched_buffer
func buffer(size int32) int32 {
	if size < 0 {
		return 0
	}
	if in == nil || cap(in) < int(size) {
		in = make([]byte, max(int(size), 64))
	}
	return int32(ptr(in))
}

//go:wasmexport wasmsched_last_error
func lastError() int64 { return result(lastErr) }

//go:wasmexport golden_count
func goldenCount() int32 { return int32(len(cases)) }

//go:wasmexport golden_encode
func goldenEncode(i int32) int64 {
	if i < 0 || int(i) >= len(cases) {
		return fail(abi.ErrPolicy, "golden_encode: case "+strconv.Itoa(int(i))+" out of range [0, "+strconv.Itoa(len(cases))+")")
	}
	out = cases[i].Encode(out[:0])
	return result(out)
}

//go:wasmexport golden_roundtrip
func goldenRoundTrip(n int32) int64 {
	if n < 0 || int(n) > cap(in) {
		return fail(abi.ErrDecode, "golden_roundtrip: input length "+strconv.Itoa(int(n))+" exceeds the buffer")
	}
	var err error
	if out, err = abitest.RoundTrip(out[:0], in[:n]); err != nil {
		return fail(abi.ErrDecode, err.Error())
	}
	return result(out)
}

func main() {}
