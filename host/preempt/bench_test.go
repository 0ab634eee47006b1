package preempt

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// BenchmarkPod dry-runs a pod that must preempt on a full cluster of 1000
// nodes with 10 lower-priority pods each (upstream's candidate count stops
// the dry run after 100 nodes), on the deterministic path and with
// upstream's 16 workers.
func BenchmarkPod(b *testing.B) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 1000 {
		n := makeNode(fmt.Sprintf("node-%04d", i), "10")
		nodes = append(nodes, n)
		for j := range 10 {
			pods = append(pods, makePod(fmt.Sprintf("v-%d-%d", i, j)).node(n.Name).
				priority(int32(j)).cpu("1").started(time.Duration(j)*time.Minute).obj())
		}
	}
	snap := snapshot(nodes, pods...)
	preemptor := makePod("p").priority(highPriority).cpu("3").obj()
	for _, par := range []int{1, 2, 4, 16} {
		b.Run(fmt.Sprintf("parallelism=%d", par), func(b *testing.B) {
			in := Input{Plugins: testProfile(), Snapshot: snap, Diagnosis: diagnoseB(b, preemptor, snap), Parallelism: par}
			b.ReportAllocs()
			for b.Loop() {
				if _, found, err := Pod(context.Background(), preemptor, in); err != nil || !found {
					b.Fatalf("Pod = found %v, %v", found, err)
				}
			}
		})
	}
}
