package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wasmsched/wasmsched/e2e/testenv"
)

// Placement parity (issue 14): required inter-pod affinity and
// anti-affinity, topology spread constraints and the system default
// spreading, each scenario against upstream kube-scheduler v1.37.1 and
// wasmsched (forEachScheduler). Pods are scheduled by the default profile;
// where the scores decide, the doc comment does the arithmetic.
//
//	go test ./e2e -run 'TestPlacement' -v

// Messages upstream writes in PodScheduled (and FailedScheduling) for the
// scenarios below. They are deterministic: each names one reason per node
// set, and the preemption part says why no node can be freed.
const (
	msgAntiAffinity = "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. " +
		"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	msgAffinity = "0/2 nodes are available: 2 node(s) didn't match pod affinity rules. " +
		"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	msgSpread = "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match pod topology spread constraints. " +
		"preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
)

// sameNode is a required pod (anti-)affinity term: pods labelled app=app
// on the same node (kubernetes.io/hostname).
func sameNode(app string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		TopologyKey:   v1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
	}
}

func withPodAffinity(term v1.PodAffinityTerm) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}
	}
}

func withPodAntiAffinity(term v1.PodAffinityTerm) podOpt {
	return func(p *v1.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &v1.Affinity{}
		}
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}
	}
}

// withZoneSpread adds a DoNotSchedule constraint over
// topology.kubernetes.io/zone for the pods labelled app=app.
func withZoneSpread(maxSkew int32, app string) podOpt {
	return func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
			MaxSkew:           maxSkew,
			TopologyKey:       v1.LabelTopologyZone,
			WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		})
	}
}

// ownedBy makes the ReplicaSet the pod's controller, as the ReplicaSet
// controller would.
func ownedBy(rs *appsv1.ReplicaSet) podOpt {
	return func(p *v1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
			Controller: &yes, BlockOwnerDeletion: &yes,
		}}
	}
}

// checkPendingMessage waits until the pod is reported Unschedulable, checks
// it is not bound, that the message is upstream's want, and that a
// FailedScheduling event carries it.
func checkPendingMessage(t *testing.T, s *scheduler, name, want string) {
	t.Helper()
	p := waitCondition(t, s, name, v1.PodReasonUnschedulable, 60*time.Second)
	cond := scheduledCondition(p)
	s.logf(t, "%s: %s", name, conditionText(cond))
	if cond.Status != v1.ConditionFalse {
		t.Errorf("%s: PodScheduled status %s, want False", name, cond.Status)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("%s: bound to %s, want pending", name, p.Spec.NodeName)
	}
	if cond.Message != want {
		t.Errorf("%s: message\n  %q\nwant (upstream's)\n  %q", name, cond.Message, want)
	}
	var events []string
	if !waitForSoft(30*time.Second, func() bool {
		events = schedulingEvents(t, s, name)
		for _, e := range events {
			if strings.HasPrefix(e, "Warning/FailedScheduling: ") && strings.Contains(e, want) {
				return true
			}
		}
		return false
	}) {
		t.Errorf("%s: no FailedScheduling event with %q; events %q", name, want, events)
	}
	s.logf(t, "%s events: %q", name, events)
}

// TestPlacementAntiAffinityReplicas: replicas labelled app=web, each with a
// required anti-affinity against app=web on kubernetes.io/hostname, land on
// distinct nodes, one per node; one replica more than there are nodes stays
// pending, Unschedulable, with upstream's message (its own anti-affinity
// rules out every node, and preemption finds no lower-priority victim).
// When a replica goes, the pending one is bound to the node it left, without
// waiting for the 5-minute flush of unschedulable pods.
func TestPlacementAntiAffinityReplicas(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		nodes := fakeNodes(t, s, 3, "4", nil)
		s.start(t)
		replica := func(name string) *v1.Pod {
			return newPod(s.ns, name, "500m", withLabels("app", "web"), withPodAntiAffinity(sameNode("web")))
		}
		placed := map[string]string{} // node -> replica
		for i := range nodes {
			submit(t, s.c, replica(fmt.Sprintf("web-%d", i)))
		}
		for i := range nodes {
			name := fmt.Sprintf("web-%d", i)
			node := waitBound(t, s.c, s.ns, name, 60*time.Second)
			if other, ok := placed[node]; ok {
				t.Errorf("%s and %s both on %s despite their anti-affinity", other, name, node)
			}
			placed[node] = name
		}
		s.logf(t, "replicas by node: %v", placed)

		submit(t, s.c, replica("web-extra"))
		checkPendingMessage(t, s, "web-extra", msgAntiAffinity)
		if !testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
			if n := getPod(t, s.c, s.ns, "web-extra").Spec.NodeName; n != "" {
				return fmt.Errorf("web-extra bound to %s, which holds a replica", n)
			}
			return nil
		}) {
			t.FailNow()
		}

		freed := getPod(t, s.c, s.ns, "web-0").Spec.NodeName
		if err := s.c.CoreV1().Pods(s.ns).Delete(context.Background(), "web-0", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if node := waitBound(t, s.c, s.ns, "web-extra", 60*time.Second); node != freed {
			t.Errorf("web-extra bound to %s, want %s (the node web-0 left)", node, freed)
		}
		s.logf(t, "web-extra bound %v after web-0 was deleted", time.Since(t0).Round(time.Millisecond))
	})
}

