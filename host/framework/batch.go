package framework

import (
	"context"
	"slices"

	"github.com/wasmsched/wasmsched/host/cache"
)

// accepted marks, in findWithBatch's per-node results, a node every filter
// accepted.
var accepted = &Status{}

// findWithBatch is FindFeasible for a pod with BatchFilters. It searches in
// rounds: the other filters run, in parallel as FindFeasible's, over the
// nodes not looked at yet, round robin, until they accept as many nodes as
// are still wanted; the BatchFilters then judge those nodes, one call each.
// When they reject some, the next round asks for twice as many as are
// still missing, so a filter that rejects most nodes costs a few calls, and
// one that rejects none costs one. Nodes a round's parallel search skipped
// after it had enough are looked at in the next, so a pod is rejected only
// after every candidate was.
//
// The result is FindFeasible's: the first want nodes accepted in the order
// found, the rejections in diag in round-robin order, and the next start
// advanced by the nodes returned and rejected.
func findWithBatch(ctx context.Context, buf []*cache.NodeInfo, ps *PodState, cands []*cache.NodeInfo, numAll, start, offset, want, workers int, diag *Diagnosis) ([]*cache.NodeInfo, int) {
	n := len(cands)
	results, release := statusScratch(n) // indexed from offset
	defer release(n)
	feasible := slices.Grow(buf[:0], want)
	var round []int // indexes that passed the other filters this round
	var nodes []*cache.NodeInfo
	var verdicts []*Status
	ask, pos := want, 0
	for len(feasible) < want && ctx.Err() == nil {
		for pos < n && results[pos] != nil {
			pos++
		}
		if pos == n {
			break
		}
		if workers <= 1 || n-pos == 1 {
			found := 0
			for i := pos; i < n && found < ask; i++ {
				if results[i] != nil {
					continue
				}
				st := filterNative(ps, cands[(offset+i)%n])
				if st == nil {
					st = passed
					found++
				}
				results[i] = st
				if st.Code == Error {
					break
				}
			}
		} else {
			filterParallel(ctx, ps, cands, offset+pos, n-pos, ask, workers, results[pos:])
		}
		round, nodes = round[:0], nodes[:0]
		for i := pos; i < n; i++ {
			switch st := results[i]; {
			case st == passed:
				round = append(round, i)
				nodes = append(nodes, cands[(offset+i)%n])
			case st != nil && st.Code == Error:
				diag.Add(cands[(offset+i)%n].Name(), st)
				return nil, start % numAll
			}
		}
		if len(nodes) == 0 {
			continue
		}
		verdicts = runBatch(ps, nodes, verdicts)
		for k, i := range round {
			st := verdicts[k]
			switch {
			case st == nil:
				results[i] = accepted
				if len(feasible) < want {
					feasible = append(feasible, nodes[k])
				}
			case st.Code == Error:
				diag.Add(nodes[k].Name(), st)
				return nil, start % numAll
			default:
				results[i] = st
			}
		}
		ask = max(2*ask, want-len(feasible))
	}
	processed := len(feasible)
	for i, st := range results {
		if st != nil && st != passed && st != accepted {
			diag.Add(cands[(offset+i)%n].Name(), st)
			processed++
		}
	}
	return feasible, (start + processed) % numAll
}

// runBatch runs the pod's BatchFilters over nodes, each over the nodes the
// previous ones accepted, into out (grown to len(nodes) and returned): nil
// for a node all accept, else the first rejection.
func runBatch(ps *PodState, nodes []*cache.NodeInfo, out []*Status) []*Status {
	out = slices.Grow(out[:0], len(nodes))[:len(nodes)]
	clear(out)
	if len(ps.batch) == 1 {
		ps.batch[0].FilterBatch(nodes, out)
		return out
	}
	idx := make([]int, len(nodes))
	for i := range idx {
		idx[i] = i
	}
	for _, b := range ps.batch {
		sub := make([]*cache.NodeInfo, len(idx))
		for k, i := range idx {
			sub[k] = nodes[i]
		}
		st := make([]*Status, len(sub))
		b.FilterBatch(sub, st)
		kept := idx[:0]
		for k, i := range idx {
			if st[k] != nil {
				out[i] = st[k]
			} else {
				kept = append(kept, i)
			}
		}
		if idx = kept; len(idx) == 0 {
			break
		}
	}
	return out
}
