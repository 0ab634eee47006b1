//wasmsched:guest

// Command nodepool is a filter policy module that gives namespaces pools of
// nodes: a namespace labelled wasmsched.io/pool=P runs its pods only on the
// nodes labelled wasmsched.io/pool=P, and those nodes run no other pods. The
// logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/nodepool/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
)

func init() { filter.Register(logic.Filter, logic.Options...) }

func main() {}
