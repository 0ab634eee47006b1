//wasmsched:guest

// Command fifosort is a queue-sort policy module that ignores priority:
// pods are scheduled in the order they were created (first in, first out),
// with a sort key so that the host's heap compares natively. Swapping it in
// for the built-in priority order (and back) while the scheduler runs is
// what the hot-swap e2e test does. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/fifosort/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/queuesort"
)

func init() { queuesort.Register(logic.Policy) }

func main() {}
