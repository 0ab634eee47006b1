package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

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
			checkErr(t, onePerNode(context.Background(), r, "green"), tc.wantErr)
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
			checkErr(t, zoneSkew(context.Background(), r, "blue", zones, tc.maxSkew), tc.wantErr)
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
