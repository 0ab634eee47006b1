package queue

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/wasmsched/wasmsched/abi"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/podview"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

const benchQueued = 10000

// benchRecords returns n encoded pods that look like real ones (namespace,
// name, uid, a few labels and requests), with priorities spread over a few
// classes.
func benchRecords(n int) [][]byte {
	recs := make([][]byte, n)
	for i := range recs {
		p := abi.Pod{
			UID:        "0b6f3c2e-5c1d-4f7a-9e3b-" + strconv.Itoa(100000000000+i),
			Namespace:  "team-" + strconv.Itoa(i%17),
			Name:       "job-" + strconv.Itoa(i),
			Priority:   int32(i%5) * 1000,
			QueuedTime: int64(i),
			Labels:     []abi.KV{{Key: "app", Value: "bench"}, {Key: "tier", Value: strconv.Itoa(i % 3)}},
			Requests:   []abi.Quantity{{Name: "cpu", Value: 100}, {Name: "memory", Value: 128 << 20}, {Name: "pods", Value: 1}},
		}
		recs[i] = abi.AppendPod(nil, &p)
	}
	return recs
}

// benchActiveQueue measures one Pop and one Add on activeQ's heap of 10k
// pods. The popped pod is re-added as a pod that failed its attempt would
// be: its queue state changes (in place), so a keyed heap computes its key
// again.
func benchActiveQueue(b *testing.B, s policy.Sort) {
	h := newHeap(s, nil)
	for _, rec := range benchRecords(benchQueued) {
		v, err := abi.ReadPod(rec)
		if err != nil {
			b.Fatal(err)
		}
		e := &entity{view: v}
		e.init()
		h.push(e)
	}
	now := int64(benchQueued)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e := h.pop()
		now++
		st := e.view.QueueState()
		st.QueuedTime, st.Attempts = now, st.Attempts+1
		if err := abi.SetPodQueueState(e.view.Bytes(), st); err != nil {
			b.Fatal(err)
		}
		h.push(e)
	}
}

// BenchmarkActiveQueue: 10k queued pods, one Pop + one Add per op, ordered by
// upstream's PrioritySort natively (native), by the same order compiled to
// Wasm and called per comparison (wasm-less), and by the Wasm module's sort
// keys compared natively (wasm-key).
func BenchmarkActiveQueue(b *testing.B) {
	b.Run("native", func(b *testing.B) { benchActiveQueue(b, policy.PrioritySort{}) })
	b.Run("wasm-less", func(b *testing.B) {
		s := loadSort(b, "prioritysort")
		benchActiveQueue(b, lessOnly{s})
	})
	b.Run("wasm-key", func(b *testing.B) {
		s := loadSort(b, "prioritysort")
		if !s.Keyed() {
			b.Fatal("prioritysort.wasm must compute sort keys")
		}
		benchActiveQueue(b, s)
	})
}

// BenchmarkMoveAllOnEvent: one node-add event against 10k unschedulable pods
// rejected by NodeResourcesFit, about half of which fit the new node. An op
// is the whole move: choosing the candidates, the one batched QueueingHint
// call, and moving the Queue'd pods (PreEnqueue, then activeQ, their
// backoff being over). Putting them back in the unschedulable pool for the
// next op is not timed. native runs the fithint example's logic in process
// (policytest.NativeQueueingHint); wasm runs the same logic compiled to
// fithint.wasm through the sandboxed runtime.
func BenchmarkMoveAllOnEvent(b *testing.B) {
	b.Run("native", func(b *testing.B) { benchMove(b, policytest.NativeQueueingHint(fithint.Plugin)) })
	b.Run("wasm", func(b *testing.B) {
		h, err := wasmslot.NewQueueingHint(loadModule(b, "fithint"), policy.AlwaysQueue{}, policytest.Strict(b))
		if err != nil {
			b.Fatal(err)
		}
		benchMove(b, h)
	})
}