// TestPlacementAffinityFollowsTarget: a pod with a required affinity to
// app=db on kubernetes.io/hostname goes to the node of the db pod, although
// that node is the fuller one: a control pod without the affinity, same
// requests, goes to the emptier node (LeastAllocated).
func TestPlacementAffinityFollowsTarget(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		nodes := fakeNodes(t, s, 2, "8", nil)
		full, empty := nodes[0], nodes[1]
		runOn(t, s.c, newPod(s.ns, "db", "4", withLabels("app", "db")), full, time.Now())
		s.start(t)

		s.logf(t, "db on %s, %s empty", full, empty)
		submit(t, s.c, newPod(s.ns, "control", "1", withLabels("app", "control")))
		node := waitBound(t, s.c, s.ns, "control", 60*time.Second)
		s.logf(t, "control bound to %s", node)
		if node != empty {
			t.Errorf("control bound to %s, want %s (the emptier node): the scenario assumes resource scores prefer it", node, empty)
		}
		submit(t, s.c, newPod(s.ns, "cache", "1", withLabels("app", "cache"), withPodAffinity(sameNode("db"))))
		node = waitBound(t, s.c, s.ns, "cache", 60*time.Second)
		s.logf(t, "cache bound to %s", node)
		if node != full {
			t.Errorf("cache bound to %s, want %s (db's node)", node, full)
		}
	})
}

// TestPlacementAffinityWaitsForTarget: a pod whose required affinity
// target (app=db, same node) does not exist yet stays pending,
// Unschedulable with upstream's message (UnschedulableAndUnresolvable on
// every node: preemption is not tried). Once a db pod is created and bound,
// the pending pod is retried on that event and bound next to it: the wait
// below (60 s) is far shorter than the 5-minute flush of unschedulable pods,
// so only the event (a queueing hint of InterPodAffinity) can have moved it.
func TestPlacementAffinityWaitsForTarget(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		fakeNodes(t, s, 2, "8", nil)
		s.start(t)
		submit(t, s.c, newPod(s.ns, "cache", "1", withLabels("app", "cache"), withPodAffinity(sameNode("db"))))
		checkPendingMessage(t, s, "cache", msgAffinity)
		if !testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
			if n := getPod(t, s.c, s.ns, "cache").Spec.NodeName; n != "" {
				return fmt.Errorf("cache bound to %s with no db pod anywhere", n)
			}
			return nil
		}) {
			t.FailNow()
		}

		t0 := time.Now()
		submit(t, s.c, newPod(s.ns, "db", "1", withLabels("app", "db")))
		dbNode := waitBound(t, s.c, s.ns, "db", 60*time.Second)
		s.logf(t, "db bound to %s after %v", dbNode, time.Since(t0).Round(time.Millisecond))
		node := waitBound(t, s.c, s.ns, "cache", 60*time.Second)
		s.logf(t, "cache bound to %s %v after db was created", node, time.Since(t0).Round(time.Millisecond))
		if node != dbNode {
			t.Errorf("cache bound to %s, want %s (db's node)", node, dbNode)
		}
	})
}

