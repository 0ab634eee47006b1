package cycle_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/cycle"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/queue"
)

const benchNodes = 5000

// benchScheduler is a scheduler over benchNodes nodes (32 cpu each, or as
// fill says) with a fake API and no recorder.
func benchScheduler(b *testing.B, nodeCPU string, fill func(c *cache.Cache, node string), opts ...cycle.Option) (*queue.Queue, *cycle.Scheduler, *cache.Cache) {
	b.Helper()
	c := cache.New()
	for i := range benchNodes {
		name := fmt.Sprintf("n%04d", i)
		c.AddNode(makeNode(name, "cpu", nodeCPU, "memory", "64Gi").obj())
		if fill != nil {
			fill(c, name)
		}
	}
	q := queue.New()
	b.Cleanup(q.Close)
	api := newFakeAPI()
	all := append([]cycle.Option{cycle.WithBuilt(framework.Built{Entries: defaultEntries(framework.Listers{})}), cycle.WithPluginMetricsSample(0),
		cycle.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), cycle.WithSeed(1)}, opts...)
	return q, cycle.New(q, c, api, &eventLog{}, all...), c
}

func popOne(b *testing.B, q *queue.Queue) queue.Entity {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := q.Pop(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkPodGroupAttempt is one pod-group cycle (8 members placed on 5000
// nodes, assumed and bound through a fake API): upstream reports about 4-6
// ms per pod-group attempt at 5000 nodes.
func BenchmarkPodGroupAttempt(b *testing.B) {
	q, s, _ := benchScheduler(b, "32", nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		name := fmt.Sprintf("g%d", i)
		q.AddPodGroup(makePodGroup(name, 8))
		for m := range 8 {
			q.Add(makePod(fmt.Sprintf("%s-m%d", name, m)).group(name).req("cpu", "1").obj())
		}
		e := popOne(b, q)
		if _, ok := e.(*queue.Group); !ok {
			b.Fatalf("popped %T, want a group", e)
		}
		b.StartTimer()
		s.ScheduleOne(ctx, e)
		s.WaitForBindings()
	}
}

// BenchmarkPreemption is one scheduling attempt of a high-priority pod on
// 5000 full nodes (4 cpu, four 1-cpu low-priority pods each): filtering
// fails everywhere, preemption dry-runs the candidates, picks a node and
// evicts one victim through the fake API. The nomination is withdrawn
// after each attempt so that every attempt does the same work.
func BenchmarkPreemption(b *testing.B) {
	nom := cycle.NewNominator()
	fill := func(c *cache.Cache, node string) {
		for k := range 4 {
			p := makePod(fmt.Sprintf("%s-low%d", node, k)).priority(0).req("cpu", "1").obj()
			p.Spec.NodeName = node
			if err := c.AddPod(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	q, s, _ := benchScheduler(b, "4", fill, cycle.WithNominator(nom),
		cycle.WithPreemption(cycle.Preemption{Order: policy.Importance{}}))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		p := makePod(fmt.Sprintf("high%d", i)).priority(1000).req("cpu", "1").obj()
		q.Add(p)
		e := popOne(b, q)
		b.StartTimer()
		s.ScheduleOne(ctx, e)
		s.WaitForBindings()
		b.StopTimer()
		if nom.NodeOf(p.UID) == "" {
			b.Fatal("the preemptor was not nominated")
		}
		nom.Remove(p.UID)
		q.Delete(p)
		b.StartTimer()
	}
}
