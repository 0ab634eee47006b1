package podtopologyspread_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/wasmsched/wasmsched/abi"
	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/podtopologyspread"
)

// The tests of PodTopologySpread in the in-tree registry's default profile:
// upstream's statuses and FitError message, preemption's dry runs,
// nominated pods, the default spreading through the profile's listers, and
// the pod's state as FindFeasible's workers share it. They sit in an
// external test package, since the registry imports this one.

// The internal tests' builders and statuses (export_test.go).
var (
	spod                             = podtopologyspread.Pod
	spodOn                           = podtopologyspread.PodOn
	spreadListers                    = podtopologyspread.Listers
	matchLabels                      = podtopologyspread.MatchLabels
	spreadProfileCluster             = podtopologyspread.ProfileCluster
	spreadWebPod                     = podtopologyspread.WebPod
	spreadBenchCluster               = podtopologyspread.BenchCluster
	statusTopologySpread             = podtopologyspread.StatusTopologySpread
	statusTopologySpreadMissingLabel = podtopologyspread.StatusTopologySpreadMissingLabel
)

// defaultProfileOver is the in-tree registry's default profile over a
// Handle of l.
func defaultProfileOver(l framework.Listers) *framework.Profile {
	p, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{Listers: l}))
	if err != nil {
		panic(err)
	}
	return p
}

// defaultProfile is the default profile without listers.
func defaultProfile() *framework.Profile { return defaultProfileOver(framework.Listers{}) }

// TestPodTopologySpreadInProfile runs the plugin through the default
// profile: upstream's statuses and the FitError message.
func TestPodTopologySpreadInProfile(t *testing.T) {
	snap, _ := spreadProfileCluster()
	ps, st := defaultProfileOver(framework.Listers{}).Prepare(spreadWebPod().Info(), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	var d framework.Diagnosis
	for _, ni := range snap.List() {
		if st := framework.Filter(ps, ni); st != nil {
			d.Add(ni.Name(), st)
		}
	}
	if got := d.NodeStatus("node-a"); got != statusTopologySpread {
		t.Errorf("node-a: Filter = %+v, want %+v", got, statusTopologySpread)
	}
	if got := d.NodeStatus("node-c"); got != statusTopologySpreadMissingLabel {
		t.Errorf("node-c: Filter = %+v, want %+v", got, statusTopologySpreadMissingLabel)
	}
	want := "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, " +
		"1 node(s) didn't match pod topology spread constraints (missing required label)."
	if got := d.Message(3); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{abi.PluginPodTopologySpread}, d.UnschedulablePlugins()); diff != "" {
		t.Errorf("unschedulable plugins (-want, +got):\n%s", diff)
	}
	wantStatus := map[*framework.Status]struct {
		code   framework.Code
		reason string
	}{
		statusTopologySpread:             {framework.Unschedulable, "node(s) didn't match pod topology spread constraints"},
		statusTopologySpreadMissingLabel: {framework.UnschedulableAndUnresolvable, "node(s) didn't match pod topology spread constraints (missing required label)"},
	}
	for st, w := range wantStatus {
		if st.Code != w.code || st.Message() != w.reason || st.Plugin != "PodTopologySpread" {
			t.Errorf("status %+v, want code %v and upstream's reason %q", st, w.code, w.reason)
		}
	}
}

