package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/policy"
)

// TestHammer runs producers, consumers, an event source and a policy
// swapper against one queue under -race. The clock is frozen, so a pod that
// fails backs off forever and leaves backoffQ only through a Pop on an empty
// activeQ: a lost wakeup (kubernetes PR #139884) would leave the consumers
// asleep with work in backoffQ and the test would time out. End state: every
// pod popped exactly `attempts` times, nothing queued, nothing in flight.
func TestHammer(t *testing.T) {
	const (
		producers   = 4
		consumers   = 4
		perProducer = 150
		attempts    = 3
		total       = producers * perProducer
	)
	e := newEnv(t, WithQueueingHint(fitHint()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var (
		mu     sync.Mutex
		popped = map[types.UID]int{}
		done   atomic.Int64
		wg     sync.WaitGroup
		bg     sync.WaitGroup
	)
	for w := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				e.q.Add(makePod("p-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)).priority(int32(i % 7)).obj())
			}
		}()
	}
	errs := make(chan error, consumers)
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				en, err := e.q.Pop(ctx)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				p := en.(*Pod)
				mu.Lock()
				popped[p.uid]++
				n := popped[p.uid]
				mu.Unlock()
				if n < attempts {
					if err := e.q.AddUnschedulableIfNotPresent(p, rejectedBy(fit)); err != nil {
						errs <- err
						return
					}
					continue
				}
				e.q.Done(p.uid)
				if done.Add(1) == total {
					e.q.Close()
				}
			}
		}()
	}
	// Events: "fit-" queues every failed pod (from the pool, or replayed
	// when it comes back); "small" skips it.
	stop := make(chan struct{})
	bg.Add(2)
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := "small"
			if i%2 == 0 {
				name = "fit-" + strconv.Itoa(i)
			}
			e.q.MoveOnEvent(nodeAdd(makeNode(name, 4000)))
			_ = e.q.Stats()
		}
	}()
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				e.q.SetSort(fifo{})
			} else {
				e.q.SetSort(policy.PrioritySort{})
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()

	wg.Wait()
	close(stop)
	bg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if ctx.Err() != nil {
		t.Fatalf("timed out with %d of %d pods done: %+v", done.Load(), total, e.q.Stats())
	}
	want := map[types.UID]int{}
	for w := range producers {
		for i := range perProducer {
			want[types.UID("uid-p-"+strconv.Itoa(w)+"-"+strconv.Itoa(i))] = attempts
		}
	}
	if diff := cmp.Diff(want, popped); diff != "" {
		t.Errorf("pops per pod (-want, +got):\n%s", diff)
	}
	if s := e.q.Stats(); s != (Stats{}) {
		t.Errorf("stats %+v, want all zero", s)
	}
	if e.rec.incomingOf(QueueActive, EventPopFromBackoffQ) == 0 {
		t.Error("no pod was popped from backoffQ: the test did not exercise the wakeup")
	}
	e.idle(t)
}
