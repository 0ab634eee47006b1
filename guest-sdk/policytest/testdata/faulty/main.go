//wasmsched:guest

// Command faulty is a deliberately broken policy module for policytest's own
// tests: its queue sort traps on a pod named "trap", and its PreEnqueue gates
// pods without naming the gating plugin, which the host refuses.
package main

import (
	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

func less(a, b abi.PodView) bool {
	if a.Name() == "trap" || b.Name() == "trap" {
		panic("trap")
	}
	return a.Priority() > b.Priority()
}

func gate(abi.PodView) abi.Gate { return abi.Gate{Code: abi.GateWait, Reason: "no plugin"} }

func init() {
	queuesort.Register(queuesort.Policy{Less: less})
	preenqueue.Register(gate)
}

func main() {}
