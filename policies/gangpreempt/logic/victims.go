package logic

import "github.com/wasmsched/wasmsched/abi"

// MoreImportant reports whether victim a is more important than b, i.e. is
// preempted later and reprieved earlier: upstream's MoreImportantVictim,
// whose one definition is [abi.MoreImportantVictim] (the rules are listed
// there). The host's native default (host/policy.Importance) calls the same
// function, so the module and the default decide alike by construction.
func MoreImportant(a, b abi.Victim) bool { return abi.MoreImportantVictim(&a, &b) }
