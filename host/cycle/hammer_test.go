package cycle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/queue"
)

// TestHammer schedules pods added by several goroutines while bindings fail
// at random (server errors, and pods bound by someone else), then checks
// that no pod was lost or bound twice: when the scheduler stops half-way,
// every pod is bound or still queued; when it finishes, every pod is bound
// exactly once and the queue is empty. Run it with -race.
func TestHammer(t *testing.T) {
	const (
		adders   = 4
		perAdder = 60
		total    = adders * perAdder
	)
	// No backoff, so that a pod whose binding failed is retried at once.
	e := newEnvWithQueue(t, []queue.Option{queue.WithBackoff(0, 0)}, cycle.WithParallelism(2))
	for i := range 8 {
		e.addNodes(makeNode(fmt.Sprintf("n%d", i), "cpu", "100").obj())
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	elsewhere := map[string]bool{}
	e.api.hook = func(a *fakeAPI, pod *v1.Pod, _ string) error {
		switch r := rnd.IntN(100); {
		case r < 30:
			return apierrors.NewInternalError(errors.New("etcd is down"))
		case r < 35:
			elsewhere[key(pod.Namespace, pod.Name)] = true
			a.bindElsewhereLocked(pod.Namespace, pod.Name, "elsewhere")
		}
		return nil
	}

	run := func(ctx context.Context) (wait func()) {
		done := make(chan struct{})
		go func() { defer close(done); e.s.Run(ctx) }()
		return func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after its context ended")
			}
		}
	}

	// Phase 1: adders race the scheduler; stop it once half the pods are bound.
	ctx, cancel := context.WithCancel(context.Background())
	stopped := run(ctx)
	var wg sync.WaitGroup
	uids := make([]types.UID, 0, total)
	var uidsMu sync.Mutex
	for a := range adders {
		wg.Go(func() {
			for i := range perAdder {
				p := makePod(fmt.Sprintf("a%d-p%02d", a, i)).req("cpu", "100m").obj()
				uidsMu.Lock()
				uids = append(uids, p.UID)
				uidsMu.Unlock()
				e.addPods(p)
			}
		})
	}
	wg.Wait()
	waitFor(t, "half the pods bound", func() bool { return len(e.api.boundTo()) >= total/2 })
	cancel()
	stopped()

	bound := e.api.boundTo()
	for _, uid := range uids {
		name := "default/" + string(uid)[len("uid-"):]
		_, isBound := bound[name]
		_, queued := e.q.PodState(uid)
		if isBound == queued {
			t.Errorf("%s: bound %v, queued %v; want exactly one", name, isBound, queued)
		}
	}
	if st := e.q.Stats(); st.InFlightPods != 0 || len(bound)+st.Active+st.Backoff+st.Unschedulable != total {
		t.Errorf("after stopping: %d bound, queue %+v; want %d in all, none in flight", len(bound), st, total)
	}

	// Phase 2: run to the end.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	stopped = run(ctx)
	waitFor(t, "every pod bound", func() bool { return len(e.api.boundTo()) == total })
	cancel()
	stopped()

	if e.api.doubleBinds != 0 {
		t.Errorf("%d binds of a pod already bound", e.api.doubleBinds)
	}
	succeeded := map[string]int{}
	for _, b := range e.api.bindCalls() {
		if b.Err == "" {
			succeeded[b.Pod]++
		}
	}
	for name := range e.api.boundTo() {
		want := 1
		if elsewhere[name] {
			want = 0
		}
		if succeeded[name] != want {
			t.Errorf("%s: %d successful binds, want %d", name, succeeded[name], want)
		}
	}
	if st := e.q.Stats(); st != (queue.Stats{}) {
		t.Errorf("queue stats at the end: %+v, want empty", st)
	}
	// Pods we bound stay assumed until the informer confirms them; pods
	// bound elsewhere were forgotten.
	if got, want := e.cache.PodCount(), total-len(elsewhere); got != want {
		t.Errorf("cache holds %d pods, want %d", got, want)
	}
}