func benchMove(b *testing.B, h policy.QueueingHint) {
	clk := testingclock.NewFakeClock(t0)
	q := New(WithClock(clk), WithQueueingHint(h))
	defer q.Close()
	ctx := context.Background()
	for i := range benchQueued {
		pod := makePod("job-"+strconv.Itoa(i)).priority(int32(i%5)*1000).label("app", "bench").obj()
		pod.Namespace = "team-" + strconv.Itoa(i%17)
		pod.UID = types.UID("0b6f3c2e-5c1d-4f7a-9e3b-" + strconv.Itoa(100000000000+i))
		pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(100+i%40*100), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(int64(1+i%8)<<30, resource.BinarySI),
		}
		q.Add(pod)
		en, err := q.Pop(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := q.AddUnschedulableIfNotPresent(en.(*Pod), rejectedBy(fithint.Name)); err != nil {
			b.Fatal(err)
		}
	}
	if s := q.Stats(); s.Unschedulable != benchQueued {
		b.Fatalf("stats %+v, want %d unschedulable", s, benchQueued)
	}
	clk.Step(time.Minute) // every backoff is over
	node := makeNode("node-new", 4000)
	node.Status.Allocatable[v1.ResourceMemory] = *resource.NewQuantity(8<<30, resource.BinarySI)
	ev := podview.NodeEvent(abi.ActionAdd, nil, node, v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(1500, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(2<<30, resource.BinarySI),
	}, 3)

	q.MoveOnEvent(ev)
	moved := q.Stats().Active
	if moved < benchQueued/4 || moved > benchQueued*3/4 {
		b.Fatalf("%d pods moved, want about half", moved)
	}
	q.unmoveForBench()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.MoveOnEvent(ev)
		b.StopTimer()
		q.unmoveForBench()
		b.StartTimer()
	}
	b.ReportMetric(float64(moved), "moved/op")
}

// unmoveForBench puts every pod of activeQ and backoffQ back in the
// unschedulable pool, as it was before the event.
func (q *Queue) unmoveForBench() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.amu.Lock()
	defer q.amu.Unlock()
	for _, h := range []*heap{q.active, q.backoff, q.errBackoff} {
		for h.len() > 0 {
			e := h.peek()
			prev := q.detachLocked(e)
			q.placeLocked(e, locUnschedulable, "", prev)
		}
	}
}

// loadModule loads guest-sdk/examples/<name>/<name>.wasm. A 10k-pod hint
// batch takes ~10 ms; on a busy machine the default 100 ms deadline can catch
// it, and a fallback would measure the native default, so the deadline is
// raised and any fallback fails the benchmark (policytest.Strict).
func loadModule(b *testing.B, name string) *wasm.Module {
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	return policytest.LoadModule(b, filepath.Join("..", "..", "guest-sdk", "examples", name, name+".wasm"), limits)
}

// loadSort loads an example queue-sort module.
func loadSort(b *testing.B, name string) *wasmslot.Sort {
	b.Helper()
	s, err := wasmslot.NewSort(loadModule(b, name), abi.SlotQueueSort, policy.PrioritySort{}, policytest.Strict(b))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSwapSort is a hot swap of the queue-sort slot with 10k pods in
// activeQ: wasmslot.Set.Load compiles and validates the new module, smoke-tests
// it, and installs it with Queue.SetSort, which computes the 10k pods' keys
// with the new module and re-sorts the heap before the old module is closed.
// Ops alternate between the prioritysort and fifosort examples, so each one
// compiles (a closed module's compiled code is dropped). The goal is
// under 50 ms.
func BenchmarkSwapSort(b *testing.B) {
	q := New(WithClock(testingclock.NewFakeClock(t0)))
	b.Cleanup(q.Close)
	for i := range benchQueued {
		q.Add(makePod("p" + strconv.Itoa(i)).priority(int32(i % 5)).obj())
	}
	if s := q.Stats(); s.Active != benchQueued {
		b.Fatalf("%d pods in activeQ, want %d", s.Active, benchQueued)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	set := wasmslot.NewSet(rt, limits, policytest.Strict(b), policy.Installer{Sort: q.SetSort})
	b.Cleanup(func() { _ = set.Close(ctx) })
	var mods [2][]byte
	for i, name := range []string{"prioritysort", "fifosort"} {
		if mods[i], err = os.ReadFile(filepath.Join("..", "..", "guest-sdk", "examples", name, name+".wasm")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := set.Load(ctx, abi.SlotQueueSort, strconv.Itoa(i), mods[i%2], ""); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
