//wasmsched:guest

// Command backoffpop is a policy module serving two slots for KEP-5142
// (SchedulerPopFromBackoffQ): the queue sort (upstream's PrioritySort) and
// the backoff sort (backoffQ in 1-second windows ordered by that queue sort
// within a window, and early popping only for pods that backed off after an
// unschedulable attempt). The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/backoffsort"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
	"github.com/wasmsched/wasmsched/policies/backoffpop/logic"
)

func init() {
	queuesort.Register(logic.QueueSort)
	backoffsort.Register(logic.BackoffSort)
}

func main() {}
