//wasmsched:guest

// Command gpupack is a score policy module that packs GPU pods: it prefers
// the node that has the fewest GPUs left free once the pod runs there, so
// that whole nodes stay free for pods that need many. The logic is in
// package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/examples/gpupack/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/score"
)

func init() { score.Register(logic.Score, logic.Options...) }

func main() {}