// TestPlacementZoneSpread: pods with a DoNotSchedule spread constraint
// (maxSkew 1 over topology.kubernetes.io/zone, selecting themselves) over
// unequal zones — zone a with three 4-cpu nodes, zone b with one 3-cpu
// node — are placed 3/3, not in proportion to the nodes. Each placement
// must keep count(zone)+1-min <= 1, so with 6 pods only 3/3 is possible.
// A seventh goes to zone a (4/3, zone b is full); an eighth stays pending:
// zone a would make the skew 2, zone b has no cpu left. Its message is
// upstream's.
func TestPlacementZoneSpread(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		zoneOf := map[string]string{}
		for _, n := range fakeNodes(t, s, 3, "4", map[string]string{v1.LabelTopologyZone: "a"}) {
			zoneOf[n] = "a"
		}
		for _, n := range fakeNodes(t, s, 1, "3", map[string]string{v1.LabelTopologyZone: "b"}) {
			zoneOf[n] = "b"
		}
		s.start(t)
		spread := func(name string) *v1.Pod {
			return newPod(s.ns, name, "1", withLabels("app", "spread"), withZoneSpread(1, "spread"))
		}
		var names []string
		for i := range 6 {
			names = append(names, fmt.Sprintf("s-%d", i))
			submit(t, s.c, spread(names[i]))
		}
		perZone := map[string]int{}
		placed := map[string]string{}
		for _, n := range names {
			node := waitBound(t, s.c, s.ns, n, 60*time.Second)
			perZone[zoneOf[node]]++
			placed[n] = node
		}
		s.logf(t, "placed: %v", placed)
		if perZone["a"] != 3 || perZone["b"] != 3 {
			t.Errorf("pods per zone %v, want a:3 b:3", perZone)
		}

		submit(t, s.c, spread("s-6"))
		if node := waitBound(t, s.c, s.ns, "s-6", 60*time.Second); zoneOf[node] != "a" {
			t.Errorf("s-6 bound to %s in zone %q, want zone a", node, zoneOf[node])
		}
		submit(t, s.c, spread("s-7"))
		checkPendingMessage(t, s, "s-7", msgSpread)
		testenv.Consistently(t, 2*time.Second, 100*time.Millisecond, func() error {
			if n := getPod(t, s.c, s.ns, "s-7").Spec.NodeName; n != "" {
				return fmt.Errorf("s-7 bound to %s (zone %s) against its spread constraint", n, zoneOf[n])
			}
			return nil
		})
	})
}

// TestPlacementDefaultSpreading: pods without spread constraints, selected
// by a ReplicaSet that controls them (ownerReference) or by a Service, are
// spread by the system default constraints (hostname maxSkew 3, zone
// maxSkew 5, both ScheduleAnyway; PodTopologySpread's score, weight 2).
//
// Two 8-cpu, 32Gi nodes: a in zone za holds four 100m pods app=web, b in
// zone zb a 4-cpu pod app=filler. A 100m pod (and 100Mi, as every pod here)
// scores, per plugin before weights:
//
//	                      a                        b
//	LeastAllocated        (93+98)/2 = 95           (48+99)/2 = 73
//	BalancedAllocation    50+(50+97-98)/2 = 74     50+(50+74-75)/2 = 74
//
// so without spreading a pod goes to a, by 22: the control pod (app=control,
// selected by nothing) shows it. For an app=web pod, PodTopologySpread
// weighs each constraint by ln(2 domains + 2) = 1.386 and scores
// count*1.386 + (maxSkew-1) per constraint: a 4*1.386+2 + 4*1.386+4 = 17,
// b 0+2+0+4 = 6; normalized 100*(max+min-s)/max: a 35, b 100; weighted 2:
// 130 for b against 22 for a. The next web pod (b holding one: a 17, b 9;
// normalized 52 and 100, weighted 96) goes to b as well.
func TestPlacementDefaultSpreading(t *testing.T) {
	for _, selectedBy := range []string{"replicaset", "service"} {
		t.Run(selectedBy, func(t *testing.T) {
			forEachScheduler(t, func(t *testing.T, s *scheduler) { defaultSpreading(t, s, selectedBy) })
		})
	}
}

