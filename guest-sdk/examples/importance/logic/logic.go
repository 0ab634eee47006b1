// Package logic orders preemption victims like upstream's
// moreImportantVictim (KEP-5710): the most important victim is preempted
// last and reprieved first.
package logic

import "github.com/wasmsched/wasmsched/abi"

// MoreImportant reports whether victim a is more important than b: higher
// priority first; at equal priority a pod group before a single pod; between
// pods, the one that started earlier (one that has not started is the least
// important); between groups, the one with more members, then the one that
// started earlier. Ties break on UID, so the order is deterministic. The
// rule is [abi.MoreImportantVictim], which the host's native default uses
// too.
func MoreImportant(a, b abi.Victim) bool { return abi.MoreImportantVictim(&a, &b) }
