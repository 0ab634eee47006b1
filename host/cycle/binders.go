package cycle

import (
	"sync/atomic"
	"time"
)

// binders runs the binding goroutines' work on goroutines kept between
// bindings. A binding's stack grows through client-go's HTTP/2 and protobuf
// calls, and a fresh goroutine per pod paid that growth on every binding
// (runtime.copystack, 2% of the process's CPU on plain pods through the
// apiserver). A binding never waits for another: with no goroutine idle,
// Go starts one, as upstream starts a goroutine per pod. A goroutine left
// idle for binderIdle exits, and every idle one once stop is called.
type binders struct {
	work    chan func() // unbuffered: a send succeeds only to an idle goroutine
	quit    chan struct{}
	started atomic.Int64
	idle    atomic.Int64
}

const binderIdle = time.Second

func newBinders() *binders { return &binders{work: make(chan func()), quit: make(chan struct{})} }

// Go runs f on an idle binding goroutine, or on a new one. A nil b starts
// a goroutine for f alone.
func (b *binders) Go(f func()) {
	if b == nil {
		go f()
		return
	}
	select {
	case b.work <- f:
	default:
		b.started.Add(1)
		go b.run(f)
	}
}

// stop ends the idle goroutines, and each busy one when its work is done.
// Go must not be called after.
func (b *binders) stop() { close(b.quit) }

func (b *binders) run(f func()) {
	t := time.NewTimer(binderIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(binderIdle)
		b.idle.Add(1)
		select {
		case f = <-b.work:
			b.idle.Add(-1)
		case <-t.C:
			b.idle.Add(-1)
			return
		case <-b.quit:
			b.idle.Add(-1)
			return
		}
	}
}
