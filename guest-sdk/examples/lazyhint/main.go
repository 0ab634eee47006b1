//wasmsched:guest

// Command lazyhint is a deliberately wrong QueueingHint module, for trying
// shadow policies: it is fithint except that it never requeues a pod for a
// node added, so a pod waiting for room would wait for the periodic flush
// instead. Loaded as a Shadow (spec.mode: Shadow) beside the built-in hints,
// it shows up as wouldHaveDelayed in the object's status. The logic is in
// package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/lazyhint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
)

func init() { hint.Register(logic.Plugin) }

func main() {}
