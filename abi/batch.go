package abi

// HintBatchLen is the size of the record AppendHintBatchViews appends, so the
// host can ask the guest for an input buffer of exactly that size and lay the
// batch out there directly.
func HintBatchLen(event []byte, pods []PodView) int {
	n := batchFixed + len(event) + len(pods)*nestedSize
	for _, p := range pods {
		n += len(p.Bytes())
	}
	return n
}

// AppendHintBatchViews is AppendHintBatch for pod views (the form the queue
// holds its pods in). Appending to dst[:0] of a buffer of HintBatchLen bytes
// does not allocate.
func AppendHintBatchViews(dst []byte, event []byte, pods []PodView) []byte {
	return appendHintBatch(dst, event, len(pods), func(i int) []byte { return pods[i].Bytes() })
}

// VictimBatchLen is the size of the record AppendVictimBatch appends.
func VictimBatchLen(preemptor []byte, victims []Victim) int {
	n := vbFixed + len(preemptor) + len(victims)*victimSize
	for i := range victims {
		n += len(victims[i].UID) + len(victims[i].Namespace) + len(victims[i].Name)
	}
	return n
}
