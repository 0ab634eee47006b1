package abi

import "encoding/binary"

// PodQueueState is the part of a pod record that changes as the pod moves
// through the queue. It sits at fixed offsets, so the queue updates a cached
// record in place instead of encoding the pod again.
type PodQueueState struct {
	QueuedTime         int64
	InitialAttemptTime int64
	BackoffExpiry      int64
	Attempts           int32
	LastFailureError   bool
}

// SetPodQueueState overwrites the queue state of the pod record rec.
func SetPodQueueState(rec []byte, s PodQueueState) error {
	r, err := readRecord(rec, TagPod)
	if err != nil {
		return err
	}
	if r.fixed < podAttempts+4 {
		return &Error{Record: TagPod, Problem: "record too short for the queue state (older minor version)"}
	}
	binary.LittleEndian.PutUint64(rec[podQueued:], uint64(s.QueuedTime))
	binary.LittleEndian.PutUint64(rec[podInitialAttempt:], uint64(s.InitialAttemptTime))
	binary.LittleEndian.PutUint64(rec[podBackoffExpiry:], uint64(s.BackoffExpiry))
	binary.LittleEndian.PutUint32(rec[podAttempts:], uint32(s.Attempts))
	flags := binary.LittleEndian.Uint32(rec[podFlags:]) &^ podLastFailureError
	binary.LittleEndian.PutUint32(rec[podFlags:], flags|boolBit(s.LastFailureError, podLastFailureError))
	return nil
}

// SetQueueState sets the queue-state fields of p, the struct form of
// SetPodQueueState.
func (p *Pod) SetQueueState(s PodQueueState) {
	p.QueuedTime, p.InitialAttemptTime, p.BackoffExpiry = s.QueuedTime, s.InitialAttemptTime, s.BackoffExpiry
	p.Attempts, p.LastFailureError = s.Attempts, s.LastFailureError
}

// QueueState reads the queue state of a pod record.
func (p PodView) QueueState() PodQueueState {
	return PodQueueState{
		QueuedTime: p.QueuedTime(), InitialAttemptTime: p.InitialAttemptTime(),
		BackoffExpiry: p.BackoffExpiry(), Attempts: p.Attempts(), LastFailureError: p.LastFailureError(),
	}
}
