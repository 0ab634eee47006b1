package framework_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wasmsched/wasmsched/host/cache"
	. "github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
)

// memoSpecs are the pod specs TestMemoAgrees draws from: node-local ones of
// every kind the default profile has (requests, a scalar, a node selector,
// required and preferred node affinity, tolerations, a host port), and two
// that must not use the memo (required anti-affinity, a named node).
func memoSpecs() []func() *ft.PodBuilder {
	return []func() *ft.PodBuilder{
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "100m", "memory", "500Mi") },
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "300m", "memory", "1Gi") },
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "100m", "example.com/gpu", "1") },
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "200m").Selector("zone", "a") },
		func() *ft.PodBuilder {
			return ft.MakePod().Req("cpu", "100m").
				Required(ft.LabelTerm(ft.Expr("zone", v1.NodeSelectorOpIn, "a", "b"))).
				Preferred(5, ft.LabelTerm(ft.Expr("disk", v1.NodeSelectorOpIn, "ssd")))
		},
		func() *ft.PodBuilder {
			return ft.MakePod().Req("cpu", "100m").Toleration("dedicated", v1.TolerationOpExists, "", "")
		},
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "50m").Port("", v1.ProtocolTCP, 8080) },
		func() *ft.PodBuilder {
			return ft.MakePod().Labels("app", "db").Req("cpu", "100m").PodAntiAffinity(v1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				TopologyKey:   "kubernetes.io/hostname"})
		},
		func() *ft.PodBuilder { return ft.MakePod().Req("cpu", "100m").Node("n7") },
	}
}

// TestMemoAgrees places pods one after another on a cache whose nodes also
// change under them (taints, labels, cordons, capacity, pods leaving), with
// a pod nominated to a node now and then, and pod groups assumed in the
// snapshot, each
// pod twice over the same snapshot: once through a Memo kept across pods,
// once without. The feasible nodes, the next start, the diagnosis and the
// scores must be the same; and the memo must have been used.
func TestMemoAgrees(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	c := cache.New()
	var nodes []*v1.Node
	for i := range 60 {
		b := ft.MakeNode(fmt.Sprintf("n%d", i), "cpu", "2", "memory", "8Gi", "pods", "12")
		b.Label("kubernetes.io/hostname", b.N.Name).Label("zone", string(rune('a'+i%3)))
		if i%4 == 0 {
			b.Label("disk", "ssd")
		}
		if i%5 == 0 {
			b.N.Status.Allocatable["example.com/gpu"] = resource.MustParse("2")
		}
		if i%7 == 0 {
			b.Taint("dedicated", "x", v1.TaintEffectNoSchedule)
		}
		if i%9 == 0 {
			b.Taint("soft", "x", v1.TaintEffectPreferNoSchedule)
		}
		nodes = append(nodes, b.N)
		c.AddNode(b.N)
	}
	snap := cache.NewSnapshot()
	specs := memoSpecs()
	var memo Memo
	var placed []*v1.Pod
	start, runs, used, offered := 0, 0, 0, 0
	spec, last := 0, -1
	for step := range 400 {
		if err := c.UpdateSnapshot(snap); err != nil {
			t.Fatal(err)
		}
		if rnd.IntN(3) == 0 { // runs of one spec, as a Deployment's pods come
			spec = rnd.IntN(len(specs))
		}
		pod := specs[spec]().P
		// Now and then a pod nominated to a node holds room there: that
		// node's verdict is not the memo's.
		var nominatedTo *cache.NodeInfo
		if rnd.IntN(4) == 0 {
			nominatedTo = snap.List()[rnd.IntN(snap.NumNodes())]
		}
		nominee := ft.MakePod().Req("cpu", "1900m").Info()
		run := func(m *Memo, workers, want int) (names []string, next int, msg string, scores []int64) {
			ps, st := prepare(cache.NewPodInfo(pod), snap)
			if st != nil {
				t.Fatalf("step %d: Prepare: %v", step, st)
			}
			if nominatedTo != nil {
				ps.AddNominated(nominatedTo, []*cache.PodInfo{nominee})
			}
			if m != nil {
				runs++
				if ps.UseMemo(m, snap.List()) {
					used++
				}
			}
			var d Diagnosis
			f, next := FindFeasible(context.Background(), ps, snap.List(), start, want, workers, &d)
			if len(f) > 0 {
				out, st := Score(ps, f, nil)
				if st != nil {
					t.Fatalf("step %d: Score: %v", step, st)
				}
				scores = append([]int64(nil), out...)
			}
			return ft.Names(f), next, d.Message(snap.NumNodes()), scores
		}
		type result struct {
			Names  []string
			Next   int
			Msg    string
			Scores []int64
		}
		if spec == last { // verdicts the memo may hand this pod
			offered += MemoVerdicts(&memo)
		}
		last = spec
		want := 20 + rnd.IntN(30)
		var firstFit string
		for _, workers := range []int{1, 3} {
			if workers > 1 {
				want = 0 // a parallel search that stops early looks at nodes by timing
			}
			var got, fresh result
			got.Names, got.Next, got.Msg, got.Scores = run(&memo, workers, want)
			fresh.Names, fresh.Next, fresh.Msg, fresh.Scores = run(nil, workers, want)
			if diff := cmp.Diff(fresh, got); diff != "" {
				t.Fatalf("step %d, spec %d, workers %d (-fresh, +memo):\n%s", step, spec, workers, diff)
			}
			if workers == 1 {
				start = got.Next
				if len(got.Names) > 0 {
					firstFit = got.Names[0]
				}
				if len(got.Names) > 0 && rnd.IntN(5) > 0 { // bind to the first feasible node
					p := pod.DeepCopy()
					p.UID = types.UID(fmt.Sprintf("placed-%d", step))
					p.Spec.NodeName = got.Names[0]
					if err := c.AddPod(p); err != nil {
						t.Fatal(err)
					}
					placed = append(placed, p)
				}
			}
		}
		// Or a pod group: its members are assumed in the snapshot one after
		// another, changing the node's private clone in place.
		if firstFit != "" && !snap.Altered() && rnd.IntN(4) == 0 {
			for k := range 10 {
				p := pod.DeepCopy()
				p.UID = types.UID(fmt.Sprintf("member-%d-%d", step, k))
				p.Spec.NodeName = firstFit
				if err := snap.Assume(cache.NewPodInfo(p)); err != nil {
					t.Fatal(err)
				}
				var got, fresh result
				got.Names, got.Next, got.Msg, got.Scores = run(&memo, 1, 0)
				fresh.Names, fresh.Next, fresh.Msg, fresh.Scores = run(nil, 1, 0)
				if diff := cmp.Diff(fresh, got); diff != "" {
					t.Fatalf("step %d, member %d on %s (-fresh, +memo):\n%s", step, k, firstFit, diff)
				}
			}
		}
		// The cluster changes under the memo.
		switch rnd.IntN(6) {
		case 0:
			n := nodes[rnd.IntN(len(nodes))]
			changed := n.DeepCopy()
			switch rnd.IntN(4) {
			case 0:
				changed.Spec.Unschedulable = !changed.Spec.Unschedulable
			case 1:
				changed.Spec.Taints = append(changed.Spec.Taints, v1.Taint{Key: "dedicated", Effect: v1.TaintEffectNoSchedule})
			case 2:
				changed.Labels["zone"] = "a"
				changed.Labels["disk"] = "ssd"
			case 3:
				changed.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("8")
			}
			c.UpdateNode(n, changed)
			nodes[slices.Index(nodes, n)] = changed
		case 1:
			if len(placed) > 0 {
				i := rnd.IntN(len(placed))
				if err := c.RemovePod(placed[i]); err != nil {
					t.Fatal(err)
				}
				placed = append(placed[:i], placed[i+1:]...)
			}
		}
	}
	if offered == 0 {
		t.Error("no pod was offered a verdict the memo kept: the runs did not exercise it")
	}
	if used == 0 || used == runs {
		t.Errorf("the memo was used for %d of %d pod runs: want some, not all (anti-affinity, a named node, pod groups)", used, runs)
	}
	t.Logf("memo used for %d of %d pod runs; %d verdicts kept for pods of the spec before", used, runs, offered)
}

