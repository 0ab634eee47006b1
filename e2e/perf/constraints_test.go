package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// placed is a run on a fake clientset whose nodes n0..n(len(zones)-1) are
// in zones[i] and whose pods color=c are bound to nodes[i] ("" unbound).
func placed(t *testing.T, zones []string, c string, nodes ...string) *run {
	t.Helper()
	r := &run{c: fake.NewClientset(), ns: "perf", id: "test-run"}
	ctx := context.Background()
	for i, z := range zones {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i),
			Labels: map[string]string{runLabel: r.id, v1.LabelTopologyZone: z}}}
		if _, err := r.c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range nodes {
		p := makePod(r.ns, "p"+strconv.Itoa(i), phaseMeasured, withColor(c))
		p.Spec.NodeName = n
		if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A pod of another color never counts.
	other := makePod(r.ns, "other", phaseMeasured, withColor("other"))
	other.Spec.NodeName = "n0"
	if _, err := r.c.CoreV1().Pods(r.ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOnePerNode(t *testing.T) {
	zones := []string{"a", "a", "b"}
	for _, tc := range []struct {
		name    string
		nodes   []string
		wantErr string
	}{
		{"one each", []string{"n0", "n1", "n2"}, ""},
		{"unbound pods share no node", []string{"n0", "", ""}, ""},
		{"two on n1", []string{"n1", "n0", "n1"}, "node n1 holds two pods color=green"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := placed(t, zones, "green", tc.nodes...)
			checkErr(t, onePerNode(context.Background(), r, "color=green"), tc.wantErr)
		})
	}
}

func TestZoneSkew(t *testing.T) {
	zones := []string{"a", "b", "c"} // n0 in a, n1 in b, n2 in c
	for _, tc := range []struct {
		name    string
		nodes   []string
		maxSkew int
		wantErr string
	}{
		{"even", []string{"n0", "n1", "n2", "n0"}, 1, ""},
		{"skew 2 within 2", []string{"n0", "n0", "n1", "n0", "n2"}, 2, ""},
		{"an empty zone counts 0", []string{"n0", "n0", "n1"}, 1, "skew 2 > maxSkew 1"},
		{"unbound pods count nowhere", []string{"n0", "", "", "n1", "n2"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := placed(t, zones, "blue", tc.nodes...)
			checkErr(t, zoneSkew(context.Background(), r, "color=blue", zones, tc.maxSkew), tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("got %v, want no error", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("got %v, want an error containing %q", err, want)
	}
}

func mixWorkload(t *testing.T, scale float64) *workload {
	t.Helper()
	for _, w := range workloads(scale) {
		if w.name == "ConstraintMix" {
			return w
		}
	}
	t.Fatal("no ConstraintMix workload")
	return nil
}

func TestConstraintMixSize(t *testing.T) {
	for _, tc := range []struct {
		scale        float64
		nodes, pods  int
		requiredPods int
	}{
		{1, 1000, 5500, 550},
		{0.1, 100, 550, 55},
		{0.02, 20, 110, 11},
	} {
		w := mixWorkload(t, tc.scale)
		required := 0
		for i := range w.measured {
			if mixApp(i) == mixRequired {
				required++
			}
		}
		if w.nodes != tc.nodes || w.measured != tc.pods || required != tc.requiredPods || !slices.Equal(w.zones, threeZones) || !w.allSchedulable {
			t.Errorf("scale %g: %d nodes in %v, %d pods of which %d required, allSchedulable %v; want %d in 3 zones, %d, %d, true",
				tc.scale, w.nodes, w.zones, w.measured, required, w.allSchedulable, tc.nodes, tc.pods, tc.requiredPods)
		}
		if required > w.nodes {
			t.Errorf("scale %g: %d required pods cannot fit one per node on %d nodes", tc.scale, required, w.nodes)
		}
	}
}

// mixShape is what a pod of the mix asks for, in a comparable form.
type mixShape struct {
	App                 string
	PreferredAntiWeight int32
	PreferredAntiOn     string // topology key
	PreferredAntiApp    string
	RequiredAntiOn      string
	RequiredAntiApp     string
	SpreadOn            string
	SpreadSkew          int32
	SpreadWhen          v1.UnsatisfiableConstraintAction
	SpreadApp           string
}

func shapeOf(p *v1.Pod) mixShape {
	s := mixShape{App: p.Labels[appLabel]}
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil || a.NodeAffinity != nil {
			s.App += " (unexpected affinity)"
		}
		if aa := a.PodAntiAffinity; aa != nil {
			for _, w := range aa.PreferredDuringSchedulingIgnoredDuringExecution {
				s.PreferredAntiWeight, s.PreferredAntiOn = w.Weight, w.PodAffinityTerm.TopologyKey
				s.PreferredAntiApp = w.PodAffinityTerm.LabelSelector.MatchLabels[appLabel]
			}
			for _, r := range aa.RequiredDuringSchedulingIgnoredDuringExecution {
				s.RequiredAntiOn, s.RequiredAntiApp = r.TopologyKey, r.LabelSelector.MatchLabels[appLabel]
			}
		}
	}
	for _, c := range p.Spec.TopologySpreadConstraints {
		s.SpreadOn, s.SpreadSkew, s.SpreadWhen = c.TopologyKey, c.MaxSkew, c.WhenUnsatisfiable
		s.SpreadApp = c.LabelSelector.MatchLabels[appLabel]
	}
	return s
}

// TestConstraintMixPods creates the mix's pods on a fake clientset, as a
// run does, and checks that they cycle as issue 31 describes.
func TestConstraintMixPods(t *testing.T) {
	w := mixWorkload(t, 0.02)
	r := &run{c: fake.NewClientset(), ns: "perf", id: "test-run"}
	ctx := context.Background()
	if err := w.init(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := w.create(ctx, r); err != nil {
		t.Fatal(err)
	}
	l, err := r.c.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != w.measured {
		t.Fatalf("%d pods, want %d", len(l.Items), w.measured)
	}
	byIndex := map[int]*v1.Pod{}
	for i := range l.Items {
		p := &l.Items[i]
		n, err := strconv.Atoi(strings.TrimPrefix(p.Name, phaseMeasured+"-"))
		if err != nil || p.Labels[phaseLabel] != phaseMeasured || p.Spec.SchedulerName != schedulerName {
			t.Fatalf("pod %s: not a measured pod of the perf scheduler", p.Name)
		}
		byIndex[n] = p
	}
	shapes := map[string]mixShape{
		mixPlain:     {App: mixPlain},
		mixPreferred: {App: mixPreferred, PreferredAntiWeight: 100, PreferredAntiOn: v1.LabelHostname, PreferredAntiApp: mixPreferred},
		mixSpread:    {App: mixSpread, SpreadOn: v1.LabelTopologyZone, SpreadSkew: 1, SpreadWhen: v1.DoNotSchedule, SpreadApp: mixSpread},
		mixRequired:  {App: mixRequired, RequiredAntiOn: v1.LabelHostname, RequiredAntiApp: mixRequired},
	}
	// The first 30 pods by name, then the counts over all of them.
	wantApps := []string{
		mixPlain, mixPreferred, mixSpread, mixPlain, mixPreferred, mixSpread, mixPlain, mixPreferred, mixSpread, mixRequired,
		mixPreferred, mixSpread, mixPlain, mixPreferred, mixSpread, mixPlain, mixPreferred, mixSpread, mixPlain, mixRequired,
		mixSpread, mixPlain, mixPreferred, mixSpread, mixPlain, mixPreferred, mixSpread, mixPlain, mixPreferred, mixRequired,
	}
	count := map[string]int{}
	for i := range w.measured {
		p := byIndex[i]
		if p == nil {
			t.Fatalf("no pod %d", i)
		}
		got := shapeOf(p)
		if i < len(wantApps) && got.App != wantApps[i] {
			t.Errorf("pod %d: app %s, want %s", i, got.App, wantApps[i])
		}
		if diff := cmp.Diff(shapes[got.App], got); diff != "" {
			t.Errorf("pod %d (-want, +got):\n%s", i, diff)
		}
		count[got.App]++
	}
	if diff := cmp.Diff(map[string]int{mixPlain: 33, mixPreferred: 33, mixSpread: 33, mixRequired: 11}, count); diff != "" {
		t.Errorf("pods per app of 110 (-want, +got):\n%s", diff)
	}
}

// TestConstraintMixVerify checks the mix's placement check on placements
// that keep and that break its two hard constraints.
func TestConstraintMixVerify(t *testing.T) {
	w := mixWorkload(t, 1)
	// Nodes n0..n5 in the workload's zones, round-robin: n0 and n3 in
	// the first, n1 and n4 in the second, n2 and n5 in the third.
	zones := append(slices.Clone(threeZones), threeZones...)
	bind := func(t *testing.T, pods map[string][]string) *run {
		t.Helper()
		r := placed(t, zones, "unused")
		for app, nodes := range pods {
			for i, n := range nodes {
				p := makePod(r.ns, app+"-"+strconv.Itoa(i), phaseMeasured, mixSpecs[app])
				p.Spec.NodeName = n
				if _, err := r.c.CoreV1().Pods(r.ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		return r
	}
	for _, tc := range []struct {
		name    string
		pods    map[string][]string
		wantErr string
	}{
		{"kept", map[string][]string{
			mixRequired:  {"n0", "n1", "n2"},
			mixSpread:    {"n0", "n1", "n2", "n3"},       // 2, 1, 1 per zone
			mixPreferred: {"n0", "n0", "n0", "n0", "n0"}, // preferred only: not checked
			mixPlain:     {"n1", "n1"},
		}, ""},
		{"two required on a node", map[string][]string{mixRequired: {"n0", "n4", "n4"}}, "node n4 holds two pods app=mix-required"},
		{"spread skew 2", map[string][]string{mixSpread: {"n0", "n3", "n1"}}, "skew 2 > maxSkew 1"}, // 2, 1, 0
		{"an empty zone counts", map[string][]string{mixSpread: {"n0", "n3"}}, "skew 2 > maxSkew 1"},
		{"required pods among other apps", map[string][]string{mixRequired: {"n0"}, mixPlain: {"n0", "n0"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bind(t, tc.pods)
			r.id = "test-run"
			checkErr(t, w.verify(context.Background(), r), tc.wantErr)
		})
	}
}
