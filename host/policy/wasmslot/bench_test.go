package wasmslot_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	fithint "github.com/wasmsched/wasmsched/guest-sdk/examples/fithint/logic"
	holdlabel "github.com/wasmsched/wasmsched/guest-sdk/examples/holdlabel/logic"
	importance "github.com/wasmsched/wasmsched/guest-sdk/examples/importance/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// The benchmarks compare one policy run natively (its pure-Go logic called
// in-process on the same records) with the same policy compiled by TinyGo and
// called through the sandboxed runtime: the difference is the cost of the
// boundary.

// loadExample loads guest-sdk/examples/<name>/<name>.wasm into the sandbox,
// with testLimits' deadline that no call reaches: the tests that use it fail
// on any fallback, and the default 100 ms is wall-clock, which a call
// descheduled on a loaded machine (-race, every CPU busy) can overrun.
func loadExample(tb testing.TB, name string) *wasm.Module {
	return policytest.LoadModule(tb, filepath.Join("..", "..", "..", "guest-sdk", "examples", name, name+".wasm"), testLimits())
}

// loadBenchExample is loadExample with a 10 s deadline. A 10k-pod hint batch
// takes ~8 ms, but under the benchmark harness an occasional call has run past
// the default 100 ms (not reproduced outside it); a fallback would make the
// benchmark measure the native default, so benchmarks give the module room.
func loadBenchExample(tb testing.TB, name string) *wasm.Module {
	limits := wasm.DefaultLimits()
	limits.Deadline = 10 * time.Second
	return policytest.LoadModule(tb, filepath.Join("..", "..", "..", "guest-sdk", "examples", name, name+".wasm"), limits)
}

// strict fails the benchmark or test on any failure or fallback: a module
// that quietly fell back would measure the native default.
func strict(tb testing.TB) policy.Recorder { return policytest.Strict(tb) }

// hintPods are 10k pods rejected by NodeResourcesFit with a spread of cpu and
// memory requests, so that about half fit the node of hintEvent.
func hintPods(tb testing.TB) []abi.PodView {
	pods := make([]abi.PodView, 10000)
	for i := range pods {
		pods[i] = policytest.MakePod().
			UID("uid-"+strconv.Itoa(i)).Namespace("team-"+strconv.Itoa(i%17)).Name("job-"+strconv.Itoa(i)).
			Priority(int32(i%5)*1000).Label("app", "bench").
			Request("cpu", int64(100+i%40*100)).Request("memory", int64(1+i%8)<<30).
			UnschedulablePlugins(fithint.Name).View()
	}
	return pods
}

func hintEvent() abi.EventView {
	return policytest.NodeAdd(policytest.MakeNode().Name("node-new").Label("zone", "a").
		Allocatable("cpu", 4000).Allocatable("memory", 8<<30).Allocatable("pods", 110).
		Requested("cpu", 1500).Requested("memory", 2<<30).Requested("pods", 3).Obj())
}

// BenchmarkQueueingHint: one node-add event against 10k unschedulable pods.
func BenchmarkQueueingHint(b *testing.B) {
	pods, ev := hintPods(b), hintEvent()
	run := func(b *testing.B, q policy.QueueingHint) {
		out := make([]abi.Hint, len(pods))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			q.Hints(ev, pods, out)
		}
	}
	b.Run("native", func(b *testing.B) { run(b, policytest.NativeQueueingHint(fithint.Plugin)) })
	b.Run("wasm", func(b *testing.B) {
		q, err := wasmslot.NewQueueingHint(loadBenchExample(b, "fithint"), policy.AlwaysQueue{}, strict(b))
		if err != nil {
			b.Fatal(err)
		}
		run(b, q)
	})
}

// BenchmarkPreEnqueue: one pod per op, alternately held and admitted.
func BenchmarkPreEnqueue(b *testing.B) {
	pods := []abi.PodView{
		policytest.MakePod().Namespace("ns").Name("held").Label("example.wasmsched.io/hold", "yes").Request("cpu", 100).View(),
		policytest.MakePod().Namespace("ns").Name("free").Label("app", "web").Request("cpu", 100).View(),
	}
	run := func(b *testing.B, p policy.PreEnqueue) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p.PreEnqueue(pods[i&1])
			i++
		}
	}
	b.Run("native", func(b *testing.B) { run(b, policytest.NativePreEnqueue(holdlabel.PreEnqueue)) })
	b.Run("wasm", func(b *testing.B) {
		p, err := wasmslot.NewPreEnqueue(loadBenchExample(b, "holdlabel"), policy.Admit{}, strict(b))
		if err != nil {
			b.Fatal(err)
		}
		run(b, p)
	})
}

// victims are 1000 candidates: pods and groups over a few priorities.
func victims() []abi.Victim {
	vs := make([]abi.Victim, 1000)
	for i := range vs {
		v := policytest.MakeVictim().UID("uid-" + strconv.Itoa(i)).Namespace("ns").Name("v-" + strconv.Itoa(i)).
			Priority(int32(i%7) * 100).Started(time.Unix(int64(1000000-i*37%5000), 0))
		if i%10 == 0 {
			v = v.Group(int32(2 + i%9))
		}
		vs[i] = v.Obj()
	}
	return vs
}

// BenchmarkVictimSort: order 1000 victims by importance, and the 4 victims
// of one node, as a preemption dry run asks once per candidate node (up to
// 100 per attempt): there the call's fixed cost dominates.
func BenchmarkVictimSort(b *testing.B) {
	for _, n := range []int{1000, 4} {
		vs := victims()[:n]
		run := func(b *testing.B, o policy.VictimOrder) {
			order := make([]uint32, len(vs))
			b.ReportAllocs()
			for b.Loop() {
				o.Order(abi.PodView{}, vs, order)
			}
		}
		b.Run(fmt.Sprintf("victims=%d/native", n), func(b *testing.B) { run(b, policytest.NativeVictimOrder(importance.MoreImportant)) })
		b.Run(fmt.Sprintf("victims=%d/wasm", n), func(b *testing.B) {
			o, err := wasmslot.NewVictimOrder(loadBenchExample(b, "importance"), policy.Importance{}, strict(b))
			if err != nil {
				b.Fatal(err)
			}
			run(b, o)
		})
	}
}
