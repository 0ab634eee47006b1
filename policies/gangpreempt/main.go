//wasmsched:guest

// Command gangpreempt is a policy module serving two slots: PreEnqueue holds
// a gang's pods until its PodGroup's minCount pods exist (KEP-4671), and the
// victim order ranks preemption victims as upstream's moreImportantVictim
// does (KEP-5710). The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
	"github.com/wasmsched/wasmsched/policies/gangpreempt/logic"
)

func init() {
	preenqueue.Register(logic.PreEnqueue)
	victim.Register(logic.MoreImportant)
}

func main() {}
