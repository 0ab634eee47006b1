package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
)

// recordingObserver keeps what the queue told it, as names.
type recordingObserver struct {
	ahead     int
	pops      []string // heap:popped<-ahead,ahead
	attempts  []types.UID
	scheduled []types.UID
}

func (o *recordingObserver) Ahead(string) int { return o.ahead }
func (o *recordingObserver) Popped(heap string, p abi.PodView, ahead []abi.PodView) {
	s := heap + ":" + p.Name() + "<-"
	for _, a := range ahead {
		s += a.Name() + ","
	}
	o.pops = append(o.pops, s)
}
func (o *recordingObserver) Attempting(uid types.UID) { o.attempts = append(o.attempts, uid) }
func (o *recordingObserver) Scheduled(uid types.UID)  { o.scheduled = append(o.scheduled, uid) }

// TestObserver: every pop reports the popped entity with up to Ahead of
// those still in its heap, before the pod's attempt count moves; every pod
// handed out is Attempting, and Scheduled reports the bound ones, not the
// ones handed back otherwise.
func TestObserver(t *testing.T) {
	e := newEnv(t)
	o := &recordingObserver{ahead: 2}
	e.q.SetObserver(o)
	for _, p := range []string{"a", "b", "c"} {
		e.q.Add(makePod(p).priority(int32(len(p))).obj())
		e.clk.Step(time.Millisecond)
	}
	first := e.popPod(t)
	if first.view.Attempts() != 1 {
		t.Errorf("the popped record's attempts %d, want 1", first.view.Attempts())
	}
	second := e.popPod(t)
	o.ahead = 0
	third := e.popPod(t)
	want := []string{"active:a<-b,c,", "active:b<-c,", "active:c<-"}
	if diff := cmp.Diff(want, o.pops); diff != "" {
		t.Errorf("pops (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]types.UID{"uid-a", "uid-b", "uid-c"}, o.attempts); diff != "" {
		t.Errorf("attempts (-want, +got):\n%s", diff)
	}
	e.q.Scheduled(first.uid)
	e.q.Done(second.uid)
	e.q.Scheduled(third.uid)
	e.q.Scheduled(third.uid) // no longer in flight: nothing
	if diff := cmp.Diff([]types.UID{"uid-a", "uid-c"}, o.scheduled); diff != "" {
		t.Errorf("scheduled (-want, +got):\n%s", diff)
	}
	e.q.SetObserver(nil)
	e.q.Add(makePod("d").obj())
	e.popPod(t)
	if len(o.pops) != 3 {
		t.Errorf("a removed observer saw a pop: %v", o.pops)
	}
}
