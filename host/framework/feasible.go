package framework

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmsched/wasmsched/host/cache"
)

// Upstream's bounds on the adaptive share of nodes to find feasible.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// NumFeasibleNodesToFind is how many feasible nodes the search stops at
// (upstream's numFeasibleNodesToFind): every node of a cluster under 100;
// otherwise percentage of them, but at least 100. A percentage of 0 is
// adaptive: 50% minus one point per 125 nodes, at least 5%, so that large
// clusters score a sample instead of every node.
func NumFeasibleNodesToFind(percentage int32, numAllNodes int32) int32 {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = max(50-numAllNodes/125, minFeasibleNodesPercentageToFind)
	}
	return max(numAllNodes*percentage/100, minFeasibleNodesToFind)
}

// passed marks a feasible node in FindFeasible's per-node results.
var passed = &Status{}

// FindFeasible filters nodes for the pod, round robin from start (upstream's
// nextStartNodeIndex, so that every node gets its turn across pods), and
// stops once want nodes are feasible (want <= 0: no limit). It records every
// rejection in diag, and returns the feasible nodes and the next start:
// (start + nodes processed) % len(nodes), where processed are the feasible
// nodes returned and the rejected ones recorded.
//
// When the pod names its nodes (spec.nodeName, metadata.name node affinity)
// only those among nodes are filtered, round robin from start among them,
// and the others are recorded as upstream records nodes outside its
// PreFilterResult: "node(s) didn't satisfy plugin(s) [NodeAffinity]".
//
// With workers > 1 the nodes are filtered by that many goroutines, in chunks
// of upstream's parallelizer size (√n, at most n/workers+1), each chunk in
// order. The result does not depend on workers when the search does not stop
// early (want at least the number of feasible nodes): the same feasible nodes
// in the same order (round-robin order), the same rejections. When it stops
// early, which nodes were looked at beyond the first want feasible ones
// depends on timing, as upstream's does; the feasible nodes returned are the
// first want, in round-robin order, of those found.
//
// A filter Error (a node info without a node) stops the search: FindFeasible
// returns no nodes and diag.Err reports it. So does ctx being done.
func FindFeasible(ctx context.Context, ps *PodState, nodes []*cache.NodeInfo, start int, want int, workers int, diag *Diagnosis) (feasible []*cache.NodeInfo, next int) {
	return FindFeasibleInto(ctx, nil, ps, nodes, start, want, workers, diag)
}

// FindFeasibleInto is FindFeasible returning the feasible nodes in buf's
// array when it is large enough: the scheduling loop keeps one slice for
// every pod, where a new one per pod (want pointers, 420 for 1,000 nodes)
// was 7% of the bytes it allocated per plain pod. The result is only valid
// until the caller passes buf again.
func FindFeasibleInto(ctx context.Context, buf []*cache.NodeInfo, ps *PodState, nodes []*cache.NodeInfo, start int, want int, workers int, diag *Diagnosis) (feasible []*cache.NodeInfo, next int) {
	numAll := len(nodes)
	if numAll == 0 {
		return nil, 0
	}
	start = max(start, 0)
	cands := ps.candidates(nodes)
	if ps.nodeNames != nil {
		diag.restrict(ps)
	}
	n := len(cands)
	if n == 0 {
		return nil, start % numAll
	}
	if want <= 0 || want > n {
		want = n
	}
	offset := start % n
	if ps.batch != nil {
		return findWithBatch(ctx, buf, ps, cands, numAll, start, offset, want, workers, diag)
	}
	done := ctx.Done()

	if workers <= 1 || n == 1 {
		feasible = slices.Grow(buf[:0], want)
		processed := 0
		for i := range n {
			if done != nil && i%64 == 0 && ctx.Err() != nil {
				break
			}
			j := (offset + i) % n
			ni := cands[j]
			st := ps.filterAt(j, ni)
			if st == nil {
				processed++
				ps.feasibleAt(j)
				if feasible = append(feasible, ni); len(feasible) == want {
					break
				}
				continue
			}
			if st.Code == Error {
				diag.Add(ni.Name(), st)
				return nil, (start + processed) % numAll
			}
			processed++
			diag.Add(ni.Name(), st)
		}
		return feasible, (start + processed) % numAll
	}

	results, release := statusScratch(n)
	touched := filterParallel(ctx, ps, cands, offset, n, want, workers, results)
	defer release(touched)

	feasible = slices.Grow(buf[:0], want)
	processed := 0
	var failed bool
	for i, st := range results[:touched] {
		switch {
		case st == nil:
		case st == passed:
			if len(feasible) < want {
				j := (offset + i) % n
				feasible = append(feasible, cands[j])
				ps.feasibleAt(j)
				processed++
			}
		default:
			if st.Code == Error {
				failed = true
			} else {
				processed++
			}
			diag.Add(cands[(offset+i)%n].Name(), st)
		}
	}
	if failed {
		feasible = nil
	}
	return feasible, (start + processed) % numAll
}

