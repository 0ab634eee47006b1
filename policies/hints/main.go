//wasmsched:guest

// Command hints is the QueueingHint policy module for the host's native
// filters (KEP-4247): it requeues a pod only on the cluster events that may
// make the plugins that rejected it pass, as the in-tree plugins' hints of
// Kubernetes v1.37 do. The logic is in package logic.
package main

import (
	"github.com/wasmsched/wasmsched/guest-sdk/hint"
	"github.com/wasmsched/wasmsched/policies/hints/logic"
)

func init() { hint.Register(logic.Plugins...) }

func main() {}
