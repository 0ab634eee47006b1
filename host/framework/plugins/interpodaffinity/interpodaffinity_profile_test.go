package interpodaffinity_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/wasmsched/wasmsched/host/cache"
	"github.com/wasmsched/wasmsched/host/framework"
	ft "github.com/wasmsched/wasmsched/host/framework/frameworktest"
	"github.com/wasmsched/wasmsched/host/framework/plugins"
	"github.com/wasmsched/wasmsched/host/framework/plugins/interpodaffinity"
)

// The tests of InterPodAffinity in the in-tree registry's default profile:
// the pod's state as the cycle, preemption's dry runs and FindFeasible's
// workers use it. They sit in an external test package, since the
// registry imports this one.

// The internal tests' builders and statuses (export_test.go).
var (
	ipaPod                     = interpodaffinity.Pod
	ipaTerm                    = interpodaffinity.Term
	ipaIn                      = interpodaffinity.In
	ipaNode                    = interpodaffinity.Node
	ipaSnapshot                = interpodaffinity.Snapshot
	statusPodAntiAffinity      = interpodaffinity.StatusPodAntiAffinity
	statusExistingAntiAffinity = interpodaffinity.StatusExistingAntiAffinity
)

// defaultProfile is the in-tree registry's default profile, without
// listers.
func defaultProfile() *framework.Profile {
	p, err := plugins.InTree().Default(framework.NewHandle(framework.HandleOptions{Listers: framework.Listers{}}))
	if err != nil {
		panic(err)
	}
	return p
}

// The filter allocates nothing on a node that passes, with every count in
// use (the pod's affinity, its anti-affinity, existing pods' anti-affinity).
func TestInterPodAffinityFilterAllocatesNothing(t *testing.T) {
	nodes := []*v1.Node{ipaNode("n1", v1.LabelHostname, "n1", v1.LabelTopologyZone, "z1"),
		ipaNode("n2", v1.LabelHostname, "n2", v1.LabelTopologyZone, "z1"), ipaNode("n3", v1.LabelHostname, "n3", v1.LabelTopologyZone, "z2")}
	snap := ipaSnapshot(nodes,
		ipaPod().Labels("app", "cache").Node("n1"),
		ipaPod().Labels("app", "web").Node("n2"),
		ipaPod().Labels("app", "db").Node("n3").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "web"))))
	pod := ipaPod().Labels("app", "web").
		PodAffinity(ipaTerm(v1.LabelTopologyZone, ipaIn("app", "cache"))).
		PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "web")))
	ps, st := defaultProfile().Prepare(pod.Info(), snap)
	if st != nil {
		t.Fatal(st)
	}
	ni := snap.Get("n1")
	if st := framework.Filter(ps, ni); st != nil {
		t.Fatalf("Filter(n1) = %+v, want feasible", st)
	}
	for _, n := range []string{"n2", "n3"} {
		if st := framework.Filter(ps, snap.Get(n)); st == nil {
			t.Errorf("Filter(%s) feasible, want rejected", n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { framework.Filter(ps, ni) }); n != 0 {
		t.Errorf("Filter on a feasible node allocates %v times, want 0", n)
	}
}

// A pod refused only by a lower-priority pod's anti-affinity
// (Unschedulable) fits once preemption's dry run removes that pod:
// host/preempt clones the state and calls RemovePod, as here. The same for
// the pod's own anti-affinity against a lower-priority pod.
func TestInterPodAffinityPreemptionDryRun(t *testing.T) {
	nodes := []*v1.Node{ipaNode("n1", v1.LabelHostname, "n1")}
	guard := ipaPod().Labels("app", "guard").Node("n1").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "hi")))
	lo := ipaPod().Labels("app", "lo").Node("n1")
	bystander := ipaPod().Labels("app", "other").Node("n1")
	for _, tc := range []struct {
		name   string
		pod    *ft.PodBuilder
		victim *ft.PodBuilder
		want   *framework.Status
	}{
		{"existing pod's anti-affinity", ipaPod().Labels("app", "hi"), guard, statusExistingAntiAffinity},
		{"the pod's anti-affinity", ipaPod().Labels("app", "x").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "lo"))), lo, statusPodAntiAffinity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := ipaSnapshot(nodes, tc.victim, bystander)
			ps, st := defaultProfile().Prepare(tc.pod.Info(), snap)
			if st != nil {
				t.Fatal(st)
			}
			ni := snap.Get("n1")
			if diff := cmp.Diff(tc.want, framework.Filter(ps, ni)); diff != "" {
				t.Fatalf("Filter before the dry run (-want, +got):\n%s", diff)
			}
			var victim *cache.PodInfo
			for _, pi := range ni.Pods() {
				if pi.Pod.UID == tc.victim.P.UID {
					victim = pi
				}
			}
			work, dry := ni.Clone(), ps.Clone()
			work.RemovePod(victim.Pod.UID)
			dry.RemovePod(victim, work)
			if st := framework.Filter(dry, work); st != nil {
				t.Errorf("Filter with the victim removed = %+v, want feasible", st)
			}
			if diff := cmp.Diff(tc.want, framework.Filter(ps, ni)); diff != "" {
				t.Errorf("the dry run changed the cycle's state (-want, +got):\n%s", diff)
			}
			work.AddPod(victim)
			dry.AddPod(victim, work)
			if diff := cmp.Diff(tc.want, framework.Filter(dry, work)); diff != "" {
				t.Errorf("Filter with the victim reprieved (-want, +got):\n%s", diff)
			}
		})
	}
}

