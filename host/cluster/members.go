package cluster

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/podview"
)

// Members counts the pods of each pod group that exist and are not
// finished, bound or not: the count a gang's quorum (minCount) is checked
// against. The queue reads it (queue.WithGroupMembers); the pod informer
// keeps it up to date.
type Members struct {
	mu     sync.Mutex
	groups map[groupKey]map[types.UID]struct{}
}

type groupKey struct{ namespace, name string }

// NewMembers returns an empty count.
func NewMembers() *Members { return &Members{groups: map[groupKey]map[types.UID]struct{}{}} }

// Count is the number of live pods of the group; ok is false when none is
// known.
func (m *Members) Count(namespace, name string) (int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.groups[groupKey{namespace, name}]
	return int32(len(s)), ok
}

// set records pod's membership as it is now (nil: the pod is gone), given
// what it was before (old, nil if unknown). It reports whether a count
// changed.
func (m *Members) set(old, pod *v1.Pod) bool {
	var from, to groupKey
	if old != nil && live(old) {
		from = keyOf(old)
	}
	if pod != nil && live(pod) {
		to = keyOf(pod)
	}
	if from == to {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if from.name != "" {
		uid := old.UID
		if s := m.groups[from]; s != nil {
			delete(s, uid)
			if len(s) == 0 {
				delete(m.groups, from)
			}
		}
	}
	if to.name != "" {
		s := m.groups[to]
		if s == nil {
			s = map[types.UID]struct{}{}
			m.groups[to] = s
		}
		s[pod.UID] = struct{}{}
	}
	return true
}

func keyOf(pod *v1.Pod) groupKey {
	name := podview.GroupName(pod)
	if name == "" {
		return groupKey{}
	}
	return groupKey{pod.Namespace, name}
}

// live: the pod counts towards its group (not finished, not being deleted).
func live(pod *v1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}
