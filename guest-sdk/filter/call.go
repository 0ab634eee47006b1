package filter

import (
	"errors"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

// call is the export's scratch space, reused between calls so that a call
// allocates nothing once the slices have grown to the largest batch.
type call struct {
	verdicts []uint32
	reasons  []string
	last     int // index of the reason found last
}

var errTooManyReasons = errors.New("more distinct rejection reasons than a verdicts record holds")

// answer judges the nodes of the placement record in with p, finding the
// nodes held in held, and appends the verdicts record to dst: the logic of
// the filter export. An error comes with the code the export fails with
// (returned, not found by comparing errors: under TinyGo comparing
// interfaces links in reflection, a third of a small module).
func (c *call) answer(p *Policy, held *nodes.Store, in, dst []byte) ([]byte, abi.ErrCode, error) {
	pl, err := abi.ReadPlacement(in)
	if err != nil {
		return dst, abi.ErrDecode, err
	}
	pod, err := pl.Pod()
	if err != nil {
		return dst, abi.ErrDecode, err
	}
	n := pl.Len()
	if cap(c.verdicts) < n {
		c.verdicts = make([]uint32, n)
	}
	c.verdicts, c.reasons, c.last = c.verdicts[:n], c.reasons[:0], 0
	for i := range n {
		node, err := held.Node(pl, i)
		if err != nil {
			return dst, abi.ErrDecode, err
		}
		v := p.Judge(pod, node)
		if v.code == abi.FilterPass {
			c.verdicts[i] = abi.Verdict(abi.FilterPass, 0)
			continue
		}
		j, ok := c.reason(v.reason)
		if !ok {
			return dst, abi.ErrPolicy, errTooManyReasons
		}
		c.verdicts[i] = abi.Verdict(v.code, j)
	}
	return abi.AppendVerdicts(dst, c.verdicts, c.reasons), 0, nil
}

// reason returns the index of r among the call's reasons, adding it if it
// is new; false when a record cannot hold another. Consecutive nodes are
// often rejected for the same reason, so the last one found is tried first.
func (c *call) reason(r string) (int, bool) {
	if c.last < len(c.reasons) && c.reasons[c.last] == r {
		return c.last, true
	}
	for j, s := range c.reasons {
		if s == r {
			c.last = j
			return j, true
		}
	}
	if len(c.reasons) == abi.MaxReasons {
		return 0, false
	}
	c.reasons = append(c.reasons, r)
	c.last = len(c.reasons) - 1
	return c.last, true
}
