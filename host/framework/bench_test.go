package framework

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// benchNodes is a 5000-node cluster: labelled, tainted (a taint the bench
// pods tolerate, and PreferNoSchedule on some), each node with a few pods,
// one of them holding a host port.
func benchNodes(n int) []*cache.NodeInfo {
	nodes := make([]*cache.NodeInfo, n)
	for i := range nodes {
		b := makeNode(fmt.Sprintf("node-%d", i), "cpu", "32", "memory", "128Gi", "example.com/gpu", "4", "pods", "110").
			label("zone", fmt.Sprintf("zone-%d", i%3)).label("pool", "general").
			taint("dedicated", "batch", v1.TaintEffectNoSchedule)
		if i%10 == 0 {
			b.taint("spot", "", v1.TaintEffectPreferNoSchedule)
		}
		b.with(makePod().req("cpu", "2", "memory", "4Gi").port("", v1.ProtocolTCP, 9100),
			makePod().req("cpu", "500m", "memory", "1Gi"), makePod().req())
		nodes[i] = b.info()
	}
	return nodes
}

// benchPod exercises every filter: nodeSelector, a toleration, a host port,
// cpu, memory and an extended resource.
func benchPod() *podBuilder {
	return makePod().selector("pool", "general").
		toleration("dedicated", v1.TolerationOpEqual, "batch", v1.TaintEffectNoSchedule).
		req("cpu", "1", "memory", "2Gi", "example.com/gpu", "1").port("", v1.ProtocolTCP, 8080)
}

func BenchmarkFilter(b *testing.B) {
	nodes := benchNodes(5000)
	for _, bc := range []struct {
		name string
		pod  *podBuilder
	}{
		{"nodeSelector", benchPod()},
		{"requiredAffinity", benchPod().required(labelTerm(expr("zone", v1.NodeSelectorOpIn, "zone-0", "zone-1", "zone-2")))},
		{"allRejected", benchPod().req("cpu", "64")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ps := bc.pod.state()
			b.ReportAllocs()
			for b.Loop() {
				for _, ni := range nodes {
					Filter(ps, ni)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
		})
	}
}

func BenchmarkFindFeasible(b *testing.B) {
	nodes := benchNodes(5000)
	ps := benchPod().state()
	for _, workers := range []int{1, 2} {
		for _, want := range []int{int(NumFeasibleNodesToFind(0, 5000)), 0} {
			b.Run(fmt.Sprintf("workers=%d/want=%d", workers, want), func(b *testing.B) {
				var d Diagnosis
				start := 0
				b.ReportAllocs()
				for b.Loop() {
					d.Reset()
					_, start = FindFeasible(context.Background(), ps, nodes, start, want, workers, &d)
				}
			})
		}
	}
}

func BenchmarkScore(b *testing.B) {
	nodes := benchNodes(500)
	for _, bc := range []struct {
		name string
		pod  *podBuilder
	}{
		{"resources", benchPod()},
		{"preferredAffinity", benchPod().preferred(10, labelTerm(expr("zone", v1.NodeSelectorOpIn, "zone-1")))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ps := bc.pod.state()
			out := make([]int64, len(nodes))
			b.ReportAllocs()
			for b.Loop() {
				out, _ = Score(ps, nodes, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
		})
	}
}

func BenchmarkPrepare(b *testing.B) {
	for _, bc := range []struct {
		name string
		pod  *podBuilder
	}{
		{"plain", makePod().req("cpu", "100m")},
		{"every filter", benchPod()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pi := bc.pod.info()
			b.ReportAllocs()
			for b.Loop() {
				if _, st := prepare(pi, nil); st != nil {
					b.Fatal(st)
				}
			}
		})
	}
}

// BenchmarkPodTopologySpread is a web replica spreading over zones (maxSkew
// 1) and hostnames (maxSkew 2) in a 5000-node cluster of 3 zones with 2 to 3
// replicas per node: PreFilter counting over the snapshot (Prepare), the
// filter per node, the state copy preemption's dry run makes, and the soft
// constraints' PreScore and Score over 500 feasible nodes.
func BenchmarkPodTopologySpread(b *testing.B) {
	nodes, pod := spreadBenchCluster(5000)
	snap := cache.NewSnapshot(nodes...)
	pi := pod.info()
	b.Run("Prepare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, st := prepare(pi, snap); st != nil {
				b.Fatal(st)
			}
		}
	})
	ps, st := prepare(pi, snap)
	if st != nil {
		b.Fatal(st)
	}
	b.Run("Filter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				Filter(ps, ni)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(nodes)), "ns/node")
	})
	b.Run("Clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ps.Clone()
		}
	})
	soft := spreadBenchPod(v1.ScheduleAnyway).info()
	feasible := nodes[:500]
	pl := newPodTopologySpread(Listers{})
	scores := make([]int64, len(feasible))
	b.Run("Score", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, st := pl.PreScore(soft, feasible, snap)
			if st != nil {
				b.Fatal(st)
			}
			s.Score(feasible, scores)
			s.(ScoreNormalizer).NormalizeScores(scores)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(feasible)), "ns/node")
	})
}

// BenchmarkInterPodAffinity runs a pod through Prepare (PreFilter), Filter
// on every node and Score on the feasible ones, on 500 nodes in 3 zones with
// 3 pods each: every 10th node holds a pod with required anti-affinity
// against app=db on its hostname, the nodes of zone-0 a pod app=cache. The
// pods: one without affinity (InterPodAffinity skips it, the baseline), one
// labelled app=db (refused by the existing anti-affinity on 50 nodes), and
// one with its own required anti-affinity (app=db on the hostname) and a
// preferred affinity (app=cache in the zone).
func BenchmarkInterPodAffinity(b *testing.B) {
	nodes := make([]*cache.NodeInfo, 500)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		nb := makeNode(name, "cpu", "32", "memory", "128Gi", "pods", "110").
			label(v1.LabelHostname, name).label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3))
		pods := []*podBuilder{makePod().labels("app", "web").req("cpu", "1"), makePod().labels("app", "batch").req()}
		if i%3 == 0 {
			pods = append(pods, makePod().labels("app", "cache").req("cpu", "1"))
		} else {
			pods = append(pods, makePod().labels("app", "queue").req("cpu", "1"))
		}
		if i%10 == 0 {
			pods[1] = makePod().labels("app", "db").req("cpu", "1").podAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db")))
		}
		nodes[i] = nb.with(pods...).info()
	}
	snap := cache.NewSnapshot(nodes...)
	for _, bc := range []struct {
		name string
		pod  *podBuilder
	}{
		{"plain", makePod().labels("app", "web").req("cpu", "100m")},
		{"refusedByExisting", makePod().labels("app", "db").req("cpu", "100m")},
		{"requiredAndPreferred", makePod().labels("app", "api").req("cpu", "100m").
			podAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db"))).
			preferPodAffinity(10, ipaTerm(v1.LabelTopologyZone, ipaIn("app", "cache")))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pi := bc.pod.info()
			feasible := make([]*cache.NodeInfo, 0, len(nodes))
			scores := make([]int64, len(nodes))
			b.ReportAllocs()
			for b.Loop() {
				ps, st := prepare(pi, snap)
				if st != nil {
					b.Fatal(st)
				}
				feasible = feasible[:0]
				for _, ni := range nodes {
					if Filter(ps, ni) == nil {
						feasible = append(feasible, ni)
					}
				}
				if scores, st = Score(ps, feasible, scores); st != nil {
					b.Fatal(st)
				}
			}
		})
	}
}
