//wasmsched:guest

// Command placement is a policy module for policytest's own tests of the
// placement slots: one module with both a filter and a score (so the node
// sync and the placement options are linked once and shared), whose
// answers are read off the nodes' labels. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/filter"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest/testdata/placement/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
)

func init() {
	filter.Register(logic.Filter, logic.FilterOptions...)
	score.Register(logic.Score, logic.ScoreOptions...)
}

func main() {}
