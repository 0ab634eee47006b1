//wasmsched:guest

// Command holdlabel is a PreEnqueue policy module that keeps pods labelled
// example.wasmsched.io/hold out of the scheduling queues. The logic is in
// package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/preenqueue"
)

func init() { preenqueue.Register(logic.PreEnqueue) }

func main() {}
