package framework

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Diagnosis records why nodes were rejected in one cycle (upstream's
// framework.Diagnosis): each rejected node's status, the status of the nodes
// no filter looked at, the plugins that rejected, and the PreFilter and
// PostFilter messages. The zero value is ready to use; Reset makes it so
// again while keeping its storage. It is not safe for concurrent use
// (FindFeasible records from one goroutine).
type Diagnosis struct {
	// rejected are the rejections in the order Add recorded them; nodes
	// indexes them by node, the last one of a node winning, when first
	// read (index): a cycle records every node it rejects, and the pod is
	// usually placed all the same, its diagnosis never read. A map insert
	// per rejected node was 6% of the CPU of required pod anti-affinity on
	// 5,000 nodes; an append is a copy into reused storage.
	rejected []rejection
	indexed  int // rejected[:indexed] are in nodes
	nodes    map[string]*Status
	// absent is the status of the nodes not in nodes, nil for upstream's
	// default (UnschedulableAndUnresolvable without reasons).
	absent        *Status
	preFilterMsg  string
	postFilterMsg string
	unschedulable []string // sorted set
	pending       []string // sorted set
	// lastPlugin and lastCode are those of the last status Add recorded: a
	// run of nodes one plugin rejects alike adds the plugin once.
	lastPlugin string
	lastCode   Code
	err        error
}

// Reset empties d, keeping its storage for the next cycle.
func (d *Diagnosis) Reset() {
	clear(d.nodes)
	clear(d.rejected)
	*d = Diagnosis{rejected: d.rejected[:0], nodes: d.nodes, unschedulable: d.unschedulable[:0], pending: d.pending[:0]}
}

// rejection is a node Add recorded, with its status.
type rejection struct {
	node string
	st   *Status
}

// index brings nodes up to date with rejected.
func (d *Diagnosis) index() {
	if d.indexed == len(d.rejected) {
		return
	}
	if d.nodes == nil {
		d.nodes = make(map[string]*Status, len(d.rejected))
	}
	for _, r := range d.rejected[d.indexed:] {
		d.nodes[r.node] = r.st
	}
	d.indexed = len(d.rejected)
}

// Add records that node was rejected with st. An Error is kept as the
// cycle's error (Err) instead; a success is ignored. The plugin of a
// rejecting status joins UnschedulablePlugins (and PendingPlugins for
// Pending), as upstream's AddPluginStatus.
func (d *Diagnosis) Add(node string, st *Status) {
	if st.IsSuccess() {
		return
	}
	if st.Code == Error {
		if d.err == nil {
			d.err = st.Err
			if d.err == nil {
				d.err = fmt.Errorf("node %s: %s", node, st.Message())
			}
		}
		return
	}
	d.rejected = append(d.rejected, rejection{node, st})
	if st.Plugin != d.lastPlugin || st.Code != d.lastCode {
		d.addPlugin(st)
		d.lastPlugin, d.lastCode = st.Plugin, st.Code
	}
}

// RecordPreFilter records a rejection of the pod before any node was
// looked at (Prepare's Status, or another PreFilter's): every node gets st,
// and Message reports st's reasons once, not per node, as upstream does.
func (d *Diagnosis) RecordPreFilter(st *Status) {
	if st.IsSuccess() {
		return
	}
	if st.Code == Error {
		d.Add("", st)
		return
	}
	d.absent = st
	d.preFilterMsg = st.Message()
	d.addPlugin(st)
}

// SetPostFilterMessage sets the message of the PostFilter (preemption)
// status, which Message appends: upstream's DefaultPreemption gives
// "preemption: " followed by its own node count, e.g. "preemption: 0/3 nodes
// are available: 3 Preemption is not helpful for scheduling.".
func (d *Diagnosis) SetPostFilterMessage(msg string) { d.postFilterMsg = msg }

// restrict records the PreFilter restriction of ps: the nodes left out get
// ps.absent, and the restricting plugins count as rejecting.
func (d *Diagnosis) restrict(ps *PodState) {
	d.absent = ps.absent
	for _, p := range ps.restrictedBy {
		d.unschedulable = insertSorted(d.unschedulable, p)
	}
}

func (d *Diagnosis) addPlugin(st *Status) {
	if st.Plugin == "" {
		return
	}
	if st.IsRejected() {
		d.unschedulable = insertSorted(d.unschedulable, st.Plugin)
	}
	if st.Code == Pending {
		d.pending = insertSorted(d.pending, st.Plugin)
	}
}

func insertSorted(set []string, s string) []string {
	i, found := slices.BinarySearch(set, s)
	if found {
		return set
	}
	return slices.Insert(set, i, s)
}

// NodeStatus is the status node was rejected with: its own, or that of the
// nodes no filter looked at (UnschedulableAndUnresolvable by default, which
// preemption skips).
func (d *Diagnosis) NodeStatus(node string) *Status {
	d.index()
	if st, ok := d.nodes[node]; ok {
		return st
	}
	if d.absent != nil {
		return d.absent
	}
	return statusAbsent
}

// Len is the number of nodes rejected with a status of their own.
func (d *Diagnosis) Len() int {
	d.index()
	return len(d.nodes)
}

// Err is the first Error a filter returned: the cycle failed with it, not
// with a FitError.
func (d *Diagnosis) Err() error { return d.err }

// UnschedulablePlugins are the plugins that rejected some node (sorted, nil
// for none), for requeueing with their hints. The slice is the caller's.
func (d *Diagnosis) UnschedulablePlugins() []string { return cloneOrNil(d.unschedulable) }

// PendingPlugins are the plugins that returned Pending (sorted, nil for
// none). The slice is the caller's.
func (d *Diagnosis) PendingPlugins() []string { return cloneOrNil(d.pending) }

func cloneOrNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// Message is upstream's FitError text for a pod that fits none of
// numAllNodes nodes: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s)
// didn't match Pod's node affinity/selector." Each reason is counted over the
// nodes (a node rejected for two resources counts in both), the nodes without
// a status of their own count with the absent status's reasons, and the
// "<count> <reason>" strings are sorted as strings, as upstream sorts them
// (so "10 x" comes before "2 y"). After a PreFilter rejection the PreFilter
// message stands alone instead. The PostFilter message, if any, follows
// after a space.
func (d *Diagnosis) Message(numAllNodes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "0/%d nodes are available:", numAllNodes)
	if d.preFilterMsg != "" {
		fmt.Fprintf(&b, " %s.", d.preFilterMsg)
	} else {
		d.index()
		counts := make(map[string]int)
		for _, st := range d.nodes {
			for _, r := range st.Reasons {
				counts[r]++
			}
		}
		if absent := numAllNodes - len(d.nodes); absent > 0 && d.absent != nil {
			for _, r := range d.absent.Reasons {
				counts[r] += absent
			}
		}
		lines := make([]string, 0, len(counts))
		for r, n := range counts {
			lines = append(lines, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(lines)
		if len(lines) > 0 {
			fmt.Fprintf(&b, " %s.", strings.Join(lines, ", "))
		}
	}
	if d.postFilterMsg != "" {
		b.WriteString(" ")
		b.WriteString(d.postFilterMsg)
	}
	return b.String()
}
