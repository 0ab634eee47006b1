package framework_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/host/cache"
)

// benchNodes is a 5000-node cluster: labelled, tainted (a taint the bench
// pods tolerate, and PreferNoSchedule on some), each node with a few pods,
// one of them holding a host port.
func benchNodes(n int) []*cache.NodeInfo {
	nodes := make([]*cache.NodeInfo, n)
	for i := range nodes {
		b := ft.MakeNode(fmt.Sprintf("node-%d", i), "cpu", "32", "memory", "128Gi", "example.com/gpu", "4", "pods", "110").
			Label("zone", fmt.Sprintf("zone-%d", i%3)).Label("pool", "general").
			Taint("dedicated", "batch", v1.TaintEffectNoSchedule)
		if i%10 == 0 {
			b.Taint("spot", "", v1.TaintEffectPreferNoSchedule)
		}
		b.With(ft.MakePod().Req("cpu", "2", "memory", "4Gi").Port("", v1.ProtocolTCP, 9100),
			ft.MakePod().Req("cpu", "500m", "memory", "1Gi"), ft.MakePod().Req())
		nodes[i] = b.Info()
	}
	return nodes
}

// benchPod exercises every filter: nodeSelector, a toleration, a host port,
// cpu, memory and an extended resource.
func benchPod() *ft.PodBuilder {
	return ft.MakePod().Selector("pool", "general").
		Toleration("dedicated", v1.TolerationOpEqual, "batch", v1.TaintEffectNoSchedule).
		Req("cpu", "1", "memory", "2Gi", "example.com/gpu", "1").Port("", v1.ProtocolTCP, 8080)
}

func BenchmarkFilter(b *testing.B) {
	nodes := benchNodes(5000)
	for _, bc := range []struct {
		name string
		pod  *ft.PodBuilder
	}{
		{"nodeSelector", benchPod()},
		{"requiredAffinity", benchPod().Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "zone-0", "zone-1", "zone-2")))},
		{"allRejected", benchPod().Req("cpu", "64")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ps := state(bc.pod)
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
	ps := state(benchPod())
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
		pod  *ft.PodBuilder
	}{
		{"resources", benchPod()},
		{"preferredAffinity", benchPod().Preferred(10, ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "zone-1")))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ps := state(bc.pod)
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
		pod  *ft.PodBuilder
	}{
		{"plain", ft.MakePod().Req("cpu", "100m")},
		{"every filter", benchPod()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pi := bc.pod.Info()
			b.ReportAllocs()
			for b.Loop() {
				if _, st := prepare(pi, nil); st != nil {
					b.Fatal(st)
				}
			}
		})
	}
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
		nb := ft.MakeNode(name, "cpu", "32", "memory", "128Gi", "pods", "110").
			Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3))
		pods := []*ft.PodBuilder{ft.MakePod().Labels("app", "web").Req("cpu", "1"), ft.MakePod().Labels("app", "batch").Req()}
		if i%3 == 0 {
			pods = append(pods, ft.MakePod().Labels("app", "cache").Req("cpu", "1"))
		} else {
			pods = append(pods, ft.MakePod().Labels("app", "queue").Req("cpu", "1"))
		}
		if i%10 == 0 {
			pods[1] = ft.MakePod().Labels("app", "db").Req("cpu", "1").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db")))
		}
		nodes[i] = nb.With(pods...).Info()
	}
	snap := cache.NewSnapshot(nodes...)
	for _, bc := range []struct {
		name string
		pod  *ft.PodBuilder
	}{
		{"plain", ft.MakePod().Labels("app", "web").Req("cpu", "100m")},
		{"refusedByExisting", ft.MakePod().Labels("app", "db").Req("cpu", "100m")},
		{"requiredAndPreferred", ft.MakePod().Labels("app", "api").Req("cpu", "100m").
			PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db"))).
			PreferPodAffinity(10, ipaTerm(v1.LabelTopologyZone, ipaIn("app", "cache")))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pi := bc.pod.Info()
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

// BenchmarkInterPodAntiAffinityEverywhere is scheduler_perf's
// SchedulingPodAntiAffinity in small: 500 nodes, the first 200 each
// holding a pod that, like the incoming one, is labelled app=anti and has
// required anti-affinity against app=anti on its hostname. The incoming
// pod's own term and the existing pods' term count a domain per occupied
// node.
func BenchmarkInterPodAntiAffinityEverywhere(b *testing.B) {
	anti := func() *ft.PodBuilder {
		return ft.MakePod().Labels("app", "anti").Req("cpu", "100m").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "anti")))
	}
	nodes := make([]*cache.NodeInfo, 500)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		nb := ft.MakeNode(name, "cpu", "32", "memory", "128Gi", "pods", "110").
			Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%3))
		if i < 200 {
			nb = nb.With(anti())
		}
		nodes[i] = nb.Info()
	}
	snap := cache.NewSnapshot(nodes...)
	pi := anti().Info()
	scores := make([]int64, len(nodes))
	var diag Diagnosis
	b.ReportAllocs()
	for b.Loop() {
		ps, st := prepare(pi, snap)
		if st != nil {
			b.Fatal(st)
		}
		diag.Reset()
		feasible, _ := FindFeasible(context.Background(), ps, nodes, 0, 0, 1, &diag)
		if len(feasible) != 300 {
			b.Fatalf("%d feasible nodes, want 300", len(feasible))
		}
		if scores, st = Score(ps, feasible, scores); st != nil {
			b.Fatal(st)
		}
	}
}

func ipaTerm(topologyKey string, reqs ...metav1.LabelSelectorRequirement) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchExpressions: reqs}}
}

func ipaIn(key string, vals ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: vals}
}
