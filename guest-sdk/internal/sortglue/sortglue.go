// Package sortglue is the export glue the two sort slots share (queuesort
// and backoffsort): decode the pod records of a call, ask the policy, encode
// the answer. It builds everywhere, so it is tested natively.
package sortglue

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/guest"
)

var zeroKey [abi.SortKeySize]byte

// Less answers a less export: the input holds pod A's record (lenA bytes)
// followed by pod B's (lenB bytes). slot prefixes error messages.
func Less(slot string, less func(a, b abi.PodView) bool, lenA, lenB int32) int32 {
	if less == nil {
		return guest.FailBool(abi.ErrUnsupported, slot+": no policy registered")
	}
	if lenA < 0 || lenB < 0 {
		return guest.FailBool(abi.ErrDecode, slot+": negative input length")
	}
	in := guest.Input(int(lenA) + int(lenB))
	if in == nil {
		return guest.FailBool(abi.ErrDecode, slot+": input longer than the buffer")
	}
	a, err := abi.ReadPod(in[:lenA])
	if err != nil {
		return guest.FailBool(abi.ErrDecode, slot+": pod A: "+err.Error())
	}
	b, err := abi.ReadPod(in[lenA:])
	if err != nil {
		return guest.FailBool(abi.ErrDecode, slot+": pod B: "+err.Error())
	}
	return guest.Bool(less(a, b))
}

// Key answers a sort-key export: the input is one pod record of n bytes.
func Key(slot string, key func(p abi.PodView) abi.SortKey, n int32) abi.Result {
	if key == nil {
		return guest.Fail(abi.ErrUnsupported, slot+": the policy computes no sort key; compare with less")
	}
	p, err := abi.ReadPod(guest.Input(int(n)))
	if err != nil {
		return guest.Fail(abi.ErrDecode, slot+": "+err.Error())
	}
	out := append(guest.OutputBuffer(), zeroKey[:]...)
	abi.PutSortKey(out, key(p))
	return guest.Output(out)
}

// Pred answers a boolean per-pod export: the input is one pod record of n bytes.
func Pred(slot string, pred func(p abi.PodView) bool, n int32) int32 {
	if pred == nil {
		return guest.FailBool(abi.ErrUnsupported, slot+": no policy registered")
	}
	p, err := abi.ReadPod(guest.Input(int(n)))
	if err != nil {
		return guest.FailBool(abi.ErrDecode, slot+": "+err.Error())
	}
	return guest.Bool(pred(p))
}