// A pod nominated to a node counts there: its anti-affinity against the
// pod refuses the node, as upstream's RunFilterPluginsWithNominatedPods.
func TestInterPodAffinityNominatedPod(t *testing.T) {
	nodes := []*v1.Node{ipaNode("n1", v1.LabelHostname, "n1"), ipaNode("n2", v1.LabelHostname, "n2")}
	snap := ipaSnapshot(nodes)
	pod := ipaPod().Labels("app", "web").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "web")))
	ps, st := defaultProfile().Prepare(pod.Info(), snap)
	if st != nil {
		t.Fatal(st)
	}
	ps.AddNominated(snap.Get("n1"), []*cache.PodInfo{ipaPod().Labels("app", "web").Node("n1").Info()})
	if diff := cmp.Diff(statusPodAntiAffinity, framework.Filter(ps, snap.Get("n1"))); diff != "" {
		t.Errorf("n1 with a nominated app=web pod (-want, +got):\n%s", diff)
	}
	if st := framework.Filter(ps, snap.Get("n2")); st != nil {
		t.Errorf("n2 = %+v, want feasible", st)
	}
}

// The filter is shared by FindFeasible's workers: run it under -race from
// several goroutines over a zone-labelled cluster and compare with one.
func TestInterPodAffinityConcurrentFilter(t *testing.T) {
	var nodes []*v1.Node
	var pods []*ft.PodBuilder
	for i := range 200 {
		name := fmt.Sprintf("n%03d", i)
		nodes = append(nodes, ipaNode(name, v1.LabelHostname, name, v1.LabelTopologyZone, fmt.Sprintf("z%d", i%5)))
		if i%7 == 0 {
			pods = append(pods, ipaPod().Labels("app", "web").Node(name))
		}
		if i%55 == 0 { // zone z0 only
			pods = append(pods, ipaPod().Labels("app", "db").Node(name).PodAntiAffinity(ipaTerm(v1.LabelTopologyZone, ipaIn("app", "web"))))
		}
	}
	snap := ipaSnapshot(nodes, pods...)
	pod := ipaPod().Labels("app", "web").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "web")))
	ps, st := defaultProfile().Prepare(pod.Info(), snap)
	if st != nil {
		t.Fatal(st)
	}
	var d1 framework.Diagnosis
	want, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, len(nodes), 1, &d1)
	if len(want) == 0 || len(want) == len(nodes) {
		t.Fatalf("%d of %d nodes feasible: the case should reject some", len(want), len(nodes))
	}
	for range 20 {
		var d framework.Diagnosis
		got, _ := framework.FindFeasible(context.Background(), ps, snap.List(), 0, len(nodes), 4, &d)
		if diff := cmp.Diff(ft.Names(want), ft.Names(got)); diff != "" {
			t.Fatalf("4 workers (-1 worker, +4 workers):\n%s", diff)
		}
	}
}

// TestInterPodAffinitySkipsInProfile is TestInterPodAffinitySkips through
// the profile: the plain pod's state has no InterPodAffinity filter and no
// updater.
func TestInterPodAffinitySkipsInProfile(t *testing.T) {
	nodes := []*v1.Node{ipaNode("n1", v1.LabelHostname, "n1"), ipaNode("n2", v1.LabelHostname, "n2")}
	plain := ipaPod().Labels("app", "web")
	ps, st := defaultProfile().Prepare(plain.Info(), ipaSnapshot(nodes, ipaPod().Node("n1").PodAntiAffinity(ipaTerm(v1.LabelHostname, ipaIn("app", "db")))))
	if st != nil {
		t.Fatal(st)
	}
	if ps.HasUpdaters() {
		t.Errorf("a pod without affinity got updaters")
	}
}
