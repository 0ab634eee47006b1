// Package guest is the memory protocol every wasmsched policy module speaks,
// and the three exports each module must have: the ABI version, the input
// buffer and the last error message (their contract is in package abi; see
// its "Calling convention" section).
//
// A module imports this package through the slot packages (queuesort,
// backoffsort, preenqueue, hint, victim); policy code rarely needs it. In
// short, per call:
//
//   - the host asks for the input buffer with [abi.ExportBuffer] (its address
//     only changes when a larger size is requested), writes the input records
//     there and calls a slot export with the input length; the export reads
//     them with [Input];
//   - an export that returns bytes appends them to [OutputBuffer] and returns
//     [Output]; the bytes stay put until the next call;
//   - an export that fails returns [Fail] (or [FailBool]), which keeps the
//     message for [abi.ExportLastError].
//
// Both buffers are package-level and reused, so steady-state calls do not
// allocate. A module instance is single-threaded and never re-entered, which
// is what makes this sharing safe.
//
// The logic of this file builds everywhere, so it is tested natively; the
// //go:wasmexport functions are in exports.go, which builds only for Wasm.
package guest

import (
	"unicode/utf8"
	"unsafe"

	"github.com/wasmsched/wasmsched/abi"
)

// minBuffer is the smallest input buffer handed out, so that small inputs
// never make the buffer move; maxBuffer the largest (a quarter of the wasm32
// address space, far beyond any memory limit the host sets).
const (
	minBuffer = 4 << 10
	maxBuffer = 1 << 30
)

var (
	in      []byte // the input buffer; len == cap
	out     []byte // the output buffer, reused between calls
	lastErr string // message of the last failed call
)

// Buffer returns the input buffer, after growing it to at least size bytes
// if it is smaller; growth is by half at least, so a host that asks for a
// little more each time does not move it every time. It returns nil for a
// size out of [0, 1 GiB]. Buffer backs [abi.ExportBuffer].
func Buffer(size int) []byte {
	if size < 0 || size > maxBuffer {
		return nil
	}
	if in == nil || size > len(in) {
		in = make([]byte, min(max(size, minBuffer, len(in)+len(in)/2), maxBuffer))
	}
	return in
}

// Input returns the first n bytes of the input buffer: the input of the
// current call. It returns nil when n is negative or larger than the buffer,
// which a decoder then reports as malformed input.
func Input(n int) []byte {
	if n < 0 || n > len(in) {
		return nil
	}
	return in[:n:n]
}

// OutputBuffer returns the reusable output buffer, empty. Append the output
// to it and return [Output] of the result.
func OutputBuffer() []byte { return out[:0] }

// OutputBytes returns the output buffer resized to n bytes (its contents
// are left over from earlier calls), for outputs written in place. Pass it,
// once written, to [Output].
func OutputBytes(n int) []byte {
	if cap(out) < n {
		out = make([]byte, n, max(n, 2*cap(out)))
	}
	return out[:n]
}

// Output returns the [abi.Result] locating b in guest memory. b must be
// built by appending to [OutputBuffer]: Output keeps b's array (which
// append may have grown) as the output buffer of later calls, which also
// keeps it alive until the host has read it. To return other bytes, append
// them: Output(append(OutputBuffer(), b...)).
func Output(b []byte) abi.Result {
	out = b
	return abi.PackResult(addr(b), uint32(len(b)))
}

// LastOutput returns the bytes of the last [Output], for native tests of
// export glue (a native address does not fit in a Result).
func LastOutput() []byte { return out }

// Fail records msg as the last error and returns the Result for code.
// msg is kept as given (a constant or an error's message); the host reads at
// most [abi.MaxReasonLen] bytes of it.
func Fail(code abi.ErrCode, msg string) abi.Result {
	lastErr = msg
	return abi.ErrResult(code)
}

// FailBool is [Fail] for the exports that answer a boolean as an i32.
func FailBool(code abi.ErrCode, msg string) int32 {
	lastErr = msg
	return -int32(code)
}

// Bool is the i32 answer of a boolean export.
func Bool(v bool) int32 {
	if v {
		return 1
	}
	return 0
}

// LastError returns the message of the last failure, cut to at most
// [abi.MaxReasonLen] bytes on a rune boundary. It backs
// [abi.ExportLastError].
func LastError() string {
	s := lastErr
	if len(s) <= abi.MaxReasonLen {
		return s
	}
	n := abi.MaxReasonLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// addr is the guest address of b's first byte (truncated natively, where it
// is never dereferenced).
func addr(b []byte) uint32 {
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
