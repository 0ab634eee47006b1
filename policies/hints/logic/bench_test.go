package logic_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/guest-sdk/policytest"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
	"github.com/wasmsched/wasmsched/policies/hints/logic"
)

// BenchmarkHints decides one event for a batch of generated pending pods,
// natively and through hints.wasm; ns/op divided by the batch size is the
// cost per pod.
func BenchmarkHints(b *testing.B) {
	const batch = 1000
	g := newGen(7)
	pods := make([]abi.PodView, batch)
	for i := range pods {
		pods[i] = policytest.PodView(g.pending(i))
	}
	events := map[string]abi.EventView{
		"NodeAdd":    policytest.NodeAdd(g.node()),
		"NodeUpdate": policytest.NodeUpdate(g.node(), g.node(), abi.ActionUpdateNodeLabel|abi.ActionUpdateNodeTaint|abi.ActionUpdateNodeAllocatable),
		"PodDelete":  policytest.PodDelete(policytest.MakePod().Name("gone").Node("n1").Request("cpu", 100).HostPort("", 80, abi.ProtocolTCP).Obj()),
	}
	slots := map[string]policy.QueueingHint{
		"native": policytest.NativeQueueingHint(logic.Plugins...),
		"wasm":   loadHints(b),
	}
	out := make([]abi.Hint, batch)
	for _, impl := range []string{"native", "wasm"} {
		for _, name := range []string{"NodeAdd", "NodeUpdate", "PodDelete"} {
			b.Run(impl+"/"+name, func(b *testing.B) {
				q, ev := slots[impl], events[name]
				b.ReportAllocs()
				for b.Loop() {
					q.Hints(ev, pods, out)
				}
			})
		}
	}
}

func loadHints(b *testing.B) policy.QueueingHint {
	bin, err := os.ReadFile(wasmPath)
	if err != nil {
		b.Fatalf("%v (run make policies)", err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close(ctx) })
	m, err := rt.Load(ctx, "hints", bin, wasm.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	q, err := wasmslot.NewQueueingHint(m, policy.AlwaysQueue{}, strictRecorder{b})
	if err != nil {
		b.Fatal(err)
	}
	return q
}

// strictRecorder fails the benchmark on a failed call or a fallback, which
// would measure the native default instead of the module.
type strictRecorder struct{ tb testing.TB }

func (strictRecorder) Called(abi.Slot) {}
func (r strictRecorder) Failed(s abi.Slot, why string, err error) {
	r.tb.Fatalf("%s call failed (%s): %v", s, why, err)
}
func (r strictRecorder) FellBack(s abi.Slot, n int) {
	r.tb.Fatalf("%s fell back to native for %d decisions", s, n)
}
func (strictRecorder) Observe(abi.Slot, time.Duration) {}
func (strictRecorder) Swapped(abi.Slot, string)        {}
func (r strictRecorder) BreakerTripped(s abi.Slot) {
	r.tb.Fatalf("%s circuit breaker opened", s)
}
