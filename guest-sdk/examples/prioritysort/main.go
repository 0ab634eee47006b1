//wasmsched:guest

// Command prioritysort is a queue-sort policy module: upstream's
// PrioritySort (higher priority first, then earlier queued), with a sort key
// so that the host's heap compares natively. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/prioritysort/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

func init() { queuesort.Register(logic.Policy) }

func main() {}
