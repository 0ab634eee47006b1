//wasmsched:guest

// Command fithint is a QueueingHint policy module for the resource-fit
// filter: it requeues a pod rejected by NodeResourcesFit only when a node
// event makes room for it or an assigned pod that held one of its resources
// goes away. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
)

func init() { hint.Register(logic.Plugin) }

func main() {}
