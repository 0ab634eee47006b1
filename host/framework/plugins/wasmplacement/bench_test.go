package wasmplacement_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/abi"
	gpupack "github.com/wasmsched/wasmsched/guest-sdk/examples/gpupack/logic"
	nodepool "github.com/wasmsched/wasmsched/guest-sdk/examples/nodepool/logic"
	"github.com/wasmsched/wasmsched/guest-sdk/native"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	intree "github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/policy"
	"github.com/wasmsched/wasmsched/host/policy/wasmslot"
	"github.com/wasmsched/wasmsched/host/wasm"
)

// BenchmarkPlacement is one pod's scheduling cycle through the default
// profile (PreFilter, the search with upstream's adaptive share of nodes,
// Score) on a cluster of n nodes with GPUs, a tenth of them in pool "gpu",
// after which the pod is assumed on the best node (so the next pod sees one
// node changed, as in a real run). The placement slots hold:
//
//   - none: empty (the plugins cost nothing);
//   - native: guest-sdk/examples nodepool (filter) and gpupack (score)
//     compiled into the host (the native twins, module: native);
//   - wasm: the same examples as Wasm modules, through the sandbox.
//
// wasm/native is the ABI's cost, wasm/none the modules' whole cost:
//
//	go test ./host/framework/plugins/wasmplacement -run '^$' -bench Placement -count 6 | benchstat -col /slots -
func BenchmarkPlacement(b *testing.B) {
	for _, n := range []int{500, 5000} {
		for _, slots := range []string{"none", "native", "wasm"} {
			b.Run(fmt.Sprintf("nodes=%d/slots=%s", n, slots), func(b *testing.B) {
				pl := &policy.Placement{}
				switch slots {
				case "native":
					pl.SetFilter(native.Filter(nodepool.Filter, nodepool.Options...))
					pl.SetScore(native.Score(gpupack.Score, gpupack.Options...))
				case "wasm":
					pl.SetFilter(loadSlot(b, "nodepool", abi.SlotFilter).(policy.Filter))
					pl.SetScore(loadSlot(b, "gpupack", abi.SlotScore).(policy.Score))
				}
				benchCycles(b, n, pl)
			})
		}
	}
}

// loadSlot loads guest-sdk/examples/<name>/<name>.wasm into slot.
func loadSlot(b *testing.B, name string, slot abi.Slot) any {
	b.Helper()
	ctx := context.Background()
	bin, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "guest-sdk", "examples", name, name+".wasm"))
	if err != nil {
		b.Fatalf("%v (make policies builds it)", err)
	}
	rt, err := wasm.NewRuntime(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(ctx) })
	m, err := rt.Load(ctx, name, bin, wasm.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	a, err := wasmslot.New(m, slot, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func benchCycles(b *testing.B, n int, pl *policy.Placement) {
	prof, err := intree.InTree().Default(framework.NewHandle(framework.HandleOptions{}).WithPlacement(pl))
	if err != nil {
		b.Fatal(err)
	}
	c := cache.New()
	for i := range n {
		nb := ft.MakeNode(fmt.Sprintf("node-%d", i), "cpu", "64", "memory", "256Gi", "nvidia.com/gpu", "8", "pods", "110").
			Label("zone", fmt.Sprintf("zone-%d", i%3))
		if i%10 == 0 {
			nb.Label("wasmsched.io/pool", "gpu")
		}
		c.AddNode(nb.N)
	}
	snap := cache.NewSnapshot()
	c.UpdateSnapshot(snap)
	want := int(framework.NumFeasibleNodesToFind(0, int32(n)))
	var diag framework.Diagnosis
	var scores []int64
	start, i := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		p := ft.MakePod().Req("cpu", "100m", "memory", "128Mi", "nvidia.com/gpu", "1").P
		p.Name, p.UID = fmt.Sprintf("p-%d", i), types.UID(fmt.Sprint("uid-", i))
		i++
		pi := cache.NewPodInfo(p)
		ps, st := prof.Prepare(pi, snap)
		if st != nil {
			b.Fatal(st)
		}
		diag.Reset()
		var feasible []*cache.NodeInfo
		feasible, start = framework.FindFeasible(context.Background(), ps, snap.List(), start, want, 1, &diag)
		if len(feasible) == 0 {
			b.Fatalf("pod %d: no feasible node: %s", i, diag.Message(n))
		}
		scores, st = framework.Score(ps, feasible, scores)
		if st != nil {
			b.Fatal(st)
		}
		best := framework.SelectHost(feasible, scores, nil)
		p.Spec.NodeName = best.Name()
		if err := snap.Assume(cache.NewPodInfo(p)); err != nil {
			b.Fatal(err)
		}
	}
}