// filterParallel filters count of cands round robin from offset with up
// to workers goroutines, each taking chunks in order, and stores each node's
// verdict in results, indexed from offset (passed for a feasible node, nil
// for one not looked at); nodes whose result is already set are skipped. It
// stops once want nodes passed, at an Error, or when ctx is done, and
// returns how many results from the first it may have set: the chunks
// taken. The rest are left as they were (nil in a fresh scratch), and
// clearing 1,000 pointers while the collector runs costs write barriers.
//
// The calling goroutine is the first worker, and it starts the others only
// once the chunks left would take it longer than handOffWorth at the pace of
// those it has done: waking a goroutine on another P costs CPU (its start, a
// futex wake, its park), which only pays when it shortens a long search. A
// plain pod's 420 nodes (SchedulingBasic) take about 20 µs, so it is
// filtered on the scheduling goroutine alone.
func filterParallel(ctx context.Context, ps *PodState, cands []*cache.NodeInfo, offset, count, want, workers int, results []*Status) (touched int) {
	n := count
	all := len(cands)
	done := ctx.Done()
	var found atomic.Int64
	var stop atomic.Bool
	chunk := chunkSize(n, workers)
	chunks := (n + chunk - 1) / chunk
	var nextChunk atomic.Int64
	next := func() int { return int(nextChunk.Add(1) - 1) }
	// filterChunk filters chunk c and reports whether the search goes on.
	filterChunk := func(c int) bool {
		for i := c * chunk; i < min((c+1)*chunk, n); i++ {
			if stop.Load() {
				return false
			}
			if results[i] != nil {
				continue
			}
			select {
			case <-done:
				return false
			default:
			}
			j := (offset + i) % all
			st := ps.filterAt(j, cands[j])
			switch {
			case st == nil:
				results[i] = passed
				if found.Add(1) >= int64(want) {
					stop.Store(true)
				}
			case st.Code == Error:
				results[i] = st
				stop.Store(true)
			default:
				results[i] = st
			}
		}
		return true
	}
	// worker takes chunks until none is left or the search stops.
	worker := func() {
		for c := next(); c < chunks && filterChunk(c); c = next() {
		}
	}
	defer func() { touched = min(int(min(nextChunk.Load(), int64(chunks)))*chunk, n) }()
	helpers := min(workers, chunks) - 1
	if helpers <= 0 {
		worker()
		return
	}
	var wg sync.WaitGroup
	began := time.Now()
	for doneChunks := 1; ; doneChunks++ {
		if c := next(); c >= chunks || !filterChunk(c) {
			break
		}
		if left := chunks - int(nextChunk.Load()); handOff(time.Since(began), doneChunks, left) {
			for range min(helpers, left) {
				wg.Go(worker)
			}
			worker()
			break
		}
	}
	wg.Wait()
	return
}

// handOffWorth is the filtering time left, at the pace so far, from which
// filterParallel starts its other workers. Starting a helper goroutine,
// waking a thread for it and parking it again cost a few microseconds of
// CPU on each of two threads.
var handOffWorth = 50 * time.Microsecond

// handOff reports whether the left chunks, at the pace of done chunks in
// elapsed, would take handOffWorth or more.
func handOff(elapsed time.Duration, done, left int) bool {
	return left > 0 && elapsed*time.Duration(left) >= handOffWorth*time.Duration(max(done, 1))
}

// chunkSize is upstream's parallelizer chunk size: √n, but no more than
// n/workers+1 so that every worker gets a chunk, and at least 1.
func chunkSize(n, workers int) int {
	s := int(math.Sqrt(float64(n)))
	if r := n/workers + 1; s > r {
		s = r
	}
	return max(s, 1)
}

// statusPool holds FindFeasible's per-node results between calls: a fresh
// slice per cycle was a node's worth of pointers of garbage per pod (8 KiB
// at 1,000 nodes, the cycle's largest allocation for plain pods).
var statusPool = sync.Pool{New: func() any { return new([]*Status) }}

// statusScratch returns a zeroed slice of n statuses from statusPool and
// the function that gives it back with the first used of them set.
// Slices go back cleared (so that the pool holds no statuses), so they come
// out zeroed.
func statusScratch(n int) ([]*Status, func(used int)) {
	sp := statusPool.Get().(*[]*Status)
	if cap(*sp) < n {
		*sp = make([]*Status, n)
	}
	results := (*sp)[:n]
	return results, func(used int) {
		clear(results[:used])
		statusPool.Put(sp)
	}
}

// SelectHost returns the node with the highest score, a tie broken
// uniformly at random with rnd (reservoir sampling, as upstream's selectHost
// did before v1.37's score heap); with rnd nil, the first of them. It returns
// nil for no nodes.
func SelectHost(nodes []*cache.NodeInfo, scores []int64, rnd *rand.Rand) *cache.NodeInfo {
	var best *cache.NodeInfo
	var bestScore int64
	ties := 0
	for i, ni := range nodes {
		switch s := scores[i]; {
		case best == nil || s > bestScore:
			best, bestScore, ties = ni, s, 1
		case s == bestScore:
			ties++
			if rnd != nil && rnd.IntN(ties) == 0 {
				best = ni
			}
		}
	}
	return best
}
