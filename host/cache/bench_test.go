package cache

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
)

// BenchmarkUpdateSnapshot measures a cycle's snapshot update on a 5000-node
// cluster (10 pods a node) where one node changed since the last cycle (a
// node status update): the cost should be that of one node, not 5000.
func BenchmarkUpdateSnapshot(b *testing.B) {
	const numNodes, podsPerNode = 5000, 10
	c := New(WithLogger(logr.Discard()))
	nodes := make([]string, numNodes)
	for i := range numNodes {
		nodes[i] = fmt.Sprintf("node-%04d", i)
		node := makeNode(nodes[i], res("cpu", "32", "memory", "128Gi", "pods", "110"))
		c.AddNode(node)
		for j := range podsPerNode {
			p := makePod(fmt.Sprintf("p-%d-%d", i, j)).node(nodes[i]).
				container(res("cpu", "500m", "memory", "1Gi")).obj()
			if err := c.AddPod(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	// New node objects, as the informer delivers on a status update.
	updated := make([]*v1.Node, numNodes)
	for i := range updated {
		updated[i] = makeNode(nodes[i], res("cpu", "32", "memory", "128Gi", "pods", "110"))
	}
	s := NewSnapshot()
	if err := c.UpdateSnapshot(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.UpdateNode(nil, updated[i%numNodes])
		if err := c.UpdateSnapshot(s); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if s.NumNodes() != numNodes {
		b.Fatalf("snapshot has %d nodes", s.NumNodes())
	}
}