// TestPodTopologySpreadPreemption is preemption's dry run: evicting the
// matching pod on node-a fixes the skew there, on a clone of the state.
func TestPodTopologySpreadPreemption(t *testing.T) {
	snap, web := spreadProfileCluster()
	ps, st := defaultProfileOver(framework.Listers{}).Prepare(spreadWebPod().Info(), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	ni := snap.Get("node-a")
	if got := framework.Filter(ps, ni); got != statusTopologySpread {
		t.Fatalf("node-a before the eviction: Filter = %+v, want %+v", got, statusTopologySpread)
	}
	c := ps.Clone()
	work := ni.Clone()
	victim := web.Info()
	work.RemovePod(victim.Pod.UID)
	c.RemovePod(victim, work)
	if got := framework.Filter(c, work); got != nil {
		t.Errorf("node-a without the victim: Filter = %+v, want feasible", got)
	}
	if got := framework.Filter(ps, ni); got != statusTopologySpread {
		t.Errorf("the original state after the clone's RemovePod: Filter = %+v, want %+v", got, statusTopologySpread)
	}
	c.AddPod(victim, ni)
	if got := framework.Filter(c, ni); got != statusTopologySpread {
		t.Errorf("the victim put back: Filter = %+v, want %+v", got, statusTopologySpread)
	}
}

// TestPodTopologySpreadNominated: two web pods nominated to node-b make it
// as crowded as the skew allows, so the pod no longer fits there.
func TestPodTopologySpreadNominated(t *testing.T) {
	snap, _ := spreadProfileCluster()
	ps, st := defaultProfileOver(framework.Listers{}).Prepare(spreadWebPod().Info(), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	b := snap.Get("node-b")
	if got := framework.Filter(ps, b); got != nil {
		t.Fatalf("node-b: Filter = %+v, want feasible", got)
	}
	ps.AddNominated(b, []*cache.PodInfo{spodOn("node-b", "app=web").Namespace("default").Info(),
		spodOn("node-b", "app=web").Namespace("default").Info()})
	if got := framework.Filter(ps, b); got != statusTopologySpread {
		t.Errorf("node-b with two nominated web pods: Filter = %+v, want %+v", got, statusTopologySpread)
	}
}

// TestPodTopologySpreadDefaultSpreading: a pod without constraints owned by
// a ReplicaSet is scored by the system defaults through the profile's
// listers, with weight 2; without listers, or without a controller, it pays
// for no scorer.
func TestPodTopologySpreadDefaultSpreading(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Selector: matchLabels("app", "web")}}
	snap, _ := spreadProfileCluster()
	owned := spod("web-new").Namespace("default").Label("app", "web").Owner("web", appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	for _, tc := range []struct {
		name    string
		listers framework.Listers
		pod     *podtopologyspread.PodBuilder
		want    bool
	}{
		{"replica set", spreadListers(t, rs), owned, true},
		{"no listers", framework.Listers{}, owned, false},
		{"no controller", spreadListers(t, rs), spod("lone").Namespace("default").Label("app", "web"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, st := defaultProfileOver(tc.listers).Prepare(tc.pod.Info(), snap)
			if st != nil {
				t.Fatalf("Prepare: %+v", st)
			}
			scs, st := ps.Scorers(snap.List())
			if st != nil {
				t.Fatalf("preScore: %+v", st)
			}
			var got *framework.WeightedScorer
			for i := range scs {
				if podtopologyspread.IsSpreadScorer(scs[i].Scorer) {
					got = &scs[i]
				}
			}
			if (got != nil) != tc.want {
				t.Fatalf("spread scorer present = %v, want %v", got != nil, tc.want)
			}
			if got != nil && (got.Weight != 2 || !got.Normalize) {
				t.Errorf("spread scorer weight %d, normalize %v: want 2, true", got.Weight, got.Normalize)
			}
		})
	}
}

// TestPodTopologySpreadConcurrentFilter is a hammer: many goroutines filter
// every node with one state and agree with a sequential run (under -race).
func TestPodTopologySpreadConcurrentFilter(t *testing.T) {
	nodes, pod := spreadBenchCluster(90)
	snap := cache.NewSnapshot(nodes...)
	ps, st := defaultProfile().Prepare(pod.Info(), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	want := make([]*framework.Status, len(nodes))
	for i, ni := range nodes {
		want[i] = framework.Filter(ps, ni)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			for k := range len(nodes) {
				i := (k + g*7) % len(nodes)
				if got := framework.Filter(ps, nodes[i]); got != want[i] {
					errs <- fmt.Sprintf("%s: Filter = %+v, want %+v", nodes[i].Name(), got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestPodTopologySpreadFilterAllocatesNothing: filtering a feasible node
// allocates nothing (scoring: TestPodTopologySpreadAllocatesNothing).
func TestPodTopologySpreadFilterAllocatesNothing(t *testing.T) {
	nodes, pod := spreadBenchCluster(60)
	snap := cache.NewSnapshot(nodes...)
	ps, st := defaultProfile().Prepare(pod.Info(), snap)
	if st != nil {
		t.Fatalf("Prepare: %+v", st)
	}
	ni := nodes[len(nodes)-1]
	if st := framework.Filter(ps, ni); st != nil {
		t.Fatalf("Filter = %+v, want the node feasible", st)
	}
	if n := testing.AllocsPerRun(100, func() { framework.Filter(ps, ni) }); n != 0 {
		t.Errorf("Filter on a feasible node allocates %v times, want 0", n)
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
	pi := pod.Info()
	prof := defaultProfile()
	b.Run("Prepare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, st := prof.Prepare(pi, snap); st != nil {
				b.Fatal(st)
			}
		}
	})
	ps, st := prof.Prepare(pi, snap)
	if st != nil {
		b.Fatal(st)
	}
	b.Run("Filter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, ni := range nodes {
				framework.Filter(ps, ni)
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
	soft := podtopologyspread.BenchPod(v1.ScheduleAnyway).Info()
	feasible := nodes[:500]
	pl := spreadPlugin(b)
	scores := make([]int64, len(feasible))
	b.Run("Score", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, st := pl.PreScore(soft, feasible, snap)
			if st != nil {
				b.Fatal(st)
			}
			s.Score(feasible, scores)
			s.(framework.ScoreNormalizer).NormalizeScores(scores)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(feasible)), "ns/node")
	})
}

// spreadPlugin is PodTopologySpread built from its row with the default
// args and no listers.
func spreadPlugin(b *testing.B) framework.PreScorePlugin {
	row := podtopologyspread.Row()
	args, err := row.Args(nil, field.NewPath("args"))
	if err != nil {
		b.Fatal(err)
	}
	pl, err := row.New(framework.NewHandle(framework.HandleOptions{}), args)
	if err != nil {
		b.Fatal(err)
	}
	return pl.(framework.PreScorePlugin)
}
