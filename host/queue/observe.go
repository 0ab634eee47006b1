package queue

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
)

// Observer sees what leaves the queue: the entities popped, with a sample
// of those they were popped ahead of, and the pods whose attempt scheduled
// them. A shadow evaluation (host/policy/shadow) compares a candidate sort
// on real pops with it, and joins a candidate hint's Skip to the attempt it
// would have delayed. Calls are made with the queue's locks held: an
// Observer copies what it keeps (records change in place when a pod is
// popped), must be quick and must not call back into the queue.
type Observer interface {
	// Ahead is how many entities still in heap (QueueActive, QueueBackoff)
	// Popped wants to see with the next pop from it; 0: none.
	Ahead(heap string) int
	// Popped reports the record of an entity popped from heap (a group's
	// is its representative pod's) and the records of up to Ahead(heap)
	// entities still in that heap, which it was popped ahead of.
	Popped(heap string, popped abi.PodView, ahead []abi.PodView)
	// Attempting reports a pod handed out for an attempt.
	Attempting(uid types.UID)
	// Scheduled reports a pod whose attempt bound it (Queue.Scheduled).
	Scheduled(uid types.UID)
}

type noObserver struct{}

func (noObserver) Ahead(string) int                          { return 0 }
func (noObserver) Popped(string, abi.PodView, []abi.PodView) {}
func (noObserver) Attempting(types.UID)                      {}
func (noObserver) Scheduled(types.UID)                       {}

// SetObserver makes o the queue's Observer (nil: none).
func (q *Queue) SetObserver(o Observer) {
	if o == nil {
		o = noObserver{}
	}
	q.mu.Lock()
	q.amu.Lock()
	q.obs = o
	q.amu.Unlock()
	q.mu.Unlock()
}

// observePop tells the Observer about e, popped from h (heap names it).
// amu held.
func (q *Queue) observePop(heapName string, h *heap, e *entity) {
	n := min(q.obs.Ahead(heapName), h.len())
	if n <= 0 {
		q.obs.Popped(heapName, e.view, nil)
		return
	}
	ahead := q.scr.ahead[:0]
	// A spread of the heap's array, not its top: the pops ahead of which
	// this one matters are all those still waiting, and the array's order
	// is a random enough draw of them (a heap keeps no order across
	// subtrees).
	step := h.len() / n
	for i := range n {
		ahead = append(ahead, h.es[i*step].e.view)
	}
	q.obs.Popped(heapName, e.view, ahead)
	clear(ahead)
	q.scr.ahead = ahead[:0]
}

// EventLabel is an event's label in the metrics and in what the queue
// reports ("NodeAdd", "AssignedPodDelete", "NodeUpdateNodeLabel").
func EventLabel(res abi.EventResource, act abi.ActionType) string { return eventLabel(res, act) }
