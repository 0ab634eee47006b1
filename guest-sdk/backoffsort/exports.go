//go:build tinygo.wasm || wasm

package backoffsort

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/sortglue"
)

// The names are abi.ExportBackoffSortLess, abi.ExportBackoffSortKey and
// abi.ExportBackoffMayPop (the directive needs literals); exports_test.go
// checks them.

//go:wasmexport wasmsched_backoff_sort_less
func less(lenA, lenB int32) int32 {
	return sortglue.Less("backoffsort", registered.Less, lenA, lenB)
}

//go:wasmexport wasmsched_backoff_sort_key
func key(n int32) int64 {
	return int64(sortglue.Key("backoffsort", registered.Key, n))
}

//go:wasmexport wasmsched_backoff_may_pop
func mayPop(n int32) int32 {
	if registered.Less == nil {
		return sortglue.Pred("backoffsort", nil, n)
	}
	return sortglue.Pred("backoffsort", registeredMayPop, n)
}

func registeredMayPop(p abi.PodView) bool { return MayPop(registered, p) }
