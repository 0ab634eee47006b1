package shadow_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/shadow"
)

// slowHint answers as AlwaysQueue after spinning for d: a shadow slower
// than the serving policy.
type slowHint struct{ d time.Duration }

func (slowHint) Registrations() []abi.Registration { return everything }
func (s slowHint) Hints(ev abi.EventView, pods []abi.PodView, out []abi.Hint) {
	for start := time.Now(); time.Since(start) < s.d; {
	}
	policy.AlwaysQueue{}.Hints(ev, pods, out)
}

// BenchmarkTee is one hint call of 8 pods through the serving policy:
// bare, teed without a shadow, and teed with a shadow evaluating every
// call (the copies and the hand-off; the shadow runs on its worker).
func BenchmarkTee(b *testing.B) {
	pods := make([]abi.PodView, 8)
	for i := range pods {
		pods[i] = pod("p", 0, int64(i), "NodeResourcesFit")
	}
	ev, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd}))
	if err != nil {
		b.Fatal(err)
	}
	out := make([]abi.Hint, len(pods))
	run := func(b *testing.B, h policy.QueueingHint) {
		b.ReportAllocs()
		for b.Loop() {
			h.Hints(ev, pods, out)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, policy.AlwaysQueue{}) })
	b.Run("teed", func(b *testing.B) { run(b, teeHint(shadow.New(), policy.AlwaysQueue{})) })
	b.Run("shadowed", func(b *testing.B) {
		e := shadow.New()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go e.Run(ctx)
		e.Installer().QueueingHint(policy.AlwaysQueue{})
		run(b, teeHint(e, policy.AlwaysQueue{}))
		st, _ := e.Stats(abi.SlotQueueingHint)
		b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
	})
}

// BenchmarkSlowShadow: a shadow about ten times slower than the time
// between the serving policy's calls falls behind: the backlog stays
// bounded, the rest is dropped and counted, and the heap after the run is
// what the backlog holds, however long the run. heap-KiB is the live heap
// growth over the run.
func BenchmarkSlowShadow(b *testing.B) {
	pods := []abi.PodView{pod("p", 0, 1, "NodeResourcesFit")}
	ev, err := abi.ReadEvent(abi.AppendEvent(nil, &abi.Event{Resource: abi.ResourceNode, Action: abi.ActionAdd}))
	if err != nil {
		b.Fatal(err)
	}
	e := shadow.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	e.Installer().QueueingHint(slowHint{20 * time.Microsecond})
	h := teeHint(e, policy.AlwaysQueue{})
	out := make([]abi.Hint, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		h.Hints(ev, pods, out)
		for start := time.Now(); time.Since(start) < 2*time.Microsecond; { // the serving side's pace
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st, _ := e.Stats(abi.SlotQueueingHint)
	b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
	b.ReportMetric((float64(after.HeapInuse)-float64(before.HeapInuse))/1024, "heap-KiB")
}
