//wasmsched:guest

// Command importance is a victim-order policy module: upstream's victim
// importance (KEP-5710). The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/importance/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/victim"
)

func init() { victim.Register(logic.MoreImportant) }

func main() {}
