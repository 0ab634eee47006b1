// Package logic orders backoffQ by backoff expiry, earliest first (upstream
// without KEP-5142's ordering window), and lets a pod be popped before its
// backoff ends, when activeQ is empty, only if its last attempt was rejected
// by a plugin rather than failed with an error (KEP-5142).
package logic

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
)

// Policy is what the module registers.
var Policy = backoffsort.Policy{Less: Less, Key: Key, MayPop: MayPop}

// Less reports whether a's backoff ends before b's.
func Less(a, b abi.PodView) bool { return a.BackoffExpiry() < b.BackoffExpiry() }

// Key orders pods as Less does.
func Key(p abi.PodView) abi.SortKey { return abi.SortKey{abi.Asc(p.BackoffExpiry()), 0, 0, 0} }

// MayPop reports whether p may leave backoff early: not after an error.
func MayPop(p abi.PodView) bool { return backoffsort.UpstreamMayPop(p) }
