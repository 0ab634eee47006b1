package cycle

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBindersNeverQueue: bindings in progress together each have a
// goroutine; none waits for another to finish.
func TestBindersNeverQueue(t *testing.T) {
	b := newBinders()
	const n = 50
	var entered sync.WaitGroup
	entered.Add(n)
	all := make(chan struct{})
	go func() { entered.Wait(); close(all) }()
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		b.Go(func() {
			defer done.Done()
			entered.Done()
			<-all // returns only once all n are running
		})
	}
	select {
	case <-all:
	case <-time.After(time.Minute):
		t.Fatal("the bindings did not all run at once: one waited for another")
	}
	done.Wait()
	if got := b.started.Load(); got != n {
		t.Errorf("%d goroutines started for %d bindings in progress at once, want %d", got, n, n)
	}
}

// TestBindersReuse: one binding after another runs on the goroutine the
// previous one left idle, not on a new one each time.
func TestBindersReuse(t *testing.T) {
	b := newBinders()
	const n = 100
	for range n {
		ran := make(chan struct{})
		b.Go(func() { close(ran) })
		<-ran
		for b.idle.Load() == 0 {
			runtime.Gosched()
		}
	}
	// A goroutine counted idle may not be in its select yet when Go sends,
	// so an odd binding may start one; never one per binding.
	if got := b.started.Load(); got > n/10 {
		t.Errorf("%d goroutines started for %d bindings one after another, want them reused", got, n)
	}
	b.stop()
	deadline := time.Now().Add(time.Minute)
	for b.idle.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still idle after stop", b.idle.Load())
		}
		runtime.Gosched()
	}
}
