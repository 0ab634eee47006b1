//go:build tinygo.wasm || wasm

package queuesort

import "github.com/wasmsched/wasmsched/guest-sdk/internal/sortglue"

// The names are abi.ExportQueueSortLess and abi.ExportQueueSortKey (the
// directive needs literals); exports_test.go checks them.

//go:wasmexport wasmsched_queue_sort_less
func less(lenA, lenB int32) int32 {
	return sortglue.Less("queuesort", registered.Less, lenA, lenB)
}

//go:wasmexport wasmsched_queue_sort_key
func key(n int32) int64 {
	return int64(sortglue.Key("queuesort", registered.Key, n))
}
