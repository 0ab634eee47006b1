package score

import (
	"encoding/binary"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/internal/nodes"
)

func setNormalized(v bool) { nodes.SetScoreNormalized(v) }

// answer scores the nodes of the placement record in with p, finding the
// nodes held in held, and appends the scores (one little-endian i64 per
// node, abi.AppendScores's layout) to dst: the logic of the score export.
// It allocates nothing once dst has grown to the largest batch.
func answer(p *Policy, held *nodes.Store, in, dst []byte) ([]byte, error) {
	pl, err := abi.ReadPlacement(in)
	if err != nil {
		return dst, err
	}
	pod, err := pl.Pod()
	if err != nil {
		return dst, err
	}
	for i := range pl.Len() {
		node, err := held.Node(pl, i)
		if err != nil {
			return dst, err
		}
		dst = binary.LittleEndian.AppendUint64(dst, uint64(p.Score(pod, node)))
	}
	return dst, nil
}