// TestUseMemoRefuses checks the pods that must not use a memo: those with
// a filter that reads beyond the node (inter-pod anti-affinity), restricted
// nodes (spec.nodeName), container statuses (requests from a resize), an
// emptyDir size limit (encoding it would write to the informer's pod), and
// that a nil memo stops the use.
func TestUseMemoRefuses(t *testing.T) {
	nodes := ft.Infos(ft.MakeNode("n1", "cpu", "1"), ft.MakeNode("n7", "cpu", "1"))
	snap := cache.NewSnapshot(nodes...)
	specs := memoSpecs()
	withStatus := specs[0]().P
	withStatus.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c"}}
	limit := resource.MustParse("1.5Gi") // not canonical: no string cached
	sized := specs[0]().P
	sized.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}}}}
	unsized := specs[0]().P
	unsized.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	for name, tc := range map[string]struct {
		pod  *v1.Pod
		want bool
	}{
		"plain":            {specs[0]().P, true},
		"scalar":           {specs[2]().P, true},
		"node affinity":    {specs[4]().P, true},
		"anti-affinity":    {specs[7]().P, false},
		"named node":       {specs[8]().P, false},
		"container status": {withStatus, false},
		"emptyDir limit":   {sized, false},
		"emptyDir":         {unsized, true},
		"host port":        {specs[6]().P, true},
		"toleration":       {specs[5]().P, true},
		"node selector":    {specs[3]().P, true},
		"second plain pod": {specs[1]().P, true},
	} {
		t.Run(name, func(t *testing.T) {
			ps, st := prepare(cache.NewPodInfo(tc.pod), snap)
			if st != nil {
				t.Fatal(st)
			}
			var m Memo
			if got := ps.UseMemo(&m, snap.List()); got != tc.want {
				t.Errorf("UseMemo = %v, want %v", got, tc.want)
			}
			if ps.UseMemo(nil, nil) {
				t.Error("UseMemo(nil) = true")
			}
		})
	}
}
