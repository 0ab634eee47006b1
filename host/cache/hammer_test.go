package cache

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"
)

// TestHammer runs informer handlers, assume/forget cycles and snapshot
// readers against one cache at once (run it with -race), then checks a
// final state that does not depend on the interleaving.
func TestHammer(t *testing.T) {
	const (
		numNodes      = 8
		podWorkers    = 6
		podsPerWorker = 120
		readers       = 2
	)
	nodeName := func(i int) string { return fmt.Sprintf("n%d", i%numNodes) }
	fc := testingclock.NewFakeClock(t0)
	c := New(WithClock(fc), WithLogger(logr.Discard()), WithAssumedTTL(time.Hour))
	for i := range numNodes {
		c.AddNode(makeNode(nodeName(i), res("cpu", "100", "pods", "110")))
	}

	// The fate of pod i of worker w, and the node it ends on ("" if none).
	type fate int
	const (
		forgotten fate = iota
		confirmed
		confirmedElsewhere
		deleted
		updated
		numFates
	)
	final := func(w, i int) (node string, cpu string) {
		switch fate(i % int(numFates)) {
		case confirmed:
			return nodeName(w + i), "1"
		case confirmedElsewhere:
			return nodeName(w + i + 1), "1"
		case updated:
			return nodeName(w + i), "2"
		}
		return "", ""
	}

	var writers, readersWG sync.WaitGroup
	var stop atomic.Bool
	errs := make(chan error, 100)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}

	// Node churn: status updates of every node, and spare nodes that come
	// and go.
	writers.Add(2)
	go func() {
		defer writers.Done()
		for round := range 50 {
			for i := range numNodes {
				c.UpdateNode(nil, makeNode(nodeName(i), res("cpu", "100", "pods", "110")))
			}
			spare := makeNode(fmt.Sprintf("spare-%d", round), res("cpu", "1"))
			c.AddNode(spare)
			if err := c.RemoveNode(spare); err != nil {
				fail(err)
			}
		}
	}()
	go func() {
		defer writers.Done()
		for range 200 {
			c.Stats()
			c.NodeCount()
			c.PodCount()
		}
	}()

	for w := range podWorkers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range podsPerWorker {
				name := fmt.Sprintf("w%d-p%d", w, i)
				pod := podOn(name, nodeName(w+i), "1")
				if err := c.AssumePod(pod); err != nil {
					fail(err)
					continue
				}
				if !c.IsAssumed(pod.UID) {
					fail(fmt.Errorf("%s not assumed", name))
				}
				if err := c.FinishBinding(pod); err != nil {
					fail(err)
				}
				var err error
				switch fate(i % int(numFates)) {
				case forgotten:
					err = c.ForgetPod(pod)
				case confirmed:
					err = c.AddPod(pod)
				case confirmedElsewhere:
					err = c.AddPod(podOn(name, nodeName(w+i+1), "1"))
				case deleted:
					if err = c.AddPod(pod); err == nil {
						err = c.RemovePod(pod)
					}
				case updated:
					if err = c.AddPod(pod); err == nil {
						err = c.UpdatePod(pod, podOn(name, nodeName(w+i), "2"))
					}
				}
				if err != nil {
					fail(fmt.Errorf("%s: %w", name, err))
				}
			}
		}()
	}

	snapshots := make([]*Snapshot, readers)
	for r := range readers {
		snapshots[r] = NewSnapshot()
		readersWG.Add(1)
		go func() {
			defer readersWG.Done()
			s := snapshots[r]
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for !stop.Load() {
				if err := c.UpdateSnapshot(s); err != nil {
					fail(err)
					return
				}
				for _, n := range s.List() {
					if err := checkSums(n); err != nil {
						fail(err)
						return
					}
				}
				// Place a probe pod; the shared node info must not change.
				if s.NumNodes() == 0 {
					continue
				}
				shared := s.List()[rng.IntN(s.NumNodes())]
				gen, pods := shared.Generation(), len(shared.Pods())
				probe := NewPodInfo(podOn(fmt.Sprintf("probe-%d", r), shared.Name(), "1"))
				if err := s.Assume(probe); err != nil {
					fail(err)
					return
				}
				if shared.Generation() != gen || len(shared.Pods()) != pods {
					fail(fmt.Errorf("Snapshot.Assume changed a shared node info"))
					return
				}
				if err := checkSums(s.Get(shared.Name())); err != nil {
					fail(err)
					return
				}
				if rng.IntN(2) == 0 {
					s.Forget(probe.Pod.UID, shared.Name())
				} // else UpdateSnapshot reverts it
			}
		}()
	}

	writers.Wait()
	stop.Store(true)
	readersWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// The final state.
	want := map[string]map[string]int64{} // node -> pod uid -> milli cpu
	for i := range numNodes {
		want[nodeName(i)] = map[string]int64{}
	}
	wantPods := 0
	for w := range podWorkers {
		for i := range podsPerWorker {
			if node, cpu := final(w, i); node != "" {
				want[node][fmt.Sprintf("uid-w%d-p%d", w, i)] = NewResource(res("cpu", cpu)).MilliCPU
				wantPods++
			}
		}
	}
	if diff := cmp.Diff(Stats{Nodes: numNodes, Pods: wantPods}, c.Stats()); diff != "" {
		t.Errorf("Stats (-want, +got):\n%s", diff)
	}
	if got := c.NodeCount(); got != numNodes {
		t.Errorf("NodeCount = %d, want %d", got, numNodes)
	}
	fresh := NewSnapshot()
	mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(fresh))
	for r, s := range append(snapshots, fresh) {
		mustNil(t, "UpdateSnapshot", c.UpdateSnapshot(s))
		got := map[string]map[string]int64{}
		for _, n := range s.List() {
			got[n.Name()] = map[string]int64{}
			for _, pi := range n.Pods() {
				got[n.Name()][string(pi.Pod.UID)] = pi.Requests.MilliCPU
			}
			if err := checkSums(n); err != nil {
				t.Error(err)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("snapshot %d: pods per node (-want, +got):\n%s", r, diff)
		}
	}
}

// checkSums checks that a node info's sums are those of its pods.
func checkSums(n *NodeInfo) error {
	var req, nz Resource
	ports := map[HostPort]int{}
	for _, pi := range n.Pods() {
		req.Add(pi.Requests)
		nz.Add(pi.NonZero)
		for _, p := range pi.HostPorts {
			ports[p]++
		}
	}
	if len(ports) == 0 {
		ports = nil
	}
	if diff := cmp.Diff(sums{Requested: req, NonZero: nz, Ports: ports},
		sums{Requested: n.Requested(), NonZero: n.NonZeroRequested(), Ports: n.ports}); diff != "" {
		return fmt.Errorf("node %s: sums are not its pods' (-want, +got):\n%s", n.Name(), diff)
	}
	if n.Node() == nil {
		return fmt.Errorf("snapshot lists a node info without a node")
	}
	return nil
}
