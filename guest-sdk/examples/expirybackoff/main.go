//wasmsched:guest

// Command expirybackoff is a backoff-sort policy module: backoffQ ordered by
// backoff expiry, and KEP-5142's early pop for pods that backed off after an
// unschedulable attempt. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/examples/expirybackoff/logic"
)

func init() { backoffsort.Register(logic.Policy) }

func main() {}