func defaultSpreading(t *testing.T, s *scheduler, selectedBy string) {
	ctx := context.Background()
	a := fakeNodes(t, s, 1, "8", map[string]string{v1.LabelTopologyZone: "za"})[0]
	b := fakeNodes(t, s, 1, "8", map[string]string{v1.LabelTopologyZone: "zb"})[0]
	var web []podOpt
	switch selectedBy {
	case "replicaset":
		replicas := int32(6)
		rs, err := s.c.AppsV1().ReplicaSets(s.ns).Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: v1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       newPod(s.ns, "template", "100m").Spec,
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create ReplicaSet: %v", err)
		}
		web = append(web, ownedBy(rs)) // no controller runs: its pods are made here
	case "service":
		if _, err := s.c.CoreV1().Services(s.ns).Create(ctx, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web"},
			Spec: v1.ServiceSpec{
				ClusterIP: v1.ClusterIPNone,
				Selector:  map[string]string{"app": "web"},
				Ports:     []v1.ServicePort{{Name: "http", Port: 80}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Service: %v", err)
		}
	}
	web = append(web, withLabels("app", "web"))
	for i := range 4 {
		runOn(t, s.c, newPod(s.ns, fmt.Sprintf("web-%d", i), "100m", web...), a, time.Now())
	}
	runOn(t, s.c, newPod(s.ns, "filler", "4", withLabels("app", "filler")), b, time.Now())
	s.start(t)

	s.logf(t, "a=%s (web-0..3), b=%s (filler)", a, b)
	submit(t, s.c, newPod(s.ns, "control", "100m", withLabels("app", "control")))
	node := waitBound(t, s.c, s.ns, "control", 60*time.Second)
	s.logf(t, "control bound to %s", node)
	if node != a {
		t.Errorf("control bound to %s, want %s: the scenario assumes resource scores prefer a", node, a)
	}
	for _, name := range []string{"web-4", "web-5"} {
		submit(t, s.c, newPod(s.ns, name, "100m", web...))
		node := waitBound(t, s.c, s.ns, name, 60*time.Second)
		s.logf(t, "%s bound to %s", name, node)
		if node != b {
			t.Errorf("%s bound to %s, want %s: default spreading should outweigh the resource scores", name, node, b)
		}
	}
}

// TestPlacementPreemptionForAffinity: anti-affinity can be preempted away.
// One 8-cpu node runs three low-priority pods with cpu to spare: guard
// (app=guard, required anti-affinity against app=hi on the node), lo
// (app=lo) and bystander (app=by).
//
// A high-priority pod labelled app=hi is refused by guard's anti-affinity
// ("didn't satisfy existing pods anti-affinity rules"), preempts guard alone
// (lo and bystander are reprieved: they do not stand in its way), is
// nominated to the node and bound once guard is gone. Then a high-priority
// pod with its own anti-affinity against app=lo ("didn't match pod
// anti-affinity rules") preempts lo alone the same way; bystander stays.
func TestPlacementPreemptionForAffinity(t *testing.T) {
	forEachScheduler(t, func(t *testing.T, s *scheduler) {
		createPriorityClasses(t, s.c)
		node := fakeNodes(t, s, 1, "8", nil)[0]
		base := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
		runOn(t, s.c, newPod(s.ns, "guard", "1", withPriorityClass(pcLow), withLabels("app", "guard"),
			withPodAntiAffinity(sameNode("hi"))), node, base)
		runOn(t, s.c, newPod(s.ns, "lo", "1", withPriorityClass(pcLow), withLabels("app", "lo")), node, base.Add(time.Hour))
		runOn(t, s.c, newPod(s.ns, "bystander", "1", withPriorityClass(pcLow), withLabels("app", "by")), node, base.Add(2*time.Hour))
		s.start(t)
		w := watchPods(t, s.c, s.ns)

		steps := []struct {
			preemptor *v1.Pod
			victim    string
			reason    string
		}{
			{newPod(s.ns, "hi", "1", withPriorityClass(pcHigh), withLabels("app", "hi")),
				"guard", "didn't satisfy existing pods anti-affinity rules"},
			{newPod(s.ns, "shy", "1", withPriorityClass(pcHigh), withLabels("app", "shy"), withPodAntiAffinity(sameNode("lo"))),
				"lo", "didn't match pod anti-affinity rules"},
		}
		var deleted []string
		for _, st := range steps {
			name := st.preemptor.Name
			t0 := time.Now()
			submit(t, s.c, st.preemptor)
			if got := waitBound(t, s.c, s.ns, name, 60*time.Second); got != node {
				t.Errorf("%s bound to %s, want %s", name, got, node)
			}
			s.logf(t, "%s bound after %v", name, time.Since(t0).Round(time.Millisecond))
			deleted = append(deleted, st.victim)
			w.waitDeleted(t, 30*time.Second, deleted...)
			w.boundAfterDeletions(t, name, st.victim)
			if nnn := w.firstNominated(name); nnn != node {
				t.Errorf("%s: status.nominatedNodeName before binding = %q, want %q", name, nnn, node)
			}
			s.logf(t, "%s while pending: %q", name, w.pendingConditions(name))
			w.checkPendingUnschedulable(t, name, st.reason)
			checkPreempted(t, s, w, st.victim)
			s.logf(t, "%s events: %q", name, schedulingEvents(t, s, name))
		}
		stillThere(t, s, node, "bystander", "hi", "shy")
		slices.Sort(deleted)
		testenv.Consistently(t, time.Second, 100*time.Millisecond, func() error { // nothing else goes
			if got := w.deletedPods(); !slices.Equal(got, deleted) {
				return fmt.Errorf("deleted pods %v, want %v", got, deleted)
			}
			return nil
		})
	})
}
