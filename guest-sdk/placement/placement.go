// Package placement has the helpers a filter or score policy (packages
// filter and score) asks about a pod and a node: label selectors on a
// label list, taint tolerations with upstream's semantics, and resource
// amounts (what a pod requests, what a node has free).
//
// Every helper reads the records in place and allocates nothing, since a
// placement policy runs once per node for every pod the scheduler places,
// in a module whose memory is never freed (TinyGo's leaking collector).
//
// # Notes
//
// A placement module sees only the nodes the scheduler's native filters
// accepted (node affinity, taints, resource fit, ...): it need not check
// those again, and the helpers here are for policies of its own (a pool, a
// preference, a tie-break) that happen to need the same notions.
package placement
